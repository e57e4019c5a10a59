//! One rule broken at a time: a catalogue of hosts that are correct but for one rule, each named
//! by the ledger requirement it breaks and declaring what it touches ([`Touch`]: a member of the
//! frames at a JSON pointer, their order, a frame added or dropped, the exit code). The self-test
//! runs each against the sessions its requirement lists and counts it caught only where it
//! proves its cause (`caught.rs`): every rule here has a session of its own that catches
//! it breaking at what it breaks, not only a session that happens to fail.
//!
//! A mutant is a [`Filter`] between the runner and a correct host (the wrapper is the running
//! program again: `corral-conformance mutant <name> <host command...>`), so the catalogue judges
//! the kit, never the host. Each breaks its rule only: it changes nothing a session of another
//! rule would need to catch it (`stale-edges` stamps an edge with a time inside the case's run,
//! which only a `now_from` window catches; `no-detail-left-null` touches only the card whose
//! detail is `unknown`).

use serde_json::{Map, Value};

/// What sits between the runner and a host: sees what the runner sends and decides what the
/// runner receives, and the exit code it sees.
pub trait Filter: Send {
    /// One whole line the runner sent the host (passed on unchanged).
    fn request(&mut self, _line: &str) {}

    /// One line the host wrote: the lines the runner gets instead (none drops it).
    fn line(&mut self, line: &str) -> Vec<String>;

    /// The host has been quiet for a tick: lines held back to pass on now.
    fn idle(&mut self) -> Vec<String> {
        Vec::new()
    }

    /// The host ended with `code`: the code the runner sees.
    fn exit(&mut self, code: i32) -> i32 {
        code
    }
}

/// A filter that rewrites each line on its own.
#[derive(Debug)]
pub struct Lines(pub fn(&str) -> String);

impl Filter for Lines {
    fn line(&mut self, line: &str) -> Vec<String> {
        vec![(self.0)(line)]
    }
}

/// A filter that passes everything on as the host wrote it: the control the self-test runs the
/// mutants' sessions through, in the same wrapper.
#[derive(Debug, Default)]
pub struct Transparent;

impl Filter for Transparent {
    fn line(&mut self, line: &str) -> Vec<String> {
        vec![line.to_owned()]
    }
}

/// The wrapper's name for [`Transparent`]: `mutant transparent <host command...>`.
pub const TRANSPARENT: &str = "transparent";

/// What a mutant changes in a host's traffic, which is where a session must catch it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Touch {
    /// The members at a JSON pointer (`*` stands for any one key or index; what lies below it
    /// counts) of the frames it rewrites, one line for one line.
    Member(&'static str),
    /// The order of frames: the lines it passes on are the host's, in another order. A frame in
    /// another's place differs from its pattern at its `id` first.
    Order,
    /// Frames it adds, copies of the host's (a line count).
    Added,
    /// Frames it drops (a line count): a step waits in vain.
    Dropped,
    /// The host's exit code.
    ExitCode,
}

impl std::fmt::Display for Touch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Touch::Member(pointer) => write!(f, "the member at {pointer}"),
            Touch::Order => f.write_str("the order of frames (at /id)"),
            Touch::Added => f.write_str("a frame added"),
            Touch::Dropped => f.write_str("a frame dropped"),
            Touch::ExitCode => f.write_str("the exit code"),
        }
    }
}

/// Whether the JSON pointer `pointer` lies at or below `pattern` (a pointer whose `*` segments
/// stand for any one key or index).
pub fn within(pointer: &str, pattern: &str) -> bool {
    let (mut got, mut want) = (pointer.split('/'), pattern.split('/'));
    loop {
        match (got.next(), want.next()) {
            (_, None) => return true,
            (None, Some(_)) => return false,
            (Some(g), Some(w)) if w == "*" || g == w => {}
            _ => return false,
        }
    }
}

/// Whether one of two JSON pointers lies at or below the other.
pub fn on_one_path(a: &str, b: &str) -> bool {
    within(a, b) || within(b, a)
}

/// One entry of the catalogue.
pub struct Mutant {
    /// The wrapper's argument: `mutant <name>`.
    pub name: &'static str,
    /// The ledger requirement it breaks; the sessions that requirement lists must catch it.
    pub rule: &'static str,
    /// What the broken host does, in a phrase.
    pub breaks: &'static str,
    /// What it changes: where a session must catch it, and all it may change.
    pub touches: Touch,
    make: fn() -> Box<dyn Filter>,
}

impl std::fmt::Debug for Mutant {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Mutant")
            .field("name", &self.name)
            .field("rule", &self.rule)
            .field("touches", &self.touches)
            .finish_non_exhaustive()
    }
}

impl Mutant {
    /// A mutant made here: the catalogue's, or a test's own.
    pub const fn new(
        name: &'static str,
        rule: &'static str,
        breaks: &'static str,
        touches: Touch,
        make: fn() -> Box<dyn Filter>,
    ) -> Mutant {
        Mutant {
            name,
            rule,
            breaks,
            touches,
            make,
        }
    }

    /// A fresh filter for one run of the host.
    pub fn filter(&self) -> Box<dyn Filter> {
        (self.make)()
    }
}

/// The mutant named `name`.
pub fn find(name: &str) -> Option<&'static Mutant> {
    CATALOGUE.iter().find(|m| m.name == name)
}

/// The filter the wrapper's `<name>` stands for: a mutant's, or [`TRANSPARENT`]'s.
pub fn filter_named(name: &str) -> Option<Box<dyn Filter>> {
    if name == TRANSPARENT {
        return Some(Box::new(Transparent));
    }
    find(name).map(Mutant::filter)
}

/// A filter that edits every frame of a kind (`t`) in place; an unchanged frame passes as the
/// host wrote it.
struct Edit {
    kind: &'static str,
    edit: fn(&mut Map<String, Value>) -> bool,
}

impl Filter for Edit {
    fn line(&mut self, line: &str) -> Vec<String> {
        vec![edit_frame(line, self.kind, self.edit)]
    }
}

/// `line` with `edit` applied when it is a frame of kind `kind` (`*`: any frame) and the edit
/// changed it.
fn edit_frame(line: &str, kind: &str, edit: fn(&mut Map<String, Value>) -> bool) -> String {
    let Ok(Value::Object(mut frame)) = serde_json::from_str::<Value>(line) else {
        return line.to_owned();
    };
    if kind != "*" && frame.get("t").and_then(Value::as_str) != Some(kind) {
        return line.to_owned();
    }
    if edit(&mut frame) {
        Value::Object(frame).to_string()
    } else {
        line.to_owned()
    }
}

/// Sets `key` to `value` when the frame has it with another value.
fn set(frame: &mut Map<String, Value>, key: &str, value: Value) -> bool {
    match frame.get_mut(key) {
        Some(old) if *old != value => {
            *old = value;
            true
        }
        _ => false,
    }
}

/// Replaces the string `from` with `to` under `key`.
fn rename(frame: &mut Map<String, Value>, key: &str, from: &str, to: &str) -> bool {
    if frame.get(key).and_then(Value::as_str) == Some(from) {
        frame.insert(key.to_owned(), Value::from(to));
        true
    } else {
        false
    }
}

/// Applies `edit` to every row of a snapshot's `agents`.
fn each_row(frame: &mut Map<String, Value>, edit: fn(&mut Map<String, Value>) -> bool) -> bool {
    each(frame, "agents", edit)
}

/// Applies `edit` to every object of the array under `key`; whether any changed.
fn each(
    frame: &mut Map<String, Value>,
    key: &str,
    edit: fn(&mut Map<String, Value>) -> bool,
) -> bool {
    let Some(Value::Array(items)) = frame.get_mut(key) else {
        return false;
    };
    let mut changed = false;
    for item in items.iter_mut().filter_map(Value::as_object_mut) {
        changed |= edit(item);
    }
    changed
}

/// The frame's `id`, when it has one.
fn id_of(line: &str) -> Option<String> {
    match serde_json::from_str::<Value>(line) {
        Ok(Value::Object(frame)) => frame.get("id").and_then(Value::as_str).map(str::to_owned),
        _ => None,
    }
}

/// Answers two pipelined requests in the other order: an answer is held back until the next
/// one (another id) arrives, which goes first; a held answer nothing follows is passed on
/// after [`HOLD_TICKS`] quiet ticks.
#[derive(Default)]
struct Swap {
    held: Option<(String, String)>,
    quiet: u32,
}

/// Quiet ticks (of the wrapper's 100 ms poll) an answer is held for a second one.
pub const HOLD_TICKS: u32 = 10;

impl Filter for Swap {
    fn line(&mut self, line: &str) -> Vec<String> {
        self.quiet = 0;
        let Some(id) = id_of(line) else {
            return vec![line.to_owned()];
        };
        match self.held.take() {
            Some((held_id, held)) if held_id != id => vec![line.to_owned(), held],
            Some((_, held)) => {
                self.held = Some((id, line.to_owned()));
                vec![held]
            }
            None => {
                self.held = Some((id, line.to_owned()));
                Vec::new()
            }
        }
    }

    fn idle(&mut self) -> Vec<String> {
        self.quiet += 1;
        if self.quiet < HOLD_TICKS {
            return Vec::new();
        }
        self.held.take().map(|(_, line)| line).into_iter().collect()
    }
}

/// Stays silent on a snapshot stream's first cycle when it admits no pane.
#[derive(Default)]
struct SilentEmptyStart {
    /// The id of an acknowledged subscription whose first snapshot has not passed yet.
    first_due: Option<String>,
}

impl Filter for SilentEmptyStart {
    fn line(&mut self, line: &str) -> Vec<String> {
        let Ok(Value::Object(frame)) = serde_json::from_str::<Value>(line) else {
            return vec![line.to_owned()];
        };
        let id = frame.get("id").and_then(Value::as_str).map(str::to_owned);
        match frame.get("t").and_then(Value::as_str) {
            Some("ack") => self.first_due = id,
            Some("snapshot") if id.is_some() && id == self.first_due => {
                self.first_due = None;
                if frame
                    .get("agents")
                    .and_then(Value::as_array)
                    .is_some_and(Vec::is_empty)
                {
                    return Vec::new();
                }
            }
            _ => {}
        }
        vec![line.to_owned()]
    }
}

/// Stamps every edge with the time its subscription was acknowledged (when the wrapper passed
/// the `ack` on): after the subscription and within the case's run, so a `$now` checked against
/// the case's start takes it, but before the change the edge reports. Only an edge judged from
/// the moment of its change (`now_from`) catches it: the rule that `at_ms` is when the cycle saw
/// the change, and nothing else.
#[derive(Default)]
struct StaleEdges {
    subscribed_ms: Option<u64>,
}

impl Filter for StaleEdges {
    fn line(&mut self, line: &str) -> Vec<String> {
        let Ok(Value::Object(mut frame)) = serde_json::from_str::<Value>(line) else {
            return vec![line.to_owned()];
        };
        let kind = frame.get("t").and_then(Value::as_str).map(str::to_owned);
        match (kind.as_deref(), self.subscribed_ms) {
            (Some("ack"), None) => {
                self.subscribed_ms = Some(stdx::now_ms());
                vec![line.to_owned()]
            }
            (Some("edge"), Some(at)) if set(&mut frame, "at_ms", Value::from(at)) => {
                vec![Value::Object(frame).to_string()]
            }
            _ => vec![line.to_owned()],
        }
    }
}

/// Reports every edge twice.
struct Twice;

impl Filter for Twice {
    fn line(&mut self, line: &str) -> Vec<String> {
        let edge = serde_json::from_str::<Value>(line)
            .ok()
            .is_some_and(|frame| frame.get("t").and_then(Value::as_str) == Some("edge"));
        if edge {
            vec![line.to_owned(), line.to_owned()]
        } else {
            vec![line.to_owned()]
        }
    }
}

/// Sends a stream's snapshot again after each one, as a host that does not suppress a
/// repeated snapshot would on its next cycle.
#[derive(Default)]
struct RepeatSnapshots {
    /// Subscription ids acknowledged: their snapshots are the stream's.
    streams: Vec<String>,
}

impl Filter for RepeatSnapshots {
    fn line(&mut self, line: &str) -> Vec<String> {
        let Ok(Value::Object(frame)) = serde_json::from_str::<Value>(line) else {
            return vec![line.to_owned()];
        };
        let id = frame.get("id").and_then(Value::as_str).unwrap_or_default();
        match frame.get("t").and_then(Value::as_str) {
            Some("ack") => self.streams.push(id.to_owned()),
            Some("snapshot") if self.streams.iter().any(|s| s == id) => {
                return vec![line.to_owned(), line.to_owned()];
            }
            _ => {}
        }
        vec![line.to_owned()]
    }
}

/// Writes the hello's claimed device into receipts instead of the connection's `--device`.
#[derive(Default)]
struct ClaimedDevice {
    claim: Option<String>,
}

impl Filter for ClaimedDevice {
    fn request(&mut self, line: &str) {
        if let Ok(Value::Object(frame)) = serde_json::from_str::<Value>(line)
            && frame.get("t").and_then(Value::as_str) == Some("hello")
        {
            self.claim = frame
                .get("device")
                .and_then(Value::as_str)
                .map(str::to_owned);
        }
    }

    fn line(&mut self, line: &str) -> Vec<String> {
        let Ok(Value::Object(mut frame)) = serde_json::from_str::<Value>(line) else {
            return vec![line.to_owned()];
        };
        let Some(claim) = self.claim.clone() else {
            return vec![line.to_owned()];
        };
        if frame.get("t").and_then(Value::as_str) == Some("receipt")
            && set(&mut frame, "device", Value::from(claim))
        {
            return vec![Value::Object(frame).to_string()];
        }
        vec![line.to_owned()]
    }
}

/// Exits 1, not 2, when its device was revoked during the session: the host's exit 2 after it
/// answered a hello and then refused a request `scope-denied` is passed on as 1.
#[derive(Default)]
struct RevokedExitOne {
    /// A hello was answered: the session existed.
    greeted: bool,
    /// A `scope-denied` error followed.
    refused: bool,
}

impl Filter for RevokedExitOne {
    fn line(&mut self, line: &str) -> Vec<String> {
        if let Ok(Value::Object(frame)) = serde_json::from_str::<Value>(line) {
            match frame.get("t").and_then(Value::as_str) {
                Some("hello") => self.greeted = true,
                Some("error") if self.greeted => {
                    self.refused |=
                        frame.get("code").and_then(Value::as_str) == Some("scope-denied");
                }
                _ => {}
            }
        }
        vec![line.to_owned()]
    }

    fn exit(&mut self, code: i32) -> i32 {
        if code == 2 && self.greeted && self.refused {
            1
        } else {
            code
        }
    }
}

/// The bytes past which `ids-truncated` cuts an id: a fixed buffer a host might keep.
pub const ID_BUFFER: usize = 128;

/// An id cut to its first [`ID_BUFFER`] bytes (on a character boundary).
fn truncated_id(id: &str) -> String {
    let mut end = ID_BUFFER.min(id.len());
    while !id.is_char_boundary(end) {
        end -= 1;
    }
    id[..end].to_owned()
}

/// An id whose UTF-8 bytes were read as Latin-1 and written back as UTF-8 (`é` becomes `Ã©`).
fn latin1_id(id: &str) -> String {
    id.bytes().map(char::from).collect()
}

/// An id pasted as the JSON text it had in the request, escapes and all (`a"b` becomes `a\"b`).
fn escaped_id(id: &str) -> String {
    let text = Value::from(id).to_string();
    text[1..text.len() - 1].to_owned()
}

/// An id that reads as a number, written back as that number (`007` becomes `7`, `1e3` `1000`);
/// any other id as it is.
fn numeric_id(id: &str) -> String {
    if let Ok(n) = id.parse::<i64>() {
        return n.to_string();
    }
    match id.parse::<f64>() {
        Ok(x) if x.is_finite() && id.bytes().any(|b| b.is_ascii_digit()) => x.to_string(),
        _ => id.to_owned(),
    }
}

/// Rewrites a frame's `id` with `rewrite` when that changes it.
fn rewrite_id(frame: &mut Map<String, Value>, rewrite: fn(&str) -> String) -> bool {
    let Some(id) = frame.get("id").and_then(Value::as_str) else {
        return false;
    };
    let rewritten = rewrite(id);
    set(frame, "id", Value::from(rewritten))
}

macro_rules! edit {
    ($kind:literal, $edit:expr) => {
        || {
            Box::new(Edit {
                kind: $kind,
                edit: $edit,
            })
        }
    };
}

/// Every mutant, one rule each.
pub const CATALOGUE: &[Mutant] = &[
    Mutant {
        name: "answers-out-of-order",
        rule: "session.answers-in-request-order",
        breaks: "answers two pipelined requests in the other order",
        touches: Touch::Order,
        make: || Box::new(Swap::default()),
    },
    Mutant {
        name: "silent-empty-first-snapshot",
        rule: "subscribe.first-snapshot-always",
        breaks: "sends nothing on a snapshot stream's first cycle when no pane matches",
        touches: Touch::Dropped,
        make: || Box::new(SilentEmptyStart::default()),
    },
    Mutant {
        name: "stale-edges",
        rule: "edge.one-transition",
        breaks: "stamps every edge with the time its subscription was acknowledged, not the \
                 time its cycle saw the change",
        touches: Touch::Member("/at_ms"),
        make: || Box::new(StaleEdges::default()),
    },
    Mutant {
        name: "edges-twice",
        rule: "edge.one-per-observed-transition",
        breaks: "reports every edge twice",
        touches: Touch::Added,
        make: || Box::new(Twice),
    },
    Mutant {
        name: "repeated-snapshots",
        rule: "subscribe.repeat-snapshot-suppressed",
        breaks: "sends a snapshot stream's snapshot again when nothing changed",
        touches: Touch::Added,
        make: || Box::new(RepeatSnapshots::default()),
    },
    Mutant {
        name: "receipt-device-claimed",
        rule: "receipt.device",
        breaks: "names the hello's claimed device in receipts, not the connection's",
        touches: Touch::Member("/device"),
        make: || Box::new(ClaimedDevice::default()),
    },
    Mutant {
        name: "empty-tool-version",
        rule: "handshake.hello-tool-version",
        breaks: "answers hello with an empty host version",
        touches: Touch::Member("/tool_version"),
        make: edit!("hello", |f| set(f, "tool_version", Value::from(""))),
    },
    Mutant {
        name: "empty-host-name",
        rule: "handshake.hello-host-name",
        breaks: "answers hello with an empty host name",
        touches: Touch::Member("/host"),
        make: edit!("hello", |f| set(f, "host", Value::from(""))),
    },
    Mutant {
        name: "every-scope",
        rule: "handshake.scopes-never-from-request",
        breaks: "grants every scope whatever the device store says",
        touches: Touch::Member("/scopes"),
        make: edit!("hello", |f| set(
            f,
            "scopes",
            serde_json::json!(["read", "act:answer", "act:always", "act:steer"])
        )),
    },
    Mutant {
        name: "slow-cadence",
        rule: "handshake.reconcile-interval",
        breaks: "states a cycle cadence other than its own",
        touches: Touch::Member("/reconcile_interval_ms"),
        make: edit!("hello", |f| set(
            f,
            "reconcile_interval_ms",
            Value::from(1000)
        )),
    },
    Mutant {
        name: "empty-error-message",
        rule: "error.body",
        breaks: "sends error frames with an empty message",
        touches: Touch::Member("/message"),
        make: edit!("error", |f| set(f, "message", Value::from(""))),
    },
    Mutant {
        name: "schema-2",
        rule: "envelope.schema-every-line",
        breaks: "states wire version 2 on every line",
        touches: Touch::Member("/schema"),
        make: edit!("*", |f| set(f, "schema", Value::from(2))),
    },
    Mutant {
        name: "stream-id-zero",
        rule: "subscribe.frames-carry-subscribe-id",
        breaks: "streams edges under id \"0\", not the subscription's",
        touches: Touch::Member("/id"),
        make: edit!("edge", |f| set(f, "id", Value::from("0"))),
    },
    Mutant {
        name: "waiting-not-blocked",
        rule: "vocab.state-names",
        breaks: "calls the blocked state `waiting`",
        touches: Touch::Member("/agents/*/state"),
        make: edit!("snapshot", |f| each_row(f, |row| rename(
            row, "state", "blocked", "waiting"
        ))),
    },
    Mutant {
        name: "episode-zero",
        rule: "row.episode-ms",
        breaks: "reports every row's episode as 0",
        touches: Touch::Member("/agents/*/episode_ms"),
        make: edit!("snapshot", |f| each_row(f, |row| set(
            row,
            "episode_ms",
            Value::from(0)
        ))),
    },
    Mutant {
        name: "never-done",
        rule: "row.done",
        breaks: "never marks an idle pane with attention done",
        touches: Touch::Member("/agents/*/done"),
        make: edit!("snapshot", |f| each_row(f, |row| set(
            row,
            "done",
            Value::from(false)
        ))),
    },
    Mutant {
        name: "locator-colons",
        rule: "row.locator",
        breaks: "writes the locator as `session:window:pane`",
        touches: Touch::Member("/agents/*/locator"),
        make: edit!("snapshot", |f| each_row(f, |row| {
            let Some(locator) = row.get("locator").and_then(Value::as_str) else {
                return false;
            };
            let colons = locator.replace('.', ":");
            set(row, "locator", Value::from(colons))
        })),
    },
    Mutant {
        name: "always-grant-offered",
        rule: "card.hook-no-always-grant",
        breaks: "offers an always-grant on a hook card",
        touches: Touch::Member("/options"),
        make: edit!("card", |f| {
            if f.get("lane").and_then(Value::as_str) != Some("hook") {
                return false;
            }
            let Some(Value::Array(options)) = f.get_mut("options") else {
                return false;
            };
            options.push(serde_json::json!({"kind": "allow-always", "name": "Always"}));
            true
        }),
    },
    Mutant {
        name: "hook-option-id-dropped",
        rule: "card.hook-options",
        breaks: "leaves the parked request id off a hook card's options",
        touches: Touch::Member("/options/*/option_id"),
        make: edit!("card", |f| {
            f.get("lane").and_then(Value::as_str) == Some("hook")
                && each(f, "options", |option| {
                    option.shift_remove("option_id").is_some()
                })
        }),
    },
    Mutant {
        name: "short-headline",
        rule: "card.headline-other",
        breaks: "heads an unknown detail's card \"Waiting\"",
        touches: Touch::Member("/headline"),
        make: edit!("card", |f| rename(
            f,
            "headline",
            "Waiting for you",
            "Waiting"
        )),
    },
    Mutant {
        name: "single-choice-only",
        rule: "card.question-record-fields",
        breaks: "calls every question single-choice",
        touches: Touch::Member("/questions/*/multiple"),
        make: edit!("card", |f| each(f, "questions", |question| set(
            question,
            "multiple",
            Value::from(false)
        ))),
    },
    Mutant {
        name: "never-cached",
        rule: "receipt.cached-flag",
        breaks: "answers a repeated slot with cached false",
        touches: Touch::Member("/cached"),
        make: edit!("receipt", |f| set(f, "cached", Value::from(false))),
    },
    Mutant {
        name: "refused-exit-zero",
        rule: "receipt.exit-code-refused",
        breaks: "gives a refusal exit code 0",
        touches: Touch::Member("/exit_code"),
        make: edit!("receipt", |f| {
            f.get("outcome").and_then(Value::as_str) == Some("refused")
                && set(f, "exit_code", Value::from(0))
        }),
    },
    Mutant {
        name: "vanished-exit-one",
        rule: "receipt.exit-code-vanished",
        breaks: "gives a vanished pane exit code 1",
        touches: Touch::Member("/exit_code"),
        make: edit!("receipt", |f| {
            f.get("outcome").and_then(Value::as_str) == Some("vanished")
                && set(f, "exit_code", Value::from(1))
        }),
    },
    Mutant {
        name: "episode-changed-as-request-gone",
        rule: "binder.episode-changed",
        breaks: "refuses a changed episode as request-gone",
        touches: Touch::Member("/reason"),
        make: edit!("receipt", |f| rename(
            f,
            "reason",
            "episode-changed",
            "request-gone"
        )),
    },
    Mutant {
        name: "too-long-as-control-bytes",
        rule: "dispatch.text-rule-order",
        breaks: "refuses a too-long text that also has control bytes for the control bytes",
        touches: Touch::Member("/reason"),
        make: edit!("receipt", |f| rename(
            f,
            "reason",
            "too-long",
            "control-bytes"
        )),
    },
    Mutant {
        name: "not-found-as-bad-request",
        rule: "session.unknown-pane-not-found",
        breaks: "answers an unknown pane bad-request",
        touches: Touch::Member("/code"),
        make: edit!("error", |f| rename(f, "code", "not-found", "bad-request")),
    },
    Mutant {
        name: "revoked-as-bad-request",
        rule: "session.revoked-on-request",
        breaks: "refuses a revoked device's request bad-request",
        touches: Touch::Member("/code"),
        make: edit!("error", |f| rename(
            f,
            "code",
            "scope-denied",
            "bad-request"
        )),
    },
    Mutant {
        name: "cursor-invalid-as-not-found",
        rule: "cursor.detect-truncated",
        breaks: "answers a cursor into a truncated file not-found",
        touches: Touch::Member("/code"),
        make: edit!("error", |f| rename(
            f,
            "code",
            "cursor-invalid",
            "not-found"
        )),
    },
    Mutant {
        name: "oldest-first",
        rule: "window.events-newest-first",
        breaks: "lists a window's events oldest first",
        touches: Touch::Member("/events"),
        make: edit!("window", |f| {
            let Some(Value::Array(events)) = f.get_mut("events") else {
                return false;
            };
            if events.len() < 2 {
                return false;
            }
            events.reverse();
            true
        }),
    },
    Mutant {
        name: "unknown-uncounted",
        rule: "window.unknown-count",
        breaks: "counts no unclassified record",
        touches: Touch::Member("/unknown"),
        make: edit!("window", |f| set(f, "unknown", Value::from(0))),
    },
    Mutant {
        name: "never-budget-truncated",
        rule: "window.budget-truncated",
        breaks: "never says a byte budget ended the page",
        touches: Touch::Member("/budget_truncated"),
        make: edit!("window", |f| set(f, "budget_truncated", Value::from(false))),
    },
    Mutant {
        name: "no-older-cursor",
        rule: "window.page-ends",
        breaks: "says every page is the transcript's head",
        touches: Touch::Member("/older"),
        make: edit!("window", |f| set(f, "older", Value::Null)),
    },
    Mutant {
        name: "vanished-as-unknown",
        rule: "edge.vanished",
        breaks: "reports a vanished pane as moving to `unknown`",
        touches: Touch::Member("/to"),
        make: edit!("edge", |f| rename(f, "to", "", "unknown")),
    },
    Mutant {
        name: "appeared-from-idle",
        rule: "edge.appeared",
        breaks: "reports an appeared pane as coming from `idle`",
        touches: Touch::Member("/from"),
        make: edit!("edge", |f| rename(f, "from", "", "idle")),
    },
    Mutant {
        name: "gate1-refusal-cached",
        rule: "receipt.gate1-refusal-shape",
        breaks: "marks a scope refusal cached",
        touches: Touch::Member("/cached"),
        make: edit!("receipt", |f| {
            f.get("reason").and_then(Value::as_str) == Some("scope-denied")
                && set(f, "cached", Value::from(true))
        }),
    },
    Mutant {
        name: "unrecoverable-id-empty",
        rule: "framing.unrecoverable-id-zero",
        breaks: "answers a line with no recoverable id under id \"\", not \"0\"",
        touches: Touch::Member("/id"),
        make: edit!("error", |f| rename(f, "id", "0", "")),
    },
    Mutant {
        name: "unsupported-schema-as-bad-request",
        rule: "handshake.hello-unsupported-schema",
        breaks: "refuses a hello of another schema bad-request",
        touches: Touch::Member("/code"),
        make: edit!("error", |f| rename(
            f,
            "code",
            "unsupported-schema",
            "bad-request"
        )),
    },
    Mutant {
        name: "no-detail-left-null",
        rule: "card.informational-no-detail",
        breaks: "leaves an informational card's missing detail null, not `unknown`",
        touches: Touch::Member("/detail"),
        make: edit!("card", |f| {
            f.get("detail").and_then(Value::as_str) == Some("unknown")
                && set(f, "detail", Value::Null)
        }),
    },
    Mutant {
        name: "absent-optionals-omitted",
        rule: "row.explicit-null",
        breaks: "omits a row's absent optionals instead of writing null",
        touches: Touch::Member("/agents/*"),
        make: edit!("snapshot", |f| each_row(f, |row| {
            let before = row.len();
            row.retain(|_, value| !value.is_null());
            row.len() != before
        })),
    },
    Mutant {
        name: "server-unnamed",
        rule: "row.server",
        breaks: "names no tmux socket in `server`",
        touches: Touch::Member("/agents/*/server"),
        make: edit!("snapshot", |f| each_row(f, |row| set(
            row,
            "server",
            Value::from("default")
        ))),
    },
    Mutant {
        name: "last-row-dropped",
        rule: "snapshot.response-agents",
        breaks: "leaves the last pane out of a snapshot",
        touches: Touch::Member("/agents"),
        make: edit!("snapshot", |f| {
            let Some(Value::Array(rows)) = f.get_mut("agents") else {
                return false;
            };
            rows.pop().is_some()
        }),
    },
    Mutant {
        name: "sent-exit-one",
        rule: "receipt.exit-code-success",
        breaks: "gives a delivered action exit code 1",
        touches: Touch::Member("/exit_code"),
        make: edit!("receipt", |f| {
            f.get("outcome").and_then(Value::as_str) == Some("sent")
                && set(f, "exit_code", Value::from(1))
        }),
    },
    Mutant {
        name: "timeout-exit-one",
        rule: "receipt.exit-code-timeout",
        breaks: "gives a timed-out API call exit code 1",
        touches: Touch::Member("/exit_code"),
        make: edit!("receipt", |f| {
            f.get("outcome").and_then(Value::as_str) == Some("timeout")
                && set(f, "exit_code", Value::from(1))
        }),
    },
    Mutant {
        name: "replied-as-sent",
        rule: "receipt.fire-replied",
        breaks: "reports a written hook verdict or an API's 2xx as `sent`",
        touches: Touch::Member("/outcome"),
        make: edit!("receipt", |f| rename(f, "outcome", "replied", "sent")),
    },
    Mutant {
        name: "api-lane-as-screen",
        rule: "card.lane-api",
        breaks: "calls the API lane `screen`",
        touches: Touch::Member("/lane"),
        make: edit!("card", |f| rename(f, "lane", "api", "screen")),
    },
    Mutant {
        name: "hook-extraction-wrapped",
        rule: "card.hook-extraction-exact",
        breaks: "reports a hook card's extraction as `wrapped`",
        touches: Touch::Member("/extraction"),
        make: edit!("card", |f| rename(f, "extraction", "exact", "wrapped")),
    },
    Mutant {
        name: "permission-called-approval",
        rule: "vocab.detail",
        breaks: "calls the permission detail `approval`",
        touches: Touch::Member("/agents/*/detail"),
        make: edit!("snapshot", |f| each_row(f, |row| rename(
            row,
            "detail",
            "permission",
            "approval"
        ))),
    },
    Mutant {
        name: "cap-as-internal",
        rule: "error.too-many-connections",
        breaks: "refuses a connection past the cap as `internal`",
        touches: Touch::Member("/code"),
        make: edit!("error", |f| rename(
            f,
            "code",
            "too-many-connections",
            "internal"
        )),
    },
    Mutant {
        name: "revoked-exit-one",
        rule: "serve.exit-2-revoked-device",
        breaks: "exits 1, not 2, when its device was revoked during the session",
        touches: Touch::ExitCode,
        make: || Box::new(RevokedExitOne::default()),
    },
    Mutant {
        name: "ids-truncated",
        rule: "framing.id-verbatim",
        breaks: "keeps ids in a 128-byte buffer: a longer id is echoed cut",
        touches: Touch::Member("/id"),
        make: edit!("*", |f| rewrite_id(f, truncated_id)),
    },
    Mutant {
        name: "ids-re-encoded",
        rule: "framing.id-verbatim",
        breaks: "reads an id's UTF-8 bytes as Latin-1 and echoes them re-encoded (`é` as `Ã©`)",
        touches: Touch::Member("/id"),
        make: edit!("*", |f| rewrite_id(f, latin1_id)),
    },
    Mutant {
        name: "ids-escaped-twice",
        rule: "framing.id-verbatim",
        breaks: "echoes an id as the JSON text it had, escapes and all (`a\"b` as `a\\\"b`)",
        touches: Touch::Member("/id"),
        make: edit!("*", |f| rewrite_id(f, escaped_id)),
    },
    Mutant {
        name: "ids-read-as-numbers",
        rule: "framing.id-verbatim",
        breaks: "reads an id that looks like a number as one (`007` is echoed `7`)",
        touches: Touch::Member("/id"),
        make: edit!("*", |f| rewrite_id(f, numeric_id)),
    },
];

#[cfg(test)]
mod tests {
    use std::path::{Path, PathBuf};

    use super::*;
    use crate::caught;
    use crate::traffic::{self, Entry};

    #[test]
    fn every_mutant_passes_a_line_that_is_not_json() {
        for mutant in CATALOGUE {
            let mut filter = mutant.filter();
            let mut out = filter.line("not json");
            for _ in 0..=HOLD_TICKS {
                out.extend(filter.idle());
            }
            assert_eq!(out, ["not json"], "{}", mutant.name);
        }
    }

    fn ledger() -> golden::Ledger {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../golden/requirements.toml");
        golden::ledger::load(&path).unwrap()
    }

    /// Where the recorded traffic of the sessions lives.
    fn recordings() -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("src/traffic")
    }

    #[test]
    fn every_rule_is_a_tested_requirement_with_sessions_of_its_own() {
        let ledger = ledger();
        let by_id = ledger.by_id();
        for mutant in CATALOGUE {
            let requirement = by_id
                .get(mutant.rule)
                .unwrap_or_else(|| panic!("{}: no requirement {}", mutant.name, mutant.rule));
            assert!(
                !requirement.cases.is_empty(),
                "{}: {} lists no session",
                mutant.name,
                mutant.rule
            );
        }
    }

    /// Replays the recorded traffic of every session a mutant's rule lists through its filter:
    /// it fires on real traffic (a host's own lines, recorded from a run of the built host), and
    /// changes only what it declares.
    #[test]
    fn every_mutant_changes_only_what_it_touches_in_its_sessions_recorded_traffic() {
        let ledger = ledger();
        let by_id = ledger.by_id();
        for mutant in CATALOGUE {
            let mut changed = 0;
            for case in &by_id[mutant.rule].cases {
                let path = recordings().join(format!("{case}.ndjson"));
                let text = std::fs::read_to_string(&path).unwrap_or_else(|err| {
                    panic!(
                        "{}: no recorded traffic for {case} ({err}): record it with `{}=\
                         conformance/src/traffic cargo xtask conformance --self-test`",
                        mutant.name,
                        traffic::RECORD_VAR
                    )
                });
                let processes = traffic::processes(&text).unwrap();
                assert!(!processes.is_empty(), "{case}: no host process recorded");
                let changes: Vec<Vec<Entry>> = processes
                    .iter()
                    .map(|process| traffic::replay(mutant.filter(), process))
                    .collect();
                changed += caught::changed(&changes);
                let beyond = caught::undeclared(mutant.touches, &changes);
                assert!(
                    beyond.is_empty(),
                    "{} in {case}: {beyond:?} (it declares {})",
                    mutant.name,
                    mutant.touches
                );
            }
            assert!(
                changed > 0,
                "{} changed no line of its sessions' recorded traffic",
                mutant.name
            );
        }
    }

    #[test]
    fn names_are_unique() {
        let mut names: Vec<_> = CATALOGUE.iter().map(|m| m.name).collect();
        names.push(TRANSPARENT);
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), CATALOGUE.len() + 1);
    }

    #[test]
    fn pipelined_answers_come_out_swapped_and_a_lone_answer_is_not_lost() {
        let mut swap = Swap::default();
        assert!(swap.line(r#"{"id":"2","t":"snapshot"}"#).is_empty());
        assert_eq!(
            swap.line(r#"{"id":"3","t":"error"}"#),
            [r#"{"id":"3","t":"error"}"#, r#"{"id":"2","t":"snapshot"}"#]
        );
        assert!(swap.line(r#"{"id":"4","t":"ack"}"#).is_empty());
        let mut late = Vec::new();
        for _ in 0..HOLD_TICKS {
            late.extend(swap.idle());
        }
        assert_eq!(late, [r#"{"id":"4","t":"ack"}"#]);
    }

    #[test]
    fn an_edit_leaves_an_untouched_line_byte_for_byte() {
        let line = r#"{"schema":1,"id":"1","t":"hello","host":"",  "x":1.50}"#;
        assert_eq!(
            edit_frame(line, "hello", |f| set(f, "host", Value::from(""))),
            line
        );
    }

    #[test]
    fn stale_edges_stamp_the_acknowledgement_time_inside_the_run() {
        let before = stdx::now_ms();
        let mut filter = find("stale-edges").unwrap().filter();
        let edge = r#"{"schema":1,"id":"s","t":"edge","at_ms":4102444800000,"pane":"%1"}"#;
        assert_eq!(filter.line(edge), [edge], "no subscription yet");
        filter.line(r#"{"schema":1,"id":"s","t":"ack"}"#);
        let stamped: Value = serde_json::from_str(&filter.line(edge)[0]).unwrap();
        let at = stamped["at_ms"].as_u64().unwrap();
        assert!(at >= before && at < before + 60_000, "{stamped}");
    }

    #[test]
    fn the_id_mutants_rewrite_only_the_ids_their_bug_would() {
        let long = "x".repeat(200);
        assert_eq!(truncated_id(&long).len(), ID_BUFFER);
        let wide = "é".repeat(100);
        assert_eq!(truncated_id(&wide), "é".repeat(64));
        assert_eq!(truncated_id("short"), "short");
        assert_eq!(latin1_id("café"), "cafÃ©");
        assert_eq!(latin1_id("plain"), "plain");
        assert_eq!(escaped_id(r#"a"b\c"#), r#"a\"b\\c"#);
        assert_eq!(escaped_id("e\u{2028}é"), "e\u{2028}é");
        assert_eq!(numeric_id("007"), "7");
        assert_eq!(numeric_id("-0"), "0");
        assert_eq!(numeric_id("1e3"), "1000");
        assert_eq!(numeric_id("1.50"), "1.5");
        assert_eq!(numeric_id("inf"), "inf");
        assert_eq!(numeric_id("3f1c-uuid"), "3f1c-uuid");
    }

    #[test]
    fn a_revoked_session_exits_one_and_any_other_end_keeps_its_code() {
        let mut revoked = find("revoked-exit-one").unwrap().filter();
        revoked.line(r#"{"schema":1,"id":"a","t":"hello","host":"h"}"#);
        revoked.line(r#"{"schema":1,"id":"b","t":"error","code":"scope-denied","message":"m"}"#);
        assert_eq!(revoked.exit(2), 1);
        let mut refused = find("revoked-exit-one").unwrap().filter();
        refused.line(r#"{"schema":1,"id":"0","t":"error","code":"scope-denied","message":"m"}"#);
        assert_eq!(
            refused.exit(2),
            2,
            "refused at start-up: no session was revoked"
        );
    }

    #[test]
    fn pointers_lie_within_patterns_segment_by_segment() {
        assert!(within("/agents/0/detail", "/agents/*/detail"));
        assert!(within("/agents/0/detail", "/agents"));
        assert!(within("/id", "/id"));
        assert!(!within("/idx", "/id"));
        assert!(!within("/agents", "/agents/*/detail"));
        assert!(on_one_path("/agents", "/agents/1/done"));
        assert!(!on_one_path("/options", "/headline"));
    }
}
