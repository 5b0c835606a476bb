//! Variables to hand a program, held as the block `execve` reads: each
//! `NAME=value` followed by a NUL, one after another in one string. What
//! `mcpenv run` gives a command from a 100,000-line `.env` is then one
//! buffer, not two strings a variable, and starting the command copies
//! nothing more (see `cli/exec.rs`).

use serde::ser::{Serialize, SerializeMap, Serializer};

/// Variables (name, value) in the order they were added; the caller keeps
/// the names distinct.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Assignments {
    /// `NAME=value\0` of each variable, one after another.
    text: String,
    /// Where each variable's `=` and its NUL are in `text`.
    marks: Vec<(usize, usize)>,
}

impl Assignments {
    /// No variable, with room for `bytes` of names and values.
    pub fn with_capacity(bytes: usize) -> Self {
        Self {
            text: String::with_capacity(bytes),
            marks: Vec::new(),
        }
    }

    /// Adds `name` with `value` after the others.
    pub fn push(&mut self, name: &str, value: &str) {
        self.text.push_str(name);
        let equals = self.text.len();
        self.text.push('=');
        self.text.push_str(value);
        let nul = self.text.len();
        self.text.push('\0');
        self.marks.push((equals, nul));
    }

    /// How many variables.
    pub fn len(&self) -> usize {
        self.marks.len()
    }

    /// Whether there is none.
    pub fn is_empty(&self) -> bool {
        self.marks.is_empty()
    }

    /// Each variable's name and value, in order.
    pub fn iter(&self) -> impl ExactSizeIterator<Item = (&str, &str)> + '_ {
        self.blocks().map(|(entry, equals)| {
            // Without the NUL.
            (&entry[..equals], &entry[equals + 1..entry.len() - 1])
        })
    }

    /// Whether a variable is called `name` (a search through all: for the
    /// rare name nothing else can tell about).
    pub fn contains(&self, name: &str) -> bool {
        self.iter().any(|(known, _)| known == name)
    }

    /// Each variable as `NAME=value` and its ending NUL, as `execve` reads
    /// it (a value holding a NUL of its own ends early there: the caller
    /// refuses such a block).
    pub fn entries(&self) -> impl ExactSizeIterator<Item = &[u8]> + '_ {
        self.blocks().map(|(entry, _)| entry.as_bytes())
    }

    /// Each variable's `NAME=value\0`, and where its `=` is in it.
    fn blocks(&self) -> impl ExactSizeIterator<Item = (&str, usize)> + '_ {
        let mut start = 0;
        self.marks.iter().map(move |&(equals, nul)| {
            let entry = &self.text[start..=nul];
            let at = equals - start;
            start = nul + 1;
            (entry, at)
        })
    }
}

impl Serialize for Assignments {
    /// A map of name to value, as the map it replaces serialized.
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(Some(self.len()))?;
        for (name, value) in self.iter() {
            map.serialize_entry(name, value)?;
        }
        map.end()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn variables_read_back_as_pushed_and_as_the_block() {
        let mut assignments = Assignments::with_capacity(0);
        assert!(assignments.is_empty());
        for (name, value) in [
            ("A", "1"),
            ("B", ""),
            ("C", "x=y"),
            ("D", "a\0b"),
            ("É", "é"),
        ] {
            assignments.push(name, value);
        }
        assert_eq!(assignments.len(), 5);
        assert_eq!(
            assignments.iter().collect::<Vec<_>>(),
            [
                ("A", "1"),
                ("B", ""),
                ("C", "x=y"),
                ("D", "a\0b"),
                ("É", "é")
            ]
        );
        assert_eq!(
            assignments.entries().collect::<Vec<_>>(),
            [
                &b"A=1\0"[..],
                b"B=\0",
                b"C=x=y\0",
                b"D=a\0b\0",
                "É=é\0".as_bytes()
            ]
        );
        assert!(assignments.contains("C"));
        assert!(!assignments.contains("x"));
        assert_eq!(
            serde_json::to_string(&assignments).unwrap(),
            r#"{"A":"1","B":"","C":"x=y","D":"a\u0000b","É":"é"}"#
        );
    }
}
