//! P6: the peak resident set (`VmHWM` in `/proc/<pid>/status`) of one `serve` that streams whole
//! snapshots of the fleet (subscribed with `events` false, and one pane flipped every interval so
//! every cycle has a new snapshot to send) while it pages through the whole big transcript,
//! window after window from the end to the head.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use anyhow::{Context, bail};
use schema::PaneOption;
use serde_json::Value;

use super::super::cli::Options;
use super::super::conn::{ANSWER_LIMIT, Conn, expect_kind};
use super::super::fleet::Fleet;
use super::super::report::{Row, Spec, bytes};
use super::super::stats::Summary;
use super::super::transcripts::{BIG_PANE, Transcripts};

/// The pane flipped between working and idle while P6 pages.
pub const FLIPPED_PANE: &str = "a0-work-4";

/// What paging the transcript came to.
#[derive(Debug, Default)]
struct Paged {
    pages: usize,
    events: usize,
    /// Snapshot frames the subscription streamed meanwhile.
    streamed: usize,
    /// Requests asked again after an `internal` error.
    retries: usize,
}

/// How many times in a row a request answered `internal` is asked again.
const RETRIES: usize = 10;
/// The pause before asking again: longer than the host's pause after a tmux time-out.
const RETRY_PAUSE: Duration = Duration::from_millis(1500);

/// Sends `request` (id `id`) and reads until its answer, counting the streamed frames between.
/// An `internal` error (tmux did not answer the pane read in time, as happens on a saturated
/// machine) is asked again after a pause, [`RETRIES`] times at most in a row.
fn ask(conn: &mut Conn, id: &str, request: &Value, paged: &mut Paged) -> anyhow::Result<Value> {
    for _ in 0..=RETRIES {
        conn.send(&request.to_string())?;
        let answer = loop {
            let frame = conn.frame(ANSWER_LIMIT)?;
            if frame["id"] == id {
                break frame;
            }
            expect_kind(&frame, "snapshot")?;
            paged.streamed += 1;
        };
        if answer["t"] != "error" || answer["code"] != "internal" {
            return Ok(answer);
        }
        paged.retries += 1;
        std::thread::sleep(RETRY_PAUSE);
    }
    bail!("{RETRIES} answers in a row were `internal` errors: tmux does not answer in time")
}

/// Pages the whole transcript of `pane`, newest first, until `older` is null.
fn page_all(conn: &mut Conn, pane: &str, paged: &mut Paged) -> anyhow::Result<()> {
    let mut before: Option<String> = None;
    loop {
        let id = format!("w{}", paged.pages);
        let mut request = serde_json::json!({"schema": 1, "id": id, "t": "window", "pane": pane});
        if let Some(cursor) = &before {
            request["before"] = cursor.as_str().into();
        }
        let frame = ask(conn, &id, &request, paged)?;
        expect_kind(&frame, "window")?;
        paged.pages += 1;
        paged.events += frame["events"].as_array().map_or(0, Vec::len);
        match frame["older"].as_str() {
            Some(cursor) => before = Some(cursor.to_owned()),
            None => return Ok(()),
        }
    }
}

/// A `/proc/<pid>/status` figure in kB (`VmHWM`, `VmRSS`).
fn status_kib(pid: u32, key: &str) -> anyhow::Result<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status"))
        .with_context(|| format!("reading /proc/{pid}/status"))?;
    status
        .lines()
        .find_map(|line| line.strip_prefix(key)?.strip_prefix(':'))
        .and_then(|rest| rest.trim().strip_suffix("kB")?.trim().parse().ok())
        .with_context(|| format!("no {key} in /proc/{pid}/status"))
}

/// P6.
pub fn p6(
    fleet: &Fleet,
    transcripts: &Transcripts,
    _options: &Options,
    specs: &[Spec],
) -> anyhow::Result<Vec<Row>> {
    let big = fleet.pane(BIG_PANE)?;
    let flipped = fleet.pane(FLIPPED_PANE)?;
    let mut conn = fleet.serve("p6")?;
    let mut paged = Paged::default();
    let subscribe =
        serde_json::json!({"schema": 1, "id": "sub", "t": "subscribe", "events": false});
    let ack = ask(&mut conn, "sub", &subscribe, &mut paged)?;
    expect_kind(&ack, "ack")?;
    let stop = AtomicBool::new(false);
    let mut paging_s = 0.0;
    let interval = Duration::from_millis(fleet.interval_ms);
    let result = std::thread::scope(|scope| {
        let flipper = scope.spawn(|| -> anyhow::Result<usize> {
            let mut flips = 0;
            while !stop.load(Ordering::Relaxed) {
                let state = if flips % 2 == 0 { "idle" } else { "working" };
                fleet.set_options(flipped, &[(PaneOption::State, state.to_owned())])?;
                flips += 1;
                std::thread::sleep(interval);
            }
            Ok(flips)
        });
        let started = std::time::Instant::now();
        let paging = page_all(&mut conn, big, &mut paged);
        paging_s = started.elapsed().as_secs_f64();
        stop.store(true, Ordering::Relaxed);
        let flips = flipper.join().expect("the flipper does not panic");
        paging.and(flips)
    });
    let flips = result?;
    let pid = conn.pid();
    let peak_kib = status_kib(pid, "VmHWM")?;
    let now_kib = status_kib(pid, "VmRSS")?;
    conn.close()?;
    if paged.events == 0 || paged.streamed == 0 {
        bail!(
            "paging read {} events and the subscription streamed {} snapshots: nothing was measured",
            paged.events,
            paged.streamed
        );
    }
    let peak_mib = peak_kib as f64 / 1024.0;
    Ok(vec![
        Row::new(&specs[0], "MiB", Summary::one(peak_mib))
            .figure(peak_mib, format!("{peak_mib:.1} MiB"))
            .note(format!(
                "one sample: {} windows paged all {} events of {} from the end to the head in \
                 {:.0} s while {} snapshots of every pane streamed ({} flips of one pane); {} \
                 requests were asked again after an `internal` error (tmux did not answer the \
                 pane read in time); VmRSS at the end {:.1} MiB",
                paged.pages,
                paged.events,
                bytes(transcripts.big_bytes),
                paging_s,
                paged.streamed,
                flips,
                paged.retries,
                now_kib as f64 / 1024.0
            )),
    ])
}
