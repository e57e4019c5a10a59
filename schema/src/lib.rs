//! corral's wire, defined once: every frame of the fleet wire protocol in both directions, the
//! local documents (`corral ls --json`, the device store, the config file, the notification
//! payload and log line, the transition ring; corral-remote's `remote.toml` and `--ndjson`
//! lines), their vocabularies, and the JSON Schemas generated from them.
//!
//! With `golden` (the kit's formats), the only crate whose types derive `Serialize`,
//! `Deserialize` and `JsonSchema`; it does no I/O. Field order in the structs is the order on the
//! wire. Read in this order:
//!
//! - [`envelope`]: the line (`schema`, `id`, `t`, body inline), [`encode_line`], [`decode_line`].
//! - [`request`] and [`response`]: the two directions.
//! - [`row`], [`card`], [`transcript`], [`dispatch`]: what the frames carry.
//! - [`vocab`]: every token vocabulary, open or closed.
//! - [`notify`], [`doctor`], [`device`], [`config`]: the host's local documents; [`remote`]:
//!   corral-remote's.
//! - [`generate`]: the JSON Schema files.
//!
//! The conformance kit's own formats (golden sessions, fleet fixtures, the requirement ledger)
//! are the `golden` crate's; it also derives `JsonSchema`, and checks frames against these
//! schemas.

pub mod card;
pub mod config;
pub mod device;
pub mod dispatch;
pub mod doctor;
pub mod envelope;
pub mod generate;
pub mod hook;
pub mod manifest;
pub mod notify;
pub mod remote;
pub mod request;
pub mod response;
pub mod row;
pub mod transcript;
pub mod vocab;

pub use card::{
    Card, CardOption, InformationalCard, PendingCall, PermissionCard, Question, QuestionCard,
    QuestionOption,
};
pub use config::Config;
pub use device::{DeviceList, DeviceRecord, DeviceStore};
pub use dispatch::{Binder, Receipt, Receipts};
pub use doctor::DoctorReport;
pub use envelope::{
    DecodeError, Envelope, Frames, LINE_CAP, SCHEMA_VERSION, UNADDRESSED_ID, decode_line,
    encode_line, peek_schema,
};
pub use notify::{CompletionPayload, NotifyEnv, NotifyLogLine, NotifyPayload, TransitionRing};
pub use remote::{RemoteCommand, RemoteConfig, RemoteHost, RemoteLine, RemoteNotify};
pub use request::{
    Budget, CardRequest, Dispatch, EventRequest, Hello, ReceiptsRequest, Request, Selector,
    SnapshotRequest, Subscribe, WindowLimits, WindowRequest,
};
pub use response::{Edge, ErrorFrame, HelloReply, Response, Snapshot};
pub use row::{FleetRow, Local, LsDocument, LsRow, Row, Wire};
pub use transcript::{Cursor, EventBody, EventHeader, EventKind, EventReply, SessionMeta, Window};
pub use vocab::{
    Action, BodyKind, Boundary, Detail, ErrorCode, Extraction, Fills, Lane, NotifyVar, OptionKind,
    OtherToken, Outcome, PaneOption, Reason, Scope, State, StateFilter, ToolStatus,
    TransitionSource, Trigger,
};
