//! The notifier end to end on a scripted tmux, real tty files, a real command and a real log:
//! every sink in order, dedup across cycles, restarts and the event path, mute, the ring, the
//! progress rollup, reload and shutdown.

use std::path::PathBuf;

use schema::config::NotifyConfig;
use schema::notify::{Completion, Transition};
use schema::{Action, Detail, Outcome, State, TransitionSource, Trigger};
use serde_json::Value;

use super::command::{Launch, Runner};
use super::fire::{Fired, Notify, fire_from_event};
use super::notifier::Notifier;
use super::sinks::Sinks;
use super::terminal;
use crate::fleet::Pane;
use crate::runtime::RuntimeDir;
use crate::testing::{ScriptedTmux, row};

const T0: u64 = 1_763_780_000_000;

struct World {
    dir: tempfile::TempDir,
    runtime: RuntimeDir,
    tmux: ScriptedTmux,
    panes: Vec<Pane>,
}

impl World {
    /// Panes `%1` (claude, idle) and `%2` (codex, idle) in window `@1`, two attached clients,
    /// and a config file's `[notify]` body.
    fn new() -> World {
        let dir = tempfile::tempdir().unwrap();
        let runtime = RuntimeDir::open(&dir.path().join("run")).unwrap();
        let tmux = ScriptedTmux::with_panes(&["%1", "%2"]);
        tmux.attach(&["/dev/pts/1", "/dev/pts/2"]);
        let mut panes = Vec::new();
        for (id, agent) in [("%1", "claude"), ("%2", "codex")] {
            let mut row = row(id, State::Idle);
            row.agent = agent.into();
            row.since_ms = Some(T0);
            row.episode_ms = T0;
            row.locator = format!("work:0.{}", &id[1..]);
            let mut pane = Pane::of_row(row);
            let tty = dir.path().join(format!("tty{}", &id[1..]));
            std::fs::write(&tty, b"").unwrap();
            pane.facts.tty = tty.to_string_lossy().into_owned();
            tmux.set_place(id, &pane.facts.tty, "");
            pane.facts.window_id = "@1".into();
            pane.facts.title = Some("TITLE-CANARY".into());
            panes.push(pane);
        }
        World {
            dir,
            runtime,
            tmux,
            panes,
        }
    }

    fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    /// A `[notify]` config; `{dir}` is the world's dir.
    fn config(&self, text: &str) -> NotifyConfig {
        let text = text.replace("{dir}", self.dir.path().to_str().unwrap());
        toml::from_str(&text).unwrap()
    }

    fn notifier(&self, config: NotifyConfig) -> Notifier {
        Notifier::new(config, self.runtime.clone(), None).with_launch(Launch::Wait)
    }

    /// Changes pane `id`: a new state starts a new episode at `at`.
    fn step(&mut self, id: &str, state: State, at: u64) {
        let pane = self.panes.iter_mut().find(|p| p.row.pane == id).unwrap();
        pane.row.state = state;
        pane.row.since_ms = Some(at);
        pane.row.episode_ms = at;
        pane.row.attention = state == State::Idle;
        pane.row.done = state == State::Idle;
        pane.row.detail = (state == State::Blocked).then_some(Detail::Permission);
    }

    /// Pane `id` moves to `state` at `at`, as a hook stamps it: `@agent_stamped_at` is `stamp`.
    fn stamp(&mut self, id: &str, state: State, at: u64, stamp: Option<u64>) {
        self.step(id, state, at);
        self.pane_mut(id).row.stamped_at_ms = stamp;
    }

    fn pane_mut(&mut self, id: &str) -> &mut Pane {
        self.panes.iter_mut().find(|p| p.row.pane == id).unwrap()
    }

    /// The fleet as a read sees it now: markers from tmux.
    fn read(&self) -> Vec<Pane> {
        self.panes
            .iter()
            .cloned()
            .map(|mut pane| {
                let id = pane.row.pane.clone();
                pane.facts.notified_at = self.tmux.option(&id, "@agent_notified_at");
                pane.facts.context_notified_at =
                    self.tmux.option(&id, "@agent_context_notified_at");
                pane.facts.stall_notified_at = self.tmux.option(&id, "@agent_stall_notified_at");
                pane
            })
            .collect()
    }

    fn cycle(&self, notifier: &mut Notifier, now: u64) -> Vec<(String, Trigger, bool)> {
        notifier
            .cycle(&self.tmux, &self.read(), &self.tmux.clients(), now)
            .into_iter()
            .map(
                |Fired {
                     pane,
                     trigger,
                     muted,
                 }| (pane, trigger, muted),
            )
            .collect()
    }

    fn tty(&self, id: &str) -> Vec<u8> {
        std::fs::read(self.path(&format!("tty{}", &id[1..]))).unwrap()
    }

    fn lines(&self, name: &str) -> Vec<Value> {
        std::fs::read_to_string(self.path(name))
            .unwrap_or_default()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect()
    }
}

const EVERY_SINK: &str = "on = [\"blocked\", \"done\"]\nosc = true\nosc_777 = true\n\
    command = \"cat >> {dir}/payloads; echo \\\"$CORRAL_STATE ${CORRAL_TITLE-none}\\\" >> {dir}/env\"\n\
    log = \"{dir}/logs/notify.log\"\n";

#[test]
fn a_transition_rings_once_on_every_sink_in_order() {
    let mut w = World::new();
    let mut notifier = w.notifier(w.config(EVERY_SINK));
    assert!(
        w.cycle(&mut notifier, T0 + 10).is_empty(),
        "idle, no output"
    );
    w.step("%1", State::Blocked, T0 + 100);
    w.tmux.take_calls();
    assert_eq!(
        w.cycle(&mut notifier, T0 + 4300),
        [("%1".to_owned(), Trigger::Blocked, false)]
    );
    assert_eq!(
        w.tmux.take_calls(),
        ["claim_marker"],
        "one tmux invocation per fire: the claim, which shows the status line"
    );
    assert_eq!(
        w.tmux.messages(),
        [
            (
                "/dev/pts/1".to_owned(),
                "corral: claude blocked (permission) at work:0.1".to_owned()
            ),
            (
                "/dev/pts/2".to_owned(),
                "corral: claude blocked (permission) at work:0.1".to_owned()
            ),
        ],
        "every attached client"
    );
    let mut tty = terminal::bell();
    tty.extend(terminal::osc9("claude blocked"));
    tty.extend(terminal::osc777("claude", "blocked"));
    assert_eq!(w.tty("%1"), tty, "bell, OSC 9, OSC 777, in that order");
    assert!(w.tty("%2").is_empty());
    let payloads = w.lines("payloads");
    assert_eq!(payloads.len(), 1);
    assert_eq!(payloads[0]["schema"], 2);
    assert_eq!(payloads[0]["state"], "blocked");
    assert_eq!(payloads[0]["since_ms"], 4200);
    assert!(
        payloads[0].get("title").is_none(),
        "no title without include_title"
    );
    assert_eq!(
        std::fs::read_to_string(w.path("env")).unwrap(),
        "blocked none\n"
    );
    let log = w.lines("logs/notify.log");
    assert_eq!(log.len(), 1);
    assert_eq!(log[0]["at"], T0 + 4300);
    assert_eq!(log[0]["episode_ms"], T0 + 100);
    assert_eq!(
        w.tmux.option("%1", "@agent_notified_at"),
        Some((T0 + 100).to_string())
    );

    assert!(w.cycle(&mut notifier, T0 + 6000).is_empty(), "exactly once");
    assert!(
        w.tmux.take_calls().is_empty(),
        "an announced episode costs no tmux call: the read shows its marker"
    );
    assert_eq!(w.lines("logs/notify.log").len(), 1);
    assert_eq!(w.tmux.messages().len(), 2);

    w.step("%1", State::Working, T0 + 7000);
    w.step("%1", State::Idle, T0 + 8000);
    assert_eq!(
        w.cycle(&mut notifier, T0 + 9000),
        [("%1".to_owned(), Trigger::Done, false)],
        "a new episode, done"
    );
}

/// The daemon's cycle read asks for neither the tty nor the directory (the dearest fields of
/// a read): the claim prints them, and the fire rings there and names that repository.
#[test]
fn a_fire_rings_at_the_tty_and_names_the_repository_tmux_printed_with_its_claim() {
    let mut w = World::new();
    let repo = w.path("src/api");
    std::fs::create_dir_all(repo.join(".git")).unwrap();
    std::fs::create_dir_all(repo.join("web")).unwrap();
    std::fs::write(repo.join(".git/HEAD"), "ref: refs/heads/feature/x\n").unwrap();
    let at_claim = w.path("tty-at-claim");
    std::fs::write(&at_claim, b"").unwrap();
    let web = repo.join("web");
    w.tmux
        .set_place("%1", at_claim.to_str().unwrap(), web.to_str().unwrap());
    w.tmux.take_calls();
    let mut notifier = w.notifier(w.config(EVERY_SINK));
    w.step("%1", State::Blocked, T0 + 100);
    assert_eq!(w.cycle(&mut notifier, T0 + 200).len(), 1);
    let mut rang = terminal::bell();
    rang.extend(terminal::osc9("claude blocked"));
    rang.extend(terminal::osc777("claude", "blocked"));
    assert_eq!(std::fs::read(&at_claim).unwrap(), rang);
    assert!(w.tty("%1").is_empty(), "not the tty of an older read");
    for line in [&w.lines("payloads")[0], &w.lines("logs/notify.log")[0]] {
        assert_eq!(line["repo"], "api", "{line}");
        assert_eq!(line["branch"], "feature/x", "{line}");
    }
    assert_eq!(w.tmux.take_calls(), ["claim_marker"], "no other call");

    // A claim that printed nothing after its read-back: the pane is read on its own.
    w.tmux.quiet_claims(true);
    w.step("%1", State::Working, T0 + 300);
    w.step("%1", State::Blocked, T0 + 400);
    assert_eq!(w.cycle(&mut notifier, T0 + 500).len(), 1);
    assert_eq!(w.tmux.take_calls(), ["claim_marker", "pane_place"]);
    assert_eq!(
        std::fs::read(&at_claim).unwrap(),
        [&rang[..], &rang[..]].concat()
    );
    assert_eq!(w.lines("payloads")[1]["repo"], "api");
}

#[test]
fn a_restarted_daemon_does_not_ring_an_announced_episode_and_announces_an_unannounced_one() {
    let mut w = World::new();
    w.step("%1", State::Blocked, T0 + 100);
    let mut first = w.notifier(w.config(EVERY_SINK));
    assert_eq!(
        w.cycle(&mut first, T0 + 200),
        [("%1".to_owned(), Trigger::Blocked, false)],
        "found blocked at start: announced once"
    );
    drop(first);
    let mut second = w.notifier(w.config(EVERY_SINK));
    assert!(w.cycle(&mut second, T0 + 300).is_empty());
    assert_eq!(w.lines("logs/notify.log").len(), 1);
}

#[test]
fn a_failed_marker_write_skips_the_fire() {
    let mut w = World::new();
    let mut notifier = w.notifier(w.config(EVERY_SINK));
    w.step("%1", State::Blocked, T0 + 100);
    w.tmux.fail_writes(true);
    assert!(w.cycle(&mut notifier, T0 + 200).is_empty());
    assert!(w.tty("%1").is_empty());
    assert!(w.lines("logs/notify.log").is_empty());
    w.tmux.fail_writes(false);
    assert_eq!(
        w.cycle(&mut notifier, T0 + 300).len(),
        1,
        "fired once the marker took"
    );
}

#[test]
fn a_mute_silences_every_sink_and_an_expired_mute_does_not_ring_what_it_silenced() {
    let mut w = World::new();
    let mut notifier = w.notifier(w.config(EVERY_SINK));
    w.cycle(&mut notifier, T0);
    w.pane_mut("%1").facts.mute_until = Some(T0 + 1000);
    w.step("%1", State::Blocked, T0 + 100);
    assert_eq!(
        w.cycle(&mut notifier, T0 + 200),
        [("%1".to_owned(), Trigger::Blocked, true)],
        "detected and claimed"
    );
    assert!(w.tmux.messages().is_empty());
    assert!(w.tty("%1").is_empty());
    assert!(w.lines("payloads").is_empty());
    assert!(w.lines("logs/notify.log").is_empty());
    assert!(
        w.cycle(&mut notifier, T0 + 2000).is_empty(),
        "the mute expired mid-episode: nothing was queued"
    );
    w.step("%1", State::Blocked, T0 + 3000);
    assert_eq!(
        w.cycle(&mut notifier, T0 + 3100),
        [("%1".to_owned(), Trigger::Blocked, false)],
        "the next episode rings"
    );
    assert_eq!(notifier.ring().transitions.len(), 1, "the ring went on");
}

#[test]
fn context_high_and_stall_fire_through_the_cycle_and_rearm() {
    let mut w = World::new();
    let config = w.config(
        "on = []\nlog = \"{dir}/log\"\n[context_high]\nthreshold = 80\n[stall]\nthreshold_s = 60\n",
    );
    let mut notifier = w.notifier(config);
    w.step("%1", State::Working, T0);
    w.pane_mut("%1").row.context = Some(85);
    assert_eq!(
        w.cycle(&mut notifier, T0 + 1000),
        [("%1".to_owned(), Trigger::ContextHigh, false)]
    );
    assert!(
        w.cycle(&mut notifier, T0 + 2000).is_empty(),
        "held while high"
    );
    assert_eq!(
        w.cycle(&mut notifier, T0 + 60_001),
        [("%1".to_owned(), Trigger::Stall, false)]
    );
    assert!(
        w.cycle(&mut notifier, T0 + 90_000).is_empty(),
        "once per run"
    );
    w.pane_mut("%1").row.context = Some(60);
    assert!(w.cycle(&mut notifier, T0 + 91_000).is_empty());
    assert_eq!(
        w.tmux.option("%1", "@agent_context_notified_at"),
        None,
        "rearmed"
    );
    w.pane_mut("%1").row.context = Some(81);
    assert_eq!(
        w.cycle(&mut notifier, T0 + 92_000),
        [("%1".to_owned(), Trigger::ContextHigh, false)]
    );
    let log = w.lines("log");
    assert_eq!(log[1]["state"], "stall");
    assert_eq!(log[1]["since_ms"], 60_001);
    assert_eq!(log[0]["context_pct"], 85);
}

#[test]
fn the_ring_records_every_transition_and_a_hook_s_once() {
    let mut w = World::new();
    let mut notifier = w.notifier(w.config("on = []\n"));
    w.cycle(&mut notifier, T0);
    assert_eq!(
        notifier.ring().recorded,
        0,
        "the first read is the baseline"
    );
    w.step("%2", State::Working, T0 + 10);
    w.cycle(&mut notifier, T0 + 20);
    notifier.hook(Transition {
        pane: "%2".into(),
        from: Some(State::Working),
        to: Some(State::Blocked),
        at: T0 + 30,
        source: TransitionSource::Hook,
    });
    w.step("%2", State::Blocked, T0 + 30);
    w.cycle(&mut notifier, T0 + 40);
    let ring = notifier.ring();
    let seen: Vec<(&str, Option<State>, Option<State>, &TransitionSource)> = ring
        .transitions
        .iter()
        .map(|t| (t.pane.as_str(), t.from, t.to, &t.source))
        .collect();
    assert_eq!(
        seen,
        [
            (
                "%2",
                Some(State::Idle),
                Some(State::Working),
                &TransitionSource::Poll
            ),
            (
                "%2",
                Some(State::Working),
                Some(State::Blocked),
                &TransitionSource::Hook
            ),
        ],
        "unfired transitions too, and the hook's move is not polled again"
    );
}

#[test]
fn a_hook_s_move_read_by_a_cycle_before_its_report_is_recorded_once_as_the_hook_s() {
    let mut w = World::new();
    let mut notifier = w.notifier(w.config("on = []\n"));
    w.step("%2", State::Working, T0);
    w.cycle(&mut notifier, T0);
    // The hook stamps, a cycle reads the stamp, then the hook's report arrives.
    w.step("%2", State::Blocked, T0 + 10);
    w.cycle(&mut notifier, T0 + 20);
    let report = |at| Transition {
        pane: "%2".into(),
        from: Some(State::Working),
        to: Some(State::Blocked),
        at,
        source: TransitionSource::Hook,
    };
    notifier.hook(report(T0 + 10));
    w.cycle(&mut notifier, T0 + 40);
    let ring = notifier.ring();
    let seen: Vec<(Option<State>, Option<State>, &TransitionSource)> = ring
        .transitions
        .iter()
        .map(|t| (t.from, t.to, &t.source))
        .collect();
    assert_eq!(
        seen,
        [(
            Some(State::Working),
            Some(State::Blocked),
            &TransitionSource::Hook
        )],
        "one move, one transition, whichever path saw it first"
    );
    assert_eq!(ring.recorded, 1);
    // A later move of the same shape that no cycle saw is a new transition.
    w.step("%2", State::Working, T0 + 50);
    w.cycle(&mut notifier, T0 + 60);
    notifier.hook(report(T0 + 70));
    w.step("%2", State::Blocked, T0 + 70);
    w.cycle(&mut notifier, T0 + 80);
    assert_eq!(notifier.ring().recorded, 3);
}

impl World {
    /// Pane `id` as a push's read sees it now.
    fn read_one(&self, id: &str) -> Pane {
        self.read().into_iter().find(|p| p.row.pane == id).unwrap()
    }

    fn pushed(&self, notifier: &mut Notifier, id: &str, now: u64) -> Vec<(String, Trigger)> {
        notifier
            .pushed(&self.tmux, &self.read_one(id), &self.tmux.clients(), now)
            .into_iter()
            .map(|f| (f.pane, f.trigger))
            .collect()
    }
}

/// A move a push and the cycle both see, in either order: one transition (the push's is the
/// hook's) and one fire, on every sink.
#[test]
fn a_move_seen_by_a_push_and_the_cycle_rings_once_and_is_one_transition() {
    for push_first in [true, false] {
        let mut w = World::new();
        let mut notifier = w.notifier(w.config(EVERY_SINK));
        w.step("%1", State::Working, T0);
        w.step("%2", State::Working, T0);
        w.cycle(&mut notifier, T0);
        w.step("%2", State::Blocked, T0 + 10);
        let (by_push, by_cycle) = if push_first {
            let pushed = w.pushed(&mut notifier, "%2", T0 + 20);
            (pushed, w.cycle(&mut notifier, T0 + 30))
        } else {
            let cycled = w.cycle(&mut notifier, T0 + 20);
            (w.pushed(&mut notifier, "%2", T0 + 30), cycled)
        };
        assert_eq!(
            (by_push.len(), by_cycle.len()),
            if push_first { (1, 0) } else { (0, 1) },
            "the read that saw it first fired it: {by_push:?} {by_cycle:?}"
        );
        assert_eq!(w.lines("logs/notify.log").len(), 1);
        assert_eq!(w.lines("payloads").len(), 1);
        w.cycle(&mut notifier, T0 + 40);
        w.pushed(&mut notifier, "%2", T0 + 50);
        assert_eq!(w.lines("logs/notify.log").len(), 1, "once per episode");
        let ring = notifier.ring();
        let seen: Vec<(Option<State>, Option<State>, &TransitionSource, u64)> = ring
            .transitions
            .iter()
            .map(|t| (t.from, t.to, &t.source, t.at))
            .collect();
        assert_eq!(
            seen,
            [(
                Some(State::Working),
                Some(State::Blocked),
                &TransitionSource::Hook,
                T0 + 20
            )],
            "push first: {push_first}: the hook's move, stamped by the read that saw it first"
        );
    }
}

#[test]
fn a_push_before_the_baseline_or_for_an_unknown_pane_does_nothing() {
    let mut w = World::new();
    let mut notifier = w.notifier(w.config(EVERY_SINK));
    w.step("%2", State::Blocked, T0);
    assert!(w.pushed(&mut notifier, "%2", T0 + 1).is_empty());
    assert_eq!(notifier.ring().recorded, 0);
    assert!(
        w.lines("logs/notify.log").is_empty(),
        "nothing fired before the baseline"
    );
    w.cycle(&mut notifier, T0 + 2);
    assert_eq!(
        notifier.ring().recorded,
        0,
        "the first cycle is still the baseline"
    );
    let mut stranger = w.read_one("%2");
    stranger.row.pane = "%9".into();
    assert!(notifier.pushed(&w.tmux, &stranger, &[], T0 + 3).is_empty());
    assert_eq!(
        notifier.ring().recorded,
        0,
        "an appearance is the cycle's to record"
    );
}

#[test]
fn progress_follows_the_window_and_is_cleared_on_reload_off_and_shutdown() {
    let mut w = World::new();
    let on = w.config("on = []\nbell = false\nosc_progress = true\n");
    let mut notifier = w.notifier(on.clone());
    w.cycle(&mut notifier, T0);
    assert!(w.tty("%1").is_empty());
    w.step("%2", State::Working, T0);
    w.cycle(&mut notifier, T0 + 1);
    assert_eq!(w.tty("%2"), terminal::progress(true));
    w.step("%1", State::Working, T0);
    w.cycle(&mut notifier, T0 + 2);
    assert!(
        w.tty("%1").is_empty(),
        "nothing while the window stays working"
    );
    notifier.reload(w.config("on = []\nbell = false\n"));
    assert_eq!(w.tty("%2"), terminal::progress(true));
    assert_eq!(
        w.tty("%1"),
        terminal::progress(false),
        "turned off: cleared, through a pane still working in the window"
    );
    w.cycle(&mut notifier, T0 + 3);
    assert_eq!(
        w.tty("%1"),
        terminal::progress(false),
        "and nothing more while off"
    );
    notifier.reload(on);
    w.cycle(&mut notifier, T0 + 4);
    notifier.shutdown();
    assert!(
        w.tty("%1").ends_with(&terminal::progress(false)),
        "shutdown clears"
    );
}

#[test]
fn the_event_path_fires_only_with_from_event_and_shares_the_daemon_s_marker() {
    let mut w = World::new();
    w.step("%1", State::Blocked, T0 + 100);
    let off = w.config(EVERY_SINK);
    let runner = Runner::new(w.runtime.clone(), &off);
    let clients = w.tmux.clients();
    let notify = |config| Notify {
        sinks: Sinks {
            config,
            tmux: &w.tmux,
            runner: &runner,
            launch: &Launch::Wait,
            log: None,
        },
        runtime: &w.runtime,
        clients: &clients,
    };
    let pane = w.read()[0].clone();
    assert!(fire_from_event(&notify(&off), &pane, T0 + 200).is_empty());
    let on = w.config(&format!(
        "{EVERY_SINK}from_event = true\n[stall]\nthreshold_s = 1\n"
    ));
    let fired = fire_from_event(&notify(&on), &pane, T0 + 200);
    assert_eq!(fired.len(), 1, "blocked only, never stall: {fired:?}");
    assert_eq!(w.lines("payloads").len(), 1);
    let mut daemon = w.notifier(w.config(EVERY_SINK));
    assert!(
        w.cycle(&mut daemon, T0 + 300).is_empty(),
        "the daemon finds the episode announced"
    );
    assert!(fire_from_event(&notify(&on), &w.read()[0], T0 + 400).is_empty());
}

#[test]
fn the_title_reaches_payload_log_and_env_only_with_include_title() {
    let mut w = World::new();
    let mut notifier = w.notifier(w.config(&format!("{EVERY_SINK}include_title = true\n")));
    w.step("%1", State::Blocked, T0 + 100);
    w.cycle(&mut notifier, T0 + 200);
    assert_eq!(w.lines("payloads")[0]["title"], "TITLE-CANARY");
    assert_eq!(w.lines("logs/notify.log")[0]["title"], "TITLE-CANARY");
    assert_eq!(
        std::fs::read_to_string(w.path("env")).unwrap(),
        "blocked TITLE-CANARY\n"
    );
    assert!(!String::from_utf8_lossy(&w.tty("%1")).contains("TITLE"));
    assert!(w.tmux.messages().iter().all(|(_, m)| !m.contains("TITLE")));
}

#[test]
fn a_completion_goes_to_every_sink_with_notify_command() {
    let w = World::new();
    let config = w.config(EVERY_SINK);
    let runner = Runner::new(w.runtime.clone(), &config);
    let log = w.path("logs/notify.log");
    let sinks = Sinks {
        config: &config,
        tmux: &w.tmux,
        runner: &runner,
        launch: &Launch::Wait,
        log: Some(&log),
    };
    let completion = Completion {
        agent: "claude".into(),
        pane: "%1".into(),
        action: Action::parse("run-tests").unwrap(),
        outcome: Outcome::Exited,
        session: "work".into(),
        locator: "work:0.1".into(),
        repo: String::new(),
        branch: String::new(),
    };
    sinks.completion(&w.panes[0].facts.tty, &completion, Some(0), T0);
    assert_eq!(
        w.tmux.messages()[0].1,
        "corral: claude run-tests exited 0 at work:0.1"
    );
    let mut tty = terminal::bell();
    tty.extend(terminal::osc9("claude run-tests exited"));
    tty.extend(terminal::osc777("claude", "run-tests exited"));
    assert_eq!(w.tty("%1"), tty);
    let payload = &w.lines("payloads")[0];
    assert_eq!(payload["action"], "run-tests");
    assert_eq!(payload["exit_code"], 0);
    let line = &w.lines("logs/notify.log")[0];
    assert_eq!(
        (&line["action"], &line["outcome"]),
        (&"run-tests".into(), &"exited".into())
    );
    assert!(line.get("state").is_none());
}

/// The notifier remembers each pane's last stamp as its last read, a cycle's or a push's, showed
/// it: what tells the daemon whether a push's read that started before its cycle's is still the
/// newer view of the pane (`push::Carried::takeable`).
#[test]
fn the_notifier_remembers_the_last_stamp_a_read_showed() {
    let mut w = World::new();
    let mut notifier = w.notifier(w.config(EVERY_SINK));
    w.pane_mut("%2").row.stamped_at_ms = Some(T0);
    assert_eq!(notifier.stamped_at("%2"), None, "nothing read yet");
    w.cycle(&mut notifier, T0);
    assert_eq!(notifier.stamped_at("%2"), Some(T0));
    assert_eq!(notifier.stamped_at("%1"), None, "never stamped");
    w.stamp("%2", State::Blocked, T0 + 10, Some(T0 + 10));
    w.pushed(&mut notifier, "%2", T0 + 20);
    assert_eq!(notifier.stamped_at("%2"), Some(T0 + 10), "the push's read");
    assert_eq!(notifier.stamped_at("%9"), None, "no such pane");
}

/// The daemon's cycle reads on a thread while its loop takes pushes: a cycle's read that began
/// before a push's and is applied after it shows the pane as it was. The pane keeps the push's
/// later reading (its stamp is later): no move backwards and forwards again in the ring, no
/// rearm of the marker the push claimed, and so one ring for the episode.
#[test]
fn a_cycle_read_overtaken_by_a_push_keeps_the_push_s_reading_and_rings_once() {
    let mut w = World::new();
    let mut notifier = w.notifier(w.config(EVERY_SINK));
    w.stamp("%2", State::Working, T0, Some(T0));
    w.cycle(&mut notifier, T0);
    let began_before = w.read();
    w.stamp("%2", State::Blocked, T0 + 10, Some(T0 + 10));
    assert_eq!(w.pushed(&mut notifier, "%2", T0 + 20).len(), 1);
    let fired = notifier.cycle(&w.tmux, &began_before, &w.tmux.clients(), T0 + 30);
    assert!(fired.is_empty(), "{fired:?}");
    assert!(
        w.tmux.option("%2", "@agent_notified_at").is_some(),
        "the push's claim is not rearmed by the older read"
    );
    assert_eq!(notifier.stamped_at("%2"), Some(T0 + 10));
    assert!(w.cycle(&mut notifier, T0 + 40).is_empty());
    assert_eq!(
        w.lines("logs/notify.log").len(),
        1,
        "one ring for the episode"
    );
    let moves: Vec<(Option<State>, Option<State>)> = notifier
        .ring()
        .transitions
        .iter()
        .map(|t| (t.from, t.to))
        .collect();
    assert_eq!(moves, [(Some(State::Working), Some(State::Blocked))]);
    // A pane the push did not read is the cycle's as ever.
    w.step("%1", State::Blocked, T0 + 50);
    assert_eq!(w.cycle(&mut notifier, T0 + 60).len(), 1);
}

/// Only a later stamp overtakes: a read that shows none (something unset `@agent_stamped_at`
/// and left the pane an agent's) proves nothing and is the cycle's as ever, or the pane would
/// keep its last stamped reading for good.
#[test]
fn a_cycle_read_with_no_stamp_is_not_overtaken() {
    let mut w = World::new();
    let mut notifier = w.notifier(w.config(EVERY_SINK));
    w.stamp("%2", State::Working, T0, Some(T0));
    w.cycle(&mut notifier, T0);
    w.stamp("%2", State::Blocked, T0 + 10, None);
    assert_eq!(w.cycle(&mut notifier, T0 + 20).len(), 1, "the move rings");
    assert_eq!(notifier.stamped_at("%2"), None, "the read was taken");
}
