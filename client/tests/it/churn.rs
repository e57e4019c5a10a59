//! The person answers only what they saw, under churn: the TUI in a scratch tmux over a busy demo
//! fleet (the fake tmux, 10 panes, speed 4), driven by a seeded random mix of keys (moves,
//! Enter, `a`, `d`, `b`, `f`, Esc), the screen captured before every key. Afterwards every
//! receipt in the host's ledger from this client's device is matched to the answer key that
//! caused it: the capture before that key showed that pane's card, in the list, not marked
//! changed, of the episode the receipt's slot quotes. The same property for the headless mode,
//! with random commands quoting good, stale, made-up and missing binders.
//!
//! Short in `cargo test`; `CORRAL_IT_LONG=1` runs each for two minutes. `CORRAL_CHURN_SEED`
//! replays a seed (each run prints its own). The first screen showing a card that changed under
//! the person's eyes is written to `$CARGO_TARGET_TMPDIR/corral-remote-card-changed.txt`.
//!
//! A card request is the one thing that changes the panel's card without a key at the moment it
//! lands, so the driver, like a person reading, waits after a key that asks for a card until the
//! card (or the host's refusal) is on the screen before its next key; and it does not press Enter
//! on a card that stands (reading it again may bring the same card back, which the screen cannot
//! tell from the old one, so the driver could not know when it landed). Everything else that
//! moves the panel without a key (a pane moving on, vanishing, its host dropping) can only make
//! an answer key refuse, which the property allows.

use std::collections::HashMap;
use std::path::Path;
use std::time::{Duration, Instant};

use stdx::now_ms;

use serde_json::{Value, json};

use crate::support::tmux::Tmux;
use crate::support::{Demo, REMOTE, Remote, is};

/// The demo's device, whose receipts are this client's.
const DEVICE: &str = "SHA256:corral-demo";

fn long() -> bool {
    std::env::var("CORRAL_IT_LONG").is_ok_and(|v| v == "1")
}

/// How long keys are pressed.
fn churn_for() -> Duration {
    if long() {
        Duration::from_secs(120)
    } else {
        Duration::from_secs(20)
    }
}

/// A small seeded generator (splitmix64): the same seed, the same keys.
struct Rng(u64);

impl Rng {
    fn seeded(what: &str) -> Rng {
        let seed = std::env::var("CORRAL_CHURN_SEED")
            .ok()
            .and_then(|s| s.parse().ok())
            .unwrap_or_else(now_ms);
        eprintln!("{what}: seed {seed} (CORRAL_CHURN_SEED={seed} replays it)");
        Rng(seed)
    }

    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }

    /// One of `choices`, by weight.
    fn pick<'a, T>(&mut self, choices: &'a [(u64, T)]) -> &'a T {
        let total: u64 = choices.iter().map(|(w, _)| w).sum();
        let mut at = self.below(total);
        for (weight, choice) in choices {
            if at < *weight {
                return choice;
            }
            at -= weight;
        }
        unreachable!("the weights add up")
    }
}

/// A receipt's slot: its pane, the episode it quotes and the action (`%4:1763780412000:approve`,
/// or `%4:0:approve:<request>` for a pane with no episode).
fn slot_parts(slot: &str) -> (String, u64, String) {
    let mut parts = slot.splitn(4, ':');
    let pane = parts.next().unwrap_or_default().to_owned();
    let episode = parts
        .next()
        .and_then(|e| e.parse().ok())
        .unwrap_or(u64::MAX);
    let action = parts.next().unwrap_or_default().to_owned();
    (pane, episode, action)
}

/// The receipts of this client's device in the demo's ledger.
fn our_receipts(demo: &Demo, dir: &Path) -> Vec<Value> {
    demo.receipts(dir)
        .into_iter()
        .filter(|r| r["device"] == DEVICE)
        .collect()
}

// The TUI.

/// What one capture of the screen shows of the panel and the line editor.
#[derive(Debug, Clone, Default, PartialEq)]
struct Seen {
    /// The panel's host and pane (its title's first two words).
    pane: Option<(String, String)>,
    /// The panel says the pane is not in the list.
    absent: bool,
    /// The card's identity line: its episode.
    episode: Option<u64>,
    /// The panel shows a card (a permission, a question, an informational one, or "not blocked").
    card: bool,
    /// The card is marked changed.
    changed: bool,
    /// The line editor is open (its prompt is on the last line).
    editing: bool,
    /// The card's lines, to tell one card from the next.
    body: String,
    /// The status line.
    status: String,
    /// How many keys the TUI had read when it drew this screen.
    keys: Option<u64>,
    /// How many answers it had handed to the host by then.
    sent: Option<u64>,
}

fn seen(screen: &str) -> Seen {
    let lines: Vec<&str> = screen.lines().collect();
    let mut seen = Seen::default();
    let last = lines
        .iter()
        .rev()
        .find(|l| !l.trim().is_empty())
        .copied()
        .unwrap_or("");
    // The key line, or the editor's prompt in its place (`filter (…)> `, `steer demo %3> `).
    seen.editing = !last.starts_with("↑↓") && last.contains('>');
    let status = lines
        .iter()
        .rev()
        .filter(|l| !l.trim().is_empty())
        .nth(1)
        .copied()
        .unwrap_or("");
    // ` [keys N · sent M]`: keys read, answers handed to the host.
    let (status, keys, sent) = match status.rfind(" [keys ") {
        Some(at) => {
            let mut counts = status[at + 7..].trim_end_matches(']').split(" · sent ");
            let keys = counts.next().and_then(|n| n.parse().ok());
            let sent = counts.next().and_then(|n| n.parse().ok());
            (&status[..at], keys, sent)
        }
        None => (status, None, None),
    };
    seen.status = status.trim().to_owned();
    seen.keys = keys;
    seen.sent = sent;
    let Some(at) = lines.iter().position(|l| {
        l.starts_with("┌ ") && !l.starts_with("┌ agents") && !l.starts_with("┌ pane")
    }) else {
        return seen;
    };
    let title = lines[at];
    let mut words = title.trim_start_matches("┌ ").split_whitespace();
    if let (Some(host), Some(pane)) = (words.next(), words.next()) {
        seen.pane = Some((host.to_owned(), pane.to_owned()));
    }
    seen.absent = title.contains("not in the list");
    seen.changed = title.contains("CARD CHANGED");
    let body: Vec<&str> = lines[at + 1..]
        .iter()
        .take_while(|l| !l.starts_with('└'))
        .map(|l| l.trim_matches(['│', ' ']))
        .collect();
    for line in &body {
        if let Some(rest) = line.strip_prefix("card of episode ") {
            seen.episode = rest.split_whitespace().next().and_then(|e| e.parse().ok());
        }
    }
    seen.card = seen.episode.is_some()
        || body.iter().any(|l| {
            l.starts_with("not blocked: nothing to answer")
                || l.contains("nothing to answer from here")
        });
    seen.body = body
        .iter()
        .filter(|l| !l.starts_with("last answer from here"))
        .copied()
        .collect::<Vec<_>>()
        .join("\n");
    seen
}

/// An answer key pressed, and what the screen showed just before.
#[derive(Debug)]
struct Press {
    key: &'static str,
    at_ms: u64,
    before: Seen,
}

/// Waits until the screen shows what the `n`-th key did: the TUI counts the keys it read on the
/// status line (`CORRAL_REMOTE_TEST_KEY_COUNT`), and draws after every key.
fn await_key(tmux: &Tmux, n: u64) {
    if let Err(screen) = tmux.try_wait(Duration::from_secs(60), |s| seen(s).keys >= Some(n)) {
        panic!("key {n} was not read:\n{screen}");
    }
}

/// Waits, after a key that asks for a card, until the panel shows that pane's card (another
/// one than `before` showed) or the status line says the card was refused.
fn await_card(tmux: &Tmux, before: &Seen) {
    let (host, pane) = before.pane.clone().expect("a card is asked for a pane");
    let settled = tmux.try_wait(Duration::from_secs(60), |screen| {
        let now = seen(screen);
        let refused = now.status.starts_with(&format!("{host} {pane} card:"));
        now.pane == before.pane
            && (refused || (now.card && (now.body != before.body || now.changed != before.changed)))
    });
    if let Err(screen) = settled {
        panic!("the card of {host} {pane} never came:\n{screen}");
    }
}

#[test]
fn under_churn_every_tui_receipt_answers_the_card_on_screen() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let demo = Demo::start(dir, 10, 4);
    let config = dir.join("remote.toml");
    std::fs::write(&config, demo.host("demo", "")).unwrap();
    let shell = format!(
        "CORRAL_REMOTE_TEST_KEY_COUNT=1 '{REMOTE}' --config '{}' --no-bell; echo EXITED $?; sleep 60",
        config.display()
    );
    let tmux = Tmux::start(dir, 160, 48, &shell);
    tmux.wait(Duration::from_secs(90), "the demo's agents", |s| {
        s.contains("demo connected  10 agents")
    });

    let mut rng = Rng::seeded("the TUI under churn");
    let keys: [(u64, &str); 8] = [
        (14, "Down"),
        (8, "Up"),
        (22, "Enter"),
        (22, "a"),
        (8, "d"),
        (10, "b"),
        (2, "f"),
        (6, "Escape"),
    ];
    let mut pressed: u64 = 0;
    let mut answers: Vec<Press> = Vec::new();
    let mut changed_screen: Option<String> = None;
    let end = Instant::now() + churn_for();
    while Instant::now() < end {
        let screen = tmux.screen();
        let before = seen(&screen);
        // A person who has a card standing in front of them often answers it: half the time,
        // then, the key is an answer.
        let standing = before.episode.is_some() && !before.changed && !before.absent;
        let mut key = if standing && !before.editing && rng.below(2) == 0 {
            *rng.pick(&[(3, "a"), (1, "d")])
        } else {
            *rng.pick(&keys)
        };
        if key == "Enter" && !before.editing && before.card && !before.changed {
            key = "Down";
        }
        if before.changed && changed_screen.is_none() {
            changed_screen = Some(screen.clone());
        }
        let in_list = before.pane.is_some() && !before.absent && !before.editing;
        let asks_card = in_list
            && match key {
                "Enter" => true,
                "a" | "d" => !before.card,
                _ => false,
            };
        if matches!(key, "a" | "d") && !before.editing {
            answers.push(Press {
                key,
                at_ms: now_ms(),
                before: before.clone(),
            });
        }
        tmux.keys(&[key]);
        pressed += 1;
        await_key(&tmux, pressed);
        if asks_card {
            await_card(&tmux, &before);
        }
        // A person's pace, varied: a few keys a second.
        std::thread::sleep(Duration::from_millis(20 + rng.below(120)));
    }
    // Out of any editor; what the screen counts of the answers sent; then quit.
    tmux.keys(&["Escape"]);
    pressed += 1;
    await_key(&tmux, pressed);
    let sent = seen(&tmux.screen())
        .sent
        .expect("the status line counts the answers sent");
    tmux.keys(&["q"]);
    tmux.wait_for("the end", "EXITED");

    let receipts = our_receipts(&demo, dir);
    let mut matched = 0;
    for receipt in &receipts {
        let (pane, episode, action) = slot_parts(receipt["slot"].as_str().unwrap());
        let key = match action.as_str() {
            "approve" => "a",
            "deny" => "d",
            other => panic!("an answer the keys cannot make: {other} in {receipt}"),
        };
        let cause = answers.iter().find(|p| {
            p.key == key
                && p.at_ms <= receipt["at_ms"].as_u64().unwrap_or(0) + 1000
                && p.before.pane.as_ref().map(|(_, p)| p.as_str()) == Some(pane.as_str())
                && !p.before.absent
                && !p.before.changed
                && p.before.episode == Some(episode)
        });
        match cause {
            Some(_) => matched += 1,
            None => {
                let near: Vec<&Press> = answers
                    .iter()
                    .filter(|p| p.before.pane.as_ref().is_some_and(|(_, p)| *p == pane))
                    .collect();
                panic!(
                    "a receipt no answer key on a shown card explains: {receipt}\nthe presses on {pane}: {near:#?}"
                );
            }
        }
    }
    let on_cards = answers
        .iter()
        .filter(|p| p.before.episode.is_some() && !p.before.changed && !p.before.absent)
        .count();
    eprintln!(
        "the TUI under churn: {pressed} key presses, {} answer keys ({on_cards} on a card shown and standing), {sent} answers sent, {} receipts in the ledger, {matched} matched",
        answers.len(),
        receipts.len()
    );
    // Every receipt is an answer the screen sent; the host may refuse one without a receipt in
    // its ledger (its binder saw the pane move on), never the other way round.
    assert!(
        receipts.len() as u64 <= sent,
        "{} receipts for {sent} answers sent",
        receipts.len()
    );
    if let Some(screen) = changed_screen {
        let file = Path::new(env!("CARGO_TARGET_TMPDIR")).join("corral-remote-card-changed.txt");
        std::fs::write(&file, &screen).unwrap();
        eprintln!(
            "a card that changed on screen ({}):\n{screen}",
            file.display()
        );
    }
    assert_eq!(matched, receipts.len());
    assert!(
        !receipts.is_empty(),
        "no answer got through in {:?}: the churn proved nothing ({} answer keys)",
        churn_for(),
        answers.len()
    );
}

// The headless mode.

/// A command line sent, and what had been read when it was.
#[derive(Debug)]
struct Sent {
    pane: String,
    action: &'static str,
    /// The episode its binder quotes, when it has one.
    episode: Option<u64>,
    /// The binder was one the client printed on a card line for that pane, read before.
    read: bool,
    /// The last line read about that binder, before it was sent, was a `card_changed` one.
    known_changed: bool,
}

/// What the headless client's lines said so far: per pane, the binders of its card lines in
/// order, and, per pane and binder, whether the last line about it said it stands (a card line)
/// or not (`card_changed`); the panes blocked; how many command lines were refused.
#[derive(Default)]
struct Read {
    cards: HashMap<String, Vec<Value>>,
    changed: HashMap<(String, String), bool>,
    blocked: Vec<String>,
    refused: usize,
}

impl Read {
    /// Takes in what the client printed since the last look.
    fn take(&mut self, remote: &mut Remote) {
        for line in remote.drain(Duration::from_millis(30)) {
            match line["ev"].as_str() {
                Some("card") if line["card"]["binder"].is_object() => {
                    let pane = line["pane"].as_str().unwrap().to_owned();
                    let binder = line["card"]["binder"].clone();
                    self.changed
                        .insert((pane.clone(), binder.to_string()), false);
                    self.cards.entry(pane).or_default().push(binder);
                }
                Some("card_changed") => {
                    let pane = line["pane"].as_str().unwrap().to_owned();
                    self.changed
                        .insert((pane, line["binder"].to_string()), true);
                }
                Some("row") => {
                    let pane = line["row"]["pane"].as_str().unwrap().to_owned();
                    self.blocked.retain(|p| *p != pane);
                    if line["change"] != "removed" && line["row"]["state"] == "blocked" {
                        self.blocked.push(pane);
                    }
                }
                Some("error") => self.refused += 1,
                _ => {}
            }
        }
    }
}

#[test]
fn under_churn_every_headless_receipt_quotes_a_card_line_read() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let demo = Demo::start(dir, 10, 4);
    let mut remote = Remote::start(dir, &demo.host("demo", ""));
    remote.wait(Duration::from_secs(60), "the first snapshot", |l| {
        is(l, "snapshot", "demo") && l["rows"] == 10
    });
    let mut rng = Rng::seeded("the headless client under churn");
    let mut read = Read::default();
    let mut sent: Vec<Sent> = Vec::new();
    let end = Instant::now() + churn_for();
    while Instant::now() < end {
        read.take(&mut remote);
        let pane = if !read.blocked.is_empty() && rng.below(4) > 0 {
            read.blocked[rng.below(read.blocked.len() as u64) as usize].clone()
        } else {
            format!("%{}", rng.below(12))
        };
        let what = *rng.pick(&[
            (6, "card"),
            (5, "latest"),
            (2, "older"),
            (2, "made-up"),
            (1, "none"),
        ]);
        if what == "card" {
            remote.send(&json!({"cmd":"card","host":"demo","pane":pane}).to_string());
            continue;
        }
        let read_binders = read.cards.get(&pane).cloned().unwrap_or_default();
        let binder = match what {
            "latest" => read_binders.last().cloned(),
            "older" => read_binders.first().cloned(),
            "made-up" => Some(json!({"expect_episode_ms": now_ms() - rng.below(5000)})),
            _ => None,
        };
        let action = if rng.below(3) == 0 { "deny" } else { "approve" };
        let mut line = json!({"cmd": action, "host": "demo", "pane": pane});
        if let Some(binder) = &binder {
            line["binder"] = binder.clone();
        }
        sent.push(Sent {
            pane: pane.clone(),
            action,
            episode: binder
                .as_ref()
                .and_then(|b| b["expect_episode_ms"].as_u64()),
            read: binder
                .as_ref()
                .is_some_and(|b| read_binders.contains(b) && what != "made-up"),
            known_changed: binder
                .as_ref()
                .is_some_and(|b| read.changed.get(&(pane.clone(), b.to_string())) == Some(&true)),
        });
        remote.send(&line.to_string());
        std::thread::sleep(Duration::from_millis(rng.below(60)));
    }
    read.take(&mut remote);
    let refused = read.refused;
    let (code, stderr) = remote.quit();
    assert_eq!(code, 0, "{stderr}");

    let receipts = our_receipts(&demo, dir);
    let mut matched = 0;
    for receipt in &receipts {
        let (pane, episode, action) = slot_parts(receipt["slot"].as_str().unwrap());
        let explained = sent.iter().any(|s| {
            s.pane == pane
                && s.action == action
                && s.episode == Some(episode)
                && s.read
                && !s.known_changed
        });
        assert!(
            explained,
            "a receipt no command quoting a card line read explains: {receipt}\nthe commands on {pane}: {:#?}",
            sent.iter().filter(|s| s.pane == pane).collect::<Vec<_>>()
        );
        matched += 1;
    }
    // Every command without a binder, quoting a made-up one, or quoting one known changed was
    // refused with an error line (each such command is one `error` line at least).
    let must_refuse = sent
        .iter()
        .filter(|s| s.episode.is_none() || !s.read || s.known_changed)
        .count();
    assert!(
        refused >= must_refuse,
        "{refused} error lines for {must_refuse} commands that must be refused"
    );
    eprintln!(
        "the headless client under churn: {} answer commands ({must_refuse} that had to be refused, {refused} refused), {} receipts in the ledger, {matched} matched",
        sent.len(),
        receipts.len()
    );
    assert!(
        !receipts.is_empty(),
        "no answer got through: the churn proved nothing"
    );
}

#[test]
fn a_screen_is_read_as_the_churn_test_reads_it() {
    let screen = "\
● demo connected  2 agents: 1 blocked
┌ agents ─┐
│host pane│
└─────────┘
┌ demo %3 claude · work:0.3 · CARD CHANGED ─┐
│CARD CHANGED: the pane is working now. the card changed: read it again (Enter)│
│card of episode 1763780412000 · request req-7│
│Permission · lane hook · dialog read exact│
│last answer from here: approve → replied│
└──────┘
demo %3: the card changed: read it again (the pane is working now; Enter reads it)   [keys 42 · sent 3]
↑↓ select  Enter card  a approve";
    let seen = seen(screen);
    assert_eq!(seen.pane, Some(("demo".into(), "%3".into())));
    assert_eq!(seen.episode, Some(1763780412000));
    assert!(seen.card && seen.changed && !seen.absent && !seen.editing);
    assert!(seen.status.ends_with("Enter reads it)"), "{}", seen.status);
    assert_eq!(seen.keys, Some(42));
    assert_eq!(seen.sent, Some(3));
    assert!(!seen.body.contains("last answer"));
    let editing = seen_editing();
    assert!(editing.editing);
    assert_eq!(
        slot_parts("%4:0:approve:req-9"),
        ("%4".into(), 0, "approve".into())
    );
}

fn seen_editing() -> Seen {
    seen("┌ pane ┐\n└──┘\nstatus\nfilter (host=… state=blocked,done agent=…)>")
}
