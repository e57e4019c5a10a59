//! P2 and P2b: a `snapshot` round trip on one connection against what reading the fleet from tmux
//! costs at the least: the host's own `list-panes -a` command line (`corral internal
//! list-panes-command`: the same tmux, flags, socket and format), and the same read of only the
//! fields a wire row needs. The three are sampled in turn; every answer is checked to hold every
//! pane.

use std::time::Instant;

use anyhow::{Context, bail};

use super::super::cli::Options;
use super::super::conn::{ANSWER_LIMIT, expect_kind};
use super::super::fleet::Fleet;
use super::super::process::{command, output};
use super::super::report::{Row, Spec, bytes};
use super::super::stats::{Summary, ms};

/// A tmux command line the host reads the fleet with: `fields` is `host` (`serve`'s), `row`
/// (only a row's fields) or `notify` (the notification daemon's).
pub fn read_command(fleet: &Fleet, fields: &str) -> anyhow::Result<Vec<String>> {
    let mut cmd = fleet.corral();
    cmd.args(["internal", "list-panes-command", "--fields", fields]);
    let out = output(&mut cmd)?;
    let argv: Vec<String> =
        serde_json::from_slice(&out.stdout).context("reading list-panes-command's answer")?;
    if argv.is_empty() {
        bail!("list-panes-command printed an empty command line");
    }
    Ok(argv)
}

/// One run of `argv`, in ms, and its output's size; checked to list `panes` records.
pub fn list_ms(fleet: &Fleet, argv: &[String], panes: usize) -> anyhow::Result<(f64, usize)> {
    let mut cmd = command(&argv[0]);
    fleet.env(&mut cmd);
    cmd.args(&argv[1..]);
    let start = Instant::now();
    let out = output(&mut cmd)?;
    let elapsed = ms(start.elapsed());
    // Each record starts with the record separator the host frames its reads with.
    let records = out.stdout.iter().filter(|&&b| b == 0x1e).count();
    if records != panes {
        bail!("list-panes listed {records} panes, not {panes}");
    }
    Ok((elapsed, out.stdout.len()))
}

/// P2 and P2b.
pub fn p2(fleet: &Fleet, options: &Options, specs: &[Spec]) -> anyhow::Result<Vec<Row>> {
    let panes = fleet.pane_count();
    let host = read_command(fleet, "host")?;
    let minimal = read_command(fleet, "row")?;
    let mut conn = fleet.serve("p2")?;
    let mut snapshot = |id: &str| -> anyhow::Result<(f64, usize)> {
        let request = format!(r#"{{"schema":1,"id":"{id}","t":"snapshot"}}"#);
        let start = Instant::now();
        conn.send(&request)?;
        let line = conn.recv(ANSWER_LIMIT)?;
        let elapsed = ms(start.elapsed());
        let frame: serde_json::Value = serde_json::from_str(&line)?;
        expect_kind(&frame, "snapshot")?;
        let rows = frame["agents"].as_array().map_or(0, Vec::len);
        if rows != panes {
            bail!("the snapshot held {rows} rows, not {panes}");
        }
        Ok((elapsed, line.len()))
    };
    // Untimed warm-up: the repositories' facts are cached after the first read.
    snapshot("warm")?;
    list_ms(fleet, &host, panes)?;
    list_ms(fleet, &minimal, panes)?;
    let (mut snap, mut full, mut lean) = (Vec::new(), Vec::new(), Vec::new());
    let (mut frame_bytes, mut full_bytes, mut lean_bytes) = (0, 0, 0);
    for i in 0..options.samples {
        let (t, n) = snapshot(&format!("s{i}"))?;
        snap.push(t);
        frame_bytes = n;
        let (t, n) = list_ms(fleet, &host, panes)?;
        full.push(t);
        full_bytes = n;
        let (t, n) = list_ms(fleet, &minimal, panes)?;
        lean.push(t);
        lean_bytes = n;
    }
    conn.close()?;
    let snap = Summary::of(&snap);
    Ok(vec![
        Row::new(&specs[0], "ms", snap)
            .against("`tmux list-panes -a`, the host's format", Summary::of(&full))
            .ratio()
            .note(format!(
                "the snapshot frame is {} for {panes} rows; the host's read prints {} ({} fields a pane)",
                bytes(frame_bytes as u64),
                bytes(full_bytes as u64),
                fields(&host)
            )),
        Row::new(&specs[1], "ms", snap)
            .against("`list-panes`, only a row's fields", Summary::of(&lean))
            .ratio()
            .note(format!(
                "the cheapest read that still carries every field of a row prints {} ({} fields a pane)",
                bytes(lean_bytes as u64),
                fields(&minimal)
            )),
    ])
}

/// How many `#{…}` fields the command line's format asks for.
fn fields(argv: &[String]) -> usize {
    argv.last().map_or(0, |format| format.matches("#{").count())
}
