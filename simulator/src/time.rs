//! "Now" and moments relative to it: `CORRAL_SIM_NOW_MS` or `--now-ms` pins the clock so golden
//! sessions stamp the same values on every run; `now`, `-90s`, `+5m` or epoch ms are accepted
//! wherever a time is.

use anyhow::{Context, bail};
use golden::fixture::Moment;

/// The environment variable that pins "now" (epoch ms).
pub const NOW_VAR: &str = "CORRAL_SIM_NOW_MS";

/// "Now": the flag, else `CORRAL_SIM_NOW_MS`, else the clock.
pub fn now(flag: Option<u64>) -> anyhow::Result<u64> {
    if let Some(ms) = flag {
        return Ok(ms);
    }
    match std::env::var(NOW_VAR) {
        Ok(text) if !text.is_empty() => text
            .parse()
            .with_context(|| format!("{NOW_VAR}={text:?} is not epoch milliseconds")),
        _ => Ok(crate::env::now_ms()),
    }
}

/// Resolves a fixture moment.
pub fn moment(moment: &Moment, now: u64) -> anyhow::Result<u64> {
    match moment {
        Moment::Absolute(ms) => Ok(*ms),
        Moment::Relative(text) => relative(text, now),
    }
}

/// Resolves `now`, `-90s`, `+5m`, `-1h 30m` or plain epoch ms.
pub fn relative(text: &str, now: u64) -> anyhow::Result<u64> {
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
        _ => bail!("time {text:?}: use epoch ms, `now`, or -/+ a duration such as -90s"),
    };
    let duration = humantime::parse_duration(rest.trim())
        .with_context(|| format!("time {text:?}: bad duration"))?;
    let ms = now as i128 + sign * duration.as_millis() as i128;
    u64::try_from(ms).with_context(|| format!("time {text:?} is before the epoch"))
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
}
