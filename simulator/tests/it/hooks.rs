//! Hook replay: recorded payloads through the host's own `corral event` (the workspace's `corral`
//! binary, beside `corral-sim`), on both backends: stamps, a permission request waiting in the
//! background for a verdict, `down` stopping a waiting hook, Codex's notify argument.

use std::path::PathBuf;

use crate::common::{Sim, corral, corral_sim, fixture, split, unique_socket};

/// A fleet of `transcripts.toml` with the runtime dir where `corral event` looks
/// (`$XDG_RUNTIME_DIR/corral`) and a config whose permission wait is long enough for a test.
struct Fleet {
    sim: Sim,
    socket: String,
}

impl Fleet {
    fn up(backend: &str) -> Fleet {
        // The hook tests run the workspace's `corral`, which corral-sim finds beside itself.
        corral();
        let sim = Sim::new();
        let socket = unique_socket(backend);
        if backend == "real" {
            sim.real_server(&socket);
        }
        std::fs::write(
            sim.path().join("config.toml"),
            "[event]\npermission_wait_s = 30\n",
        )
        .unwrap();
        let fleet = Fleet { sim, socket };
        let runtime = fleet.runtime();
        fleet.ok(&[
            "up",
            fixture("transcripts.toml").to_str().unwrap(),
            "--backend",
            backend,
            "--socket",
            &fleet.socket,
            "--now-ms",
            "1700000000000",
            "--runtime-dir",
            runtime.to_str().unwrap(),
        ]);
        fleet
    }

    fn runtime(&self) -> PathBuf {
        self.sim.path().join("xdg/corral")
    }

    /// Runs corral-sim with the host's config and the simulator's home; (stdout, stderr, code).
    fn run(&self, args: &[&str]) -> (String, String, i32) {
        split(
            self.sim
                .command(corral_sim())
                .args(args)
                .env("CORRAL_CONFIG", self.sim.path().join("config.toml"))
                .output()
                .unwrap(),
        )
    }

    fn ok(&self, args: &[&str]) -> String {
        let (out, err, code) = self.run(args);
        assert_eq!(code, 0, "corral-sim {args:?} failed: {err}");
        out
    }

    /// The pane's options, with the times `corral event` stamped from its clock as `<t>`.
    fn options(&self, pane: &str) -> String {
        let tmux = self.sim.sim_json().tmux_bin;
        let (out, _, _) = split(
            self.sim
                .command(&tmux)
                .args([
                    "-L",
                    &self.socket,
                    "-f",
                    "/dev/null",
                    "show-options",
                    "-p",
                    "-t",
                    pane,
                ])
                .output()
                .unwrap(),
        );
        out.lines()
            .map(|line| match line.split_once(' ') {
                Some((name @ ("@agent_since" | "@agent_stamped_at" | "@agent_turn_at"), _)) => {
                    format!("{name} <t>")
                }
                _ => line.replace(self.sim.path().to_str().unwrap(), "<SIM>"),
            })
            .collect::<Vec<_>>()
            .join("\n")
    }

    fn requests(&self) -> Vec<String> {
        let mut names: Vec<String> = std::fs::read_dir(self.runtime().join("requests"))
            .map(|entries| {
                entries
                    .flatten()
                    .map(|e| e.file_name().to_string_lossy().into_owned())
                    .collect()
            })
            .unwrap_or_default();
        names.sort();
        names
    }
}

impl Drop for Fleet {
    /// `down` stops any hook still waiting, however the test ended.
    fn drop(&mut self) {
        let _ = self.run(&["down"]);
    }
}

#[test]
fn replayed_hooks_stamp_the_same_options_on_both_backends() {
    let stamped: Vec<(String, String)> = ["real", "fake"]
        .map(|backend| {
            let fleet = Fleet::up(backend);
            let out = fleet.ok(&[
                "hook",
                "--pane",
                "codex-corpus",
                "codex",
                "Stop",
                "--payload",
                "@hooks/codex/stop.json",
                "--pane-facts",
            ]);
            assert_eq!(out, "", "a Stop hook prints nothing");
            fleet.ok(&[
                "hook",
                "--pane",
                "%0",
                "claude",
                "PreToolUse",
                "--payload",
                "@hooks/claude/pre-tool-use.json",
            ]);
            (fleet.options("%1"), fleet.options("%0"))
        })
        .into_iter()
        .collect();
    assert_eq!(
        stamped[0], stamped[1],
        "real (left) and fake (right) differ"
    );
    let (codex, claude) = &stamped[0];
    for line in [
        "@agent_name codex",
        "@agent_state idle",
        "@agent_attention 1",
        "@agent_turn_at <t>",
        "@agent_session e0e37cb2-03db-4b25-8dcd-0420546c4172",
    ] {
        assert!(
            codex.lines().any(|l| l == line),
            "{line} missing in\n{codex}"
        );
    }
    assert!(
        codex.contains("@agent_transcript <SIM>/home/.codex/sessions/"),
        "--pane-facts gives the pane's own transcript:\n{codex}"
    );
    for line in [
        "@agent_state working",
        "@agent_pending_tool Bash",
        "@agent_pending_call toolu_01A7mT3kq9LQvZbXc4fN2sRd",
        "@agent_session 5f1c0e2a-7d4b-4c1e-9a53-2b8f0d6e1a77",
    ] {
        assert!(
            claude.lines().any(|l| l == line),
            "{line} missing in\n{claude}"
        );
    }
    assert!(
        !claude.contains("@agent_detail"),
        "a tool starting clears the detail:\n{claude}"
    );
}

#[test]
fn a_permission_request_waits_in_the_background_for_its_verdict() {
    for backend in ["fake", "real"] {
        let fleet = Fleet::up(backend);
        let name = fleet.ok(&[
            "hook",
            "--pane",
            "claude-corpus",
            "claude",
            "PermissionRequest",
            "--payload",
            "@hooks/claude/permission-request.json",
            "--pane-facts",
            "--background",
            "--name",
            "perm",
        ]);
        assert_eq!(name, "perm\n");
        // Parked and announced before `--background` returned.
        let requests = fleet.requests();
        assert_eq!(requests.len(), 2, "{requests:?}");
        let id = requests[0].strip_suffix(".json").unwrap().to_owned();
        assert_eq!(requests[1], format!("{id}.lock"));
        let options = fleet.options("%0");
        assert!(
            options.contains(&format!("@agent_permission_request {id}")),
            "{options}"
        );
        let parked: serde_json::Value = serde_json::from_slice(
            &std::fs::read(fleet.runtime().join("requests").join(&requests[0])).unwrap(),
        )
        .unwrap();
        assert_eq!(parked["pane"], "%0");
        assert_eq!(parked["tool_input"]["command"], "rm -rf build");
        let (_, err, code) = fleet.run(&["hook-output", "perm", "--wait-ms", "0"]);
        assert_eq!(code, 1);
        assert!(err.contains("still running"), "{err}");
        // A dispatch's verdict, as the host's hook lane writes it.
        std::fs::create_dir_all(fleet.runtime().join("verdicts")).unwrap();
        std::fs::write(
            fleet.runtime().join("verdicts").join(&id),
            format!(r#"{{"decision":"deny","request":"{id}","message":"not now"}}"#),
        )
        .unwrap();
        let decision = fleet.ok(&["hook-output", "perm", "--wait-ms", "10000"]);
        assert_eq!(
            decision,
            "{\"hookSpecificOutput\":{\"hookEventName\":\"PermissionRequest\",\"decision\":{\"behavior\":\"deny\",\"message\":\"not now\"}}}\n"
        );
        assert_eq!(fleet.requests(), Vec::<String>::new(), "cleaned up");
        let after = fleet.options("%0");
        assert!(after.contains("@agent_state working"), "{after}");
        assert!(!after.contains("@agent_permission_request"), "{after}");
        let stderr = fleet.ok(&["hook-output", "perm", "--stderr"]);
        assert_eq!(stderr, "", "{backend}");
    }
}

#[test]
fn down_stops_a_hook_that_still_waits() {
    let fleet = Fleet::up("fake");
    fleet.ok(&[
        "hook",
        "--pane",
        "codex-corpus",
        "codex",
        "PermissionRequest",
        "--payload",
        "@hooks/codex/permission-request.json",
        "--background",
    ]);
    assert_eq!(fleet.requests().len(), 2);
    // As a `sim_background` step runs it: in the foreground with a ready file, then killed at
    // teardown, its `corral event` left behind for `down`.
    let mut foreground = fleet
        .sim
        .command(corral_sim())
        .args([
            "hook",
            "--pane",
            "claude-corpus",
            "claude",
            "PermissionRequest",
            "--payload",
            "@hooks/claude/permission-request.json",
            "--ready",
            "ready/r",
            "--name",
            "r",
        ])
        .env("CORRAL_CONFIG", fleet.sim.path().join("config.toml"))
        .spawn()
        .unwrap();
    let ready = fleet.sim.path().join("ready/r");
    for _ in 0..1000 {
        if ready.exists() {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    assert!(
        ready.exists(),
        "the ready file appears once the request is parked"
    );
    assert_eq!(fleet.requests().len(), 4);
    foreground.kill().unwrap();
    foreground.wait().unwrap();
    let record: serde_json::Value =
        serde_json::from_slice(&std::fs::read(fleet.sim.path().join("hooks/1.json")).unwrap())
            .unwrap();
    assert_eq!(record["pane"], "%1");
    assert_eq!(record["event"], "PermissionRequest");
    fleet.ok(&["down"]);
    assert_eq!(fleet.requests(), Vec::<String>::new());
    assert_eq!(fleet.ok(&["hook-output", "1", "--wait-ms", "0"]), "");
    assert_eq!(fleet.ok(&["hook-output", "r", "--wait-ms", "0"]), "");
}

#[test]
fn codex_notify_gets_its_payload_as_an_argument() {
    let fleet = Fleet::up("fake");
    fleet.ok(&[
        "hook",
        "--pane",
        "codex-corpus",
        "codex",
        "notify",
        "--payload",
        r#"{"type":"agent-turn-complete","thread-id":"th-1","turn-id":"3"}"#,
        "--as-argument",
        "--name",
        "n",
    ]);
    let options = fleet.options("%1");
    assert!(options.contains("@agent_session th-1"), "{options}");
    assert!(options.contains("@agent_attention 1"), "{options}");
    assert_eq!(
        std::fs::read_to_string(fleet.sim.path().join("hooks/n.payload")).unwrap(),
        r#"{"type":"agent-turn-complete","thread-id":"th-1","turn-id":"3"}"#
    );
    let (_, err, code) = fleet.run(&["hook", "--pane", "%1", "codex", "Stop", "--name", "n"]);
    assert_eq!(code, 1);
    assert!(err.contains("ran already"), "{err}");
}

#[test]
fn a_runtime_dir_corral_event_would_not_find_is_refused() {
    let (sim, _) = crate::common::fake_fleet("small.toml");
    let (_, err, code) = split(sim.run(corral_sim(), &["hook", "--pane", "%0", "claude", "Stop"]));
    assert_eq!(code, 1);
    assert!(err.contains("--runtime-dir <dir>/corral"), "{err}");
}
