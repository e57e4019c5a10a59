//! corral's conformance kit, its formats defined and loaded once. The data sits beside this
//! crate: `golden/sessions/*.ndjson`, `golden/fixtures/*.toml`, `golden/requirements.toml`
//! (`golden/README.md`, `golden/fixtures/README.md`). Both roles of the kit build on it:
//! `cargo xtask conformance` plays a session's client half against a host, and
//! `corral-sim replay` plays its host half against a client app.
//!
//! With `schema`, the only crate whose types derive `JsonSchema`: `schema` has the wire and the
//! host's local documents, this crate the kit's formats. Read in this order:
//!
//! - [`Error`]: the one error of every loader and check, `file:line: message`.
//! - [`backend`]: the two tmux backends a fleet runs on; [`clock`]: a run's pinned "now" and the
//!   wall-clock span a `$now` falls in.
//! - [`session`]: the golden-session format; [`suite`]: what a session needs of a host.
//! - [`pattern`]: the pattern engine of `send` and `expect` frames.
//! - [`ledger`]: the requirement ledger.
//! - [`fixture`]: fleet fixtures for the simulator; [`plan`]: a fixture expanded into the fleet
//!   `corral-sim up` creates, with the pane ids tmux will assign (the replayer reads them too).
//! - [`profile`]: host profiles, what the kit needs to know about a host under test.
//! - [`sim_file`]: what `corral-sim up` answers about the fleet it brought up.
//! - [`validate`]: frames and local documents checked against the generated schemas, with precise
//!   paths (and a document's key order where the protocol fixes it).
//! - [`generate`]: the JSON Schema files of the kit's formats.
//! - [`kit`]: which files make up the kit's data, listed and read from a checkout or written out
//!   (the `conformance` crate embeds them by the same rule, so an installed `corral-conformance`
//!   needs no checkout; this crate holds none of the data).

pub mod backend;
pub mod clock;
mod error;
pub mod fixture;
pub mod generate;
pub mod kit;
pub mod ledger;
pub mod pattern;
pub mod plan;
pub mod profile;
pub mod session;
pub mod sim_file;
pub mod suite;
pub mod validate;

pub use backend::Backend;
pub use error::Error;
pub use fixture::Fixture;
pub use ledger::{Ledger, Level, Requirement, Status};
pub use profile::HostProfile;
pub use session::{GoldenLine, RawSegment, Session, SessionHeader, Step, StepLine};
pub use sim_file::SimFile;
pub use suite::Suite;
pub use validate::FrameSchema;
