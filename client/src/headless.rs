//! `corral-remote --ndjson`: the client driven by JSON command lines on stdin, printing what
//! changes as JSON lines on stdout. Bad input is an `error` line, never an end. The end of stdin,
//! `{"cmd":"quit"}`, SIGTERM, SIGINT or SIGHUP close every connection and exit 0.
//!
//! Commands (`host` is the configured name, `pane` the pane id). An answer (`approve`, `deny`,
//! `answer`, `reject`) quotes, in `binder`, the binder of the card line it answers, as printed
//! (`card.binder`): it is refused with an `error` line when it has none, when no card of the pane
//! was read, and when the card held for the pane is another or its pane moved on since (a
//! `card_changed` line said so). Nothing fetches a card on an answer's behalf.
//!
//! | command | does |
//! |---|---|
//! | `{"cmd":"card","host":"a","pane":"%1"}` | fetch what the pane asks |
//! | `{"cmd":"approve","host":"a","pane":"%1","binder":{…}}` | allow its permission once |
//! | `{"cmd":"deny","host":"a","pane":"%1","binder":{…}}` | reject it; with `"text":"why"`, reject telling the agent why |
//! | `{"cmd":"answer","host":"a","pane":"%1","binder":{…},"answers":[["src/","tests/"],["free text"]]}` | answer its question card: one list of chosen labels per question |
//! | `{"cmd":"reject","host":"a","pane":"%1","binder":{…}}` | dismiss its question |
//! | `{"cmd":"steer","host":"a","pane":"%1","text":"…"}` | send a line (`"now":true`: interrupt first) |
//! | `{"cmd":"interrupt","host":"a","pane":"%1"}` | interrupt it |
//! | `{"cmd":"window","host":"a","pane":"%1"}` | the newest page of its transcript (`"last":N`, `"budget":{…}` as on the wire); `"older":true` pages back from the last page |
//! | `{"cmd":"event","host":"a","pane":"%1","index":0}` | one event of the last page in full (0: the newest), or `"cursor":"…"` |
//! | `{"cmd":"snapshot","host":"a"}` | read the host's fleet again (`"selector":{…}` as on the wire) |
//! | `{"cmd":"receipts","host":"a"}` | look up receipts (`"slot"`, `"since_ms"`) |
//! | `{"cmd":"subscribe","host":"a"}` | subscribe to edges again (`"selector":{…}`); follow mode already did, and a host refuses a second subscription |
//! | `{"cmd":"fleet"}` | print the rows as shown: blocked first, with filters `"host"`, `"state":["blocked","done",…]`, `"agent"` |
//! | `{"cmd":"quit"}` | close and exit |
//!
//! Lines printed (`ev` says which): `host` (link `connecting`, `connected` with `scopes`,
//! `disconnected` with `reason` and `retry_in_ms`, `revoked` with `reason`), `fault` (a line the
//! client could not use, an error nothing asked for), `row` (`added`, `changed` or `removed`, with
//! the row), `edge`, `snapshot`, `subscribed`, `card`, `card_changed` (a card read earlier no
//! longer stands: `binder`, `reason`), `receipt` (`retry` when a locked one goes
//! again), `window`, `event`, `receipts`, `failed` (a request refused or not sent: `request`,
//! `code`, `message`), `attention` (a pane became blocked: the ring), `fleet`, `error` (a command
//! line that could not be used).

use std::io::{BufRead, Write};
use std::time::Duration;

use anyhow::Context;
use serde_json::{Map, Value, json};

use crate::app::{App, Event};
use crate::config::Config;
use crate::connection::now_ms;
use client_core::answer::Choice;
use client_core::client::{Change, Command, EventRef};
use client_core::fleet::{Filter, Link, RowChange, StateWanted};

/// A line of stdin, or its end.
#[derive(Debug)]
pub enum Input {
    /// One command line.
    Line(String),
    /// The end of stdin.
    End,
}

/// What a command line asks for.
#[derive(Debug, Clone, PartialEq)]
pub enum Parsed {
    /// A command for the core.
    Command(Command),
    /// Print the rows.
    Fleet(Filter),
    /// Close and exit.
    Quit,
}

/// Whoever read stdout closed it: nothing more to say, and no reason to fail.
#[derive(Debug)]
struct ReaderGone;

impl std::fmt::Display for ReaderGone {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("stdout was closed")
    }
}

impl std::error::Error for ReaderGone {}

/// Runs the headless client until its input ends, it is told to quit or its reader leaves; every
/// way out goes through the app's shutdown, which ends every host's connection.
pub fn run(config: Config) -> anyhow::Result<()> {
    let mut app: App<Input> = App::start(crate::app::hosts_of(&config), config.notify.clone());
    let ran = follow(&mut app);
    app.shutdown();
    match ran {
        Err(err) if err.is::<ReaderGone>() => Ok(()),
        other => other,
    }
}

fn follow(app: &mut App<Input>) -> anyhow::Result<()> {
    let input = app.sender();
    std::thread::spawn(move || {
        for line in std::io::stdin().lock().lines() {
            let Ok(line) = line else { break };
            if input.send(Event::Input(Input::Line(line))).is_err() {
                return;
            }
        }
        let _ = input.send(Event::Input(Input::End));
    });
    crate::signals::forward(app.sender()).context("cannot wait for signals")?;
    let mut printer = Printer::new(app.client().fleet().hosts().len());
    loop {
        let Some(event) = app.next(Duration::from_secs(3600)) else {
            continue;
        };
        let changes = match event {
            Event::Host(host, event) => app.host_event(host, event),
            Event::Input(Input::End) | Event::Signal(_) => break,
            Event::Input(Input::Line(line)) => {
                if line.trim().is_empty() {
                    continue;
                }
                match parse(&line) {
                    Ok(Parsed::Quit) => break,
                    Ok(Parsed::Fleet(filter)) => {
                        printer.print(fleet_line(app, &filter))?;
                        continue;
                    }
                    Ok(Parsed::Command(command)) => match app.command(command) {
                        Ok(changes) => changes,
                        Err(message) => {
                            printer.print(error_line(&message, &line))?;
                            continue;
                        }
                    },
                    Err(message) => {
                        printer.print(error_line(&message, &line))?;
                        continue;
                    }
                }
            }
        };
        for change in changes {
            for line in printer.lines(app, &change) {
                printer.print(line)?;
            }
        }
    }
    Ok(())
}

fn error_line(message: &str, line: &str) -> Value {
    let shown: String = line.chars().take(200).collect();
    json!({"ev": "error", "message": message, "line": shown})
}

/// Parses one command line.
pub fn parse(line: &str) -> Result<Parsed, String> {
    let value: Value =
        serde_json::from_str(line).map_err(|err| format!("not a JSON object: {err}"))?;
    let Value::Object(fields) = value else {
        return Err("not a JSON object".into());
    };
    let args = Args(&fields);
    let cmd = args.string("cmd")?;
    let known: &[&str] = match cmd.as_str() {
        "quit" => &[],
        "fleet" => &["host", "state", "agent"],
        "card" | "interrupt" => &["host", "pane"],
        "approve" | "reject" => &["host", "pane", "binder"],
        "deny" => &["host", "pane", "binder", "text"],
        "answer" => &["host", "pane", "binder", "answers"],
        "steer" => &["host", "pane", "text", "now"],
        "window" => &["host", "pane", "older", "last", "budget"],
        "event" => &["host", "pane", "index", "cursor"],
        "snapshot" | "subscribe" => &["host", "selector"],
        "receipts" => &["host", "slot", "since_ms"],
        other => {
            return Err(format!(
                "unknown command {other:?}: card, approve, deny, answer, reject, steer, interrupt, window, event, snapshot, receipts, fleet or quit"
            ));
        }
    };
    if let Some(stray) = fields
        .keys()
        .find(|k| *k != "cmd" && !known.contains(&k.as_str()))
    {
        return Err(format!("`{cmd}` takes no `{stray}`"));
    }
    // An answer quotes the binder of the card line it answers, as printed: a script answers
    // only what it read.
    let answer = |choice| -> Result<Parsed, String> {
        let host = args.string("host")?;
        let pane = args.string("pane")?;
        let binder = args.optional("binder")?.ok_or_else(|| {
            format!(
                "`binder` is missing: `{cmd}` quotes the binder of the card line it answers (`card.binder`)"
            )
        })?;
        Ok(Parsed::Command(Command::Answer {
            host,
            pane,
            binder,
            choice,
        }))
    };
    match cmd.as_str() {
        "quit" => Ok(Parsed::Quit),
        "fleet" => {
            let states = match args.optional::<Vec<String>>("state")? {
                None => Vec::new(),
                Some(words) => words
                    .iter()
                    .map(|w| {
                        StateWanted::parse(w).ok_or_else(|| {
                            format!("unknown state {w:?}: idle, working, blocked, unknown or done")
                        })
                    })
                    .collect::<Result<_, _>>()?,
            };
            Ok(Parsed::Fleet(Filter {
                host: args.optional("host")?,
                states,
                agent: args.optional("agent")?,
            }))
        }
        "card" => Ok(Parsed::Command(Command::Card {
            host: args.string("host")?,
            pane: args.string("pane")?,
        })),
        "approve" => answer(Choice::Approve),
        "deny" => match args.optional::<String>("text")? {
            Some(text) => answer(Choice::DenyWithMessage(text)),
            None => answer(Choice::Deny),
        },
        "answer" => answer(Choice::Answer(args.required("answers")?)),
        "reject" => answer(Choice::Reject),
        "steer" => Ok(Parsed::Command(Command::Steer {
            host: args.string("host")?,
            pane: args.string("pane")?,
            text: args.string("text")?,
            now: args.optional("now")?.unwrap_or(false),
        })),
        "interrupt" => Ok(Parsed::Command(Command::Interrupt {
            host: args.string("host")?,
            pane: args.string("pane")?,
        })),
        "window" => Ok(Parsed::Command(Command::Window {
            host: args.string("host")?,
            pane: args.string("pane")?,
            older: args.optional("older")?.unwrap_or(false),
            last: args.optional("last")?,
            budget: args.optional("budget")?,
        })),
        "event" => {
            let which = match (args.optional("index")?, args.optional("cursor")?) {
                (Some(index), None) => EventRef::Index(index),
                (None, Some(cursor)) => EventRef::Cursor(cursor),
                _ => return Err("`event` takes one of `index` and `cursor`".into()),
            };
            Ok(Parsed::Command(Command::Event {
                host: args.string("host")?,
                pane: args.string("pane")?,
                which,
            }))
        }
        "snapshot" => Ok(Parsed::Command(Command::Snapshot {
            host: args.string("host")?,
            selector: args.optional("selector")?,
        })),
        "subscribe" => Ok(Parsed::Command(Command::Subscribe {
            host: args.string("host")?,
            selector: args.optional("selector")?,
        })),
        "receipts" => Ok(Parsed::Command(Command::Receipts {
            host: args.string("host")?,
            slot: args.optional("slot")?,
            since_ms: args.optional("since_ms")?,
        })),
        _ => unreachable!("every known command is parsed above"),
    }
}

struct Args<'a>(&'a Map<String, Value>);

impl Args<'_> {
    fn optional<T: serde::de::DeserializeOwned>(&self, key: &str) -> Result<Option<T>, String> {
        match self.0.get(key) {
            None | Some(Value::Null) => Ok(None),
            Some(value) => serde_json::from_value(value.clone())
                .map(Some)
                .map_err(|err| format!("`{key}`: {err}")),
        }
    }

    fn required<T: serde::de::DeserializeOwned>(&self, key: &str) -> Result<T, String> {
        self.optional(key)?
            .ok_or_else(|| format!("`{key}` is missing"))
    }

    fn string(&self, key: &str) -> Result<String, String> {
        self.required(key)
    }
}

/// Writes the lines, and remembers what it said of each host so it says only what changed.
struct Printer {
    said: Vec<(Option<Value>, u32)>,
    out: std::io::Stdout,
}

impl Printer {
    fn new(hosts: usize) -> Printer {
        Printer {
            said: vec![(None, 0); hosts],
            out: std::io::stdout(),
        }
    }

    fn print(&mut self, line: Value) -> anyhow::Result<()> {
        let mut out = self.out.lock();
        let written = writeln!(out, "{line}").and_then(|()| out.flush());
        match written {
            Err(err) if err.kind() == std::io::ErrorKind::BrokenPipe => Err(ReaderGone.into()),
            other => other.context("cannot write to stdout"),
        }
    }

    fn lines<I: Send + 'static>(&mut self, app: &App<I>, change: &Change) -> Vec<Value> {
        let name = |host: usize| app.name(host).to_owned();
        match change {
            Change::Host(host) => self.host_lines(app, *host),
            Change::Row(changed) => {
                let change = match changed.change {
                    RowChange::Added => "added",
                    RowChange::Changed => "changed",
                    RowChange::Removed => "removed",
                };
                vec![
                    json!({"ev": "row", "host": name(changed.host), "change": change, "row": changed.row}),
                ]
            }
            Change::Snapshot { host, rows, whole } => {
                vec![json!({"ev": "snapshot", "host": name(*host), "rows": rows, "whole": whole})]
            }
            Change::Subscribed(host) => vec![json!({"ev": "subscribed", "host": name(*host)})],
            Change::Edge(host, edge) => {
                vec![json!({"ev": "edge", "host": name(*host), "edge": edge})]
            }
            Change::Card { host, pane, card } => {
                vec![json!({"ev": "card", "host": name(*host), "pane": pane, "card": card})]
            }
            Change::CardChanged { host, pane } => {
                let held = app.client().card(*host, pane);
                vec![json!({
                    "ev": "card_changed", "host": name(*host), "pane": pane,
                    "binder": held.and_then(|h| h.binder()),
                    "reason": held.and_then(|h| h.changed.as_deref()),
                })]
            }
            Change::Receipt {
                host,
                receipt,
                retry,
            } => {
                let mut line = json!({"ev": "receipt", "host": name(*host), "receipt": receipt});
                if let Some(retry) = retry {
                    line["retry"] = json!(retry);
                }
                vec![line]
            }
            Change::Window {
                host,
                window,
                older,
            } => {
                vec![
                    json!({"ev": "window", "host": name(*host), "pane": window.pane, "older": older, "window": window}),
                ]
            }
            Change::Event { host, pane, event } => {
                vec![json!({"ev": "event", "host": name(*host), "pane": pane, "event": event})]
            }
            Change::Receipts { host, receipts } => {
                vec![json!({"ev": "receipts", "host": name(*host), "receipts": receipts})]
            }
            Change::Failed {
                host,
                pane,
                what,
                code,
                message,
            } => vec![json!({
                "ev": "failed", "host": name(*host), "pane": pane, "request": what,
                "code": code, "message": message,
            })],
            Change::Attention { host, row } => vec![json!({
                "ev": "attention", "host": name(*host), "pane": row.pane, "agent": row.agent,
                "detail": row.detail, "episode_ms": row.episode_ms, "locator": row.locator,
                "repo": row.repo, "branch": row.branch,
            })],
        }
    }

    fn host_lines<I: Send + 'static>(&mut self, app: &App<I>, index: usize) -> Vec<Value> {
        let host = app.client().fleet().host(index);
        let mut line = json!({"ev": "host", "host": host.name, "link": host.link.word()});
        match &host.link {
            Link::Connected => {
                if let Some(hello) = &host.hello {
                    line["scopes"] = json!(hello.scopes);
                    line["host_name"] = json!(hello.host);
                    line["tool_version"] = json!(hello.tool_version);
                }
            }
            Link::Down {
                reason,
                retry_at_ms,
            } => {
                line["reason"] = json!(reason);
                line["retry_in_ms"] = json!(retry_at_ms.map(|at| at.saturating_sub(now_ms())));
            }
            Link::Revoked { reason } => line["reason"] = json!(reason),
            Link::Connecting => {}
        }
        let mut lines = Vec::new();
        let (said, faults) = &mut self.said[index];
        // A retry time changes every attempt; the link is what is news.
        let comparable = |line: &Value| {
            let mut line = line.clone();
            line.as_object_mut().map(|o| o.remove("retry_in_ms"));
            line
        };
        if said.as_ref().map(comparable) != Some(comparable(&line)) {
            *said = Some(line.clone());
            lines.push(line);
        }
        if let Some(fault) = &host.fault
            && fault.count > *faults
        {
            *faults = fault.count;
            lines.push(json!({"ev": "fault", "host": host.name, "message": fault.message, "count": fault.count}));
        }
        lines
    }
}

fn fleet_line<I: Send + 'static>(app: &App<I>, filter: &Filter) -> Value {
    let fleet = app.client().fleet();
    let now = now_ms();
    let rows: Vec<Value> = fleet
        .shown(filter)
        .into_iter()
        .map(|(host, row)| {
            let waited = (row.state == schema::State::Blocked)
                .then(|| row.since_ms.map(|since| now.saturating_sub(since)))
                .flatten();
            let stale = fleet.host(host).stale();
            json!({"host": app.name(host), "waited_ms": waited, "stale": stale, "row": row})
        })
        .collect();
    let hosts: Vec<Value> = fleet
        .hosts()
        .iter()
        .enumerate()
        .map(|(index, host)| {
            let counts = fleet.counts(index);
            json!({
                "host": host.name, "link": host.link.word(), "last_news_ms": host.last_news_ms,
                "agents": counts.total, "blocked": counts.blocked, "working": counts.working,
                "idle": counts.idle, "unknown": counts.unknown, "done": counts.done,
            })
        })
        .collect();
    json!({"ev": "fleet", "hosts": hosts, "rows": rows})
}

#[cfg(test)]
mod tests {
    use super::*;

    fn command(line: &str) -> Command {
        match parse(line).unwrap() {
            Parsed::Command(command) => command,
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn every_command_parses() {
        let binder = schema::Binder {
            expect_episode_ms: 1763780412000,
            expect_permission_request: Some("req-7".into()),
        };
        assert_eq!(
            command(
                r#"{"cmd":"approve","host":"a","pane":"%1","binder":{"expect_episode_ms":1763780412000,"expect_permission_request":"req-7"}}"#
            ),
            Command::Answer {
                host: "a".into(),
                pane: "%1".into(),
                binder: binder.clone(),
                choice: Choice::Approve
            }
        );
        assert_eq!(
            command(
                r#"{"cmd":"deny","host":"a","pane":"%1","text":"no","binder":{"expect_episode_ms":1763780412000,"expect_permission_request":"req-7"}}"#
            ),
            Command::Answer {
                host: "a".into(),
                pane: "%1".into(),
                binder,
                choice: Choice::DenyWithMessage("no".into())
            }
        );
        assert!(matches!(
            command(
                r#"{"cmd":"answer","host":"a","pane":"%1","binder":{"expect_episode_ms":5},"answers":[["x"],["y","z"]]}"#
            ),
            Command::Answer { choice: Choice::Answer(a), binder, .. }
                if a.len() == 2 && binder.expect_episode_ms == 5 && binder.expect_permission_request.is_none()
        ));
        assert!(matches!(
            command(r#"{"cmd":"steer","host":"a","pane":"%1","text":"go","now":true}"#),
            Command::Steer { now: true, .. }
        ));
        assert!(matches!(
            command(
                r#"{"cmd":"window","host":"a","pane":"%1","older":true,"last":5,"budget":{"header_bytes":64}}"#
            ),
            Command::Window {
                older: true,
                last: Some(5),
                budget: Some(_),
                ..
            }
        ));
        assert!(matches!(
            command(r#"{"cmd":"event","host":"a","pane":"%1","index":2}"#),
            Command::Event {
                which: EventRef::Index(2),
                ..
            }
        ));
        assert!(matches!(
            command(r#"{"cmd":"snapshot","host":"a","selector":{"state":["blocked","done"]}}"#),
            Command::Snapshot {
                selector: Some(_),
                ..
            }
        ));
        assert_eq!(parse(r#"{"cmd":"quit"}"#).unwrap(), Parsed::Quit);
        assert!(matches!(
            parse(r#"{"cmd":"fleet","state":["blocked","done"]}"#).unwrap(),
            Parsed::Fleet(f) if f.states.len() == 2
        ));
    }

    #[test]
    fn bad_lines_say_why() {
        for (line, want) in [
            ("nope", "not a JSON object"),
            ("[1]", "not a JSON object"),
            (r#"{"cmd":"fly"}"#, "unknown command \"fly\""),
            (r#"{"pane":"%1"}"#, "`cmd` is missing"),
            (r#"{"cmd":"approve","host":"a"}"#, "`pane` is missing"),
            (
                r#"{"cmd":"approve","host":"a","pane":1}"#,
                "`pane`: invalid type",
            ),
            (
                r#"{"cmd":"approve","host":"a","pane":"%1","force":true}"#,
                "`approve` takes no `force`",
            ),
            (
                r#"{"cmd":"approve","host":"a","pane":"%1"}"#,
                "`binder` is missing: `approve` quotes the binder of the card line",
            ),
            (
                r#"{"cmd":"reject","host":"a","pane":"%1","binder":{"episode":5}}"#,
                "`binder`: missing field `expect_episode_ms`",
            ),
            (
                r#"{"cmd":"interrupt","host":"a","pane":"%1","binder":{"expect_episode_ms":5}}"#,
                "`interrupt` takes no `binder`",
            ),
            (
                r#"{"cmd":"event","host":"a","pane":"%1"}"#,
                "`event` takes one of",
            ),
            (
                r#"{"cmd":"fleet","state":["sleeping"]}"#,
                "unknown state \"sleeping\"",
            ),
        ] {
            let got = parse(line).unwrap_err();
            assert!(got.starts_with(want), "{line}: {got}");
        }
    }
}
