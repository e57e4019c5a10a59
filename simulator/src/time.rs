//! "Now": `CORRAL_SIM_NOW_MS` or `--now-ms` pins the clock so golden sessions stamp the same
//! values on every run. Times relative to it (`now`, `-90s`, `+5m` or epoch ms, accepted wherever
//! a time is) are read by the fixtures' rule, `golden::clock::relative`.

use anyhow::Context;

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
        _ => Ok(stdx::now_ms()),
    }
}
