//! Masking of values that may be secrets: no command prints one whole.

/// Masks a value: the first and last 4 characters of values of 16 or more
/// characters (`ghp_…9f3a`), `****` for shorter ones.
pub fn mask(value: &str) -> String {
    let count = value.chars().count();
    if count >= 16 {
        let head: String = value.chars().take(4).collect();
        let tail: String = value.chars().skip(count - 4).collect();
        format!("{head}…{tail}")
    } else {
        "****".to_string()
    }
}

/// Auth schemes that are not secret and stay readable before a placeholder.
const SCHEMES: [&str; 4] = ["Bearer", "Basic", "Token", "Bot"];

/// A value as shown by default: whole when it holds nothing but `${VAR}`
/// placeholders (optionally after an auth scheme such as `Bearer`), so a
/// shared config stays readable; masked otherwise.
pub fn display_value(value: &str) -> String {
    if is_reference_only(value) {
        return value.to_string();
    }
    // Keep an auth scheme readable: `Bearer sk_l…fXYZ`.
    for scheme in SCHEMES {
        if let Some(credential) = value
            .strip_prefix(scheme)
            .and_then(|rest| rest.strip_prefix(' '))
        {
            return format!("{scheme} {}", mask(credential.trim_start()));
        }
    }
    mask(value)
}

fn is_reference_only(value: &str) -> bool {
    let mut rest = value.trim();
    for scheme in SCHEMES {
        if let Some(after) = rest
            .strip_prefix(scheme)
            .and_then(|after| after.strip_prefix(' '))
        {
            rest = after.trim_start();
            break;
        }
    }
    if rest.is_empty() {
        return false;
    }
    while let Some(after) = rest.strip_prefix("${") {
        let Some(close) = after.find('}') else {
            return false;
        };
        let name = after[..close].split(":-").next().unwrap_or_default();
        let valid = name
            .chars()
            .next()
            .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
            && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
        if !valid {
            return false;
        }
        rest = &after[close + 1..];
    }
    rest.is_empty()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn masks_by_length() {
        assert_eq!(mask("ghp_0123456789abcdef9f3a"), "ghp_…9f3a");
        assert_eq!(mask("short"), "****");
        assert_eq!(mask(""), "****");
        assert_eq!(mask("ééééé12345678901234"), "éééé…1234");
    }

    #[test]
    fn placeholders_stay_readable() {
        assert_eq!(display_value("${GITHUB_TOKEN}"), "${GITHUB_TOKEN}");
        assert_eq!(display_value("Bearer ${API_TOKEN}"), "Bearer ${API_TOKEN}");
        assert_eq!(display_value("${A}${B:-x}"), "${A}${B:-x}");
        assert_eq!(
            display_value("Bearer sk-live-0123456789abcdef"),
            "Bearer sk-l…cdef"
        );
        assert_eq!(display_value("postgres://u:pw@h/${DB}"), "post…{DB}");
        assert_eq!(display_value("$TOKEN"), "****");
    }
}
