//! The process-group reaper behind every probe (`mcpenv probe`, `doctor`,
//! `serve`'s `probe_servers` and `explain_server`).
//!
//! The prober starts `mcpenv __reap` in a process group of its own and
//! writes `+GROUP` for each server group it starts and `-GROUP` once it
//! has killed one. When the reaper's standard input closes, it kills every
//! group still listed. The kernel closes that pipe however the prober
//! ends, so servers do not outlive one killed with SIGKILL either (where
//! no handler of its own runs). Safe code only: no `pre_exec` with
//! `PR_SET_PDEATHSIG` in each child.

use std::collections::BTreeSet;
use std::io::{BufRead, Write};
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::Mutex;

use nix::sys::signal::{Signal, killpg};
use nix::unistd::Pid;

use super::GroupWatch;

/// The name of mcpenv's hidden subcommand that runs [`reap`].
pub const SUBCOMMAND: &str = "__reap";

/// The reaper itself: reads the group list from `list` until it ends, then
/// kills the groups left on it.
pub fn reap(list: impl BufRead) {
    let mut groups = BTreeSet::new();
    for line in list.lines() {
        let Ok(line) = line else {
            break;
        };
        let (sign, number) = line.split_at(line.len().min(1));
        // Group 0 and 1 would mean "my own group" and init: never those.
        let Some(group) = number.parse::<i32>().ok().filter(|group| *group > 1) else {
            continue;
        };
        match sign {
            "+" => {
                groups.insert(group);
            }
            "-" => {
                groups.remove(&group);
            }
            _ => {}
        }
    }
    for group in groups {
        // Already gone (ESRCH) is the usual case after a clean probe.
        let _ = killpg(Pid::from_raw(group), Signal::SIGKILL);
    }
}

/// The prober's end of the reaper: a child `mcpenv __reap` told of each
/// group. Dropping it closes the list (the reaper kills what is left on
/// it) and waits for the reaper to exit.
pub struct Reaper {
    child: Child,
    list: Mutex<Option<ChildStdin>>,
}

impl Reaper {
    /// Starts `program __reap`; `None` when it cannot be started (probes
    /// then still clean up on every path but SIGKILL).
    pub fn start(program: &Path) -> Option<Self> {
        let mut child = Command::new(program)
            .arg(SUBCOMMAND)
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            // Out of the terminal's foreground group: Ctrl-C meant for
            // the prober must not end the reaper first.
            .process_group(0)
            .spawn()
            .ok()?;
        let list = child.stdin.take();
        Some(Self {
            child,
            list: Mutex::new(list),
        })
    }

    fn tell(&self, line: &str) {
        if let Ok(mut list) = self.list.lock()
            && let Some(pipe) = list.as_mut()
        {
            // A reaper that died early only costs the SIGKILL guarantee.
            let _ = writeln!(pipe, "{line}").and_then(|()| pipe.flush());
        }
    }
}

impl Drop for Reaper {
    fn drop(&mut self) {
        if let Ok(mut list) = self.list.lock() {
            list.take();
        }
        // Not left a zombie under a long-lived `serve`.
        let _ = self.child.wait();
    }
}

impl GroupWatch for Reaper {
    fn started(&self, group: i32) {
        self.tell(&format!("+{group}"));
    }

    fn stopped(&self, group: i32) {
        self.tell(&format!("-{group}"));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_reaper_kills_only_the_groups_still_listed() {
        let start = || {
            Command::new("sleep")
                .arg("30")
                .process_group(0)
                .spawn()
                .unwrap()
        };
        let (mut kept, mut killed) = (start(), start());
        let list = format!(
            "+{killed}\n+{kept}\n-{kept}\n+0\n+1\nnoise\n",
            killed = killed.id(),
            kept = kept.id()
        );
        reap(list.as_bytes());
        let status = killed.wait().unwrap();
        assert_eq!(
            std::os::unix::process::ExitStatusExt::signal(&status),
            Some(9)
        );
        assert!(kept.try_wait().unwrap().is_none(), "still running");
        kept.kill().unwrap();
        kept.wait().unwrap();
    }
}
