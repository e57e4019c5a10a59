//! P4 and P4b: how long after a pane's transition a subscribed device gets its `edge` frame, and
//! the notification daemon starts its command, against the reconcile interval both poll at.
//!
//! A `serve` subscribed to edges and a `corral daemon` run on the whole fleet. The daemon's
//! command (`[notify] command`, set by the bench) writes the firing pane's id into a FIFO the
//! bench reads on a thread of its own, stamping each line as it arrives. Each sample waits a
//! random part of an interval (so transitions fall anywhere in a cycle), moves one pane from
//! working to blocked with a new episode in one tmux command, and times both from the moment
//! that command returned; then moves it back to working and waits for that edge too. Last, with
//! both stopped, the daemon's own read of the fleet and one tmux call are timed alone: what
//! P4b's note says a fire's p95 is made of.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Child, Stdio};
use std::sync::mpsc::{self, Receiver};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use anyhow::{Context, bail};
use schema::PaneOption;

use super::super::cli::Options;
use super::super::conn::{ANSWER_LIMIT, Conn, expect_kind};
use super::super::fleet::Fleet;
use super::super::process::output;
use super::super::report::{Row, Spec};
use super::super::stats::{Summary, ms};

/// Agent panes of P4c's fleet: a large fleet of a person's own, not the stress one (20 in a
/// quick run).
pub fn small_fleet(options: &Options) -> usize {
    if options.quick { 20 } else { 100 }
}
/// The pane whose transitions are timed.
pub const MOVED_PANE: &str = "a0-work-2";
/// The FIFO the notification command writes to, in the scratch dir.
pub const FIFO: &str = "notify.fifo";
/// How long a transition's edge or notification may take before the measure fails.
const LIMIT: Duration = Duration::from_secs(20);

/// The `[notify] command` that reports a fire: the pane's id, one line, into the FIFO.
pub fn notify_command(dir: &Path) -> String {
    format!(
        r#"printf '%s\n' "$CORRAL_PANE" > '{}'"#,
        dir.join(FIFO).display()
    )
}

/// A small xorshift generator: where in a cycle each transition falls (the client's rows use it
/// too).
pub(super) struct Jitter(u64);

impl Jitter {
    pub(super) fn new() -> Jitter {
        let seed = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(1, |d| d.as_nanos() as u64);
        Jitter(seed | 1)
    }

    /// A duration in `[0, max)`.
    pub(super) fn below(&mut self, max: Duration) -> Duration {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        max.mul_f64((self.0 % 1_000_000) as f64 / 1_000_000.0)
    }
}

/// The FIFO's reader: every line with the instant it was read.
pub(super) struct Fires {
    path: PathBuf,
    lines: Receiver<(Instant, String)>,
    reader: Option<std::thread::JoinHandle<()>>,
}

/// The line that tells the reader to stop.
const STOP: &str = "corral-bench-stop";

impl Fires {
    pub(super) fn open(dir: &Path) -> anyhow::Result<Fires> {
        let path = dir.join(FIFO);
        let _ = std::fs::remove_file(&path);
        rustix::fs::mknodat(
            rustix::fs::CWD,
            &path,
            rustix::fs::FileType::Fifo,
            rustix::fs::Mode::from_raw_mode(0o600),
            0,
        )
        .with_context(|| format!("making the FIFO {}", path.display()))?;
        // Read and write: opening never waits for a writer, and the FIFO never reads as ended.
        let fifo = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .open(&path)?;
        let (send, lines) = mpsc::channel();
        let reader = std::thread::spawn(move || {
            // A fire is a pane id; anything else that is not a line of text ends the reading.
            stdx::lines::each_line(fifo, 64 * 1024, |line| {
                let at = Instant::now();
                let stdx::lines::Line::Text(line) = line else {
                    return false;
                };
                line != STOP && send.send((at, line)).is_ok()
            });
        });
        Ok(Fires {
            path,
            lines,
            reader: Some(reader),
        })
    }

    /// Reads fires until none came for `quiet`; how many there were.
    pub(super) fn drain(&self, quiet: Duration, limit: Duration) -> anyhow::Result<usize> {
        let deadline = Instant::now() + limit;
        let mut n = 0;
        while self.lines.recv_timeout(quiet).is_ok() {
            n += 1;
            if Instant::now() > deadline {
                bail!("the daemon was still firing after {limit:?}");
            }
        }
        Ok(n)
    }

    /// The instant `pane`'s next fire was read; other panes' fires are counted in `others`.
    pub(super) fn next_of(&self, pane: &str, others: &mut usize) -> anyhow::Result<Instant> {
        let deadline = Instant::now() + LIMIT;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let (at, line) = self.lines.recv_timeout(left).map_err(|_| {
                anyhow::anyhow!("no notification command ran for {pane} within {LIMIT:?}")
            })?;
            if line == pane {
                return Ok(at);
            }
            *others += 1;
        }
    }
}

impl Drop for Fires {
    fn drop(&mut self) {
        if let Ok(mut fifo) = std::fs::OpenOptions::new().write(true).open(&self.path) {
            let _ = writeln!(fifo, "{STOP}");
        }
        if let Some(reader) = self.reader.take() {
            let _ = reader.join();
        }
        let _ = std::fs::remove_file(&self.path);
    }
}

/// `corral daemon`, stopped with SIGTERM when dropped.
pub(super) struct Daemon(Child);

impl Daemon {
    pub(super) fn start(fleet: &Fleet) -> anyhow::Result<Daemon> {
        let log = std::fs::File::create(fleet.dir.join("logs/daemon.err"))?;
        let child = fleet
            .corral()
            .arg("daemon")
            .stdout(Stdio::null())
            .stderr(log)
            .spawn()
            .context("starting corral daemon")?;
        let daemon = Daemon(child);
        // Ready when its socket is there.
        let notify = fleet.dir.join("run/corral/notify");
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            let ready = std::fs::read_dir(&notify).is_ok_and(|entries| {
                entries.flatten().any(|e| {
                    let name = e.file_name();
                    let name = name.to_string_lossy();
                    name.starts_with("daemon-") && name.ends_with(".sock")
                })
            });
            if ready {
                return Ok(daemon);
            }
            if Instant::now() > deadline {
                bail!(
                    "corral daemon made no socket in {} within 30 s",
                    notify.display()
                );
            }
            std::thread::sleep(Duration::from_millis(10));
        }
    }
}

impl Daemon {
    /// Its process id.
    pub(super) fn pid(&self) -> u32 {
        self.0.id()
    }
}

impl Drop for Daemon {
    fn drop(&mut self) {
        stdx::process::signal(self.0.id(), stdx::process::Signal::TERM);
        stdx::process::wait_or_kill(&mut self.0, Duration::from_secs(5));
    }
}

/// Reads frames until `pane`'s edge to `to`; the instant it was read.
pub(super) fn edge_to(conn: &mut Conn, pane: &str, to: &str) -> anyhow::Result<Instant> {
    let deadline = Instant::now() + LIMIT;
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            bail!("no edge of {pane} to {to} within {LIMIT:?}");
        }
        let frame = conn.frame(left)?;
        let at = Instant::now();
        expect_kind(&frame, "edge")?;
        if frame["pane"] == pane && frame["to"] == to {
            return Ok(at);
        }
    }
}

/// Epoch ms now, as text.
pub(super) fn now_ms() -> String {
    stdx::now_ms().to_string()
}

/// What a fire costs in tmux on the fleet besides the wait for its read: the notification
/// daemon's read of it and one tmux call (a fire's claim), each timed alone, with no daemon or
/// connection running.
struct TmuxCost {
    read_ms: f64,
    call_ms: f64,
}

impl TmuxCost {
    const SAMPLES: usize = 15;

    fn measure(fleet: &Fleet, pane: &str) -> anyhow::Result<TmuxCost> {
        let read = super::snapshot::read_command(fleet, "notify")?;
        let (mut reads, mut calls) = (Vec::new(), Vec::new());
        for _ in 0..TmuxCost::SAMPLES {
            reads.push(super::snapshot::list_ms(fleet, &read, fleet.pane_count())?.0);
            let start = Instant::now();
            output(
                fleet
                    .tmux()
                    .args(["display-message", "-p", "-t", pane, "#{pane_tty}"]),
            )?;
            calls.push(ms(start.elapsed()));
        }
        Ok(TmuxCost {
            read_ms: Summary::of(&reads).median,
            call_ms: Summary::of(&calls).median,
        })
    }
}

/// What one fleet's samples gave.
struct Samples {
    /// Transition → edge frame, ms.
    edges: Vec<f64>,
    /// Transition → notification command started, ms.
    notes: Vec<f64>,
    /// The stamping tmux command itself, ms.
    stamps: Vec<f64>,
    /// Fires of the daemon's first cycles (the fleet's unannounced panes).
    burst: usize,
    /// Fires of other panes during the samples.
    others: usize,
    cost: TmuxCost,
}

/// `options.samples` transitions of [`MOVED_PANE`] on `fleet`, with a subscribed `serve` and
/// `corral daemon` running (whose `[notify] command` must be [`notify_command`] of `fleet.dir`).
fn sample(fleet: &Fleet, options: &Options) -> anyhow::Result<Samples> {
    let pane = fleet.pane(MOVED_PANE)?;
    let interval = Duration::from_millis(fleet.interval_ms);
    let fires = Fires::open(&fleet.dir)?;
    let daemon = Daemon::start(fleet)?;
    // The fleet's blocked panes were never announced: the daemon's first cycles fire for them.
    let quiet = (interval * 3).max(Duration::from_secs(1));
    let burst = fires.drain(quiet, Duration::from_secs(180))?;
    let mut conn = fleet.serve("p4")?;
    conn.send(r#"{"schema":1,"id":"sub","t":"subscribe","events":true}"#)?;
    expect_kind(&conn.frame(ANSWER_LIMIT)?, "ack")?;
    // The first cycle after subscribe is a silent baseline.
    std::thread::sleep(interval * 2);
    let mut jitter = Jitter::new();
    let (mut edges, mut notes, mut stamps) = (Vec::new(), Vec::new(), Vec::new());
    let mut others = 0;
    for _ in 0..options.samples {
        std::thread::sleep(jitter.below(interval));
        let asked = Instant::now();
        fleet.set_options(
            pane,
            &[
                (PaneOption::State, "blocked".to_owned()),
                (PaneOption::Since, now_ms()),
            ],
        )?;
        let moved = Instant::now();
        stamps.push(ms(moved - asked));
        let edge = edge_to(&mut conn, pane, "blocked")?;
        let fired = fires.next_of(pane, &mut others)?;
        edges.push(ms(edge.saturating_duration_since(moved)));
        notes.push(ms(fired.saturating_duration_since(moved)));
        fleet.set_options(
            pane,
            &[
                (PaneOption::State, "working".to_owned()),
                (PaneOption::Since, now_ms()),
            ],
        )?;
        edge_to(&mut conn, pane, "working")?;
    }
    conn.close()?;
    drop(daemon);
    Ok(Samples {
        edges,
        notes,
        stamps,
        burst,
        others,
        cost: TmuxCost::measure(fleet, pane)?,
    })
}

/// P4b's note, and P4c's: how a fire was timed and what its p95 is made of on that fleet.
fn fire_note(samples: &Samples, interval_ms: f64) -> String {
    let Samples {
        burst,
        others,
        cost,
        ..
    } = samples;
    format!(
        "to the command's first line read from a FIFO (`printf` under `sh -c`); before it starts \
         the command a fire makes one tmux call (the marker's claim, an `if-shell -F` that also \
         shows the status line and prints the pane's tty and directory; the clients come with the \
         fleet read); timed alone after the samples, the daemon's read of this fleet took {:.1} \
         ms median and one bare tmux call {:.1} ms: at p95 a transition waits 95% of an interval \
         for the read that sees it, then both, about {:.0} ms before the daemon's own work, and \
         `serve`'s reads, sharing tmux's one thread, delay the daemon's when they overlap (tmux's \
         times drift from run to run on this machine); the daemon's first cycles fired {burst} \
         times for the fleet's unannounced panes, {others} fires of other panes came during the \
         samples",
        cost.read_ms,
        cost.call_ms,
        0.95 * interval_ms + cost.read_ms + cost.call_ms,
    )
}

/// P4, P4b on `fleet`, then P4c on a fleet of [`small_fleet`] panes beside it.
pub fn p4(fleet: &Fleet, options: &Options, specs: &[Spec]) -> anyhow::Result<Vec<Row>> {
    let big = sample(fleet, options)?;
    let (beside, _) =
        fleet.beside_notifying("p4c", small_fleet(options), options, notify_command)?;
    let small = sample(&beside, options)?;
    drop(beside);
    let interval_ms = fleet.interval_ms as f64;
    let stamp = Summary::of(&big.stamps);
    let row = |spec: &Spec, samples: &[f64], note: String| {
        let summary = Summary::of(samples);
        Row::new(spec, "ms", summary)
            .against("reconcile interval", Summary::one(interval_ms))
            .figure(summary.p95, format!("p95 {:.0} ms", summary.p95))
            .note(note)
    };
    Ok(vec![
        row(
            &specs[0],
            &big.edges,
            format!(
                "from the return of the tmux command that stamped the transition (itself {:.1} ms \
                 median) to the edge line read; transitions fall at random points of a cycle",
                stamp.median
            ),
        ),
        row(&specs[1], &big.notes, fire_note(&big, interval_ms)),
        row(&specs[2], &small.notes, fire_note(&small, interval_ms)),
    ])
}
