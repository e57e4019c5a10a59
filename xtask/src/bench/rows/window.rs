//! P3: a `window` of the newest headers (the default `last`, 200) of a big transcript against the
//! same request on a 1 MiB one, on one connection, in turn. A window pages backwards from the
//! end, so its cost is the page's, not the file's: the ratio shows whether anything reads more.

use std::time::Instant;

use anyhow::bail;

use super::super::cli::Options;
use super::super::conn::{ANSWER_LIMIT, Conn, expect_kind};
use super::super::fleet::Fleet;
use super::super::report::{Row, Spec, bytes};
use super::super::stats::{Summary, ms};
use super::super::transcripts::{BIG_PANE, SMALL_PANE, Transcripts};

/// What one window answer held.
#[derive(Debug, Clone, Copy)]
pub struct Page {
    pub events: usize,
    pub truncated: bool,
}

/// One `window` request's round trip, in ms, and the page it answered.
pub fn window_ms(
    conn: &mut Conn,
    id: &str,
    pane: &str,
    before: Option<&str>,
) -> anyhow::Result<(f64, Page, serde_json::Value)> {
    let mut request = serde_json::json!({"schema": 1, "id": id, "t": "window", "pane": pane});
    if let Some(cursor) = before {
        request["before"] = cursor.into();
    }
    let request = request.to_string();
    let start = Instant::now();
    conn.send(&request)?;
    let line = conn.recv(ANSWER_LIMIT)?;
    let elapsed = ms(start.elapsed());
    let frame: serde_json::Value = serde_json::from_str(&line)?;
    expect_kind(&frame, "window")?;
    let page = Page {
        events: frame["events"].as_array().map_or(0, Vec::len),
        truncated: frame["budget_truncated"] == true,
    };
    Ok((elapsed, page, frame))
}

/// P3.
pub fn p3(
    fleet: &Fleet,
    transcripts: &Transcripts,
    options: &Options,
    specs: &[Spec],
) -> anyhow::Result<Vec<Row>> {
    let big = fleet.pane(BIG_PANE)?;
    let small = fleet.pane(SMALL_PANE)?;
    let mut conn = fleet.serve("p3")?;
    // Untimed warm-up: the cursor secret, the transcript's resolution.
    let (_, big_page, _) = window_ms(&mut conn, "warm-big", big, None)?;
    let (_, small_page, _) = window_ms(&mut conn, "warm-small", small, None)?;
    for page in [big_page, small_page] {
        if page.events == 0 {
            bail!("a window of a non-empty transcript held no events");
        }
    }
    let (mut on_big, mut on_small) = (Vec::new(), Vec::new());
    for i in 0..options.samples {
        on_big.push(window_ms(&mut conn, &format!("b{i}"), big, None)?.0);
        on_small.push(window_ms(&mut conn, &format!("s{i}"), small, None)?.0);
    }
    conn.close()?;
    Ok(vec![
        Row::new(&specs[0], "ms", Summary::of(&on_big))
            .against(
                format!("the same on {}", bytes(transcripts.small_bytes)),
                Summary::of(&on_small),
            )
            .ratio()
            .note(format!(
                "each page held {} of the 200 headers asked for{}; both sides include the read \
                 of the pane a window starts from (`list-panes -t`, its window's panes); records \
                 are ~4 KiB of \
                 real JSONL, {} written in {:.1} s",
                big_page.events,
                if big_page.truncated {
                    ", ended by the default 32 KiB frame budget"
                } else {
                    ""
                },
                bytes(transcripts.big_bytes),
                transcripts.write_s
            )),
    ])
}
