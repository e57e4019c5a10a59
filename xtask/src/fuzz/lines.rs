//! The lines the fuzzer feeds `serve`, and what each must be answered with. Grammar-aware: most
//! lines start from a valid request of every kind and are mutated (a wrong type at any path, a
//! key removed or added, a duplicated key, huge and negative numbers, deep nesting, another `t`,
//! another `schema`, truncation, a stray byte); the rest are random bytes, invalid UTF-8,
//! over-long lines, empty and blank lines, and plain valid requests interleaved so their answers
//! can be checked. A valid `subscribe` is never generated: its stream would add frames no line
//! asked for.

use serde_json::{Map, Value, json};

use super::rng::Rng;

/// The longest line a host accepts (the protocol's line cap).
const LINE_CAP: usize = 64 * 1024;

/// What one line must be answered with.
#[derive(Debug, Clone)]
pub struct Expect {
    /// The ids the answer may carry: the line's string id, or `"0"` when none is recoverable
    /// (both when the line repeats its `id` key, which a JSON reader may read either way).
    pub ids: Vec<String>,
    /// The frame names the answer may have.
    pub frames: &'static [&'static str],
}

/// One generated line.
#[derive(Debug, Clone)]
pub struct Case {
    /// The bytes, without the newline.
    pub line: Vec<u8>,
    /// What kind of line it is, for the report.
    pub kind: &'static str,
    /// Its answer.
    pub expect: Expect,
}

/// Frames any line may be answered with: every response kind the wire has (`schema`'s one
/// table of them) but a streamed `edge`.
fn any_answer() -> &'static [&'static str] {
    static ANY: std::sync::OnceLock<Vec<&'static str>> = std::sync::OnceLock::new();
    ANY.get_or_init(|| {
        <schema::Response as schema::Frames>::NAMES
            .iter()
            .copied()
            .filter(|name| *name != "edge")
            .collect()
    })
}

/// What the generator knows of the fleet.
#[derive(Debug, Clone)]
pub struct Fleet {
    /// Agent pane ids.
    pub panes: Vec<String>,
}

/// The generator.
#[derive(Debug)]
pub struct Generator {
    rng: Rng,
    fleet: Fleet,
    next_id: u64,
}

impl Generator {
    pub fn new(seed: u64, fleet: Fleet) -> Generator {
        Generator {
            rng: Rng::new(seed),
            fleet,
            next_id: 0,
        }
    }

    fn id(&mut self) -> String {
        self.next_id += 1;
        format!("f{}", self.next_id)
    }

    /// The next line.
    pub fn next_case(&mut self) -> Case {
        match self.rng.below(100) {
            0..=4 => self.valid(),
            5..=69 => self.mutated(),
            70..=79 => self.garbage(),
            80..=85 => self.not_utf8(),
            86..=88 => self.over_long(),
            89..=93 => self.truncated(),
            _ => self.blank(),
        }
    }

    /// A valid request, and the frames its answer may be.
    fn request(&mut self) -> (Value, &'static [&'static str]) {
        let id = self.id();
        let pane = if self.rng.chance(80) {
            self.rng.pick(&self.fleet.panes).clone()
        } else {
            "%404".to_owned()
        };
        match self.rng.below(8) {
            0 => {
                let mut selector = Map::new();
                for key in ["session", "repo", "branch", "agent"] {
                    if self.rng.chance(30) {
                        selector.insert(key.into(), json!(self.word()));
                    }
                }
                if self.rng.chance(30) {
                    selector.insert("state".into(), json!(["idle", "blocked", "done", "zzz"]));
                }
                (
                    json!({"schema":1,"id":id,"t":"snapshot","selector":selector}),
                    &["snapshot"],
                )
            }
            1 => (
                json!({"schema":1,"id":id,"t":"card","pane":pane}),
                &["card", "error"],
            ),
            2 => {
                let last = self.rng.below(1200);
                (
                    json!({"schema":1,"id":id,"t":"window","pane":pane,"last":last,
                           "budget":{"header_bytes":self.rng.below(300),"frame_bytes":self.rng.below(40_000)}}),
                    &["window", "error"],
                )
            }
            3 => (
                json!({"schema":1,"id":id,"t":"event","pane":pane,"cursor":self.word()}),
                &["error"],
            ),
            4 => (
                json!({"schema":1,"id":id,"t":"receipts","slot":self.word(),"since_ms":self.rng.next_u64() >> 20}),
                &["receipts"],
            ),
            5 => {
                let action = *self.rng.pick(&[
                    "approve",
                    "deny",
                    "steer",
                    "interrupt",
                    "frobnicate",
                    "question_reply",
                ]);
                let mut dispatch = json!({"schema":1,"id":id,"t":"dispatch","slot":self.word(),
                    "host":"","pane":pane,"action":action,
                    "binder":{"expect_episode_ms":self.rng.below(3) as u64}});
                if self.rng.chance(50) {
                    dispatch["text"] = json!(self.word());
                }
                (dispatch, &["receipt", "error"])
            }
            6 => (
                json!({"schema":1,"id":id,"t":"hello","app":"fuzz","app_version":"1","device":"x"}),
                &["error"],
            ),
            _ => (json!({"schema":1,"id":id,"t":"snapshot"}), &["snapshot"]),
        }
    }

    fn valid(&mut self) -> Case {
        let (request, frames) = self.request();
        let id = request["id"].as_str().unwrap_or_default().to_owned();
        Case {
            line: request.to_string().into_bytes(),
            kind: "valid",
            expect: Expect {
                ids: vec![id],
                frames,
            },
        }
    }

    /// A short random word (sometimes empty, sometimes not ASCII).
    fn word(&mut self) -> String {
        let words = [
            "", "a", "%0", "work", "main", "claude", "ü", "日本", "slot", "\u{0}", "x y",
        ];
        let mut word = (*self.rng.pick(&words)).to_owned();
        if self.rng.chance(20) {
            word.push_str(&self.rng.next_u64().to_string());
        }
        word
    }

    /// A value of a random type, sometimes extreme.
    fn value(&mut self, depth: usize) -> Value {
        match self.rng.below(12) {
            0 => Value::Null,
            1 => json!(self.rng.chance(50)),
            2 => json!(u64::MAX),
            3 => json!(i64::MIN),
            4 => json!(1.5e300),
            5 => json!(-0.0),
            6 => json!(self.word()),
            7 => json!("x".repeat(self.rng.below(3000))),
            8 if depth < 3 => Value::Array(
                (0..self.rng.below(4))
                    .map(|_| self.value(depth + 1))
                    .collect(),
            ),
            9 if depth < 3 => {
                let mut object = Map::new();
                for _ in 0..self.rng.below(4) {
                    let key = self.word();
                    let value = self.value(depth + 1);
                    object.insert(key, value);
                }
                Value::Object(object)
            }
            10 => {
                let mut nested = json!(1);
                for _ in 0..self.rng.below(300) {
                    nested = json!([nested]);
                }
                nested
            }
            _ => json!(self.rng.next_u64() as i64),
        }
    }

    /// A valid request with one structural mutation.
    fn mutated(&mut self) -> Case {
        let (mut request, _) = self.request();
        match self.rng.below(8) {
            0 | 1 => {
                let value = self.value(0);
                replace_random(&mut self.rng, &mut request, value);
            }
            2 => {
                remove_random(&mut self.rng, &mut request);
            }
            3 => {
                let key = self.word();
                let value = self.value(0);
                if let Some(object) = request.as_object_mut() {
                    object.insert(format!("zz_{key}"), value);
                }
            }
            4 => {
                let t = *self.rng.pick(&[
                    "",
                    "Snapshot",
                    "frobnicate",
                    "edge",
                    "ack",
                    "receipt",
                    "hello",
                    "card",
                ]);
                request["t"] = json!(t);
            }
            5 => {
                let schema = self
                    .rng
                    .pick(&[
                        json!(0),
                        json!(2),
                        json!(-1),
                        json!("1"),
                        json!(1.0),
                        json!(u64::MAX),
                        json!(null),
                        json!([1]),
                    ])
                    .clone();
                request["schema"] = schema;
            }
            6 => {
                request["id"] = self.value(0);
            }
            _ => {
                // Duplicate keys, which serde_json's own Value cannot hold: written by hand.
                let text = request.to_string();
                let dup = format!("{{\"id\":\"dup{}\",{}", self.rng.below(9), &text[1..]);
                return self.judge_bytes(dup.into_bytes(), "duplicate-key");
            }
        }
        self.judge_bytes(request.to_string().into_bytes(), "mutated")
    }

    /// Random bytes, no newline.
    fn garbage(&mut self) -> Case {
        let len = self.rng.below(200);
        let line: Vec<u8> = (0..len)
            .map(|_| {
                loop {
                    let b = (self.rng.next_u64() & 0xff) as u8;
                    if b != b'\n' {
                        break b;
                    }
                }
            })
            .collect();
        self.judge_bytes(line, "garbage")
    }

    /// A request with an invalid UTF-8 sequence inside it.
    fn not_utf8(&mut self) -> Case {
        let (request, _) = self.request();
        let mut line = request.to_string().into_bytes();
        let bad: &[&[u8]] = &[
            b"\xff",
            b"\xc0\xaf",
            b"\xed\xa0\x80",
            b"\x80",
            b"\xf8\x88\x80\x80\x80",
            b"\xe2\x82",
        ];
        let at = self.rng.below(line.len() + 1);
        let insert = *self.rng.pick(bad);
        line.splice(at..at, insert.iter().copied());
        self.judge_bytes(line, "not-utf8")
    }

    /// A line over the cap: a request with a huge string, or plain filler.
    fn over_long(&mut self) -> Case {
        let size = LINE_CAP + 1 + self.rng.below(40_000);
        let line = if self.rng.chance(50) {
            let (mut request, _) = self.request();
            request["pad"] = json!("p".repeat(size));
            request.to_string().into_bytes()
        } else {
            vec![b'{'; size]
        };
        self.judge_bytes(line, "over-long")
    }

    /// A prefix of a valid request.
    fn truncated(&mut self) -> Case {
        let (request, _) = self.request();
        let text = request.to_string();
        let cut = self.rng.below(text.len());
        self.judge_bytes(text.as_bytes()[..cut].to_vec(), "truncated")
    }

    fn blank(&mut self) -> Case {
        let line = self.rng.pick(&[&b""[..], b" ", b"\t\t", b"\r"]).to_vec();
        self.judge_bytes(line, "blank")
    }

    /// What any line must be answered with, worked out from its bytes by the protocol's rules
    /// ("Framing": the caller's id when one is recoverable, else `"0"`).
    fn judge_bytes(&self, line: Vec<u8>, kind: &'static str) -> Case {
        let ids = expected_ids(&line);
        Case {
            line,
            kind,
            expect: Expect {
                ids,
                frames: any_answer(),
            },
        }
    }
}

/// The ids an answer to `line` may carry.
pub fn expected_ids(line: &[u8]) -> Vec<String> {
    let unaddressed = vec!["0".to_owned()];
    if line.len() > LINE_CAP {
        return unaddressed;
    }
    let Ok(text) = std::str::from_utf8(line) else {
        return unaddressed;
    };
    /// The one key the answer's id depends on; every other key is skipped unread, however deep
    /// it nests (as a reader that ignores unknown fields does).
    #[derive(serde::Deserialize)]
    struct Head {
        id: Option<Value>,
    }
    if !text.trim_start().starts_with('{') {
        return unaddressed;
    }
    let id = match serde_json::from_str::<Head>(text) {
        Ok(Head {
            id: Some(Value::String(id)),
        }) => id,
        // A repeated `id` key fails a strict reader; a lenient one keeps the last.
        Err(_) if text.matches("\"id\"").count() > 1 => {
            return match last_id(text) {
                Some(id) => vec![id, "0".to_owned()],
                None => unaddressed,
            };
        }
        _ => return unaddressed,
    };
    let id = id.as_str();
    // A line that names `id` twice may be read either way (the last one, or not at all).
    if text.matches("\"id\"").count() > 1 {
        return vec![id.to_owned(), "0".to_owned()];
    }
    vec![id.to_owned()]
}

/// The value of the last `id` key of an object, read leniently.
fn last_id(text: &str) -> Option<String> {
    match serde_json::from_str::<Value>(text).ok()?.get("id")? {
        Value::String(id) => Some(id.clone()),
        _ => None,
    }
}

/// Every path to a value inside `value`.
fn paths(value: &Value, at: &mut Vec<Vec<String>>, path: Vec<String>) {
    at.push(path.clone());
    match value {
        Value::Object(object) => {
            for (key, child) in object {
                let mut next = path.clone();
                next.push(key.clone());
                paths(child, at, next);
            }
        }
        Value::Array(items) => {
            for (i, child) in items.iter().enumerate() {
                let mut next = path.clone();
                next.push(i.to_string());
                paths(child, at, next);
            }
        }
        _ => {}
    }
}

fn node<'a>(value: &'a mut Value, path: &[String]) -> Option<&'a mut Value> {
    let mut here = value;
    for step in path {
        here = match here {
            Value::Object(object) => object.get_mut(step)?,
            Value::Array(items) => items.get_mut(step.parse::<usize>().ok()?)?,
            _ => return None,
        };
    }
    Some(here)
}

fn replace_random(rng: &mut Rng, request: &mut Value, with: Value) {
    let mut all = Vec::new();
    paths(request, &mut all, Vec::new());
    let path = rng.pick(&all[1..]).clone();
    if let Some(slot) = node(request, &path) {
        *slot = with;
    }
}

fn remove_random(rng: &mut Rng, request: &mut Value) {
    let mut all = Vec::new();
    paths(request, &mut all, Vec::new());
    let path = rng.pick(&all[1..]).clone();
    let (last, parent) = path.split_last().expect("not the root");
    match node(request, parent) {
        Some(Value::Object(object)) => {
            object.remove(last);
        }
        Some(Value::Array(items)) => {
            if let Ok(i) = last.parse::<usize>()
                && i < items.len()
            {
                items.remove(i);
            }
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_expected_id_follows_the_framing_rules() {
        assert_eq!(expected_ids(br#"{"schema":1,"id":"a","t":"nope"}"#), ["a"]);
        assert_eq!(expected_ids(br#"{"schema":9,"id":"b"}"#), ["b"]);
        assert_eq!(expected_ids(br#"{"schema":1,"id":7}"#), ["0"]);
        assert_eq!(expected_ids(b"not json"), ["0"]);
        assert_eq!(expected_ids(b"[1]"), ["0"]);
        assert_eq!(expected_ids(b"\xff{}"), ["0"]);
        assert_eq!(
            expected_ids(br#"{"id":"x","schema":1,"id":"y"}"#),
            ["y", "0"]
        );
        assert_eq!(expected_ids(&vec![b' '; LINE_CAP + 1]), ["0"]);
    }

    #[test]
    fn a_seed_makes_the_same_lines_and_no_line_holds_a_newline() {
        let fleet = Fleet {
            panes: vec!["%0".into(), "%1".into()],
        };
        let mut a = Generator::new(3, fleet.clone());
        let mut b = Generator::new(3, fleet);
        for _ in 0..2000 {
            let (x, y) = (a.next_case(), b.next_case());
            assert_eq!(x.line, y.line);
            assert!(
                !x.line.contains(&b'\n'),
                "{}",
                String::from_utf8_lossy(&x.line)
            );
            assert!(!String::from_utf8_lossy(&x.line).contains("\"subscribe\""));
        }
    }
}
