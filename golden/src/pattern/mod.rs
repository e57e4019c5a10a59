//! Frame patterns: exact JSON, where a string starting with `$` is a directive (typed wildcards,
//! `$now` for a time the host stamps, `$absent`, captures bound on first sight, `${name}`
//! references), and the object key
//! `"$more": true`. Pure: values in, values out. `golden/README.md` documents the directives.
//!
//! The rule that keeps directives from colliding silently with data: every `$` in a pattern
//! string is special. `$$` is a literal `$`, `${name}` is a bound value, and a string that starts
//! with `$` otherwise must be a known directive; anything else is a load error.
//!
//! Both sides of the conformance kit use this one engine: `cargo xtask conformance` matches a
//! host's frames against `expect` patterns, and `corral-sim replay` matches a client's frames
//! against `send` frames and writes `expect` patterns as concrete frames. By role, in reading
//! order:
//!
//! - [`syntax`]: what a pattern string means.
//! - [`mod@check`]: a pattern checked before use, with the captures it binds and references.
//! - [`captures`]: bound values, whole or inside a string.
//! - [`matching`]: a received value against a pattern, binding captures.
//! - [`substitute`]: a frame to send, `${name}` replaced.
//! - [`mod@sample`]: an expectation as a concrete frame, each wildcard a sample of its type.
//! - [`render`]: the expected side of a diff, each wildcard filled with what satisfied it (the
//!   replayer's verdicts).
//! - [`mod@diff`]: a pattern against a received value, aligned by structure, directives shown as
//!   written (the runner's failures).
//! - [`mod@bless`]: an expectation rewritten from what was received.

pub mod bless;
pub mod captures;
pub mod check;
pub mod diff;
pub mod matching;
pub mod render;
pub mod sample;
pub mod substitute;
pub mod syntax;

pub use bless::{bless, escape_literal};
pub use captures::Captures;
pub use check::{Use, check, is_concrete};
pub use diff::{DiffLine, Side};
pub use matching::{Mismatch, matches, matches_tolerating};
pub use render::render_expected;
pub use sample::{SAMPLE_STRING, sample};
pub use substitute::{instantiate, instantiate_text};
pub use syntax::{Kind, MORE_KEY, Piece, Str, SyntaxError, parse_str};
