//! Acting on a pane: the action manifests, the host-wide ledger of slots, and the dispatch
//! pipeline (three gates, then the fire on the action's lane; `exec.rs` is the detached lane of
//! the host's own command line).

use schema::{Action, Binder, Scope};

pub mod dispatch;
pub mod exec;
pub mod fire;
pub mod ledger;
pub mod manifest;

/// Who asked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Surface {
    /// A device through `corral serve`, with its fingerprint and its current scopes.
    Device { id: String, scopes: Vec<Scope> },
    /// The person at the host, through `corral act`.
    Cli,
}

impl Surface {
    /// The device the receipt names (`cli` for the host's own command line).
    pub fn device(&self) -> &str {
        match self {
            Surface::Device { id, .. } => id,
            Surface::Cli => "cli",
        }
    }
}

/// One dispatch.
#[derive(Debug, Clone)]
pub struct Order<'a> {
    pub slot: &'a str,
    pub pane: &'a str,
    pub action: &'a Action,
    pub binder: &'a Binder,
    pub text: Option<&'a str>,
    pub answers: Option<&'a [Vec<String>]>,
    pub surface: Surface,
}
