//! The TUI end to end, as a person uses it: `corral-remote` in a scratch tmux pane of 160×48 over
//! two `corral-sim demo` fleets, `local` reached with the demo's `connect` script and `remote`
//! through a real sshd on loopback, whose `authorized_keys` line is the one that demo prints (its
//! connect command as the key's forced command). Driven with `send-keys` and read with
//! `capture-pane`, it approves a permission over ssh, answers a question, steers an idle agent
//! and pages a transcript back, each checked on the screen (the receipt's outcome in the pane's
//! panel) and on the fleet (the host's receipts, the demo's own log); then `local`'s connection is
//! killed (shown down, then back) and `remote`'s device revoked (shown revoked, not retried).
//!
//! The fleet view with both hosts and an open card is written to
//! `$CARGO_TARGET_TMPDIR/corral-remote-fleet.txt` (and printed: `--nocapture` shows it).

use std::path::Path;
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::support::tmux::{Tmux, children, cmdline};
use crate::support::{Demo, REMOTE, command, sim, toml_string};
use test_support::sshd::{Sshd, keygen, user};

const WIDTH: u16 = 160;
const HEIGHT: u16 = 48;

/// How long one step may take before the test gives up: generous, for a loaded 2-core machine.
const STEP: Duration = Duration::from_secs(90);

/// One row of the fleet list as the screen shows it.
#[derive(Debug, Clone, PartialEq)]
struct Shown {
    host: String,
    pane: String,
    agent: String,
    state: String,
    detail: String,
}

/// The fleet list's rows, cut at the header's columns.
fn rows(screen: &str) -> Vec<Shown> {
    let lines: Vec<&str> = screen.lines().collect();
    let Some(at) = lines.iter().position(|l| l.starts_with("│host ")) else {
        return Vec::new();
    };
    let header = lines[at];
    let column = |word: &str| {
        let byte = header.find(word).expect("a column of the list");
        header[..byte].chars().count()
    };
    let starts = [
        "host",
        "pane",
        "agent",
        "state",
        "waited",
        "detail",
        "repo/branch",
    ]
    .map(column);
    let mut shown = Vec::new();
    for line in &lines[at + 1..] {
        let chars: Vec<char> = line.chars().collect();
        let cell = |i: usize| -> String {
            let end = starts[i + 1].min(chars.len());
            chars[starts[i].min(end)..end]
                .iter()
                .collect::<String>()
                .trim()
                .to_owned()
        };
        if !line.starts_with('│') || cell(0).is_empty() {
            break;
        }
        shown.push(Shown {
            host: cell(0),
            pane: cell(1),
            agent: cell(2),
            state: cell(3),
            detail: cell(5),
        });
    }
    shown
}

/// The panel below the list: its title's host and pane (the selected one), and its lines.
fn panel(screen: &str) -> (Option<(String, String)>, String) {
    let lines: Vec<&str> = screen.lines().collect();
    let Some(at) = lines
        .iter()
        .position(|l| l.starts_with("┌ ") && !l.starts_with("┌ agents"))
    else {
        return (None, String::new());
    };
    let mut words = lines[at].trim_start_matches("┌ ").split_whitespace();
    let title = match (words.next(), words.next()) {
        (Some(host), Some(pane)) => Some((host.to_owned(), pane.to_owned())),
        _ => None,
    };
    let body: Vec<&str> = lines[at + 1..]
        .iter()
        .take_while(|l| !l.starts_with('└'))
        .copied()
        .collect();
    (title, body.join("\n"))
}

/// The pane the panel shows, when it is `host`'s `pane`.
fn shows(screen: &str, host: &str, pane: &str) -> bool {
    panel(screen).0 == Some((host.to_owned(), pane.to_owned()))
}

/// What the panel says of the last answer from here, when it says something.
fn last_answer(screen: &str) -> Option<String> {
    let (_, body) = panel(screen);
    body.lines().find_map(|l| {
        l.split_once("last answer from here: ")
            .map(|(_, rest)| rest.trim_end_matches(['│', ' ']).to_owned())
    })
}

/// The header line of host `name`.
fn header<'a>(screen: &'a str, name: &str) -> &'a str {
    screen
        .lines()
        .take(2)
        .find(|l| l.split_whitespace().nth(1) == Some(name))
        .unwrap_or("")
}

/// Moves the selection to `host`'s `pane`; false when it left the list first.
fn select(tmux: &Tmux, host: &str, pane: &str) -> bool {
    let deadline = Instant::now() + Duration::from_secs(30);
    while Instant::now() < deadline {
        let screen = tmux.screen();
        let shown = rows(&screen);
        let Some(to) = shown.iter().position(|r| r.host == host && r.pane == pane) else {
            return false;
        };
        let selected = panel(&screen).0;
        let Some(at) = selected
            .as_ref()
            .and_then(|(h, p)| shown.iter().position(|r| &r.host == h && &r.pane == p))
        else {
            // The selection is a pane that left the list (or none yet): select again.
            tmux.repeat("Down", 1);
            let _ = tmux.try_wait(Duration::from_secs(5), |s| panel(s).0 != selected);
            continue;
        };
        if to == at {
            return true;
        }
        // One step at a time, each seen on the screen before the next: with several keys in
        // flight a slow (loaded) client can show the wanted row in passing and then move on.
        tmux.repeat(if to > at { "Down" } else { "Up" }, 1);
        let _ = tmux.try_wait(Duration::from_secs(5), |s| panel(s).0 != selected);
    }
    false
}

/// Selects the first row `wanted` accepts, once there is one, and opens its card; the row and
/// the screen when the card shows `kind`, `None` when the pane moved on first.
fn open_card(tmux: &Tmux, kind: &str, wanted: impl Fn(&Shown) -> bool) -> Option<(Shown, String)> {
    let screen = tmux.wait(STEP, &format!("a pane blocked on a {kind}"), |s| {
        rows(s).iter().any(&wanted)
    });
    let row = rows(&screen).into_iter().find(&wanted)?;
    if !select(tmux, &row.host, &row.pane) {
        return None;
    }
    tmux.keys(&["Enter"]);
    let screen = tmux
        .try_wait(Duration::from_secs(20), |s| {
            let body = panel(s).1;
            shows(s, &row.host, &row.pane)
                && (body.contains(kind)
                    || body.contains("not blocked")
                    || !body.contains("BLOCKED"))
        })
        .ok()?;
    panel(&screen).1.contains(kind).then_some((row, screen))
}

/// Presses `keys` on the selected pane; the outcome of its receipt as the panel shows it.
fn answer(tmux: &Tmux, row: &Shown, keys: &[&str], action: &str) -> Option<String> {
    let before = last_answer(&tmux.screen());
    for key in keys {
        tmux.keys(&[key]);
    }
    let screen = tmux
        .try_wait(Duration::from_secs(30), |s| {
            shows(s, &row.host, &row.pane) && last_answer(s).is_some() && last_answer(s) != before
        })
        .ok()?;
    let said = last_answer(&screen)?;
    let outcome = said.strip_prefix(&format!("{action} → "))?;
    Some(outcome.split_whitespace().next()?.to_owned())
}

/// The two fleets.
struct World {
    dir: std::path::PathBuf,
    local: Demo,
    remote: Demo,
}

impl World {
    fn demo(&mut self, host: &str) -> &mut Demo {
        match host {
            "local" => &mut self.local,
            _ => &mut self.remote,
        }
    }

    /// The receipt of `action` on `host`'s `pane` in that host's ledger; checks the outcome shown
    /// is the ledger's, and that the demo's agent took the answer: its log says `took`.
    fn check_fleet(
        &mut self,
        (host, pane): (&str, &str),
        (action, outcome): (&str, &str),
        mark: usize,
        took: &str,
    ) {
        let dir = self.dir.clone();
        let receipts = self.demo(host).receipts(&dir);
        let receipt: &Value = receipts
            .iter()
            .rev()
            .find(|r| r["pane"] == pane && r["action"] == action)
            .unwrap_or_else(|| panic!("no {action} receipt of {pane} on {host}: {receipts:#?}"));
        assert_eq!(receipt["outcome"], outcome, "{receipt}");
        assert_eq!(receipt["device"], "SHA256:corral-demo", "{receipt}");
        let line = self.demo(host).line_since(
            mark,
            Duration::from_secs(30),
            &format!("{pane} taking the app's {action}"),
            |l| l.contains(&format!(" {pane} ")) && l.contains(" app: "),
        );
        assert!(line.contains(took), "{line}");
    }
}

#[test]
fn the_tui_answers_two_fleets_one_over_ssh() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().to_owned();
    let mut local = Demo::spawn(&dir, 3, 8, 2);
    let mut remote = Demo::spawn(&dir, 5, 8, 2);
    local.ready();
    remote.ready();

    // The ssh side: a key of the client's, given the remote demo's forced command.
    let keys = dir.join("keys");
    std::fs::create_dir(&keys).unwrap();
    let key = keygen(&keys, "corral-remote");
    let public = std::fs::read_to_string(key.with_extension("pub")).unwrap();
    let (forced, placeholder) = remote.forced.split_once("restrict ").unwrap();
    assert!(
        placeholder.starts_with("<the app's public key"),
        "{placeholder}"
    );
    let authorized_keys = keys.join("authorized_keys");
    std::fs::write(&authorized_keys, format!("{forced}restrict {public}")).unwrap();
    let mut vars = test_support::in_temp_dirs(&dir);
    if let Ok(mark) = std::env::var(test_support::RUN_MARK) {
        vars.push((test_support::RUN_MARK.to_owned(), mark));
    }
    let sshd = Sshd::start(&dir, &authorized_keys, &vars);

    let options: Vec<String> = sshd.options(&key).iter().map(|o| toml_string(o)).collect();
    let config = format!(
        "[[host]]\nname = \"local\"\ncommand = [{}]\n\n[[host]]\nname = \"remote\"\nssh = {}\nssh_options = [{}]\n",
        toml_string(local.script.to_str().unwrap()),
        toml_string(&format!("{}@127.0.0.1", user())),
        options.join(", ")
    );
    let file = dir.join("remote.toml");
    std::fs::write(&file, config).unwrap();
    let shell = format!(
        "'{REMOTE}' --config '{}'; echo EXITED $?; sleep 60",
        file.display()
    );
    let mut world = World {
        dir: dir.clone(),
        local,
        remote,
    };
    let tmux = &Tmux::start(&dir, WIDTH, HEIGHT, &shell);
    tmux.wait(STEP, "both hosts connected with their agents", |s| {
        ["local", "remote"].iter().all(|h| {
            let line = header(s, h);
            line.starts_with("●") && line.contains("connected  8 agents")
        })
    });

    // Approve a permission on the host reached over ssh: its card opened, `a` pressed.
    let deadline = Instant::now() + STEP;
    let (row, outcome, mark) = loop {
        assert!(Instant::now() < deadline, "no permission approved over ssh");
        let Some((row, screen)) = open_card(tmux, "Permission", |r| {
            r.host == "remote" && r.state == "BLOCKED" && r.detail == "permission"
        }) else {
            continue;
        };
        let capture = Path::new(env!("CARGO_TARGET_TMPDIR")).join("corral-remote-fleet.txt");
        std::fs::write(&capture, &screen).unwrap();
        eprintln!(
            "the fleet view with an open card ({}):\n{screen}",
            capture.display()
        );
        let mark = world.remote.mark();
        match answer(tmux, &row, &["a"], "approve") {
            Some(outcome) if outcome == "replied" || outcome == "sent" => {
                break (row, outcome, mark);
            }
            _ => continue,
        }
    };
    world.check_fleet(
        ("remote", &row.pane),
        ("approve", &outcome),
        mark,
        "→ working",
    );

    // Answer a question: the first option of its first question, then `y`.
    let deadline = Instant::now() + STEP;
    let (row, outcome, mark) = loop {
        assert!(Instant::now() < deadline, "no question answered");
        let Some((row, _)) = open_card(tmux, "Question", |r| {
            r.state == "BLOCKED" && r.detail == "question"
        }) else {
            continue;
        };
        let mark = world.demo(&row.host).mark();
        tmux.keys(&["1"]);
        if tmux
            .try_wait(Duration::from_secs(10), |s| panel(s).1.contains("[x]"))
            .is_err()
        {
            continue;
        }
        match answer(tmux, &row, &["y"], "question_reply") {
            Some(outcome) if outcome == "replied" => break (row, outcome, mark),
            _ => continue,
        }
    };
    world.check_fleet(
        (&row.host, &row.pane),
        ("question_reply", &outcome),
        mark,
        "→ working",
    );

    // Steer an idle agent: `s`, a line, Enter.
    let deadline = Instant::now() + STEP;
    let (row, outcome, mark) = loop {
        assert!(Instant::now() < deadline, "no idle agent steered");
        let screen = tmux.wait(STEP, "an idle agent", |s| {
            rows(s)
                .iter()
                .any(|r| r.host == "local" && (r.state == "idle" || r.state == "done"))
        });
        let Some(row) = rows(&screen)
            .into_iter()
            .find(|r| r.host == "local" && (r.state == "idle" || r.state == "done"))
        else {
            continue;
        };
        if !select(tmux, &row.host, &row.pane) {
            continue;
        }
        let mark = world.local.mark();
        tmux.keys(&["s"]);
        tmux.wait_for(
            "the steer prompt",
            &format!("steer {} {}>", row.host, row.pane),
        );
        tmux.type_text("Run the tests first.");
        match answer(tmux, &row, &["Enter"], "steer") {
            Some(outcome) if outcome == "sent" => break (row, outcome, mark),
            _ => continue,
        }
    };
    world.check_fleet(("local", &row.pane), ("steer", &outcome), mark, "steered");

    // Page a transcript: the newest window, then the page before it. claude-1's transcript (%0)
    // is grown first, so that it has more than a window.
    let out = command(sim(), &dir)
        .envs(world.local.env())
        .args([
            "transcript",
            "grow",
            "--pane",
            "claude-1",
            "--events",
            "150",
        ])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(select(tmux, "local", "%0"), "{}", tmux.screen());
    tmux.keys(&["t"]);
    let loaded = |s: &str| -> Option<usize> {
        let title = s
            .lines()
            .find(|l| l.starts_with("┌ local %0 transcript · "))?;
        let (_, rest) = title.split_once(" transcript · ")?;
        rest.split_whitespace().next()?.parse().ok()
    };
    let screen = tmux.wait(STEP, "the newest window", |s| {
        loaded(s).is_some() && s.contains("o: older page")
    });
    let first = loaded(&screen).unwrap();
    assert!(first > 0, "{screen}");
    tmux.keys(&["o"]);
    tmux.wait(STEP, "the older page", |s| {
        loaded(s).is_some_and(|n| n > first)
    });
    tmux.keys(&["Escape"]);
    tmux.wait(STEP, "the fleet again", |s| panel(s).0.is_some());

    // A killed connection: `local`'s serve killed while its connect script is away, so that the
    // retries fail and the host stays down on the screen; back once the script is.
    let script = world.local.script.clone();
    let away = script.with_extension("away");
    std::fs::rename(&script, &away).unwrap();
    let client = children(tmux.pane_pid())[0];
    let serve = children(client)
        .into_iter()
        .find(|pid| {
            let line = cmdline(*pid);
            line.contains(" serve --stdio ") && !line.starts_with("ssh ")
        })
        .expect("the local host's serve");
    let pid = rustix::process::Pid::from_raw(serve).unwrap();
    rustix::process::kill_process(pid, rustix::process::Signal::KILL).unwrap();
    let screen = tmux.wait(STEP, "the local host down", |s| {
        header(s, "local").starts_with("○ local disconnected")
    });
    assert!(header(&screen, "remote").starts_with("● remote connected"));
    tmux.wait(STEP, "the retry failing", |s| {
        header(s, "local").contains("cannot start")
    });
    std::fs::rename(&away, &script).unwrap();
    tmux.wait(STEP, "the local host back", |s| {
        header(s, "local").starts_with("● local connected  8 agents")
    });

    // A revoked device: `remote` shown revoked, and not retried.
    world.remote.corral(&dir, &["device", "revoke", "demo-app"]);
    let screen = tmux.wait(STEP, "the revoked device", |s| {
        header(s, "remote").starts_with("✗ remote revoked")
    });
    assert!(
        header(&screen, "remote").contains("scope-denied"),
        "{screen}"
    );
    // Not retried: sshd lets no connection in after the refused one. The client's backoff
    // starts at 0.5 s, so a retry would reach sshd several times over within this window.
    let accepted = sshd.accepted();
    assert!(accepted >= 1, "sshd counted no connection:\n{screen}");
    std::thread::sleep(Duration::from_secs(5));
    let screen = tmux.screen();
    assert!(
        header(&screen, "remote").starts_with("✗ remote revoked"),
        "{screen}"
    );
    assert_eq!(
        sshd.accepted(),
        accepted,
        "the revoked host was tried again (connections at sshd)"
    );
    assert!(header(&screen, "local").starts_with("● local connected"));

    tmux.keys(&["q"]);
    let screen = tmux.wait_for("the end", "EXITED");
    assert!(screen.contains("EXITED 0"), "{screen}");
}
