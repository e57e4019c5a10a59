//! Every frame variant, every card, every event kind and every local document round-trips: a
//! value encodes, decodes to an equal value, and encodes again to the same bytes. The example
//! files under `tests/data` decode and re-encode byte-identically too.

use schema::card::{
    CardOption, PendingCall, PermissionCard, Question, QuestionCard, QuestionOption,
};
use schema::notify::{Completion, Fire, LogEntry, NotifyLogLine, NotifyPayload, Transition};
use schema::row::{FleetRow, Local, LsDocument, Row, Wire};
use schema::transcript::{
    AssistantText, Attachment, Bookkeeping, Compaction, EventBody, PermissionRequest, SessionMeta,
    SubagentRef, Thinking, ToolCall, ToolResult, TurnBoundary, TypeName, Usage, UserMessage,
};
use schema::*;
use serde::Serialize;
use serde::de::DeserializeOwned;

use crate::common::{data, data_lines};

fn row() -> FleetRow {
    Row {
        pane: "%3".into(),
        agent: "claude".into(),
        state: State::Blocked,
        detail: Some(Detail::Permission),
        since_ms: Some(1_763_780_000_000),
        episode_ms: 1_763_780_000_000,
        locator: "work:1.0".into(),
        view: Wire {},
        attention: false,
        done: false,
        session: "work".into(),
        transcript: Some("/home/ada/t.jsonl".into()),
        permission_request: Some("req-7f3a".into()),
        stamped_at_ms: Some(1_763_780_000_001),
        context: Some(41),
        context_at_ms: Some(1_763_779_990_000),
        muted: false,
        repo: Some("corral".into()),
        branch: Some("main".into()),
        worktree: Some("/home/ada/src/corral".into()),
        pending_tool: Some("Bash".into()),
        pending_call: Some("toolu_01".into()),
        server: "/tmp/tmux-1000/default".into(),
        host: "studio".into(),
    }
}

fn bare_row() -> FleetRow {
    Row {
        state: State::Unknown,
        detail: None,
        since_ms: None,
        episode_ms: 0,
        attention: true,
        done: true,
        transcript: None,
        permission_request: None,
        stamped_at_ms: None,
        context: None,
        context_at_ms: None,
        muted: true,
        repo: None,
        branch: None,
        worktree: None,
        pending_tool: None,
        pending_call: None,
        ..row()
    }
}

fn binder() -> Binder {
    Binder {
        expect_episode_ms: 1_763_780_000_000,
        expect_permission_request: Some("req-7f3a".into()),
    }
}

fn header(kind: EventKind) -> EventHeader {
    EventHeader {
        cursor: Cursor("c1.OTk5.YWJj".into()),
        kind,
        ts: Some("2026-11-22T03:00:00.000Z".into()),
        preview: Some("cargo test".into()),
        body: None,
    }
}

fn unknown_token<T: DeserializeOwned>(token: &str) -> T {
    serde_json::from_value(serde_json::Value::from(token)).unwrap()
}

/// Every event kind, the unknown one included.
fn event_kinds() -> Vec<EventKind> {
    let input = serde_json::from_str::<serde_json::Value>(r#"{"kind":"hologram"}"#).unwrap();
    vec![
        EventKind::SessionMeta(SessionMeta {
            agent: Some("claude".into()),
            session_id: Some("6f1c".into()),
            cwd: Some("/home/ada".into()),
            version: Some("2.1.3".into()),
            model: None,
        }),
        EventKind::UserMessage(UserMessage {
            bytes: 31,
            attachments: 1,
        }),
        EventKind::AssistantText(AssistantText { bytes: 120 }),
        EventKind::Thinking(Thinking {
            bytes: 900,
            redacted: true,
        }),
        EventKind::ToolCall(ToolCall {
            name: "Bash".into(),
            call_id: Some("toolu_01".into()),
            arg_keys: vec!["command".into(), "description".into()],
            bytes: 83,
        }),
        EventKind::ToolResult(ToolResult {
            call_id: None,
            status: ToolStatus::Pending,
            bytes: 0,
        }),
        EventKind::PermissionRequest(PermissionRequest {
            tool: "Bash".into(),
            call_id: None,
        }),
        EventKind::TurnBoundary(TurnBoundary {
            boundary: Boundary::End,
            reason: Some("stop".into()),
        }),
        EventKind::Usage(Usage {
            input: Some(1200),
            output: Some(340),
            total: None,
            context_window: Some(200_000),
            cost_usd: Some(0.0125),
        }),
        EventKind::SubagentRef(SubagentRef {
            child_id: "agent-2".into(),
            external_file: false,
        }),
        EventKind::Compaction(Compaction { compaction: None }),
        EventKind::Attachment(Attachment {
            attachment: "image/png".into(),
            bytes: 40960,
        }),
        EventKind::Bookkeeping(Bookkeeping {
            type_name: "progress".into(),
            records: 57,
        }),
        EventKind::Unknown(TypeName {
            type_name: "x-future".into(),
        }),
        serde_json::from_value(input).unwrap(),
    ]
}

/// One request of every variant, with and without its optional fields.
pub fn requests() -> Vec<Request> {
    let selector = Selector {
        session: Some("work".into()),
        repo: Some("corral".into()),
        branch: Some("main".into()),
        agent: Some("claude".into()),
        state: Some(vec![
            StateFilter::Blocked,
            StateFilter::Done,
            unknown_token("asleep"),
        ]),
    };
    let dispatch = Dispatch {
        slot: "%3:1763780000000:approve".into(),
        host: "studio".into(),
        pane: "%3".into(),
        action: Action::Approve,
        binder: binder(),
        text: None,
        answers: None,
    };
    vec![
        Request::Hello(Hello {
            app: "corral-ios".into(),
            app_version: "1.4.0".into(),
            device: "d".into(),
        }),
        Request::Snapshot(SnapshotRequest { selector: None }),
        Request::Snapshot(SnapshotRequest {
            selector: Some(selector.clone()),
        }),
        Request::Subscribe(Subscribe {
            events: true,
            selector: None,
        }),
        Request::Subscribe(Subscribe {
            events: false,
            selector: Some(selector),
        }),
        Request::Card(CardRequest { pane: "%3".into() }),
        Request::Window(WindowRequest {
            pane: "%3".into(),
            last: None,
            before: None,
            budget: None,
        }),
        Request::Window(WindowRequest {
            pane: "%3".into(),
            last: Some(50),
            before: Some(Cursor("c1.OTk5.YWJj".into())),
            budget: Some(Budget {
                header_bytes: Some(64),
                read_bytes: None,
                frame_bytes: Some(1024),
            }),
        }),
        Request::Event(EventRequest {
            pane: "%3".into(),
            cursor: Cursor("c1.OTk5.YWJj".into()),
        }),
        Request::Dispatch(dispatch.clone()),
        Request::Dispatch(Dispatch {
            action: Action::Steer,
            text: Some("run the tests first".into()),
            binder: Binder::default(),
            ..dispatch.clone()
        }),
        Request::Dispatch(Dispatch {
            action: Action::QuestionReply,
            answers: Some(vec![
                vec!["Yes".into()],
                vec!["src/".into(), "tests/".into()],
            ]),
            ..dispatch.clone()
        }),
        Request::Dispatch(Dispatch {
            action: unknown_token("exec:rm"),
            ..dispatch
        }),
        Request::Receipts(ReceiptsRequest {
            slot: Some("s".into()),
            since_ms: Some(5),
        }),
        Request::Receipts(ReceiptsRequest::default()),
    ]
}

/// One response of every variant, every card and every event kind.
pub fn responses() -> Vec<Response> {
    let receipt = Receipt {
        slot: "%3:1763780000000:approve".into(),
        pane: "%3".into(),
        action: Action::Approve,
        outcome: Outcome::Sent,
        reason: None,
        exit_code: 0,
        cached: false,
        device: "SHA256:q3b1YwZk".into(),
        at_ms: 1_763_780_003_000,
    };
    let input = serde_json::json!({"zeta": 1, "alpha": [true, null], "mid": {"b": 2, "a": 1}});
    let mut out = vec![
        Response::Hello(HelloReply {
            host: "studio".into(),
            tool_version: "0.1.0".into(),
            reconcile_interval_ms: 2000,
            scopes: vec![Scope::Read, Scope::ActAnswer, unknown_token("act:teleport")],
        }),
        Response::Snapshot(Snapshot {
            agents: vec![row(), bare_row()],
        }),
        Response::Snapshot(Snapshot::default()),
        Response::Edge(Edge {
            at_ms: 1,
            pane: "%3".into(),
            agent: "claude".into(),
            from: Some(State::Working),
            to: Some(State::Blocked),
            detail: Some(unknown_token("sandbox_escape")),
            locator: "work:1.0".into(),
            repo: Some("corral".into()),
            branch: None,
        }),
        Response::Edge(Edge {
            at_ms: 2,
            pane: "%9".into(),
            agent: "gemini".into(),
            from: None,
            to: Some(State::Idle),
            detail: None,
            locator: "play:0.0".into(),
            repo: None,
            branch: None,
        }),
        Response::Card(Card::None),
        Response::Card(Card::Permission(PermissionCard {
            pane: "%3".into(),
            agent: "claude".into(),
            lane: Lane::Hook,
            options: vec![
                CardOption {
                    kind: OptionKind::AllowOnce,
                    name: "Yes".into(),
                    option_id: Some("r".into()),
                },
                CardOption {
                    kind: unknown_token("allow-for-session"),
                    name: "Session".into(),
                    option_id: None,
                },
            ],
            extraction: Extraction::Exact,
            pending_call: Some(PendingCall {
                tool: "Bash".into(),
                input: input.as_object().cloned(),
                call_id: Some("toolu_01".into()),
            }),
            binder: binder(),
        })),
        Response::Card(Card::Permission(PermissionCard {
            pane: "%5".into(),
            agent: "codex".into(),
            lane: Lane::Screen,
            options: vec![],
            extraction: Extraction::Failed,
            pending_call: None,
            binder: Binder::default(),
        })),
        Response::Card(Card::Question(QuestionCard {
            pane: "%6".into(),
            agent: "opencode".into(),
            request_id: "q-12".into(),
            questions: vec![Question {
                question: "Proceed?".into(),
                header: "Go".into(),
                options: vec![QuestionOption {
                    label: "Yes".into(),
                    description: "Run it".into(),
                }],
                multiple: true,
                custom: false,
            }],
            binder: binder(),
        })),
        Response::Card(Card::Informational(InformationalCard {
            detail: Detail::RateLimit,
            headline: Detail::RateLimit.headline().into(),
        })),
        Response::Window(Window {
            pane: "%3".into(),
            agent: "claude".into(),
            session: Some(SessionMeta::default()),
            older: Some(Cursor("c1.MTIz.ZGVm".into())),
            budget_truncated: true,
            unknown: 2,
            events: event_kinds().into_iter().map(header).collect(),
        }),
        Response::Window(Window {
            pane: "%8".into(),
            agent: "codex".into(),
            session: None,
            older: None,
            budget_truncated: false,
            unknown: 0,
            events: vec![],
        }),
        Response::Receipt(receipt.clone()),
        Response::Receipt(Receipt {
            outcome: Outcome::Refused,
            reason: Some(Reason::ScopeDenied),
            exit_code: 4,
            ..receipt.clone()
        }),
        Response::Receipt(Receipt {
            outcome: unknown_token("deferred"),
            reason: Some(unknown_token("moon-phase")),
            exit_code: 1,
            ..receipt.clone()
        }),
        Response::Receipts(Receipts {
            receipts: vec![Receipt {
                cached: true,
                ..receipt
            }],
        }),
        Response::Ack,
        Response::error(ErrorCode::NotFound, "no pane %42 on this host"),
        Response::error(unknown_token("quota-exceeded"), "a later code"),
    ];
    for (i, kind) in event_kinds().into_iter().enumerate() {
        let body = EventBody {
            kind: if i % 2 == 0 {
                BodyKind::Json
            } else {
                BodyKind::Text
            },
            text: "{\"command\":\"cargo test\"}\nline two".into(),
            truncated: i % 3 == 0,
        };
        out.push(Response::Event(EventReply {
            event: EventHeader {
                body: Some(body),
                ..header(kind)
            },
        }));
    }
    out
}

fn check_frame<F: Frames + PartialEq + std::fmt::Debug>(body: F) {
    let frame = Envelope::new("42", body);
    let line = encode_line(&frame);
    assert!(
        line.ends_with('\n') && !line[..line.len() - 1].contains('\n'),
        "{line}"
    );
    assert!(
        line.starts_with(r#"{"schema":1,"id":"42","t":""#),
        "envelope first: {line}"
    );
    let decoded = decode_line::<F>(&line).unwrap_or_else(|err| panic!("{line}: {err}"));
    assert_eq!(decoded, frame, "{line}");
    assert_eq!(encode_line(&decoded), line);
}

#[test]
fn every_request_variant_round_trips_byte_identically() {
    let all = requests();
    let mut names: Vec<&str> = all.iter().map(Frames::name).collect();
    names.dedup();
    assert_eq!(names, Request::NAMES, "every request variant is sampled");
    for request in all {
        check_frame(request);
    }
}

#[test]
fn every_response_variant_round_trips_byte_identically() {
    let all = responses();
    for name in Response::NAMES {
        assert!(all.iter().any(|r| r.name() == *name), "{name} is sampled");
    }
    for response in all {
        check_frame(response);
    }
}

#[test]
fn the_agents_own_object_keeps_its_key_order() {
    let line = r#"{"schema":1,"id":"6","t":"card","card":"permission","pane":"%3","agent":"claude","lane":"hook","options":[],"extraction":"exact","pending_call":{"tool":"Bash","input":{"zeta":1,"alpha":{"y":2,"x":1}}},"binder":{"expect_episode_ms":0}}"#;
    let frame = decode_line::<Response>(line).unwrap();
    assert_eq!(encode_line(&frame).trim_end(), line);
}

#[test]
fn every_card_variant_and_event_kind_is_sampled() {
    let mut cards = std::collections::BTreeSet::new();
    let mut kinds = std::collections::BTreeSet::new();
    for response in responses() {
        match response {
            Response::Card(card) => {
                cards.insert(match card {
                    Card::Permission(_) => "permission",
                    Card::Question(_) => "question",
                    Card::Informational(_) => "informational",
                    Card::None => "none",
                });
            }
            Response::Event(reply) => {
                kinds.insert(reply.event.kind.as_str().to_owned());
            }
            _ => {}
        }
    }
    assert_eq!(cards.len(), 4, "{cards:?}");
    for kind in EventKind::KNOWN {
        assert!(kinds.contains(*kind), "{kind} is sampled");
    }
    assert!(
        kinds
            .iter()
            .any(|k| !EventKind::KNOWN.contains(&k.as_str())),
        "an unknown kind too"
    );
}

fn check_example_file<F: Frames + std::fmt::Debug>(file: &str) {
    for (n, line) in data_lines(file).iter().enumerate() {
        let frame = decode_line::<F>(line).unwrap_or_else(|err| panic!("{file}:{}: {err}", n + 1));
        assert_eq!(encode_line(&frame).trim_end(), line, "{file}:{}", n + 1);
    }
}

#[test]
fn example_requests_reencode_byte_identically() {
    check_example_file::<Request>("requests.ndjson");
}

#[test]
fn example_responses_reencode_byte_identically() {
    check_example_file::<Response>("responses.ndjson");
}

fn check_document<T: Serialize + DeserializeOwned + PartialEq + std::fmt::Debug>(text: &str) {
    let value: T = serde_json::from_str(text).unwrap_or_else(|err| panic!("{text}: {err}"));
    let again = serde_json::to_string(&value).unwrap();
    assert_eq!(again, text.trim_end());
    assert_eq!(serde_json::from_str::<T>(&again).unwrap(), value);
}

#[test]
fn local_documents_reencode_byte_identically() {
    check_document::<LsDocument>(&data("ls.json"));
    check_document::<NotifyPayload>(&data("notify-payload.json"));
    check_document::<TransitionRing>(&data("transition-ring.json"));
    check_document::<DeviceList>(&data("device-list.json"));
    check_document::<CompletionPayload>(&data("notify-completion.json"));
    check_document::<DoctorReport>(&data("doctor.json"));
    for line in data_lines("notify-log.ndjson") {
        check_document::<NotifyLogLine>(&line);
    }
}

#[test]
fn log_lines_are_told_apart_by_their_keys() {
    let lines: Vec<NotifyLogLine> = data_lines("notify-log.ndjson")
        .iter()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert!(matches!(
        &lines[0].entry,
        LogEntry::Fire(Fire {
            state: Trigger::Blocked,
            ..
        })
    ));
    assert!(matches!(
        &lines[1].entry,
        LogEntry::Fire(Fire { title: Some(_), .. })
    ));
    assert!(matches!(
        &lines[2].entry,
        LogEntry::Completion(Completion {
            action: Action::Approve,
            outcome: Outcome::Sent,
            ..
        })
    ));
}

#[test]
fn toml_documents_read_as_typed_values() {
    let store: DeviceStore = toml::from_str(&data("devices.toml")).unwrap();
    assert_eq!(store.devices.len(), 2);
    assert_eq!(
        store.by_name("tablet").unwrap().scopes[1].as_str(),
        "act:teleport"
    );
    let back: DeviceStore = toml::from_str(&toml::to_string(&store).unwrap()).unwrap();
    assert_eq!(back, store);

    let config: Config = toml::from_str(&data("config.toml")).unwrap();
    assert_eq!(config.serve.max_connections, 4);
    assert_eq!(config.notify.stall.unwrap().threshold_s, Some(900));
    assert_eq!(config.notify.context_high.unwrap().command, None);
    assert_eq!(toml::from_str::<Config>("").unwrap(), Config::default());
}

#[test]
fn ls_and_wire_rows_share_one_key_set_but_title() {
    let wire = serde_json::to_value(row()).unwrap();
    let local = serde_json::to_value(row().with_view(Local {
        title: "CANARY".into(),
    }))
    .unwrap();
    let wire_keys: Vec<&String> = wire.as_object().unwrap().keys().collect();
    let mut local_keys: Vec<&String> = local.as_object().unwrap().keys().collect();
    let title_at = local_keys.iter().position(|k| *k == "title").unwrap();
    assert_eq!(
        local_keys[title_at - 1],
        "locator",
        "title sits right after locator"
    );
    local_keys.remove(title_at);
    assert_eq!(wire_keys, local_keys);
    let ls_row: LsRow = serde_json::from_value(local).unwrap();
    assert_eq!(ls_row.to_wire(), row());
}

#[test]
fn transitions_use_the_open_end() {
    let t = Transition {
        pane: "%1".into(),
        from: None,
        to: Some(State::Working),
        at: 5,
        source: TransitionSource::Hook,
    };
    let text = serde_json::to_string(&t).unwrap();
    assert_eq!(
        text,
        r#"{"pane":"%1","from":"","to":"working","at":5,"source":"hook"}"#
    );
    assert_eq!(serde_json::from_str::<Transition>(&text).unwrap(), t);
}
