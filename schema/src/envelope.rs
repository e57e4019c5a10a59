//! The envelope every line carries, and the one encoder and decoder of wire lines.
//!
//! A line is one compact JSON object: `schema`, `id`, `t`, then the frame's body inline. Decoding
//! runs in stages so the host can answer every line correctly: a line that is not a JSON object or
//! has no string `id` is answered with id `"0"`; a `schema` that is an integer other than 1, of
//! any size, is recognised before the body is parsed (`unsupported-schema`); an unknown `t` or a
//! malformed body is answered with the caller's own id (`bad-request`).

use std::fmt;

use schemars::{JsonSchema, Schema, SchemaGenerator, json_schema};
use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;

use crate::vocab::ErrorCode;

/// The wire version this build speaks, stated on every line.
pub const SCHEMA_VERSION: u32 = 1;

/// The longest request line a host accepts, newline excluded; a longer one is answered
/// `bad-request` with id `"0"` (wire-details "Framing").
pub const LINE_CAP: usize = 64 * 1024;

/// The id an answer carries when the caller's id could not be recovered.
pub const UNADDRESSED_ID: &str = "0";

/// One line of the wire: the envelope fields, then the body inline.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct Envelope<B> {
    /// Wire version of this line. This build speaks 1; any other value is answered
    /// `unsupported-schema` before the body is read.
    #[schemars(schema_with = "schema_version")]
    pub schema: u32,
    /// The caller's correlation id, echoed on every response to that request. A streamed frame
    /// carries the id of the subscribe request that opened the stream.
    pub id: String,
    /// The frame: its name `t` and its fields, inline beside the envelope.
    #[serde(flatten)]
    pub body: B,
}

fn schema_version(_: &mut SchemaGenerator) -> Schema {
    json_schema!({
        "description": "Wire version of this line. These schemas describe version 1.",
        "const": SCHEMA_VERSION
    })
}

/// Schema of a local document's `schema` key at version 1.
pub(crate) fn document_version_1(_: &mut SchemaGenerator) -> Schema {
    json_schema!({ "description": "Version of this document.", "const": 1 })
}

/// Schema of a local document's `schema` key at version 2.
pub(crate) fn document_version_2(_: &mut SchemaGenerator) -> Schema {
    json_schema!({ "description": "Version of this document.", "const": 2 })
}

impl<B> Envelope<B> {
    /// A line of the current schema version.
    pub fn new(id: impl Into<String>, body: B) -> Self {
        Envelope {
            schema: SCHEMA_VERSION,
            id: id.into(),
            body,
        }
    }
}

/// One direction of the wire: the set of frames a side may send.
pub trait Frames: Sized + Serialize {
    /// Every frame name (`t`) of this direction.
    const NAMES: &'static [&'static str];

    /// Parses the body of a frame whose `t` is one of [`Frames::NAMES`] from the whole line.
    /// Envelope keys and unknown keys in the line are ignored.
    fn decode_body(t: &str, line: &str) -> Result<Self, serde_json::Error>;

    /// The frame name (`t`) of this frame.
    fn name(&self) -> &'static str;
}

/// Implements [`Frames`] for a direction's enum from one table of frame names and variants, so
/// each frame kind is written once: its name in [`Frames::NAMES`], its decoder and
/// [`Frames::name`] all come from the same row. A row is `"name" => Variant(_)` for a frame with
/// a body, `"name" => Variant` for one without.
macro_rules! frame_kinds {
    ($ty:ident, $what:literal, { $($name:literal => $variant:ident $(($body:tt))?),+ $(,)? }) => {
        impl $crate::envelope::Frames for $ty {
            const NAMES: &'static [&'static str] = &[$($name),+];

            fn decode_body(t: &str, line: &str) -> Result<Self, serde_json::Error> {
                Ok(match t {
                    $($name => frame_kinds!(@decode $ty $variant line $($body)?),)+
                    other => {
                        return Err(serde::de::Error::custom(format!(
                            concat!("unknown ", $what, " `{}`"),
                            other
                        )));
                    }
                })
            }

            fn name(&self) -> &'static str {
                match self {
                    $(frame_kinds!(@pattern $ty $variant $($body)?) => $name,)+
                }
            }
        }
    };
    (@decode $ty:ident $variant:ident $line:ident _) => {
        $ty::$variant(serde_json::from_str($line)?)
    };
    (@decode $ty:ident $variant:ident $line:ident) => {
        $ty::$variant
    };
    (@pattern $ty:ident $variant:ident _) => {
        $ty::$variant(_)
    };
    (@pattern $ty:ident $variant:ident) => {
        $ty::$variant
    };
}
pub(crate) use frame_kinds;

/// Encodes one frame as a compact JSON line, `\n`-terminated.
pub fn encode_line<B: Serialize>(frame: &Envelope<B>) -> String {
    // Wire types hold only string-keyed maps and finite numbers, so encoding cannot fail.
    let mut line = serde_json::to_string(frame).expect("wire frames always encode");
    line.push('\n');
    line
}

/// Why a line could not be decoded, and how the host must answer it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DecodeError {
    /// Not a JSON object, or no string `id` to answer to: answered `bad-request` with id `"0"`.
    Unaddressed {
        /// What was wrong, for the log and the error message.
        reason: String,
    },
    /// The envelope names a schema this build does not implement. The connection survives.
    UnsupportedSchema {
        /// The caller's id when one was recoverable.
        id: Option<String>,
        /// The schema the line named: an integer, as written (it may not fit any Rust integer).
        schema: String,
    },
    /// An object with a string id whose envelope, frame name or body is wrong.
    BadFrame {
        /// The caller's id.
        id: String,
        /// What was wrong.
        reason: String,
    },
}

impl DecodeError {
    /// The id the answering error frame carries.
    pub fn reply_id(&self) -> &str {
        match self {
            DecodeError::Unaddressed { .. } | DecodeError::UnsupportedSchema { id: None, .. } => {
                UNADDRESSED_ID
            }
            DecodeError::UnsupportedSchema { id: Some(id), .. }
            | DecodeError::BadFrame { id, .. } => id,
        }
    }

    /// The error code the answering error frame carries.
    pub fn code(&self) -> ErrorCode {
        match self {
            DecodeError::UnsupportedSchema { .. } => ErrorCode::UnsupportedSchema,
            DecodeError::Unaddressed { .. } | DecodeError::BadFrame { .. } => ErrorCode::BadRequest,
        }
    }
}

impl fmt::Display for DecodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DecodeError::Unaddressed { reason } => f.write_str(reason),
            DecodeError::UnsupportedSchema { schema, .. } => write!(
                f,
                "schema {schema} is not implemented by this host; it speaks schema {SCHEMA_VERSION}"
            ),
            DecodeError::BadFrame { reason, .. } => f.write_str(reason),
        }
    }
}

impl std::error::Error for DecodeError {}

/// The envelope keys, read without touching the body. `schema` is kept as written; `id` and
/// `t` are read only as far as the envelope needs ([`Field`]).
#[derive(Deserialize)]
struct Head<'a> {
    #[serde(borrow)]
    schema: Option<&'a RawValue>,
    id: Option<Field>,
    t: Option<Field>,
}

/// An envelope key's value: a string, or anything else, skipped without being built. So a value
/// nested deeper than a JSON reader's recursion limit under `t` or `id` still leaves the caller's
/// id recoverable, as an unknown key nested that deep does.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Field {
    Str(String),
    Other,
}

impl<'de> Deserialize<'de> for Field {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Field, D::Error> {
        use serde::de::{IgnoredAny, MapAccess, SeqAccess, Visitor};
        struct FieldVisitor;
        impl<'de> Visitor<'de> for FieldVisitor {
            type Value = Field;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("any JSON value")
            }
            fn visit_str<E>(self, v: &str) -> Result<Field, E> {
                Ok(Field::Str(v.to_owned()))
            }
            fn visit_string<E>(self, v: String) -> Result<Field, E> {
                Ok(Field::Str(v))
            }
            fn visit_i64<E>(self, _: i64) -> Result<Field, E> {
                Ok(Field::Other)
            }
            fn visit_u64<E>(self, _: u64) -> Result<Field, E> {
                Ok(Field::Other)
            }
            fn visit_f64<E>(self, _: f64) -> Result<Field, E> {
                Ok(Field::Other)
            }
            fn visit_bool<E>(self, _: bool) -> Result<Field, E> {
                Ok(Field::Other)
            }
            fn visit_unit<E>(self) -> Result<Field, E> {
                Ok(Field::Other)
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Field, A::Error> {
                while seq.next_element::<IgnoredAny>()?.is_some() {}
                Ok(Field::Other)
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Field, A::Error> {
                while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
                Ok(Field::Other)
            }
        }
        deserializer.deserialize_any(FieldVisitor)
    }
}

/// The text of a JSON integer (`-?(0|[1-9][0-9]*)`: no fraction, no exponent), of any size.
fn integer(raw: &RawValue) -> Option<&str> {
    let text = raw.get();
    let digits = text.strip_prefix('-').unwrap_or(text);
    let whole = !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit());
    whole.then_some(text)
}

/// Decodes one line (with or without its `\n`) of the direction `F`.
pub fn decode_line<F: Frames>(line: &str) -> Result<Envelope<F>, DecodeError> {
    let line = line.strip_suffix('\n').unwrap_or(line);
    let unaddressed = |reason: String| DecodeError::Unaddressed { reason };
    if !line.trim_start().starts_with('{') {
        return Err(unaddressed("the line is not a JSON object".into()));
    }
    let head: Head<'_> = serde_json::from_str(line)
        .map_err(|err| unaddressed(format!("the line is not valid JSON: {err}")))?;
    let id = match head.id {
        Some(Field::Str(id)) => Some(id),
        _ => None,
    };
    // The schema is recognised before anything else, so a newer client always learns to downgrade.
    let schema = match head.schema.and_then(integer) {
        Some(schema) if schema == SCHEMA_VERSION.to_string() => SCHEMA_VERSION,
        Some(schema) => {
            return Err(DecodeError::UnsupportedSchema {
                id,
                schema: schema.to_owned(),
            });
        }
        None => {
            let reason = "the envelope has no integer `schema`".to_owned();
            return Err(match id {
                Some(id) => DecodeError::BadFrame { id, reason },
                None => unaddressed(reason),
            });
        }
    };
    let Some(id) = id else {
        return Err(unaddressed("the envelope has no string `id`".into()));
    };
    let bad = |reason: String| DecodeError::BadFrame {
        id: id.clone(),
        reason,
    };
    let t = match head.t {
        Some(Field::Str(t)) => t,
        _ => return Err(bad("the envelope has no string `t`".into())),
    };
    if !F::NAMES.contains(&t.as_str()) {
        return Err(bad(format!("unknown frame `{t}`")));
    }
    let body =
        F::decode_body(&t, line).map_err(|err| bad(format!("malformed `{t}` frame: {err}")))?;
    Ok(Envelope { schema, id, body })
}

/// Reads the `schema` of a line without parsing anything else, for tools that sort lines by
/// version before decoding them.
pub fn peek_schema(line: &str) -> Option<i64> {
    serde_json::from_str::<Head<'_>>(line)
        .ok()?
        .schema?
        .get()
        .parse()
        .ok()
}
