//! What `corral doctor --json` prints: the last notification-command failure and the checks a
//! person needs when nothing rings.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::notify::CommandFailure;

/// Version of the doctor report.
pub const DOCTOR_SCHEMA_VERSION: u32 = 1;

/// `corral doctor --json`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct DoctorReport {
    /// Version of this document, 1.
    #[schemars(schema_with = "crate::envelope::document_version_1")]
    pub schema: u32,
    /// The last notification-command failure, or null when the last command ran clean.
    pub last_failure: Option<ReportedFailure>,
    /// Every check, in the order the text report prints them.
    pub checks: Vec<DoctorCheck>,
}

/// The recorded failure and how long ago it happened.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct ReportedFailure {
    /// The record.
    #[serde(flatten)]
    pub failure: CommandFailure,
    /// Milliseconds between the failure and the report.
    pub age_ms: u64,
}

/// One check.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct DoctorCheck {
    /// What was checked: `config`, `notify-command`, `daemon`, `passthrough`, `device-store`,
    /// `runtime-dir`; a newer host may add checks.
    pub check: String,
    /// The verdict.
    pub status: CheckStatus,
    /// One line for a person: what was found and, when it is not ok, what to do.
    pub message: String,
}

/// A check's verdict.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum CheckStatus {
    /// Nothing to do.
    Ok,
    /// Worth knowing, and not a fault (no daemon runs, for example).
    Warn,
    /// Something stops notifications; `corral doctor` exits 1.
    Fail,
}
