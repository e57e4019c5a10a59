//! Which triggers a pane calls for, as pure logic over one read of it (docs/protocol.md
//! "Triggers", "Trigger arming", "Mute"): the notifier evaluates every pane on every cycle, and
//! the pane's markers, not the notifier's memory, say what was already announced. So a restarted
//! daemon does not ring twice, and a pane that entered `blocked` while no daemon ran is announced
//! once when one starts.
//!
//! | trigger | calls for a fire when | marker, value written | rearms |
//! |---|---|---|---|
//! | `blocked` | state `blocked`, `blocked` in `on` | `@agent_notified_at` = episode | a new episode |
//! | `done` | idle with attention, `done` in `on` | `@agent_notified_at` = episode | a new episode |
//! | `context_high` | `@agent_context` ≥ threshold | `@agent_context_notified_at` = now | unset once below threshold − 10 |
//! | `stall` | `working` for more than `threshold_s` since `@agent_since` | `@agent_stall_notified_at` = `@agent_since` | a new run (a new `@agent_since`) |
//!
//! A muted pane's candidates are claimed all the same (their markers written) but nothing rings:
//! a mute that expires mid-episode finds the episode already taken.

use schema::config::NotifyConfig;
use schema::{PaneOption, State, Trigger};

use crate::fleet::Pane;
use crate::tmux::write::Held;

/// The `context_high` rearm band, in percentage points below the threshold.
pub const REARM_BAND: u8 = 10;

/// What fires, from `[notify]`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Triggers {
    /// `blocked` is in `on`.
    pub blocked: bool,
    /// `done` is in `on`.
    pub done: bool,
    /// `[notify.context_high] threshold`.
    pub context_high: Option<u8>,
    /// `[notify.stall] threshold_s`, in milliseconds.
    pub stall_ms: Option<u64>,
}

impl Triggers {
    /// Every trigger the config turns on (the daemon).
    pub fn of(config: &NotifyConfig) -> Triggers {
        Triggers {
            blocked: config.on.iter().any(|w| w == "blocked"),
            done: config.on.iter().any(|w| w == "done"),
            context_high: config.context_high.as_ref().and_then(|c| c.threshold),
            stall_ms: config
                .stall
                .as_ref()
                .and_then(|s| s.threshold_s)
                .map(|s| s.saturating_mul(1000)),
        }
    }

    /// The triggers an agent's event hook fires with `from_event`: `blocked` and `done` only
    /// (`stall` needs the daemon's clock, `context_high` its telemetry).
    pub fn from_event(config: &NotifyConfig) -> Triggers {
        Triggers {
            context_high: None,
            stall_ms: None,
            ..Triggers::of(config)
        }
    }
}

/// A pane option the notifier writes to remember what it announced.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Marker {
    /// `@agent_notified_at`: the episode a `blocked` or `done` fire announced.
    Notified,
    /// `@agent_context_notified_at`: set while `context_high` holds.
    Context,
    /// `@agent_stall_notified_at`: the run (its `@agent_since`) a `stall` fire announced.
    Stall,
}

impl Marker {
    /// The option.
    pub fn option(self) -> PaneOption {
        match self {
            Marker::Notified => PaneOption::NotifiedAt,
            Marker::Context => PaneOption::ContextNotifiedAt,
            Marker::Stall => PaneOption::StallNotifiedAt,
        }
    }

    /// The marker's value in `pane` as the read saw it.
    pub fn current(self, pane: &Pane) -> Option<&str> {
        match self {
            Marker::Notified => pane.facts.notified_at.as_deref(),
            Marker::Context => pane.facts.context_notified_at.as_deref(),
            Marker::Stall => pane.facts.stall_notified_at.as_deref(),
        }
    }

    /// True when a marker holding `current` already announced what `value` would: the same
    /// episode or run; for `context_high`, any value (it holds until rearmed).
    pub fn taken(self, current: Option<&str>, value: &str) -> bool {
        match self.held() {
            Held::WhileEqual => current == Some(value),
            Held::WhileSet => current.is_some_and(|c| !c.is_empty()),
        }
    }

    /// The same rule as [`Marker::taken`], as tmux tests it in a claim.
    pub fn held(self) -> Held {
        match self {
            Marker::Notified | Marker::Stall => Held::WhileEqual,
            Marker::Context => Held::WhileSet,
        }
    }
}

/// A fire a pane calls for: the trigger, and the marker value that claims it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Candidate {
    /// The trigger word.
    pub trigger: Trigger,
    /// The marker that dedups it.
    pub marker: Marker,
    /// What the marker is set to when the fire is claimed.
    pub value: String,
}

/// What one pane calls for on one read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Step {
    /// Claim the marker, then fire (unless muted).
    Fire(Candidate),
    /// Unset the marker: the trigger is armed again.
    Rearm(Marker),
}

/// Whether the pane is muted at `now`.
pub fn muted(pane: &Pane, now: u64) -> bool {
    pane.facts.mute_until.is_some_and(|until| until > now)
}

/// The steps `pane` calls for at `now`, in trigger order (blocked, done, context_high, stall).
pub fn evaluate(pane: &Pane, triggers: &Triggers, now: u64) -> Vec<Step> {
    let row = &pane.row;
    let mut steps = Vec::new();
    let mut candidate = |trigger: Trigger, marker: Marker, value: String| {
        if !marker.taken(marker.current(pane), &value) {
            steps.push(Step::Fire(Candidate {
                trigger,
                marker,
                value,
            }));
        }
    };
    let episode = row.episode_ms.to_string();
    if triggers.blocked && row.state == State::Blocked {
        candidate(Trigger::Blocked, Marker::Notified, episode.clone());
    }
    if triggers.done && row.done {
        candidate(Trigger::Done, Marker::Notified, episode);
    }
    if let (Some(threshold), Some(pct)) = (triggers.context_high, row.context)
        && pct >= threshold
    {
        candidate(Trigger::ContextHigh, Marker::Context, now.to_string());
    }
    if let (Some(limit), Some(since), State::Working) = (triggers.stall_ms, row.since_ms, row.state)
        && now.saturating_sub(since) > limit
    {
        candidate(Trigger::Stall, Marker::Stall, since.to_string());
    }
    // A gauge that dipped below the band rearms; no gauge at all (no telemetry) leaves the
    // marker alone.
    if let (Some(threshold), Some(pct)) = (triggers.context_high, row.context)
        && pct < threshold.saturating_sub(REARM_BAND)
        && Marker::Context.current(pane).is_some()
    {
        steps.push(Step::Rearm(Marker::Context));
    }
    steps
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::row;

    const NOW: u64 = 1_000_000;

    fn all() -> Triggers {
        Triggers {
            blocked: true,
            done: true,
            context_high: Some(80),
            stall_ms: Some(60_000),
        }
    }

    fn pane(state: State) -> Pane {
        let mut row = row("%1", state);
        row.episode_ms = 900_000;
        row.since_ms = Some(900_000);
        Pane::of_row(row)
    }

    fn fires(pane: &Pane, triggers: &Triggers) -> Vec<(Trigger, Marker, String)> {
        evaluate(pane, triggers, NOW)
            .into_iter()
            .filter_map(|step| match step {
                Step::Fire(c) => Some((c.trigger, c.marker, c.value)),
                Step::Rearm(_) => None,
            })
            .collect()
    }

    #[test]
    fn blocked_fires_once_per_episode() {
        let mut pane = pane(State::Blocked);
        assert_eq!(
            fires(&pane, &all()),
            [(Trigger::Blocked, Marker::Notified, "900000".to_owned())]
        );
        pane.facts.notified_at = Some("900000".into());
        assert!(fires(&pane, &all()).is_empty(), "the episode was announced");
        pane.row.episode_ms = 950_000;
        assert_eq!(fires(&pane, &all()).len(), 1, "a new episode fires again");
    }

    #[test]
    fn on_selects_blocked_and_done() {
        let blocked = pane(State::Blocked);
        let mut done = pane(State::Idle);
        done.row.attention = true;
        done.row.done = true;
        let only_done = Triggers {
            blocked: false,
            ..all()
        };
        assert!(fires(&blocked, &only_done).is_empty());
        assert_eq!(fires(&done, &only_done)[0].0, Trigger::Done);
        let only_blocked = Triggers {
            done: false,
            ..all()
        };
        assert!(fires(&done, &only_blocked).is_empty());
        let mut idle = pane(State::Idle);
        idle.row.attention = false;
        assert!(
            fires(&idle, &all()).is_empty(),
            "idle without output is not done"
        );
    }

    #[test]
    fn context_high_fires_on_crossing_holds_and_rearms_below_the_band() {
        let mut pane = pane(State::Working);
        pane.row.since_ms = Some(NOW);
        pane.row.context = Some(79);
        assert!(evaluate(&pane, &all(), NOW).is_empty());
        pane.row.context = Some(80);
        assert_eq!(
            fires(&pane, &all()),
            [(Trigger::ContextHigh, Marker::Context, NOW.to_string())]
        );
        pane.facts.context_notified_at = Some("5".into());
        pane.row.context = Some(95);
        assert!(
            evaluate(&pane, &all(), NOW).is_empty(),
            "no re-ring while high"
        );
        pane.row.context = Some(70);
        assert!(
            evaluate(&pane, &all(), NOW).is_empty(),
            "70 is inside the band"
        );
        pane.row.context = Some(69);
        assert_eq!(evaluate(&pane, &all(), NOW), [Step::Rearm(Marker::Context)]);
        pane.facts.context_notified_at = None;
        assert!(evaluate(&pane, &all(), NOW).is_empty(), "armed, and low");
    }

    #[test]
    fn context_high_is_silent_without_telemetry_or_threshold() {
        let mut pane = pane(State::Working);
        pane.row.since_ms = Some(NOW);
        pane.row.context = None;
        pane.facts.context_notified_at = Some("5".into());
        assert!(evaluate(&pane, &all(), NOW).is_empty());
        pane.row.context = Some(99);
        pane.facts.context_notified_at = None;
        let no_threshold = Triggers {
            context_high: None,
            ..all()
        };
        assert!(evaluate(&pane, &no_threshold, NOW).is_empty());
    }

    #[test]
    fn stall_fires_once_per_run_after_the_threshold() {
        let mut pane = pane(State::Working);
        pane.row.since_ms = Some(NOW - 60_000);
        assert!(
            fires(&pane, &all()).is_empty(),
            "not longer than the threshold"
        );
        pane.row.since_ms = Some(NOW - 60_001);
        assert_eq!(
            fires(&pane, &all()),
            [(Trigger::Stall, Marker::Stall, (NOW - 60_001).to_string())]
        );
        pane.facts.stall_notified_at = Some((NOW - 60_001).to_string());
        assert!(fires(&pane, &all()).is_empty(), "once per run");
        pane.row.since_ms = Some(NOW - 10);
        assert!(
            fires(&pane, &all()).is_empty(),
            "a new run starts from zero"
        );
        pane.row.since_ms = Some(NOW - 70_000);
        assert_eq!(fires(&pane, &all()).len(), 1, "and stalls on its own");
        pane.row.state = State::Blocked;
        assert!(
            fires(&pane, &all()).iter().all(|f| f.0 != Trigger::Stall),
            "only working stalls"
        );
    }

    #[test]
    fn the_event_path_fires_blocked_and_done_only() {
        let config: NotifyConfig = toml::from_str(
            "on = [\"blocked\", \"done\"]\n[context_high]\nthreshold = 5\n[stall]\nthreshold_s = 1\n",
        )
        .unwrap();
        let t = Triggers::from_event(&config);
        assert!(t.blocked && t.done);
        assert_eq!((t.context_high, t.stall_ms), (None, None));
        assert_eq!(Triggers::of(&config).stall_ms, Some(1000));
        assert!(!Triggers::of(&NotifyConfig::default()).done);
    }

    #[test]
    fn a_mute_is_a_deadline_in_the_future() {
        let mut pane = pane(State::Blocked);
        assert!(!muted(&pane, NOW));
        pane.facts.mute_until = Some(NOW + 1);
        assert!(muted(&pane, NOW));
        pane.facts.mute_until = Some(NOW);
        assert!(!muted(&pane, NOW), "an expired mute is no mute");
    }
}
