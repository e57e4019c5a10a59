//! Transcript operations: write (and stamp), grow, rewrite, truncate, replace, big, and a
//! fixture's transcript samples written as they are.

use std::os::unix::fs::MetadataExt;

use serde_json::Value;

use crate::common::{Sim, corral_sim, fake_fleet, split, unique_socket};

fn records(path: &str) -> Vec<Value> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

#[test]
fn write_grow_rewrite_truncate_replace() {
    let (sim, socket) = fake_fleet("small.toml");
    let path = sim.sim(&[
        "transcript",
        "write",
        "--pane",
        "claude-idle",
        "--format",
        "claude",
        "--events",
        "12",
        "--unknown-every",
        "4",
    ]);
    let path = path.trim_end().to_owned();
    assert!(path.contains("/home/.claude/projects/"), "{path}");
    let (stamped, _, _) = sim.fake(&[
        "-L",
        &socket,
        "display-message",
        "-p",
        "-t",
        "%10",
        "#{@agent_transcript}|#{@agent_session}",
    ]);
    let first = records(&path);
    assert_eq!(
        stamped,
        format!("{path}|{}\n", first[0]["sessionId"].as_str().unwrap())
    );
    assert_eq!(first.len(), 12);
    assert!(first.iter().any(|r| r["type"] == "x-corral-future-record"));

    sim.sim(&[
        "transcript",
        "grow",
        "--pane",
        "claude-idle",
        "--events",
        "5",
        "--pending-call",
    ]);
    let grown = records(&path);
    assert_eq!(grown.len(), 17);
    assert_eq!(grown[..12], first[..], "growing only appends");
    assert_eq!(grown[12]["parentUuid"], grown[11]["uuid"]);
    assert_eq!(grown[16]["message"]["content"][0]["type"], "tool_use");

    let inode = std::fs::metadata(&path).unwrap().ino();
    let before = std::fs::read(&path).unwrap();
    sim.sim(&["transcript", "rewrite", "--pane", "claude-idle"]);
    let after = std::fs::read(&path).unwrap();
    assert_eq!(
        (after.len(), std::fs::metadata(&path).unwrap().ino()),
        (before.len(), inode)
    );
    assert_ne!(after, before);

    sim.sim(&["transcript", "truncate", "--pane", "%10", "--lines", "3"]);
    assert_eq!(records(&path).len(), 3);
    assert_eq!(std::fs::metadata(&path).unwrap().ino(), inode);
    sim.sim(&["transcript", "truncate", "--path", &path, "--bytes", "10"]);
    assert_eq!(std::fs::metadata(&path).unwrap().len(), 10);

    sim.sim(&[
        "transcript",
        "write",
        "--pane",
        "codex-work",
        "--format",
        "codex",
        "--events",
        "9",
        "--no-stamp",
    ]);
    let codex = sim.sim_json().details["codex-work"]
        .transcript
        .clone()
        .unwrap()
        .0;
    assert!(codex.contains("/home/.codex/sessions/"), "{codex}");
    assert_eq!(records(&codex)[0]["type"], "session_meta");
    let bytes = std::fs::read(&codex).unwrap();
    let inode = std::fs::metadata(&codex).unwrap().ino();
    sim.sim(&["transcript", "replace", "--pane", "codex-work"]);
    assert_eq!(std::fs::read(&codex).unwrap(), bytes, "same bytes");
    assert_ne!(std::fs::metadata(&codex).unwrap().ino(), inode, "new inode");
    sim.sim(&[
        "transcript",
        "replace",
        "--pane",
        "codex-work",
        "--events",
        "4",
    ]);
    assert_eq!(records(&codex).len(), 4);
}

#[test]
fn big_files_reach_their_size() {
    let (sim, _) = fake_fleet("small.toml");
    let path = sim.path().join("big.jsonl");
    sim.sim(&[
        "transcript",
        "big",
        "--path",
        path.to_str().unwrap(),
        "--format",
        "codex",
        "--bytes",
        "2M",
    ]);
    let len = std::fs::metadata(&path).unwrap().len();
    assert!(len >= 2 << 20, "{len}");
    assert!(len < (2 << 20) + 16_384, "{len}");
    let lines = records(path.to_str().unwrap());
    assert_eq!(lines[0]["type"], "session_meta");
    // The fixture's own transcripts are there too, stamped.
    let perm = sim.sim_json().details["claude-perm"]
        .transcript
        .clone()
        .unwrap()
        .0;
    let last = records(&perm).pop().unwrap();
    assert_eq!(
        last["message"]["content"][0]["type"], "tool_use",
        "pending_call = true ends on a call"
    );
}

#[test]
fn a_fixture_asks_for_the_corpus_and_a_transcript_rotates() {
    let (sim, socket) = fake_fleet("transcripts.toml");
    let details = sim.sim_json().details;
    let claude = details["claude-corpus"].transcript.clone().unwrap().0;
    let codex = details["codex-corpus"].transcript.clone().unwrap().0;
    let kinds = |path: &str| -> Vec<String> {
        records(path)
            .iter()
            .map(|r| match r["payload"]["type"].as_str() {
                Some(inner) => format!("{}:{inner}", r["type"].as_str().unwrap()),
                None => r["type"].as_str().unwrap().to_owned(),
            })
            .collect()
    };
    let claude_kinds = kinds(&claude);
    assert_eq!(claude_kinds.len(), 20);
    assert_eq!(
        claude_kinds[..3],
        ["summary", "file-history-snapshot", "user"]
    );
    assert!(claude_kinds.contains(&"x-corral-drift".to_owned()));
    let last = records(&claude).pop().unwrap();
    assert_eq!(
        last["message"]["content"][0]["input"]["command"],
        "rm -rf build"
    );
    // The pinned clock: the last record is one second before "now".
    assert_eq!(last["timestamp"], "2023-11-14T22:13:19.000Z");
    let codex_kinds = kinds(&codex);
    assert_eq!(codex_kinds.len(), 27);
    assert_eq!(codex_kinds[0], "session_meta");
    assert_eq!(codex_kinds[26], "event_msg:exec_approval_request");
    assert!(std::fs::metadata(&claude).unwrap().len() > 1 << 20);
    let (stamped, _, _) = sim.fake(&[
        "-L",
        &socket,
        "display-message",
        "-p",
        "-t",
        "%1",
        "#{@agent_transcript}",
    ]);
    assert_eq!(stamped.trim_end(), codex);

    // `write --corpus` gives the same bytes for the same pane and clock.
    let again = sim.path().join("again.jsonl");
    let written = sim.sim(&[
        "transcript",
        "write",
        "--pane",
        "claude-corpus",
        "--format",
        "claude",
        "--corpus",
        "--path",
        again.to_str().unwrap(),
        "--no-stamp",
    ]);
    assert_eq!(written.trim_end(), again.to_str().unwrap());
    let untimed = |path: &str| -> Vec<Value> {
        records(path)
            .into_iter()
            .map(|mut r| {
                if let Some(map) = r.as_object_mut() {
                    map.remove("timestamp");
                    map.remove("snapshot");
                }
                r
            })
            .collect()
    };
    assert!(untimed(again.to_str().unwrap()) == untimed(&claude));

    let inode = std::fs::metadata(&codex).unwrap().ino();
    let before = std::fs::read(&codex).unwrap();
    let moved = sim.sim(&[
        "transcript",
        "rotate",
        "--pane",
        "codex-corpus",
        "--events",
        "4",
    ]);
    assert_eq!(moved.trim_end(), format!("{codex}.1"));
    assert_eq!(std::fs::read(format!("{codex}.1")).unwrap(), before);
    assert_eq!(
        std::fs::metadata(format!("{codex}.1")).unwrap().ino(),
        inode
    );
    let fresh = records(&codex);
    assert_eq!(fresh.len(), 4);
    assert_eq!(fresh[0]["type"], "session_meta");
    assert_ne!(std::fs::metadata(&codex).unwrap().ino(), inode);
}

/// A fixture folder of its own: `fleet.toml` with the panes given (TOML tables), and
/// `transcripts/` with the samples given.
fn fixture_dir(panes: &str, samples: &[(&str, &[u8])]) -> (tempfile::TempDir, std::path::PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let fixture = dir.path().join("fleet.toml");
    std::fs::write(
        &fixture,
        format!("[[session]]\nname = 'agents'\n[[session.window]]\n{panes}"),
    )
    .unwrap();
    std::fs::create_dir_all(dir.path().join("transcripts")).unwrap();
    for (name, bytes) in samples {
        std::fs::write(dir.path().join("transcripts").join(name), bytes).unwrap();
    }
    (dir, fixture)
}

/// `corral-sim up` of `fixture` on the fake: (stdout, stderr, exit code).
fn up(sim: &Sim, fixture: &std::path::Path, socket: &str) -> (String, String, i32) {
    split(sim.run(
        corral_sim(),
        &[
            "up",
            fixture.to_str().unwrap(),
            "--backend",
            "fake",
            "--socket",
            socket,
            "--now-ms",
            "1700000000000",
        ],
    ))
}

/// Samples no generator would write: odd spacing, a line that is not JSON, CRLF, no final
/// newline. Only a verbatim copy keeps them.
const CLAUDE_SAMPLE: &[u8] =
    b"{\"type\":\"user\",\"version\":\"2.1.9\"}\n{ \"spaced\" : true }\r\nnot json\n{\"tail\":1}";
const CODEX_SAMPLE: &[u8] =
    b"{\"type\":\"session_meta\",\"payload\":{\"cli_version\":\"0.104.0\"}}\n";

#[test]
fn a_fixtures_sample_is_written_as_it_is_where_the_pane_is_stamped() {
    let (_dir, fixture) = fixture_dir(
        "[[session.window.pane]]\nname = 'claude-sample'\nagent = 'claude'\nstate = 'idle'\n\
         transcript = { format = 'claude', sample = 'claude-2.1-late.jsonl' }\n\
         [[session.window.pane]]\nname = 'codex-sample'\nagent = 'codex'\nstate = 'blocked'\n\
         detail = 'permission'\npending_tool = 'Bash'\n\
         transcript = { format = 'codex', sample = 'codex-0.104.jsonl' }\n",
        &[
            ("claude-2.1-late.jsonl", CLAUDE_SAMPLE),
            ("codex-0.104.jsonl", CODEX_SAMPLE),
        ],
    );
    let sim = Sim::new();
    let socket = unique_socket("sample");
    let (_, err, code) = up(&sim, &fixture, &socket);
    assert_eq!(code, 0, "{err}");
    let details = sim.sim_json().details;
    for (pane, id, sample, store) in [
        (
            "claude-sample",
            "%0",
            CLAUDE_SAMPLE,
            "/home/.claude/projects/",
        ),
        (
            "codex-sample",
            "%1",
            CODEX_SAMPLE,
            "/home/.codex/sessions/2023/11/14/",
        ),
    ] {
        let stamped = sample_as_stamped(&sim, &socket, &details, pane, id, sample);
        assert!(stamped.contains(store), "{pane}: {stamped}");
    }

    // `transcript write --sample` finds its file beside the fixture `up` brought up.
    let written = sim.sim(&[
        "transcript",
        "write",
        "--pane",
        "codex-sample",
        "--format",
        "codex",
        "--sample",
        "claude-2.1-late.jsonl",
    ]);
    let written = written.trim_end();
    assert!(
        std::fs::read(written).unwrap() == CLAUDE_SAMPLE,
        "{written}"
    );
    let (stamped, _, _) = sim.fake(&[
        "-L",
        &socket,
        "display-message",
        "-p",
        "-t",
        "%1",
        "#{@agent_transcript}",
    ]);
    assert_eq!(stamped.trim_end(), written);
    for (args, said) in [
        (
            &["--sample", "missing.jsonl"][..],
            "missing.jsonl does not exist",
        ),
        (&["--sample", "../fleet.toml"][..], "plain file name"),
        (
            &["--sample", "codex-0.104.jsonl", "--events", "3"][..],
            "cannot be used with",
        ),
        (
            &["--sample", "codex-0.104.jsonl", "--corpus"][..],
            "cannot be used with",
        ),
    ] {
        let mut all = vec![
            "transcript",
            "write",
            "--pane",
            "codex-sample",
            "--format",
            "codex",
        ];
        all.extend(args);
        let (_, err, code) = split(sim.run(corral_sim(), &all));
        assert_ne!(code, 0, "{args:?}");
        assert!(err.contains(said), "{args:?}: {err}");
    }
}

#[test]
fn a_missing_or_contradicted_sample_brings_nothing_up() {
    let (dir, fixture) = fixture_dir(
        "[[session.window.pane]]\nname = 'claude-2.0'\nagent = 'claude'\nstate = 'idle'\n\
         transcript = { format = 'claude', sample = 'claude-2.0.jsonl' }\n",
        &[],
    );
    let sim = Sim::new();
    let socket = unique_socket("sample-missing");
    let (out, err, code) = up(&sim, &fixture, &socket);
    assert_eq!((out.as_str(), code), ("", 1), "{err}");
    let missing = dir.path().join("transcripts/claude-2.0.jsonl");
    assert!(
        err.contains(&format!("{} does not exist", missing.display())),
        "{err}"
    );
    assert!(err.contains("pane claude-2.0"), "{err}");
    assert!(!sim.path().join("sim.json").exists());
    let (_, _, code) = sim.fake(&["-L", &socket, "has-session"]);
    assert_ne!(code, 0, "a server was brought up");

    std::fs::write(
        &fixture,
        "[[session]]\nname = 'agents'\n[[session.window]]\n[[session.window.pane]]\n\
         name = 'claude-2.0'\nagent = 'claude'\n\
         transcript = { format = 'claude', sample = 'claude-2.0.jsonl', events = 5 }\n",
    )
    .unwrap();
    let (_, err, code) = up(&sim, &fixture, &socket);
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("byte for byte"), "{err}");
    assert!(err.contains("`events`"), "{err}");
}

/// The transcript path stamped on pane `id`, after checking that it is the one `sim.json` gives
/// `pane` and that the file there holds `sample` byte for byte.
fn sample_as_stamped(
    sim: &Sim,
    socket: &str,
    details: &std::collections::BTreeMap<String, golden::sim_file::PaneDetail>,
    pane: &str,
    id: &str,
    sample: &[u8],
) -> String {
    let (stamped, _, _) = sim.fake(&[
        "-L",
        socket,
        "display-message",
        "-p",
        "-t",
        id,
        "#{@agent_transcript}",
    ]);
    let stamped = stamped.trim_end().to_owned();
    assert_eq!(
        details[pane].transcript.clone().unwrap().0,
        stamped,
        "{pane}"
    );
    assert!(
        std::fs::read(&stamped).unwrap() == sample,
        "{pane}: {stamped}"
    );
    stamped
}

/// Gemini CLI chats, as they are: a JSON-lines one and one JSON document.
const GEMINI_LINES: &[u8] = b"{\"sessionId\":\"8f14e45f-ceea\",\"projectHash\":\"ab\",\"startTime\":\"t\",\"lastUpdated\":\"t\",\"kind\":\"main\"}\n{\"$rewindTo\":\"m1\"}\n";
const GEMINI_DOCUMENT: &[u8] = b"{\n  \"sessionId\": \"b52f0c8e-91d4\",\n  \"messages\": []\n}";

#[test]
fn a_gemini_sample_lands_in_geminis_store_and_nothing_generates_gemini_records() {
    let (_dir, fixture) = fixture_dir(
        "[[session.window.pane]]\nname = 'gemini-lines'\nagent = 'gemini'\nstate = 'idle'\n\
         session_id = '8f14e45f-ceea'\n\
         transcript = { format = 'gemini', sample = 'gemini-0.39.jsonl' }\n\
         [[session.window.pane]]\nname = 'gemini-document'\nagent = 'gemini'\nstate = 'idle'\n\
         session_id = 'b52f0c8e-91d4'\n\
         transcript = { format = 'gemini', sample = 'gemini-0.38.json' }\n",
        &[
            ("gemini-0.39.jsonl", GEMINI_LINES),
            ("gemini-0.38.json", GEMINI_DOCUMENT),
        ],
    );
    let sim = Sim::new();
    let socket = unique_socket("gemini");
    let (_, err, code) = up(&sim, &fixture, &socket);
    assert_eq!(code, 0, "{err}");
    let details = sim.sim_json().details;
    for (pane, id, sample, file) in [
        (
            "gemini-lines",
            "%0",
            GEMINI_LINES,
            "/home/.gemini/tmp/plain/chats/session-2023-11-14T22-13-8f14e45f.jsonl",
        ),
        (
            "gemini-document",
            "%1",
            GEMINI_DOCUMENT,
            "/home/.gemini/tmp/plain/chats/session-2023-11-14T22-13-b52f0c8e.json",
        ),
    ] {
        let stamped = sample_as_stamped(&sim, &socket, &details, pane, id, sample);
        assert!(stamped.ends_with(file), "{pane}: {stamped}");
    }
    for args in [
        &[
            "transcript",
            "grow",
            "--pane",
            "gemini-lines",
            "--events",
            "2",
        ][..],
        &["transcript", "rotate", "--pane", "gemini-lines"][..],
        &[
            "transcript",
            "big",
            "--pane",
            "gemini-document",
            "--bytes",
            "1K",
        ][..],
        &[
            "transcript",
            "write",
            "--pane",
            "gemini-lines",
            "--format",
            "gemini",
        ][..],
    ] {
        let (_, err, code) = split(sim.run(corral_sim(), args));
        assert_ne!(code, 0, "{args:?}");
        assert!(err.contains("generates no Gemini CLI"), "{args:?}: {err}");
    }
    assert!(
        std::fs::read(&details["gemini-lines"].transcript.clone().unwrap().0).unwrap()
            == GEMINI_LINES,
        "left as it was"
    );
}
