//! The rows of the report, one group of measures per file, and the one table of what each row
//! measures and the target it is judged by ([`describe`]), used for a measured row and for one
//! whose measure failed alike.
//!
//! Groups, in the order they run: [`spawn`] (P1, E1), [`snapshot`] (P2, P2b), [`window`] (P3),
//! [`dispatch`] (P7, P7b), [`latency`] (P4, P4b, P4c), [`push`] (P8 to P8d), [`idle`] (H1 to
//! H2b), [`memory`] (P6) on the fleet, then [`suite`] (P5, P5b) alone, then [`remote`] (C1, C1b,
//! C1c: the reference client) and [`follow`] (C2 to C2d: the client following many hosts) on
//! fleets of their own.

pub mod dispatch;
pub mod follow;
pub mod idle;
pub mod latency;
pub mod memory;
pub mod push;
pub mod remote;
pub mod snapshot;
pub mod spawn;
pub mod suite;
pub mod window;

use super::cli::Options;
pub use super::report::ROWS;
use super::report::{Row, Spec, Target, bytes};

/// How many processes race for one slot in P7.
pub const RACERS: usize = 20;
/// Runs of `corral event` in E1 and E1b (a quick run takes its samples).
pub const EVENT_RUNS: usize = 100;
/// Agent panes of E1's own scratch server: a realistic fleet, not the big one.
pub const EVENT_PANES: usize = 20;
/// The limit a conformance run must stay under, in seconds.
pub const SUITE_LIMIT_S: f64 = 20.0;
/// Claims per second the ledger must sustain.
pub const CLAIMS_PER_S: f64 = 2000.0;
/// Peak RSS of one serve, in MiB.
pub const PEAK_RSS_MIB: f64 = 15.0;
/// P4's allowance over one interval, in ms.
pub const LATENCY_SLACK_MS: f64 = 20.0;
/// C1's allowance over one interval, in ms: the host's own 20 ms and the client's relay.
pub const CLIENT_SLACK_MS: f64 = 50.0;
/// The share of one core the client may use while idle, in percent.
pub const CLIENT_IDLE_CPU: f64 = 1.0;
/// How long after an agent's hook its edge or notification may come (P8), in ms.
pub const PUSH_MS: f64 = 50.0;
/// The share of one core an idle subscribed `serve` and tmux's work for it may take on a fleet
/// of 100 panes (H1), in percent.
pub const IDLE_SERVE_CPU: f64 = 0.5;
/// What each connection after the first may add to the first's idle cost (H2), as a ratio.
pub const MARGINAL_CONNECTION: f64 = 0.5;
/// The client's peak resident set following many hosts (C2d), in MiB.
pub const FOLLOW_RSS_MIB: f64 = 64.0;

/// What row `id` measures and its target, for this run's settings.
pub fn describe(id: &'static str, options: &Options) -> Spec {
    let panes = options.panes;
    let big = bytes(options.transcript_bytes);
    let interval = options.interval_ms as f64;
    let (measure, target, target_text) = match id {
        "P1" => (
            "spawn `corral serve` → hello answered".to_owned(),
            Target::AtMost(3.0),
            "≤ 3×".to_owned(),
        ),
        "P2" => (
            format!("`snapshot` round trip, {panes} panes"),
            Target::AtMost(1.3),
            "≤ 1.3×".to_owned(),
        ),
        "P2b" => (
            format!("`snapshot` round trip, {panes} panes"),
            Target::Report,
            "report".to_owned(),
        ),
        "P3" => (
            format!("`window` of 200 headers at the end of a {big} transcript"),
            Target::AtMost(1.2),
            "≤ 1.2×".to_owned(),
        ),
        "P4" => (
            format!("pane transition → `edge` frame, p95 ({panes} panes)"),
            Target::AtMost(interval + LATENCY_SLACK_MS),
            format!("≤ {} ms (1 interval + 20 ms)", interval + LATENCY_SLACK_MS),
        ),
        "P4b" => (
            format!("pane transition → notification command started, p95 ({panes} panes)"),
            Target::AtMost(interval + LATENCY_SLACK_MS),
            format!("≤ {} ms (1 interval + 20 ms)", interval + LATENCY_SLACK_MS),
        ),
        "P4c" => (
            format!(
                "pane transition → notification command started, p95 ({} panes)",
                latency::small_fleet(options)
            ),
            Target::AtMost(interval + LATENCY_SLACK_MS),
            format!("≤ {} ms (1 interval + 20 ms)", interval + LATENCY_SLACK_MS),
        ),
        "P5" => (
            "`cargo xtask conformance --backend fake`, wall time".to_owned(),
            Target::AtMost(SUITE_LIMIT_S),
            "≤ 20 s on 2 cores".to_owned(),
        ),
        "P5b" => (
            "the same without the cases whose floor is a fixed spec time".to_owned(),
            Target::AtMost(SUITE_LIMIT_S),
            "≤ 20 s on 2 cores".to_owned(),
        ),
        "P6" => (
            format!("peak RSS of `serve`: {panes} panes streaming, a {big} transcript paged"),
            Target::AtMost(PEAK_RSS_MIB),
            "≤ 15 MiB".to_owned(),
        ),
        "P7" => (
            format!("{RACERS} processes dispatch one slot at once: fires"),
            Target::Exactly(1.0),
            "exactly 1".to_owned(),
        ),
        "P7b" => (
            "ledger claims per second, at the cap (4096 slots held)".to_owned(),
            Target::AtLeast(CLAIMS_PER_S),
            "≥ 2000/s".to_owned(),
        ),
        "P8" | "P8b" | "P8c" | "P8d" => {
            let (to, at) = match id {
                "P8" => ("`edge` frame", options.interval_ms),
                "P8b" => ("notification command started", options.interval_ms),
                "P8c" => ("`edge` frame", push::slow_interval_ms(options)),
                _ => (
                    "notification command started",
                    push::slow_interval_ms(options),
                ),
            };
            (
                format!("agent hook (`corral event`) → {to}, p95 ({panes} panes, {at} ms cycle)"),
                Target::AtMost(PUSH_MS),
                "≤ 50 ms (pushed)".to_owned(),
            )
        }
        "H1" | "H1b" | "H1c" | "H1d" => {
            let fleet = if matches!(id, "H1" | "H1c") {
                idle::small_fleet(options)
            } else {
                panes
            };
            let who = if matches!(id, "H1" | "H1b") {
                "one subscribed `serve`"
            } else {
                "`corral daemon`"
            };
            let target = if id == "H1" {
                (
                    Target::AtMost(IDLE_SERVE_CPU),
                    "≤ 0.5% of a core".to_owned(),
                )
            } else {
                (Target::Report, "report".to_owned())
            };
            (
                format!(
                    "idle CPU of {who} + tmux's share, {fleet} panes, {} ms cycle",
                    idle::idle_interval_ms(options)
                ),
                target.0,
                target.1,
            )
        }
        "H2" | "H2b" => {
            let n = idle::CONNECTIONS[usize::from(id == "H2b")];
            (
                format!(
                    "idle CPU of {n} subscribed `serve` + tmux's share, {} panes: each added \
                     connection against the first",
                    idle::small_fleet(options)
                ),
                Target::Below(MARGINAL_CONNECTION),
                "< 0.5× of the first".to_owned(),
            )
        }
        "C2" | "C2b" => {
            let interval = idle::idle_interval_ms(options) as f64;
            let (how, target, text) = if id == "C2" {
                (
                    "pane transition",
                    Target::AtMost(interval + CLIENT_SLACK_MS),
                    format!("≤ {} ms (1 interval + 50 ms)", interval + CLIENT_SLACK_MS),
                )
            } else {
                (
                    "agent hook",
                    Target::AtMost(PUSH_MS),
                    "≤ 50 ms (pushed)".to_owned(),
                )
            };
            (
                format!(
                    "{how} → `corral-remote --ndjson` row line, p95 ({} hosts × {} panes)",
                    follow::hosts(options),
                    remote::host_panes(options)
                ),
                target,
                text,
            )
        }
        "C2c" => (
            format!(
                "`corral-remote --ndjson` CPU while idle ({} hosts × {} panes)",
                follow::hosts(options),
                remote::host_panes(options)
            ),
            Target::Below(CLIENT_IDLE_CPU),
            "< 1% of a core".to_owned(),
        ),
        "C2d" => (
            format!(
                "`corral-remote --ndjson` peak RSS ({} hosts × {} panes)",
                follow::hosts(options),
                remote::host_panes(options)
            ),
            Target::Below(FOLLOW_RSS_MIB),
            "< 64 MiB".to_owned(),
        ),
        "E1" => (
            format!(
                "`corral event claude <hook>` stamping a pane, wall time ({EVENT_PANES} panes)"
            ),
            Target::Below(5.0),
            "< 5 ms".to_owned(),
        ),
        "E1b" => (
            format!("`corral event claude <hook>` stamping a pane, wall time ({panes} panes)"),
            Target::Report,
            "report".to_owned(),
        ),
        "C1" => (
            format!(
                "pane transition → `corral-remote --ndjson` row line, p95 ({} hosts × {} panes)",
                remote::HOSTS,
                remote::host_panes(options)
            ),
            Target::AtMost(interval + CLIENT_SLACK_MS),
            format!("≤ {} ms (1 interval + 50 ms)", interval + CLIENT_SLACK_MS),
        ),
        "C1b" => (
            format!(
                "`corral-remote --ndjson` CPU while idle ({} hosts × {} panes)",
                remote::HOSTS,
                remote::host_panes(options)
            ),
            Target::Below(CLIENT_IDLE_CPU),
            "< 1% of a core".to_owned(),
        ),
        "C1c" => (
            format!(
                "`corral-remote` TUI CPU while idle ({} hosts × {} panes)",
                remote::HOSTS,
                remote::host_panes(options)
            ),
            Target::Below(CLIENT_IDLE_CPU),
            "< 1% of a core".to_owned(),
        ),
        _ => unreachable!("row {id} is in ROWS"),
    };
    Spec {
        id,
        measure,
        target,
        target_text,
    }
}

/// The rows of group `group`: measured by `measure`, or every one of them failed with its error.
pub fn group(
    group: &str,
    options: &Options,
    measure: impl FnOnce(&[Spec]) -> anyhow::Result<Vec<Row>>,
) -> Vec<Row> {
    let specs: Vec<Spec> = ROWS
        .iter()
        .filter(|(_, g)| *g == group)
        .map(|(id, _)| describe(id, options))
        .collect();
    let ids: Vec<&str> = specs.iter().map(|s| s.id).collect();
    super::progress(&format!("measuring {}", ids.join(", ")));
    match measure(&specs) {
        Ok(rows) => rows.into_iter().map(Row::judged).collect(),
        Err(err) => specs.iter().map(|spec| Row::failed(spec, &err)).collect(),
    }
}
