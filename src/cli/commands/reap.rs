//! `mcpenv __reap` (hidden): the process-group reaper behind `probe`.
//!
//! `probe` starts it in a process group of its own and writes `+GROUP` for
//! each server group it starts and `-GROUP` once it has killed one. When
//! its standard input closes, it kills every group still listed. The kernel
//! closes that pipe however `probe` ends, so servers do not outlive a
//! `probe` killed with SIGKILL either (where no handler of its own runs).
//! Safe code only: no `pre_exec` with `PR_SET_PDEATHSIG` in each child.

use std::collections::BTreeSet;
use std::io::{self, BufRead, Write};
use std::os::unix::process::CommandExt;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::Mutex;

use nix::sys::signal::{Signal, killpg};
use nix::unistd::Pid;

use crate::probe::GroupWatch;

/// The name of the hidden subcommand.
pub const SUBCOMMAND: &str = "__reap";

/// Runs the reaper: reads the group list until standard input closes, then
/// kills the groups left on it.
pub fn run() {
    let mut groups = BTreeSet::new();
    for line in io::stdin().lock().lines() {
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
        // Already gone (ESRCH) is the usual case after a clean `probe`.
        let _ = killpg(Pid::from_raw(group), Signal::SIGKILL);
    }
}

/// `probe`'s end of the reaper: a child `mcpenv __reap` told of each group.
pub struct Reaper {
    child: Child,
    list: Mutex<Option<ChildStdin>>,
}

impl Reaper {
    /// Starts the reaper; `None` when it cannot be started (probe then
    /// still cleans up on every path but SIGKILL).
    pub fn start() -> Option<Self> {
        let exe = std::env::current_exe().ok()?;
        let mut child = Command::new(exe)
            .arg(SUBCOMMAND)
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            // Out of the terminal's foreground group: Ctrl-C meant for
            // `probe` must not end the reaper first.
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

    /// Closes the list (the reaper kills what is left on it, by now
    /// nothing) and waits for the reaper to exit.
    pub fn finish(mut self) {
        if let Ok(mut list) = self.list.lock() {
            list.take();
        }
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
