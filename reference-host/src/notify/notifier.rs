//! One daemon cycle over one read of the fleet: the transitions it observed go into the ring, the
//! progress rollup writes its edges, and every pane is evaluated, claimed and fired
//! (`notify_pane`). A push brings one pane's read forward, through the same ring and fires. The
//! notifier keeps the config, the previous read, the ring and the rollup; everything else it
//! decides comes from the panes' markers.

use std::borrow::Cow;
use std::path::PathBuf;

use schema::config::NotifyConfig;
use schema::notify::Transition;
use schema::{FleetRow, TransitionRing, TransitionSource};

use super::NotifyTmux;
use super::command::{Launch, Runner};
use super::fire::{Fired, Notify, notify_pane};
use super::progress::{ProgressWrite, Rollup};
use super::ring::{self, Ring};
use super::sinks::{self, Sinks};
use super::terminal;
use super::trigger::Triggers;
use crate::fleet::Pane;
use crate::git::GitCache;
use crate::runtime::RuntimeDir;

/// The daemon's notification state.
#[derive(Debug)]
pub struct Notifier {
    config: NotifyConfig,
    home: Option<PathBuf>,
    runtime: RuntimeDir,
    runner: Runner,
    launch: Launch,
    previous: Option<Vec<FleetRow>>,
    ring: Ring,
    rollup: Rollup,
    /// Repository facts of the panes that fire, kept across cycles and revalidated each one.
    git: GitCache,
}

impl Notifier {
    /// A notifier for `config`, with its files in `runtime`; `home` expands `~` in the log path.
    /// Commands run in the background of this process.
    pub fn new(config: NotifyConfig, runtime: RuntimeDir, home: Option<PathBuf>) -> Notifier {
        Notifier {
            runner: Runner::new(runtime.clone(), &config),
            config,
            home,
            runtime,
            launch: Launch::Background,
            previous: None,
            ring: Ring::default(),
            rollup: Rollup::default(),
            git: GitCache::default(),
        }
    }

    /// The same notifier, launching commands as `launch` says (tests wait for them).
    #[cfg(test)]
    pub fn with_launch(mut self, launch: Launch) -> Notifier {
        self.launch = launch;
        self
    }

    /// One cycle over `panes`, read at `now` with `clients` attached: what fired.
    ///
    /// The daemon reads the fleet on a thread of its own while its loop goes on taking pushes,
    /// so a push can read a pane after this read began and be taken first. Such a pane is
    /// overtaken: the last read remembered of it shows a later `@agent_stamped_at` than this read
    /// does (stamps only grow; `push::overtaken`). It keeps that later reading, in the ring's view and in the
    /// progress rollup, and is not evaluated: its older row would record the move backwards (and
    /// forwards again at the next cycle: a transition twice) and rearm the marker the push just
    /// claimed (a second ring for one episode). The next cycle reads it again.
    pub fn cycle<T: NotifyTmux>(
        &mut self,
        tmux: &T,
        panes: &[Pane],
        clients: &[String],
        now: u64,
    ) -> Vec<Fired> {
        let (panes, overtaken) = self.overtaken(panes);
        let rows: Vec<FleetRow> = panes.iter().map(|p| p.row.clone()).collect();
        if let Some(before) = &self.previous {
            for transition in ring::polled(before, &rows, now) {
                self.ring.push(transition);
            }
        }
        self.previous = Some(rows);
        if self.config.osc_progress {
            let writes = self.rollup.update(&panes);
            write_progress(&writes);
        }
        let evaluated = panes
            .iter()
            .filter(|pane| !overtaken.contains(&pane.row.pane));
        self.fire(tmux, evaluated, clients, now)
    }

    /// `panes` with each overtaken one's row replaced by the later one remembered of it (the
    /// read itself, untouched and not copied, when none is: the usual case), and the overtaken
    /// panes' ids, looked up in `push::Later`.
    fn overtaken<'p>(&self, panes: &'p [Pane]) -> (Cow<'p, [Pane]>, Vec<String>) {
        let Some(previous) = self.previous.as_deref() else {
            return (Cow::Borrowed(panes), Vec::new());
        };
        let remembered = crate::push::Later::new(previous);
        let later = |pane: &Pane| remembered.of(&pane.row);
        let overtaken: Vec<String> = panes
            .iter()
            .filter(|pane| later(pane).is_some())
            .map(|pane| pane.row.pane.clone())
            .collect();
        if overtaken.is_empty() {
            return (Cow::Borrowed(panes), overtaken);
        }
        let kept = panes
            .iter()
            .map(|pane| match later(pane) {
                Some(row) => Pane {
                    row: row.clone(),
                    facts: pane.facts.clone(),
                },
                None => pane.clone(),
            })
            .collect();
        (Cow::Owned(kept), overtaken)
    }

    /// Pane `pane`'s `@agent_stamped_at` as the last read of it (a cycle's or a push's) showed
    /// it.
    pub fn stamped_at(&self, pane: &str) -> Option<u64> {
        crate::push::remembered_stamp(self.previous.as_deref(), pane)
    }

    /// A pushed pane, read at `now` with `clients` attached (`crate::push`): its move since the
    /// last read goes into the ring (source `hook`: an agent's hook made the daemon look), and
    /// it is evaluated, claimed and fired as a cycle would. The next cycle does not record the
    /// same move again; when a cycle recorded it first, that record becomes the hook's
    /// ([`Ring::adopt_push`]). Before the baseline, and for a pane the last read did not have
    /// (an appearance is the cycle's to record), nothing happens. Progress is the cycle's.
    pub fn pushed<T: NotifyTmux>(
        &mut self,
        tmux: &T,
        pane: &Pane,
        clients: &[String],
        now: u64,
    ) -> Vec<Fired> {
        let Some(previous) = &mut self.previous else {
            return Vec::new();
        };
        let Some(before) = previous.iter_mut().find(|r| r.pane == pane.row.pane) else {
            return Vec::new();
        };
        let moved = before.state != pane.row.state;
        let from = std::mem::replace(before, pane.row.clone()).state;
        if moved {
            self.ring.push(Transition {
                pane: pane.row.pane.clone(),
                from: Some(from),
                to: Some(pane.row.state),
                at: now,
                source: TransitionSource::Hook,
            });
        } else {
            self.ring
                .adopt_push(&pane.row.pane, pane.row.state, pane.row.since_ms);
        }
        self.fire(tmux, std::slice::from_ref(pane), clients, now)
    }

    /// Evaluates, claims and fires `panes`, read at `now` with `clients` attached.
    fn fire<'p, T: NotifyTmux>(
        &mut self,
        tmux: &T,
        panes: impl IntoIterator<Item = &'p Pane>,
        clients: &[String],
        now: u64,
    ) -> Vec<Fired> {
        let log = sinks::log_path(&self.config, self.home.as_deref());
        let notify = Notify {
            sinks: Sinks {
                config: &self.config,
                tmux,
                runner: &self.runner,
                launch: &self.launch,
                log: log.as_deref(),
            },
            runtime: &self.runtime,
            clients,
        };
        let triggers = Triggers::of(&self.config);
        self.git.next_read();
        let mut fired = Vec::new();
        for pane in panes {
            fired.extend(notify_pane(&notify, &mut self.git, pane, &triggers, now));
        }
        fired
    }

    /// Takes a reloaded config; turning `osc_progress` off clears what it showed.
    pub fn reload(&mut self, config: NotifyConfig) {
        if self.config.osc_progress && !config.osc_progress {
            write_progress(&self.rollup.clear_all());
        }
        self.runner = Runner::new(self.runtime.clone(), &config);
        self.config = config;
    }

    /// Clears the progress shown, before the daemon exits.
    pub fn shutdown(&mut self) {
        write_progress(&self.rollup.clear_all());
    }

    /// Records a transition an agent's event hook reported; the next poll does not record the
    /// same move again. A read that landed between the hook's stamp and its report has already
    /// recorded the move: that record becomes the hook's (`source` hook) and nothing is added,
    /// so one move is one transition whichever path saw it first.
    pub fn hook(&mut self, transition: Transition) {
        if let Some(previous) = &mut self.previous {
            let at = previous.iter().position(|r| r.pane == transition.pane);
            let seen = at.map(|at| previous[at].state);
            if seen == transition.to && self.ring.adopt(&transition) {
                return;
            }
            if let Some(at) = at {
                match transition.to {
                    Some(state) => previous[at].state = state,
                    None => {
                        previous.remove(at);
                    }
                }
            }
        }
        self.ring.push(transition);
    }

    /// The ring, oldest first.
    pub fn ring(&self) -> TransitionRing {
        self.ring.document()
    }
}

fn write_progress(writes: &[ProgressWrite]) {
    for write in writes {
        if let Err(err) = terminal::write_tty(&write.tty, &terminal::progress(write.working)) {
            tracing::warn!(tty = %write.tty, %err, "a progress sequence was not written");
        }
    }
}
