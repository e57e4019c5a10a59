//! `corral daemon`: the notification daemon of one tmux server, in the foreground, logging to
//! stderr.
//!
//! Start-up, in order: the config (broken: exit 1), the runtime dir, the server's identity, the
//! daemon lock of that server (held: refused, exit 1, saying so), the socket (bound under a
//! staging name), the baseline read, and only then the socket under its real name: a daemon
//! whose socket is there is watching. Then one event loop
//! over a closed set of events: a cycle tick (one read of the whole fleet, on a thread of its own
//! so the loop goes on meanwhile), that read's answer (the notifier's cycle), SIGHUP (reload the
//! config; a broken one keeps the old and says why), a socket request (the ring, a hook's
//! transition), a push (`crate::push`: the pushed panes read on their own, then the notifier's
//! view of each), SIGTERM or SIGINT (clear progress, exit 0).
//!
//! The fleet read is off the loop because it is the loop's longest wait (tens of milliseconds
//! at 1000 panes, seconds on a hung tmux): a hook's push that came during it used to wait for it,
//! and for the fires of the whole fleet after it, before its own fire. Now a push is taken at
//! once; the cycle's answer, applied later, leaves alone a pane that a push read after it
//! (`Notifier::cycle`). One read is in flight at a time.

use std::path::PathBuf;
use std::time::Duration;

use anyhow::Context;
use schema::Config;
use tokio::signal::unix::{SignalKind, signal};

use super::notifier::Notifier;
use super::server::{self, Server};
use super::socket::{self, Request};
use crate::clock::now_ms;
use crate::files;
use crate::fleet::Pane;
use crate::fleet::{FleetReader, FleetSource};
use crate::offloop::OffLoop;
use crate::paths::Paths;
use crate::push::{self, Listener, Pushed, PushedPane};
use crate::runtime::RuntimeDir;
use crate::tmux::Tmux;
use crate::tmux::read::{Fields, Titles};

/// What `corral daemon` needs.
#[derive(Debug, Clone)]
pub struct DaemonOptions {
    /// How to reach tmux.
    pub tmux: Tmux,
    /// Where the host's files are.
    pub paths: Paths,
    /// This host's name.
    pub host: String,
    /// How long one tmux invocation may take (`--tmux-timeout-ms`); `None`: the cycle, clamped
    /// to 1 to 5 s.
    pub tmux_timeout: Option<Duration>,
}

/// One thing the loop handles.
#[derive(Debug)]
enum Event {
    /// Time for a cycle.
    Tick,
    /// A cycle's read of the fleet answered.
    Read,
    /// SIGHUP.
    Reload,
    /// Something asked on the socket.
    Asked(Request),
    /// An agent's hook said these panes moved (`crate::push`).
    Pushed(Pushed),
    /// SIGTERM or SIGINT.
    Shutdown,
}

/// Runs the daemon until a signal stops it; its exit code.
pub fn run(options: DaemonOptions) -> anyhow::Result<u8> {
    let config = crate::config::load(&options.paths.config_file)?;
    let runtime = RuntimeDir::open(&options.paths.runtime_dir)?;
    let server = server::identify(&options.tmux);
    let lock_path = runtime.daemon_lock(&server.key);
    if let Some(dir) = lock_path.parent() {
        files::create_private_dir(dir).with_context(|| format!("{}", dir.display()))?;
    }
    let Some(_lock) = files::try_lock(&lock_path)
        .with_context(|| format!("the daemon lock {}", lock_path.display()))?
    else {
        anyhow::bail!(
            "a notification daemon already runs for the tmux server {}",
            server.socket_path
        );
    };
    // The socket is bound now, under a staging name, so a failure to make it is said before any
    // cycle runs; it takes its real name after the baseline read.
    let socket_path = runtime.daemon_socket(&server.key);
    let staging = socket_path.with_extension(format!("sock.{}", std::process::id()));
    let listener = socket::bind(&staging)
        .with_context(|| format!("the daemon socket {}", staging.display()))?;
    let home = std::env::var_os("HOME").map(PathBuf::from);
    let push_dir = runtime.push_dir(&server.key);
    let daemon = Daemon {
        reader: Some(reader(&options, &config)),
        push_reader: reader(&options, &config),
        reloaded: None,
        reads: OffLoop::inline(),
        notifier: Notifier::new(config.notify.clone(), runtime, home),
        push_dir,
        cycle_started_ms: 0,
        interval: interval(&config),
        options,
        server,
    };
    let code = daemon.run(listener, &staging, &socket_path);
    let _ = std::fs::remove_file(&staging);
    let _ = std::fs::remove_file(&socket_path);
    code
}

/// Whether `event` has already happened: polled once, never waited for.
async fn pending(event: impl Future) -> bool {
    tokio::select! {
        biased;
        _ = event => true,
        () = std::future::ready(()) => false,
    }
}

struct Daemon {
    options: DaemonOptions,
    server: Server,
    /// The cycle's reader; away on the reading thread while a read is in flight.
    reader: Option<FleetReader>,
    /// The reader of pushed panes, on the loop: a carried read, or one pane read on its own.
    push_reader: FleetReader,
    /// The reloaded config's cycle reader, while the old one is away on a read: that read began
    /// before the reload, and is not applied.
    reloaded: Option<FleetReader>,
    /// The cycle's reads, one at a time on a thread of their own (`crate::offloop`): a read of
    /// the whole fleet is asked for again as soon as the one in flight answers when a push that
    /// named too many panes came during it, or the config changed under it.
    reads: OffLoop<(), Box<CycleAnswer>>,
    notifier: Notifier,
    interval: Duration,
    /// Where its push socket goes (`<runtime>/push/<key>/`).
    push_dir: PathBuf,
    /// When the read of the last cycle applied started, epoch ms: a read a push carried that
    /// started earlier is not taken.
    cycle_started_ms: u64,
}

/// Reads the whole fleet with the cycle's `reader`, and hands the reader back with the answer.
fn read_fleet(mut reader: FleetReader) -> Box<CycleAnswer> {
    let started_ms = now_ms();
    let panes = reader.panes();
    Box::new(CycleAnswer {
        reader,
        started_ms,
        panes,
    })
}

/// A cycle's read, answered on its thread: the reader back, and what it read.
#[derive(Debug)]
struct CycleAnswer {
    reader: FleetReader,
    /// When the read started, epoch ms.
    started_ms: u64,
    panes: Result<Vec<Pane>, crate::tmux::TmuxError>,
}

/// The next push, whenever it comes; never, without a socket.
async fn next_push(listener: Option<&Listener>) -> Pushed {
    match listener {
        Some(listener) => listener.inbox().next().await,
        None => std::future::pending().await,
    }
}

fn interval(config: &Config) -> Duration {
    Duration::from_millis(config.serve.reconcile_interval_ms)
}

/// The fleet reader for `config`: titles only with `include_title`, and a tmux that cannot hold
/// a cycle much longer than the cycle itself, unless `--tmux-timeout-ms` said how long.
fn reader(options: &DaemonOptions, config: &Config) -> FleetReader {
    let timeout = options
        .tmux_timeout
        .unwrap_or_else(|| interval(config).clamp(Duration::from_secs(1), Duration::from_secs(5)));
    let tmux = options.tmux.clone().with_timeout(timeout);
    let titles = if config.notify.include_title {
        Titles::Include
    } else {
        Titles::Omit
    };
    FleetReader::new(tmux, options.host.clone())
        .with_fields(Fields::Notify {
            progress: config.notify.osc_progress,
        })
        .with_titles(titles)
        .with_clients()
}

/// When the cycle after one due at `due` runs: one interval later, so a cycle's own length does
/// not stretch the period; after a stall that already passed it, one interval from `now`.
fn next_cycle<I>(due: I, interval: Duration, now: I) -> I
where
    I: Copy + PartialOrd + std::ops::Add<Duration, Output = I>,
{
    let next = due + interval;
    if next <= now { now + interval } else { next }
}

impl Daemon {
    /// Takes the baseline read, then gives the socket bound at `staging` its name `socket_path`
    /// (so a daemon whose socket is there has read the fleet once) and cycles until a signal
    /// ends it.
    fn run(
        mut self,
        listener: std::os::unix::net::UnixListener,
        staging: &std::path::Path,
        socket_path: &std::path::Path,
    ) -> anyhow::Result<u8> {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()?;
        let code = runtime.block_on(async move {
            let mut term = signal(SignalKind::terminate())?;
            let mut interrupt = signal(SignalKind::interrupt())?;
            let mut hangup = signal(SignalKind::hangup())?;
            // The baseline, read on the loop: nothing else is heard before it.
            if let Some(reader) = self.start_read() {
                self.apply(read_fleet(reader));
            }
            self.reads.on_threads();
            let mut next = tokio::time::Instant::now() + self.interval;
            // Pushes are heard from the baseline on, and before the socket takes its name: a
            // daemon whose socket is there hears a hook's push.
            let pushes = match Listener::bind(&self.push_dir, &self.server.socket_path, "daemon") {
                Ok(pushes) => Some(pushes),
                Err(err) => {
                    tracing::warn!(dir = %self.push_dir.display(), %err, "no push socket: fires wait for the cycle");
                    None
                }
            };
            std::fs::rename(staging, socket_path)
                .with_context(|| format!("the daemon socket {}", socket_path.display()))?;
            tracing::info!(server = %self.server.socket_path, socket = %socket_path.display(), "notification daemon started");
            let (ask, mut asked) = tokio::sync::mpsc::channel(16);
            socket::serve(listener, ask);
            loop {
                // Signals first, then the socket, then the tick: never at random.
                let event = tokio::select! {
                    biased;
                    _ = term.recv() => Event::Shutdown,
                    _ = interrupt.recv() => Event::Shutdown,
                    _ = hangup.recv() => Event::Reload,
                    Some(request) = asked.recv() => Event::Asked(request),
                    pushed = next_push(pushes.as_ref()) => Event::Pushed(pushed),
                    () = self.reads.answered() => Event::Read,
                    () = tokio::time::sleep_until(next) => Event::Tick,
                };
                match event {
                    Event::Tick => {
                        // A SIGHUP that arrived while the loop was busy or stopped may not have
                        // reached `hangup` yet when the tick is due: the runtime sees a signal
                        // only once it has looked at its I/O. Yielding lets it look (tokio does
                        // not promise it in general; its current-thread runtime resumes a
                        // yielded task after a turn of its driver, and
                        // a_reload_pending_when_a_cycle_is_due_is_handled_first fails if that
                        // changes), so the cycle after a SIGHUP runs on the reloaded config.
                        // The signal's handler has run by then because it ran on this thread:
                        // every other thread blocks SIGHUP (`crate::threads`), so after a SIGCONT
                        // no helper thread can take it and write the pipe only after this look.
                        tokio::task::yield_now().await;
                        if pending(hangup.recv()).await {
                            self.reload();
                        }
                        self.cycle();
                        next = next_cycle(next, self.interval, tokio::time::Instant::now());
                    }
                    Event::Read => {
                        // A read that panicked panics here, on the loop: the daemon dies loudly
                        // instead of skipping every tick after it for a read that never ends.
                        if let Some(((), answer)) = self.reads.take() {
                            self.apply(answer);
                        }
                        if self.reads.take_again() {
                            self.cycle();
                        }
                    }
                    Event::Reload => self.reload(),
                    Event::Asked(Request::Ring(reply)) => {
                        let ring = serde_json::to_string(&self.notifier.ring())
                            .expect("a ring always encodes");
                        let _ = reply.send(ring);
                    }
                    Event::Asked(Request::Hook(transition)) => self.notifier.hook(transition),
                    Event::Pushed(pushed) => self.pushed(pushed),
                    Event::Shutdown => {
                        // A read in flight ends within the reader's tmux time-out; waiting for
                        // it leaves no tmux client running after the daemon.
                        self.reads.end();
                        self.notifier.shutdown();
                        tracing::info!("notification daemon stopped");
                        return Ok::<u8, anyhow::Error>(0);
                    }
                }
            }
        })?;
        runtime.shutdown_background();
        Ok(code)
    }

    /// Starts a cycle: one read of the whole fleet on a thread of its own, whose answer comes
    /// back as [`Event::Read`]. With a read still in flight (a slow or hung tmux), the tick is
    /// skipped: one read at a time.
    fn cycle(&mut self) {
        let Some(reader) = self.start_read() else {
            tracing::debug!("the last cycle's read is still running: this tick is skipped");
            return;
        };
        self.reads.start((), Box::new(move || read_fleet(reader)));
    }

    /// The cycle's reader, taken for one read; `None` while a read is in flight.
    fn start_read(&mut self) -> Option<FleetReader> {
        let reader = self.reader.take()?;
        tracing::debug!("cycle");
        Some(reader)
    }

    /// A cycle's read answered: the notifier's cycle over it. A read begun before a reload
    /// took the old config's fields: it is dropped, and the next is started at once.
    fn apply(&mut self, answer: Box<CycleAnswer>) {
        if let Some(reloaded) = self.reloaded.take() {
            self.reader = Some(reloaded);
            self.reads.again();
            return;
        }
        let reader = self.reader.insert(answer.reader);
        match answer.panes {
            Ok(panes) => {
                tracing::debug!(started_ms = answer.started_ms, "the cycle's read answered");
                self.cycle_started_ms = answer.started_ms;
                let fired = self
                    .notifier
                    .cycle(reader.tmux(), &panes, reader.clients(), now_ms());
                for fire in fired {
                    tracing::debug!(pane = %fire.pane, trigger = %fire.trigger, muted = fire.muted, "claimed");
                }
            }
            Err(err) => {
                tracing::warn!(server = %self.server.socket_path, %err, "reading the fleet failed")
            }
        }
    }

    /// A push: each pushed pane as the hook read it with its stamp (or read on its own) handed to
    /// the notifier (its transition, its triggers); for many panes, a cycle. The cycle's cadence
    /// is left as it is.
    fn pushed(&mut self, pushed: Pushed) {
        let panes = match pushed {
            // A read in flight may have begun before these moves: another follows it.
            Pushed::Fleet if self.reader.is_none() => return self.reads.again(),
            Pushed::Fleet => return self.cycle(),
            Pushed::Panes(panes) => panes,
        };
        for pushed in panes {
            let Some((found, at_ms)) = self.pushed_pane(&pushed) else {
                continue;
            };
            // No agent pane (any more): the cycle records what became of it.
            let Some(pane) = found else { continue };
            let reader = &self.push_reader;
            let fired = self
                .notifier
                .pushed(reader.tmux(), &pane, reader.clients(), at_ms);
            for fire in fired {
                tracing::debug!(pane = %fire.pane, trigger = %fire.trigger, muted = fire.muted, "claimed after a push");
            }
        }
    }

    /// A pushed pane as read now, with when its read answered: the read the hook carried (the
    /// clients with it) when it is fresh and the daemon may take it (`Carried::takeable`: it
    /// started after the last cycle's read, or shows a later stamp of the pane than the notifier
    /// remembers; an older one could take the notifier's memory of the pane back in time), else
    /// one of the daemon's own (`None` when tmux failed it). Both through the push reader: the
    /// cycle's may be away on a read.
    fn pushed_pane(&mut self, pushed: &PushedPane) -> Option<(Option<Pane>, u64)> {
        let reader = &mut self.push_reader;
        if let Some((found, read)) = push::take(
            pushed.read.as_ref(),
            (self.cycle_started_ms, now_ms()),
            self.notifier.stamped_at(&pushed.pane),
            |read| reader.carried(&pushed.pane, read),
            |pane| pane.row.stamped_at_ms,
        ) {
            return Some((found, read.answered_ms));
        }
        match self.push_reader.pane(&pushed.pane) {
            Ok(found) => Some((found, now_ms())),
            Err(err) => {
                tracing::debug!(pane = %pushed.pane, %err, "reading a pushed pane failed");
                None
            }
        }
    }

    /// Reads the config again; a broken one keeps the old.
    fn reload(&mut self) {
        match crate::config::load(&self.options.paths.config_file) {
            Ok(config) => {
                self.push_reader = reader(&self.options, &config);
                match &mut self.reader {
                    Some(home) => *home = reader(&self.options, &config),
                    None => self.reloaded = Some(reader(&self.options, &config)),
                }
                self.interval = interval(&config);
                self.notifier.reload(config.notify);
                tracing::info!("config reloaded");
            }
            Err(err) => tracing::error!("config reload failed, keeping the old config: {err:#}"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cycles_keep_their_period_whatever_a_cycle_takes() {
        let interval = Duration::from_millis(200);
        let start = std::time::Instant::now();
        let due = start + interval;
        assert_eq!(
            next_cycle(due, interval, due + Duration::from_millis(60)),
            due + interval,
            "a 60 ms cycle does not push the next one back"
        );
        let late = due + Duration::from_millis(500);
        assert_eq!(
            next_cycle(due, interval, late),
            late + interval,
            "after a stall, one interval from now, not a burst of cycles"
        );
    }
}
