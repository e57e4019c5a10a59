//! How a case ended, as everything after the run reads it: the console line, the reports, the
//! baseline, the self-test.

use std::path::PathBuf;
use std::time::Duration;

use golden::Suite;

/// The characters of one line a case's log keeps (a window can be a megabyte).
pub const LOG_LINE_CAP: usize = 4096;

/// How a case ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Grade {
    Pass,
    /// Failed, but every requirement it tests is a `should` or a `may`.
    NonStrict,
    Fail,
    /// Not applicable to this backend.
    Skipped,
}

impl Grade {
    pub fn as_str(self) -> &'static str {
        match self {
            Grade::Pass => "pass",
            Grade::NonStrict => "non-strict",
            Grade::Fail => "fail",
            Grade::Skipped => "skipped",
        }
    }
}

/// Everything a reader needs to understand a failure without rerunning it.
#[derive(Debug, Clone)]
pub struct Failure {
    /// `golden/sessions/<case>.ndjson:<line>`.
    pub location: String,
    /// What the failing step checks, in the session's words: the comment that heads its part of
    /// the session (the nearest `comment` step before it), when there is one.
    pub checking: Option<String>,
    /// The golden line.
    pub step: String,
    pub message: String,
    /// A unified diff of what was expected (a frame, a text, a document) against what was received.
    pub diff: Option<String>,
    /// What the step found wrong, as data, when it judged the host's frames or its exit: the
    /// self-test matches it against what a mutant changed.
    pub found: Option<Found>,
    /// The connection's lines, `→` sent and `←` received, last ones last.
    pub transcript: Vec<String>,
    /// The tail of the host's stderr.
    pub stderr: String,
    /// The command that reruns this one case.
    pub rerun: String,
}

/// What a failing step found wrong in what the host sent, as data (its message says it in words).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Found {
    /// A received frame differs from its pattern at `pointer` (a JSON pointer into the frame, as
    /// the message names it: `/agents/0/detail`; empty for the frame as a whole).
    Member {
        pointer: String,
        /// The received line.
        received: String,
    },
    /// A frame arrived where the step expected none: during a silence, or before the host's end.
    Unexpected {
        /// The received line.
        received: String,
    },
    /// No frame arrived where the step expected one.
    Missing,
    /// The host exited with another code than the step expected (`None`: killed by a signal).
    ExitCode { expected: i32, got: Option<i32> },
}

/// One case's result.
#[derive(Debug, Clone)]
pub struct CaseResult {
    pub case: String,
    /// The session file, where `--bless` writes.
    pub file: PathBuf,
    /// The session file relative to the kit's root, as reports show it.
    pub shown: String,
    pub requirements: Vec<String>,
    /// What the case needs of a host.
    pub suite: Suite,
    pub grade: Grade,
    /// Strict-grade notes: what the host did that the protocol allows but corral does not do
    /// (a key the protocol does not name, keys in another order). They never fail a case unless
    /// the run is `--strict`.
    pub notes: Vec<String>,
    /// Every line of every connection, in order: `<conn> → <sent>` and `<conn> ← <received>`,
    /// each cut at [`LOG_LINE_CAP`] characters. Empty for a skipped case.
    pub log: Vec<String>,
    pub duration: Duration,
    pub skip_reason: Option<String>,
    pub failure: Option<Failure>,
    /// Lines bless rewrote: (1-based line, new text).
    pub blessed: Vec<(usize, String)>,
}
