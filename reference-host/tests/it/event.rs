//! `corral event` as an agent's hook runs it, inside a pane of the fake tmux or a scratch real
//! tmux server: it stamps the pane, parks a permission request that a device's dispatch answers,
//! and never breaks the agent. `corral hooks` prints and installs the settings.

use std::io::Write;
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::support::{
    Backend, Fleet, Home, eventually, fleet_with_phone, hook, json_lines, row, run_hook,
};

on_both_backends!(
    from_event_rings_once_even_with_a_daemon_running,
    events_stamp_the_pane,
    a_device_answers_a_parked_permission_request,
    an_unanswered_request_falls_back_to_the_dialog,
    a_sigterm_at_any_moment_leaves_no_request_behind
);

fn pane_row(home: &Home, pane: &str) -> Value {
    let ls: Value = serde_json::from_str(&home.ok(&["ls", "--json"])).unwrap();
    row(&ls, pane).clone()
}

fn events_stamp_the_pane(backend: Backend) {
    let fleet = Fleet::up(backend);
    let home = fleet.home();
    let shell = fleet.pane("shell");
    let start = json!({"session_id": "sess-1", "transcript_path": "/t/sess-1.jsonl", "cwd": "/w",
                       "hook_event_name": "SessionStart", "source": "startup"});
    let out = run_hook(&home, &shell, &["claude"], &start);
    assert_eq!(out.status.code(), Some(0));
    assert!(out.stdout.is_empty(), "nothing on stdout but a decision");
    let r = pane_row(&home, &shell);
    assert_eq!(
        (&r["agent"], &r["state"], &r["session"]),
        (&json!("claude"), &json!("idle"), &json!("work"))
    );
    assert_eq!(r["transcript"], "/t/sess-1.jsonl");

    run_hook(
        &home,
        &shell,
        &["claude", "UserPromptSubmit"],
        &json!({"prompt": "go"}),
    );
    let r = pane_row(&home, &shell);
    assert_eq!(r["state"], "working");
    let since = r["since_ms"].as_u64().unwrap();
    run_hook(
        &home,
        &shell,
        &["claude", "PreToolUse"],
        &json!({"tool_name": "Bash", "tool_use_id": "toolu_7"}),
    );
    let r = pane_row(&home, &shell);
    assert_eq!(
        (&r["pending_tool"], &r["pending_call"]),
        (&json!("Bash"), &json!("toolu_7"))
    );
    assert_eq!(
        r["since_ms"].as_u64(),
        Some(since),
        "a tool keeps the working run's start"
    );
    run_hook(&home, &shell, &["claude", "Stop"], &json!({}));
    let r = pane_row(&home, &shell);
    assert_eq!(
        (&r["state"], &r["done"], &r["pending_call"]),
        (&json!("idle"), &json!(true), &Value::Null)
    );

    // Without HOME (and so no config dir) the hook still stamps, and still exits 0.
    let mut homeless = hook(&home, &shell, &["claude", "UserPromptSubmit"]);
    homeless.env_remove("HOME").env_remove("XDG_CONFIG_HOME");
    let out = homeless.stdin(Stdio::null()).output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    assert_eq!(pane_row(&home, &shell)["state"], "working");
    run_hook(&home, &shell, &["claude", "Stop"], &json!({}));

    // Codex's notify hands its payload as an argument.
    let out = hook(
        &home,
        &shell,
        &[
            "codex",
            "notify",
            r#"{"type":"agent-turn-complete","thread-id":"th"}"#,
        ],
    )
    .output()
    .unwrap();
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(pane_row(&home, &shell)["agent"], "codex");

    run_hook(&home, &shell, &["codex", "SessionEnd"], &json!({}));
    let ls: Value = serde_json::from_str(&home.ok(&["ls", "--json"])).unwrap();
    assert!(
        ls["agents"]
            .as_array()
            .unwrap()
            .iter()
            .all(|r| r["pane"] != shell.as_str()),
        "a session that ended leaves no agent pane"
    );
}

/// `notify.from_event`: the hook itself rings for the turn it ended, through the same marker as
/// the daemon, so with a daemon running too the episode rings once; the daemon's ring shows the
/// hook's transition.
fn from_event_rings_once_even_with_a_daemon_running(backend: Backend) {
    let fleet = Fleet::up(backend);
    let home = fleet.home();
    let payloads = home.dir.path().join("payloads");
    home.write_config(&format!(
        "[serve]\nreconcile_interval_ms = 100\n\n[notify]\nfrom_event = true\non = [\"blocked\", \"done\"]\ncommand = \"cat >> {}\"\n",
        payloads.display()
    ));
    fleet.attach_client_on_fake();
    let idle = fleet.pane("idle");
    let for_idle = || {
        json_lines(&payloads)
            .into_iter()
            .filter(|p| p["pane"] == idle.as_str())
            .collect::<Vec<_>>()
    };
    // No daemon: the hook rings by itself.
    run_hook(&home, &idle, &["claude", "UserPromptSubmit"], &json!({}));
    run_hook(&home, &idle, &["claude", "Stop"], &json!({}));
    eventually("the hook's own done payload", || for_idle().len() == 1);
    if backend == Backend::Fake {
        // The hook read its pane with the clients, in one invocation, and its claim showed them
        // the status line.
        let messages = fleet.messages();
        assert!(
            messages
                .iter()
                .any(|(client, text)| client == "/dev/pts/40" && text.contains("claude done")),
            "{messages:?}"
        );
    }
    // With a daemon too, a new turn's end still rings once.
    let _daemon = home.daemon();
    std::thread::sleep(Duration::from_millis(300));
    run_hook(&home, &idle, &["claude", "UserPromptSubmit"], &json!({}));
    std::thread::sleep(Duration::from_millis(10));
    run_hook(&home, &idle, &["claude", "Stop"], &json!({}));
    eventually("the second done payload", || for_idle().len() == 2);
    // Several daemon cycles later, still one fire per episode.
    std::thread::sleep(Duration::from_millis(600));
    let fired = for_idle();
    assert_eq!(fired.len(), 2, "{fired:?}");
    assert!(fired.iter().all(|f| f["state"] == "done"));
    assert_ne!(fired[0]["episode_ms"], fired[1]["episode_ms"]);
    let ring = home.ring();
    assert!(
        ring["transitions"]
            .as_array()
            .unwrap()
            .iter()
            .any(|t| t["pane"] == idle.as_str() && t["source"] == "hook" && t["to"] == "idle"),
        "{ring}"
    );
}

#[test]
fn outside_tmux_or_with_a_dead_server_it_exits_0_and_says_nothing_on_stdout() {
    let home = Home::new("unused");
    // An agent simply started outside tmux: silence.
    let mut cmd = home.corral();
    cmd.args(["event", "claude", "Stop"])
        .env_remove("TMUX")
        .env_remove("TMUX_PANE")
        .env_remove("CORRAL_TMUX_SOCKET")
        .stdin(Stdio::null());
    let out = cmd.output().unwrap();
    assert_eq!(out.status.code(), Some(0));
    assert!(out.stdout.is_empty() && out.stderr.is_empty(), "{out:?}");
    // With CORRAL_TMUX_SOCKET set, someone meant it to stamp: one line says why it did not.
    let mut cmd = home.corral();
    cmd.args(["event", "claude", "Stop"])
        .env_remove("TMUX")
        .env_remove("TMUX_PANE")
        .env("CORRAL_TMUX_SOCKET", home.dir.path().join("sock"))
        .stdin(Stdio::null());
    let out = cmd.output().unwrap();
    assert_eq!(out.status.code(), Some(0));
    assert!(out.stdout.is_empty(), "{out:?}");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(
        stderr.contains("outside a tmux pane: nothing stamped (CORRAL_TMUX_SOCKET names a server"),
        "{stderr}"
    );
    let dead = home.dir.path().join("no-server");
    let out = home
        .corral()
        .args(["event", "claude", "Stop"])
        .env("TMUX", format!("{},1,0", dead.display()))
        .env("TMUX_PANE", "%0")
        .env("CORRAL_TMUX_BIN", "tmux")
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    assert!(out.stdout.is_empty());
}

/// Starts a permission-request hook in `pane` and waits until the pane carries its request.
fn park(home: &Home, pane: &str) -> (Child, String) {
    let child = start_permission_hook(home, pane);
    let id = stamped_request(home, pane);
    (child, id)
}

/// The permission request the pane carries, once it does.
fn stamped_request(home: &Home, pane: &str) -> String {
    let started = Instant::now();
    loop {
        let r = pane_row(home, pane);
        if let Some(id) = r["permission_request"].as_str() {
            assert_eq!(
                (&r["state"], &r["detail"]),
                (&json!("blocked"), &json!("permission"))
            );
            return id.to_owned();
        }
        assert!(
            started.elapsed() < Duration::from_secs(10),
            "the request was never stamped"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// A permission-request hook, its payload written and its stdin closed.
fn start_permission_hook(home: &Home, pane: &str) -> Child {
    let mut child = hook(home, pane, &["claude", "PermissionRequest"])
        .spawn()
        .unwrap();
    let payload = json!({"session_id": "s", "hook_event_name": "PermissionRequest", "tool_name": "Bash",
                         "tool_input": {"command": "rm -rf build", "description": "clean"}});
    if let Some(mut stdin) = child.stdin.take() {
        let _ = stdin.write_all(payload.to_string().as_bytes());
    }
    child
}

fn a_device_answers_a_parked_permission_request(backend: Backend) {
    let (fleet, home) = fleet_with_phone(backend);
    let idle = fleet.pane("idle");
    let mut phone = home.serve("fp-phone");
    phone.hello();
    for (action, behavior) in [("approve", "allow"), ("deny", "deny")] {
        let (child, id) = park(&home, &idle);
        phone.send(&json!({"schema":1,"id":"c","t":"card","pane":idle}).to_string());
        let card = phone.recv();
        assert_eq!(
            (&card["lane"], &card["extraction"]),
            (&json!("hook"), &json!("exact")),
            "{card}"
        );
        assert_eq!(
            card["pending_call"]["input"],
            json!({"command": "rm -rf build", "description": "clean"})
        );
        let episode = card["binder"]["expect_episode_ms"].clone();
        phone.send(
            &json!({"schema":1,"id":"d","t":"dispatch","slot":format!("{id}:{action}"),"host":"",
            "pane":idle,"action":action,
            "binder":{"expect_episode_ms":episode,"expect_permission_request":id}})
            .to_string(),
        );
        let receipt = phone.recv();
        assert_eq!(receipt["outcome"], "replied", "{receipt}");
        let out = child.wait_with_output().unwrap();
        assert_eq!(out.status.code(), Some(0));
        let answer: Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(
            answer["hookSpecificOutput"]["hookEventName"],
            "PermissionRequest"
        );
        assert_eq!(
            answer["hookSpecificOutput"]["decision"]["behavior"],
            behavior
        );
        let r = pane_row(&home, &idle);
        assert_eq!(
            (&r["state"], &r["permission_request"]),
            (&json!("working"), &Value::Null)
        );
        assert_eq!(
            parked_files(&home),
            Vec::<String>::new(),
            "nothing left parked"
        );
    }
}

fn an_unanswered_request_falls_back_to_the_dialog(backend: Backend) {
    let fleet = Fleet::up(backend);
    let home = fleet.home();
    home.write_config("[event]\npermission_wait_s = 1\n");
    let idle = fleet.pane("idle");
    let (child, _id) = park(&home, &idle);
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(0));
    assert!(
        out.stdout.is_empty(),
        "no decision: the agent shows its own dialog"
    );
    let r = pane_row(&home, &idle);
    assert_eq!(
        (&r["state"], &r["permission_request"]),
        (&json!("blocked"), &Value::Null)
    );
    // A hook the agent gives up on (SIGTERM) cleans up too.
    home.write_config("[event]\npermission_wait_s = 60\n");
    let (child, _id) = park(&home, &idle);
    let pid = child.id().to_string();
    assert!(
        test_support::command("kill")
            .args(["-TERM", &pid])
            .status()
            .unwrap()
            .success()
    );
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(0));
    assert!(out.stdout.is_empty());
    assert_eq!(pane_row(&home, &idle)["permission_request"], Value::Null);
    assert_eq!(parked_files(&home), Vec::<String>::new());
}

/// The agent gives up on its hook at any moment of its life (SIGTERM from 0 to 38 ms after the
/// start, spread over the park, the stamp and the wait): whatever the hook had done by then, it
/// leaves no request file and no permission stamp behind. A SIGTERM that lands before the
/// handlers are in (process start-up) kills a hook that has parked nothing yet.
fn a_sigterm_at_any_moment_leaves_no_request_behind(backend: Backend) {
    let fleet = Fleet::up(backend);
    let home = fleet.home();
    home.write_config("[event]\npermission_wait_s = 60\n");
    let idle = fleet.pane("idle");
    for round in 0..20_u64 {
        let child = start_permission_hook(&home, &idle);
        std::thread::sleep(Duration::from_millis(round * 2));
        let pid = child.id().to_string();
        assert!(
            test_support::command("kill")
                .args(["-TERM", &pid])
                .status()
                .unwrap()
                .success()
        );
        let out = child.wait_with_output().unwrap();
        assert!(out.stdout.is_empty(), "round {round}");
        assert_eq!(
            pane_row(&home, &idle)["permission_request"],
            Value::Null,
            "round {round}: exit {:?}",
            out.status
        );
        assert_eq!(
            parked_files(&home),
            Vec::<String>::new(),
            "round {round}: exit {:?}",
            out.status
        );
    }
}

/// The files in the runtime dir's `requests/`, but the fixture's own parked request.
fn parked_files(home: &Home) -> Vec<String> {
    std::fs::read_dir(home.runtime().join("corral/requests"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|name| !name.starts_with("req-blocked."))
        .collect()
}

#[test]
fn hooks_print_and_install_keep_the_users_settings() {
    let home = Home::new("unused");
    let snippet: Value = serde_json::from_str(&home.ok(&["hooks", "print", "claude"])).unwrap();
    let stop = snippet["hooks"]["Stop"][0]["hooks"][0]["command"]
        .as_str()
        .unwrap();
    assert!(stop.ends_with(" event claude Stop"), "{stop}");
    let settings = home.dir.path().join(".claude/settings.json");
    std::fs::create_dir_all(settings.parent().unwrap()).unwrap();
    std::fs::write(
        &settings,
        r#"{"model":"opus","permissions":{"allow":["Bash(ls)"]}}"#,
    )
    .unwrap();
    let first = home.ok(&["hooks", "install", "claude"]);
    assert!(first.starts_with("updated "), "{first}");
    let merged: Value = serde_json::from_str(&std::fs::read_to_string(&settings).unwrap()).unwrap();
    assert_eq!(merged["model"], "opus");
    assert_eq!(merged["permissions"]["allow"][0], "Bash(ls)");
    assert!(merged["hooks"]["PermissionRequest"].is_array());
    assert!(
        home.dir
            .path()
            .join(".claude/settings.json.corral-backup")
            .exists()
    );
    let second = home.ok(&["hooks", "install", "claude"]);
    assert!(second.contains("already has corral's hooks"), "{second}");

    // A file that was not there is made, and no backup is claimed.
    let codex = home.ok(&["hooks", "install", "codex"]);
    assert_eq!(codex.lines().count(), 2, "{codex}");
    assert!(
        codex.lines().all(|line| line.starts_with("created ")),
        "{codex}"
    );
    assert!(!codex.contains("corral-backup"), "{codex}");
    let config = std::fs::read_to_string(home.dir.path().join(".codex/config.toml")).unwrap();
    assert!(config.starts_with("notify = ["), "{config}");
    assert!(
        merged["hooks"]["StopFailure"].is_array(),
        "API errors reach the pane"
    );

    // Gemini CLI: its own events, millisecond time-outs, hooks switched on, the rest kept; a
    // person's `hooksConfig.enabled = false` is kept, and said.
    let gemini = home.dir.path().join(".gemini/settings.json");
    std::fs::create_dir_all(gemini.parent().unwrap()).unwrap();
    std::fs::write(
        &gemini,
        r#"{"theme":"GitHub","hooksConfig":{"enabled":false}}"#,
    )
    .unwrap();
    let said = home.ok(&["hooks", "install", "gemini"]);
    assert!(said.contains("hooksConfig.enabled is false"), "{said}");
    let merged: Value = serde_json::from_str(&std::fs::read_to_string(&gemini).unwrap()).unwrap();
    assert_eq!(merged["theme"], "GitHub");
    assert_eq!(merged["hooksConfig"]["enabled"], false);
    let notification = &merged["hooks"]["Notification"][0]["hooks"][0];
    assert!(
        notification["command"]
            .as_str()
            .unwrap()
            .ends_with(" event gemini Notification"),
        "{notification}"
    );
    assert_eq!(notification["timeout"], 10_000);
    std::fs::write(&gemini, r#"{"theme":"GitHub"}"#).unwrap();
    home.ok(&["hooks", "install", "gemini"]);
    let merged: Value = serde_json::from_str(&std::fs::read_to_string(&gemini).unwrap()).unwrap();
    assert_eq!(merged["hooksConfig"]["enabled"], true);
    let again = home.ok(&["hooks", "install", "gemini"]);
    assert!(again.contains("already has corral's hooks"), "{again}");

    let out = home
        .corral()
        .args(["hooks", "print", "opencode"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
}
