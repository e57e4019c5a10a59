//! A run's two clocks: the pinned "now" of the simulator, so goldens state fixture and step times
//! literally and a replayed session reads like a run, and the wall clock a host stamps its own
//! times with (an edge's `at_ms`), which a `$now` pattern checks against the span of the case.
//! Also the times a fixture or a step writes relative to "now" (`-90s`, `+5m`), resolved.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use crate::Error;
use crate::fixture::Moment;

/// 2100-01-01T00:00:00Z in epoch milliseconds. The runner starts the simulator with
/// `CORRAL_SIM_NOW_MS` set to it, so fixture and step times are exact (goldens state `since_ms` and
/// `episode_ms` literally) and in the future, so a fixture's `mute_until = "+30m"` is still ahead
/// by the host's clock; the replayer samples an `$int` in a member ending `_ms`, and every `$now`,
/// as it.
pub const NOW_MS: u64 = 4_102_444_800_000;

/// A wall-clock time in epoch milliseconds (rounded down, as a host stamps one).
pub fn epoch_ms(time: SystemTime) -> u64 {
    let since = time.duration_since(UNIX_EPOCH).unwrap_or(Duration::ZERO);
    u64::try_from(since.as_millis()).unwrap_or(u64::MAX)
}

/// The span of wall-clock time a `$now` must fall in, in epoch milliseconds, both ends included:
/// from the start of the case to the moment the value was received. A host on this machine stamps
/// a time inside it; `0`, seconds, or the simulator's pinned [`NOW_MS`] fall outside.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Window {
    /// The case's start.
    pub from_ms: u64,
    /// When the value arrived.
    pub to_ms: u64,
}

impl Window {
    /// Every time: for matching a frame that holds no `$now` (what a client sends), and a
    /// replayer's own samples.
    pub const ANY: Window = Window {
        from_ms: 0,
        to_ms: u64::MAX,
    };

    /// From `start` to the wall clock's now.
    pub fn since(start: SystemTime) -> Window {
        Window {
            from_ms: epoch_ms(start),
            to_ms: epoch_ms(SystemTime::now()),
        }
    }

    /// Whether a time is inside.
    pub fn contains(self, ms: u64) -> bool {
        (self.from_ms..=self.to_ms).contains(&ms)
    }

    /// Where a time lies relative to the window, for a failure message.
    pub fn describe(self, ms: u64) -> String {
        if ms < self.from_ms {
            format!("{} ms before the case began", self.from_ms - ms)
        } else if ms > self.to_ms {
            format!("{} ms after it was received", ms - self.to_ms)
        } else {
            "inside the case's run".to_owned()
        }
    }
}

/// A fixture's moment at `now` (epoch ms).
pub fn moment(moment: &Moment, now: u64) -> Result<u64, Error> {
    match moment {
        Moment::Absolute(ms) => Ok(*ms),
        Moment::Relative(text) => relative(text, now),
    }
}

/// Resolves `now`, `-90s`, `+5m`, `-1h 30m` (units as humantime reads them) or plain epoch ms
/// against `now`.
pub fn relative(text: &str, now: u64) -> Result<u64, Error> {
    let text = text.trim();
    if text == "now" {
        return Ok(now);
    }
    if let Ok(ms) = text.parse::<u64>() {
        return Ok(ms);
    }
    let (sign, rest) = match text.split_at_checked(1) {
        Some(("-", rest)) => (-1i128, rest),
        Some(("+", rest)) => (1, rest),
        _ => {
            return Err(Error::new(format!(
                "time {text:?}: use epoch ms, `now`, or -/+ a duration such as -90s"
            )));
        }
    };
    let duration = humantime::parse_duration(rest.trim())
        .map_err(|err| Error::new(format!("time {text:?}: bad duration: {err}")))?;
    let ms = now as i128 + sign * duration.as_millis() as i128;
    u64::try_from(ms).map_err(|err| Error::new(format!("time {text:?} is before the epoch: {err}")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn relative_times() {
        assert_eq!(relative("now", 1000).unwrap(), 1000);
        assert_eq!(relative("-90s", 100_000).unwrap(), 10_000);
        assert_eq!(relative("+5m", 0).unwrap(), 300_000);
        assert_eq!(relative("-1h 30m", 10_000_000).unwrap(), 4_600_000);
        assert_eq!(relative("1700000000000", 5).unwrap(), 1_700_000_000_000);
        assert!(relative("soon", 0).is_err());
        assert!(relative("-5s", 10).is_err());
    }

    #[test]
    fn a_moment_is_epoch_ms_as_written_or_relative_to_now() {
        assert_eq!(moment(&Moment::Absolute(7), 1000).unwrap(), 7);
        let relative = Moment::Relative("-1s".into());
        assert_eq!(moment(&relative, 5000).unwrap(), 4000);
        assert_eq!(
            moment(&Moment::Relative("-1x".into()), 0)
                .unwrap_err()
                .to_string(),
            format!(
                "time \"-1x\": bad duration: {}",
                humantime::parse_duration("1x").unwrap_err()
            )
        );
    }

    #[test]
    fn a_window_holds_its_ends_and_says_where_a_time_falls_outside() {
        let window = Window {
            from_ms: 1_000,
            to_ms: 2_000,
        };
        assert!(window.contains(1_000) && window.contains(2_000));
        assert!(!window.contains(999) && !window.contains(2_001));
        assert_eq!(window.describe(400), "600 ms before the case began");
        assert_eq!(window.describe(2_005), "5 ms after it was received");
        let now = Window::since(SystemTime::now() - Duration::from_secs(1));
        assert!(now.to_ms - now.from_ms >= 1_000);
        assert!(!now.contains(NOW_MS) && !now.contains(now.from_ms / 1_000));
    }
}
