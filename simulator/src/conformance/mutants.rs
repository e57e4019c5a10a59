//! One rule broken at a time: a catalogue of hosts that are correct but for one rule, each named
//! by the ledger requirement it breaks. The self-test runs each against the sessions its
//! requirement lists and fails unless one of them fails: every rule here has a session of its
//! own that catches it breaking, not only a session that happens to.
//!
//! A mutant is a [`Filter`] between the runner and a correct host (the wrapper is the running
//! program again: `corral-conformance mutant <name> <host command...>`), so the catalogue judges
//! the kit, never the host.

use serde_json::{Map, Value};

/// What sits between the runner and a host: sees what the runner sends (when it asks to) and
/// decides what the runner receives.
pub trait Filter: Send {
    /// Whether [`Filter::request`] wants the runner's lines (stdin is then piped through the
    /// wrapper, bytes unchanged, instead of handed to the host).
    fn sees_requests(&self) -> bool {
        false
    }

    /// One whole line the runner sent the host.
    fn request(&mut self, _line: &str) {}

    /// One line the host wrote: the lines the runner gets instead (none drops it).
    fn line(&mut self, line: &str) -> Vec<String>;

    /// The host has been quiet for a tick: lines held back to pass on now.
    fn idle(&mut self) -> Vec<String> {
        Vec::new()
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

/// One entry of the catalogue.
pub struct Mutant {
    /// The wrapper's argument: `mutant <name>`.
    pub name: &'static str,
    /// The ledger requirement it breaks; the sessions that requirement lists must catch it.
    pub rule: &'static str,
    /// What the broken host does, in a phrase.
    pub breaks: &'static str,
    /// A host line the mutant changes (its unit test proves it is not a no-op).
    pub sample: &'static str,
    make: fn() -> Box<dyn Filter>,
}

impl std::fmt::Debug for Mutant {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Mutant")
            .field("name", &self.name)
            .field("rule", &self.rule)
            .finish_non_exhaustive()
    }
}

impl Mutant {
    /// A fresh filter for one run of the host.
    pub fn filter(&self) -> Box<dyn Filter> {
        (self.make)()
    }
}

/// The mutant named `name`.
pub fn find(name: &str) -> Option<&'static Mutant> {
    CATALOGUE.iter().find(|m| m.name == name)
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

/// Stamps every edge with the time its subscription was acknowledged: within the case's run,
/// but before the change the edge reports.
#[derive(Default)]
struct StaleEdges {
    subscribed_ms: Option<u64>,
}

impl Filter for StaleEdges {
    fn line(&mut self, line: &str) -> Vec<String> {
        let Ok(Value::Object(mut frame)) = serde_json::from_str::<Value>(line) else {
            return vec![line.to_owned()];
        };
        match (frame.get("t").and_then(Value::as_str), self.subscribed_ms) {
            (Some("ack"), None) => {
                self.subscribed_ms = Some(
                    std::time::SystemTime::now()
                        .duration_since(std::time::UNIX_EPOCH)
                        .map_or(0, |d| d.as_millis() as u64),
                );
                vec![line.to_owned()]
            }
            (Some("edge"), Some(at)) => {
                frame.insert("at_ms".into(), Value::from(at));
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
    fn sees_requests(&self) -> bool {
        true
    }

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
        sample: r#"{"schema":1,"id":"2","t":"ack"}"#,
        make: || Box::new(Swap::default()),
    },
    Mutant {
        name: "silent-empty-first-snapshot",
        rule: "subscribe.first-snapshot-always",
        breaks: "sends nothing on a snapshot stream's first cycle when no pane matches",
        sample: r#"{"schema":1,"id":"2","t":"snapshot","agents":[]}"#,
        make: || {
            Box::new(SilentEmptyStart {
                first_due: Some("2".into()),
            })
        },
    },
    Mutant {
        name: "stale-edges",
        rule: "edge.one-transition",
        breaks: "stamps every edge with its subscription's time, not the cycle's",
        sample: r#"{"schema":1,"id":"2","t":"edge","at_ms":4102444800000}"#,
        make: || {
            Box::new(StaleEdges {
                subscribed_ms: Some(1),
            })
        },
    },
    Mutant {
        name: "edges-twice",
        rule: "edge.one-per-observed-transition",
        breaks: "reports every edge twice",
        sample: r#"{"schema":1,"id":"2","t":"edge","pane":"%1"}"#,
        make: || Box::new(Twice),
    },
    Mutant {
        name: "repeated-snapshots",
        rule: "subscribe.repeat-snapshot-suppressed",
        breaks: "sends a snapshot stream's snapshot again when nothing changed",
        sample: r#"{"schema":1,"id":"2","t":"snapshot","agents":[]}"#,
        make: || {
            Box::new(RepeatSnapshots {
                streams: vec!["2".into()],
            })
        },
    },
    Mutant {
        name: "receipt-device-claimed",
        rule: "receipt.device",
        breaks: "names the hello's claimed device in receipts, not the connection's",
        sample: r#"{"schema":1,"id":"2","t":"receipt","device":"SHA256:kit-phone"}"#,
        make: || {
            Box::new(ClaimedDevice {
                claim: Some("SHA256:claimed".into()),
            })
        },
    },
    Mutant {
        name: "empty-tool-version",
        rule: "handshake.hello-tool-version",
        breaks: "answers hello with an empty host version",
        sample: r#"{"schema":1,"id":"1","t":"hello","tool_version":"0.1.0"}"#,
        make: edit!("hello", |f| set(f, "tool_version", Value::from(""))),
    },
    Mutant {
        name: "empty-host-name",
        rule: "handshake.hello-host-name",
        breaks: "answers hello with an empty host name",
        sample: r#"{"schema":1,"id":"1","t":"hello","host":"box"}"#,
        make: edit!("hello", |f| set(f, "host", Value::from(""))),
    },
    Mutant {
        name: "every-scope",
        rule: "handshake.scopes-never-from-request",
        breaks: "grants every scope whatever the device store says",
        sample: r#"{"schema":1,"id":"1","t":"hello","scopes":["read"]}"#,
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
        sample: r#"{"schema":1,"id":"1","t":"hello","reconcile_interval_ms":200}"#,
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
        sample: r#"{"schema":1,"id":"0","t":"error","code":"bad-request","message":"no"}"#,
        make: edit!("error", |f| set(f, "message", Value::from(""))),
    },
    Mutant {
        name: "schema-2",
        rule: "envelope.schema-every-line",
        breaks: "states wire version 2 on every line",
        sample: r#"{"schema":1,"id":"1","t":"ack"}"#,
        make: edit!("*", |f| set(f, "schema", Value::from(2))),
    },
    Mutant {
        name: "stream-id-zero",
        rule: "subscribe.frames-carry-subscribe-id",
        breaks: "streams edges under id \"0\", not the subscription's",
        sample: r#"{"schema":1,"id":"2","t":"edge"}"#,
        make: edit!("edge", |f| set(f, "id", Value::from("0"))),
    },
    Mutant {
        name: "waiting-not-blocked",
        rule: "vocab.state-names",
        breaks: "calls the blocked state `waiting`",
        sample: r#"{"schema":1,"id":"2","t":"snapshot","agents":[{"state":"blocked"}]}"#,
        make: edit!("snapshot", |f| each_row(f, |row| rename(
            row, "state", "blocked", "waiting"
        ))),
    },
    Mutant {
        name: "episode-zero",
        rule: "row.episode-ms",
        breaks: "reports every row's episode as 0",
        sample: r#"{"schema":1,"id":"2","t":"snapshot","agents":[{"episode_ms":4102444710000}]}"#,
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
        sample: r#"{"schema":1,"id":"2","t":"snapshot","agents":[{"done":true}]}"#,
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
        sample: r#"{"schema":1,"id":"2","t":"snapshot","agents":[{"locator":"work:0.1"}]}"#,
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
        sample: r#"{"schema":1,"id":"3","t":"card","card":"permission","lane":"hook","options":[]}"#,
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
        sample: r#"{"schema":1,"id":"3","t":"card","lane":"hook","options":[{"kind":"allow-once","name":"Yes","option_id":"r"}]}"#,
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
        sample: r#"{"schema":1,"id":"3","t":"card","card":"informational","headline":"Waiting for you"}"#,
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
        sample: r#"{"schema":1,"id":"3","t":"card","card":"question","questions":[{"multiple":true}]}"#,
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
        sample: r#"{"schema":1,"id":"3","t":"receipt","cached":true}"#,
        make: edit!("receipt", |f| set(f, "cached", Value::from(false))),
    },
    Mutant {
        name: "refused-exit-zero",
        rule: "receipt.exit-code-refused",
        breaks: "gives a refusal exit code 0",
        sample: r#"{"schema":1,"id":"3","t":"receipt","outcome":"refused","exit_code":4}"#,
        make: edit!("receipt", |f| {
            f.get("outcome").and_then(Value::as_str) == Some("refused")
                && set(f, "exit_code", Value::from(0))
        }),
    },
    Mutant {
        name: "vanished-exit-one",
        rule: "receipt.exit-code-vanished",
        breaks: "gives a vanished pane exit code 1",
        sample: r#"{"schema":1,"id":"3","t":"receipt","outcome":"vanished","exit_code":3}"#,
        make: edit!("receipt", |f| {
            f.get("outcome").and_then(Value::as_str) == Some("vanished")
                && set(f, "exit_code", Value::from(1))
        }),
    },
    Mutant {
        name: "episode-changed-as-request-gone",
        rule: "binder.episode-changed",
        breaks: "refuses a changed episode as request-gone",
        sample: r#"{"schema":1,"id":"3","t":"receipt","reason":"episode-changed"}"#,
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
        sample: r#"{"schema":1,"id":"3","t":"receipt","reason":"too-long"}"#,
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
        sample: r#"{"schema":1,"id":"3","t":"error","code":"not-found","message":"no pane"}"#,
        make: edit!("error", |f| rename(f, "code", "not-found", "bad-request")),
    },
    Mutant {
        name: "revoked-as-bad-request",
        rule: "session.revoked-on-request",
        breaks: "refuses a revoked device's request bad-request",
        sample: r#"{"schema":1,"id":"3","t":"error","code":"scope-denied","message":"no"}"#,
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
        sample: r#"{"schema":1,"id":"3","t":"error","code":"cursor-invalid","message":"no"}"#,
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
        sample: r#"{"schema":1,"id":"3","t":"window","events":[{"n":1},{"n":2}]}"#,
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
        sample: r#"{"schema":1,"id":"3","t":"window","unknown":2}"#,
        make: edit!("window", |f| set(f, "unknown", Value::from(0))),
    },
    Mutant {
        name: "never-budget-truncated",
        rule: "window.budget-truncated",
        breaks: "never says a byte budget ended the page",
        sample: r#"{"schema":1,"id":"3","t":"window","budget_truncated":true}"#,
        make: edit!("window", |f| set(f, "budget_truncated", Value::from(false))),
    },
    Mutant {
        name: "no-older-cursor",
        rule: "window.page-ends",
        breaks: "says every page is the transcript's head",
        sample: r#"{"schema":1,"id":"3","t":"window","older":"c1"}"#,
        make: edit!("window", |f| set(f, "older", Value::Null)),
    },
    Mutant {
        name: "vanished-as-unknown",
        rule: "edge.vanished",
        breaks: "reports a vanished pane as moving to `unknown`",
        sample: r#"{"schema":1,"id":"2","t":"edge","from":"idle","to":""}"#,
        make: edit!("edge", |f| rename(f, "to", "", "unknown")),
    },
    Mutant {
        name: "appeared-from-idle",
        rule: "edge.appeared",
        breaks: "reports an appeared pane as coming from `idle`",
        sample: r#"{"schema":1,"id":"2","t":"edge","from":"","to":"working"}"#,
        make: edit!("edge", |f| rename(f, "from", "", "idle")),
    },
    Mutant {
        name: "gate1-refusal-cached",
        rule: "receipt.gate1-refusal-shape",
        breaks: "marks a scope refusal cached",
        sample: r#"{"schema":1,"id":"2","t":"receipt","reason":"scope-denied","cached":false}"#,
        make: edit!("receipt", |f| {
            f.get("reason").and_then(Value::as_str) == Some("scope-denied")
                && set(f, "cached", Value::from(true))
        }),
    },
    Mutant {
        name: "unrecoverable-id-empty",
        rule: "framing.unrecoverable-id-zero",
        breaks: "answers a line with no recoverable id under id \"\", not \"0\"",
        sample: r#"{"schema":1,"id":"0","t":"error","code":"bad-request","message":"no"}"#,
        make: edit!("error", |f| rename(f, "id", "0", "")),
    },
    Mutant {
        name: "unsupported-schema-as-bad-request",
        rule: "handshake.hello-unsupported-schema",
        breaks: "refuses a hello of another schema bad-request",
        sample: r#"{"schema":1,"id":"1","t":"error","code":"unsupported-schema","message":"no"}"#,
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
        sample: r#"{"schema":1,"id":"3","t":"card","card":"informational","detail":"unknown"}"#,
        make: edit!("card", |f| set(f, "detail", Value::Null)),
    },
    Mutant {
        name: "absent-optionals-omitted",
        rule: "row.explicit-null",
        breaks: "omits a row's absent optionals instead of writing null",
        sample: r#"{"schema":1,"id":"2","t":"snapshot","agents":[{"detail":null}]}"#,
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
        sample: r#"{"schema":1,"id":"2","t":"snapshot","agents":[{"server":"/tmp/tmux-0/default"}]}"#,
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
        sample: r#"{"schema":1,"id":"2","t":"snapshot","agents":[{"pane":"%1"}]}"#,
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
        sample: r#"{"schema":1,"id":"3","t":"receipt","outcome":"sent","exit_code":0}"#,
        make: edit!("receipt", |f| {
            f.get("outcome").and_then(Value::as_str) == Some("sent")
                && set(f, "exit_code", Value::from(1))
        }),
    },
    Mutant {
        name: "timeout-exit-one",
        rule: "receipt.exit-code-timeout",
        breaks: "gives a timed-out API call exit code 1",
        sample: r#"{"schema":1,"id":"3","t":"receipt","outcome":"timeout","exit_code":124}"#,
        make: edit!("receipt", |f| {
            f.get("outcome").and_then(Value::as_str) == Some("timeout")
                && set(f, "exit_code", Value::from(1))
        }),
    },
    Mutant {
        name: "replied-as-sent",
        rule: "receipt.fire-replied",
        breaks: "reports a written hook verdict or an API's 2xx as `sent`",
        sample: r#"{"schema":1,"id":"3","t":"receipt","outcome":"replied"}"#,
        make: edit!("receipt", |f| rename(f, "outcome", "replied", "sent")),
    },
    Mutant {
        name: "api-lane-as-screen",
        rule: "card.lane-api",
        breaks: "calls the API lane `screen`",
        sample: r#"{"schema":1,"id":"3","t":"card","lane":"api"}"#,
        make: edit!("card", |f| rename(f, "lane", "api", "screen")),
    },
    Mutant {
        name: "hook-extraction-wrapped",
        rule: "card.hook-extraction-exact",
        breaks: "reports a hook card's extraction as `wrapped`",
        sample: r#"{"schema":1,"id":"3","t":"card","lane":"hook","extraction":"exact"}"#,
        make: edit!("card", |f| rename(f, "extraction", "exact", "wrapped")),
    },
    Mutant {
        name: "permission-called-approval",
        rule: "vocab.detail",
        breaks: "calls the permission detail `approval`",
        sample: r#"{"schema":1,"id":"2","t":"snapshot","agents":[{"detail":"permission"}]}"#,
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
        sample: r#"{"schema":1,"id":"0","t":"error","code":"too-many-connections","message":"no"}"#,
        make: edit!("error", |f| rename(
            f,
            "code",
            "too-many-connections",
            "internal"
        )),
    },
];

#[cfg(test)]
mod tests {
    use super::*;

    fn through(filter: &mut dyn Filter, line: &str) -> Vec<String> {
        let mut out = filter.line(line);
        for _ in 0..=HOLD_TICKS {
            out.extend(filter.idle());
        }
        out
    }

    #[test]
    fn every_mutant_changes_its_sample_and_passes_a_line_that_is_not_json() {
        for mutant in CATALOGUE {
            let mut filter = mutant.filter();
            filter.request(r#"{"schema":1,"id":"1","t":"hello","device":"SHA256:claimed"}"#);
            let out = through(filter.as_mut(), mutant.sample);
            if mutant.name == "answers-out-of-order" {
                continue;
            }
            assert_ne!(
                out,
                vec![mutant.sample.to_owned()],
                "{} changed nothing",
                mutant.name
            );
            let mut filter = mutant.filter();
            assert_eq!(
                through(filter.as_mut(), "not json"),
                ["not json"],
                "{}",
                mutant.name
            );
        }
    }

    #[test]
    fn every_rule_is_a_tested_requirement_with_sessions_of_its_own() {
        let path =
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../golden/requirements.toml");
        let ledger = golden::ledger::load(&path).unwrap();
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

    #[test]
    fn names_are_unique() {
        let mut names: Vec<_> = CATALOGUE.iter().map(|m| m.name).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), CATALOGUE.len());
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
}
