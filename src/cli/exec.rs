//! Replacing this process by a command with an environment block built
//! once, for `mcpenv run` on Unix.
//!
//! `std::process::Command` would do the same with more copies: it copies
//! each variable it is given into a map, copies the map with the inherited
//! environment when it starts the program, and then builds the block the
//! kernel reads from that; with a 100,000-line `.env` that was a third of
//! `run`. Here each `NAME=value` the env files give is built once, in the
//! buffer of its name, and handed to `execve` as it is. Everything else is
//! what `Command::exec` does on Unix: the directory changed first (by the
//! caller), the signal mask emptied and `SIGPIPE` back at its default,
//! COMMAND looked up on the new environment's `PATH` as `execvp(3)` does,
//! and a file the kernel cannot start (no `#!`) run by `/bin/sh`.

use std::borrow::Cow;
use std::collections::HashSet;
use std::convert::Infallible;
use std::ffi::{CStr, CString, OsStr, OsString};
use std::io;
use std::os::unix::ffi::OsStrExt;

use nix::errno::Errno;
use nix::unistd::execve;

use crate::envfiles::assignments::Assignments;

/// The environment block for the new program: every inherited variable
/// (the last of a name the environment holds twice), then every `added`
/// one, which replaces an inherited one of its name, as `Command::envs`
/// does. `not_added` tells, for an inherited name, that no added variable
/// has it (the caller left those out), which saves a search; any other
/// inherited name is looked up among `added`. The added variables are
/// borrowed as they are: `added` holds them as the block's entries.
pub fn environment<'a>(
    inherited: impl IntoIterator<Item = (OsString, OsString)>,
    not_added: impl Fn(&OsStr) -> bool,
    added: &'a Assignments,
) -> io::Result<Vec<Cow<'a, CStr>>> {
    let inherited: Vec<(OsString, OsString)> = inherited.into_iter().collect();
    let mut block = Vec::with_capacity(inherited.len() + added.len());
    let mut seen: HashSet<&OsStr> = HashSet::new();
    for (name, value) in inherited.iter().rev() {
        if !seen.insert(name) {
            continue;
        }
        let replaced = !not_added(name) && name.to_str().is_some_and(|name| added.contains(name));
        if replaced {
            continue;
        }
        let mut entry = Vec::with_capacity(name.len() + value.len() + 2);
        entry.extend_from_slice(name.as_bytes());
        entry.push(b'=');
        entry.extend_from_slice(value.as_bytes());
        block.push(Cow::Owned(CString::new(entry).map_err(|_| nul_error())?));
    }
    // Inherited variables keep their order.
    block.reverse();
    for entry in added.entries() {
        // `NAME=value` and its NUL: a NUL before it is one in the value.
        let entry = CStr::from_bytes_with_nul(entry).map_err(|_| nul_error())?;
        block.push(Cow::Borrowed(entry));
    }
    Ok(block)
}

/// Replaces this process by `command` (the program, then its arguments)
/// with `environment`; returns only why it could not.
pub fn replace(command: &[String], environment: &[Cow<'_, CStr>]) -> io::Error {
    let Ok(argv) = command
        .iter()
        .map(|word| CString::new(word.as_bytes()))
        .collect::<Result<Vec<CString>, _>>()
    else {
        return nul_error();
    };
    let Some(program) = argv.first() else {
        return Errno::ENOENT.into();
    };
    reset_signals();
    let program = program.as_bytes();
    if program.is_empty() {
        return Errno::ENOENT.into();
    }
    if program.contains(&b'/') {
        // A path is run as it is, never looked up on PATH.
        return execute(&argv[0], &argv, environment).into();
    }
    let path = environment
        .iter()
        .find_map(|entry| entry.to_bytes().strip_prefix(b"PATH="));
    let mut denied = false;
    for candidate in candidates(program, path) {
        let Ok(candidate) = CString::new(candidate) else {
            return nul_error();
        };
        match execute(&candidate, &argv, environment) {
            // As execvp(3): a directory that does not let us in, or where
            // the file is not executable, does not end the search.
            Errno::EACCES => denied = true,
            Errno::ENOENT | Errno::ESTALE | Errno::ENOTDIR | Errno::ENODEV | Errno::ETIMEDOUT => {}
            other => return other.into(),
        }
    }
    if denied {
        Errno::EACCES.into()
    } else {
        Errno::ENOENT.into()
    }
}

/// Where `execvp(3)` looks for `program` (a name without `/`), in order:
/// each directory of `path` (the `PATH` variable's value, the system's
/// default when it is unset); an empty one is the current directory.
pub fn candidates<'a>(
    program: &'a [u8],
    path: Option<&'a [u8]>,
) -> impl Iterator<Item = Vec<u8>> + 'a {
    path.unwrap_or(DEFAULT_PATH)
        .split(|&byte| byte == b':')
        .map(move |dir| {
            let mut candidate = Vec::with_capacity(dir.len() + 1 + program.len());
            if !dir.is_empty() {
                candidate.extend_from_slice(dir);
                candidate.push(b'/');
            }
            candidate.extend_from_slice(program);
            candidate
        })
}

/// The search path `execvp(3)` uses when `PATH` is unset.
#[cfg(target_vendor = "apple")]
const DEFAULT_PATH: &[u8] = b"/usr/bin:/bin";
#[cfg(not(target_vendor = "apple"))]
const DEFAULT_PATH: &[u8] = b"/bin:/usr/bin";

/// Starts `file`; a file the kernel does not know how to start (a script
/// without `#!`) is run by `/bin/sh`, as `execvp(3)` does. Returns why it
/// could not.
fn execute(file: &CStr, argv: &[CString], environment: &[Cow<'_, CStr>]) -> Errno {
    let errno = failed(execve(file, argv, environment));
    if errno != Errno::ENOEXEC {
        return errno;
    }
    let shell = c"/bin/sh";
    let mut script: Vec<&CStr> = Vec::with_capacity(argv.len() + 1);
    script.push(shell);
    script.push(file);
    script.extend(argv.iter().skip(1).map(CString::as_c_str));
    failed(execve(shell, &script, environment))
}

fn failed(result: nix::Result<Infallible>) -> Errno {
    match result {
        Ok(never) => match never {},
        Err(errno) => errno,
    }
}

/// The signals as `Command` leaves them for the new program: none blocked,
/// and `SIGPIPE` at its default, which Rust's start-up set to "ignore" (an
/// ignored signal stays ignored across `execve`, so `mcpenv run -- yes |
/// head -1` would never end `yes`). A signal this process catches is
/// reset to its default by `execve`, so catching `SIGPIPE` (tokio's handler,
/// the one way to set one without `unsafe`) hands it on at its default.
fn reset_signals() {
    let _ = nix::sys::signal::SigSet::empty().thread_set_mask();
    let Ok(runtime) = tokio::runtime::Builder::new_current_thread()
        .enable_io()
        .build()
    else {
        return;
    };
    let _entered = runtime.enter();
    // tokio never takes a handler back once set: dropping these is fine.
    let _ = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::pipe());
}

/// The error `Command` gives for a NUL byte in a word or a variable.
fn nul_error() -> io::Error {
    io::Error::new(
        io::ErrorKind::InvalidInput,
        "nul byte found in provided data",
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn strings<'a>(block: &'a [Cow<'_, CStr>]) -> Vec<&'a str> {
        block.iter().map(|entry| entry.to_str().unwrap()).collect()
    }

    #[test]
    fn candidates_follow_execvp() {
        let all = |program: &[u8], path: Option<&[u8]>| -> Vec<String> {
            candidates(program, path)
                .map(|candidate| String::from_utf8(candidate).unwrap())
                .collect()
        };
        assert_eq!(
            all(b"sh", Some(b"/a::/b/:")),
            ["/a/sh", "sh", "/b//sh", "sh"]
        );
        assert_eq!(all(b"sh", Some(b"")), ["sh"]);
        let default: Vec<String> = String::from_utf8(DEFAULT_PATH.to_vec())
            .unwrap()
            .split(':')
            .map(|dir| format!("{dir}/true"))
            .collect();
        assert_eq!(all(b"true", None), default);
    }

    #[test]
    fn the_block_is_what_command_envs_would_give() {
        let inherited = [("A", "1"), ("B", "2"), ("A", "3"), ("C", "4")]
            .map(|(name, value)| (OsString::from(name), OsString::from(value)));
        let mut added = Assignments::default();
        added.push("C", "file");
        added.push("D", "x=y");
        // `C` is not known to be absent from the added ones: replaced.
        let block = environment(inherited.clone(), |name| name != "C", &added).unwrap();
        assert_eq!(strings(&block), ["B=2", "A=3", "C=file", "D=x=y"]);
        // The same whatever the caller knows.
        let block = environment(inherited, |_| false, &added).unwrap();
        assert_eq!(strings(&block), ["B=2", "A=3", "C=file", "D=x=y"]);
        let mut nul = Assignments::default();
        nul.push("E", "a\0b");
        let error = environment([], |_| true, &nul).unwrap_err();
        assert_eq!(error.kind(), io::ErrorKind::InvalidInput);
        assert_eq!(error.to_string(), "nul byte found in provided data");
    }
}
