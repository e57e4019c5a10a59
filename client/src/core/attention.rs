//! When to ring: once per episode of a blocked pane, on any host, never for a muted one.
//!
//! A pane rings when it becomes blocked: an edge into `blocked`, or a snapshot showing it blocked
//! in an episode not seen before (a second dialog in one blocked run is a new episode without an
//! edge). An edge carries no episode, so a ring from an edge waits for the next snapshot to learn
//! which episode it was, and that snapshot does not ring it again. The first snapshot of a host is
//! a baseline, as a stream's first cycle is: what was already blocked when the client started is
//! shown, not rung. What was seen outlives a reconnection, so an episode that began while the
//! connection was down rings once it is back, and one rung before does not ring again. A muted
//! episode counts as seen: a mute that ends mid-episode rings nothing, as the host's daemon does.

use std::collections::HashMap;

use schema::{FleetRow, State};

#[derive(Debug, Default, Clone)]
struct Seen {
    /// The last blocked episode seen (rung, muted or in a baseline).
    episode: Option<u64>,
    /// An edge into blocked rang; the next snapshot tells its episode.
    awaiting_episode: bool,
}

/// The episodes seen, per host and pane.
#[derive(Debug, Default)]
pub struct Attention {
    panes: HashMap<(usize, String), Seen>,
}

impl Attention {
    /// A row as a snapshot shows it. True when it rings.
    pub fn observe(&mut self, host: usize, row: &FleetRow, baseline: bool) -> bool {
        let key = (host, row.pane.clone());
        if row.state != State::Blocked {
            if let Some(seen) = self.panes.get_mut(&key) {
                seen.awaiting_episode = false;
            }
            return false;
        }
        let seen = self.panes.entry(key).or_default();
        if seen.episode == Some(row.episode_ms) {
            seen.awaiting_episode = false;
            return false;
        }
        let rings = !baseline && !seen.awaiting_episode && !row.muted;
        seen.episode = Some(row.episode_ms);
        seen.awaiting_episode = false;
        rings
    }

    /// An edge moved a pane into blocked; `muted` is what the pane's last row said. True when it
    /// rings.
    pub fn edge_into_blocked(&mut self, host: usize, pane: &str, muted: bool) -> bool {
        let seen = self.panes.entry((host, pane.to_owned())).or_default();
        seen.awaiting_episode = true;
        !muted
    }

    /// The pane is gone.
    pub fn forget(&mut self, host: usize, pane: &str) {
        self.panes.remove(&(host, pane.to_owned()));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::testing::row;

    fn blocked(pane: &str, episode: u64) -> FleetRow {
        let mut row = row(pane, State::Blocked);
        row.episode_ms = episode;
        row
    }

    #[test]
    fn a_new_episode_rings_once() {
        let mut attention = Attention::default();
        assert!(!attention.observe(0, &row("%1", State::Working), false));
        assert!(attention.observe(0, &blocked("%1", 10), false));
        assert!(!attention.observe(0, &blocked("%1", 10), false));
        // A second dialog in the same blocked run: a new episode, no edge, one ring.
        assert!(attention.observe(0, &blocked("%1", 20), false));
        assert!(!attention.observe(0, &blocked("%1", 20), false));
        // The same pane id on another host is another pane.
        assert!(attention.observe(1, &blocked("%1", 20), false));
    }

    #[test]
    fn an_edge_rings_and_the_snapshot_after_it_does_not() {
        let mut attention = Attention::default();
        attention.observe(0, &row("%1", State::Working), true);
        assert!(attention.edge_into_blocked(0, "%1", false));
        assert!(!attention.observe(0, &blocked("%1", 30), false));
        assert!(!attention.observe(0, &blocked("%1", 30), false));
        // Answered, then blocked again: the edge rings the new episode.
        attention.observe(0, &row("%1", State::Working), false);
        assert!(attention.edge_into_blocked(0, "%1", false));
        assert!(!attention.observe(0, &blocked("%1", 40), false));
    }

    #[test]
    fn the_baseline_and_muted_panes_never_ring_and_count_as_seen() {
        let mut attention = Attention::default();
        assert!(!attention.observe(0, &blocked("%1", 10), true));
        assert!(!attention.observe(0, &blocked("%1", 10), false));
        let mut muted = blocked("%2", 10);
        muted.muted = true;
        assert!(!attention.observe(0, &muted, false));
        muted.muted = false;
        assert!(
            !attention.observe(0, &muted, false),
            "the mute ended mid-episode"
        );
        assert!(!attention.edge_into_blocked(0, "%3", true));
        assert!(!attention.observe(0, &blocked("%3", 5), false));
    }

    #[test]
    fn an_episode_seen_before_a_reconnection_does_not_ring_after_it() {
        let mut attention = Attention::default();
        assert!(attention.observe(0, &blocked("%1", 10), false));
        // The connection drops and comes back: its first snapshot shows the same episode.
        assert!(!attention.observe(0, &blocked("%1", 10), false));
        // One that began while it was down rings.
        assert!(attention.observe(0, &blocked("%1", 11), false));
        attention.forget(0, "%1");
        assert!(attention.observe(0, &blocked("%1", 11), false));
    }
}
