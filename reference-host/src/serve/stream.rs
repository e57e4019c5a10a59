//! A running subscription and what each of its cycles publishes: with `events` true, one edge per
//! pane that moved since the last cycle, after a silent baseline; with `events` false, the
//! selected snapshot whenever it differs from the last one sent. Pure: the session reads the
//! fleet at each tick and writes the frames.

use std::time::{Duration, Instant};

use schema::{FleetRow, Response, Selector, Snapshot, Subscribe};

use crate::edges::edges;
use crate::selector::admits;

/// A connection's one subscription.
#[derive(Debug)]
pub struct Stream {
    /// The subscribe request's id; every streamed frame carries it.
    id: String,
    events: bool,
    selector: Option<Selector>,
    /// Edges: the whole fleet at the last cycle (`None` before the baseline). Snapshots: the
    /// rows last sent.
    last: Option<Vec<FleetRow>>,
    /// When the next cycle runs.
    due: Instant,
}

impl Stream {
    /// The stream `request` (id `id`) starts; its first cycle is due at once (`now`).
    pub fn new(id: String, request: Subscribe, now: Instant) -> Stream {
        Stream {
            id,
            events: request.events,
            selector: request.selector,
            last: None,
            due: now,
        }
    }

    /// The subscribe request's id.
    pub fn id(&self) -> &str {
        &self.id
    }

    /// When the next cycle runs.
    pub fn due(&self) -> Instant {
        self.due
    }

    /// Schedules the next cycle one `interval` after the last, never in the past.
    pub fn reschedule(&mut self, interval: Duration, now: Instant) {
        let next = self.due + interval;
        self.due = if next <= now { now + interval } else { next };
    }

    /// The frames one cycle publishes, given the fleet as read now, at `at_ms`.
    pub fn publish(&mut self, rows: Vec<FleetRow>, at_ms: u64) -> Vec<Response> {
        let selector = self.selector.as_ref();
        if self.events {
            let frames = match &self.last {
                Some(before) => edges(before, &rows, selector, at_ms)
                    .into_iter()
                    .map(Response::Edge)
                    .collect(),
                None => Vec::new(),
            };
            self.last = Some(rows);
            return frames;
        }
        let agents: Vec<FleetRow> = rows.into_iter().filter(|r| admits(selector, r)).collect();
        if self.last.as_ref() == Some(&agents) {
            return Vec::new();
        }
        self.last = Some(agents.clone());
        vec![Response::Snapshot(Snapshot { agents })]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cycles_keep_their_cadence_and_a_late_one_is_not_caught_up() {
        let start = Instant::now();
        let second = Duration::from_secs(1);
        let request = Subscribe {
            events: true,
            selector: None,
        };
        let mut stream = Stream::new("sub".into(), request, start);
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
