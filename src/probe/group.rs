//! A probed stdio server and everything it starts, as one thing to stop:
//! a process group on Unix, a job object on Windows.
//!
//! On Unix the server leads a process group of its own, so `killpg` ends
//! it with its children, and Ctrl-C in the terminal does not reach it
//! before mcpenv has cleaned up; the reaper ([`super::reaper`]) covers a
//! mcpenv killed with SIGKILL.
//!
//! On Windows the server is put in a job object that kills every process
//! in it when its last handle closes (`JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE`).
//! Only mcpenv holds that handle, and Windows closes it however mcpenv
//! ends, so no reaper is needed there. A process the server starts in the
//! moment between its own start and its assignment to the job is not in
//! the job (std cannot start a process suspended); everything started
//! later is.

use std::io;

use tokio::process::{Child, Command};

/// The unit a probe stops: the server's process group (Unix) or job
/// (Windows).
pub struct Group {
    id: i32,
    #[cfg(windows)]
    job: Option<win32job::Job>,
}

impl Group {
    /// Prepares `command` so that its child can be made a [`Group`].
    pub fn prepare(command: &mut Command) {
        #[cfg(unix)]
        command.process_group(0);
        #[cfg(not(unix))]
        let _ = command;
    }

    /// The group of `child`, started from a prepared command; `None` when
    /// it has exited already.
    #[cfg(unix)]
    pub fn of(child: &Child) -> io::Result<Option<Self>> {
        Ok(child
            .id()
            .and_then(|id| i32::try_from(id).ok())
            .map(|id| Self { id }))
    }

    /// The group of `child`, started from a prepared command; `None` when
    /// it has exited already. Fails when Windows refuses the job object.
    #[cfg(windows)]
    pub fn of(child: &Child) -> io::Result<Option<Self>> {
        let (Some(id), Some(handle)) = (child.id(), child.raw_handle()) else {
            return Ok(None);
        };
        let mut limits = win32job::ExtendedLimitInfo::new();
        limits.limit_kill_on_job_close();
        let job = win32job::Job::create_with_limit_info(&limits).map_err(io::Error::other)?;
        job.assign_process(handle as isize)
            .map_err(io::Error::other)?;
        Ok(Some(Self {
            id: i32::try_from(id).unwrap_or(i32::MAX),
            job: Some(job),
        }))
    }

    /// The group's number (its leader's process id), as the reaper lists it.
    pub fn id(&self) -> i32 {
        self.id
    }

    /// Asks every process of the group to end (SIGTERM); `false` where
    /// the system has no such request for a console program (Windows),
    /// and only [`Group::kill`] remains.
    #[cfg(unix)]
    pub fn terminate(&self) -> bool {
        // ESRCH (already gone) is the common, harmless case.
        let _ = nix::sys::signal::killpg(
            nix::unistd::Pid::from_raw(self.id),
            nix::sys::signal::Signal::SIGTERM,
        );
        true
    }

    /// Asks every process of the group to end (SIGTERM); `false` where
    /// the system has no such request for a console program (Windows),
    /// and only [`Group::kill`] remains.
    #[cfg(windows)]
    pub fn terminate(&self) -> bool {
        false
    }

    /// Ends every process of the group at once (SIGKILL; on Windows,
    /// closing the job, which ends each process in it).
    #[cfg(unix)]
    pub fn kill(&mut self) {
        // ESRCH (already gone) is the common, harmless case.
        let _ = nix::sys::signal::killpg(
            nix::unistd::Pid::from_raw(self.id),
            nix::sys::signal::Signal::SIGKILL,
        );
    }

    /// Ends every process of the group at once (SIGKILL; on Windows,
    /// closing the job, which ends each process in it).
    #[cfg(windows)]
    pub fn kill(&mut self) {
        self.job.take();
    }
}
