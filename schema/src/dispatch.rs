//! The binder a dispatch quotes and the receipt it resolves to (also the ledger entry).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::vocab::{Action, Outcome, Reason};

/// What an approval was made against, re-checked inside the pane's single-flight lock.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize, JsonSchema)]
pub struct Binder {
    /// Episode start (the row's `episode_ms`) the approval was made against; 0 means no
    /// expectation. A pane that moved on is refused `episode-changed`.
    pub expect_episode_ms: u64,
    /// Permission-request id the approval quotes; one the pane no longer carries is refused
    /// `request-gone`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expect_permission_request: Option<String>,
}

/// `← receipt`: what one dispatch resolved to. The same record is the ledger entry, and a
/// refusal at any gate is a receipt, never an error frame.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Receipt {
    /// The slot dispatched.
    pub slot: String,
    /// Pane id.
    pub pane: String,
    /// The action.
    pub action: Action,
    /// What happened: `sent`, `refused`, ...
    pub outcome: Outcome,
    /// Why, on a refusal or failure; null when none.
    pub reason: Option<Reason>,
    /// Exit code of the fired action: sent/replied/spawned 0, refused 4, locked 5, vanished 3,
    /// error 1, timeout 124.
    pub exit_code: i32,
    /// True when this receipt came from the ledger for a repeated slot (nothing was dispatched).
    pub cached: bool,
    /// Fingerprint of the device that dispatched.
    pub device: String,
    /// Epoch milliseconds of the claim.
    pub at_ms: u64,
}

/// `← receipts`: ledger entries, resolved ones only, sorted by `at_ms` ascending.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize, JsonSchema)]
pub struct Receipts {
    /// The entries, each with `cached: true`.
    pub receipts: Vec<Receipt>,
}
