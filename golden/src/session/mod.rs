//! The golden-session format (`golden/sessions/*.ndjson`, documented in `golden/README.md`) and
//! its one loader.
//!
//! A golden session is NDJSON: the first line is a header, every later line a step. It describes
//! both halves of a conversation, so a host runner (`cargo xtask conformance`) plays the client's
//! half and judges the host's frames, and a replayer (`corral-sim replay`) plays the host's half
//! and judges a client's frames. Frames inside `send` and `expect` steps are patterns
//! ([`crate::pattern`]). Read in this order:
//!
//! - [`mod@line`]: the lines as types, from which the JSON Schema of a line is generated.
//! - [`raw`]: `send_raw`'s segments, decoded into bytes when a line is read.
//! - [`barrier`]: the two frames of a `barrier` step.
//! - [`names`]: the captures bound before the first step.
//! - [`mod@load`]: the loader, and everything it guarantees about a loaded session.

pub mod barrier;
pub mod line;
pub mod load;
pub mod names;
pub mod raw;

pub use barrier::{BARRIER_SESSION, barrier_answer, barrier_request};
pub use line::{
    Background, Content, Empty, Entry, FileCheck, Fired, GoldenLine, LineCount, Program, Repeat,
    Run, SessionHeader, SignalName, SignalStep, Spawn, Started, StderrCheck, Step, StepLine,
    WriteFile,
};
pub use load::{Located, Session, canonical, files, load, parse};
pub use names::{LABEL_PREFIX, NAMES, PANE_PREFIX, Prebound, TRANSCRIPT_PREFIX, server_key};
pub use raw::{RawBytes, RawSegment};

/// The connection a step acts on when it names none.
pub const MAIN_CONN: &str = "main";

/// Default time limits per step kind, in milliseconds before a run's multiplier; a step's
/// `timeout_ms` replaces its kind's.
pub mod limits {
    /// `expect`, `expect_unordered`, `barrier`; also how long a replayer waits for an app's
    /// frame or its end of input.
    pub const EXPECT_MS: u64 = 5_000;
    /// `exit`, and the exit at the end of a session.
    pub const EXIT_MS: u64 = 5_000;
    /// `sim` and `sim_background`.
    pub const SIM_MS: u64 = 30_000;
    /// `run`: the program's whole life (with `retry`, every run together).
    pub const RUN_MS: u64 = 30_000;
    /// `background`: until its ready file exists.
    pub const BACKGROUND_MS: u64 = 30_000;
    /// `signal` with `exit`: until the program has exited.
    pub const SIGNAL_EXIT_MS: u64 = 5_000;
}
