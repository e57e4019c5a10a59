//! Hosts that misbehave: one that sends garbage, unknown frames and unknown keys is a fault on
//! its own line while the other host goes on; one whose process dies is reconnected; a device
//! revoked while connected is shown revoked and not retried.

use std::time::Duration;

use serde_json::{Value, json};

use crate::support::{Demo, Remote, corral, is, toml_string};

fn row(pane: &str, state: &str, episode: u64, extra: &str) -> String {
    let detail = if state == "blocked" {
        "\"permission\""
    } else {
        "null"
    };
    format!(
        r#"{{"pane":"{pane}","agent":"claude","state":"{state}","detail":{detail},"since_ms":{episode},"episode_ms":{episode},"locator":"w:0.0","attention":false,"done":false,"session":"w","transcript":null,"permission_request":null,"stamped_at_ms":null,"context":12,"context_at_ms":null,"muted":false,"repo":"api","branch":"main","worktree":null,"pending_tool":null,"pending_call":null,"server":"/tmp/s","host":"fake"{extra}}}"#
    )
}

/// A host in `sh`: it answers the client's hello, snapshot and subscription in order, writing
/// `before_hello` first, and `after_ack` once subscribed; then it answers the next request (the
/// snapshot a client asks for after an edge) with `refresh` when there is one, and reads until its
/// input ends.
fn script(
    before_hello: &[String],
    hello_extra: &str,
    rows: &str,
    after_ack: &[String],
    refresh: Option<&str>,
) -> String {
    let print = |lines: &[String]| {
        lines
            .iter()
            .map(|l| format!("printf '%s\\n' {}\n", shell(l)))
            .collect::<String>()
    };
    let hello = format!(
        r#"{{"schema":1,"id":"1","t":"hello","host":"fake","tool_version":"9.9","reconcile_interval_ms":500,"scopes":["read","act:answer"]{hello_extra}}}"#
    );
    let refresh = refresh
        .map(|rows| {
            let snapshot = format!(r#"{{"schema":1,"id":"4","t":"snapshot","agents":[{rows}]}}"#);
            format!("read -r line\nprintf '%s\\n' {}\n", shell(&snapshot))
        })
        .unwrap_or_default();
    format!(
        "read -r line\n{}printf '%s\\n' {}\nread -r line\nprintf '%s\\n' {}\nread -r line\nprintf '%s\\n' {}\n{}{refresh}while read -r line; do :; done\n",
        print(before_hello),
        shell(&hello),
        shell(&format!(
            r#"{{"schema":1,"id":"2","t":"snapshot","agents":[{rows}]}}"#
        )),
        shell(r#"{"schema":1,"id":"3","t":"ack"}"#),
        print(after_ack),
    )
}

fn shell(text: &str) -> String {
    format!("'{}'", text.replace('\'', r"'\''"))
}

fn host(name: &str, script: &str) -> String {
    format!(
        "[[host]]\nname = \"{name}\"\ncommand = [\"sh\", \"-c\", {}]\n",
        toml_string(script)
    )
}

/// Two hosts: `good` streams an edge that blocks its `%1` once subscribed, and answers the
/// snapshot asked after it with `%1` blocked in episode 50 (which rings); `bad` sends garbage,
/// frames of an unknown kind and schema and an error nothing asked for before its hello, unknown
/// keys in its hello and a row, and a receipt nothing asked for once subscribed.
pub fn good_and_bad_hosts() -> String {
    let edge = r#"{"schema":1,"id":"3","t":"edge","at_ms":50,"pane":"%1","agent":"claude","from":"working","to":"blocked","detail":"permission","locator":"w:0.0","repo":"api","branch":"main","future":true}"#;
    let good = script(
        &[],
        "",
        &row("%1", "working", 10, ""),
        &[edge.to_owned()],
        Some(&row("%1", "blocked", 50, "")),
    );
    let bad = script(
        &[
            "not json".into(),
            r#"{"schema":1,"id":"77","t":"teleport","to":"mars"}"#.into(),
            r#"{"schema":2,"id":"78","t":"edge"}"#.into(),
            r#"{"schema":1,"id":"0","t":"error","code":"internal","message":"nothing asked"}"#
                .into(),
        ],
        r#","colour":"blue","scopes_v2":{"x":1}"#,
        &format!(
            "{},{}",
            row("%0", "idle", 5, r#","mood":"calm""#),
            row("%2", "working", 6, "")
        ),
        &[r#"{"schema":1,"id":"3","t":"receipt"}"#.into()],
        None,
    );
    format!("{}{}", host("good", &good), host("bad", &bad))
}

#[test]
fn a_host_sending_garbage_is_a_fault_on_its_line_and_the_other_goes_on() {
    let tmp = tempfile::tempdir().unwrap();
    let rings = tmp.path().join("rings");
    let notify = format!(
        "[notify]\ncommand = {}\n\n",
        toml_string(&format!(
            "{{ printf '%s %s ' \"$CORRAL_HOST\" \"${{CORRAL_TITLE-unset}}\"; cat; }} >> {}",
            shell(rings.to_str().unwrap())
        ))
    );
    let config = format!("{notify}{}", good_and_bad_hosts());
    // A title the client inherited never reaches its ring command: the host's rule, set what has
    // a value and remove the rest.
    let mut remote = Remote::start_env(tmp.path(), &config, &[("CORRAL_TITLE", "leaked")]);
    let within = Duration::from_secs(20);
    remote.wait(within, "the bad host connected", |l| {
        is(l, "host", "bad") && l["link"] == "connected"
    });
    remote.seen_or_wait(within, "the bad host's rows", |l| {
        is(l, "snapshot", "bad") && l["rows"] == 2
    });
    let ring = remote.seen_or_wait(within, "the good host's ring", |l| {
        is(l, "attention", "good") && l["pane"] == "%1"
    });
    assert_eq!(
        ring["episode_ms"], 50,
        "the ring says the episode that rang: {ring}"
    );
    let rest = remote.drain(Duration::from_secs(2));
    let seen: Vec<Value> = remote.seen.clone();
    let faults: Vec<&Value> = seen.iter().filter(|l| l["ev"] == "fault").collect();
    assert!(faults.iter().all(|f| f["host"] == "bad"), "{faults:#?}");
    assert!(faults.len() >= 4, "{}", remote.shown());
    assert!(faults[0]["message"].as_str().unwrap().contains("not json"));
    // The row with an unknown key was read; the edge with one too.
    assert!(
        seen.iter()
            .any(|l| is(l, "row", "bad") && l["row"]["pane"] == "%0")
    );
    assert!(seen.iter().any(|l| is(l, "edge", "good")));
    // Neither host dropped: no line says so.
    assert!(
        !seen
            .iter()
            .any(|l| l["ev"] == "host" && l["link"] == "disconnected"),
        "{}",
        remote.shown()
    );
    // A command for a host that does not exist, and a line that is no command: error lines.
    remote.send(r#"{"cmd":"card","host":"nowhere","pane":"%1"}"#);
    remote.send("this is not json");
    remote.wait(within, "an error line", |l| l["ev"] == "error");
    remote.wait(within, "a second error line", |l| {
        l["ev"] == "error" && l["line"] == "this is not json"
    });
    remote.send(r#"{"cmd":"fleet","host":"good"}"#);
    let fleet = remote.wait(within, "the fleet", |l| l["ev"] == "fleet");
    assert_eq!(fleet["rows"].as_array().unwrap().len(), 1, "{fleet}");
    assert_eq!(fleet["rows"][0]["row"]["state"], "blocked");
    let _ = rest;
    // The ring ran the command, the host's own payload on its stdin.
    let deadline = std::time::Instant::now() + within;
    let rang = loop {
        let text = std::fs::read_to_string(&rings).unwrap_or_default();
        if text.ends_with('\n') {
            break text;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "the ring command did not run"
        );
        std::thread::sleep(Duration::from_millis(50));
    };
    let (named, rest) = rang.trim_end().split_once(' ').unwrap();
    assert_eq!(named, "good");
    let (title, payload) = rest.split_once(' ').unwrap();
    assert_eq!(
        title, "unset",
        "an inherited CORRAL_TITLE reached the command"
    );
    let payload: Value = serde_json::from_str(payload).unwrap();
    assert_eq!(payload["schema"], 2);
    assert_eq!(payload["pane"], "%1");
    assert_eq!(payload["state"], "blocked");
    assert_eq!(payload["detail"], "permission");
    let (code, stderr) = remote.quit();
    assert_eq!(code, 0, "{stderr}");
}

#[test]
fn a_killed_host_is_reconnected_and_a_revoked_device_is_not() {
    let tmp = tempfile::tempdir().unwrap();
    let demo = Demo::start(tmp.path(), 2, 1);
    // `--local`, its `corral` a wrapper that notes its pid and runs the host in the demo's
    // environment.
    let pids = tmp.path().join("pids");
    let wrapper = tmp.path().join("corral-wrapper");
    let env: Vec<String> = demo
        .env()
        .iter()
        .map(|(k, v)| format!("{k}={}", shell(v)))
        .collect();
    std::fs::write(
        &wrapper,
        format!(
            "#!/bin/sh\necho $$ >> {}\nexec env {} {} \"$@\"\n",
            shell(pids.to_str().unwrap()),
            env.join(" "),
            shell(corral().to_str().unwrap())
        ),
    )
    .unwrap();
    std::fs::set_permissions(
        &wrapper,
        std::os::unix::fs::PermissionsExt::from_mode(0o755),
    )
    .unwrap();
    let mut remote = Remote::start_args(
        tmp.path(),
        &[
            "--local".as_ref(),
            "demo".as_ref(),
            "--device".as_ref(),
            "demo=SHA256:corral-demo".as_ref(),
            "--corral".as_ref(),
            wrapper.as_os_str(),
        ],
    );
    let within = Duration::from_secs(30);
    remote.wait(within, "the first connection", |l| {
        is(l, "host", "demo") && l["link"] == "connected"
    });
    remote.wait(within, "the subscription", |l| is(l, "subscribed", "demo"));
    let first: String = std::fs::read_to_string(&pids).unwrap().trim().to_owned();
    let pid = rustix::process::Pid::from_raw(first.parse().unwrap()).unwrap();
    rustix::process::kill_process(pid, rustix::process::Signal::KILL).unwrap();
    let down = remote.wait(within, "the drop", |l| {
        is(l, "host", "demo") && l["link"] == "disconnected"
    });
    assert!(down["retry_in_ms"].as_u64().unwrap() <= 500, "{down}");
    remote.wait(within, "the reconnection", |l| {
        is(l, "host", "demo") && l["link"] == "connected"
    });
    remote.wait(within, "the new subscription", |l| {
        is(l, "subscribed", "demo")
    });
    let serves = std::fs::read_to_string(&pids).unwrap();
    assert_eq!(serves.lines().count(), 2, "{serves}");

    // Revoked while connected: refused at the next publish, shown revoked, never retried.
    demo.corral(tmp.path(), &["device", "revoke", "demo-app"]);
    let revoked = remote.wait(within, "the revocation", |l| {
        is(l, "host", "demo") && l["link"] == "revoked"
    });
    assert!(
        revoked["reason"].as_str().unwrap().contains("not retried"),
        "{revoked}"
    );
    let after = remote.drain(Duration::from_secs(3));
    assert!(
        !after.iter().any(|l| is(l, "host", "demo")),
        "it was retried: {after:#?}"
    );
    assert_eq!(std::fs::read_to_string(&pids).unwrap().lines().count(), 2);
    remote.send(&json!({"cmd":"card","host":"demo","pane":"%0"}).to_string());
    let refused = remote.wait(within, "the card refused", |l| is(l, "failed", "demo"));
    assert_eq!(refused["message"], "the device was revoked");
    let (code, stderr) = remote.quit();
    assert_eq!(code, 0, "{stderr}");
}

#[test]
fn a_closed_stdout_ends_the_headless_client_and_every_hosts_process_group() {
    use std::io::Write;
    use std::process::Stdio;
    use std::time::Instant;

    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let (host_pid, helper_pid) = (dir.join("host.pid"), dir.join("helper.pid"));
    // A host that never answers and never reads its input to the end: only its group's end
    // ends it, and its helper (a second process of the same group).
    let script = format!(
        "sleep 300 & echo $! > {}; echo $$ > {}; exec sleep 300",
        shell(helper_pid.to_str().unwrap()),
        shell(host_pid.to_str().unwrap())
    );
    let config = dir.join("remote.toml");
    std::fs::write(&config, host("h", &script)).unwrap();
    let mut child = crate::support::command(crate::support::REMOTE, dir)
        .args(["--ndjson", "--config"])
        .arg(&config)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let stdout = child.stdout.take().unwrap();
    let read_pid = |file: &std::path::Path| -> i32 {
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            if let Some(pid) = std::fs::read_to_string(file)
                .ok()
                .and_then(|t| t.trim().parse().ok())
            {
                return pid;
            }
            assert!(Instant::now() < deadline, "the host never started");
            std::thread::sleep(Duration::from_millis(20));
        }
    };
    let pids = [read_pid(&host_pid), read_pid(&helper_pid)];
    // Whoever read the client's lines leaves; the next line it prints finds no reader.
    drop(stdout);
    let mut stdin = child.stdin.take().unwrap();
    let _ = stdin.write_all(b"{\"cmd\":\"fleet\"}\n");
    let _ = stdin.flush();
    let deadline = Instant::now() + Duration::from_secs(30);
    let status = stdx::process::wait_until(&mut child, deadline)
        .unwrap()
        .expect("corral-remote kept running without a reader");
    assert_eq!(status.code(), Some(0), "no reader is no failure");
    for pid in pids {
        let deadline = Instant::now() + Duration::from_secs(10);
        while std::path::Path::new(&format!("/proc/{pid}")).exists() {
            let state = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
            // A zombie is ended too, waiting for init to reap it.
            if state.split_whitespace().nth(2) == Some("Z") {
                break;
            }
            assert!(
                Instant::now() < deadline,
                "process {pid} of the host's group outlived the client"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}
