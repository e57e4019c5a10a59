//! The wall clock, in the protocol's unit: epoch milliseconds. Every timestamp the host stamps or
//! compares (`paired_at_ms`, an edge's `at_ms`, a mute deadline) is read here, from the
//! workspace's one clock.

/// Epoch milliseconds now; 0 for a clock set before 1970.
pub use stdx::now_ms;
