//! One pane's fires: the triggers it calls for, each claimed through its marker and delivered to
//! the sinks; what the notifier's cycle and the daemonless path (`corral event` with
//! `notify.from_event`) share, so one episode rings once whichever path sees it first.

use schema::Trigger;

use super::NotifyTmux;
use super::command::Launch;
use super::markers::{self, Claim, Status};
use super::payload;
use super::sinks::Sinks;
use super::trigger::{self, Step, Triggers};
use crate::fleet::Pane;
use crate::git::GitCache;
use crate::runtime::RuntimeDir;
use crate::tmux::write::PanePlace;

/// Everything a fire needs besides the pane.
#[derive(Debug)]
pub struct Notify<'a, T> {
    /// The sinks (and through them the config and tmux).
    pub sinks: Sinks<'a, T>,
    /// The runtime dir: the marker lock.
    pub runtime: &'a RuntimeDir,
    /// The clients attached at the fleet read this fire comes from: its status-line message
    /// goes to them with its claim.
    pub clients: &'a [String],
}

/// A fire that was claimed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fired {
    /// The pane.
    pub pane: String,
    /// The trigger.
    pub trigger: Trigger,
    /// True when the pane was muted: the episode was claimed and nothing rang.
    pub muted: bool,
}

/// Claims and delivers what `pane` calls for under `triggers` at `now`; rearms what dipped. A
/// fire's repository comes from `git`, the cycle's cache (one `HEAD` stat per repository per
/// cycle, as the fleet read's).
///
/// A fire costs one tmux invocation before its command starts: the claim, which shows the
/// status-line message (sink 1) in the same invocation once it is won and prints the pane's tty
/// and directory; the other sinks follow, at that tty, with the repository of that directory.
pub fn notify_pane<T: NotifyTmux>(
    notify: &Notify<'_, T>,
    git: &mut GitCache,
    pane: &Pane,
    triggers: &Triggers,
    now: u64,
) -> Vec<Fired> {
    let tmux = notify.sinks.tmux;
    let id = pane.row.pane.as_str();
    let muted = trigger::muted(pane, now);
    let mut fired = Vec::new();
    for step in trigger::evaluate(pane, triggers, now) {
        let candidate = match step {
            Step::Rearm(marker) => {
                markers::rearm(tmux, id, marker);
                continue;
            }
            Step::Fire(candidate) => candidate,
        };
        // A muted pane's claim rings nothing, its status line included.
        let include_title = notify.sinks.config.include_title;
        let mut fire =
            (!muted).then(|| payload::fire(pane, candidate.trigger.clone(), now, include_title));
        let message = fire.as_ref().map(payload::status_text);
        let status = Status {
            clients: notify.clients,
            message: message.as_deref(),
        };
        let value = &candidate.value;
        let at = match markers::claim(tmux, notify.runtime, id, candidate.marker, value, &status) {
            Claim::Claimed(at) => at,
            Claim::Taken => continue,
            Claim::Failed(why) => {
                tracing::warn!(pane = %id, trigger = %candidate.trigger, %why, "not firing: the marker was not claimed");
                continue;
            }
        };
        match &mut fire {
            None => {
                tracing::info!(pane = %id, trigger = %candidate.trigger, "muted: claimed without ringing");
            }
            Some(fire) => {
                let place = place_of(tmux, id, at);
                if !place.current_path.is_empty() {
                    let repo = git.facts(&place.current_path);
                    fire.repo = repo.repo.unwrap_or_default();
                    fire.branch = repo.branch.unwrap_or_default();
                }
                let tty = if place.tty.is_empty() {
                    &pane.facts.tty
                } else {
                    &place.tty
                };
                notify.sinks.after_claim(tty, fire, now);
                tracing::info!(pane = %id, trigger = %candidate.trigger, "fired");
            }
        }
        fired.push(Fired {
            pane: id.to_owned(),
            trigger: candidate.trigger,
            muted,
        });
    }
    fired
}

/// Where a won claim's fire rings and which repository it names: the pane as tmux printed it
/// with the claim; when the claim printed nothing after its read-back (a command of its sequence
/// failed), the pane read on its own; when that fails too, nothing (the caller falls back to its
/// fleet read's tty).
fn place_of<T: NotifyTmux>(tmux: &T, pane: &str, claimed: PanePlace) -> PanePlace {
    if claimed != PanePlace::default() {
        return claimed;
    }
    match tmux.pane_place(pane) {
        Ok(place) => place.unwrap_or_default(),
        Err(err) => {
            tracing::warn!(%pane, %err, "the pane's tty and directory could not be read");
            PanePlace::default()
        }
    }
}

/// The daemonless path: `corral event`, right after stamping `pane` (read afresh), fires
/// `blocked` or `done` itself when `notify.from_event` is on, through the same marker claim and
/// sinks as the daemon, so one episode rings once whichever path sees it first. Nothing happens
/// with `from_event` off. The command must not hold the hook: pass
/// [`Launch::Supervised`] in `notify.sinks.launch`.
pub fn fire_from_event<T: NotifyTmux>(notify: &Notify<'_, T>, pane: &Pane, now: u64) -> Vec<Fired> {
    if !notify.sinks.config.from_event {
        return Vec::new();
    }
    let triggers = Triggers::from_event(notify.sinks.config);
    notify_pane(notify, &mut GitCache::default(), pane, &triggers, now)
}

/// How a short-lived `corral` process (an agent's event hook) launches a notification command:
/// through a supervisor made of this very binary.
pub fn supervised_launch() -> std::io::Result<Launch> {
    Ok(Launch::Supervised {
        exe: std::env::current_exe()?,
    })
}
