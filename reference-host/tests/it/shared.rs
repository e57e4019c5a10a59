//! The cycle reads a host's `serve` processes share (docs/protocol.md "Shared cycle reads"):
//! streams of several connections cycle on one schedule and read tmux about once per instant
//! between them, and each still publishes every move once.

use std::time::Duration;

use serde_json::json;

use crate::support::{Backend, CallLog, Host, fleet_with_phone};

on_both_backends!(four_streams_share_their_cycle_reads_and_each_sees_every_move);

/// Four connections streaming edges at a 500 ms cycle: over ten cycles, alone they would read
/// tmux forty times; on one schedule they read it about ten times (the bound leaves room for
/// processes a loaded machine wakes too late to share). A move then reaches each once.
fn four_streams_share_their_cycle_reads_and_each_sees_every_move(backend: Backend) {
    let (fleet, mut home) = fleet_with_phone(backend);
    let calls = CallLog::install(&mut home);
    home.write_config("[serve]\nreconcile_interval_ms = 500\n");
    home.patient_tmux();
    let mut hosts: Vec<Host> = (0..4)
        .map(|_| {
            let mut host = home.serve("fp-phone");
            host.hello();
            host.send(r#"{"schema":1,"id":"sub","t":"subscribe","events":true}"#);
            assert_eq!(host.recv()["t"], "ack");
            host
        })
        .collect();
    // Every stream past its first cycle and on the schedule.
    std::thread::sleep(Duration::from_millis(1500));
    calls.clear();
    std::thread::sleep(Duration::from_millis(5000));
    let reads = calls
        .calls()
        .iter()
        .filter(|c| c.contains("list-panes -a"))
        .count();
    assert!(
        (8..=20).contains(&reads),
        "{reads} fleet reads for four streams over ten cycles: {:?}",
        calls.calls()
    );
    let idle = fleet.pane("idle");
    fleet.step(&idle, &["--state", "working"]);
    for host in &mut hosts {
        let edge = host.recv();
        assert_eq!(
            (&edge["pane"], &edge["from"], &edge["to"]),
            (&json!(idle), &json!("idle"), &json!("working")),
            "{edge}"
        );
        host.silent_for(Duration::from_millis(600));
    }
}
