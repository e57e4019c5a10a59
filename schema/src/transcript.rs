//! Transcript windows and events: cursors, event headers with every event kind, event bodies.
//!
//! A header is `cursor`, `kind`, the kind's own fields, then `ts`, `preview` and `body` (null in a
//! window, populated in an event response). `kind` is open on the client side: a kind minted after
//! this build keeps its token and round-trips instead of failing the frame, while a known kind with
//! malformed fields is still refused.

use std::borrow::Cow;

use schemars::{JsonSchema, Schema, SchemaGenerator};
use serde::ser::SerializeMap;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::{Map, Value};

use crate::vocab::{BodyKind, Boundary, OtherToken, ToolStatus};

/// An opaque, host-minted position in a transcript. Clients only echo back tokens the host
/// minted; a token that no longer addresses its bytes is answered `cursor-invalid`.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(transparent)]
pub struct Cursor(pub String);

/// `← window`: a page of event headers, newest first.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Window {
    /// Pane id.
    pub pane: String,
    /// Agent name.
    pub agent: String,
    /// The transcript's session metadata, or null when the store has none.
    pub session: Option<SessionMeta>,
    /// Cursor for the next older page, or null at the head of the transcript.
    pub older: Option<Cursor>,
    /// True when the byte budget, not the event count, ended the scan. The page is still exact.
    pub budget_truncated: bool,
    /// Records in the page the reader could not classify.
    pub unknown: u32,
    /// Event headers, newest first, `body` null, every string leaf capped at `header_bytes`.
    pub events: Vec<EventHeader>,
}

/// `← event`: one event with its body populated.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct EventReply {
    /// The event header with `body` set.
    pub event: EventHeader,
}

/// The metadata of a transcript session.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize, JsonSchema)]
pub struct SessionMeta {
    /// Agent that wrote the store.
    pub agent: Option<String>,
    /// The agent's session id.
    pub session_id: Option<String>,
    /// Working directory the session ran in.
    pub cwd: Option<String>,
    /// Agent version stamp.
    pub version: Option<String>,
    /// Model name.
    pub model: Option<String>,
}

/// One transcript event.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct EventHeader {
    /// Where the event is; echo it in an `event` request to fetch the body.
    pub cursor: Cursor,
    /// The kind and its own fields.
    #[serde(flatten)]
    pub kind: EventKind,
    /// The store's own timestamp string, or null.
    pub ts: Option<String>,
    /// First line of the content, capped at `header_bytes`, or null.
    pub preview: Option<String>,
    /// Null in a window; the uncapped content in an event response.
    pub body: Option<EventBody>,
}

/// The content of an event.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct EventBody {
    /// `text` for prose, `json` for the store's own JSON carried as text.
    pub kind: BodyKind,
    /// The content, up to 1 MiB (cut on a UTF-8 boundary).
    pub text: String,
    /// Present and true only when `text` was cut: the content is longer than 1 MiB.
    #[serde(default, skip_serializing_if = "is_false")]
    pub truncated: bool,
}

fn is_false(b: &bool) -> bool {
    !*b
}

/// A user's message.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize, JsonSchema)]
pub struct UserMessage {
    /// Size of the content.
    pub bytes: u64,
    /// Number of attachments.
    pub attachments: u32,
}

/// Text the assistant wrote.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize, JsonSchema)]
pub struct AssistantText {
    /// Size of the content.
    pub bytes: u64,
}

/// The assistant's reasoning.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize, JsonSchema)]
pub struct Thinking {
    /// Size of the content.
    pub bytes: u64,
    /// The store holds only a redacted form.
    pub redacted: bool,
}

/// A tool call.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize, JsonSchema)]
pub struct ToolCall {
    /// Tool name.
    pub name: String,
    /// The agent's call id.
    pub call_id: Option<String>,
    /// Top-level keys of the call's arguments, in the agent's order.
    pub arg_keys: Vec<String>,
    /// Size of the arguments.
    pub bytes: u64,
}

/// The result of a tool call.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct ToolResult {
    /// The call it answers.
    pub call_id: Option<String>,
    /// `ok`, `error`, `pending` or `unknown`.
    pub status: ToolStatus,
    /// Size of the result.
    pub bytes: u64,
}

/// A permission request recorded in the transcript.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize, JsonSchema)]
pub struct PermissionRequest {
    /// Tool asking for permission.
    pub tool: String,
    /// The call it is about.
    pub call_id: Option<String>,
}

/// The start or end of a turn.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct TurnBoundary {
    /// Which end.
    pub boundary: Boundary,
    /// Why the turn ended, when the store says.
    pub reason: Option<String>,
}

/// Token usage.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, JsonSchema)]
pub struct Usage {
    /// Input tokens.
    pub input: Option<u64>,
    /// Output tokens.
    pub output: Option<u64>,
    /// Total tokens.
    pub total: Option<u64>,
    /// Size of the context window.
    pub context_window: Option<u64>,
    /// Cost in US dollars.
    pub cost_usd: Option<f64>,
}

/// A reference to a subagent's conversation.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize, JsonSchema)]
pub struct SubagentRef {
    /// The subagent's id.
    pub child_id: String,
    /// The subagent's conversation lives in a file of its own.
    pub external_file: bool,
}

/// The conversation was compacted.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize, JsonSchema)]
pub struct Compaction {
    /// How it was triggered (`auto`, `manual`, ...), when the store says.
    pub compaction: Option<String>,
}

/// A file or image attached to the conversation.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize, JsonSchema)]
pub struct Attachment {
    /// The attachment's type as the store names it.
    pub attachment: String,
    /// Its size.
    pub bytes: u64,
}

/// The store's own bookkeeping (progress ticks, file snapshots, queue operations, titles, hook
/// summaries, injected context): a run of consecutive records of one type in a window is one event,
/// so a window of the last 20 events shows the conversation, and every line is still counted.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize, JsonSchema)]
pub struct Bookkeeping {
    /// The record type as the store names it (`progress`, `file-history-snapshot`, ...).
    pub type_name: String,
    /// How many consecutive records of that type the event stands for, at least 1. Its cursor
    /// addresses the oldest of them; an `event` request on it answers that record alone
    /// (`records` 1).
    pub records: u32,
}

/// A record the reader could not classify.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize, JsonSchema)]
pub struct TypeName {
    /// The record type as the store names it.
    pub type_name: String,
}

/// Declares the event kinds once: the enum, its tagged (de)serialisation and its schema.
macro_rules! event_kinds {
    ($( $(#[$meta:meta])* $variant:ident($payload:ty) = $token:literal, )*) => {
        /// The kind of an event and the kind's own fields.
        #[derive(Debug, Clone, PartialEq)]
        pub enum EventKind {
            $( $(#[$meta])* $variant($payload), )*
            /// A kind minted after this build: the token is kept, its fields are not read.
            Other(OtherToken),
        }

        impl EventKind {
            /// Every kind this build knows.
            pub const KNOWN: &'static [&'static str] = &[$($token),*];

            /// The kind token.
            pub fn as_str(&self) -> &str {
                match self {
                    $( EventKind::$variant(_) => $token, )*
                    EventKind::Other(token) => token.as_str(),
                }
            }
        }

        /// The known kinds, borrowed, tagged by `kind`: what a known kind serialises as.
        #[derive(Serialize)]
        #[serde(tag = "kind")]
        enum TaggedRef<'a> {
            $( #[serde(rename = $token)] $variant(&'a $payload), )*
        }

        /// The known kinds, owned: the source of the schema.
        #[derive(JsonSchema)]
        #[serde(tag = "kind")]
        #[allow(dead_code)]
        enum Tagged {
            $( $(#[$meta])* #[serde(rename = $token)] $variant($payload), )*
        }

        impl Serialize for EventKind {
            fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
                match self {
                    $( EventKind::$variant(payload) => TaggedRef::$variant(payload).serialize(serializer), )*
                    EventKind::Other(token) => {
                        let mut map = serializer.serialize_map(Some(1))?;
                        map.serialize_entry("kind", token.as_str())?;
                        map.end()
                    }
                }
            }
        }

        impl<'de> Deserialize<'de> for EventKind {
            fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
                use serde::de::Error;
                let fields = Map::<String, Value>::deserialize(deserializer)?;
                let token = match fields.get("kind") {
                    Some(Value::String(token)) if !token.is_empty() => token.clone(),
                    _ => return Err(D::Error::custom("an event has no string `kind`")),
                };
                let fields = Value::Object(fields);
                match token.as_str() {
                    $( $token => serde_json::from_value(fields)
                        .map(EventKind::$variant)
                        .map_err(|err| D::Error::custom(format!("malformed `{}` event: {err}", $token))), )*
                    _ => Ok(EventKind::Other(OtherToken::from_wire(token))),
                }
            }
        }
    };
}

event_kinds! {
    /// The session's metadata record.
    SessionMeta(SessionMeta) = "session_meta",
    /// A user's message.
    UserMessage(UserMessage) = "user_message",
    /// Text the assistant wrote.
    AssistantText(AssistantText) = "assistant_text",
    /// The assistant's reasoning.
    Thinking(Thinking) = "thinking",
    /// A tool call.
    ToolCall(ToolCall) = "tool_call",
    /// A tool result.
    ToolResult(ToolResult) = "tool_result",
    /// A permission request.
    PermissionRequest(PermissionRequest) = "permission_request",
    /// A turn boundary.
    TurnBoundary(TurnBoundary) = "turn_boundary",
    /// Token usage.
    Usage(Usage) = "usage",
    /// A subagent reference.
    SubagentRef(SubagentRef) = "subagent_ref",
    /// A compaction.
    Compaction(Compaction) = "compaction",
    /// An attachment.
    Attachment(Attachment) = "attachment",
    /// The store's own bookkeeping, consecutive records of one type folded into one event.
    Bookkeeping(Bookkeeping) = "bookkeeping",
    /// A record the reader could not classify.
    Unknown(TypeName) = "unknown",
}

impl JsonSchema for EventKind {
    fn schema_name() -> Cow<'static, str> {
        Cow::Borrowed("EventKind")
    }

    /// The known kinds, each with its own fields, plus one arm for kinds minted later whose `kind`
    /// is any string *except* a known one: a known kind with malformed fields matches no arm.
    fn json_schema(generator: &mut SchemaGenerator) -> Schema {
        let mut schema = Tagged::json_schema(generator);
        let other = serde_json::json!({
            "type": "object",
            "description": "A kind minted after this build; clients keep the token.",
            "properties": {
                "kind": { "type": "string", "minLength": 1, "not": { "enum": EventKind::KNOWN } }
            },
            "required": ["kind"]
        });
        if let Some(Value::Array(arms)) = schema.get_mut("oneOf") {
            arms.push(other);
        }
        schema
    }
}
