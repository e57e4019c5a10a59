//! The transition ring (docs/protocol.md "Transition ring"): the daemon's memory of the last
//! [`RING_CAP`] state transitions, fired or not, each with the path that observed it. It lives
//! in memory only; the log is the durable record.

use std::collections::VecDeque;

use schema::notify::{RING_CAP, RING_SCHEMA_VERSION, Transition};
use schema::{FleetRow, State, TransitionRing, TransitionSource};

use crate::edges::edges;

/// The last transitions, oldest first, and how many were ever recorded.
#[derive(Debug, Clone, Default)]
pub struct Ring {
    kept: VecDeque<Transition>,
    recorded: u64,
}

impl Ring {
    /// Records one transition, dropping the oldest past the cap.
    pub fn push(&mut self, transition: Transition) {
        if self.kept.len() == RING_CAP as usize {
            self.kept.pop_front();
        }
        self.kept.push_back(transition);
        self.recorded += 1;
    }

    /// Takes a hook's report of a move the last poll already recorded: when the pane's newest
    /// transition is a poll of the same `from` and `to`, it becomes the hook's and `true` says
    /// nothing more is to be recorded.
    pub fn adopt(&mut self, hook: &Transition) -> bool {
        let Some(newest) = self.kept.iter_mut().rev().find(|t| t.pane == hook.pane) else {
            return false;
        };
        if newest.source != TransitionSource::Poll
            || newest.from != hook.from
            || newest.to != hook.to
        {
            return false;
        }
        newest.source = TransitionSource::Hook;
        true
    }

    /// Takes a push's read of `pane` in `state`, a state entered at `since` (epoch ms), when a
    /// poll already recorded the move into it: when the pane's newest transition is a poll to
    /// `state` recorded at or after `since` (so it saw this very state's start), it becomes the
    /// hook's, as a hook's report would make it.
    pub fn adopt_push(&mut self, pane: &str, state: State, since: Option<u64>) {
        let Some(newest) = self.kept.iter_mut().rev().find(|t| t.pane == pane) else {
            return;
        };
        if newest.source == TransitionSource::Poll
            && newest.to == Some(state)
            && since.is_some_and(|since| newest.at >= since)
        {
            newest.source = TransitionSource::Hook;
        }
    }

    /// The ring as `corral debug transitions --json` prints it.
    pub fn document(&self) -> TransitionRing {
        TransitionRing {
            schema: RING_SCHEMA_VERSION,
            cap: RING_CAP,
            recorded: self.recorded,
            transitions: self.kept.iter().cloned().collect(),
        }
    }
}

/// The transitions a poll observed between two reads (the edges of the whole fleet): `""` for a
/// pane that appeared or vanished.
pub fn polled(before: &[FleetRow], after: &[FleetRow], at: u64) -> Vec<Transition> {
    edges(before, after, None, at)
        .into_iter()
        .map(|edge| Transition {
            pane: edge.pane,
            from: edge.from,
            to: edge.to,
            at,
            source: TransitionSource::Poll,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::row;

    fn transition(n: u64) -> Transition {
        Transition {
            pane: format!("%{n}"),
            from: Some(State::Working),
            to: Some(State::Idle),
            at: n,
            source: TransitionSource::Poll,
        }
    }

    #[test]
    fn the_ring_keeps_the_last_256_oldest_first_and_counts_every_one() {
        let mut ring = Ring::default();
        for n in 0..300 {
            ring.push(transition(n));
        }
        let doc = ring.document();
        assert_eq!((doc.schema, doc.cap, doc.recorded), (1, 256, 300));
        assert_eq!(doc.transitions.len(), 256);
        assert_eq!(doc.transitions[0].at, 44);
        assert_eq!(doc.transitions[255].at, 299);
    }

    #[test]
    fn a_push_adopts_the_poll_that_saw_its_state_start_and_nothing_else() {
        let mut ring = Ring::default();
        ring.push(Transition {
            to: Some(State::Blocked),
            at: 100,
            ..transition(1)
        });
        let source = |ring: &Ring| ring.document().transitions[0].source.clone();
        ring.adopt_push("%1", State::Idle, Some(50));
        assert_eq!(source(&ring), TransitionSource::Poll, "another state");
        ring.adopt_push("%1", State::Blocked, Some(150));
        assert_eq!(
            source(&ring),
            TransitionSource::Poll,
            "a poll before the state's start saw an older move"
        );
        ring.adopt_push("%1", State::Blocked, None);
        assert_eq!(source(&ring), TransitionSource::Poll, "no start, no claim");
        ring.adopt_push("%2", State::Blocked, Some(50));
        assert_eq!(source(&ring), TransitionSource::Poll, "another pane");
        ring.adopt_push("%1", State::Blocked, Some(100));
        assert_eq!(source(&ring), TransitionSource::Hook);
        assert_eq!(ring.document().recorded, 1, "adopting adds nothing");
    }

    #[test]
    fn a_poll_records_moves_appearances_and_departures() {
        let before = vec![row("%1", State::Working), row("%2", State::Idle)];
        let after = vec![row("%1", State::Blocked), row("%3", State::Working)];
        let got: Vec<(String, Option<State>, Option<State>)> = polled(&before, &after, 9)
            .into_iter()
            .map(|t| {
                assert_eq!((t.at, t.source.clone()), (9, TransitionSource::Poll));
                (t.pane, t.from, t.to)
            })
            .collect();
        assert_eq!(
            got,
            [
                ("%1".into(), Some(State::Working), Some(State::Blocked)),
                ("%3".into(), None, Some(State::Working)),
                ("%2".into(), Some(State::Idle), None),
            ]
        );
    }
}
