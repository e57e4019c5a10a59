//! The wall clock, in the protocol's unit: epoch milliseconds. Every timestamp the host stamps or
//! compares (`paired_at_ms`, an edge's `at_ms`, a mute deadline) is read here.

/// Epoch milliseconds now; 0 for a clock set before 1970.
pub fn now_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}
