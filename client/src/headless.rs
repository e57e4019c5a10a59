//! `corral-remote --ndjson`: the client driven by JSON command lines on stdin, printing what
//! changes as JSON lines on stdout. Bad input is an `error` line, never an end. The end of stdin,
//! `{"cmd":"quit"}`, SIGTERM, SIGINT or SIGHUP close every connection and exit 0.
//!
//! The command lines are `schema`'s [`RemoteCommand`] and the lines printed its [`RemoteLine`]
//! (`schema/json/remote-command.schema.json`, `remote-line.schema.json`).
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
use schema::RemoteCommand;
use schema::remote::{FleetHostLine, FleetRowLine, LinkLine, LinkWord, RemoteLine, RowChangeWord};
use serde_json::Value;

use crate::app::{App, Event};
use crate::config::Config;
use client_core::answer::Choice;
use client_core::client::{Change, Command, EventRef};
use client_core::fleet::{Filter, Link, RowChange, StateWanted};
use stdx::now_ms;

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

fn error_line(message: &str, line: &str) -> RemoteLine {
    RemoteLine::Error {
        message: message.to_owned(),
        line: line.chars().take(200).collect(),
    }
}

/// Parses one command line: a [`RemoteCommand`] (`schema/json/remote-command.schema.json`).
pub fn parse(line: &str) -> Result<Parsed, String> {
    let value: Value =
        serde_json::from_str(line).map_err(|err| format!("not a JSON object: {err}"))?;
    let Some(fields) = value.as_object() else {
        return Err("not a JSON object".into());
    };
    // An answer without a binder says what to quote, not only that a field is missing.
    if let Some(cmd @ ("approve" | "deny" | "answer" | "reject")) =
        fields.get("cmd").and_then(Value::as_str)
        && !fields.contains_key("binder")
    {
        return Err(format!(
            "`binder` is missing: `{cmd}` quotes the binder of the card line it answers (`card.binder`)"
        ));
    }
    let command: RemoteCommand = serde_json::from_value(value).map_err(|err| err.to_string())?;
    let answer = |host, pane, binder, choice| {
        Ok(Parsed::Command(Command::Answer {
            host,
            pane,
            binder,
            choice,
        }))
    };
    match command {
        RemoteCommand::Quit {} => Ok(Parsed::Quit),
        RemoteCommand::Fleet { host, state, agent } => {
            let states = state
                .unwrap_or_default()
                .iter()
                .map(|w| {
                    StateWanted::parse(w).ok_or_else(|| {
                        format!("unknown state {w:?}: idle, working, blocked, unknown or done")
                    })
                })
                .collect::<Result<_, _>>()?;
            Ok(Parsed::Fleet(Filter {
                host,
                states,
                agent,
            }))
        }
        RemoteCommand::Card { host, pane } => Ok(Parsed::Command(Command::Card { host, pane })),
        RemoteCommand::Approve { host, pane, binder } => {
            answer(host, pane, binder, Choice::Approve)
        }
        RemoteCommand::Deny {
            host,
            pane,
            binder,
            text,
        } => answer(
            host,
            pane,
            binder,
            match text {
                Some(text) => Choice::DenyWithMessage(text),
                None => Choice::Deny,
            },
        ),
        RemoteCommand::Answer {
            host,
            pane,
            binder,
            answers,
        } => answer(host, pane, binder, Choice::Answer(answers)),
        RemoteCommand::Reject { host, pane, binder } => answer(host, pane, binder, Choice::Reject),
        RemoteCommand::Steer {
            host,
            pane,
            text,
            now,
        } => Ok(Parsed::Command(Command::Steer {
            host,
            pane,
            text,
            now,
        })),
        RemoteCommand::Interrupt { host, pane } => {
            Ok(Parsed::Command(Command::Interrupt { host, pane }))
        }
        RemoteCommand::Window {
            host,
            pane,
            older,
            last,
            budget,
        } => Ok(Parsed::Command(Command::Window {
            host,
            pane,
            older,
            last,
            budget,
        })),
        RemoteCommand::Event {
            host,
            pane,
            index,
            cursor,
        } => {
            let which = match (index, cursor) {
                (Some(index), None) => EventRef::Index(index),
                (None, Some(cursor)) => EventRef::Cursor(cursor),
                _ => return Err("`event` takes one of `index` and `cursor`".into()),
            };
            Ok(Parsed::Command(Command::Event { host, pane, which }))
        }
        RemoteCommand::Snapshot { host, selector } => {
            Ok(Parsed::Command(Command::Snapshot { host, selector }))
        }
        RemoteCommand::Subscribe { host, selector } => {
            Ok(Parsed::Command(Command::Subscribe { host, selector }))
        }
        RemoteCommand::Receipts {
            host,
            slot,
            since_ms,
        } => Ok(Parsed::Command(Command::Receipts {
            host,
            slot,
            since_ms,
        })),
    }
}

/// Writes the lines ([`RemoteLine`], `schema/json/remote-line.schema.json`), and remembers what
/// it said of each host so it says only what changed.
struct Printer {
    said: Vec<(Option<RemoteLine>, u32)>,
    out: std::io::Stdout,
}

impl Printer {
    fn new(hosts: usize) -> Printer {
        Printer {
            said: vec![(None, 0); hosts],
            out: std::io::stdout(),
        }
    }

    fn print(&mut self, line: RemoteLine) -> anyhow::Result<()> {
        let text = serde_json::to_string(&line).context("cannot encode a line")?;
        let mut out = self.out.lock();
        let written = writeln!(out, "{text}").and_then(|()| out.flush());
        match written {
            Err(err) if err.kind() == std::io::ErrorKind::BrokenPipe => Err(ReaderGone.into()),
            other => other.context("cannot write to stdout"),
        }
    }

    fn lines<I: Send + 'static>(&mut self, app: &App<I>, change: &Change) -> Vec<RemoteLine> {
        let name = |host: usize| app.name(host).to_owned();
        let line = match change {
            Change::Host(host) => return self.host_lines(app, *host),
            Change::Row(changed) => RemoteLine::Row {
                host: name(changed.host),
                change: match changed.change {
                    RowChange::Added => RowChangeWord::Added,
                    RowChange::Changed => RowChangeWord::Changed,
                    RowChange::Removed => RowChangeWord::Removed,
                },
                row: changed.row.clone(),
            },
            Change::Snapshot { host, rows, whole } => RemoteLine::Snapshot {
                host: name(*host),
                rows: *rows,
                whole: *whole,
            },
            Change::Subscribed(host) => RemoteLine::Subscribed { host: name(*host) },
            Change::Edge(host, edge) => RemoteLine::Edge {
                host: name(*host),
                edge: edge.clone(),
            },
            Change::Card { host, pane, card } => RemoteLine::Card {
                host: name(*host),
                pane: pane.clone(),
                card: card.clone(),
            },
            Change::CardChanged { host, pane } => {
                let held = app.client().card(*host, pane);
                RemoteLine::CardChanged {
                    host: name(*host),
                    pane: pane.clone(),
                    binder: held.and_then(|h| h.binder()).cloned(),
                    reason: held.and_then(|h| h.changed.clone()),
                }
            }
            Change::Receipt {
                host,
                receipt,
                retry,
            } => RemoteLine::Receipt {
                host: name(*host),
                receipt: receipt.clone(),
                retry: *retry,
            },
            Change::Window {
                host,
                window,
                older,
            } => RemoteLine::Window {
                host: name(*host),
                pane: window.pane.clone(),
                older: *older,
                window: window.clone(),
            },
            Change::Event { host, pane, event } => RemoteLine::Event {
                host: name(*host),
                pane: pane.clone(),
                event: event.clone(),
            },
            Change::Receipts { host, receipts } => RemoteLine::Receipts {
                host: name(*host),
                receipts: receipts.clone(),
            },
            Change::Failed {
                host,
                pane,
                what,
                code,
                message,
            } => RemoteLine::Failed {
                host: name(*host),
                pane: pane.clone(),
                request: (*what).to_owned(),
                code: code.clone(),
                message: message.clone(),
            },
            Change::Attention { host, row } => RemoteLine::Attention {
                host: name(*host),
                pane: row.pane.clone(),
                agent: row.agent.clone(),
                detail: row.detail.clone(),
                episode_ms: row.episode_ms,
                locator: row.locator.clone(),
                repo: row.repo.clone(),
                branch: row.branch.clone(),
            },
        };
        vec![line]
    }

    fn host_lines<I: Send + 'static>(&mut self, app: &App<I>, index: usize) -> Vec<RemoteLine> {
        let host = app.client().fleet().host(index);
        let link = match &host.link {
            Link::Connecting => LinkLine::Connecting,
            Link::Connected => LinkLine::Connected {
                scopes: host.hello.as_ref().map(|h| h.scopes.clone()),
                host_name: host.hello.as_ref().map(|h| h.host.clone()),
                tool_version: host.hello.as_ref().map(|h| h.tool_version.clone()),
            },
            Link::Down {
                reason,
                retry_at_ms,
            } => LinkLine::Disconnected {
                reason: reason.clone(),
                retry_in_ms: retry_at_ms.map(|at| at.saturating_sub(now_ms())),
            },
            Link::Revoked { reason } => LinkLine::Revoked {
                reason: reason.clone(),
            },
        };
        let line = RemoteLine::Host {
            host: host.name.clone(),
            link,
        };
        let mut lines = Vec::new();
        let (said, faults) = &mut self.said[index];
        // A retry time changes every attempt; the link is what is news.
        let comparable = |line: &RemoteLine| {
            let mut line = line.clone();
            if let RemoteLine::Host {
                link: LinkLine::Disconnected { retry_in_ms, .. },
                ..
            } = &mut line
            {
                *retry_in_ms = None;
            }
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
            lines.push(RemoteLine::Fault {
                host: host.name.clone(),
                message: fault.message.clone(),
                count: fault.count,
            });
        }
        lines
    }
}

fn fleet_line<I: Send + 'static>(app: &App<I>, filter: &Filter) -> RemoteLine {
    let fleet = app.client().fleet();
    let now = now_ms();
    let rows = fleet
        .shown(filter)
        .into_iter()
        .map(|(host, row)| FleetRowLine {
            host: app.name(host).to_owned(),
            waited_ms: (row.state == schema::State::Blocked)
                .then(|| row.since_ms.map(|since| now.saturating_sub(since)))
                .flatten(),
            stale: fleet.host(host).stale(),
            row: row.clone(),
        })
        .collect();
    let hosts = fleet
        .hosts()
        .iter()
        .enumerate()
        .map(|(index, host)| {
            let counts = fleet.counts(index);
            FleetHostLine {
                host: host.name.clone(),
                link: match host.link {
                    Link::Connecting => LinkWord::Connecting,
                    Link::Connected => LinkWord::Connected,
                    Link::Down { .. } => LinkWord::Disconnected,
                    Link::Revoked { .. } => LinkWord::Revoked,
                },
                last_news_ms: host.last_news_ms,
                agents: counts.total,
                blocked: counts.blocked,
                working: counts.working,
                idle: counts.idle,
                unknown: counts.unknown,
                done: counts.done,
            }
        })
        .collect();
    RemoteLine::Fleet { hosts, rows }
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
            (
                r#"{"cmd":"fly"}"#,
                "unknown variant `fly`, expected one of `card`, `approve`",
            ),
            (r#"{"pane":"%1"}"#, "missing field `cmd`"),
            (
                r#"{"cmd":"approve","host":"a","binder":{"expect_episode_ms":5}}"#,
                "missing field `pane`",
            ),
            (
                r#"{"cmd":"approve","host":"a","pane":1,"binder":{"expect_episode_ms":5}}"#,
                "invalid type: integer `1`, expected a string",
            ),
            (
                r#"{"cmd":"approve","host":"a","pane":"%1","binder":{"expect_episode_ms":5},"force":true}"#,
                "unknown field `force`, expected one of `host`, `pane`, `binder`",
            ),
            (
                r#"{"cmd":"approve","host":"a","pane":"%1"}"#,
                "`binder` is missing: `approve` quotes the binder of the card line it answers (`card.binder`)",
            ),
            (
                r#"{"cmd":"reject","host":"a","pane":"%1","binder":{"episode":5}}"#,
                "missing field `expect_episode_ms`",
            ),
            (
                r#"{"cmd":"interrupt","host":"a","pane":"%1","binder":{"expect_episode_ms":5}}"#,
                "unknown field `binder`, expected `host` or `pane`",
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
