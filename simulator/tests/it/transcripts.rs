//! Transcript operations: write (and stamp), grow, rewrite, truncate, replace, big.

use std::os::unix::fs::MetadataExt;

use serde_json::Value;

use crate::common::fake_fleet;

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
