//! H1 to H2b: what a host costs while nothing moves, at the default reconcile interval: one
//! subscribed `serve` (and then 4 and 10 of them), or the notification daemon, over a span of idle
//! time, with the tmux server's own work for it, as a share of one core.
//!
//! A `serve`'s count is its own CPU time and its reaped children's (its tmux invocations: each
//! cycle's read runs `tmux` as a child it waits for); the tmux server's is its own, less what it
//! used over an equal span before anything connected (a tmux server with no client does next to
//! nothing, and the note says how much). On the fake backend there is no server process: its
//! work happens in the invocations, counted with their `serve`.

use std::time::Duration;

use anyhow::bail;

use super::super::cli::Options;
use super::super::conn::{ANSWER_LIMIT, Conn, expect_kind};
use super::super::cpu::{self, Children, Used};
use super::super::fleet::Fleet;
use super::super::report::{Row, Spec};
use super::super::stats::Summary;
use super::latency::Daemon;

/// The config's default reconcile interval.
pub fn default_interval_ms() -> u64 {
    schema::Config::default().serve.reconcile_interval_ms
}

/// The reconcile interval the H and C2 rows run at: the config's default ([`default_interval_ms`]);
/// a quick run, which shows the rows run and not what they cost, takes the bench's own.
pub fn idle_interval_ms(options: &Options) -> u64 {
    if options.quick {
        options.interval_ms
    } else {
        default_interval_ms()
    }
}

/// Agent panes of H1's and H2's fleet: a person's large fleet (20 in a quick run).
pub fn small_fleet(options: &Options) -> usize {
    super::latency::small_fleet(options)
}

/// How long each measure watches: 60 s (3 s in a quick run), after a settling time of two
/// intervals.
fn span(options: &Options) -> Duration {
    if options.quick {
        Duration::from_secs(3)
    } else {
        Duration::from_secs(60)
    }
}

/// The connections H2 and H2b run.
pub const CONNECTIONS: [usize; 2] = [4, 10];

/// One idle measure: what the host's processes and the tmux server used for them.
struct Idle {
    /// The host's processes, % of one core.
    host: f64,
    /// The tmux server's share, % of one core, its idle baseline taken out.
    tmux: f64,
    /// The tmux server alone, before anything connected, % of one core.
    tmux_idle: f64,
    /// What the host's processes sent to storage over the span, bytes (`cpu::written`); `None`
    /// where the kernel does not count it.
    written: Option<u64>,
}

impl Idle {
    fn total(&self) -> f64 {
        self.host + self.tmux
    }

    fn note(&self) -> String {
        let written = self.written.map_or("not counted here".to_owned(), |bytes| {
            format!("{:.1} KiB", bytes as f64 / 1024.0)
        });
        format!(
            "host processes {:.3}%, tmux server {:.3}% (its own {:.3}% when nothing is connected \
             taken out); the host's processes sent {written} to storage",
            self.host, self.tmux, self.tmux_idle
        )
    }
}

/// What `tmux_pid` used over `span` with nothing connected, % of one core.
fn tmux_alone(tmux_pid: Option<u32>, span: Duration) -> anyhow::Result<f64> {
    match tmux_pid {
        Some(pid) => Ok(cpu::over(&[(pid, Children::Excluded)], span)?.total()),
        None => Ok(0.0),
    }
}

/// Watches `host` (pids counted with their reaped children) and the tmux server for `span`.
fn watch(
    host: &[u32],
    tmux_pid: Option<u32>,
    tmux_idle: f64,
    span: Duration,
) -> anyhow::Result<Idle> {
    let mut pids: Vec<(u32, Children)> = host.iter().map(|&p| (p, Children::Reaped)).collect();
    pids.extend(tmux_pid.map(|p| (p, Children::Excluded)));
    let written = || -> Option<u64> { host.iter().map(|&p| cpu::written(p)).sum() };
    let written_before = written();
    let used: Used = cpu::over(&pids, span)?;
    let written = written()
        .zip(written_before)
        .map(|(after, before)| after.saturating_sub(before));
    let host_ticks: u64 = used.ticks[..host.len()].iter().sum();
    let tmux = if tmux_pid.is_some() {
        (used.percent(used.ticks[host.len()]) - tmux_idle).max(0.0)
    } else {
        0.0
    };
    Ok(Idle {
        host: used.percent(host_ticks),
        tmux,
        tmux_idle,
        written,
    })
}

/// `n` `serve` connections subscribed to edges, past their baseline.
fn subscribed(fleet: &Fleet, n: usize) -> anyhow::Result<Vec<Conn>> {
    let mut conns = Vec::new();
    for i in 0..n {
        let mut conn = fleet.serve(&format!("idle-{i}"))?;
        conn.send(r#"{"schema":1,"id":"sub","t":"subscribe","events":true}"#)?;
        expect_kind(&conn.frame(ANSWER_LIMIT)?, "ack")?;
        conns.push(conn);
    }
    std::thread::sleep(Duration::from_millis(fleet.interval_ms * 2));
    Ok(conns)
}

/// Subscribed connections idle over `span`, then closed; nothing may have been streamed.
fn connections(
    fleet: &Fleet,
    n: usize,
    tmux_pid: Option<u32>,
    tmux_idle: f64,
    span: Duration,
) -> anyhow::Result<Idle> {
    let mut conns = subscribed(fleet, n)?;
    let pids: Vec<u32> = conns.iter().map(Conn::pid).collect();
    let idle = watch(&pids, tmux_pid, tmux_idle, span)?;
    for conn in &mut conns {
        if let Ok(frame) = conn.frame(Duration::from_millis(1)) {
            bail!("an idle fleet streamed a frame: {frame}");
        }
    }
    for conn in conns {
        conn.close()?;
    }
    Ok(idle)
}

/// The daemon past its first cycles, idle over `span`.
fn daemon(
    fleet: &Fleet,
    tmux_pid: Option<u32>,
    tmux_idle: f64,
    span: Duration,
) -> anyhow::Result<Idle> {
    let daemon = Daemon::start(fleet)?;
    // Its first cycles announce the fleet's blocked panes (commands it runs in the background).
    std::thread::sleep(Duration::from_millis(fleet.interval_ms * 3));
    watch(&[daemon.pid()], tmux_pid, tmux_idle, span)
}

/// The format of [`floor`]'s read: the panes' ids alone, the cheapest `list-panes` there is.
const FLOOR_FORMAT: &str = "#{pane_id}";

/// The floor under every idle row: one tmux client per interval that lists the panes' ids alone
/// (`list-panes -a -F '#{pane_id}'`), started from this process on a thread that does nothing
/// else, and the tmux server's work for it. A host that asks tmux once per cycle through its
/// client cannot cost less: what a row costs above this is the host's own work and its wider
/// format.
///
/// Counted as a `serve` is: this process's CPU time and its reaped children's (the tmux
/// clients; nothing else of the bench ends during the span), and the server's share.
fn floor(
    fleet: &Fleet,
    tmux_pid: Option<u32>,
    tmux_idle: f64,
    span: Duration,
) -> anyhow::Result<Idle> {
    let interval = Duration::from_millis(fleet.interval_ms);
    let (stop, stopped) = std::sync::mpsc::channel::<()>();
    std::thread::scope(|scope| {
        let reads = scope.spawn(move || -> anyhow::Result<u64> {
            let mut due = std::time::Instant::now();
            let mut reads = 0;
            loop {
                let status = fleet
                    .tmux()
                    .args(["list-panes", "-a", "-F", FLOOR_FORMAT])
                    .stdout(std::process::Stdio::null())
                    .stderr(std::process::Stdio::null())
                    .status()?;
                if !status.success() {
                    bail!("the floor's `tmux list-panes` failed: {status}");
                }
                reads += 1;
                due += interval;
                let wait = due.saturating_duration_since(std::time::Instant::now());
                if stopped.recv_timeout(wait) != Err(std::sync::mpsc::RecvTimeoutError::Timeout) {
                    return Ok(reads);
                }
            }
        });
        std::thread::sleep(interval * 2);
        let idle = watch(&[std::process::id()], tmux_pid, tmux_idle, span);
        let _ = stop.send(());
        let reads = reads
            .join()
            .map_err(|_| anyhow::anyhow!("the floor's reader panicked"))??;
        if reads < 2 {
            bail!("the floor's reader read {reads} times in {span:?}");
        }
        idle
    })
}

/// One fleet's measures: the floor, one connection, more connections, the daemon.
struct Measured {
    floor: Idle,
    one: Idle,
    more: Vec<(usize, Idle)>,
    daemon: Idle,
}

fn measure(fleet: &Fleet, more: &[usize], span: Duration) -> anyhow::Result<Measured> {
    let tmux_pid = fleet.server_pid()?;
    let tmux_idle = tmux_alone(tmux_pid, span)?;
    let floor = floor(fleet, tmux_pid, tmux_idle, span)?;
    let one = connections(fleet, 1, tmux_pid, tmux_idle, span)?;
    let more = more
        .iter()
        .map(|&n| Ok((n, connections(fleet, n, tmux_pid, tmux_idle, span)?)))
        .collect::<anyhow::Result<Vec<_>>>()?;
    let daemon = daemon(fleet, tmux_pid, tmux_idle, span)?;
    Ok(Measured {
        floor,
        one,
        more,
        daemon,
    })
}

/// H1..H2b: a fleet of [`small_fleet`] panes of its own, then `fleet` itself, both at the
/// default interval.
pub fn h(fleet: &mut Fleet, options: &Options, specs: &[Spec]) -> anyhow::Result<Vec<Row>> {
    let interval = idle_interval_ms(options);
    let span = span(options);
    let small_options = Options {
        interval_ms: interval,
        ..options.clone()
    };
    let (small, _) = fleet.beside("h1", small_fleet(options), &small_options)?;
    let near = measure(&small, &CONNECTIONS, span)?;
    drop(small);
    let before = fleet.interval_ms;
    fleet.set_interval(interval)?;
    let big = measure(fleet, &[], span);
    fleet.set_interval(before)?;
    let big = big?;

    let seconds = span.as_secs();
    let cost = |spec: &Spec, idle: &Idle, floor: &Idle, what: &str| {
        let total = idle.total();
        Row::new(spec, "% of a core", Summary::one(total))
            .against(
                "one `tmux list-panes` of the panes' ids per interval",
                Summary::one(floor.total()),
            )
            .figure(total, format!("{total:.2}%"))
            .note(format!(
                "{what}, nothing moving, over {seconds} s at a reconcile interval of {interval} \
                 ms: {}. The floor, one `tmux list-panes -a -F '{FLOOR_FORMAT}'` per interval \
                 from a process that does nothing else: {:.2}% (the process and its tmux \
                 clients {:.3}%, the tmux server {:.3}%)",
                idle.note(),
                floor.total(),
                floor.host,
                floor.tmux,
            ))
    };
    let mut rows = vec![
        cost(
            &specs[0],
            &near.one,
            &near.floor,
            &format!(
                "one `serve` subscribed to edges on {} panes",
                small_fleet(options)
            ),
        ),
        cost(
            &specs[1],
            &big.one,
            &big.floor,
            &format!(
                "one `serve` subscribed to edges on {} panes",
                fleet.pane_count()
            ),
        ),
        cost(
            &specs[2],
            &near.daemon,
            &near.floor,
            &format!("`corral daemon` on {} panes", small_fleet(options)),
        ),
        cost(
            &specs[3],
            &big.daemon,
            &big.floor,
            &format!("`corral daemon` on {} panes", fleet.pane_count()),
        ),
    ];
    let first = near.one.total();
    for (spec, (n, idle)) in specs[4..].iter().zip(&near.more) {
        let added = (idle.total() - first) / (*n as f64 - 1.0);
        // A clock tick's noise can make the added cost a hair below zero: none is added.
        let ratio = if first > 0.0 {
            (added / first).max(0.0)
        } else {
            0.0
        };
        rows.push(
            Row::new(spec, "% of a core", Summary::one(idle.total()))
                .against("one connection", Summary::one(first))
                .figure(ratio, format!("{ratio:.2}× of the first"))
                .note(format!(
                    "{n} `serve` subscribed to edges on {} panes, nothing moving, over {seconds} \
                     s: {:.3}% together ({}), each after the first adding {added:.3}% where the \
                     first costs {first:.3}%",
                    small_fleet(options),
                    idle.total(),
                    idle.note()
                )),
        );
    }
    Ok(rows)
}
