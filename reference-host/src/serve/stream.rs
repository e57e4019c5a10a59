//! A running subscription and what each of its cycles publishes: with `events` true, one edge per
//! pane that moved since the last cycle, after a silent baseline; with `events` false, the
//! selected snapshot whenever it differs from the last one sent. Pure: the session reads the
//! fleet at each tick and writes the frames.
//!
//! A push (`crate::push`) brings one pane's read forward: [`Stream::publish_pane`] takes that
//! pane's row as read now and publishes what it changed, against the same memory of the fleet the
//! cycles keep, so a move is published once whichever read sees it first. It never adds or
//! removes a pane: appearing and vanishing are the cycle's to see, and before the baseline a push
//! publishes nothing.

use std::time::{Duration, Instant};

use schema::{FleetRow, Response, Selector, Snapshot, Subscribe};

use crate::edges::edges;
use crate::fleet::CycleKind;
use crate::fleet::shared::next_instant;
use crate::push::Later;
use crate::selector::admits;

/// A connection's one subscription.
#[derive(Debug)]
pub struct Stream {
    /// The subscribe request's id; every streamed frame carries it.
    id: String,
    events: bool,
    selector: Option<Selector>,
    /// The whole fleet as last read, by the cycle or a push (`None` before the baseline).
    fleet: Option<Vec<FleetRow>>,
    /// Snapshots: the rows last sent.
    sent: Option<Vec<FleetRow>>,
    /// When the next cycle runs.
    due: Instant,
    /// When the stream's last read of the fleet (or of a pushed pane) started, epoch ms: no read
    /// that started earlier may feed it (its memory of the fleet would go back in time).
    floor_ms: u64,
}

impl Stream {
    /// The stream `request` (id `id`) starts; its first cycle is due at once (`now`, `now_ms` on
    /// the wall clock), from a read that starts no earlier.
    pub fn new(id: String, request: Subscribe, now: Instant, now_ms: u64) -> Stream {
        Stream {
            id,
            events: request.events,
            selector: request.selector,
            fleet: None,
            sent: None,
            due: now,
            floor_ms: now_ms,
        }
    }

    /// When its last read started, epoch ms: the earliest a read that feeds it may have started.
    pub fn floor_ms(&self) -> u64 {
        self.floor_ms
    }

    /// Pane `pane`'s `@agent_stamped_at` as the stream's last read of it showed it.
    pub fn stamped_at(&self, pane: &str) -> Option<u64> {
        crate::push::remembered_stamp(self.fleet.as_deref(), pane)
    }

    /// A read that started at `started_ms` fed it.
    pub fn fed(&mut self, started_ms: u64) {
        self.floor_ms = self.floor_ms.max(started_ms);
    }

    /// The subscribe request's id.
    pub fn id(&self) -> &str {
        &self.id
    }

    /// When the next cycle runs.
    pub fn due(&self) -> Instant {
        self.due
    }

    /// What its cycles read: edges or snapshots.
    pub fn kind(&self) -> CycleKind {
        if self.events {
            CycleKind::Edges
        } else {
            CycleKind::Snapshots
        }
    }

    /// Whether its first cycle, the baseline, has run.
    pub fn has_baseline(&self) -> bool {
        self.fleet.is_some()
    }

    /// Schedules the next cycle one `interval` after the last, never in the past.
    pub fn reschedule(&mut self, interval: Duration, now: Instant) {
        let next = self.due + interval;
        self.due = if next <= now { now + interval } else { next };
    }

    /// Schedules the next cycle on the host's shared schedule (`fleet::shared`) started at
    /// `origin_ms`: its first instant at least half an `interval` after this cycle, which woke
    /// at `woke` (`woke_ms` on the wall clock).
    pub fn align(&mut self, origin_ms: u64, interval: Duration, woke: Instant, woke_ms: u64) {
        let interval_ms = u64::try_from(interval.as_millis()).unwrap_or(u64::MAX);
        let next_ms = next_instant(origin_ms, interval_ms, woke_ms);
        self.due = woke + Duration::from_millis(next_ms.saturating_sub(woke_ms));
    }

    /// The frames one cycle publishes, given the fleet as read now, at `at_ms`.
    ///
    /// A cycle's read runs off the loop while pushes are taken, so a push can read a pane after
    /// the read began and be published first. Such a pane is overtaken: the stream remembers a
    /// later `@agent_stamped_at` of it than the read shows (`push::overtaken`, `push::Later`).
    /// It keeps the reading the stream remembers: the read's older row would publish the move
    /// backwards (and forwards again at the next cycle: two edges for one move, and a snapshot
    /// that goes back in time). The next cycle reads it again.
    pub fn publish(&mut self, mut rows: Vec<FleetRow>, at_ms: u64) -> Vec<Response> {
        if let Some(before) = &self.fleet {
            keep_overtaken(before, &mut rows);
        }
        let frames = match (&self.fleet, self.events) {
            (Some(before), true) => edges(before, &rows, self.selector.as_ref(), at_ms)
                .into_iter()
                .map(Response::Edge)
                .collect(),
            (None, true) => Vec::new(),
            (_, false) => self.snapshot(&rows),
        };
        self.fleet = Some(rows);
        frames
    }

    /// The frames a push publishes, given pane `row.pane` as read now, at `at_ms`: its edge if
    /// its state moved since the fleet was last read, or the snapshot if the selected rows
    /// changed. Nothing before the baseline, and nothing for a pane the last read did not have.
    pub fn publish_pane(&mut self, row: FleetRow, at_ms: u64) -> Vec<Response> {
        let Some(fleet) = &mut self.fleet else {
            return Vec::new();
        };
        let Some(at) = fleet.iter().position(|r| r.pane == row.pane) else {
            return Vec::new();
        };
        let before = std::mem::replace(&mut fleet[at], row);
        if self.events {
            let after = std::slice::from_ref(&fleet[at]);
            return edges(
                std::slice::from_ref(&before),
                after,
                self.selector.as_ref(),
                at_ms,
            )
            .into_iter()
            .map(Response::Edge)
            .collect();
        }
        let rows = fleet.clone();
        self.snapshot(&rows)
    }

    /// The snapshot of `rows` this stream's selector admits, unless it is the one last sent.
    fn snapshot(&mut self, rows: &[FleetRow]) -> Vec<Response> {
        let selector = self.selector.as_ref();
        let agents: Vec<FleetRow> = rows
            .iter()
            .filter(|r| admits(selector, r))
            .cloned()
            .collect();
        if self.sent.as_ref() == Some(&agents) {
            return Vec::new();
        }
        self.sent = Some(agents.clone());
        vec![Response::Snapshot(Snapshot { agents })]
    }
}

/// Replaces each row of `rows` that `before` (the stream's memory) has a later reading of
/// ([`Stream::publish`]), looked up in [`Later`].
fn keep_overtaken(before: &[FleetRow], rows: &mut [FleetRow]) {
    let later = Later::new(before);
    for row in rows {
        if let Some(remembered) = later.of(row) {
            *row = remembered.clone();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::row;
    use schema::State;

    fn stream(events: bool, selector: Option<&str>) -> Stream {
        let request = Subscribe {
            events,
            selector: selector.map(|s| serde_json::from_str(s).unwrap()),
        };
        Stream::new("sub".into(), request, Instant::now(), 0)
    }

    /// The (pane, from, to) of each edge among `frames`.
    fn edges_of(frames: &[Response]) -> Vec<(String, Option<State>, Option<State>)> {
        frames
            .iter()
            .map(|frame| match frame {
                Response::Edge(e) => (e.pane.clone(), e.from, e.to),
                other => panic!("not an edge: {other:?}"),
            })
            .collect()
    }

    fn fleet() -> Vec<FleetRow> {
        vec![row("%1", State::Working), row("%2", State::Idle)]
    }

    #[test]
    fn a_push_before_the_baseline_publishes_nothing_and_is_not_the_baseline() {
        let mut s = stream(true, None);
        assert!(s.publish_pane(row("%1", State::Blocked), 5).is_empty());
        assert!(!s.has_baseline());
        assert!(s.publish(fleet(), 6).is_empty(), "the baseline is silent");
        assert!(s.has_baseline());
    }

    /// One move seen by a push and then by the cycle, or by the cycle and then by a push: one
    /// edge, stamped by the read that saw it first.
    #[test]
    fn a_move_seen_by_both_the_push_and_the_cycle_is_one_edge() {
        let moved = || vec![row("%1", State::Blocked), row("%2", State::Idle)];
        let mut s = stream(true, None);
        s.publish(fleet(), 1);
        let pushed = s.publish_pane(row("%1", State::Blocked), 2);
        assert_eq!(
            edges_of(&pushed),
            [("%1".into(), Some(State::Working), Some(State::Blocked))]
        );
        let Response::Edge(edge) = &pushed[0] else {
            unreachable!()
        };
        assert_eq!(edge.at_ms, 2);
        assert!(
            s.publish(moved(), 3).is_empty(),
            "the cycle saw nothing new"
        );

        let mut s = stream(true, None);
        s.publish(fleet(), 1);
        assert_eq!(edges_of(&s.publish(moved(), 2)).len(), 1);
        assert!(
            s.publish_pane(row("%1", State::Blocked), 3).is_empty(),
            "the push saw nothing new"
        );
        assert!(s.publish_pane(row("%1", State::Blocked), 4).is_empty());
    }

    #[test]
    fn a_push_never_adds_or_removes_a_pane() {
        let mut s = stream(true, None);
        s.publish(fleet(), 1);
        assert!(s.publish_pane(row("%9", State::Working), 2).is_empty());
        assert_eq!(
            edges_of(&s.publish(vec![row("%9", State::Working)], 3)),
            [
                ("%9".into(), None, Some(State::Working)),
                ("%1".into(), Some(State::Working), None),
                ("%2".into(), Some(State::Idle), None),
            ],
            "the cycle reports the newcomer as appeared: the push did not add it"
        );
    }

    /// A cycle's read runs off the loop: one that began before a push read a pane shows the
    /// pane's older stamp, and the stream keeps the pushed reading (no edge back, none forth
    /// again); a read with no stamp proves nothing and is taken.
    #[test]
    fn a_cycle_read_older_than_a_pushed_row_keeps_the_pushed_row() {
        let stamped = |state, at: Option<u64>| FleetRow {
            stamped_at_ms: at,
            ..row("%1", state)
        };
        let fleet = |one: FleetRow| vec![one, row("%2", State::Idle)];
        let mut s = stream(true, None);
        assert!(
            s.publish(fleet(stamped(State::Working, Some(1))), 1)
                .is_empty()
        );
        let pushed = s.publish_pane(stamped(State::Blocked, Some(2)), 2);
        assert_eq!(
            edges_of(&pushed),
            [("%1".into(), Some(State::Working), Some(State::Blocked))]
        );
        let older = s.publish(fleet(stamped(State::Working, Some(1))), 3);
        assert!(older.is_empty(), "{older:?}");
        assert_eq!(s.stamped_at("%1"), Some(2), "the pushed reading is kept");
        assert!(
            s.publish(fleet(stamped(State::Blocked, Some(2))), 4)
                .is_empty()
        );
        let unstamped = s.publish(fleet(stamped(State::Working, None)), 5);
        assert_eq!(
            edges_of(&unstamped),
            [("%1".into(), Some(State::Blocked), Some(State::Working))]
        );
    }

    #[test]
    fn a_pushed_edge_goes_through_the_selector() {
        let mut s = stream(true, Some(r#"{"state":["blocked"]}"#));
        s.publish(fleet(), 1);
        assert!(
            s.publish_pane(row("%2", State::Working), 2).is_empty(),
            "idle to working is outside the selector on both sides"
        );
        assert_eq!(
            edges_of(&s.publish_pane(row("%1", State::Blocked), 3)),
            [("%1".into(), Some(State::Working), Some(State::Blocked))]
        );
        assert_eq!(
            edges_of(&s.publish_pane(row("%1", State::Idle), 4)),
            [("%1".into(), Some(State::Blocked), Some(State::Idle))],
            "leaving the selector's scope is an edge"
        );
    }

    #[test]
    fn a_pushed_row_changes_a_snapshot_stream_once() {
        let mut s = stream(false, Some(r#"{"agent":"claude"}"#));
        assert!(s.publish_pane(row("%1", State::Blocked), 1).is_empty());
        assert_eq!(s.publish(fleet(), 2).len(), 1, "the first cycle sends one");
        let pushed = s.publish_pane(row("%1", State::Blocked), 3);
        let [Response::Snapshot(snapshot)] = pushed.as_slice() else {
            panic!("{pushed:?}")
        };
        assert_eq!(
            snapshot
                .agents
                .iter()
                .map(|r| (r.pane.as_str(), r.state))
                .collect::<Vec<_>>(),
            [("%1", State::Blocked), ("%2", State::Idle)],
            "the whole selection, in the fleet's order"
        );
        let again = vec![row("%1", State::Blocked), row("%2", State::Idle)];
        assert!(
            s.publish(again, 4).is_empty(),
            "the cycle's equal snapshot is suppressed"
        );
        assert!(s.publish_pane(row("%1", State::Blocked), 5).is_empty());
    }

    #[test]
    fn on_a_shared_schedule_the_next_cycle_is_its_next_instant() {
        let woke = Instant::now();
        let mut s = stream(true, None);
        let interval = Duration::from_millis(200);
        // Woken 7 ms late for the instant 1400 of a schedule from 1000: the next is 1600.
        s.align(1000, interval, woke, 1407);
        assert_eq!(s.due(), woke + Duration::from_millis(193));
        // A stream that joins the schedule at 1510 waits for 1800, not 1600.
        s.align(1000, interval, woke, 1510);
        assert_eq!(s.due(), woke + Duration::from_millis(290));
        assert_eq!(s.kind(), CycleKind::Edges);
        assert_eq!(stream(false, None).kind(), CycleKind::Snapshots);
    }

    #[test]
    fn cycles_keep_their_cadence_and_a_late_one_is_not_caught_up() {
        let start = Instant::now();
        let second = Duration::from_secs(1);
        let request = Subscribe {
            events: true,
            selector: None,
        };
        let mut stream = Stream::new("sub".into(), request, start, 0);
        assert_eq!(stream.due(), start, "the first cycle runs at once");
        stream.reschedule(second, start + Duration::from_millis(10));
        assert_eq!(stream.due(), start + second, "one interval after the last");
        stream.reschedule(second, start + 5 * second);
        assert_eq!(
            stream.due(),
            start + 6 * second,
            "after a stall, one interval from now"
        );
    }
}
