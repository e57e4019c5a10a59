//! The pinned clock of conformance runs: one "now" for every case, so goldens state times
//! literally and a replayed session reads like a run.

/// 2100-01-01T00:00:00Z in epoch milliseconds. The runner starts the simulator with
/// `CORRAL_SIM_NOW_MS` set to it, so fixture and step times are exact (goldens state `since_ms` and
/// `episode_ms` literally) and in the future, so a fixture's `mute_until = "+30m"` is still ahead
/// by the host's clock; the replayer samples an `$int` in a member ending `_ms` as it.
pub const NOW_MS: u64 = 4_102_444_800_000;
