//! `corral serve` under what a bad night does to it, on a scratch real tmux server (and the fake
//! where both can): a tmux that hangs (a stopped server behind a wrapper script), a client that
//! closes its read end, a client that stops reading, SIGTERM and end of input while stdout is
//! blocked, a tmux that is missing, a tmux server that dies while a stream runs (between two
//! cycles, or inside one's read), a tmux that exits non-zero, prints garbage or is stopped while
//! every kind of request asks it.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use serde_json::json;
use test_support::{command, unique};

use crate::support::{
    Backend, CallLog, Fleet, Gate, Home, Host, PATIENCE, eventually, fds, fleet_with_phone,
    is_error, marked_processes, script, threads,
};

const SUBSCRIBE_EDGES: &str = r#"{"schema":1,"id":"sub","t":"subscribe","events":true}"#;

fn signal(pid: u32, name: &str) {
    let status = command("kill")
        .arg(format!("-{name}"))
        .arg(pid.to_string())
        .status()
        .unwrap();
    assert!(status.success(), "kill -{name} {pid}");
}

/// A tmux server stopped with SIGSTOP, resumed when dropped whatever the test did, so the fleet
/// can be taken down.
struct Stopped(u32);

impl Stopped {
    fn new(pid: u32) -> Stopped {
        signal(pid, "STOP");
        Stopped(pid)
    }
}

impl Drop for Stopped {
    fn drop(&mut self) {
        signal(self.0, "CONT");
    }
}

/// Waits up to [`PATIENCE`] for `done`.
fn wait_for(what: &str, done: impl Fn() -> bool) {
    let start = Instant::now();
    while !done() {
        assert!(start.elapsed() < PATIENCE, "waited in vain for {what}");
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// Lines of `stderr` that are warnings containing `needle`.
fn warnings(stderr: &str, needle: &str) -> usize {
    stderr
        .lines()
        .filter(|line| line.contains("WARN") && line.contains(needle))
        .count()
}

/// A stopped tmux server for 100 cycles of a stream: each cycle's tmux is killed with its
/// wrapper at the time-out, and the host's threads, fds and processes stay flat; a request
/// meanwhile is answered; the warning is logged once; the stream resumes with the server.
#[test]
fn a_hung_tmux_leaves_no_thread_fd_or_process_behind() {
    let (fleet, mut home) = fleet_with_phone(Backend::Real);
    let count = CallLog::install(&mut home);
    let mark = unique("hung");
    home.env.push(("CORRAL_IT_MARK".into(), mark.clone()));
    home.write_config("[serve]\nreconcile_interval_ms = 20\n");
    let mut command = home.serve_command("fp-phone");
    command.env("CORRAL_TMUX_TIMEOUT_MS", "50");
    let mut host = Host::start(command);
    host.hello();
    host.send(SUBSCRIBE_EDGES);
    assert_eq!(host.recv()["t"], "ack");
    let pid = host.pid();
    wait_for("the baseline read", || count.len() >= 1);
    // Its push listener (a thread of its own) is bound once that read has answered: the
    // samples start from the steady state, not from a host still starting it.
    wait_for("the push listener", || {
        !crate::push::listeners(&home, "serve").is_empty()
    });

    let stopped = Stopped::new(fleet.server_pid());
    let first = count.len();
    // (hung invocations so far, threads, fds, live processes of the host's)
    let mut samples = Vec::new();
    let mut asked = false;
    let deadline = Instant::now() + Duration::from_secs(300);
    loop {
        let hung = count.len() - first;
        samples.push((hung, threads(pid), fds(pid), marked_processes(&mark).len()));
        if hung >= 110 {
            break;
        }
        if hung >= 50 && !asked {
            asked = true;
            host.send(r#"{"schema":1,"id":"during","t":"snapshot"}"#);
            let frame = host.recv();
            assert!(is_error(&frame, "during", "internal"), "{frame}");
        }
        assert!(Instant::now() < deadline, "tmux was not asked 110 times");
        std::thread::sleep(Duration::from_millis(10));
    }
    // A read in flight holds a few fds for a moment (its pipes, /dev/null, the spawn's own pipe,
    // the lock of the read the host's serve processes share), so compare the fewest seen at the
    // start and at the end, and bound the most by one read's.
    let window = |range: std::ops::RangeInclusive<usize>| -> Vec<(usize, usize, usize, usize)> {
        samples
            .iter()
            .filter(|s| range.contains(&s.0))
            .copied()
            .collect()
    };
    let (first, last) = (window(1..=10), window(100..=110));
    let fewest = |w: &[(usize, usize, usize, usize)]| {
        (
            w.iter().map(|s| s.1).min().unwrap(),
            w.iter().map(|s| s.2).min().unwrap(),
        )
    };
    let ((threads_first, fds_first), (threads_last, fds_last)) = (fewest(&first), fewest(&last));
    eprintln!(
        "110 hung reads: threads {threads_first} at first, {threads_last} at the end; fds {fds_first} at first, {fds_last} at the end; most seen: {} threads, {} fds",
        samples.iter().map(|s| s.1).max().unwrap(),
        samples.iter().map(|s| s.2).max().unwrap()
    );
    assert_eq!(
        (threads_last, fds_last),
        (threads_first, fds_first),
        "threads and fds stay flat"
    );
    for &(hung, threads, fds, processes) in &samples {
        // A cycle's read runs on a thread of its own, one at a time: one more at most.
        assert!(
            threads <= threads_first + 1 && fds <= fds_first + 7,
            "after {hung} hung reads: {threads} threads, {fds} fds (at first {threads_first}, {fds_first})"
        );
        // The host, one wrapper with its tmux, and on a loaded machine the read killed at its
        // time-out, which the kernel may not have finished taking away when the next begins.
        assert!(
            processes <= 5,
            "after {hung} hung reads: {processes} processes"
        );
    }
    // Nothing piles up: reads past their time-out do not outlive the next ones, so most samples
    // see at most the host, a wrapper and its tmux (a leak would raise every later sample).
    let crowded = samples.iter().filter(|s| s.3 > 3).count();
    assert!(
        crowded * 4 <= samples.len(),
        "{crowded} of {} samples saw more than one read's processes: {:?}",
        samples.len(),
        samples.iter().map(|s| s.3).collect::<Vec<_>>()
    );

    drop(stopped);
    let idle = fleet.pane("idle");
    fleet.step(&idle, &["--state", "working"]);
    let edge = host.recv();
    assert_eq!(
        (
            edge["t"].as_str(),
            edge["pane"].as_str(),
            edge["to"].as_str()
        ),
        (Some("edge"), Some(idle.as_str()), Some("working")),
        "the stream resumes with the server"
    );
    host.close();
    assert_eq!(host.exit_code(), 0);
    wait_for("no process of the host's left", || {
        marked_processes(&mark).is_empty()
    });
    let stderr = host.stderr();
    assert_eq!(
        warnings(&stderr, "reading the fleet failed"),
        1,
        "one warning for a run of 110 failed reads:\n{stderr}"
    );
    assert!(stderr.contains("tmux answers again"), "{stderr}");
}

/// A missing tmux is one warning, not one per cycle.
#[test]
fn a_missing_tmux_is_warned_about_once() {
    let home = Home::new(&unique("corral-absent"));
    home.enrol("phone", "fp-phone", &["read"]);
    home.write_config("[serve]\nreconcile_interval_ms = 20\n");
    let mut command = home.serve_command("fp-phone");
    command.env("CORRAL_TMUX_BIN", "/nonexistent/tmux");
    let mut host = Host::start(command);
    host.hello();
    host.send(SUBSCRIBE_EDGES);
    assert_eq!(host.recv()["t"], "ack");
    host.silent_for(Duration::from_secs(1));
    host.close();
    assert_eq!(host.exit_code(), 0);
    let stderr = host.stderr();
    assert_eq!(
        warnings(&stderr, "cannot start /nonexistent/tmux"),
        1,
        "{stderr}"
    );
}

/// A client that closes its read end but keeps stdin open, on a quiet fleet (nothing to write,
/// so no broken pipe to notice): the host sees it within a cycle, exits 0 and frees its slot.
#[test]
fn a_client_that_closes_its_read_end_frees_its_slot() {
    let (_fleet, mut home) = fleet_with_phone(Backend::Real);
    let count = CallLog::install(&mut home);
    home.write_config("[serve]\nreconcile_interval_ms = 100\nmax_connections = 1\n");
    let mut host = Host::start_unread(home.serve_command("fp-phone"));
    host.send(
        r#"{"schema":1,"id":"h","t":"hello","app":"it","app_version":"1","device":"fp-phone"}"#,
    );
    host.send(SUBSCRIBE_EDGES);
    // The first cycle's read comes after the ack was written: nothing is left to write.
    wait_for("the stream's first cycle", || count.len() >= 1);
    host.close_stdout();
    assert_eq!(host.exit_within(PATIENCE), Some(0), "{}", host.stderr());

    let mut next = home.serve("fp-phone");
    next.hello();
}

/// Starts a host whose stdout nobody reads, says hello and asks for 400 snapshots (they fill the
/// pipe, then wait in the host).
fn blocked_host() -> (Fleet, Home, Host) {
    let (fleet, mut home) = fleet_with_phone(Backend::Real);
    let count = CallLog::install(&mut home);
    let mut host = Host::start_unread(home.serve_command("fp-phone"));
    host.send(
        r#"{"schema":1,"id":"h","t":"hello","app":"it","app_version":"1","device":"fp-phone"}"#,
    );
    for i in 0..400 {
        host.send(&json!({"schema":1,"id":format!("s{i}"),"t":"snapshot"}).to_string());
    }
    // Were the host to stop at a full pipe, it would read tmux no more: give it a while.
    let start = Instant::now();
    while count.len() < 400 && start.elapsed() < Duration::from_secs(5) {
        std::thread::sleep(Duration::from_millis(10));
    }
    (fleet, home, host)
}

#[test]
fn sigterm_ends_a_host_whose_stdout_is_blocked() {
    let (_fleet, _home, mut host) = blocked_host();
    let sent = Instant::now();
    host.terminate();
    let code = host.exit_within(Duration::from_secs(5));
    eprintln!(
        "SIGTERM to exit with a blocked stdout: {:?}",
        sent.elapsed()
    );
    assert_eq!(code, Some(0), "{}", host.stderr());
}

#[test]
fn end_of_input_ends_a_host_whose_stdout_is_blocked() {
    let (_fleet, _home, mut host) = blocked_host();
    host.close();
    assert_eq!(
        host.exit_within(Duration::from_secs(5)),
        Some(0),
        "{}",
        host.stderr()
    );
}

/// A client that stops reading while its answers pile up: past the host's budget of unread
/// frames the host ends the connection (exit 0) instead of holding them, and says why.
#[test]
fn a_client_that_stops_reading_is_let_go_past_the_budget() {
    let home = Home::new(&unique("corral-absent"));
    home.enrol("phone", "fp-phone", &["read"]);
    let mut host = Host::start_unread(home.serve_command("fp-phone"));
    host.send(
        r#"{"schema":1,"id":"h","t":"hello","app":"it","app_version":"1","device":"fp-phone"}"#,
    );
    // Each is answered with an error quoting the 60 KB string: 12 MB of answers in all.
    let big =
        json!({"schema":1,"id":"w","t":"window","pane":"%1","last":"A".repeat(60_000)}).to_string();
    let feeder = host.feed(vec![big; 200]);
    assert_eq!(host.exit_within(PATIENCE), Some(0));
    drop(feeder.join());
    let stderr = host.stderr();
    assert!(stderr.contains("stopped reading"), "{stderr}");
}

on_both_backends!(
    a_tmux_server_that_dies_mid_stream_is_an_empty_fleet_until_one_runs_again,
    a_tmux_server_killed_inside_a_cycles_read_is_an_empty_fleet_until_one_runs_again,
);

/// The frames of the next `n` edges, as (pane, from, to), in any order.
fn edges(host: &mut Host, n: usize) -> Vec<(String, String, String)> {
    let mut found: Vec<(String, String, String)> = (0..n)
        .map(|_| {
            let edge = host.recv();
            assert_eq!(edge["t"], "edge", "{edge}");
            let text = |key: &str| edge[key].as_str().unwrap().to_owned();
            (text("pane"), text("from"), text("to"))
        })
        .collect();
    found.sort();
    found
}

/// When the tmux server dies.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Death {
    /// Between two cycles: SIGKILL on a real server, `kill-server` on the fake.
    BetweenCycles,
    /// `kill-server` while a cycle's `list-panes` is on its way (held at a [`Gate`]), which
    /// then meets no server.
    InsideARead,
}

/// A tmux server that dies while a stream runs, between two cycles: a server that does not run
/// is an empty fleet, not a failed read. The stream reports every agent pane vanished, a
/// snapshot lists none, and when a server runs on the socket again its panes appear on the same
/// stream.
fn a_tmux_server_that_dies_mid_stream_is_an_empty_fleet_until_one_runs_again(backend: Backend) {
    dies_mid_stream(backend, Death::BetweenCycles);
}

/// The same, the server killed while a cycle's read is on its way to it.
fn a_tmux_server_killed_inside_a_cycles_read_is_an_empty_fleet_until_one_runs_again(
    backend: Backend,
) {
    dies_mid_stream(backend, Death::InsideARead);
}

fn dies_mid_stream(backend: Backend, death: Death) {
    let (mut fleet, mut home) = fleet_with_phone(backend);
    let gate = Gate::install(&mut home);
    let agents = ["blocked", "done", "idle"].map(|name| fleet.pane(name));
    let states = ["blocked", "idle", "idle"];
    let mut host = home.serve("fp-phone");
    host.hello();
    host.send(SUBSCRIBE_EDGES);
    assert_eq!(host.recv()["t"], "ack");
    // The first cycle's silent baseline is taken before the pane moves; the edge shows it was.
    host.silent_for(Duration::from_millis(350));
    fleet.step(&agents[2], &["--state", "working"]);
    assert_eq!(edges(&mut host, 1)[0].2, "working");

    match (death, backend) {
        (Death::BetweenCycles, Backend::Real) => signal(fleet.server_pid(), "KILL"),
        (Death::BetweenCycles, Backend::Fake) => {
            fleet.sim(&["down"]);
        }
        (Death::InsideARead, _) => {
            gate.close(&["list-panes"]);
            eventually("a cycle's read is on its way", || gate.entered());
            fleet.sim(&["down"]);
            gate.open();
        }
    }
    let mut vanished: Vec<_> = agents
        .iter()
        .zip(["blocked", "idle", "working"])
        .map(|(pane, from)| (pane.clone(), from.to_owned(), String::new()))
        .collect();
    vanished.sort();
    assert_eq!(edges(&mut host, 3), vanished, "{death:?}");
    host.send(r#"{"schema":1,"id":"s","t":"snapshot"}"#);
    assert_eq!(
        host.recv(),
        json!({"schema":1,"id":"s","t":"snapshot","agents":[]})
    );

    fleet.revive();
    let mut appeared: Vec<_> = agents
        .iter()
        .zip(states)
        .map(|(pane, to)| (pane.clone(), String::new(), to.to_owned()))
        .collect();
    appeared.sort();
    assert_eq!(
        edges(&mut host, 3),
        appeared,
        "{death:?}: the same stream goes on"
    );
    host.send(r#"{"schema":1,"id":"s2","t":"snapshot"}"#);
    assert_eq!(host.recv()["agents"].as_array().unwrap().len(), 3);
    host.close();
    assert_eq!(host.exit_code(), 0);
}

/// The threads and fds of process `pid` between its tmux calls: the fewest seen over 200 ms (a
/// call in flight holds a few fds for a moment).
fn resting(pid: u32) -> (usize, usize) {
    let samples: Vec<(usize, usize)> = (0..20)
        .map(|_| {
            std::thread::sleep(Duration::from_millis(10));
            (threads(pid), fds(pid))
        })
        .collect();
    (
        samples.iter().map(|s| s.0).min().unwrap(),
        samples.iter().map(|s| s.1).min().unwrap(),
    )
}

/// How a tmux fails in [`a_failing_tmux_is_internal_and_left_behind_when_it_answers_again`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Failure {
    /// Every invocation exits 1 with an error on stderr.
    Exits,
    /// Every invocation exits 0 and prints something that is not what was asked for.
    Garbage,
    /// The server is stopped (SIGSTOP): every invocation hangs until the host's time-out.
    Stopped,
}

/// Points `home` at a wrapper around its tmux that fails as the file it returns says
/// (`exits`, `garbage`; anything else, or no file: tmux itself).
fn failing_wrapper(home: &mut Home) -> PathBuf {
    let mode = home.dir.path().join("tmux-failure");
    let wrapper = home.dir.path().join("failing-tmux");
    script(
        &wrapper,
        &format!(
            r#"case "$(cat '{mode}' 2>/dev/null)" in
    exits) echo 'server exited unexpectedly' >&2; exit 1 ;;
    garbage) printf 'usage: tmux [-2CDlNuVv] \001\036\037 %%0 claude blocked\n'; exit 0 ;;
esac
exec '{tmux}' "$@""#,
            mode = mode.display(),
            tmux = home.tmux_bin.display()
        ),
    );
    home.tmux_bin = wrapper;
    mode
}

#[test]
fn a_tmux_that_exits_non_zero_is_internal_until_it_answers_again() {
    a_failing_tmux_is_internal_and_left_behind_when_it_answers_again(Failure::Exits);
}

#[test]
fn a_tmux_that_prints_garbage_is_internal_until_it_answers_again() {
    a_failing_tmux_is_internal_and_left_behind_when_it_answers_again(Failure::Garbage);
}

#[test]
fn a_stopped_tmux_server_is_internal_until_it_answers_again() {
    a_failing_tmux_is_internal_and_left_behind_when_it_answers_again(Failure::Stopped);
}

/// A tmux that fails, on a scratch real server, while a device asks every kind of request that
/// reads it and a stream runs: each is answered `internal` (a failed read is never an empty
/// fleet, a missing pane or a fired action), the stream publishes nothing it did not see (no
/// pane vanishes), nothing is claimed or fired, the host's threads and fds stay flat and its
/// warning is logged once. When tmux answers again the same connection and stream go on: the
/// dispatch refused meanwhile fires once, and the stream's next edge is the pane's real move.
fn a_failing_tmux_is_internal_and_left_behind_when_it_answers_again(failure: Failure) {
    let fleet = Fleet::up(Backend::Real);
    let mut home = fleet.home();
    home.enrol("phone", "fp-phone", &["read", "act:answer", "act:steer"]);
    home.write_config("[serve]\nreconcile_interval_ms = 50\n");
    fleet.small_transcript("idle");
    let mode = failing_wrapper(&mut home);
    let (idle, blocked) = (fleet.pane("idle"), fleet.pane("blocked"));
    let mut command = home.serve_command("fp-phone");
    // A stopped server is waited out once per time-out: keep it short there. Elsewhere the
    // time-out is not what is tested, and a loaded machine must not make it one.
    let timeout = if failure == Failure::Stopped {
        "300"
    } else {
        "10000"
    };
    command.env("CORRAL_TMUX_TIMEOUT_MS", timeout);
    let mut host = Host::start(command);
    host.hello();
    let cursor = loop {
        host.send(&json!({"schema":1,"id":"w","t":"window","pane":idle}).to_string());
        let window = host.recv();
        if window["t"] == "window" {
            break window["events"][0]["cursor"].clone();
        }
        // A read slower than the short time-out, before anything failed.
        assert!(is_error(&window, "w", "internal"), "{window}");
        std::thread::sleep(Duration::from_millis(300));
    };
    assert!(cursor.is_string());
    host.send(SUBSCRIBE_EDGES);
    assert_eq!(host.recv()["t"], "ack");
    host.silent_for(Duration::from_millis(350));
    let pid = host.pid();

    let stopped = match failure {
        Failure::Exits => {
            std::fs::write(&mode, "exits").unwrap();
            None
        }
        Failure::Garbage => {
            std::fs::write(&mode, "garbage").unwrap();
            None
        }
        Failure::Stopped => Some(Stopped::new(fleet.server_pid())),
    };
    let steer = json!({"schema":1,"id":"d","t":"dispatch","slot":"meanwhile","host":"",
        "pane":idle,"action":"steer","text":"meanwhile","binder":{"expect_episode_ms":0}});
    let requests = [
        json!({"schema":1,"id":"s","t":"snapshot"}),
        json!({"schema":1,"id":"c","t":"card","pane":blocked}),
        json!({"schema":1,"id":"w","t":"window","pane":idle}),
        json!({"schema":1,"id":"e","t":"event","pane":idle,"cursor":cursor}),
        steer.clone(),
    ];
    // Twice over: the second round comes while the host's warning is already out, and finds
    // the host holding what it held after the first (the first dispatch took its lasting
    // ledger owner lock).
    let mut first_round = None;
    for round in 0..2 {
        for request in &requests {
            host.send(&request.to_string());
            let id = request["id"].as_str().unwrap();
            let frame = host.recv();
            assert!(
                is_error(&frame, id, "internal"),
                "{failure:?} round {round}: {request} was answered {frame}"
            );
        }
        first_round.get_or_insert_with(|| resting(pid));
    }
    host.send(r#"{"schema":1,"id":"r","t":"receipts"}"#);
    assert_eq!(
        host.recv()["receipts"],
        json!([]),
        "{failure:?}: nothing was claimed"
    );
    // Cycles go by and the stream says nothing: no pane vanished.
    host.silent_for(Duration::from_millis(500));
    assert_eq!(
        Some(resting(pid)),
        first_round,
        "{failure:?}: threads and fds stay flat"
    );

    std::fs::remove_file(&mode).ok();
    drop(stopped);
    // The time-out of a hung invocation pauses tmux for one more time-out; then it is asked.
    let back = Instant::now();
    loop {
        host.send(&steer.to_string());
        let answer = host.recv();
        if answer["t"] == "receipt" {
            assert_eq!(
                (&answer["outcome"], &answer["cached"]),
                (&json!("sent"), &json!(false)),
                "{failure:?}: {answer}"
            );
            break;
        }
        assert!(is_error(&answer, "d", "internal"), "{answer}");
        assert!(
            back.elapsed() < PATIENCE,
            "{failure:?}: tmux is asked again"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    assert_eq!(
        fleet.typed(&idle, "meanwhile"),
        1,
        "{failure:?}: fired once"
    );
    fleet.step(&idle, &["--state", "working"]);
    let edge = host.recv();
    assert_eq!(
        (&edge["t"], &edge["pane"], &edge["from"], &edge["to"]),
        (
            &json!("edge"),
            &json!(idle),
            &json!("idle"),
            &json!("working")
        ),
        "{failure:?}: the stream goes on with the pane's real move"
    );
    host.send(r#"{"schema":1,"id":"s2","t":"snapshot"}"#);
    assert_eq!(host.recv()["agents"].as_array().unwrap().len(), 3);
    host.close();
    assert_eq!(host.exit_code(), 0);
    let stderr = host.stderr();
    assert_eq!(
        warnings(&stderr, "reading the fleet failed"),
        1,
        "{failure:?}: one warning for the whole run of failures:\n{stderr}"
    );
}
