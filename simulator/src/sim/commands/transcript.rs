//! `transcript write|grow|big|rewrite|truncate|replace|rotate`: a pane's transcript (or any file
//! given by path) written, grown, rewritten in place, replaced or rotated.

use std::path::{Path, PathBuf};

use anyhow::Context;
use golden::fixture::TranscriptFormat;

use super::super::cli::{self, TranscriptAction, Which, WriteArgs};
use super::super::step::{self, StepOptions};
use super::super::transcript::{self, Generator, Recipe};
use super::super::{git, hook, print_line, simfile};
use crate::time;

/// Runs one `transcript` subcommand.
pub fn run(sim_dir: &Path, action: TranscriptAction) -> anyhow::Result<()> {
    match action {
        TranscriptAction::Write(args) => write(sim_dir, args),
        TranscriptAction::Grow {
            which,
            events,
            unknown_every,
            pending_call,
        } => {
            let (path, known) = resolve(sim_dir, &which)?;
            if let Some(format) = known {
                transcript::generates(format)?;
            }
            Generator::resume(&path)?.append(&path, events, unknown_every, pending_call)
        }
        TranscriptAction::Big {
            which,
            bytes,
            format,
        } => big(sim_dir, &which, &bytes, format),
        TranscriptAction::Rewrite { which } => transcript::rewrite(&resolve(sim_dir, &which)?.0),
        TranscriptAction::Truncate {
            which,
            bytes,
            lines,
        } => {
            transcript::truncate(&resolve(sim_dir, &which)?.0, bytes, lines)?;
            Ok(())
        }
        TranscriptAction::Replace { which, events } => {
            let (path, _) = resolve(sim_dir, &which)?;
            let content = events
                .map(|n| transcript::regenerated(&path, n))
                .transpose()?;
            transcript::replace(&path, content)
        }
        TranscriptAction::Rotate { which, events } => {
            let (path, _) = resolve(sim_dir, &which)?;
            print_line(&transcript::rotate(&path, events)?.display().to_string());
            Ok(())
        }
    }
}

/// `transcript write`: a new transcript for a pane, remembered in sim.json and (unless told not
/// to) stamped on the pane; prints its path.
fn write(sim_dir: &Path, args: WriteArgs) -> anyhow::Result<()> {
    let WriteArgs {
        pane,
        format,
        sample,
        corpus,
        events,
        unknown_every,
        pending_call,
        path,
        session_id,
        no_stamp,
    } = args;
    let mut sim = simfile::load(sim_dir)?;
    let (name, _) = sim.pane(&pane)?;
    let detail = sim.details.get(&name).cloned().unwrap_or_default();
    let session = session_id
        .or(detail.session_id.clone())
        .unwrap_or_else(|| golden::plan::session_id_for(&name));
    let now = time::now(None)?;
    let cwd = if detail.cwd.is_empty() {
        sim_dir.display().to_string()
    } else {
        detail.cwd.clone()
    };
    let path = path.unwrap_or_else(|| {
        transcript::store_path(
            &sim_dir.join("home"),
            format,
            &cwd,
            &session,
            now,
            sample.as_deref(),
        )
    });
    match sample {
        Some(sample) => transcript::write_sample(&path, &sample_file(sim_dir, &sample)?)?,
        None => {
            let branch = git::branch(Path::new(&cwd)).unwrap_or_else(|_| "main".into());
            let recipe = Recipe {
                corpus,
                events: events.unwrap_or(if corpus { 0 } else { 40 }),
                unknown_every,
                pending_call,
                hole: 0,
            };
            transcript::write(&path, format, &session, (&cwd, &branch), now, &recipe)?;
        }
    }
    let entry = sim.details.entry(name.clone()).or_default();
    entry.transcript = Some((path.display().to_string(), format));
    entry.session_id = Some(session.clone());
    simfile::store(&sim, sim_dir)?;
    if !no_stamp {
        step::step(
            sim_dir,
            &name,
            &StepOptions {
                transcript: Some(path.display().to_string()),
                session_id: Some(session),
                no_stamp: true,
                ..StepOptions::default()
            },
        )?;
    }
    print_line(&path.display().to_string());
    Ok(())
}

/// `transcript big`: grows a transcript (made if missing) to at least a size; prints its path.
fn big(
    sim_dir: &Path,
    which: &Which,
    bytes: &str,
    format: Option<TranscriptFormat>,
) -> anyhow::Result<()> {
    let (path, known) = resolve(sim_dir, which)?;
    if let Some(format) = format.or(known) {
        transcript::generates(format)?;
    }
    let target = cli::parse_size(bytes)?;
    let mut generator = if path.exists() {
        Generator::resume(&path)?
    } else {
        let format = format
            .or(known)
            .context("--format is needed for a new file")?;
        Generator::new(
            format,
            &golden::plan::session_id_for(&path.display().to_string()),
            "/",
            "main",
            time::now(None)?,
        )
    };
    generator.fill_to(&path, target)?;
    print_line(&path.display().to_string());
    Ok(())
}

/// The transcript file `which` names, and its format when sim.json knows it.
fn resolve(sim_dir: &Path, which: &Which) -> anyhow::Result<(PathBuf, Option<TranscriptFormat>)> {
    if let Some(path) = &which.path {
        return Ok((path.clone(), None));
    }
    let sim = simfile::load(sim_dir)?;
    let (name, _) = sim.pane(which.pane.as_deref().unwrap_or_default())?;
    let (path, format) = sim
        .details
        .get(&name)
        .and_then(|d| d.transcript.clone())
        .with_context(|| format!("pane {name} has no transcript (use `transcript write`)"))?;
    Ok((PathBuf::from(path), Some(format)))
}

/// `transcripts/<sample>` beside the fixture `up` brought up, as a fixture's `sample` is found.
fn sample_file(sim_dir: &Path, sample: &str) -> anyhow::Result<PathBuf> {
    golden::fixture::check_sample_name(sample).map_err(anyhow::Error::msg)?;
    let fixture = hook::fixture(sim_dir).context(
        "--sample names a file beside the fixture `up` brought up, and no fixture was brought up",
    )?;
    Ok(golden::fixture::sample_path(&fixture, sample))
}
