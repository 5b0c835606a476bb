//! `mcpenv __reap` (hidden): the process-group reaper behind every probe
//! ([`crate::probe::reaper`]), reading its list from standard input.

use std::io;

/// Runs the reaper until standard input closes.
pub fn run() {
    crate::probe::reaper::reap(io::stdin().lock());
}
