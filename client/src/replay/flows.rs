//! The flows: for each golden session a client can cause, the user actions that make this client
//! send what the session's client half sends; for every other session, why it does not apply to
//! a client. A flow is what a UI test of the app would script (open the fleet filtered to a
//! session, open a pane's card, approve, page the transcript back, open its third event); the
//! frames come from the client, and the values it echoes (binders, cursors) from the host's
//! answers.

use schema::Selector;

use client_core::answer::Choice;
use client_core::client::{Command, EventRef};

/// The name of the one host a replay talks to.
pub const HOST: &str = "replay";

/// One user action, or a wait.
#[derive(Debug, Clone, PartialEq)]
pub enum Step {
    /// Do this, and wait for its answer.
    Do(Command),
    /// Answer the card of this pane read by an earlier step, quoting its binder as an app quotes
    /// the card on its screen, and wait for the receipt.
    Answer {
        /// Pane id.
        pane: String,
        /// The choice.
        choice: Choice,
    },
    /// Wait until this many edges arrived since the start.
    Edges(usize),
    /// Wait until the host ends the connection.
    End,
}

/// The steps of one case's connection.
#[derive(Debug, Clone, PartialEq)]
pub struct Flow {
    /// In order.
    pub steps: Vec<Step>,
}

fn selector(json: &str) -> Option<Selector> {
    Some(serde_json::from_str(json).expect("the flows' selectors are valid"))
}

fn snapshot(json: Option<&str>) -> Step {
    Step::Do(Command::Snapshot {
        host: HOST.into(),
        selector: json.and_then(selector),
    })
}

/// What a session's barrier step expects: a snapshot of a session no fleet has.
fn barrier() -> Step {
    snapshot(Some(r#"{"session":"corral-kit-barrier"}"#))
}

fn subscribe(json: Option<&str>) -> Step {
    Step::Do(Command::Subscribe {
        host: HOST.into(),
        selector: json.and_then(selector),
    })
}

fn card(pane: &str) -> Step {
    Step::Do(Command::Card {
        host: HOST.into(),
        pane: pane.into(),
    })
}

fn choose(pane: &str, choice: Choice) -> Step {
    Step::Answer {
        pane: pane.into(),
        choice,
    }
}

fn window(pane: &str, last: Option<u32>) -> Step {
    Step::Do(Command::Window {
        host: HOST.into(),
        pane: pane.into(),
        older: false,
        last,
        budget: None,
    })
}

fn older(pane: &str, last: Option<u32>) -> Step {
    Step::Do(Command::Window {
        host: HOST.into(),
        pane: pane.into(),
        older: true,
        last,
        budget: None,
    })
}

fn event(pane: &str, index: usize) -> Step {
    Step::Do(Command::Event {
        host: HOST.into(),
        pane: pane.into(),
        which: EventRef::Index(index),
    })
}

/// A corpus read whole (up to 1000 events), then events opened by their place in it.
fn corpus(pane: &str, events: &[usize]) -> Vec<Step> {
    let mut steps = vec![window(pane, Some(1000))];
    steps.extend(events.iter().map(|index| event(pane, *index)));
    steps.push(barrier());
    steps
}

/// A corpus read a page at a time to its head (three pages), then events opened by their place.
fn paged_corpus(pane: &str, events: &[usize]) -> Vec<Step> {
    let mut steps = vec![window(pane, None), older(pane, None), older(pane, None)];
    steps.extend(events.iter().map(|index| event(pane, *index)));
    steps.push(barrier());
    steps
}

/// The flow of a case's connection, or why there is none.
pub fn flow(case: &str, conn: &str) -> Result<Flow, String> {
    let steps = match (case, conn) {
        // The handshake: connecting is the action; the barrier proves nothing else was sent.
        (
            "handshake.default-interval" | "handshake.hello-scopes" | "handshake.scope-vocabulary",
            "main",
        )
        | ("handshake.two-devices", "main" | "b") => vec![barrier()],
        // A device the host refuses: the refusal, the end, no retry.
        ("handshake.unknown-device" | "handshake.store-absent", "main") => vec![Step::End],

        // The fleet, whole or filtered by the user.
        ("snapshot.whole-fleet" | "ls.json", "main") => vec![snapshot(None)],
        ("snapshot.selector-agent", "main") => vec![snapshot(Some(r#"{"agent":"gemini"}"#))],
        ("snapshot.selector-branch", "main") => {
            vec![snapshot(Some(r#"{"branch":"feature/login"}"#))]
        }
        ("snapshot.selector-done", "main") => vec![snapshot(Some(r#"{"state":["done"]}"#))],
        ("snapshot.episode" | "snapshot.state-outside-vocabulary", "main") => {
            vec![snapshot(Some(r#"{"session":"ops","agent":"claude"}"#))]
        }
        ("snapshot.selector-and", "main") => vec![
            snapshot(Some(
                r#"{"session":"work","repo":"api","state":["blocked","unknown"]}"#,
            )),
            snapshot(Some(r#"{"session":"ops","agent":"opencode"}"#)),
        ],
        ("snapshot.selector-repo", "main") => vec![
            snapshot(Some(r#"{"repo":"web"}"#)),
            snapshot(Some(r#"{"repo":"api"}"#)),
        ],
        ("snapshot.selector-session", "main") => vec![
            snapshot(Some(r#"{"session":"ops"}"#)),
            snapshot(Some(r#"{"session":"op"}"#)),
        ],
        ("snapshot.selector-state", "main") => vec![
            snapshot(Some(r#"{"state":["working","unknown"]}"#)),
            snapshot(Some(r#"{"state":["idle"]}"#)),
        ],
        ("snapshot.selector-unknown-state", "main") => vec![
            snapshot(Some(r#"{"state":["sleeping"]}"#)),
            snapshot(Some(r#"{"state":["sleeping","working"]}"#)),
        ],
        ("snapshot.selector-near-misses", "main") => [
            r#"{"session":"op"}"#,
            r#"{"session":"ps"}"#,
            r#"{"session":"OPS"}"#,
            r#"{"session":"opsx"}"#,
            r#"{"agent":"gem"}"#,
            r#"{"agent":"emin"}"#,
            r#"{"agent":"Gemini"}"#,
            r#"{"agent":"gemini-cli"}"#,
            r#"{"repo":"ap"}"#,
            r#"{"repo":"pi"}"#,
            r#"{"repo":"API"}"#,
            r#"{"repo":"api-login"}"#,
            r#"{"branch":"feature"}"#,
            r#"{"branch":"login"}"#,
            r#"{"branch":"Feature/Login"}"#,
            r#"{"branch":"feature/login/x"}"#,
        ]
        .into_iter()
        .map(|json| snapshot(Some(json)))
        .collect(),
        ("pane-options.transcript", "main") => {
            vec![
                snapshot(Some(r#"{"session":"ops","state":["idle"]}"#)),
                barrier(),
            ]
        }
        ("snapshot.tmux-failure", "main") => vec![
            snapshot(None),
            snapshot(Some(r#"{"agent":"opencode"}"#)),
            barrier(),
        ],

        // Following the fleet: converge, subscribe, watch edges.
        ("serve.no-server-logged", "main") => {
            vec![snapshot(None), subscribe(None), snapshot(None), barrier()]
        }
        ("subscribe.edges" | "subscribe.appear-vanish", "main") => {
            vec![subscribe(None), Step::Edges(3), barrier()]
        }
        ("subscribe.moves-within-a-cycle", "main") => vec![
            subscribe(Some(r#"{"session":"ops","agent":"claude"}"#)),
            Step::Edges(2),
            barrier(),
        ],
        ("subscribe.selector-edges", "main") => vec![
            subscribe(Some(r#"{"state":["blocked"]}"#)),
            Step::Edges(2),
            barrier(),
        ],
        ("pane-options.only-source", "main") => vec![
            subscribe(Some(r#"{"agent":"codex"}"#)),
            Step::Edges(1),
            barrier(),
        ],
        ("versioning.unknown-keys", "main") => vec![
            snapshot(Some(r#"{"session":"ops","agent":"codex"}"#)),
            subscribe(Some(r#"{"agent":"codex"}"#)),
            Step::Edges(1),
            barrier(),
        ],
        ("pane-options.one-list-panes-per-cycle", "main") => vec![
            snapshot(Some(r#"{"agent":"gemini"}"#)),
            subscribe(None),
            barrier(),
        ],
        ("subscribe.requests-while-streaming", "main") => vec![
            subscribe(None),
            snapshot(Some(r#"{"agent":"opencode"}"#)),
            Step::Edges(1),
            snapshot(Some(r#"{"agent":"opencode"}"#)),
        ],
        // The stream drops and the client comes back: each connection is one replay.
        ("subscribe.reconnect", "main") => vec![
            snapshot(Some(r#"{"session":"work","agent":"codex"}"#)),
            subscribe(None),
            Step::Edges(1),
        ],
        ("subscribe.reconnect", "b") => vec![
            snapshot(Some(r#"{"session":"work","agent":"codex"}"#)),
            subscribe(None),
            Step::Edges(1),
            barrier(),
        ],
        // A device that subscribes after a move starts from the fleet as it is then.
        ("subscribe.late-joiner", "main") => vec![subscribe(None), Step::Edges(2), barrier()],
        ("subscribe.late-joiner", "late") => vec![subscribe(None), Step::Edges(1), barrier()],
        // An agent's hook moves a pane: one edge per move, whichever read saw it.
        ("subscribe.hook-move-once", "main") => vec![subscribe(None), Step::Edges(2), barrier()],
        ("subscribe.hook-move-selector", "main") => vec![
            subscribe(Some(r#"{"agent":"codex"}"#)),
            Step::Edges(2),
            barrier(),
        ],
        // Revoked while connected: the refusal, the end, no retry.
        ("revoke.mid-stream" | "revoke.hook-move", "main") => vec![subscribe(None), Step::End],
        ("revoke.next-request", "main") => vec![
            snapshot(Some(r#"{"agent":"opencode"}"#)),
            snapshot(Some(r#"{"agent":"opencode"}"#)),
            Step::End,
        ],

        // Cards.
        ("card.hook-lane", "main") => vec![
            snapshot(Some(
                r#"{"session":"work","agent":"claude","state":["blocked"]}"#,
            )),
            card("%0"),
            barrier(),
        ],
        ("card.no-manifest", "main") => vec![card("%6"), barrier()],
        ("card.api-lane", "main") => {
            vec![card("%2"), card("%2"), card("%2"), card("%2"), barrier()]
        }
        ("card.question", "main") => {
            let mut steps: Vec<Step> = (0..5).map(|_| card("%2")).collect();
            steps.push(barrier());
            steps
        }
        ("card.question-timeout", "main") => vec![card("%2"), card("%2"), barrier()],
        ("card.informational", "main") => {
            let mut steps: Vec<Step> = ["%6", "%7", "%9", "%8", "%2", "%6", "%7", "%9", "%8", "%8"]
                .into_iter()
                .map(card)
                .collect();
            steps.push(barrier());
            steps
        }
        ("card.only-pane-read-fails", "main") => {
            let mut steps: Vec<Step> = ["%10", "%10", "%0", "%2", "%8", "%999"]
                .into_iter()
                .map(card)
                .collect();
            steps.push(barrier());
            steps
        }
        ("card.hook-lane-from-event", "main") => vec![
            card("%0"),
            snapshot(Some(r#"{"agent":"claude"}"#)),
            card("%0"),
            barrier(),
        ],
        ("card.codex-bash-rollout", "main") => vec![window("%6", Some(1)), card("%6"), barrier()],
        ("card.pending-call-other-tool" | "card.pending-call-stamped-tool-only", "main") => {
            vec![window("%0", Some(1)), card("%0"), barrier()]
        }
        ("card.transcript-tail", "main") => vec![
            window("%0", Some(1)),
            card("%0"),
            card("%0"),
            window("%1", Some(2)),
            card("%1"),
            card("%0"),
            barrier(),
        ],
        ("card.none", "main") => vec![
            snapshot(Some(r#"{"agent":"codex"}"#)),
            card("%1"),
            card("%0"),
            card("%0"),
            card("%0"),
            window("%1", Some(2)),
            barrier(),
        ],
        ("transcript.gemini-unsupported", "main") => vec![
            window("%7", None),
            window("%8", Some(5)),
            card("%7"),
            card("%8"),
            snapshot(Some(r#"{"agent":"gemini"}"#)),
            barrier(),
        ],

        // Answering what a card asks.
        ("dispatch.hook-lane-live", "main") => vec![
            card("%10"),
            choose("%10", Choice::Approve),
            choose("%10", Choice::Approve),
            barrier(),
        ],

        // Transcripts: the newest page, paging back, an event in full.
        ("window.claude-corpus", "main") => {
            vec![
                window("%0", None),
                older("%0", None),
                older("%0", None),
                barrier(),
            ]
        }
        ("window.codex-corpus", "main") => {
            vec![
                window("%1", None),
                older("%1", None),
                older("%1", None),
                barrier(),
            ]
        }
        ("window.bookkeeping-runs", "main") => vec![
            window("%1", Some(5)),
            older("%1", Some(5)),
            event("%1", 12),
            barrier(),
        ],
        ("transcript.store-walk", "main") => vec![window("%0", Some(2)), barrier()],
        ("transcript.store-walk", "store") => vec![
            window("%0", Some(2)),
            window("%1", Some(2)),
            window("%1", Some(2)),
            window("%0", Some(2)),
            window("%0", Some(2)),
            barrier(),
        ],
        // Events in full, picked by their place in the pages loaded (newest first), as a person
        // scrolling the transcript picks them.
        ("event.claude-2.0-corpus", "main") => corpus("%0", &[53, 38, 12, 0]),
        ("event.claude-2.1-early-corpus", "main") => corpus("%1", &[33, 21, 19, 34]),
        ("event.claude-2.1-late-corpus", "main") => corpus("%2", &[50, 43, 31, 7]),
        ("event.claude-2.1-subagent-corpus", "main") => corpus("%3", &[13, 5, 4]),
        ("event.codex-0.104-corpus", "main") => corpus("%6", &[41, 30, 24, 19]),
        ("event.codex-0.40-corpus", "main") => corpus("%5", &[44, 33, 24, 9]),
        ("event.codex-legacy-corpus", "main") => corpus("%4", &[18, 14, 1]),
        ("event.claude-corpus", "main") => paged_corpus(
            "%0",
            &[
                0, 1, 2, 3, 4, 5, 6, 7, 9, 10, 11, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24,
                26, 27, 28, 29, 8, 12, 25,
            ],
        ),
        ("event.codex-corpus", "main") => paged_corpus("%1", &(0..=26).collect::<Vec<_>>()),
        ("event.stop-failure", "main") => vec![
            snapshot(None),
            card("%0"),
            snapshot(None),
            snapshot(None),
            barrier(),
        ],
        ("card.screen-lane", "main") => {
            vec![card("%0"), card("%6"), card("%7"), card("%9"), barrier()]
        }
        ("window.sparse-terabyte", "main") => vec![
            window("%0", Some(5)),
            older("%0", Some(5)),
            event("%0", 0),
            barrier(),
        ],
        _ => {
            return Err(match verdict(case) {
                Verdict::Flow => format!("no flow for its connection {conn}"),
                Verdict::NotForAClient(reason) => {
                    format!("it does not apply to a client: {reason}")
                }
                Verdict::NotYet(reason) => format!("no flow is written for it yet: {reason}"),
                Verdict::Unknown => "a session this harness does not know".into(),
            });
        }
    };
    Ok(Flow { steps })
}

/// The sessions that do not apply to a client, by case (a trailing `*` matches a prefix), and
/// why: each exercises what no user of a client causes. Checked after [`FLOWS`].
pub const NOT_FOR_A_CLIENT: &[(&str, &str)] = &[
    (
        "framing.*",
        "sends malformed bytes on purpose; a client encodes every line through the wire types",
    ),
    (
        "handshake.downgrade",
        "sends schema 2 on purpose; this client speaks schema 1 only",
    ),
    ("handshake.later-frame-schema", "sends schema 2 on purpose"),
    (
        "handshake.hello-request",
        "sends hellos missing required keys on purpose",
    ),
    (
        "handshake.request-before-hello",
        "sends a request before hello; the client's session always greets first",
    ),
    (
        "handshake.second-hello",
        "says hello twice; the client's session greets once per connection",
    ),
    (
        "handshake.claim-logged",
        "says hello twice; the client's session greets once per connection",
    ),
    (
        "error.vocabulary",
        "sends bad input on purpose to provoke every error code",
    ),
    (
        "subscribe.second-subscribe",
        "subscribes twice on one connection; the client subscribes once",
    ),
    (
        "subscribe.snapshots",
        "follows a snapshot stream (events false); this client follows edges",
    ),
    (
        "subscribe.cadence",
        "follows a snapshot stream (events false); this client follows edges",
    ),
    (
        "subscribe.empty-selection",
        "follows a snapshot stream (events false); this client follows edges",
    ),
    (
        "subscribe.title-change-invisible",
        "follows a snapshot stream (events false); this client follows edges",
    ),
    (
        "serve.*",
        "the host's process: signals, a reader that stops or closes on cue, the connection cap, a broken store; a client sees only the end",
    ),
    ("files.*", "the host's runtime dir"),
    (
        "shared.*",
        "the host's runtime dir: the cycle reads its serve processes share",
    ),
    ("config.*", "the host's config file"),
    ("cli.*", "the host's own command line"),
    ("device.*", "the host's `corral device` commands"),
    ("ls.no-server", "the host's `corral ls`"),
    ("daemon.*", "the host's notification daemon"),
    (
        "push.*",
        "corral's own push path between cycles (a host's improvement a client may observe, never a rule it may rely on), with a ten-minute cycle and listeners killed on purpose",
    ),
    ("notify.*", "the host's notification daemon and sinks"),
    ("osc.*", "the host's terminal sequences"),
    ("ring.*", "the host's transition ring"),
    ("trigger.*", "the host's notification triggers"),
    ("mute.*", "the host's `corral mute`"),
    ("detached.*", "the host's detached actions"),
    (
        "not-found.*",
        "names panes, hosts or cursors the client never saw: a client answers and pages only what a host showed it",
    ),
    (
        "transcript.not-found",
        "sends an event cursor it made up; a client only echoes the host's cursors",
    ),
    (
        "transcript.unsupported",
        "sends an event cursor it made up; a client only echoes the host's cursors",
    ),
    (
        "cursor.*",
        "replays edited or stale cursors against rewritten files to test the host's cursor checks; a client only echoes the last cursor it was given",
    ),
    (
        "window.budget-*",
        "probes the host's clamps with budgets no terminal size gives",
    ),
    (
        "window.last",
        "asks for 0 and 5000 events to probe the host's clamps",
    ),
    (
        "dispatch.*",
        "dispatches under slots and binders the session picks to test the host's gates and ledger (arbitrary slots, stale or absent binders, no card read first); this client answers only a card it read, under the slot it derives",
    ),
    (
        "scope.*",
        "dispatches every action to a pane that does not exist to test the host's scope gate; the client dispatches only from a card",
    ),
    (
        "receipts.filters",
        "dispatches under arbitrary slots, then filters by them",
    ),
    (
        "snapshot.tmux-unreadable",
        "rejects a question whose card failed to load; a client answers only a card it has",
    ),
    (
        "event.hook-lane",
        "answers under slots named after the request id (`<req>:approve`), not the slot this client derives",
    ),
    (
        "event.question-hook-lane",
        "replies under slots of its own (`<req>:reply-1`) and sends a one-answer reply to a two-question card, which this client refuses before sending",
    ),
    (
        "event.permission-episodes",
        "approves a stale episode it quotes by hand under a slot of its own",
    ),
];

/// Sessions a client can play that have no flow yet, and what writing it takes (none now: a new
/// session goes here or in a list above, or the coverage test fails).
pub const NOT_YET: &[(&str, &str)] = &[];

/// Whether a case has a flow, and why not when it has none.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// It has one.
    Flow,
    /// It does not apply to a client.
    NotForAClient(&'static str),
    /// It applies; no flow is written yet.
    NotYet(&'static str),
    /// Neither list names it.
    Unknown,
}

fn matches(pattern: &str, case: &str) -> bool {
    match pattern.split_once('*') {
        Some((prefix, suffix)) => {
            case.len() >= prefix.len() + suffix.len()
                && case.starts_with(prefix)
                && case.ends_with(suffix)
        }
        None => case == pattern,
    }
}

/// What the harness makes of a case.
pub fn verdict(case: &str) -> Verdict {
    if FLOWS.contains(&case) {
        return Verdict::Flow;
    }
    let find = |list: &[(&'static str, &'static str)]| {
        list.iter().find(|(p, _)| matches(p, case)).map(|(_, r)| *r)
    };
    if let Some(reason) = find(NOT_YET) {
        Verdict::NotYet(reason)
    } else if let Some(reason) = find(NOT_FOR_A_CLIENT) {
        Verdict::NotForAClient(reason)
    } else {
        Verdict::Unknown
    }
}

/// Every list, for `--replay --list`: the cases with a flow, then the patterns of the others.
pub fn table() -> Vec<(String, String)> {
    let mut rows: Vec<(String, String)> = FLOWS
        .iter()
        .map(|case| ((*case).to_owned(), "flow".to_owned()))
        .collect();
    for (pattern, reason) in NOT_YET {
        rows.push(((*pattern).to_owned(), format!("not yet: {reason}")));
    }
    for (pattern, reason) in NOT_FOR_A_CLIENT {
        rows.push(((*pattern).to_owned(), format!("not for a client: {reason}")));
    }
    rows
}

/// Every case with a flow (on each of its connections).
pub const FLOWS: &[&str] = &[
    "handshake.default-interval",
    "handshake.hello-scopes",
    "handshake.scope-vocabulary",
    "handshake.two-devices",
    "handshake.unknown-device",
    "handshake.store-absent",
    "snapshot.whole-fleet",
    "ls.json",
    "snapshot.selector-agent",
    "snapshot.selector-branch",
    "snapshot.selector-done",
    "snapshot.episode",
    "snapshot.state-outside-vocabulary",
    "snapshot.selector-and",
    "snapshot.selector-repo",
    "snapshot.selector-session",
    "snapshot.selector-state",
    "snapshot.selector-unknown-state",
    "snapshot.selector-near-misses",
    "pane-options.transcript",
    "snapshot.tmux-failure",
    "serve.no-server-logged",
    "subscribe.edges",
    "subscribe.appear-vanish",
    "subscribe.moves-within-a-cycle",
    "subscribe.selector-edges",
    "pane-options.only-source",
    "versioning.unknown-keys",
    "pane-options.one-list-panes-per-cycle",
    "subscribe.requests-while-streaming",
    "subscribe.reconnect",
    "subscribe.late-joiner",
    "subscribe.hook-move-once",
    "subscribe.hook-move-selector",
    "revoke.mid-stream",
    "revoke.hook-move",
    "revoke.next-request",
    "card.hook-lane",
    "card.no-manifest",
    "card.api-lane",
    "card.question",
    "card.question-timeout",
    "card.informational",
    "card.only-pane-read-fails",
    "card.hook-lane-from-event",
    "card.codex-bash-rollout",
    "card.pending-call-other-tool",
    "card.pending-call-stamped-tool-only",
    "card.transcript-tail",
    "card.none",
    "transcript.gemini-unsupported",
    "dispatch.hook-lane-live",
    "window.claude-corpus",
    "window.codex-corpus",
    "window.sparse-terabyte",
    "window.bookkeeping-runs",
    "transcript.store-walk",
    "event.claude-2.0-corpus",
    "event.claude-2.1-early-corpus",
    "event.claude-2.1-late-corpus",
    "event.claude-2.1-subagent-corpus",
    "event.codex-0.104-corpus",
    "event.codex-0.40-corpus",
    "event.codex-legacy-corpus",
    "event.claude-corpus",
    "event.codex-corpus",
    "event.stop-failure",
    "card.screen-lane",
];
