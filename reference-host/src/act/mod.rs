//! Acting on a pane: the action manifests, the host-wide ledger of slots, and the dispatch
//! pipeline's gates.

pub mod ledger;
pub mod manifest;
