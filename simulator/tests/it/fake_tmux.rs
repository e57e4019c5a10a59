//! corral-fake-tmux on its own: no-server texts, the environment, concurrency, faults, the
//! send-keys / display-message log, tty files, refused formats and output sanitizing.

use crate::common::{PARITY_FORMAT, Sim, command, fake_fleet, fake_tmux, split, unique_socket};

#[test]
fn no_server_reads_like_tmux() {
    let sim = Sim::new();
    let socket = unique_socket("none");
    let (out, err, code) = sim.fake(&["-L", &socket, "list-panes", "-a", "-F", "#{pane_id}"]);
    assert_eq!((out.as_str(), code), ("", 1));
    let expected_dir = sim.path().join("tmux-");
    assert!(
        err.starts_with(&format!("error connecting to {}", expected_dir.display())),
        "{err}"
    );
    assert!(
        err.ends_with(&format!("/{socket} (No such file or directory)\n")),
        "{err}"
    );

    let (sim, socket) = fake_fleet("small.toml");
    sim.sim(&["down"]);
    sim.sim(&["down"]);
    let socket_path = sim.sim_json().socket_path;
    let (_, err, code) = sim.fake(&["-L", &socket, "has-session"]);
    assert_eq!(err, format!("no server running on {socket_path}\n"));
    assert_eq!(code, 1);
}

#[test]
fn needs_corral_sim_dir_but_not_for_help() {
    let (out, err, code) = split(
        command(fake_tmux())
            .env_remove("CORRAL_SIM_DIR")
            .args(["list-panes"])
            .output()
            .unwrap(),
    );
    assert_eq!(out, "");
    assert_eq!(code, 1);
    assert_eq!(err.lines().count(), 1);
    assert!(err.contains("CORRAL_SIM_DIR"), "{err}");
    let (out, _, code) = split(
        command(fake_tmux())
            .env_remove("CORRAL_SIM_DIR")
            .arg("--help")
            .output()
            .unwrap(),
    );
    assert_eq!(code, 0);
    assert!(out.contains("list-panes"));
}

#[test]
fn parallel_set_options_lose_nothing() {
    let (sim, socket) = fake_fleet("small.toml");
    let dir = sim.path();
    let children: Vec<_> = (0..40)
        .map(|i| {
            command(fake_tmux())
                .env("CORRAL_SIM_DIR", &dir)
                .args([
                    "-L",
                    &socket,
                    "set-option",
                    "-p",
                    "-t",
                    &format!("%{}", i % 3),
                    &format!("@race_{i}"),
                    &i.to_string(),
                ])
                .spawn()
                .unwrap()
        })
        .collect();
    for mut child in children {
        assert!(child.wait().unwrap().success());
    }
    let mut seen = 0;
    for pane in 0..3 {
        let (out, _, code) = sim.fake(&[
            "-L",
            &socket,
            "show-options",
            "-p",
            "-t",
            &format!("%{pane}"),
        ]);
        assert_eq!(code, 0);
        for line in out.lines().filter(|l| l.starts_with("@race_")) {
            let (name, value) = line.split_once(' ').unwrap();
            assert_eq!(name.trim_start_matches("@race_"), value);
            assert_eq!(value.parse::<u32>().unwrap() % 3, pane);
            seen += 1;
        }
    }
    assert_eq!(seen, 40);
}

#[test]
fn faults_fail_then_run_out() {
    let (sim, socket) = fake_fleet("small.toml");
    sim.sim(&[
        "fault",
        "add",
        "--command",
        "lsp",
        "--fail",
        "--exit-code",
        "3",
        "--stderr",
        "boom",
        "--times",
        "1",
    ]);
    let (out, err, code) = sim.fake(&["-L", &socket, "list-panes", "-a", "-F", "#{pane_id}"]);
    assert_eq!((out.as_str(), err.as_str(), code), ("", "boom\n", 3));
    let (out, _, code) = sim.fake(&["-L", &socket, "list-panes", "-a", "-F", "#{pane_id}"]);
    assert_eq!(code, 0);
    assert_eq!(out.lines().count(), 11);

    sim.sim(&[
        "fault",
        "add",
        "--command",
        "send-keys",
        "--pane",
        "codex-work",
        "--fail",
    ]);
    let (_, err, code) = sim.fake(&["-L", &socket, "send-keys", "-t", "%1", "y"]);
    assert_eq!((err.as_str(), code), ("server exited unexpectedly\n", 1));
    let (_, _, code) = sim.fake(&["-L", &socket, "send-keys", "-t", "%0", "y"]);
    assert_eq!(code, 0, "a fault on %1 leaves %0 alone");
    sim.sim(&["fault", "clear"]);
    let (_, _, code) = sim.fake(&["-L", &socket, "send-keys", "-t", "%1", "y"]);
    assert_eq!(code, 0);
}

#[test]
fn a_hung_command_hangs_without_holding_the_lock() {
    let (sim, socket) = fake_fleet("small.toml");
    sim.sim(&[
        "fault",
        "add",
        "--command",
        "list-panes",
        "--hang-ms",
        "60000",
        "--times",
        "1",
    ]);
    let mut hung = command(fake_tmux())
        .env("CORRAL_SIM_DIR", sim.path())
        .args(["-L", &socket, "list-panes", "-a", "-F", "#{pane_id}"])
        .spawn()
        .unwrap();
    // Wait until the hang has spent its one shot (the fault is gone), then the server answers.
    for _ in 0..200 {
        let faults =
            std::fs::read_to_string(sim.path().join(format!("tmux-0/{socket}/faults.json")))
                .unwrap_or_default();
        if faults.trim() == "[]" {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let (out, _, code) = sim.fake(&["-L", &socket, "set-option", "-p", "-t", "%0", "@x", "1"]);
    assert_eq!(
        (out.as_str(), code),
        ("", 0),
        "the lock is free while a command hangs"
    );
    assert!(
        hung.try_wait().unwrap().is_none(),
        "the hung list-panes is still running"
    );
    hung.kill().unwrap();
    hung.wait().unwrap();

    sim.sim(&[
        "fault",
        "add",
        "--command",
        "show-options",
        "--hang-ms",
        "50",
    ]);
    let (out, _, code) = sim.fake(&["-L", &socket, "show-options", "-p", "-v", "-t", "%0", "@x"]);
    assert_eq!(
        (out.as_str(), code),
        ("1\n", 0),
        "after a short hang the command runs"
    );
}

#[test]
fn a_release_ends_the_hangs_under_way_and_no_later_one() {
    let (sim, socket) = fake_fleet("small.toml");
    let faults = sim.path().join(format!("tmux-0/{socket}/faults.json"));
    let taken = || {
        for _ in 0..250 {
            if std::fs::read_to_string(&faults).is_ok_and(|text| text.trim() == "[]") {
                return;
            }
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        panic!("the hang never started");
    };
    let hang = |command_name: &str, how: &str| {
        sim.sim(&[
            "fault",
            "add",
            "--command",
            command_name,
            how,
            "60000",
            "--times",
            "1",
        ]);
    };
    let ended = |child: &mut std::process::Child| {
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
        stdx::process::wait_until(child, deadline)
            .unwrap()
            .expect("the hang was not released")
    };
    hang("send-keys", "--hang-ms");
    let mut before = command(fake_tmux())
        .env("CORRAL_SIM_DIR", sim.path())
        .args(["-L", &socket, "send-keys", "-t", "%0", "y"])
        .spawn()
        .unwrap();
    taken();
    std::thread::sleep(std::time::Duration::from_millis(200));
    assert!(
        before.try_wait().unwrap().is_none(),
        "it hangs until released"
    );
    sim.sim(&["fault", "release"]);
    assert!(ended(&mut before).success(), "released, the command ran");
    let log = sim.path().join(format!("tmux-0/{socket}/log.ndjson"));
    assert!(
        std::fs::read_to_string(&log)
            .unwrap()
            .contains(r#""keys":["y"]"#),
        "the keys reached the pane"
    );
    // A hang that begins after a release is not ended by it.
    hang("send-keys", "--hang-after-ms");
    let mut after = command(fake_tmux())
        .env("CORRAL_SIM_DIR", sim.path())
        .args(["-L", &socket, "send-keys", "-t", "%1", "n"])
        .spawn()
        .unwrap();
    taken();
    std::thread::sleep(std::time::Duration::from_millis(200));
    assert!(
        after.try_wait().unwrap().is_none(),
        "an earlier release does not end it"
    );
    sim.sim(&["fault", "release"]);
    assert!(ended(&mut after).success());
}

#[test]
fn a_command_that_hangs_after_acts_at_once_and_a_hang_ends_with_its_server() {
    let (sim, socket) = fake_fleet("small.toml");
    sim.sim(&[
        "fault",
        "add",
        "--command",
        "send-keys",
        "--hang-after-ms",
        "60000",
        "--times",
        "1",
    ]);
    let mut hung = command(fake_tmux())
        .env("CORRAL_SIM_DIR", sim.path())
        .args(["-L", &socket, "send-keys", "-t", "%0", "y"])
        .spawn()
        .unwrap();
    // The keys reach the pane (the log) while the caller still waits for its answer.
    let log = sim.path().join(format!("tmux-0/{socket}/log.ndjson"));
    let logged = r#"{"command":"send-keys","pane":"%0","literal":false,"keys":["y"]}"#;
    let mut seen = false;
    for _ in 0..250 {
        if std::fs::read_to_string(&log).is_ok_and(|text| text == format!("{logged}\n")) {
            seen = true;
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    assert!(seen, "the keys were sent before the answer");
    std::thread::sleep(std::time::Duration::from_millis(200));
    assert!(
        hung.try_wait().unwrap().is_none(),
        "the send-keys has not answered yet"
    );
    // A hang ends when its server stops, so one whose caller died does not linger.
    sim.sim(&["down"]);
    let mut ended = None;
    for _ in 0..250 {
        ended = hung.try_wait().unwrap();
        if ended.is_some() {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    assert_eq!(
        ended.and_then(|status| status.code()),
        Some(0),
        "the hang ended with the server and answered what it did"
    );
}

/// A command `if-shell` runs meets its fault where it runs: what ran before it stays done, the
/// rest of its string does not run, the commands after `if-shell` do.
#[test]
fn a_fault_inside_if_shell_strikes_its_command_where_it_runs() {
    let (sim, socket) = fake_fleet("small.toml");
    let log = sim.path().join(format!("tmux-0/{socket}/log.ndjson"));
    sim.sim(&["fault", "add", "--command", "display-message", "--fail"]);
    let (out, err, code) = sim.fake(&[
        "-L",
        &socket,
        "if-shell",
        "-F",
        "1",
        "set-option -p -t %0 @m 5 ; display-message -c /dev/pts/40 hi ; set-option -p -t %0 @after 1",
        ";",
        "show-options",
        "-p",
        "-v",
        "-t",
        "%0",
        "@m",
    ]);
    assert_eq!(
        (out.as_str(), err.as_str(), code),
        ("5\n", "server exited unexpectedly\n", 1)
    );
    let (out, _, _) = sim.fake(&[
        "-L",
        &socket,
        "show-options",
        "-p",
        "-q",
        "-v",
        "-t",
        "%0",
        "@after",
    ]);
    assert_eq!(out, "", "nothing after the fault ran");
    assert!(!log.exists() || std::fs::read_to_string(&log).unwrap().is_empty());
    sim.sim(&["fault", "clear"]);

    sim.sim(&[
        "fault",
        "add",
        "--command",
        "set-option",
        "--pane",
        "codex-work",
        "--fail",
        "--times",
        "1",
    ]);
    let set = [
        "-L",
        &socket,
        "if-shell",
        "-F",
        "1",
        "set-option -p -t %1 @m 6 ; display-message -p -t %1 '#{@m}'",
    ];
    assert_eq!(sim.fake(&set).2, 1, "the pane's fault");
    assert_eq!(
        sim.fake(&set),
        ("6\n".to_owned(), String::new(), 0),
        "spent"
    );

    sim.sim(&[
        "fault",
        "add",
        "--command",
        "display-message",
        "--hang-ms",
        "300",
        "--times",
        "1",
    ]);
    let started = std::time::Instant::now();
    let (out, _, code) = sim.fake(&["-L", &socket, "if-shell", "-F", "1", "display-message -p x"]);
    assert_eq!((out.as_str(), code), ("x\n", 0));
    assert!(
        started.elapsed() >= std::time::Duration::from_millis(300),
        "it hung first"
    );
}

#[test]
fn send_keys_and_messages_are_logged() {
    let (sim, socket) = fake_fleet("small.toml");
    sim.fake(&["-L", &socket, "send-keys", "-t", "%2", "-l", "hello; world"]);
    sim.fake(&["-L", &socket, "send-keys", "-t", "work:0.0", "y", "Enter"]);
    sim.fake(&[
        "-L",
        &socket,
        "display-message",
        "-c",
        "/dev/pts/40",
        "claude blocked ## #{session_name}",
    ]);
    sim.fake(&[
        "-L",
        &socket,
        "display-message",
        "-c",
        "/dev/pts/99",
        "nobody sees this",
    ]);
    let (out, _, _) = sim.fake(&[
        "-L",
        &socket,
        "list-clients",
        "-F",
        "#{client_name} #{client_session}",
    ]);
    assert_eq!(out, "/dev/pts/40 work\n");
    let log =
        std::fs::read_to_string(sim.path().join(format!("tmux-0/{socket}/log.ndjson"))).unwrap();
    assert_eq!(
        log,
        concat!(
            r#"{"command":"send-keys","pane":"%2","literal":true,"keys":["hello; world"]}"#,
            "\n",
            r#"{"command":"send-keys","pane":"%0","literal":false,"keys":["y","Enter"]}"#,
            "\n",
            r#"{"command":"display-message","client":"/dev/pts/40","text":"claude blocked # work"}"#,
            "\n",
        )
    );
}

#[test]
fn every_pane_tty_is_a_readable_file() {
    let (sim, socket) = fake_fleet("small.toml");
    let (out, _, _) = sim.fake(&["-L", &socket, "list-panes", "-a", "-F", "#{pane_tty}"]);
    assert_eq!(out.lines().count(), 11);
    for tty in out.lines() {
        assert!(tty.starts_with(sim.path().to_str().unwrap()), "{tty}");
        assert_eq!(std::fs::read(tty).unwrap(), b"");
    }
    let tty = out.lines().next().unwrap();
    let bytes = b"\x07\x1bPtmux;\x1b\x1b]9;claude blocked\x07\x1b\\";
    std::fs::OpenOptions::new().append(true).open(tty).unwrap();
    std::fs::write(tty, bytes).unwrap();
    assert_eq!(std::fs::read(tty).unwrap(), bytes);
}

#[test]
fn unmodelled_formats_are_refused_in_one_line_and_others_hosts_formats_expand() {
    let (sim, socket) = fake_fleet("small.toml");
    for format in [
        "#{client_termname}",
        "#{S:#{session_name}}",
        "#(date)",
        "#{m/r:^a,#{pane_id}}",
    ] {
        let (out, err, code) = sim.fake(&["-L", &socket, "list-panes", "-a", "-F", format]);
        assert_eq!((out.as_str(), code), ("", 1), "{format}");
        assert!(err.starts_with("corral-fake-tmux: "), "{err}");
        assert_eq!(err.lines().count(), 1, "{err}");
    }
    // What another host asks, in tmux's own format language, expands.
    let (out, err, code) = sim.fake(&[
        "-L",
        &socket,
        "list-panes",
        "-a",
        "-F",
        "#{pane_id} #{?pane_active,y,n} #{=3:session_name} #{window_index}",
    ]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(out.lines().next(), Some("%6 y ops 0"));
    let (out, _, code) = sim.fake(&["-L", &socket, "list-panes", "-a", "-F", PARITY_FORMAT]);
    assert_eq!(code, 0);
    assert_eq!(out.lines().next(), Some("%6 claude blocked ops:0.0"));
}

#[test]
fn output_is_sanitized_for_a_non_utf8_client() {
    let (sim, socket) = fake_fleet("small.toml");
    sim.fake(&[
        "-L",
        &socket,
        "set-option",
        "-p",
        "-t",
        "%0",
        "@v",
        "a\tb\u{1f}cé",
    ]);
    let run = |utf8: bool| {
        let mut args = vec!["-L", socket.as_str()];
        if utf8 {
            args.push("-u");
        }
        args.extend(["display-message", "-p", "-t", "%0", "#{@v}\u{1f}|"]);
        split(
            command(fake_tmux())
                .env("CORRAL_SIM_DIR", sim.path())
                .env("LC_ALL", "C")
                .args(&args)
                .output()
                .unwrap(),
        )
        .0
    };
    assert_eq!(run(false), "a_b_c__|\n");
    assert_eq!(run(true), "a\tb\u{1f}cé\u{1f}|\n");
}

#[test]
fn dash_s_names_the_socket_path_itself() {
    let sim = Sim::new();
    let socket = sim.path().join("elsewhere/custom.sock");
    let socket = socket.to_str().unwrap();
    let cwd = sim.path();
    let (out, err, code) = sim.fake(&[
        "-S",
        socket,
        "new-session",
        "-d",
        "-s",
        "solo",
        "-c",
        cwd.to_str().unwrap(),
        "-P",
        "-F",
        "#{pane_id}",
    ]);
    assert_eq!((out.as_str(), err.as_str(), code), ("%0\n", "", 0));
    let (out, _, _) = sim.fake(&[
        "-S",
        socket,
        "display-message",
        "-p",
        "-t",
        "%0",
        "#{socket_path} #{session_name} #{pane_current_path}",
    ]);
    assert_eq!(out, format!("{socket} solo {}\n", cwd.display()));
    let (_, _, code) = sim.fake(&["-S", socket, "kill-server"]);
    assert_eq!(code, 0);
    let (_, err, _) = sim.fake(&["-S", socket, "has-session"]);
    assert_eq!(err, format!("no server running on {socket}\n"));
}
