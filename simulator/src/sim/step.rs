//! `corral-sim step` and `corral-sim pane add|kill`: change one pane the way an agent's hooks,
//! a person or the system would, with real `set-option -p` semantics on either backend.
//!
//! Stamp rules: `--state` also stamps `@agent_since` = now (unless `--since` or `--keep-since`);
//! any `@agent_*` change also stamps `@agent_stamped_at` = now (unless `--stamped-at` or
//! `--no-stamp`). Times take epoch ms, `now`, or `-90s` / `+5m`.

use std::path::{Path, PathBuf};

use anyhow::{Context, bail};
use golden::sim_file::{PaneDetail, SimFile};
use serde_json::{Map, Value};

use super::api;
use super::git;
use super::input;
use super::park::park;
use super::simfile;
use super::tmux::{Cmd, Tmux, cmd};
use crate::time;

/// Everything a step can change on a pane.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct StepArgs {
    /// `@agent_name`.
    #[arg(long)]
    pub agent: Option<String>,
    /// `@agent_state` (any token, so a host's handling of a bad one can be tested).
    #[arg(long)]
    pub state: Option<String>,
    /// `@agent_detail`.
    #[arg(long)]
    pub detail: Option<String>,
    /// `@agent_since` (default with --state: now).
    #[arg(long, allow_hyphen_values = true)]
    pub since: Option<String>,
    /// With --state, leave `@agent_since` alone.
    #[arg(long)]
    pub keep_since: bool,
    /// `@agent_turn_at`.
    #[arg(long, allow_hyphen_values = true)]
    pub turn_at: Option<String>,
    /// `@agent_stamped_at` (default: now, whenever an @agent_ option changes).
    #[arg(long, allow_hyphen_values = true)]
    pub stamped_at: Option<String>,
    /// Do not stamp `@agent_stamped_at`.
    #[arg(long)]
    pub no_stamp: bool,
    /// Set `@agent_attention`.
    #[arg(long)]
    pub attention: bool,
    /// Unset `@agent_attention`.
    #[arg(long, conflicts_with = "attention")]
    pub no_attention: bool,
    /// `@agent_context` percent (also stamps `@agent_context_at`, default now).
    #[arg(long)]
    pub context: Option<u8>,
    /// `@agent_context_at`.
    #[arg(long, allow_hyphen_values = true)]
    pub context_at: Option<String>,
    /// `@agent_mute_until` (`99999999999999`: until cleared).
    #[arg(long, allow_hyphen_values = true)]
    pub mute_until: Option<String>,
    /// `@agent_transcript`.
    #[arg(long)]
    pub transcript: Option<String>,
    /// `@agent_session`.
    #[arg(long)]
    pub session_id: Option<String>,
    /// `@agent_pending_tool`.
    #[arg(long)]
    pub pending_tool: Option<String>,
    /// `@agent_pending_call`.
    #[arg(long)]
    pub pending_call: Option<String>,
    /// `@agent_api_endpoint`; `auto` takes the URL of the running `corral-sim api serve`.
    #[arg(long)]
    pub api_endpoint: Option<String>,
    /// `@agent_permission_request` (the id only; see --park-request).
    #[arg(long)]
    pub permission_request: Option<String>,
    /// Park a hook request `<runtime>/requests/<ID>.json` and stamp `@agent_permission_request`.
    #[arg(long, value_name = "ID")]
    pub park_request: Option<String>,
    /// Tool name of the parked request.
    #[arg(long, requires = "park_request")]
    pub tool: Option<String>,
    /// Tool input of the parked request, a JSON object.
    #[arg(long, requires = "park_request")]
    pub tool_input: Option<String>,
    /// Remove a parked request file (an expired hold); the option is left alone.
    #[arg(long, value_name = "ID")]
    pub unpark: Option<String>,
    /// `@agent_question_request`.
    #[arg(long)]
    pub question_request: Option<String>,
    /// The questions of --question-request, a JSON array, served by `corral-sim api serve`.
    #[arg(long, requires = "question_request")]
    pub questions: Option<String>,
    /// Any option: `--set @agent_notified_at=1700000000000` (repeatable).
    #[arg(long = "set", value_name = "@OPTION=VALUE")]
    pub set: Vec<String>,
    /// Unset an option: `detail`, `agent_detail` or `@agent_detail` (repeatable).
    #[arg(long, value_name = "OPTION")]
    pub unset: Vec<String>,
    /// Pane title (`select-pane -T`).
    #[arg(long)]
    pub title: Option<String>,
    /// Move the pane to a directory (respawns its program there).
    #[arg(long, conflicts_with = "repo")]
    pub cwd: Option<PathBuf>,
    /// Move the pane to a fixture repo or worktree (respawns its program there).
    #[arg(long)]
    pub repo: Option<String>,
    /// Check out (or create) a branch in the pane's repository.
    #[arg(long)]
    pub checkout: Option<String>,
    /// Host runtime dir for parked requests (default: sim.json's, else the host's own rule).
    #[arg(long)]
    pub runtime_dir: Option<PathBuf>,
    /// Pin "now" (epoch ms); else CORRAL_SIM_NOW_MS, else the clock.
    #[arg(long)]
    pub now_ms: Option<u64>,
}

fn option_name(name: &str) -> String {
    if name.starts_with('@') {
        name.to_owned()
    } else if name.starts_with("agent_") {
        format!("@{name}")
    } else {
        format!("@agent_{name}")
    }
}

/// Applies a step to pane `given` (fixture name or `%N`).
pub fn step(sim_dir: &Path, given: &str, args: &StepArgs) -> anyhow::Result<()> {
    let mut sim = simfile::load(sim_dir)?;
    let (name, id) = sim.pane(given)?;
    let tmux = Tmux::of(&sim);
    let now = time::now(args.now_ms)?;
    let at = |text: &str| time::relative(text, now);
    let mut sets: Vec<(String, String)> = Vec::new();
    let mut push = |key: &str, value: String| sets.push((format!("@agent_{key}"), value));
    if let Some(agent) = &args.agent {
        push("name", agent.clone());
    }
    if let Some(state) = &args.state {
        push("state", state.clone());
    }
    if let Some(detail) = &args.detail {
        push("detail", detail.clone());
    }
    let since = match (&args.since, &args.state) {
        (Some(text), _) => Some(at(text)?),
        (None, Some(_)) if !args.keep_since => Some(now),
        _ => None,
    };
    if let Some(ms) = since {
        push("since", ms.to_string());
    }
    let turn_at = args.turn_at.as_deref().map(at).transpose()?;
    if let Some(ms) = turn_at {
        push("turn_at", ms.to_string());
    }
    if args.attention {
        push("attention", "1".into());
    }
    if let Some(session) = &args.session_id {
        push("session", session.clone());
    }
    if let Some(path) = &args.transcript {
        push("transcript", path.clone());
    }
    if let Some(request) = &args.permission_request {
        push("permission_request", request.clone());
    }
    if let Some(request) = &args.question_request {
        push("question_request", request.clone());
    }
    if let Some(url) = &args.api_endpoint {
        let url = if url == "auto" {
            api::endpoint(sim_dir)?
        } else {
            url.clone()
        };
        push("api_endpoint", url);
    }
    if let Some(tool) = &args.pending_tool {
        push("pending_tool", tool.clone());
    }
    if let Some(call) = &args.pending_call {
        push("pending_call", call.clone());
    }
    if let Some(context) = args.context {
        if context > 100 {
            bail!("--context {context} is over 100");
        }
        push("context", context.to_string());
        let ms = args
            .context_at
            .as_deref()
            .map(at)
            .transpose()?
            .unwrap_or(now);
        push("context_at", ms.to_string());
    } else if let Some(text) = &args.context_at {
        push("context_at", at(text)?.to_string());
    }
    if let Some(text) = &args.mute_until {
        push("mute_until", at(text)?.to_string());
    }
    if let Some(request) = &args.park_request {
        push("permission_request", request.clone());
    }
    for pair in &args.set {
        let Some((key, value)) = pair.split_once('=') else {
            bail!("--set {pair:?}: use @OPTION=VALUE");
        };
        sets.push((option_name(key), value.to_owned()));
    }
    let mut unsets: Vec<String> = args.unset.iter().map(|n| option_name(n)).collect();
    if args.no_attention {
        unsets.push("@agent_attention".into());
    }
    let touches_agent = sets.iter().any(|(k, _)| k.starts_with("@agent_"))
        || unsets.iter().any(|k| k.starts_with("@agent_"));
    let stamped_at = match &args.stamped_at {
        Some(text) => Some(at(text)?),
        None if touches_agent && !args.no_stamp => Some(now),
        None => None,
    };
    if let Some(ms) = stamped_at {
        sets.push(("@agent_stamped_at".into(), ms.to_string()));
    }

    if let Some(request) = &args.park_request {
        let current = tmux.ok(
            &[cmd(&[
                "display-message",
                "-p",
                "-t",
                &id,
                "#{@agent_since} #{@agent_turn_at} #{@agent_session}",
            ])],
            sim_dir,
        )?;
        let mut fields = current.trim_end_matches('\n').splitn(3, ' ');
        let old_since = fields.next().and_then(|f| f.parse::<u64>().ok());
        let old_turn = fields.next().and_then(|f| f.parse::<u64>().ok());
        let old_session = fields.next().filter(|s| !s.is_empty()).map(str::to_owned);
        let episode = since
            .or(old_since)
            .unwrap_or(0)
            .max(turn_at.or(old_turn).unwrap_or(0));
        let input: Map<String, Value> = match &args.tool_input {
            Some(text) => {
                serde_json::from_str(text).context("--tool-input must be a JSON object")?
            }
            None => Map::new(),
        };
        let tool = args
            .tool
            .as_deref()
            .context("--park-request needs --tool")?;
        let session = args.session_id.clone().or(old_session);
        park(
            &runtime(&sim, args),
            request,
            &id,
            session.as_deref(),
            tool,
            &input,
            episode,
            stamped_at.unwrap_or(now),
        )?;
    }
    if let Some(request) = &args.unpark {
        let path = runtime(&sim, args)
            .join("requests")
            .join(format!("{request}.json"));
        match std::fs::remove_file(&path) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                return Err(e).with_context(|| format!("removing {}", path.display()));
            }
            _ => {}
        }
    }
    if let Some(text) = &args.questions {
        let questions =
            serde_json::from_str(text).context("--questions must be a JSON array of questions")?;
        let request = args.question_request.clone().unwrap_or_default();
        let session = sim.details.get(&name).and_then(|d| d.session_id.clone());
        api::edit(sim_dir, |s| {
            s.questions.retain(|q| q.request_id != request);
            s.questions.push(api::Pending {
                request_id: request,
                session_id: session,
                questions,
            });
        })?;
    }

    let mut commands: Vec<Cmd> = Vec::new();
    let mut respawned = false;
    let detail = sim.details.entry(name.clone()).or_default();
    let new_cwd = match (&args.cwd, &args.repo) {
        (Some(dir), _) => Some(dir.clone()),
        (None, Some(repo)) => Some(
            sim.repos
                .get(repo)
                .map(PathBuf::from)
                .with_context(|| format!("no repo or worktree named {repo:?} in sim.json"))?,
        ),
        _ => None,
    };
    if let Some(dir) = new_cwd {
        std::fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
        let dir = dir.display().to_string();
        let mut respawn = cmd(&["respawn-pane", "-k", "-t", &id, "-c", &dir]);
        respawn.extend(input::program(sim_dir));
        commands.push(respawn);
        respawned = true;
        detail.cwd = dir;
    }
    if let Some(branch) = &args.checkout {
        git::checkout(Path::new(&detail.cwd), branch)?;
    }
    if let Some(title) = &args.title {
        commands.push(cmd(&["select-pane", "-t", &id, "-T", title]));
    }
    for (key, value) in &sets {
        commands.push(cmd(&["set-option", "-p", "-t", &id, key, value]));
    }
    for key in &unsets {
        commands.push(cmd(&["set-option", "-p", "-u", "-t", &id, key]));
    }
    if let Some(agent) = &args.agent {
        detail.agent = Some(agent.clone());
    }
    if let Some(session) = &args.session_id {
        detail.session_id = Some(session.clone());
    }
    if respawned {
        input::unready(sim_dir, &id)?;
    }
    if !commands.is_empty() {
        tmux.batch(&commands, sim_dir)?;
    }
    if respawned {
        input::wait_ready(sim_dir, sim.backend, std::slice::from_ref(&id))?;
    }
    simfile::store(&sim, sim_dir)?;
    Ok(())
}

fn runtime(sim: &SimFile, args: &StepArgs) -> PathBuf {
    args.runtime_dir
        .clone()
        .unwrap_or_else(|| PathBuf::from(&sim.runtime_dir))
}

/// Where a new pane goes.
#[derive(Debug, Clone, clap::Args)]
pub struct AddArgs {
    /// Fixture-local name for the new pane.
    #[arg(long)]
    pub name: String,
    /// Session to add it to (created when missing).
    #[arg(long)]
    pub session: String,
    /// Put it in a new window of the session instead of splitting the last window.
    #[arg(long)]
    pub new_window: bool,
}

/// Adds a pane; prints nothing, records it in sim.json, returns its id.
pub fn add(sim_dir: &Path, add: &AddArgs, args: &StepArgs) -> anyhow::Result<String> {
    let mut sim = simfile::load(sim_dir)?;
    if sim.panes.contains_key(&add.name) || add.name.starts_with('%') || add.name.is_empty() {
        bail!("pane name {:?} is taken or invalid", add.name);
    }
    let tmux = Tmux::of(&sim);
    let cwd = match (&args.cwd, &args.repo) {
        (Some(dir), _) => dir.clone(),
        (None, Some(repo)) => PathBuf::from(
            sim.repos
                .get(repo)
                .with_context(|| format!("no repo or worktree named {repo:?}"))?,
        ),
        (None, None) => sim_dir.join("plain"),
    };
    std::fs::create_dir_all(&cwd)?;
    let cwd = cwd.display().to_string();
    let listed = tmux
        .run(
            &[cmd(&[
                "list-panes",
                "-a",
                "-F",
                "#{session_name} #{pane_id}",
            ])],
            sim_dir,
        )?
        .stdout;
    let last = listed
        .lines()
        .filter_map(|l| l.split_once(' '))
        .rfind(|(s, _)| *s == add.session)
        .map(|(_, id)| id.to_owned());
    let print = ["-P", "-F", "#{pane_id}"];
    let mut create: Vec<String> = match (&last, add.new_window) {
        (None, _) => cmd(&[
            "new-session",
            "-d",
            "-s",
            &add.session,
            "-x",
            "400",
            "-y",
            "200",
        ]),
        (Some(_), true) => cmd(&["new-window", "-d", "-t", &format!("{}:", add.session)]),
        (Some(last), false) => cmd(&["split-window", "-d", "-t", last]),
    };
    create.extend(cmd(&print));
    create.extend(cmd(&["-c", &cwd]));
    create.extend(input::program(sim_dir));
    let out = tmux.ok(&[create], sim_dir)?;
    let id = out.trim().to_owned();
    if !id.starts_with('%') {
        bail!("tmux printed {out:?} for the new pane's id");
    }
    input::wait_ready(sim_dir, sim.backend, std::slice::from_ref(&id))?;
    if let (Some(_), false) = (&last, add.new_window) {
        tmux.ok(&[cmd(&["select-layout", "-t", &id, "tiled"])], sim_dir)?;
    }
    sim.panes.insert(add.name.clone(), id.clone());
    sim.details.insert(
        add.name.clone(),
        PaneDetail {
            cwd,
            ..PaneDetail::default()
        },
    );
    simfile::store(&sim, sim_dir)?;
    let rest = StepArgs {
        cwd: None,
        repo: None,
        ..args.clone()
    };
    step(sim_dir, &add.name, &rest)?;
    Ok(id)
}

/// Kills a pane (its vanish edge) and forgets it.
pub fn kill(sim_dir: &Path, given: &str) -> anyhow::Result<()> {
    let mut sim = simfile::load(sim_dir)?;
    let (name, id) = sim.pane(given)?;
    Tmux::of(&sim).ok(&[cmd(&["kill-pane", "-t", &id])], sim_dir)?;
    sim.panes.remove(&name);
    sim.details.remove(&name);
    simfile::store(&sim, sim_dir)
}
