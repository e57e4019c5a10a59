//! When to reconnect after a connection dropped: 0.5 s, doubling up to 30 s, back to 0.5 s once
//! a connection stayed up for a minute.

use std::time::{Duration, Instant};

/// The first wait.
pub const FIRST: Duration = Duration::from_millis(500);
/// The longest wait.
pub const LONGEST: Duration = Duration::from_secs(30);
/// A connection up this long resets the schedule.
pub const STABLE: Duration = Duration::from_secs(60);

/// The reconnection schedule of one host.
#[derive(Debug, Clone)]
pub struct Backoff {
    next: Duration,
    up_since: Option<Instant>,
}

impl Default for Backoff {
    fn default() -> Self {
        Backoff {
            next: FIRST,
            up_since: None,
        }
    }
}

impl Backoff {
    /// A connection came up (its handshake was answered) at `now`.
    pub fn connected(&mut self, now: Instant) {
        self.up_since = Some(now);
    }

    /// The connection dropped, or could not be made, at `now`: how long to wait before the next
    /// attempt.
    pub fn dropped(&mut self, now: Instant) -> Duration {
        if let Some(since) = self.up_since.take()
            && now.saturating_duration_since(since) >= STABLE
        {
            self.next = FIRST;
        }
        let wait = self.next;
        self.next = (self.next * 2).min(LONGEST);
        wait
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn waits_double_up_to_thirty_seconds() {
        let mut backoff = Backoff::default();
        let now = Instant::now();
        let waits: Vec<u64> = (0..9)
            .map(|_| backoff.dropped(now).as_millis() as u64)
            .collect();
        assert_eq!(
            waits,
            [500, 1000, 2000, 4000, 8000, 16000, 30000, 30000, 30000]
        );
    }

    #[test]
    fn a_stable_minute_resets_the_schedule_and_a_short_one_does_not() {
        let mut backoff = Backoff::default();
        let start = Instant::now();
        for _ in 0..4 {
            backoff.dropped(start);
        }
        backoff.connected(start);
        assert_eq!(
            backoff.dropped(start + Duration::from_secs(59)),
            Duration::from_secs(8)
        );
        backoff.connected(start);
        assert_eq!(backoff.dropped(start + STABLE), FIRST);
        assert_eq!(backoff.dropped(start + STABLE), Duration::from_secs(1));
    }
}
