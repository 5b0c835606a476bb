//! Whether everything is fine here: the environment check and the secret
//! scan of this project, each run whatever the other found. What
//! `mcpenv doctor` reports (its probe of the servers is the front-end's, as
//! probing needs a runtime and a reaper).

use crate::ops::check_environment::{CheckError, EnvironmentCheck, check_environment};
use crate::ops::scan_secrets::{ScanReport, ScanRequest, scan_secrets};
use crate::ops::{Context, Error, Loaded, dotenv_error};

/// The parts of a diagnosis: each a report, or why that part could not run.
#[derive(Debug)]
pub struct Diagnosis {
    /// What `check` finds, and what it read.
    pub check: Result<(EnvironmentCheck, Loaded), Error>,
    /// What `scan` finds in the files mcpenv reads for this project; a
    /// config that does not parse is skipped there (the check reports it).
    pub scan: Result<ScanReport, Error>,
}

/// Checks the servers in effect (with `strict`, warnings fail the check)
/// and scans every config and client file of this project for literal
/// secrets; neither part stops the other.
pub fn diagnose(context: &Context, strict: bool) -> Diagnosis {
    let check = check_environment(context, strict, None).map_err(|error| match error {
        CheckError::EnvFiles(error) => dotenv_error(error),
        // No server was named, so this cannot happen; reported all the same.
        error @ CheckError::NoSuchServer { .. } => Error::failure_from("cannot check", error),
    });
    let scan = scan_secrets(
        context,
        &ScanRequest {
            skip_broken_configs: true,
            ..ScanRequest::default()
        },
    );
    Diagnosis { check, scan }
}
