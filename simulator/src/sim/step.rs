//! `corral-sim step` and `corral-sim pane add|kill`: change one pane the way an agent's hooks,
//! a person or the system would, with real `set-option -p` semantics on either backend.
//!
//! Stamp rules: `--state` also stamps `@agent_since` = now (unless `--since` or `--keep-since`);
//! any `@agent_*` change also stamps `@agent_stamped_at` = now (unless `--stamped-at` or
//! `--no-stamp`). Times take epoch ms, `now`, or `-90s` / `+5m`.
//!
//! A step is worked out first, from its options and "now" alone ([`writes`]: the pane options it
//! sets and unsets), then done: a hook request parked or removed, a question served, the pane
//! moved (its program respawned), and the title and options sent to tmux in one batch.

use std::path::{Path, PathBuf};

use anyhow::{Context, bail};
use golden::sim_file::{PaneDetail, SimFile};
use schema::PaneOption;
use serde_json::{Map, Value};

use super::api;
use super::git;
use super::input;
use super::park::park;
use super::simfile;
use super::tmux::{Cmd, Tmux, cmd};
use crate::time;

/// Everything a step can change on a pane. Times are epoch ms, `now`, or `-90s` / `+5m`.
#[derive(Debug, Clone, Default)]
pub struct StepOptions {
    /// `@agent_name`.
    pub agent: Option<String>,
    /// `@agent_state` (any token, so a host's handling of a bad one can be tested).
    pub state: Option<String>,
    /// `@agent_detail`.
    pub detail: Option<String>,
    /// `@agent_since` (default with `state`: now).
    pub since: Option<String>,
    /// With `state`, leave `@agent_since` alone.
    pub keep_since: bool,
    /// `@agent_turn_at`.
    pub turn_at: Option<String>,
    /// `@agent_stamped_at` (default: now, whenever an `@agent_` option changes).
    pub stamped_at: Option<String>,
    /// Do not stamp `@agent_stamped_at`.
    pub no_stamp: bool,
    /// Set `@agent_attention`.
    pub attention: bool,
    /// Unset `@agent_attention`.
    pub no_attention: bool,
    /// `@agent_context` percent (also stamps `@agent_context_at`, default now).
    pub context: Option<u8>,
    /// `@agent_context_at`.
    pub context_at: Option<String>,
    /// `@agent_mute_until`.
    pub mute_until: Option<String>,
    /// `@agent_transcript`.
    pub transcript: Option<String>,
    /// `@agent_session`.
    pub session_id: Option<String>,
    /// `@agent_pending_tool`.
    pub pending_tool: Option<String>,
    /// `@agent_pending_call`.
    pub pending_call: Option<String>,
    /// `@agent_api_endpoint`; `auto` takes the URL of the running `corral-sim api serve`.
    pub api_endpoint: Option<String>,
    /// `@agent_permission_request` (the id only; see `park_request`).
    pub permission_request: Option<String>,
    /// Park a hook request `<runtime>/requests/<ID>.json` and stamp `@agent_permission_request`.
    pub park_request: Option<String>,
    /// Tool name of the parked request.
    pub tool: Option<String>,
    /// Tool input of the parked request, a JSON object.
    pub tool_input: Option<String>,
    /// Remove a parked request file (an expired hold); the option is left alone.
    pub unpark: Option<String>,
    /// `@agent_question_request`.
    pub question_request: Option<String>,
    /// The questions of `question_request`, a JSON array, served by `corral-sim api serve`.
    pub questions: Option<String>,
    /// Options to set, each `@OPTION=VALUE` (any option) or `KEY=VALUE` (a contract option).
    pub set: Vec<String>,
    /// Options to unset: `detail`, `agent_detail` or `@agent_detail`.
    pub unset: Vec<String>,
    /// Pane title (`select-pane -T`).
    pub title: Option<String>,
    /// Move the pane to a directory (respawns its program there).
    pub cwd: Option<PathBuf>,
    /// Move the pane to a fixture repo or worktree (respawns its program there).
    pub repo: Option<String>,
    /// Check out (or create) a branch in the pane's repository.
    pub checkout: Option<String>,
    /// Host runtime dir for parked requests (default: sim.json's).
    pub runtime_dir: Option<PathBuf>,
    /// Pin "now" (epoch ms); else `CORRAL_SIM_NOW_MS`, else the clock.
    pub now_ms: Option<u64>,
}

/// What a step writes to the pane's options, and the moments a request it parks is dated by.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Writes {
    /// `set-option -p`, in order: the option's name and its value.
    pub sets: Vec<(String, String)>,
    /// `set-option -p -u`, in order.
    pub unsets: Vec<String>,
    /// The `@agent_since` it stamps.
    pub since: Option<u64>,
    /// The `@agent_turn_at` it stamps.
    pub turn_at: Option<u64>,
    /// The `@agent_stamped_at` it stamps.
    pub stamped_at: Option<u64>,
}

/// The option a `--set` or `--unset` names: any `@option` as it is (a test may stamp one outside
/// the contract), else a contract option by its key (`detail`) or its bare name (`agent_detail`).
fn option_name(flag: &str, name: &str) -> anyhow::Result<String> {
    if name.starts_with('@') {
        return Ok(name.to_owned());
    }
    PaneOption::ALL
        .iter()
        .find(|option| option.key() == name || option.bare() == name)
        .map(|option| option.as_str().to_owned())
        .with_context(|| {
            format!("{flag} {name:?}: no pane option of the contract; name another as @OPTION")
        })
}

/// The writes of a step with `options` at `now`. `api_endpoint` is what `options.api_endpoint`
/// stands for (`auto` resolved).
pub fn writes(
    options: &StepOptions,
    now: u64,
    api_endpoint: Option<String>,
) -> anyhow::Result<Writes> {
    let at = |text: &str| golden::clock::relative(text, now).map_err(anyhow::Error::msg);
    let mut sets: Vec<(String, String)> = Vec::new();
    let mut push = |option: PaneOption, value: Option<String>| {
        if let Some(value) = value {
            sets.push((option.as_str().to_owned(), value));
        }
    };
    push(PaneOption::Name, options.agent.clone());
    push(PaneOption::State, options.state.clone());
    push(PaneOption::Detail, options.detail.clone());
    let since = match (&options.since, &options.state) {
        (Some(text), _) => Some(at(text)?),
        (None, Some(_)) if !options.keep_since => Some(now),
        _ => None,
    };
    push(PaneOption::Since, since.map(|ms| ms.to_string()));
    let turn_at = options.turn_at.as_deref().map(at).transpose()?;
    push(PaneOption::TurnAt, turn_at.map(|ms| ms.to_string()));
    push(PaneOption::Attention, options.attention.then(|| "1".into()));
    push(PaneOption::Session, options.session_id.clone());
    push(PaneOption::Transcript, options.transcript.clone());
    push(
        PaneOption::PermissionRequest,
        options.permission_request.clone(),
    );
    push(
        PaneOption::QuestionRequest,
        options.question_request.clone(),
    );
    push(PaneOption::ApiEndpoint, api_endpoint);
    push(PaneOption::PendingTool, options.pending_tool.clone());
    push(PaneOption::PendingCall, options.pending_call.clone());
    if let Some(context) = options.context {
        if context > 100 {
            bail!("--context {context} is over 100");
        }
        push(PaneOption::Context, Some(context.to_string()));
        let ms = options
            .context_at
            .as_deref()
            .map(at)
            .transpose()?
            .unwrap_or(now);
        push(PaneOption::ContextAt, Some(ms.to_string()));
    } else if let Some(text) = &options.context_at {
        push(PaneOption::ContextAt, Some(at(text)?.to_string()));
    }
    if let Some(text) = &options.mute_until {
        push(PaneOption::MuteUntil, Some(at(text)?.to_string()));
    }
    push(PaneOption::PermissionRequest, options.park_request.clone());
    for pair in &options.set {
        let Some((key, value)) = pair.split_once('=') else {
            bail!("--set {pair:?}: use @OPTION=VALUE");
        };
        sets.push((option_name("--set", key)?, value.to_owned()));
    }
    let mut unsets = options
        .unset
        .iter()
        .map(|name| option_name("--unset", name))
        .collect::<anyhow::Result<Vec<String>>>()?;
    if options.no_attention {
        unsets.push(PaneOption::Attention.as_str().to_owned());
    }
    let touches_agent = sets
        .iter()
        .map(|(name, _)| name)
        .chain(&unsets)
        .any(|name| name.starts_with(PaneOption::PREFIX));
    let stamped_at = match &options.stamped_at {
        Some(text) => Some(at(text)?),
        None if touches_agent && !options.no_stamp => Some(now),
        None => None,
    };
    if let Some(ms) = stamped_at {
        sets.push((PaneOption::StampedAt.as_str().to_owned(), ms.to_string()));
    }
    Ok(Writes {
        sets,
        unsets,
        since,
        turn_at,
        stamped_at,
    })
}

/// What `--api-endpoint` stands for: the URL given, or for `auto` the running `corral-sim api
/// serve`'s.
fn api_endpoint(sim_dir: &Path, given: Option<&str>) -> anyhow::Result<Option<String>> {
    match given {
        Some("auto") => api::endpoint(sim_dir).map(Some),
        given => Ok(given.map(str::to_owned)),
    }
}

/// Applies a step to pane `given` (fixture name or `%N`).
pub fn step(sim_dir: &Path, given: &str, options: &StepOptions) -> anyhow::Result<()> {
    let mut sim = simfile::load(sim_dir)?;
    let (name, id) = sim.pane(given)?;
    let tmux = Tmux::of(&sim);
    let now = time::now(options.now_ms)?;
    let endpoint = api_endpoint(sim_dir, options.api_endpoint.as_deref())?;
    let writes = writes(options, now, endpoint)?;
    let runtime = options
        .runtime_dir
        .clone()
        .unwrap_or_else(|| PathBuf::from(&sim.runtime_dir));
    if let Some(request) = &options.park_request {
        let before = episode(&tmux, sim_dir, &id)?;
        park_request(&runtime, &id, request, options, &writes, before, now)?;
    }
    if let Some(request) = &options.unpark {
        unpark(&runtime, request)?;
    }
    if let Some(questions) = &options.questions {
        let session = sim.details.get(&name).and_then(|d| d.session_id.clone());
        let request = options.question_request.clone().unwrap_or_default();
        ask(sim_dir, request, session, questions)?;
    }
    let moved_to = destination(&sim, options)?;
    let respawned = moved_to.is_some();
    let detail = sim.details.entry(name).or_default();
    let mut commands: Vec<Cmd> = Vec::new();
    if let Some(dir) = moved_to {
        commands.push(respawn(sim_dir, &id, &dir)?);
        detail.cwd = dir.display().to_string();
    }
    if let Some(branch) = &options.checkout {
        git::checkout(Path::new(&detail.cwd), branch)?;
    }
    if let Some(title) = &options.title {
        commands.push(cmd(&["select-pane", "-t", &id, "-T", title]));
    }
    commands.extend(option_commands(&id, &writes));
    if let Some(agent) = &options.agent {
        detail.agent = Some(agent.clone());
    }
    if let Some(session) = &options.session_id {
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

/// The `set-option -p` commands that make `writes` on pane `id`: the sets, then the unsets.
fn option_commands(id: &str, writes: &Writes) -> Vec<Cmd> {
    let sets = writes
        .sets
        .iter()
        .map(|(name, value)| cmd(&["set-option", "-p", "-t", id, name, value]));
    let unsets = writes
        .unsets
        .iter()
        .map(|name| cmd(&["set-option", "-p", "-u", "-t", id, name]));
    sets.chain(unsets).collect()
}

/// What a pane's options say of its episode and its session before a step.
#[derive(Debug, Clone, Default)]
struct Episode {
    since: Option<u64>,
    turn_at: Option<u64>,
    session: Option<String>,
}

/// Reads pane `id`'s [`Episode`].
fn episode(tmux: &Tmux, sim_dir: &Path, id: &str) -> anyhow::Result<Episode> {
    let asked =
        [PaneOption::Since, PaneOption::TurnAt, PaneOption::Session].map(PaneOption::format);
    let format = asked.join(" ");
    let current = tmux.ok(
        &[cmd(&["display-message", "-p", "-t", id, &format])],
        sim_dir,
    )?;
    let mut fields = current.trim_end_matches('\n').splitn(3, ' ');
    Ok(Episode {
        since: fields.next().and_then(|f| f.parse::<u64>().ok()),
        turn_at: fields.next().and_then(|f| f.parse::<u64>().ok()),
        session: fields.next().filter(|s| !s.is_empty()).map(str::to_owned),
    })
}

/// Parks hook request `request` for pane `id` in `runtime`, dated by the episode the step
/// leaves the pane in (its own `@agent_since` and `@agent_turn_at`, else those `before` it),
/// in the step's session, else the pane's.
fn park_request(
    runtime: &Path,
    id: &str,
    request: &str,
    options: &StepOptions,
    writes: &Writes,
    before: Episode,
    now: u64,
) -> anyhow::Result<()> {
    let episode = writes
        .since
        .or(before.since)
        .unwrap_or(0)
        .max(writes.turn_at.or(before.turn_at).unwrap_or(0));
    let input: Map<String, Value> = match &options.tool_input {
        Some(text) => serde_json::from_str(text).context("--tool-input must be a JSON object")?,
        None => Map::new(),
    };
    let tool = options
        .tool
        .as_deref()
        .context("--park-request needs --tool")?;
    let session = options.session_id.clone().or(before.session);
    park(
        runtime,
        request,
        id,
        session.as_deref(),
        tool,
        &input,
        episode,
        writes.stamped_at.unwrap_or(now),
    )?;
    Ok(())
}

/// Removes parked request `request` from `runtime` (an expired hold); gone already is fine.
fn unpark(runtime: &Path, request: &str) -> anyhow::Result<()> {
    let path = runtime.join("requests").join(format!("{request}.json"));
    match std::fs::remove_file(&path) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
            Err(e).with_context(|| format!("removing {}", path.display()))
        }
        _ => Ok(()),
    }
}

/// Serves `questions` (a JSON array) through the agent API as request `request` of `session`.
fn ask(
    sim_dir: &Path,
    request: String,
    session: Option<String>,
    questions: &str,
) -> anyhow::Result<()> {
    let questions =
        serde_json::from_str(questions).context("--questions must be a JSON array of questions")?;
    api::pend(
        sim_dir,
        api::Pending {
            request_id: request,
            session_id: session,
            questions,
        },
    )
}

/// Where a step moves the pane: `cwd`, or the directory of fixture repo or worktree `repo`.
fn destination(sim: &SimFile, options: &StepOptions) -> anyhow::Result<Option<PathBuf>> {
    match (&options.cwd, &options.repo) {
        (Some(dir), _) => Ok(Some(dir.clone())),
        (None, Some(repo)) => sim
            .repos
            .get(repo)
            .map(|dir| Some(PathBuf::from(dir)))
            .with_context(|| format!("no repo or worktree named {repo:?} in sim.json")),
        (None, None) => Ok(None),
    }
}

/// The command that restarts pane `id`'s program in `dir`, which is made if missing.
fn respawn(sim_dir: &Path, id: &str, dir: &Path) -> anyhow::Result<Cmd> {
    std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    let mut respawn = cmd(&[
        "respawn-pane",
        "-k",
        "-t",
        id,
        "-c",
        &dir.display().to_string(),
    ]);
    respawn.extend(input::program(sim_dir));
    Ok(respawn)
}

/// Where a new pane goes.
#[derive(Debug, Clone)]
pub struct NewPane {
    /// Fixture-local name for the new pane.
    pub name: String,
    /// Session to add it to (created when missing).
    pub session: String,
    /// Put it in a new window of the session instead of splitting the last window.
    pub new_window: bool,
}

/// Adds a pane and applies `options` to it; records it in sim.json, returns its id.
pub fn add(sim_dir: &Path, add: &NewPane, options: &StepOptions) -> anyhow::Result<String> {
    let mut sim = simfile::load(sim_dir)?;
    if sim.panes.contains_key(&add.name) || add.name.starts_with('%') || add.name.is_empty() {
        bail!("pane name {:?} is taken or invalid", add.name);
    }
    let tmux = Tmux::of(&sim);
    let cwd = match (&options.cwd, &options.repo) {
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
    let rest = StepOptions {
        cwd: None,
        repo: None,
        ..options.clone()
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

#[cfg(test)]
mod tests {
    use super::*;

    const NOW: u64 = 1_700_000_000_000;

    /// The writes of `options` at [`NOW`], as `(sets, unsets)`.
    fn check(options: StepOptions) -> (Vec<(String, String)>, Vec<String>) {
        let endpoint = options.api_endpoint.clone();
        let writes = writes(&options, NOW, endpoint).unwrap();
        (writes.sets, writes.unsets)
    }

    fn sets(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
        pairs
            .iter()
            .map(|(name, value)| ((*name).to_owned(), (*value).to_owned()))
            .collect()
    }

    #[test]
    fn a_state_stamps_since_and_stamped_at_now() {
        let options = StepOptions {
            state: Some("blocked".into()),
            detail: Some("permission".into()),
            ..StepOptions::default()
        };
        let now = NOW.to_string();
        assert_eq!(
            check(options).0,
            sets(&[
                ("@agent_state", "blocked"),
                ("@agent_detail", "permission"),
                ("@agent_since", &now),
                ("@agent_stamped_at", &now),
            ])
        );
    }

    #[test]
    fn since_and_stamped_at_can_be_given_kept_or_left_out() {
        let kept = StepOptions {
            state: Some("working".into()),
            keep_since: true,
            no_stamp: true,
            ..StepOptions::default()
        };
        assert_eq!(check(kept).0, sets(&[("@agent_state", "working")]));
        let given = StepOptions {
            state: Some("idle".into()),
            since: Some("-90s".into()),
            stamped_at: Some("5".into()),
            ..StepOptions::default()
        };
        let since = (NOW - 90_000).to_string();
        assert_eq!(
            check(given).0,
            sets(&[
                ("@agent_state", "idle"),
                ("@agent_since", &since),
                ("@agent_stamped_at", "5"),
            ])
        );
    }

    #[test]
    fn a_context_reading_is_dated_and_over_100_is_refused() {
        let options = StepOptions {
            context: Some(85),
            no_stamp: true,
            ..StepOptions::default()
        };
        let now = NOW.to_string();
        assert_eq!(
            check(options.clone()).0,
            sets(&[("@agent_context", "85"), ("@agent_context_at", &now)])
        );
        let over = StepOptions {
            context: Some(101),
            ..options
        };
        let err = writes(&over, NOW, None).unwrap_err().to_string();
        assert_eq!(err, "--context 101 is over 100");
    }

    #[test]
    fn set_and_unset_take_any_at_option_or_a_contract_key() {
        let options = StepOptions {
            set: vec!["@agent_notified_at=1".into(), "detail=x=y".into()],
            unset: vec![
                "pending_tool".into(),
                "agent_detail".into(),
                "@other".into(),
            ],
            no_attention: true,
            ..StepOptions::default()
        };
        let now = NOW.to_string();
        let (sets_, unsets) = check(options);
        assert_eq!(
            sets_,
            sets(&[
                ("@agent_notified_at", "1"),
                ("@agent_detail", "x=y"),
                ("@agent_stamped_at", &now),
            ])
        );
        assert_eq!(
            unsets,
            [
                "@agent_pending_tool",
                "@agent_detail",
                "@other",
                "@agent_attention"
            ]
        );
    }

    #[test]
    fn an_option_outside_the_contract_stamps_nothing() {
        let options = StepOptions {
            set: vec!["@user_mark=1".into()],
            ..StepOptions::default()
        };
        assert_eq!(check(options), (sets(&[("@user_mark", "1")]), vec![]));
        assert_eq!(check(StepOptions::default()), (vec![], vec![]));
    }

    #[test]
    fn a_bad_set_or_unset_or_time_is_refused() {
        for options in [
            StepOptions {
                set: vec!["@agent_state".into()],
                ..StepOptions::default()
            },
            StepOptions {
                unset: vec!["colour".into()],
                ..StepOptions::default()
            },
            StepOptions {
                turn_at: Some("soon".into()),
                ..StepOptions::default()
            },
        ] {
            assert!(writes(&options, NOW, None).is_err(), "{options:?}");
        }
    }

    #[test]
    fn a_parked_request_is_stamped_after_the_options_given() {
        let options = StepOptions {
            permission_request: Some("a".into()),
            park_request: Some("b".into()),
            api_endpoint: Some("http://127.0.0.1:1".into()),
            stamped_at: Some("7".into()),
            ..StepOptions::default()
        };
        assert_eq!(
            check(options).0,
            sets(&[
                ("@agent_permission_request", "a"),
                ("@agent_api_endpoint", "http://127.0.0.1:1"),
                ("@agent_permission_request", "b"),
                ("@agent_stamped_at", "7"),
            ])
        );
    }
}
