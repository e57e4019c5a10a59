//! Acting on a pane: the action manifests, the host-wide ledger of slots, and the dispatch
//! pipeline (three gates, then the fire on the action's lane).

pub mod dispatch;
pub mod fire;
pub mod ledger;
pub mod manifest;
