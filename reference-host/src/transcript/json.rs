//! A bounded JSON reader for transcript records.
//!
//! A transcript record can be megabytes (a tool result holding a whole file), and the host must
//! page a 1 GiB transcript in a few MiB of memory. `serde_json` materialises every string whole,
//! so records are read here instead: a pull parser over any [`Read`] that keeps at most
//! [`Limits::string`] bytes of each string (cut on a UTF-8 boundary) and [`Limits::total`] bytes
//! of strings per record, while still knowing each string's full length and each container's
//! byte span. What the reader keeps is enough to classify the record, write capped headers, and
//! measure the content (`bytes` fields count the full lengths, never the kept prefix).

use std::io::Read;

/// How much of one record is kept in memory.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Bytes kept of any one string.
    pub string: usize,
    /// Bytes kept of all strings of the record together; later strings keep less.
    pub total: usize,
    /// Deepest nesting accepted; deeper records are refused, never a stack overflow.
    pub depth: usize,
}

/// A string of a record: the prefix that was kept and the full decoded length in bytes.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Text {
    /// The kept prefix, cut on a UTF-8 boundary.
    pub text: String,
    /// The length in bytes of the whole decoded string.
    pub len: u64,
    /// For a cut string, its last [`TAIL`] bytes or fewer (from a character boundary): where a
    /// store puts what it says last about a long output (Codex's exit code after the output).
    pub tail: Option<String>,
}

/// Bytes kept of the end of a cut string.
pub const TAIL: usize = 128;

impl Text {
    /// True when only a prefix was kept.
    pub fn is_cut(&self) -> bool {
        (self.text.len() as u64) < self.len
    }
}

/// A parsed JSON value with capped strings.
#[derive(Debug, Clone, PartialEq)]
pub enum Node {
    Null,
    Bool(bool),
    /// The number as written.
    Number(String),
    Str(Text),
    /// Elements, and the bytes the array spanned in the record.
    Array(Vec<Node>, u64),
    /// Members in record order (a repeated key keeps every member; [`Node::get`] takes the last),
    /// and the bytes the object spanned in the record.
    Object(Vec<(String, Node)>, u64),
}

/// Why a record could not be read as JSON.
#[derive(Debug)]
pub enum ParseError {
    /// Not JSON (or not one value): what was wrong and the byte offset in the record.
    Syntax { what: &'static str, at: u64 },
    /// Nested deeper than [`Limits::depth`].
    TooDeep,
    /// Reading the record failed.
    Io(std::io::Error),
}

impl std::fmt::Display for ParseError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ParseError::Syntax { what, at } => write!(f, "{what} at byte {at}"),
            ParseError::TooDeep => f.write_str("nested too deeply"),
            ParseError::Io(err) => write!(f, "reading the record: {err}"),
        }
    }
}

impl std::error::Error for ParseError {}

/// Longest number accepted, in characters.
const NUMBER_CAP: usize = 64;
/// Longest object key kept, in bytes.
const KEY_CAP: usize = 256;

/// Parses one JSON value from `input`, which must hold nothing else but whitespace.
pub fn parse<R: Read>(input: R, limits: Limits) -> Result<Node, ParseError> {
    let mut parser = Parser::new(input, limits);
    let node = parser.value(0)?;
    parser.skip_whitespace()?;
    match parser.peek()? {
        None => Ok(node),
        Some(_) => Err(parser.syntax("trailing data after the value")),
    }
}

/// Parses a record held in memory.
pub fn parse_slice(bytes: &[u8], limits: Limits) -> Result<Node, ParseError> {
    parse(bytes, limits)
}

/// The decoded start of a JSON string, from the text after its opening quote, which may be cut
/// before the string ends (a kept prefix): up to `cap` bytes, to the closing quote, or to where
/// the text (or an escape cut with it) ends.
pub fn string_start(after_quote: &[u8], cap: usize) -> String {
    let limits = Limits {
        string: cap,
        total: cap,
        depth: 1,
    };
    let mut parser = Parser::new(after_quote, limits);
    parser
        .string_to(cap, AtEnd::Stop)
        .map(|text| text.text)
        .unwrap_or_default()
}

/// What a string that runs to the end of the input is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum AtEnd {
    /// A syntax error: a record's strings are whole.
    Error,
    /// The string so far: a prefix cut from a longer text.
    Stop,
}

struct Parser<R> {
    input: R,
    buf: Box<[u8]>,
    pos: usize,
    end: usize,
    /// Bytes of the input before `buf[0]`.
    consumed: u64,
    limits: Limits,
    /// String bytes kept so far.
    kept: usize,
}

impl<R: Read> Parser<R> {
    fn new(input: R, limits: Limits) -> Parser<R> {
        Parser {
            input,
            buf: vec![0; 16 * 1024].into_boxed_slice(),
            pos: 0,
            end: 0,
            consumed: 0,
            limits,
            kept: 0,
        }
    }

    fn offset(&self) -> u64 {
        self.consumed + self.pos as u64
    }

    fn syntax(&self, what: &'static str) -> ParseError {
        ParseError::Syntax {
            what,
            at: self.offset(),
        }
    }

    /// Makes at least one byte available; false at the end of the input.
    fn fill(&mut self) -> Result<bool, ParseError> {
        if self.pos < self.end {
            return Ok(true);
        }
        self.consumed += self.end as u64;
        self.pos = 0;
        self.end = 0;
        loop {
            match self.input.read(&mut self.buf) {
                Ok(0) => return Ok(false),
                Ok(n) => {
                    self.end = n;
                    return Ok(true);
                }
                Err(err) if err.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(err) => return Err(ParseError::Io(err)),
            }
        }
    }

    fn peek(&mut self) -> Result<Option<u8>, ParseError> {
        Ok(if self.fill()? {
            Some(self.buf[self.pos])
        } else {
            None
        })
    }

    fn next(&mut self) -> Result<u8, ParseError> {
        match self.peek()? {
            Some(b) => {
                self.pos += 1;
                Ok(b)
            }
            None => Err(self.syntax("unexpected end of the record")),
        }
    }

    fn skip_whitespace(&mut self) -> Result<(), ParseError> {
        while let Some(b) = self.peek()? {
            if matches!(b, b' ' | b'\t' | b'\n' | b'\r') {
                self.pos += 1;
            } else {
                break;
            }
        }
        Ok(())
    }

    fn expect_word(&mut self, word: &'static [u8]) -> Result<(), ParseError> {
        for expected in word {
            if self.next()? != *expected {
                return Err(self.syntax("invalid literal"));
            }
        }
        Ok(())
    }

    fn value(&mut self, depth: usize) -> Result<Node, ParseError> {
        if depth > self.limits.depth {
            return Err(ParseError::TooDeep);
        }
        self.skip_whitespace()?;
        let start = self.offset();
        match self.peek()? {
            None => Err(self.syntax("expected a value")),
            Some(b'{') => {
                self.pos += 1;
                let members = self.members(depth)?;
                Ok(Node::Object(members, self.offset() - start))
            }
            Some(b'[') => {
                self.pos += 1;
                let elements = self.elements(depth)?;
                Ok(Node::Array(elements, self.offset() - start))
            }
            Some(b'"') => {
                self.pos += 1;
                let cap = self
                    .limits
                    .string
                    .min(self.limits.total.saturating_sub(self.kept));
                let text = self.string(cap)?;
                self.kept += text.text.len();
                Ok(Node::Str(text))
            }
            Some(b't') => self.expect_word(b"true").map(|()| Node::Bool(true)),
            Some(b'f') => self.expect_word(b"false").map(|()| Node::Bool(false)),
            Some(b'n') => self.expect_word(b"null").map(|()| Node::Null),
            Some(b'-' | b'0'..=b'9') => self.number(),
            Some(_) => Err(self.syntax("unexpected character")),
        }
    }

    fn members(&mut self, depth: usize) -> Result<Vec<(String, Node)>, ParseError> {
        let mut members = Vec::new();
        self.skip_whitespace()?;
        if self.peek()? == Some(b'}') {
            self.pos += 1;
            return Ok(members);
        }
        loop {
            self.skip_whitespace()?;
            if self.next()? != b'"' {
                return Err(self.syntax("expected a key"));
            }
            let key = self.string(KEY_CAP)?.text;
            self.skip_whitespace()?;
            if self.next()? != b':' {
                return Err(self.syntax("expected `:`"));
            }
            let value = self.value(depth + 1)?;
            members.push((key, value));
            self.skip_whitespace()?;
            match self.next()? {
                b',' => continue,
                b'}' => return Ok(members),
                _ => return Err(self.syntax("expected `,` or `}`")),
            }
        }
    }

    fn elements(&mut self, depth: usize) -> Result<Vec<Node>, ParseError> {
        let mut elements = Vec::new();
        self.skip_whitespace()?;
        if self.peek()? == Some(b']') {
            self.pos += 1;
            return Ok(elements);
        }
        loop {
            elements.push(self.value(depth + 1)?);
            self.skip_whitespace()?;
            match self.next()? {
                b',' => continue,
                b']' => return Ok(elements),
                _ => return Err(self.syntax("expected `,` or `]`")),
            }
        }
    }

    fn number(&mut self) -> Result<Node, ParseError> {
        let mut text = String::new();
        while let Some(b) = self.peek()? {
            if matches!(b, b'-' | b'+' | b'.' | b'e' | b'E' | b'0'..=b'9') {
                if text.len() == NUMBER_CAP {
                    return Err(self.syntax("number too long"));
                }
                text.push(char::from(b));
                self.pos += 1;
            } else {
                break;
            }
        }
        Ok(Node::Number(text))
    }

    /// Reads a string after its opening quote, keeping at most `cap` bytes of it.
    fn string(&mut self, cap: usize) -> Result<Text, ParseError> {
        self.string_to(cap, AtEnd::Error)
    }

    /// [`Parser::string`], with what the end of the input inside the string is.
    fn string_to(&mut self, cap: usize, at_end: AtEnd) -> Result<Text, ParseError> {
        let mut kept: Vec<u8> = Vec::new();
        let mut len: u64 = 0;
        // The bytes past the cap, of which only the last `TAIL` are kept.
        let mut tail: Vec<u8> = Vec::new();
        let keep = |bytes: &[u8], kept: &mut Vec<u8>, len: &mut u64, tail: &mut Vec<u8>| {
            *len += bytes.len() as u64;
            let room = cap.saturating_sub(kept.len());
            let (head, rest) = bytes.split_at(bytes.len().min(room));
            kept.extend_from_slice(head);
            if !rest.is_empty() {
                let rest = &rest[rest.len().saturating_sub(TAIL)..];
                tail.extend_from_slice(rest);
                if tail.len() > 2 * TAIL {
                    tail.drain(..tail.len() - TAIL);
                }
            }
        };
        loop {
            if !self.fill()? {
                if at_end == AtEnd::Stop {
                    break;
                }
                return Err(self.syntax("unterminated string"));
            }
            let window = &self.buf[self.pos..self.end];
            match memchr::memchr2(b'"', b'\\', window) {
                None => {
                    let run = window.len();
                    keep(window, &mut kept, &mut len, &mut tail);
                    self.pos += run;
                }
                Some(at) => {
                    let special = window[at];
                    keep(&window[..at], &mut kept, &mut len, &mut tail);
                    self.pos += at + 1;
                    if special == b'"' {
                        break;
                    }
                    let escaped = match self.escape() {
                        Ok(escaped) => escaped,
                        // An escape cut with the text that holds it ends the prefix there.
                        Err(_) if at_end == AtEnd::Stop && !self.fill()? => break,
                        Err(err) => return Err(err),
                    };
                    let mut utf8 = [0u8; 4];
                    let decoded = escaped.encode_utf8(&mut utf8);
                    keep(decoded.as_bytes(), &mut kept, &mut len, &mut tail);
                }
            }
        }
        // The kept prefix ends on a character boundary; a raw invalid byte in the record (not
        // JSON, but written by someone) becomes U+FFFD instead of failing the record.
        if (kept.len() as u64) < len {
            kept.truncate(complete_prefix(&kept));
        }
        let text = match String::from_utf8(kept) {
            Ok(text) => text,
            Err(err) => String::from_utf8_lossy(err.as_bytes()).into_owned(),
        };
        let tail = ((text.len() as u64) < len).then(|| {
            // The kept prefix may have been trimmed to a boundary: its bytes past the boundary
            // are not in `tail`, which only matters for a string shorter than the two together.
            let from = tail.len().saturating_sub(TAIL);
            let mut start = from;
            while start < tail.len() && (tail[start] & 0b1100_0000) == 0b1000_0000 {
                start += 1;
            }
            String::from_utf8_lossy(&tail[start..]).into_owned()
        });
        Ok(Text { text, len, tail })
    }

    /// Decodes one escape after its backslash.
    fn escape(&mut self) -> Result<char, ParseError> {
        Ok(match self.next()? {
            b'"' => '"',
            b'\\' => '\\',
            b'/' => '/',
            b'b' => '\u{8}',
            b'f' => '\u{c}',
            b'n' => '\n',
            b'r' => '\r',
            b't' => '\t',
            b'u' => {
                let first = self.hex4()?;
                if (0xd800..0xdc00).contains(&first) {
                    // A high surrogate must be followed by `\u` and a low one.
                    if self.peek()? == Some(b'\\') {
                        self.pos += 1;
                        if self.next()? != b'u' {
                            return Err(self.syntax("invalid escape"));
                        }
                        let second = self.hex4()?;
                        if (0xdc00..0xe000).contains(&second) {
                            let code = 0x10000 + ((first - 0xd800) << 10) + (second - 0xdc00);
                            return Ok(char::from_u32(code).unwrap_or('\u{fffd}'));
                        }
                    }
                    '\u{fffd}'
                } else {
                    char::from_u32(first).unwrap_or('\u{fffd}')
                }
            }
            _ => return Err(self.syntax("invalid escape")),
        })
    }

    fn hex4(&mut self) -> Result<u32, ParseError> {
        let mut code = 0;
        for _ in 0..4 {
            let digit = char::from(self.next()?)
                .to_digit(16)
                .ok_or_else(|| self.syntax("invalid \\u escape"))?;
            code = code * 16 + digit;
        }
        Ok(code)
    }
}

/// The largest index `<= at` that starts a UTF-8 character in `bytes` (or `bytes.len()`).
pub fn char_boundary(bytes: &[u8], at: usize) -> usize {
    if at >= bytes.len() {
        return bytes.len();
    }
    let mut at = at;
    while at > 0 && (bytes[at] & 0b1100_0000) == 0b1000_0000 {
        at -= 1;
    }
    at
}

/// The length of the longest prefix of `bytes` that does not end inside a UTF-8 sequence.
fn complete_prefix(bytes: &[u8]) -> usize {
    let mut lead = bytes.len();
    while lead > 0 && bytes.len() - lead < 4 {
        lead -= 1;
        let b = bytes[lead];
        if b & 0b1100_0000 != 0b1000_0000 {
            let width = match b {
                0x00..=0x7f => 1,
                0xc0..=0xdf => 2,
                0xe0..=0xef => 3,
                0xf0..=0xf7 => 4,
                _ => 1,
            };
            return if lead + width <= bytes.len() {
                bytes.len()
            } else {
                lead
            };
        }
    }
    bytes.len()
}

/// `text` cut to at most `cap` bytes on a character boundary.
pub fn cut(text: &str, cap: usize) -> &str {
    &text[..char_boundary(text.as_bytes(), cap)]
}

impl Node {
    /// The member `key` of an object (the last one when the key repeats).
    pub fn get(&self, key: &str) -> Option<&Node> {
        match self {
            Node::Object(members, _) => members.iter().rev().find(|(k, _)| k == key).map(|m| &m.1),
            _ => None,
        }
    }

    /// The kept text of a string.
    pub fn as_str(&self) -> Option<&str> {
        match self {
            Node::Str(text) => Some(&text.text),
            _ => None,
        }
    }

    /// A string with its full length.
    pub fn as_text(&self) -> Option<&Text> {
        match self {
            Node::Str(text) => Some(text),
            _ => None,
        }
    }

    /// A non-negative integer.
    pub fn as_u64(&self) -> Option<u64> {
        match self {
            Node::Number(n) => n.parse().ok(),
            _ => None,
        }
    }

    /// A number as a float.
    pub fn as_f64(&self) -> Option<f64> {
        match self {
            Node::Number(n) => n.parse().ok(),
            _ => None,
        }
    }

    /// True for `true`.
    pub fn is_true(&self) -> bool {
        matches!(self, Node::Bool(true))
    }

    /// The elements of an array.
    pub fn items(&self) -> &[Node] {
        match self {
            Node::Array(items, _) => items,
            _ => &[],
        }
    }

    /// The members of an object.
    pub fn members(&self) -> &[(String, Node)] {
        match self {
            Node::Object(members, _) => members,
            _ => &[],
        }
    }

    /// How many bytes the value takes: a string's full decoded length, a container's span in
    /// the record, a scalar's written length.
    pub fn size(&self) -> u64 {
        match self {
            Node::Null => 4,
            Node::Bool(true) => 4,
            Node::Bool(false) => 5,
            Node::Number(n) => n.len() as u64,
            Node::Str(text) => text.len,
            Node::Array(_, span) | Node::Object(_, span) => *span,
        }
    }

    /// The value as `serde_json` sees it, with the kept prefixes as strings and object members
    /// in record order.
    pub fn to_value(&self) -> serde_json::Value {
        use serde_json::Value;
        match self {
            Node::Null => Value::Null,
            Node::Bool(b) => Value::Bool(*b),
            Node::Number(n) => n
                .parse::<serde_json::Number>()
                .map_or(Value::Null, Value::Number),
            Node::Str(text) => Value::String(text.text.clone()),
            Node::Array(items, _) => Value::Array(items.iter().map(Node::to_value).collect()),
            Node::Object(members, _) => Value::Object(
                members
                    .iter()
                    .map(|(k, v)| (k.clone(), v.to_value()))
                    .collect(),
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const WIDE: Limits = Limits {
        string: 1 << 20,
        total: 1 << 22,
        depth: 64,
    };

    fn parse_str(text: &str, limits: Limits) -> Result<Node, ParseError> {
        parse_slice(text.as_bytes(), limits)
    }

    #[test]
    fn values_of_every_type_parse_with_their_sizes() {
        let text = r#" {"a": [1, -2.5e3, true, false, null], "b": "x\ny", "c": {}} "#;
        let node = parse_str(text, WIDE).unwrap();
        assert_eq!(node.get("a").unwrap().items().len(), 5);
        assert_eq!(node.get("a").unwrap().items()[1].as_f64(), Some(-2500.0));
        assert_eq!(node.get("b").unwrap().as_str(), Some("x\ny"));
        assert_eq!(node.get("b").unwrap().size(), 3, "decoded length");
        assert_eq!(node.size(), text.trim().len() as u64, "an object's span");
        assert_eq!(
            node.to_value(),
            serde_json::json!({"a":[1,-2500.0,true,false,null],"b":"x\ny","c":{}})
        );
    }

    /// A string's start decodes to its closing quote, to the end of a cut text, or to an escape
    /// cut with it, and no further than its cap.
    #[test]
    fn a_strings_start_decodes_from_a_cut_text() {
        assert_eq!(string_start(br#"a\nb" tail"#, 64), "a\nb");
        assert_eq!(
            string_start(br#"say \"hi\" \ud83d\ude00 \ud83d x"#, 64),
            "say \"hi\" \u{1F600} \u{FFFD} x"
        );
        assert_eq!(string_start(br#"cut here \u00"#, 64), "cut here ");
        assert_eq!(string_start(br#"cut \"#, 64), "cut ");
        assert_eq!(string_start(b"0123456789", 4), "0123");
    }

    #[test]
    fn escapes_and_surrogate_pairs_decode() {
        let node = parse_str(r#""\u00e9\ud83d\ude00\t\"\\\/ \ud800x""#, WIDE).unwrap();
        assert_eq!(node.as_str(), Some("é😀\t\"\\/ \u{fffd}x"));
    }

    #[test]
    fn a_long_string_keeps_a_prefix_cut_on_a_character_boundary_and_its_full_length() {
        let long = format!("\"{}\"", "é".repeat(10));
        let node = parse_str(&long, Limits { string: 5, ..WIDE }).unwrap();
        let text = node.as_text().unwrap();
        assert_eq!(text.text, "éé", "5 bytes cut back to 4");
        assert_eq!(text.len, 20);
        assert!(text.is_cut());
    }

    #[test]
    fn a_cut_string_keeps_its_last_bytes_from_a_character_boundary() {
        let long = format!(
            "\"{}{}{}\"",
            "a".repeat(1000),
            "é".repeat(100),
            r#"\",\"metadata\":{\"exit_code\":1}}"#
        );
        let node = parse_str(&long, Limits { string: 10, ..WIDE }).unwrap();
        let text = node.as_text().unwrap();
        let tail = text.tail.as_deref().unwrap();
        assert!(tail.ends_with(r#""exit_code":1}}"#), "{tail}");
        assert!(
            tail.len() <= TAIL && tail.len() >= TAIL - 1,
            "{}",
            tail.len()
        );
        assert!(tail.starts_with('é'));
        let short = parse_str("\"abc\"", Limits { string: 10, ..WIDE }).unwrap();
        assert_eq!(
            short.as_text().unwrap().tail,
            None,
            "only a cut string has a tail"
        );
    }

    #[test]
    fn the_total_cap_starves_later_strings_but_keeps_their_lengths() {
        let node = parse_str(
            r#"["abcdef","ghijkl"]"#,
            Limits {
                string: 100,
                total: 8,
                depth: 8,
            },
        )
        .unwrap();
        let items = node.items();
        assert_eq!(items[0].as_str(), Some("abcdef"));
        assert_eq!(items[1].as_str(), Some("gh"));
        assert_eq!(items[1].size(), 6);
    }

    #[test]
    fn a_record_larger_than_the_buffer_streams() {
        let big = "z".repeat(100_000);
        let text = format!(r#"{{"k":"{big}","n":7}}"#);
        let node = parse_str(&text, Limits { string: 10, ..WIDE }).unwrap();
        assert_eq!(node.get("k").unwrap().size(), 100_000);
        assert_eq!(node.get("n").unwrap().as_u64(), Some(7));
    }

    #[test]
    fn broken_records_are_errors_never_panics() {
        for bad in [
            "",
            "{",
            "{\"a\"",
            "{\"a\":}",
            "[1,]",
            "\"abc",
            "tru",
            "{} x",
            "\"\\q\"",
            "\"\\u12\"",
            "{1:2}",
            "[1 2]",
        ] {
            assert!(parse_str(bad, WIDE).is_err(), "{bad:?}");
        }
        let deep = "[".repeat(100) + &"]".repeat(100);
        assert!(matches!(
            parse_str(&deep, Limits { depth: 10, ..WIDE }),
            Err(ParseError::TooDeep)
        ));
    }

    #[test]
    fn invalid_utf8_inside_a_string_is_replaced() {
        let node = parse_slice(b"\"a\xffb\"", WIDE).unwrap();
        assert_eq!(node.as_str(), Some("a\u{fffd}b"));
    }

    #[test]
    fn a_repeated_key_reads_as_its_last_value() {
        let node = parse_str(r#"{"t":"a","t":"b"}"#, WIDE).unwrap();
        assert_eq!(node.get("t").unwrap().as_str(), Some("b"));
    }
}
