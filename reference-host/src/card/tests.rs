//! Every card variant and lane, against real files, a real transcript and a local HTTP server.

use std::net::TcpListener;
use std::time::Instant;

use schema::{Detail, State};
use serde_json::json;

use super::*;
use crate::testing;
use crate::transcript::cursor::Keyring;

struct World {
    dir: tempfile::TempDir,
    runtime: RuntimeDir,
    manifests: Manifests,
    stores: StoreRoots,
    reader: Reader,
}

impl World {
    fn new() -> World {
        let dir = tempfile::tempdir().unwrap();
        let runtime = RuntimeDir::open(&dir.path().join("run")).unwrap();
        let reader = Reader::new(Keyring::load_or_create(runtime.path()).unwrap());
        World {
            dir,
            runtime,
            manifests: Manifests::bundled(),
            stores: StoreRoots::default(),
            reader,
        }
    }

    fn card(&mut self, pane: &Pane) -> Card {
        gather(
            pane,
            &mut Sources {
                manifests: &self.manifests,
                runtime: &self.runtime,
                stores: &self.stores,
                reader: Some(&mut self.reader),
            },
        )
    }

    fn park(&self, id: &str, pane: &str) {
        let request = json!({"id": id, "pane": pane, "session_id": "s", "tool_name": "Bash",
            "tool_input": {"command": "rm -rf build", "description": "clean"},
            "episode_ms": 5, "stamped_at_ms": 6});
        let path = self.runtime.request_file(id).unwrap();
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, request.to_string()).unwrap();
    }

    fn transcript(&self, lines: &[Value]) -> String {
        let path = self.dir.path().join("t.jsonl");
        let text: String = lines.iter().map(|l| format!("{l}\n")).collect();
        std::fs::write(&path, text).unwrap();
        path.to_string_lossy().into_owned()
    }
}

fn blocked(detail: &str, agent: &str) -> Pane {
    let mut row = testing::row("%1", State::Blocked);
    row.detail = Detail::parse(detail);
    row.agent = agent.into();
    row.episode_ms = 777;
    Pane::of_row(row)
}

#[test]
fn a_pane_that_is_not_blocked_has_no_card_whatever_its_transcript_holds() {
    let mut world = World::new();
    let path = world.transcript(&[json!({"type":"assistant","message":{"content":[
        {"type":"tool_use","id":"t1","name":"Bash","input":{"command":"ls"}}]}})]);
    for state in [State::Working, State::Idle, State::Unknown] {
        let mut pane = blocked("permission", "claude");
        pane.row.state = state;
        pane.row.transcript = Some(path.clone());
        assert_eq!(world.card(&pane), Card::None, "{state}");
    }
}

#[test]
fn a_parked_request_makes_an_exact_hook_card_with_exactly_two_options() {
    let mut world = World::new();
    world.park("req-1", "%1");
    let mut pane = blocked("permission", "claude");
    pane.row.permission_request = Some("req-1".into());
    pane.row.pending_call = Some("toolu_9".into());
    let Card::Permission(card) = world.card(&pane) else {
        panic!("a permission card");
    };
    assert_eq!(card.lane, Lane::Hook);
    assert_eq!(card.extraction, Extraction::Exact);
    let options: Vec<(OptionKind, &str, Option<&str>)> = card
        .options
        .iter()
        .map(|o| (o.kind.clone(), o.name.as_str(), o.option_id.as_deref()))
        .collect();
    assert_eq!(
        options,
        [
            (OptionKind::AllowOnce, "Yes", Some("req-1")),
            (OptionKind::RejectOnce, "No", Some("req-1"))
        ]
    );
    let call = card.pending_call.unwrap();
    assert_eq!(call.tool, "Bash");
    let input = call.input.unwrap();
    assert_eq!(input.keys().collect::<Vec<_>>(), ["command", "description"]);
    assert_eq!(call.call_id.as_deref(), Some("toolu_9"));
    assert_eq!(
        card.binder,
        Binder {
            expect_episode_ms: 777,
            expect_permission_request: Some("req-1".into())
        }
    );
}

#[test]
fn a_named_request_that_is_gone_or_foreign_is_the_screen_lane_failed() {
    let mut world = World::new();
    world.park("req-other", "%2");
    for id in ["req-gone", "req-other"] {
        let mut pane = blocked("permission", "claude");
        pane.row.permission_request = Some(id.into());
        let Card::Permission(card) = world.card(&pane) else {
            panic!()
        };
        assert_eq!(
            (card.lane, card.extraction),
            (Lane::Screen, Extraction::Failed),
            "{id}"
        );
        assert!(card.options.iter().all(|o| o.option_id.is_none()));
        assert_eq!(card.binder.expect_permission_request.as_deref(), Some(id));
    }
}

#[test]
fn screen_options_come_from_the_manifest_and_an_uncovered_agent_gets_none() {
    let mut world = World::new();
    let Card::Permission(card) = world.card(&blocked("permission", "claude")) else {
        panic!()
    };
    let names: Vec<&str> = card.options.iter().map(|o| o.name.as_str()).collect();
    assert_eq!(names, ["Yes", "No"]);
    assert!(
        card.options.iter().all(|o| o.option_id.is_none()),
        "no keycap index, ever"
    );
    let Card::Permission(card) = world.card(&blocked("permission", "aider")) else {
        panic!()
    };
    assert!(card.options.is_empty());
    assert_eq!(card.lane, Lane::Screen);
}

#[test]
fn an_agent_whose_approve_is_an_api_call_is_the_api_lane_when_it_has_an_endpoint() {
    let mut world = World::new();
    let mut pane = blocked("permission", "opencode");
    let Card::Permission(card) = world.card(&pane) else {
        panic!()
    };
    assert_eq!(card.lane, Lane::Screen, "no endpoint");
    assert_eq!(
        card.options,
        [],
        "an API action with no endpoint to call is refused at dispatch, so no card offers it"
    );
    pane.facts.api_endpoint = Some("http://127.0.0.1:4096".into());
    let Card::Permission(card) = world.card(&pane) else {
        panic!()
    };
    assert_eq!(
        (card.lane, card.extraction),
        (Lane::Api, Extraction::Failed)
    );
    let names: Vec<&str> = card.options.iter().map(|o| o.name.as_str()).collect();
    assert_eq!(names, ["Allow once", "Reject"]);
    pane.facts.api_endpoint = Some("http://example.com".into());
    let Card::Permission(card) = world.card(&pane) else {
        panic!()
    };
    assert_eq!(card.lane, Lane::Screen, "only a loopback endpoint counts");
    assert_eq!(card.options, []);
}

#[test]
fn the_pending_call_is_filled_from_the_transcript_tail() {
    let mut world = World::new();
    let path = world.transcript(&[
        json!({"type":"assistant","message":{"content":[
            {"type":"tool_use","id":"t1","name":"Read","input":{"file_path":"/a"}}]}}),
        json!({"type":"user","message":{"content":[{"type":"tool_result","tool_use_id":"t1","content":"x"}]}}),
        json!({"type":"assistant","message":{"content":[
            {"type":"tool_use","id":"t2","name":"Bash","input":{"command":"make"}}]}}),
    ]);
    let mut pane = blocked("permission", "claude");
    pane.row.transcript = Some(path);
    let Card::Permission(card) = world.card(&pane) else {
        panic!()
    };
    let call = card.pending_call.unwrap();
    assert_eq!(
        (call.tool.as_str(), call.call_id.as_deref()),
        ("Bash", Some("t2"))
    );
    assert_eq!(call.input.unwrap()["command"], "make");
    // Stamps win where they say something; the transcript gives the input of the named call.
    pane.row.pending_tool = Some("Read".into());
    pane.row.pending_call = Some("t1".into());
    let Card::Permission(card) = world.card(&pane) else {
        panic!()
    };
    let call = card.pending_call.unwrap();
    assert_eq!(
        (call.tool.as_str(), call.call_id.as_deref()),
        ("Read", Some("t1"))
    );
    assert_eq!(call.input.unwrap()["file_path"], "/a");
    // A stamped tool without a call id: the newest open call of that tool lends its input and
    // its id, and a call of another tool lends nothing.
    pane.row.pending_call = None;
    pane.row.pending_tool = Some("Bash".into());
    let Card::Permission(card) = world.card(&pane) else {
        panic!()
    };
    let call = card.pending_call.unwrap();
    assert_eq!(
        (call.tool.as_str(), call.call_id.as_deref()),
        ("Bash", Some("t2")),
        "the call id the stamps left out is filled"
    );
    assert_eq!(call.input.unwrap()["command"], "make");
    pane.row.pending_tool = Some("Write".into());
    let Card::Permission(card) = world.card(&pane) else {
        panic!()
    };
    let call = card.pending_call.unwrap();
    assert_eq!(
        (call.tool.as_str(), call.call_id, call.input),
        ("Write", None, None),
        "no Write call in the tail: the Bash call's input is not the Write's"
    );
    // Stamps that contradict the transcript (t1 is a Read): the stamps stand alone.
    pane.row.pending_call = Some("t1".into());
    pane.row.pending_tool = Some("Bash".into());
    let Card::Permission(card) = world.card(&pane) else {
        panic!()
    };
    let call = card.pending_call.unwrap();
    assert_eq!(
        (call.tool.as_str(), call.call_id.as_deref(), call.input),
        ("Bash", Some("t1"), None)
    );
    // No transcript at all: the card is still served.
    pane.row.transcript = Some("/nonexistent/t.jsonl".into());
    pane.row.pending_tool = None;
    let Card::Permission(card) = world.card(&pane) else {
        panic!()
    };
    assert_eq!(card.pending_call, None);
}

/// A one-shot HTTP server answering `body` (or never answering, for `None`).
fn api(body: Option<&'static str>) -> (String, std::thread::JoinHandle<()>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let handle = crate::threads::spawn(move || {
        let (mut stream, _) = listener.accept().unwrap();
        crate::http::testing::read_request(&mut stream);
        match body {
            Some(body) => crate::http::testing::answer(stream, "200 OK", body),
            None => std::thread::sleep(Duration::from_millis(1500)),
        }
    });
    (url, handle)
}

#[test]
fn a_question_is_fetched_from_the_agents_api_and_matched_by_request_id() {
    let mut world = World::new();
    let (url, server) = api(Some(
        r#"[{"request_id":"other","questions":[]},{"request_id":"q-1","session_id":"s","questions":[{"question":"Which dirs?","header":"Dirs","options":[{"label":"src/","description":"code"}],"multiple":true}]}]"#,
    ));
    let mut pane = blocked("question", "opencode");
    pane.facts.question_request = Some("q-1".into());
    pane.facts.api_endpoint = Some(url);
    let Card::Question(card) = world.card(&pane) else {
        panic!("a question card");
    };
    server.join().unwrap();
    assert_eq!(card.request_id, "q-1");
    assert_eq!(card.questions[0].question, "Which dirs?");
    assert!(card.questions[0].multiple && !card.questions[0].custom);
    assert_eq!(card.binder.expect_episode_ms, 777);
}

#[test]
fn a_question_that_times_out_or_is_not_there_is_informational() {
    let mut world = World::new();
    let (url, server) = api(None);
    let mut pane = blocked("question", "opencode");
    pane.facts.question_request = Some("q-1".into());
    pane.facts.api_endpoint = Some(url);
    let started = Instant::now();
    let card = world.card(&pane);
    assert!(
        started.elapsed() < Duration::from_millis(1400),
        "bounded at 750 ms"
    );
    assert_eq!(
        card,
        Card::Informational(InformationalCard {
            detail: Detail::Question,
            headline: "Question".into()
        })
    );
    server.join().unwrap();
    let (url, server) = api(Some("[]"));
    pane.facts.api_endpoint = Some(url);
    assert!(
        matches!(world.card(&pane), Card::Informational(_)),
        "no match"
    );
    server.join().unwrap();
    pane.facts.question_request = None;
    assert!(
        matches!(world.card(&pane), Card::Informational(_)),
        "no request id"
    );
}

#[test]
fn every_other_blocked_detail_is_informational_with_its_headline() {
    let mut world = World::new();
    for (detail, headline) in [
        ("rate_limit", "Rate limited"),
        ("plan", "Plan approval"),
        ("sandbox_escape", "Waiting for you"),
    ] {
        let card = world.card(&blocked(detail, "claude"));
        let Card::Informational(card) = card else {
            panic!("{detail}")
        };
        assert_eq!(
            (card.detail.as_str(), card.headline.as_str()),
            (detail, headline)
        );
    }
    let mut pane = blocked("permission", "claude");
    pane.row.detail = None;
    assert!(matches!(world.card(&pane), Card::Informational(_)));
}

/// Claude Code asks its questions through its permission hook: the parked `AskUserQuestion`
/// request is a question card, answered through the hook lane (its binder quotes the request).
#[test]
fn a_question_parked_by_the_hook_is_a_question_card_quoting_its_request() {
    let mut world = World::new();
    let request = json!({"id": "req-q", "pane": "%1", "session_id": "s", "tool_name": "AskUserQuestion",
        "tool_input": {"questions": [
            {"question": "Which framework should we use?", "header": "Framework",
             "options": [{"label": "React", "description": "Component model"}, {"label": "Vue", "description": "Templates"}],
             "multiSelect": false},
            {"question": "Which languages?", "header": "Languages",
             "options": [{"label": "Rust", "description": "r"}, {"label": "Go", "description": "g"}],
             "multiSelect": true}]},
        "episode_ms": 5, "stamped_at_ms": 6});
    let path = world.runtime.request_file("req-q").unwrap();
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, request.to_string()).unwrap();
    let mut pane = blocked("question", "claude");
    pane.row.permission_request = Some("req-q".into());
    let Card::Question(card) = world.card(&pane) else {
        panic!("a question card");
    };
    assert_eq!(card.request_id, "req-q");
    assert_eq!(
        card.binder,
        Binder {
            expect_episode_ms: 777,
            expect_permission_request: Some("req-q".into())
        }
    );
    let shape: Vec<(&str, &str, usize, bool, bool)> = card
        .questions
        .iter()
        .map(|q| {
            (
                q.question.as_str(),
                q.header.as_str(),
                q.options.len(),
                q.multiple,
                q.custom,
            )
        })
        .collect();
    assert_eq!(
        shape,
        [
            (
                "Which framework should we use?",
                "Framework",
                2,
                false,
                true
            ),
            ("Which languages?", "Languages", 2, true, true)
        ]
    );
    assert_eq!(card.questions[0].options[1].description, "Templates");
    // A Bash request parked on a pane that says question is no question: informational.
    world.park("req-b", "%1");
    pane.row.permission_request = Some("req-b".into());
    assert!(matches!(world.card(&pane), Card::Informational(_)));
}

/// Codex's permission hook calls every shell tool `Bash`; its rollout names the function the
/// model called. After the hook gave up, the screen card still shows the command.
#[test]
fn a_codex_pane_blocked_on_bash_shows_the_rollouts_exec_command() {
    let mut world = World::new();
    let path = world.transcript(&[
        json!({"timestamp":"t0","type":"session_meta","payload":{"id":"c","cwd":"/w","cli_version":"0.104.0"}}),
        json!({"timestamp":"t1","type":"response_item","payload":{"type":"function_call","name":"exec_command","arguments":"{\"cmd\":\"cargo test\"}","call_id":"call_1"}}),
        json!({"timestamp":"t2","type":"response_item","payload":{"type":"function_call_output","call_id":"call_1","output":"Chunk ID: 1\nWall time: 1.0000 seconds\nProcess exited with code 0\nOutput:\nok"}}),
        json!({"timestamp":"t3","type":"response_item","payload":{"type":"function_call","name":"exec_command","arguments":"{\"cmd\":\"rm -rf build\",\"workdir\":\"/w\"}","call_id":"call_2"}}),
    ]);
    let mut pane = blocked("permission", "codex");
    pane.row.transcript = Some(path);
    pane.row.pending_tool = Some("Bash".into());
    let Card::Permission(card) = world.card(&pane) else {
        panic!()
    };
    let call = card.pending_call.unwrap();
    assert_eq!(
        (call.tool.as_str(), call.call_id.as_deref()),
        ("Bash", Some("call_2"))
    );
    assert_eq!(call.input.unwrap()["cmd"], "rm -rf build");
}
