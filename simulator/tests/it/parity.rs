//! The parity test: the same fixture on a real scratch tmux and on the fake, the same commands
//! against both, the same bytes out (after replacing each side's own directory and socket path
//! with a placeholder).

use crate::common::{PARITY_FORMAT, Sim, fake_tmux, fixture, split, unique_socket};

struct Pair {
    real_sim: Sim,
    fake_sim: Sim,
    real_socket: String,
    fake_socket: String,
}

impl Pair {
    fn up(name: &str) -> Pair {
        let real_socket = unique_socket("real");
        let fake_socket = unique_socket("fake");
        let (real_sim, fake_sim) = (Sim::new(), Sim::new());
        real_sim.real_server(&real_socket);
        for (sim, backend, socket) in [
            (&real_sim, "real", &real_socket),
            (&fake_sim, "fake", &fake_socket),
        ] {
            let runtime = sim.path().join("run");
            sim.sim(&[
                "up",
                fixture(name).to_str().unwrap(),
                "--backend",
                backend,
                "--socket",
                socket,
                "--now-ms",
                "1700000000000",
                "--runtime-dir",
                runtime.to_str().unwrap(),
            ]);
        }
        let pair = Pair {
            real_sim,
            fake_sim,
            real_socket,
            fake_socket,
        };
        // A real pane reports its directory once its program runs; wait for every one.
        for _ in 0..250 {
            let (out, _, _) = pair.real_sim.real(
                &pair.real_socket,
                &["list-panes", "-a", "-F", "#{pane_current_path}"],
            );
            if out.lines().all(|l| !l.is_empty()) {
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        pair
    }

    fn normalize(&self, text: &str, real_side: bool) -> String {
        let (sim, socket) = if real_side {
            (&self.real_sim, &self.real_socket)
        } else {
            (&self.fake_sim, &self.fake_socket)
        };
        let socket_path = sim.sim_json().socket_path;
        let escaped: String = sim
            .path()
            .to_str()
            .unwrap()
            .chars()
            .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
            .collect();
        text.replace(&socket_path, "<SOCKET>")
            .replace(sim.path().to_str().unwrap(), "<SIM>")
            .replace(&escaped, "<SIM-ESCAPED>")
            .replace(socket.as_str(), "<NAME>")
    }

    /// Runs one command on both; asserts equal stdout, stderr and exit code; returns stdout.
    fn same(&self, args: &[&str]) -> String {
        self.same_in(None, args)
    }

    /// `same` with `LC_ALL` set to `locale` on both sides.
    fn same_in(&self, locale: Option<&str>, args: &[&str]) -> String {
        let run = |program: &str, socket: &str, sim: &Sim| {
            let mut command = sim.command(program);
            command.args(["-L", socket]);
            if program == "tmux" {
                command.args(["-f", "/dev/null"]);
            }
            if let Some(locale) = locale {
                command.env("LC_ALL", locale);
            }
            split(command.args(args).output().unwrap())
        };
        let (r_out, r_err, r_code) = run("tmux", &self.real_socket, &self.real_sim);
        let (f_out, f_err, f_code) = run(fake_tmux(), &self.fake_socket, &self.fake_sim);
        let real_side = (
            self.normalize(&r_out, true),
            self.normalize(&r_err, true),
            r_code,
        );
        let fake_side = (
            self.normalize(&f_out, false),
            self.normalize(&f_err, false),
            f_code,
        );
        assert_eq!(
            real_side, fake_side,
            "tmux {args:?}: real (left) and fake (right) differ"
        );
        real_side.0
    }
}

#[test]
fn the_fake_matches_real_tmux() {
    let pair = Pair::up("small.toml");
    let listing = pair.same(&["list-panes", "-a", "-F", PARITY_FORMAT]);
    assert_eq!(listing.lines().count(), 11);
    assert!(
        listing.contains("%5   work:1.2\n"),
        "the plain pane has no agent options:\n{listing}"
    );

    let host_format = [
        "#{pane_id}",
        "#{session_name}",
        "#{window_index}",
        "#{pane_index}",
        "#{window_id}",
        "#{pane_current_path}",
        "#{pane_title}",
        "#{socket_path}",
        "#{@agent_name}",
        "#{@agent_state}",
        "#{@agent_detail}",
        "#{@agent_since}",
        "#{@agent_turn_at}",
        "#{@agent_stamped_at}",
        "#{@agent_attention}",
        "#{@agent_session}",
        "#{@agent_transcript}",
        "#{@agent_permission_request}",
        "#{@agent_question_request}",
        "#{@agent_api_endpoint}",
        "#{@agent_pending_tool}",
        "#{@agent_pending_call}",
        "#{@agent_context}",
        "#{@agent_context_at}",
        "#{@agent_mute_until}",
        "#{@agent_notified_at}",
    ]
    .join("\u{1f}");
    pair.same(&["list-panes", "-a", "-F", &host_format]);
    pair.same(&["-u", "list-panes", "-a", "-F", &host_format]);

    pair.same(&["show-options", "-p", "-v", "-t", "%0", "@agent_state"]);
    pair.same(&["show-options", "-p", "-t", "%0"]);
    pair.same(&["show-options", "-p", "-v", "-t", "%5"]);
    pair.same(&[
        "display-message",
        "-p",
        "-t",
        "%3",
        "#{pane_id} #{@agent_state} ## #{session_name}:#{window_index}.#{pane_index}",
    ]);
    pair.same(&["display-message", "-p", "-t", "%99", "#{pane_id}"]);
    pair.same(&["display-message", "-p", "-t", "ops:1.7", "#{pane_id}"]);

    // `if-shell -F`: a format chooses a command string, parsed and run after it.
    let claim = |pane: &str, value: &str| {
        [
            "if-shell".to_owned(),
            "-F".to_owned(),
            "-t".to_owned(),
            pane.to_owned(),
            format!("#{{==:#{{@claim}},{value}}}"),
            "display-message -p held".to_owned(),
            format!(
                "set-option -p -t '{pane}' '@claim' '{value}' ; show-options -p -v -t '{pane}' '@claim' ; display-message -c '/dev/pts/40' 'it'\\''s #{{pane_id}} ## ; $HOME ~ }}'"
            ),
        ]
    };
    let args = claim("%0", "7");
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    assert_eq!(pair.same(&args), "7\n");
    assert_eq!(pair.same(&args), "held\n");
    let args = claim("%99", "7");
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    pair.same(&args);
    pair.same(&[
        "if-shell",
        "-F",
        "-t",
        "%0",
        "#{!=:#{@claim},}",
        "display -p yes",
        "display -p no",
    ]);
    pair.same(&[
        "if-shell",
        "-F",
        "-t",
        "%0",
        "#{!=:#{@nope},}",
        "display -p yes",
        "display -p no",
    ]);
    pair.same(&[
        "if-shell",
        "-F",
        "-t",
        "%99",
        "#{pane_id}",
        "display -p yes",
        "display -p no",
    ]);
    pair.same(&["if-shell", "-F", "05", "display -p yes", "display -p no"]);
    pair.same(&["if-shell", "-F", " 0", "display -p yes", "display -p no"]);
    pair.same(&["if-shell", "-F", "", "display -p yes"]);
    pair.same(&["if-shell", "-F", "1", "", "display -p no"]);
    pair.same(&[
        "if-shell",
        "-F",
        "1",
        "display -p a ; frob ; display -p b",
        ";",
        "display-message",
        "-p",
        "c",
    ]);
    pair.same(&[
        "if-shell",
        "-F",
        "1",
        "display -p a;set-option -p -t %99 @x 1 ; display -p b",
        ";",
        "display-message",
        "-p",
        "c",
    ]);
    pair.same(&["if-shell", "-F", "1", "display -p \"a\\\"b\" a\\;b"]);
    pair.same(&[
        "if-shell",
        "-F",
        "1",
        "display -p a",
        "display -p b",
        "display -p c",
    ]);

    let awkward = "a\tb\u{1f}c #{x} $HOME ~ 'q' \"d\" é;\\";
    pair.same(&["set-option", "-p", "-t", "%5", "@awkward", awkward]);
    pair.same(&["show-options", "-p", "-t", "%5", "@awkward"]);
    pair.same(&["show-options", "-p", "-v", "-t", "%5", "@awkward"]);
    pair.same(&[
        "list-panes",
        "-a",
        "-F",
        "#{pane_id}\u{1f}#{@awkward}\u{1e}",
    ]);
    pair.same(&["set-option", "-p", "-t", "%5", "@tilde", "~x"]);
    pair.same(&["show-options", "-p", "-t", "%5"]);

    pair.same(&["set-option", "-p", "-t", "%99", "@x", "1"]);
    pair.same(&["show-options", "-p", "-v", "-t", "%99", "@x"]);
    pair.same(&["show-options", "-p", "-v", "-t", "%0", "@nope"]);
    pair.same(&["show-options", "-p", "-q", "-v", "-t", "%0", "@nope"]);
    // `-q` also silences a target that does not exist: nothing happens, exit 0, and the next
    // chained command runs (what `corral event` relies on when its pane is gone).
    pair.same(&["show-options", "-p", "-q", "-v", "-t", "%99", "@x"]);
    pair.same(&["show-options", "-p", "-q", "-t", "%99"]);
    pair.same(&["show-options", "-p", "-q", "-v", "-t", "ops:9.9", "@x"]);
    pair.same(&[
        "set-option",
        "-p",
        "-q",
        "-t",
        "%99",
        "@x",
        "1",
        ";",
        "set-option",
        "-p",
        "-t",
        "%5",
        "@after",
        "2",
        ";",
        "set-option",
        "-p",
        "-q",
        "-u",
        "-t",
        "%98",
        "@x",
    ]);
    pair.same(&["show-options", "-p", "-v", "-t", "%5", "@after"]);
    pair.same(&["set-option", "-p", "-q", "-t", "%5", "@empty"]);
    pair.same(&["set-option", "-p", "-u", "-t", "%5", "@after", "ignored"]);
    pair.same(&["show-options", "-p", "-q", "-v", "-t", "%5", "@after"]);
    pair.same(&[
        "send-keys",
        "-t",
        "%5",
        "Escape",
        ";",
        "send-keys",
        "-t",
        "%5",
        "-l",
        "--",
        "-rf a\\;",
        ";",
        "send-keys",
        "-t",
        "%5",
        "Enter",
    ]);
    pair.same(&["kill-pane", "-t", "%99"]);
    pair.same(&["send-keys", "-t", "%99", "y"]);
    pair.same(&["has-session", "-t", "nosuch"]);
    pair.same(&["has-session", "-t", "ops"]);
    pair.same(&["list-panes", "-Z"]);
    pair.same(&["frob"]);

    pair.same(&["set-option", "-p", "-u", "-t", "%1", "@agent_state"]);
    pair.same(&["set-option", "-p", "-u", "-t", "%1", "@never_set"]);
    pair.same(&["set-option", "-p", "-t", "%1", "@agent_detail"]);
    pair.same(&["kill-pane", "-t", "%4"]);
    let after = pair.same(&["list-panes", "-a", "-F", PARITY_FORMAT]);
    assert!(after.contains("%1 codex  work:0.1\n"), "{after}");
    assert!(!after.contains("%4 "), "{after}");

    pair.real_sim.sim(&["down"]);
    pair.fake_sim.sim(&["down"]);
    pair.same(&["list-panes", "-a", "-F", PARITY_FORMAT]);
    pair.same(&["has-session"]);
}

#[test]
fn steps_and_new_panes_agree_on_both_backends() {
    let pair = Pair::up("small.toml");
    for sim in [&pair.real_sim, &pair.fake_sim] {
        sim.sim(&[
            "step",
            "--pane",
            "codex-work",
            "--state",
            "blocked",
            "--detail",
            "permission",
            "--now-ms",
            "1700000001000",
        ]);
        sim.sim(&[
            "step",
            "--pane",
            "%3",
            "--unset",
            "attention",
            "--set",
            "@agent_notified_at=1",
            "--now-ms",
            "1700000002000",
        ]);
        sim.sim(&[
            "pane",
            "add",
            "--name",
            "late",
            "--session",
            "ops",
            "--agent",
            "claude",
            "--state",
            "idle",
            "--now-ms",
            "1700000003000",
        ]);
        sim.sim(&[
            "pane",
            "add",
            "--name",
            "later",
            "--session",
            "ops",
            "--new-window",
            "--agent",
            "codex",
            "--state",
            "working",
            "--now-ms",
            "1700000004000",
        ]);
        sim.sim(&["pane", "add", "--name", "lone", "--session", "zeta"]);
        sim.sim(&["pane", "kill", "--pane", "claude-unknown"]);
    }
    pair.same(&["list-panes", "-a", "-F", PARITY_FORMAT]);
    pair.same(&["list-panes", "-a", "-F", "#{pane_id} #{window_id} #{@agent_since} #{@agent_stamped_at} #{@agent_detail} #{@agent_attention} #{@agent_notified_at}"]);
    assert_eq!(
        pair.real_sim.sim_json().panes,
        pair.fake_sim.sim_json().panes
    );
}

#[test]
fn what_a_pane_received_reads_the_same_on_both_backends() {
    let pair = Pair::up("small.toml");
    let input = |args: &[&str]| {
        let mut args = args.to_vec();
        args.insert(0, "input");
        args.insert(0, "pane");
        let real = pair.real_sim.sim(&args);
        let fake = pair.fake_sim.sim(&args);
        assert_eq!(
            real, fake,
            "pane input {args:?}: real (left) and fake (right) differ"
        );
        real
    };
    assert_eq!(input(&["--pane", "%2"]), "", "nothing was sent yet");
    // A text dispatch as the host fires it: keys, the text typed literally (a final `;` escaped),
    // the submit keys, in one invocation.
    pair.same(&[
        "send-keys",
        "-t",
        "%2",
        "Escape",
        ";",
        "send-keys",
        "-t",
        "%2",
        "-l",
        "--",
        "-rf; é 日本 \\;",
        ";",
        "send-keys",
        "-t",
        "%2",
        "Enter",
    ]);
    pair.same(&[
        "send-keys",
        "-t",
        "%2",
        "C-c",
        "y",
        "Up",
        "M-x",
        "hello world",
    ]);
    pair.same(&["send-keys", "-t", "%3", "1"]);
    let want = [
        r#"{"keys":["Escape"]}"#,
        r#"{"text":"-rf; é 日本 ;"}"#,
        r#"{"keys":["Enter","C-c"]}"#,
        r#"{"text":"y"}"#,
        r#"{"keys":["Escape"]}"#,
        r#"{"text":"[A"}"#,
        r#"{"keys":["Escape"]}"#,
        r#"{"text":"xhello world"}"#,
    ];
    assert_eq!(input(&["--pane", "opencode-ask"]), want.join("\n") + "\n");
    assert_eq!(input(&["--pane", "%3"]), "{\"text\":\"1\"}\n");
    // --clear prints, then starts afresh.
    assert_eq!(input(&["--pane", "%2", "--clear"]), want.join("\n") + "\n");
    assert_eq!(input(&["--pane", "%2"]), "");
    pair.same(&["send-keys", "-t", "%2", "Enter"]);
    assert_eq!(input(&["--pane", "%2"]), "{\"keys\":[\"Enter\"]}\n");
    // A pane added later records too, and so does one whose program was respawned elsewhere.
    for sim in [&pair.real_sim, &pair.fake_sim] {
        sim.sim(&["pane", "add", "--name", "late", "--session", "ops"]);
        let elsewhere = sim.path().join("elsewhere");
        sim.sim(&["step", "--pane", "%2", "--cwd", elsewhere.to_str().unwrap()]);
    }
    pair.same(&["send-keys", "-t", "%11", "-l", "ok"]);
    pair.same(&["send-keys", "-t", "%2", "2"]);
    assert_eq!(input(&["--pane", "late"]), "{\"text\":\"ok\"}\n");
    assert_eq!(
        input(&["--pane", "%2"]),
        "{\"keys\":[\"Enter\"]}\n{\"text\":\"2\"}\n"
    );
}

/// tmux's format language on both backends: every variable the fake models whose value does not
/// differ by nature, the conditionals, comparisons, modifiers and escapes, and what a malformed
/// format leaves. Values that differ by nature (pids, ttys, times) are compared by shape.
#[test]
fn formats_expand_the_same_on_both_backends() {
    let pair = Pair::up("small.toml");
    let variables = [
        "pane_id",
        "pane_index",
        "pane_active",
        "pane_current_path",
        "pane_start_path",
        "pane_current_command",
        "pane_start_command",
        "pane_title",
        "pane_dead",
        "pane_dead_status",
        "pane_in_mode",
        "pane_mode",
        "pane_marked",
        "pane_marked_set",
        "pane_input_off",
        "pane_pipe",
        "pane_synchronized",
        "pane_last",
        "pane_path",
        "pane_format",
        "pane_search_string",
        "cursor_x",
        "cursor_y",
        "cursor_flag",
        "wrap_flag",
        "insert_flag",
        "keypad_flag",
        "keypad_cursor_flag",
        "origin_flag",
        "mouse_any_flag",
        "alternate_on",
        "history_size",
        "history_limit",
        "pane_fg",
        "pane_bg",
        "scroll_position",
        "selection_present",
        "window_id",
        "window_index",
        "window_active",
        "window_panes",
        "window_width",
        "window_height",
        "window_flags",
        "window_raw_flags",
        "window_format",
        "window_end_flag",
        "window_start_flag",
        "window_last_flag",
        "window_stack_index",
        "window_zoomed_flag",
        "window_linked",
        "window_linked_sessions",
        "window_linked_sessions_list",
        "window_active_sessions",
        "window_active_sessions_list",
        "window_bigger",
        "window_offset_x",
        "window_activity_flag",
        "window_bell_flag",
        "window_silence_flag",
        "window_marked_flag",
        "session_id",
        "session_name",
        "session_windows",
        "session_path",
        "session_stack",
        "session_format",
        "session_grouped",
        "session_group",
        "session_alerts",
        "session_marked",
        "active_window_index",
        "last_window_index",
        "socket_path",
        "host",
        "host_short",
        "version",
        "uid",
        "user",
        "line",
        "command",
        "hook",
        "buffer_name",
        "mouse_x",
        "current_file",
        "client_name",
        "nonsense_variable",
        "default-size",
    ];
    let format: String = variables
        .iter()
        .map(|v| format!("{v}=#{{{v}}}"))
        .collect::<Vec<_>>()
        .join("|");
    let listing = pair.same(&["list-panes", "-a", "-F", &format]);
    assert!(
        listing.contains("pane_current_command=cat|"),
        "the recorder runs cat:\n{listing}"
    );
    assert!(listing.contains("default-size=400x200"), "{listing}");
    pair.same(&["list-panes", "-s", "-t", "ops", "-F", &format]);
    pair.same(&["display-message", "-p", "-t", "%3", &format]);

    // The aliases, escapes and the language.
    for format in [
        "#D|#I|#P|#S|#T|#H|#h|#F|#x|##|#,|#}|a##[b|a###[b|####|trail#",
        "#{?pane_active,active,idle}|#{?window_active,#{?pane_active,A,a},-}",
        "#{?0,a,1,b,c}|#{?1,y,n}|#{?@agent_state,set,unset}|#{?@nope,set,unset}",
        "#{?#{==:#{@agent_state},blocked},#{?#{@agent_detail},#{@agent_detail}#,!,none},ok}",
        "#{==:#{session_name},work}#{!=:#{pane_index},0}#{<:#{pane_id},%5}#{>=:#{window_index},1}",
        "#{||:#{pane_in_mode},#{pane_active}}#{&&:#{pane_active},#{window_active}}",
        "#{m:*work*,#{session_name}}#{m:%[0-4],#{pane_id}}#{m/i:OPS,#{session_name}}",
        "#{=5:@agent_state}|#{=-3:pane_current_path}|#{=/4/...:session_name}|#{=/-2/<:session_name}",
        "#{b:pane_current_path}|#{d:pane_current_path}|#{b:socket_path}",
        "#{l:#{pane_id}}|#{E:@agent_state}|#{s/o/0/:session_name}|#{q:@agent_detail}",
        "#{n:session_name}|#{w:pane_title}|#{p-6:window_index}|#{p6:session_name}|#{a:65}",
        "#{e|+|:#{pane_index},10}|#{e|*|f|3:#{window_panes},1.5}|#{e|<|:#{pane_index},1}",
        "#{=3;b:pane_current_path}|#{:pane_id}|#{pane_id;x}|#{}|#{e|+|:1}",
        "before#{?a}after",
        "before#{pane_id",
        "x#{?pane_active,#{==:a},n}y",
    ] {
        pair.same(&["list-panes", "-a", "-F", format]);
    }
    pair.same(&[
        "display-message",
        "-p",
        "-t",
        "%2",
        "#{t:nosuch}|#{t:pane_id}",
    ]);
    pair.same(&[
        "if-shell",
        "-F",
        "-t",
        "%0",
        "#{&&:#{pane_active},#{m:*,x}}",
        "display -p y",
        "display -p n",
    ]);

    // User options: the pane's, else its window's, else its session's, else the global one.
    for args in [
        &["set-option", "-g", "@scope", "global"][..],
        &["set-option", "-t", "ops", "@scope", "session"],
        &["set-option", "-w", "-t", "%6", "@scope", "window"],
        &["set-option", "-p", "-t", "%7", "@scope", "pane"],
    ] {
        pair.same(args);
        pair.same(&["list-panes", "-a", "-F", "#{pane_id} #{@scope}"]);
    }
    pair.same(&["set-option", "-w", "-u", "-t", "%6", "@scope"]);
    pair.same(&["list-panes", "-a", "-F", "#{pane_id} #{@scope} #{E:@scope}"]);

    // What differs by nature, by shape.
    let shapes = pair.same(&[
        "list-panes",
        "-a",
        "-F",
        "#{m:[1-9]*,#{pane_pid}} #{m:[1-9]*,#{session_created}}#{m:[1-9]*,#{start_time}}#{m:[1-9]*,#{pid}} #{m:*20[0-9][0-9],#{t:session_created}} #{m:[$]*,#{next_session_id}} #{n:window_activity}",
    ]);
    assert!(shapes.lines().all(|l| !l.is_empty()), "{shapes}");
    let ttys = |sim: &Sim, program: &str, socket: &str| {
        let mut command = sim.command(program);
        command.args(["-L", socket, "list-panes", "-a", "-F", "#{pane_tty}"]);
        let (out, _, code) = split(command.output().unwrap());
        assert_eq!(code, 0);
        out.lines().count()
    };
    assert_eq!(
        ttys(&pair.real_sim, "tmux", &pair.real_socket),
        ttys(&pair.fake_sim, fake_tmux(), &pair.fake_socket)
    );

    // A lone pane fills its window: a new window has one.
    for sim in [&pair.real_sim, &pair.fake_sim] {
        sim.sim(&[
            "pane",
            "add",
            "--name",
            "lone",
            "--session",
            "ops",
            "--new-window",
        ]);
    }
    let lone = pair.real_sim.sim_json().panes["lone"].clone();
    assert_eq!(lone, pair.fake_sim.sim_json().panes["lone"]);
    pair.same(&[
        "display-message",
        "-p",
        "-t",
        &lone,
        "#{pane_width}x#{pane_height} #{pane_left},#{pane_top},#{pane_right},#{pane_bottom} #{pane_at_left}#{pane_at_top}#{pane_at_right}#{pane_at_bottom} #{pane_tabs} #{window_layout} #{window_visible_layout} #{scroll_region_upper}-#{scroll_region_lower}",
    ]);
}
