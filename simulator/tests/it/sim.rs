//! corral-sim: bring-up and tear-down, steps, parked requests, panes added and killed, titles,
//! directories and branches, and refusals of bad input.

use golden::Backend;
use serde_json::{Value, json};

use crate::common::{
    PARITY_FORMAT, Sim, command, corral_sim, fake_fleet, fixture, split, unique_socket,
};

#[test]
fn the_large_fixture_comes_up_and_down_on_the_fake() {
    let (sim, socket) = fake_fleet("large.toml");
    let (out, _, code) = sim.fake(&["-L", &socket, "list-panes", "-a", "-F", PARITY_FORMAT]);
    assert_eq!(code, 0);
    assert_eq!(out.lines().count(), 1000);
    assert_eq!(out.lines().next(), Some("%0 claude working fleet-a:0.0"));
    assert_eq!(
        out.lines().last(),
        Some("%999 claude blocked fleet-b:24.19")
    );
    let panes = sim.sim_json().panes.len();
    assert_eq!(panes, 1000);
    sim.sim(&["down"]);
    let (_, err, code) = sim.fake(&["-L", &socket, "list-panes", "-a", "-F", PARITY_FORMAT]);
    assert_eq!(code, 1);
    assert!(err.starts_with("no server running on "), "{err}");
    sim.sim(&["down"]);
}

#[test]
fn up_prints_sim_json_and_stamps_the_fixture() {
    let (sim, socket) = fake_fleet("small.toml");
    let doc = sim.sim_json();
    assert_eq!(doc.backend, Backend::Fake);
    assert_eq!(doc.socket, socket);
    assert!(doc.tmux_bin.ends_with("/corral-fake-tmux"));
    assert_eq!(doc.panes["claude-perm"], "%0");
    assert_eq!(doc.panes["claude-idle"], "%10");
    let show = |pane: &str| {
        sim.fake(&["-L", &socket, "show-options", "-p", "-t", pane])
            .0
    };
    let perm = show("%0");
    for line in [
        "@agent_name claude",
        "@agent_state blocked",
        "@agent_detail permission",
        "@agent_since 1699999910000",
        "@agent_stamped_at 1700000000000",
        "@agent_permission_request req-claude-perm",
        "@agent_pending_tool Bash",
    ] {
        assert!(perm.lines().any(|l| l == line), "{line} missing in\n{perm}");
    }
    assert!(
        show("%5").lines().all(|l| !l.starts_with("@agent_")),
        "the plain pane has no agent options"
    );
    let (title, _, _) = sim.fake(&[
        "-L",
        &socket,
        "display-message",
        "-p",
        "-t",
        "%5",
        "#{pane_title}",
    ]);
    assert_eq!(title, "TITLE-CANARY-shell\n");
    // The parked request, exactly as pane-options.md describes it.
    let request: Value = serde_json::from_slice(
        &std::fs::read(sim.path().join("run/requests/req-claude-perm.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(
        request,
        json!({
            "id": "req-claude-perm", "pane": "%0", "session_id": request["session_id"].clone(),
            "tool_name": "Bash",
            "tool_input": { "command": "rm -rf build", "description": "Remove the build directory" },
            "episode_ms": 1_699_999_910_000u64, "stamped_at_ms": 1_700_000_000_000u64,
        })
    );
    let keys: Vec<&String> = request.as_object().unwrap().keys().collect();
    assert_eq!(
        keys,
        [
            "id",
            "pane",
            "session_id",
            "tool_name",
            "tool_input",
            "episode_ms",
            "stamped_at_ms"
        ]
    );
    // Working directories are real repositories on their branches, one a linked worktree.
    let (paths, _, _) = sim.fake(&[
        "-L",
        &socket,
        "list-panes",
        "-a",
        "-F",
        "#{pane_id} #{pane_current_path}",
    ]);
    let cwd_of = |id: &str| {
        paths
            .lines()
            .find_map(|l| l.strip_prefix(&format!("{id} ")))
            .unwrap()
            .to_owned()
    };
    let head = |dir: &str| std::fs::read_to_string(format!("{dir}/.git/HEAD")).unwrap();
    assert_eq!(head(&cwd_of("%0")), "ref: refs/heads/main\n");
    assert_eq!(head(&cwd_of("%2")), "ref: refs/heads/develop\n");
    assert!(
        std::fs::read_to_string(format!("{}/.git", cwd_of("%1")))
            .unwrap()
            .starts_with("gitdir: ")
    );
}

#[test]
fn steps_stamp_like_hooks() {
    let (sim, socket) = fake_fleet("small.toml");
    let get = |pane: &str, option: &str| {
        sim.fake(&[
            "-L",
            &socket,
            "show-options",
            "-p",
            "-q",
            "-v",
            "-t",
            pane,
            option,
        ])
        .0
        .trim_end()
        .to_owned()
    };
    sim.sim(&[
        "step",
        "--pane",
        "gemini-done",
        "--state",
        "working",
        "--no-attention",
        "--context",
        "55",
        "--now-ms",
        "1700000050000",
    ]);
    assert_eq!(get("%3", "@agent_state"), "working");
    assert_eq!(get("%3", "@agent_since"), "1700000050000");
    assert_eq!(get("%3", "@agent_stamped_at"), "1700000050000");
    assert_eq!(get("%3", "@agent_attention"), "");
    assert_eq!(get("%3", "@agent_context"), "55");
    assert_eq!(get("%3", "@agent_context_at"), "1700000050000");

    sim.sim(&[
        "step",
        "--pane",
        "%3",
        "--detail",
        "x",
        "--turn-at",
        "-5s",
        "--no-stamp",
        "--now-ms",
        "1700000060000",
    ]);
    assert_eq!(
        get("%3", "@agent_since"),
        "1700000050000",
        "no --state leaves since alone"
    );
    assert_eq!(get("%3", "@agent_turn_at"), "1700000055000");
    assert_eq!(get("%3", "@agent_stamped_at"), "1700000050000");
    sim.sim(&[
        "step",
        "--pane",
        "%3",
        "--unset",
        "detail",
        "--unset",
        "@agent_turn_at",
        "--set",
        "@agent_notified_at=42",
        "--mute-until",
        "99999999999999",
    ]);
    assert_eq!(get("%3", "@agent_detail"), "");
    assert_eq!(get("%3", "@agent_turn_at"), "");
    assert_eq!(get("%3", "@agent_notified_at"), "42");
    assert_eq!(get("%3", "@agent_mute_until"), "99999999999999");

    sim.sim(&[
        "step",
        "--pane",
        "codex-work",
        "--state",
        "blocked",
        "--detail",
        "permission",
        "--since",
        "1700000070000",
        "--park-request",
        "req-9",
        "--tool",
        "Edit",
        "--tool-input",
        r#"{"file_path":"src/a.rs","old_string":"x"}"#,
        "--session-id",
        "ses-9",
        "--now-ms",
        "1700000080000",
    ]);
    assert_eq!(get("%1", "@agent_permission_request"), "req-9");
    let parked = std::fs::read_to_string(sim.path().join("run/requests/req-9.json")).unwrap();
    assert_eq!(
        parked,
        "{\"id\":\"req-9\",\"pane\":\"%1\",\"session_id\":\"ses-9\",\"tool_name\":\"Edit\",\"tool_input\":{\"file_path\":\"src/a.rs\",\"old_string\":\"x\"},\"episode_ms\":1700000070000,\"stamped_at_ms\":1700000080000}\n"
    );
    sim.sim(&["step", "--pane", "codex-work", "--unpark", "req-9"]);
    assert!(!sim.path().join("run/requests/req-9.json").exists());

    sim.sim(&["step", "--pane", "claude-idle", "--state", "zombie"]);
    assert_eq!(
        get("%10", "@agent_state"),
        "zombie",
        "any token can be stamped, to test the host"
    );
}

#[test]
fn titles_directories_and_branches_change() {
    let (sim, socket) = fake_fleet("small.toml");
    sim.sim(&[
        "step",
        "--pane",
        "claude-idle",
        "--title",
        "NEW-CANARY",
        "--repo",
        "web",
        "--checkout",
        "feature/x",
    ]);
    let (out, _, _) = sim.fake(&[
        "-L",
        &socket,
        "display-message",
        "-p",
        "-t",
        "%10",
        "#{pane_title}|#{pane_current_path}",
    ]);
    let web = sim.path().join("repos/web");
    assert_eq!(out, format!("NEW-CANARY|{}\n", web.display()));
    assert_eq!(
        std::fs::read_to_string(web.join(".git/HEAD")).unwrap(),
        "ref: refs/heads/feature/x\n"
    );
}

#[test]
fn panes_appear_and_vanish() {
    let (sim, socket) = fake_fleet("small.toml");
    assert_eq!(
        sim.sim(&[
            "pane",
            "add",
            "--name",
            "n1",
            "--session",
            "work",
            "--agent",
            "claude",
            "--state",
            "idle"
        ]),
        "%11\n"
    );
    assert_eq!(
        sim.sim(&[
            "pane",
            "add",
            "--name",
            "n2",
            "--session",
            "fresh",
            "--repo",
            "api"
        ]),
        "%12\n"
    );
    sim.sim(&["pane", "kill", "--pane", "shell"]);
    let (out, _, _) = sim.fake(&["-L", &socket, "list-panes", "-a", "-F", PARITY_FORMAT]);
    assert!(out.contains("%11 claude idle work:1.2\n"), "{out}");
    assert!(out.contains("%12   fresh:0.0\n"), "{out}");
    assert!(!out.contains("%5 "), "{out}");
    assert_eq!(sim.sim_json().panes["n2"], "%12");
    assert!(!sim.sim_json().panes.contains_key("shell"));
}

#[test]
fn bad_input_is_one_readable_line() {
    let sim = Sim::new();
    let bad = sim.path().join("bad.toml");
    std::fs::write(&bad, "[[session]]\nname = 'a'\n[[session.window]]\n[[session.window.pane]]\nname = 'x'\nstat = 'idle'\n").unwrap();
    let socket = unique_socket("bad");
    let (out, err, code) = split(sim.run(
        corral_sim(),
        &["up", bad.to_str().unwrap(), "--socket", &socket],
    ));
    assert_eq!((out.as_str(), code), ("", 1));
    assert!(err.starts_with("corral-sim: parsing fixture"), "{err}");
    assert!(err.contains("stat"), "{err}");

    let (_, err, code) = split(sim.run(corral_sim(), &["step", "--pane", "x", "--state", "idle"]));
    assert_eq!(code, 1);
    assert!(err.contains("sim.json is missing"), "{err}");

    let (_, err, code) = split(
        command(corral_sim())
            .env_remove("CORRAL_SIM_DIR")
            .args(["down"])
            .output()
            .unwrap(),
    );
    assert_eq!(code, 1);
    assert_eq!(err.lines().count(), 1);
    assert!(err.contains("CORRAL_SIM_DIR"), "{err}");

    let (sim2, live_socket) = fake_fleet("small.toml");
    let (_, err, code) = split(sim2.run(
        corral_sim(),
        &["step", "--pane", "nobody", "--state", "idle"],
    ));
    assert_eq!(code, 1);
    assert!(err.contains("no pane named \"nobody\""), "{err}");
    let (_, _, code) = split(sim2.run(
        corral_sim(),
        &[
            "up",
            fixture("small.toml").to_str().unwrap(),
            "--socket",
            &live_socket,
        ],
    ));
    assert_eq!(code, 1, "a second up on a live socket is refused");
}

#[test]
fn verdicts_list_what_dispatches_wrote_for_parked_requests() {
    let (sim, _) = fake_fleet("small.toml");
    assert_eq!(sim.sim(&["verdicts"]), "", "no verdicts dir yet");
    let verdicts = sim.path().join("run/verdicts");
    std::fs::create_dir_all(&verdicts).unwrap();
    std::fs::write(
        verdicts.join("req-claude-perm"),
        r#"{"decision":"allow","request":"req-claude-perm"}"#,
    )
    .unwrap();
    std::fs::write(verdicts.join("req-a"), "half-written").unwrap();
    assert_eq!(
        sim.sim(&["verdicts"]),
        "{\"request\":\"req-a\",\"verdict\":\"half-written\"}\n\
         {\"request\":\"req-claude-perm\",\"verdict\":{\"decision\":\"allow\",\"request\":\"req-claude-perm\"}}\n"
    );
    let elsewhere = sim.path().join("elsewhere");
    assert_eq!(
        sim.sim(&["verdicts", "--runtime-dir", elsewhere.to_str().unwrap()]),
        ""
    );
}
