//! Every gate, refusal and lane of a dispatch against a scripted fleet, real ledger and lock
//! files, and a local HTTP server for the api lane.

use std::net::TcpListener;

use schema::{Binder, Detail, State};
use serde_json::json;

use super::*;
use crate::testing::{Scripted, row};

struct World {
    _dir: tempfile::TempDir,
    runtime: RuntimeDir,
    manifests: Manifests,
    ledger: Ledger,
    fleet: Scripted,
    log: PathBuf,
    exec: Option<crate::act::exec::Exec>,
}

impl World {
    fn new() -> World {
        let dir = tempfile::tempdir().unwrap();
        let runtime = RuntimeDir::open(&dir.path().join("run")).unwrap();
        let ledger = Ledger::new(runtime.path());
        let log = dir.path().join("logs/act.log");
        let fleet = Scripted::default();
        let mut blocked = row("%1", State::Blocked);
        blocked.detail = Some(Detail::Permission);
        blocked.episode_ms = 777;
        let mut idle = row("%2", State::Idle);
        idle.episode_ms = 5;
        let working = row("%3", State::Working);
        fleet.set(vec![blocked, idle, working]);
        World {
            _dir: dir,
            runtime,
            manifests: Manifests::bundled(),
            ledger,
            fleet,
            log,
            exec: None,
        }
    }

    fn run(&mut self, order: &Order<'_>) -> Result<Receipt, Refusal> {
        let mut d = Dispatcher {
            manifests: &self.manifests,
            runtime: &self.runtime,
            ledger: &mut self.ledger,
            act_log: Some(self.log.clone()),
            exec: self.exec.clone(),
        };
        dispatch(&mut self.fleet, &mut d, order)
    }

    fn ok(&mut self, order: &Order<'_>) -> Receipt {
        self.run(order).unwrap()
    }

    fn log_lines(&self) -> Vec<serde_json::Value> {
        std::fs::read_to_string(&self.log)
            .unwrap_or_default()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect()
    }

    fn park(&self, id: &str, pane: &str) {
        let path = self.runtime.request_file(id).unwrap();
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(
            path,
            json!({"id": id, "pane": pane, "tool_name": "Bash", "tool_input": {}}).to_string(),
        )
        .unwrap();
    }
}

const NO_BINDER: Binder = Binder {
    expect_episode_ms: 0,
    expect_permission_request: None,
};

fn phone(scopes: &[Scope]) -> Surface {
    Surface::Device {
        id: "fp-phone".into(),
        scopes: scopes.to_vec(),
    }
}

fn order<'a>(slot: &'a str, pane: &'a str, action: &'a Action, surface: Surface) -> Order<'a> {
    Order {
        slot,
        pane,
        action,
        binder: &NO_BINDER,
        text: None,
        answers: None,
        surface,
    }
}

fn answer() -> Surface {
    phone(&[Scope::Read, Scope::ActAnswer, Scope::ActSteer])
}

fn outcome(r: &Receipt) -> (String, Option<String>, i32, bool) {
    (
        r.outcome.to_string(),
        r.reason.as_ref().map(ToString::to_string),
        r.exit_code,
        r.cached,
    )
}

fn expect(r: &Receipt, outcome_: &str, reason: Option<&str>, exit: i32) {
    assert_eq!(
        outcome(r),
        (outcome_.to_owned(), reason.map(str::to_owned), exit, false),
        "{r:?}"
    );
}

#[test]
fn gate_one_refuses_before_anything_is_claimed_read_or_sent() {
    let mut w = World::new();
    let frobnicate = Action::parse("frobnicate").unwrap();
    let cases = [
        (Action::Approve, phone(&[Scope::Read])),
        (Action::Steer, phone(&[Scope::Read, Scope::ActAnswer])),
        (Action::ApproveAlways, answer()),
        (frobnicate, answer()),
    ];
    for (action, surface) in &cases {
        let r = w.ok(&order("s1", "%1", action, surface.clone()));
        expect(&r, "refused", Some("scope-denied"), 4);
    }
    // An exec action is refused at the scope gate even where a manifest defines it.
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("mine.toml"),
        "agent = \"claude\"\n[[action]]\nname = \"approve\"\nkind = \"exec\"\ncommand = \"true\"\n[[action]]\nname = \"run-tests\"\nkind = \"exec\"\ncommand = \"true\"\n",
    )
    .unwrap();
    w.manifests = Manifests::load(dir.path()).unwrap();
    let run = Action::parse("run-tests").unwrap();
    expect(
        &w.ok(&order("s2", "%1", &run, answer())),
        "refused",
        Some("scope-denied"),
        4,
    );
    assert_eq!(w.fleet.reads(), 0, "nothing read from tmux");
    assert!(w.fleet.sent().is_empty());
    assert!(
        !w.runtime.path().join("ledger.jsonl").exists(),
        "nothing recorded"
    );
    assert!(w.log_lines().is_empty());
}

#[test]
fn a_payload_that_does_not_fit_the_action_is_a_bad_request_with_nothing_recorded() {
    let mut w = World::new();
    let answers = vec![vec!["Yes".to_owned()]];
    let mut steer = order("s", "%2", &Action::Steer, answer());
    assert!(
        matches!(w.run(&steer), Err(Refusal::BadRequest(_))),
        "steer without text"
    );
    steer.text = Some("hi");
    steer.answers = Some(&answers);
    assert!(
        matches!(w.run(&steer), Err(Refusal::BadRequest(_))),
        "steer with answers"
    );
    let mut approve = order("s", "%1", &Action::Approve, answer());
    approve.text = Some("hi");
    assert!(
        matches!(w.run(&approve), Err(Refusal::BadRequest(_))),
        "keys with text"
    );
    let reply = order("s", "%1", &Action::QuestionReply, answer());
    assert!(
        matches!(w.run(&reply), Err(Refusal::BadRequest(_))),
        "reply without answers"
    );
    assert!(!w.runtime.path().join("ledger.jsonl").exists());
}

#[test]
fn an_approve_fires_once_and_its_slot_answers_cached_from_then_on() {
    let mut w = World::new();
    let first = w.ok(&order("%1:777:approve", "%1", &Action::Approve, answer()));
    expect(&first, "sent", None, 0);
    assert_eq!(first.device, "fp-phone");
    let other_device = Surface::Device {
        id: "fp-tablet".into(),
        scopes: vec![Scope::ActAnswer],
    };
    let again = w.ok(&order(
        "%1:777:approve",
        "%1",
        &Action::Approve,
        other_device,
    ));
    assert!(again.cached);
    assert_eq!(
        Receipt {
            cached: false,
            ..again
        },
        first
    );
    assert_eq!(
        w.fleet.sent(),
        [("%1".to_owned(), "keys:1".to_owned())],
        "one fire"
    );
    let log = w.log_lines();
    assert_eq!(log.len(), 1, "one act-log line per fire");
    assert_eq!(log[0]["surface"], "serve");
    assert_eq!(log[0]["device"], "fp-phone");
    assert_eq!(log[0]["outcome"], "sent");
}

#[test]
fn gate_three_refusals_are_recorded_in_their_order() {
    let mut w = World::new();
    let episode = Binder {
        expect_episode_ms: 5,
        expect_permission_request: None,
    };
    let request = Binder {
        expect_episode_ms: 0,
        expect_permission_request: Some("req-9".into()),
    };
    w.fleet.edit(|rows| {
        rows.push({
            let mut r = row("%4", State::Blocked);
            r.agent = "aider".into();
            r.detail = Some(Detail::Permission);
            r
        })
    });
    let cases: Vec<(Order<'_>, &str, &str, i32)> = vec![
        (
            order("g1", "%9", &Action::Approve, answer()),
            "vanished",
            "pane-gone",
            3,
        ),
        (
            order("g2", "%4", &Action::Approve, answer()),
            "refused",
            "no-coverage",
            4,
        ),
        (
            order("g3", "%3", &Action::Approve, answer()),
            "refused",
            "requires-unmet",
            4,
        ),
        (
            Order {
                binder: &episode,
                ..order("g4", "%1", &Action::Approve, answer())
            },
            "refused",
            "episode-changed",
            4,
        ),
        (
            Order {
                binder: &request,
                ..order("g5", "%1", &Action::Approve, answer())
            },
            "refused",
            "request-gone",
            4,
        ),
    ];
    for (o, out, reason, code) in &cases {
        let r = w.ok(o);
        expect(&r, out, Some(reason), *code);
        let again = w.ok(o);
        assert!(again.cached, "{reason}: a refusal at gate 3 is recorded");
    }
    assert!(w.fleet.sent().is_empty());
    assert!(w.log_lines().is_empty(), "refusals fire nothing");
}

#[test]
fn text_is_checked_then_typed_literally_between_the_manifests_keys() {
    let mut w = World::new();
    let long = "x".repeat(TEXT_CAP + 1);
    for (slot, text, reason) in [
        ("t1", "   ", "empty"),
        ("t2", long.as_str(), "too-long"),
        ("t3", "line\nbreak", "control-bytes"),
        ("t4", "/clear", "sigil"),
        ("t5", " !rm -rf /", "sigil"),
    ] {
        let o = Order {
            text: Some(text),
            ..order(slot, "%2", &Action::Steer, answer())
        };
        expect(&w.ok(&o), "refused", Some(reason), 4);
    }
    let steer = Order {
        text: Some("add a test; then -run it"),
        ..order("t6", "%2", &Action::Steer, answer())
    };
    expect(&w.ok(&steer), "sent", None, 0);
    let now = Order {
        text: Some("stop and fix the build"),
        ..order("t7", "%3", &Action::SteerNow, answer())
    };
    expect(&w.ok(&now), "sent", None, 0);
    let sent: Vec<String> = w
        .fleet
        .sent()
        .into_iter()
        .map(|(p, i)| format!("{p} {i}"))
        .collect();
    assert_eq!(
        sent,
        [
            "%2 text:add a test; then -run it",
            "%2 keys:Enter",
            "%3 keys:Escape",
            "%3 text:stop and fix the build",
            "%3 keys:Enter"
        ]
    );
}

#[test]
fn text_rules_see_unicode_whitespace_and_every_control_character() {
    for (text, verdict) in [
        ("\u{a0}\u{3000} ", Err(Reason::Empty)),
        ("\t\n", Err(Reason::Empty)),
        ("stop\u{85}now", Err(Reason::ControlBytes)),
        ("\u{9b}31mred", Err(Reason::ControlBytes)),
        ("\u{7f}", Err(Reason::ControlBytes)),
        ("\u{a0}!ls", Err(Reason::Sigil)),
        ("  /compact", Err(Reason::Sigil)),
        ("Use café / ✓ instead.", Ok(())),
        ("a\u{200b}b", Ok(())),
    ] {
        assert_eq!(check_text(text), verdict, "{text:?}");
    }
    let four_k = "é".repeat(TEXT_CAP / 2);
    assert_eq!(check_text(&four_k), Ok(()));
    assert_eq!(check_text(&format!("{four_k}x")), Err(Reason::TooLong));
}

#[test]
fn the_hook_lane_writes_the_verdict_once() {
    let mut w = World::new();
    w.park("req-1", "%1");
    w.fleet
        .edit(|rows| rows[0].permission_request = Some("req-1".into()));
    let bound = Binder {
        expect_episode_ms: 777,
        expect_permission_request: Some("req-1".into()),
    };
    let approve = Order {
        binder: &bound,
        ..order("h1", "%1", &Action::Approve, answer())
    };
    expect(&w.ok(&approve), "replied", None, 0);
    let verdict: serde_json::Value =
        serde_json::from_slice(&std::fs::read(w.runtime.verdict_file("req-1").unwrap()).unwrap())
            .unwrap();
    assert_eq!(verdict, json!({"decision": "allow", "request": "req-1"}));
    assert!(w.fleet.sent().is_empty(), "no keys on the hook lane");
    let deny = Order {
        binder: &bound,
        ..order("h2", "%1", &Action::Deny, answer())
    };
    expect(&w.ok(&deny), "vanished", Some("request-gone"), 3);
}

/// A Claude Code question parked by its permission hook: a reply must answer every question,
/// and its answers travel in the verdict (the hook hands them to the agent); a dismissal denies.
#[test]
fn a_parked_question_is_answered_through_the_verdict() {
    let mut w = World::new();
    let path = w.runtime.request_file("req-q").unwrap();
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(
        path,
        json!({"id": "req-q", "pane": "%1", "tool_name": "AskUserQuestion", "tool_input": {"questions": [
            {"question": "Which framework?", "header": "Framework", "options": [{"label": "React", "description": ""}], "multiSelect": false},
            {"question": "Which languages?", "header": "Languages", "options": [{"label": "Rust", "description": ""}, {"label": "Go", "description": ""}], "multiSelect": true}]}})
        .to_string(),
    )
    .unwrap();
    w.fleet.edit(|rows| {
        rows[0].detail = Some(Detail::Question);
        rows[0].permission_request = Some("req-q".into());
    });
    let bound = Binder {
        expect_episode_ms: 777,
        expect_permission_request: Some("req-q".into()),
    };
    let reply = |slot, answers| Order {
        binder: &bound,
        answers: Some(answers),
        ..order(slot, "%1", &Action::QuestionReply, answer())
    };
    // Not one entry per question, or an empty entry: refused, nothing written.
    let short = [vec!["React".to_owned()]];
    expect(
        &w.ok(&reply("q1", &short)),
        "refused",
        Some("requires-unmet"),
        4,
    );
    let empty = [vec!["React".to_owned()], vec![]];
    expect(
        &w.ok(&reply("q2", &empty)),
        "refused",
        Some("requires-unmet"),
        4,
    );
    assert!(!w.runtime.verdict_file("req-q").unwrap().exists());
    // A permission action does not answer a question.
    let approve = Order {
        binder: &bound,
        ..order("q3", "%1", &Action::Approve, answer())
    };
    expect(&w.ok(&approve), "refused", Some("requires-unmet"), 4);
    let full = [
        vec!["React".to_owned()],
        vec!["Rust".to_owned(), "Go".to_owned()],
    ];
    expect(&w.ok(&reply("q4", &full)), "replied", None, 0);
    let verdict: serde_json::Value =
        serde_json::from_slice(&std::fs::read(w.runtime.verdict_file("req-q").unwrap()).unwrap())
            .unwrap();
    assert_eq!(
        verdict,
        json!({"decision": "allow", "request": "req-q", "answers": [["React"], ["Rust", "Go"]]})
    );
    assert!(
        w.fleet.sent().is_empty(),
        "no keys to the question's picker"
    );
    // The hook gave up: nothing parked to answer, whatever the stamps still say.
    std::fs::remove_file(w.runtime.verdict_file("req-q").unwrap()).unwrap();
    std::fs::remove_file(w.runtime.request_file("req-q").unwrap()).unwrap();
    let dismiss = Order {
        binder: &bound,
        ..order("q5", "%1", &Action::QuestionReject, answer())
    };
    expect(&w.ok(&dismiss), "refused", Some("request-gone"), 4);
}

#[test]
fn a_held_pane_lock_is_locked_and_releases_the_claim() {
    let mut w = World::new();
    let held = crate::files::lock_within(&w.runtime.pane_lock("%1"), Duration::ZERO)
        .unwrap()
        .unwrap();
    let started = Instant::now();
    let r = w.ok(&order("l1", "%1", &Action::Approve, answer()));
    assert!(started.elapsed() >= LOCK_WAIT);
    expect(&r, "refused", Some("locked"), 5);
    drop(held);
    let again = w.ok(&order("l1", "%1", &Action::Approve, answer()));
    expect(&again, "sent", None, 0);
}

#[test]
fn a_failed_pane_read_releases_the_claim_and_is_internal() {
    let mut w = World::new();
    w.fleet.fail(true);
    assert!(matches!(
        w.run(&order("r1", "%1", &Action::Approve, answer())),
        Err(Refusal::Internal(_))
    ));
    w.fleet.fail(false);
    expect(
        &w.ok(&order("r1", "%1", &Action::Approve, answer())),
        "sent",
        None,
        0,
    );
}

#[test]
fn the_host_cli_skips_the_scope_gate_and_names_itself() {
    let mut w = World::new();
    let r = w.ok(&order("c1", "%1", &Action::Approve, Surface::Cli));
    expect(&r, "sent", None, 0);
    assert_eq!(r.device, "cli");
    assert_eq!(w.log_lines()[0]["surface"], "cli");
}

#[test]
fn an_exec_action_at_the_host_starts_its_supervisor_and_answers_spawned() {
    let mut w = World::new();
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("mine.toml"),
        "agent = \"claude\"\n[[action]]\nname = \"run-tests\"\nkind = \"exec\"\ncommand = \"cargo test\"\n",
    )
    .unwrap();
    w.manifests = Manifests::load(dir.path()).unwrap();
    let run = Action::parse("run-tests").unwrap();
    expect(
        &w.ok(&order("e1", "%2", &run, Surface::Cli)),
        "refused",
        Some("no-coverage"),
        4,
    );
    // A stand-in supervisor that writes down how it was started.
    let args = dir.path().join("args");
    let exe = dir.path().join("corral");
    std::fs::write(
        &exe,
        format!(
            "#!/bin/sh\nprintf '%s\\n' \"$@\" > {}.tmp && mv {0}.tmp {0}\n",
            args.display()
        ),
    )
    .unwrap();
    std::fs::set_permissions(&exe, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    w.exec = Some(crate::act::exec::Exec {
        exe,
        tmux: crate::tmux::Tmux::new("tmux", Some(crate::tmux::Socket::Name("s".into()))),
    });
    let r = w.ok(&order("e2", "%2", &run, Surface::Cli));
    expect(&r, "spawned", None, 0);
    let deadline = Instant::now() + Duration::from_secs(10);
    while !args.exists() {
        assert!(Instant::now() < deadline, "the supervisor did not start");
        std::thread::sleep(Duration::from_millis(10));
    }
    let seen = std::fs::read_to_string(&args).unwrap();
    let seen: Vec<&str> = seen.lines().collect();
    assert_eq!(
        &seen[..6],
        [
            "internal",
            "exec-action",
            "--command",
            "cargo test",
            "--timeout-s",
            "60"
        ]
    );
    for pair in [
        ["--pane", "%2"],
        ["--action", "run-tests"],
        ["--agent", "claude"],
        ["--tmux-socket", "s"],
    ] {
        assert!(seen.windows(2).any(|w| w == pair), "{pair:?} in {seen:?}");
    }
    assert!(w.fleet.sent().is_empty(), "nothing typed into the pane");
}

/// A local agent API answering each request with the next status (or never, for 0); the
/// requests it saw come back from the handle.
fn api(statuses: &'static [u16]) -> (String, std::thread::JoinHandle<Vec<String>>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let handle = crate::threads::spawn(move || {
        let mut seen = Vec::new();
        for status in statuses {
            let (mut stream, _) = listener.accept().unwrap();
            seen.push(crate::http::testing::read_request(&mut stream));
            if *status == 0 {
                std::thread::sleep(Duration::from_millis(2500));
                continue;
            }
            crate::http::testing::answer(stream, &format!("{status} X"), "true");
        }
        seen
    });
    (url, handle)
}

fn question_pane(w: &World, url: &str) {
    let mut pane = Pane::of_row({
        let mut r = row("%5", State::Blocked);
        r.agent = "opencode".into();
        r.detail = Some(Detail::Question);
        r
    });
    pane.facts.api_endpoint = Some(url.to_owned());
    pane.facts.question_request = Some("q 1".into());
    let mut panes: Vec<Pane> = vec![pane];
    panes.extend(w.fleet.clone().panes().unwrap());
    w.fleet.set_panes(panes);
}

#[test]
fn the_api_lane_posts_the_answers_and_maps_the_status() {
    let mut w = World::new();
    let (url, server) = api(&[200, 404, 0]);
    question_pane(&w, &url);
    let answers = vec![
        vec!["Yes".to_owned()],
        vec!["src/".to_owned(), "tests/".to_owned()],
    ];
    let reply = |slot| Order {
        answers: Some(&answers),
        ..order(slot, "%5", &Action::QuestionReply, answer())
    };
    expect(&w.ok(&reply("a1")), "replied", None, 0);
    expect(&w.ok(&reply("a2")), "vanished", Some("request-gone"), 3);
    let started = Instant::now();
    expect(&w.ok(&reply("a3")), "timeout", None, 124);
    assert!(started.elapsed() < Duration::from_secs(4));
    let seen = server.join().unwrap();
    assert!(
        seen[0].starts_with("POST /question/q%201/reply "),
        "{}",
        seen[0]
    );
    assert!(
        seen[0].ends_with(r#"{"answers":[["Yes"],["src/","tests/"]]}"#),
        "{}",
        seen[0]
    );
}
