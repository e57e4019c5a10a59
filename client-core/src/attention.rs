//! When to ring: once per episode of a blocked pane, on any host, never for a muted one.
//!
//! A pane rings when a snapshot shows it blocked in an episode not seen before: after an edge
//! into `blocked` (the session asks for a snapshot after every edge, and it follows at once), or
//! without one (a second dialog in one blocked run is a new episode without an edge). An edge
//! carries no episode, so it never rings by itself: the ring waits the one round trip for the
//! snapshot that tells the episode, and says which one it is. The first snapshot of a host is a
//! baseline, as a stream's first cycle is: what was already blocked when the client started is
//! shown, not rung. What was seen outlives a reconnection, so an episode that began while the
//! connection was down rings once it is back, and one rung before does not ring again. A muted
//! episode counts as seen: a mute that ends mid-episode rings nothing, as the host's daemon does.

use std::collections::HashMap;

use schema::{FleetRow, State};

/// The last blocked episode seen (rung, muted or in a baseline), per host and pane.
#[derive(Debug, Default)]
pub struct Attention {
    panes: HashMap<(usize, String), u64>,
}

impl Attention {
    /// A row as a snapshot shows it. True when it rings.
    pub fn observe(&mut self, host: usize, row: &FleetRow, baseline: bool) -> bool {
        if row.state != State::Blocked {
            return false;
        }
        let seen = self.panes.insert((host, row.pane.clone()), row.episode_ms);
        seen != Some(row.episode_ms) && !baseline && !row.muted
    }

    /// The pane is gone.
    pub fn forget(&mut self, host: usize, pane: &str) {
        self.panes.remove(&(host, pane.to_owned()));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::row;

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
    fn answered_then_blocked_again_rings_the_new_episode_once() {
        let mut attention = Attention::default();
        attention.observe(0, &row("%1", State::Working), true);
        assert!(attention.observe(0, &blocked("%1", 30), false));
        assert!(!attention.observe(0, &blocked("%1", 30), false));
        attention.observe(0, &row("%1", State::Working), false);
        assert!(attention.observe(0, &blocked("%1", 40), false));
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
