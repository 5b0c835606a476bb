//! Which lines of a failed server's stderr make its reason. The last lines
//! are often boilerplate (npm's "you can also install from a tarball", a
//! log file's path, Docker's "Run 'docker run --help'"), so those are left
//! out and the meaningful lines before them kept.

/// How many lines a reason quotes.
pub const REASON_LINES: usize = 3;

/// How many of the last stderr lines are kept to choose from: enough to
/// reach back past npm's eight-line 404 message.
pub const KEPT_LINES: usize = 40;

/// The last [`REASON_LINES`] lines of `lines` that say something: npm's,
/// Docker's and Node's boilerplate and Python's traceback frames left out.
/// When nothing is left, the plain last lines.
pub fn reason_lines(lines: &[String]) -> Vec<String> {
    let mut telling: Vec<&String> = lines.iter().filter(|line| !is_boilerplate(line)).collect();
    drop_traceback_frames(&mut telling);
    let chosen: Vec<&String> = if telling.is_empty() {
        lines.iter().collect()
    } else {
        telling
    };
    let skip = chosen.len().saturating_sub(REASON_LINES);
    chosen.into_iter().skip(skip).cloned().collect()
}

/// A line that only frames or repeats the error.
fn is_boilerplate(line: &str) -> bool {
    let line = line.trim();
    // npm 7-9 write `npm ERR!`, npm 10 and later `npm error`.
    let npm = ["npm error", "npm ERR!"]
        .iter()
        .find_map(|prefix| line.strip_prefix(prefix))
        .map(str::trim);
    if let Some(rest) = npm {
        let rest = rest.strip_prefix("404").map_or(rest, str::trim);
        return rest.is_empty()
            || rest.starts_with("code ")
            || rest.starts_with("errno ")
            || rest.starts_with("Note that you can also install from a")
            || rest.starts_with("tarball, folder, http url, or git url")
            || rest.starts_with("You should bug the author to publish it")
            || rest.starts_with("A complete log of this run can be found in")
            || rest.starts_with("Log files were not written")
            || rest.starts_with("You can rerun the command with `--loglevel=verbose`")
            || rest.ends_with("-debug-0.log");
    }
    line.starts_with("npm notice")
        || line.starts_with("npm warn")
        || line.starts_with("npm WARN")
        // Docker's pointer to its usage.
        || line.starts_with("Run 'docker run --help'")
        || line.starts_with("See 'docker run --help'")
        // Node's stack frames and the version footer.
        || line.starts_with("at ") && (line.ends_with(')') || line.contains("node:"))
        || line.starts_with("Node.js v")
        || line.starts_with("node:internal/")
        || line == "throw err;"
        || line == "Require stack:"
        // The error object Node prints after the stack.
        || matches!(line, "{" | "}")
        || line.starts_with("code: '")
        || line.starts_with("requireStack: ")
        || line.chars().all(|c| c == '^' || c == '~')
}

/// Takes out a Python traceback's frames, keeping the exception line that
/// ends it: `Traceback (most recent call last):` up to the last line that
/// reads `SomeError: …`.
fn drop_traceback_frames(lines: &mut Vec<&String>) {
    let Some(start) = lines
        .iter()
        .rposition(|line| line.trim() == "Traceback (most recent call last):")
    else {
        return;
    };
    let Some(end) = lines
        .iter()
        .skip(start)
        .rposition(|line| is_exception_line(line))
        .map(|at| at + start)
    else {
        return;
    };
    lines.drain(start..end);
}

/// `ModuleNotFoundError: No module named 'x'`, `mcp.McpError: …`.
fn is_exception_line(line: &str) -> bool {
    let Some((name, _)) = line.split_once(": ") else {
        return false;
    };
    let last = name.rsplit('.').next().unwrap_or(name);
    !name.contains(' ')
        && (last.ends_with("Error") || last.ends_with("Exception") || last == "KeyboardInterrupt")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pick(text: &str) -> String {
        let lines: Vec<String> = text
            .lines()
            .map(str::trim)
            .filter(|line| !line.is_empty())
            .map(str::to_string)
            .collect();
        reason_lines(&lines).join(" | ")
    }

    #[test]
    fn npm_10_missing_scoped_package_names_the_package() {
        // `npx -y @x/y` with npm 10.9; the CLI test prints the same file.
        let stderr = include_str!("../../tests/support/stderr/npm10-404-scoped.txt");
        assert_eq!(
            pick(stderr),
            "npm error 404 Not Found - GET https://registry.npmjs.org/@x%2fy - Not found | npm error 404  '@x/y@*' is not in this registry."
        );
    }

    #[test]
    fn npm_10_missing_unscoped_package_and_a_deprecation_warning() {
        let stderr = "\
npm warn deprecated inflight@1.0.6: This module is not supported, and leaks memory.
npm error code E404
npm error 404 Not Found - GET https://registry.npmjs.org/mcp-server-nope - Not found
npm error 404
npm error 404  'mcp-server-nope@*' is not in this registry.
npm error 404
npm error 404 Note that you can also install from a
npm error 404 tarball, folder, http url, or git url.
npm error A complete log of this run can be found in: /root/.npm/_logs/2026-03-02T10_11_12_345Z-debug-0.log
";
        assert_eq!(
            pick(stderr),
            "npm error 404 Not Found - GET https://registry.npmjs.org/mcp-server-nope - Not found | npm error 404  'mcp-server-nope@*' is not in this registry."
        );
    }

    #[test]
    fn npm_8_style_with_the_log_path_on_its_own_line() {
        let stderr = "\
npm ERR! code E404
npm ERR! 404 Not Found - GET https://registry.npmjs.org/@acme%2fmcp - Not found
npm ERR! 404
npm ERR! 404  '@acme/mcp@latest' is not in this registry.
npm ERR! 404 You should bug the author to publish it (or use the name yourself!)
npm ERR! 404
npm ERR! 404 Note that you can also install from a
npm ERR! 404 tarball, folder, http url, or git url.

npm ERR! A complete log of this run can be found in:
npm ERR!     /root/.npm/_logs/2023-05-01T08_00_00_000Z-debug-0.log
";
        assert_eq!(
            pick(stderr),
            "npm ERR! 404 Not Found - GET https://registry.npmjs.org/@acme%2fmcp - Not found | npm ERR! 404  '@acme/mcp@latest' is not in this registry."
        );
    }

    #[test]
    fn npm_registry_unreachable_keeps_the_network_error() {
        let stderr = "\
npm error code ENOTFOUND
npm error syscall getaddrinfo
npm error errno ENOTFOUND
npm error network request to https://registry.npmjs.org/@x%2fy failed, reason: getaddrinfo ENOTFOUND registry.npmjs.org
npm error network This is a problem related to network connectivity.
npm error network In most cases you are behind a proxy or have bad network settings.
npm error A complete log of this run can be found in: /home/dev/.npm/_logs/2026-03-02T10_11_12_345Z-debug-0.log
";
        assert_eq!(
            pick(stderr),
            "npm error network request to https://registry.npmjs.org/@x%2fy failed, reason: getaddrinfo ENOTFOUND registry.npmjs.org | npm error network This is a problem related to network connectivity. | npm error network In most cases you are behind a proxy or have bad network settings."
        );
    }

    #[test]
    fn uvx_missing_package() {
        let stderr = "\
  × No solution found when resolving tool dependencies:
  ╰─▶ Because mcp-server-nope was not found in the package registry and you require mcp-server-nope, we can conclude that your requirements are unsatisfiable.
";
        assert_eq!(
            pick(stderr),
            "× No solution found when resolving tool dependencies: | ╰─▶ Because mcp-server-nope was not found in the package registry and you require mcp-server-nope, we can conclude that your requirements are unsatisfiable."
        );
    }

    #[test]
    fn a_python_traceback_gives_its_exception() {
        // `uvx mcp-server-fetch` whose dependency is missing.
        let stderr = "\
Installed 38 packages in 41ms
Traceback (most recent call last):
  File \"/root/.cache/uv/archive-v0/abc/bin/mcp-server-fetch\", line 6, in <module>
    from mcp_server_fetch import main
  File \"/root/.cache/uv/archive-v0/abc/lib/python3.12/site-packages/mcp_server_fetch/__init__.py\", line 1, in <module>
    from .server import serve
ModuleNotFoundError: No module named 'readabilipy'
";
        assert_eq!(
            pick(stderr),
            "Installed 38 packages in 41ms | ModuleNotFoundError: No module named 'readabilipy'"
        );
    }

    #[test]
    fn docker_missing_image_and_missing_daemon() {
        let stderr = "\
Unable to find image 'mcp/nope:latest' locally
docker: Error response from daemon: pull access denied for mcp/nope, repository does not exist or may require 'docker login': denied: requested access to the resource is denied

Run 'docker run --help' for more information
";
        assert_eq!(
            pick(stderr),
            "Unable to find image 'mcp/nope:latest' locally | docker: Error response from daemon: pull access denied for mcp/nope, repository does not exist or may require 'docker login': denied: requested access to the resource is denied"
        );
        let stderr = "\
docker: Cannot connect to the Docker daemon at unix:///var/run/docker.sock. Is the docker daemon running?.
See 'docker run --help'.
";
        assert_eq!(
            pick(stderr),
            "docker: Cannot connect to the Docker daemon at unix:///var/run/docker.sock. Is the docker daemon running?."
        );
    }

    #[test]
    fn node_missing_module_skips_the_stack() {
        let stderr = "\
node:internal/modules/cjs/loader:1228
  throw err;
  ^

Error: Cannot find module '/app/dist/index.js'
    at Module._resolveFilename (node:internal/modules/cjs/loader:1225:15)
    at Module._load (node:internal/modules/cjs/loader:1051:27)
    at node:internal/main/run_main_module:28:49 {
  code: 'MODULE_NOT_FOUND',
  requireStack: []
}

Node.js v20.18.0
";
        assert_eq!(
            pick(stderr),
            "Error: Cannot find module '/app/dist/index.js'"
        );
    }

    #[test]
    fn plain_tails_and_pure_boilerplate_are_kept_as_they_are() {
        assert_eq!(
            pick("fake: starting\nfake: cannot open the database\n"),
            "fake: starting | fake: cannot open the database"
        );
        assert_eq!(pick("a\nb\nc\nd\n"), "b | c | d");
        assert_eq!(pick("npm error 404\n"), "npm error 404");
        assert_eq!(pick(""), "");
    }
}
