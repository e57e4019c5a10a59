//! Acting on a pane: the action manifests, the host-wide ledger of slots, and the dispatch
//! pipeline (three gates, then the fire on the action's lane; `exec.rs` is the detached lane of
//! the host's own command line).

pub mod dispatch;
pub mod exec;
pub mod fire;
pub mod ledger;
pub mod manifest;
