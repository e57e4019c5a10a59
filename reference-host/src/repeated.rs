//! A warning that would otherwise repeat every cycle (tmux missing, failing or hung), logged when
//! it first appears, then at most once per [`PERIOD`] while it repeats, with the count of the
//! repeats left out, and once more when it stops. Pure: the caller logs the lines it gets.

use std::time::{Duration, Instant};

/// The least time between two lines of one repeating warning.
pub const PERIOD: Duration = Duration::from_secs(60);

/// The state of one repeating warning.
#[derive(Debug, Default)]
pub struct RepeatedWarning {
    current: Option<Seen>,
}

#[derive(Debug)]
struct Seen {
    message: String,
    logged_at: Instant,
    /// Occurrences since the last line.
    unlogged: u64,
    /// Occurrences in all.
    total: u64,
}

impl RepeatedWarning {
    /// The warning happened (again) at `now`; the line to log, if one is due: the first time,
    /// when the message changes, and then once per [`PERIOD`].
    pub fn occurred(&mut self, message: &str, now: Instant) -> Option<String> {
        match &mut self.current {
            Some(seen) if seen.message == message => {
                seen.total += 1;
                if now.duration_since(seen.logged_at) < PERIOD {
                    seen.unlogged += 1;
                    return None;
                }
                let line = format!(
                    "{message} (again {} times since the last report)",
                    seen.unlogged + 1
                );
                seen.logged_at = now;
                seen.unlogged = 0;
                Some(line)
            }
            _ => {
                self.current = Some(Seen {
                    message: message.to_owned(),
                    logged_at: now,
                    unlogged: 0,
                    total: 1,
                });
                Some(message.to_owned())
            }
        }
    }

    /// The warning's cause is gone; a line saying so, if the warning had been logged.
    pub fn stopped(&mut self) -> Option<String> {
        let seen = self.current.take()?;
        Some(format!(
            "recovered (failures: {}; the last: {})",
            seen.total, seen.message
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_repeat_is_logged_once_per_period_with_its_count_and_a_change_at_once() {
        let start = Instant::now();
        let second = Duration::from_secs(1);
        let mut warning = RepeatedWarning::default();
        assert_eq!(
            warning.occurred("tmux hung", start).as_deref(),
            Some("tmux hung")
        );
        for i in 1..=59 {
            assert_eq!(warning.occurred("tmux hung", start + i * second), None);
        }
        assert_eq!(
            warning
                .occurred("tmux hung", start + 60 * second)
                .as_deref(),
            Some("tmux hung (again 60 times since the last report)")
        );
        assert_eq!(warning.occurred("tmux hung", start + 61 * second), None);
        assert_eq!(
            warning
                .occurred("tmux missing", start + 62 * second)
                .as_deref(),
            Some("tmux missing"),
            "a different warning is logged at once"
        );
        assert_eq!(
            warning.stopped().as_deref(),
            Some("recovered (failures: 1; the last: tmux missing)")
        );
        assert_eq!(warning.stopped(), None, "said once");
        assert_eq!(
            warning
                .occurred("tmux missing", start + 63 * second)
                .as_deref(),
            Some("tmux missing"),
            "a warning after a recovery is new"
        );
    }
}
