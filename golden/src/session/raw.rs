//! `send_raw`'s bytes: segments of text or hex, each repeated, decoded into the bytes they make
//! once, when the line is read, so a bad segment is a load error and every player of a session
//! sends the same bytes.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::Error;

/// A run of raw bytes: `text` (UTF-8) or `hex` (any bytes, pairs of hex digits), repeated
/// `repeat` times.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RawSegment {
    /// UTF-8 text, taken literally (no directives).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
    /// Bytes as hex digit pairs, spaces allowed (`"ff fe"`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hex: Option<String>,
    /// How many times the segment is repeated; 1 when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub repeat: Option<u32>,
}

/// A `send_raw` step's segments as written, and the bytes they make. It exists only decoded:
/// reading a line decodes it, and a segment that does not decode makes the line unreadable.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(try_from = "Vec<RawSegment>", into = "Vec<RawSegment>")]
pub struct RawBytes {
    segments: Vec<RawSegment>,
    bytes: Vec<u8>,
}

impl RawBytes {
    /// The segments, as the session writes them.
    pub fn segments(&self) -> &[RawSegment] {
        &self.segments
    }

    /// The bytes to send, exactly.
    pub fn bytes(&self) -> &[u8] {
        &self.bytes
    }
}

impl TryFrom<Vec<RawSegment>> for RawBytes {
    type Error = Error;

    fn try_from(segments: Vec<RawSegment>) -> Result<RawBytes, Error> {
        if segments.is_empty() {
            return Err(Error::new("`send_raw` needs a segment"));
        }
        let mut bytes = Vec::new();
        for segment in &segments {
            bytes.extend(segment.bytes()?);
        }
        Ok(RawBytes { segments, bytes })
    }
}

impl From<RawBytes> for Vec<RawSegment> {
    fn from(raw: RawBytes) -> Vec<RawSegment> {
        raw.segments
    }
}

impl RawSegment {
    /// The bytes of this segment, repeated.
    pub fn bytes(&self) -> Result<Vec<u8>, Error> {
        let once = match (&self.text, &self.hex) {
            (Some(text), None) => text.as_bytes().to_vec(),
            (None, Some(hex)) => {
                let digits: Vec<u8> = hex.bytes().filter(|b| !b.is_ascii_whitespace()).collect();
                if !digits.len().is_multiple_of(2) {
                    return Err(Error::new(format!(
                        "hex `{hex}` has an odd number of digits"
                    )));
                }
                digits
                    .chunks(2)
                    .map(|pair| {
                        std::str::from_utf8(pair)
                            .ok()
                            .and_then(|p| u8::from_str_radix(p, 16).ok())
                            .ok_or_else(|| Error::new(format!("hex `{hex}` holds a non-hex digit")))
                    })
                    .collect::<Result<_, _>>()?
            }
            _ => {
                return Err(Error::new(
                    "a raw segment has exactly one of `text` and `hex`",
                ));
            }
        };
        let repeat = self.repeat.unwrap_or(1);
        if repeat == 0 {
            return Err(Error::new("`repeat` is at least 1"));
        }
        Ok(once.repeat(repeat as usize))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn raw_segments_concatenate_text_and_hex_with_repeats() {
        let text = RawSegment {
            text: Some("ab".into()),
            hex: None,
            repeat: Some(3),
        };
        assert_eq!(text.bytes().unwrap(), b"ababab");
        let hex = RawSegment {
            text: None,
            hex: Some("ff fe 0a".into()),
            repeat: None,
        };
        assert_eq!(hex.bytes().unwrap(), [0xff, 0xfe, 0x0a]);
        let raw = RawBytes::try_from(vec![text, hex]).unwrap();
        assert_eq!(raw.bytes(), b"ababab\xff\xfe\x0a");
    }

    #[test]
    fn a_bad_raw_segment_is_an_error() {
        let both = RawSegment {
            text: Some("a".into()),
            hex: Some("00".into()),
            repeat: None,
        };
        assert!(both.bytes().is_err());
        let odd = RawSegment {
            text: None,
            hex: Some("abc".into()),
            repeat: None,
        };
        assert!(odd.bytes().unwrap_err().message.contains("odd"));
        let zero = RawSegment {
            text: Some("a".into()),
            hex: None,
            repeat: Some(0),
        };
        assert!(zero.bytes().is_err());
        assert!(RawBytes::try_from(Vec::new()).is_err());
    }

    #[test]
    fn raw_bytes_are_read_decoded_and_written_as_their_segments() {
        let text = r#"[{"hex":"ff"},{"text":"\n","repeat":2}]"#;
        let raw: RawBytes = serde_json::from_str(text).unwrap();
        assert_eq!(raw.bytes(), b"\xff\n\n");
        assert_eq!(serde_json::to_string(&raw).unwrap(), text);
        let err = serde_json::from_str::<RawBytes>(r#"[{"hex":"f"}]"#).unwrap_err();
        assert!(err.to_string().contains("odd number of digits"), "{err}");
    }
}
