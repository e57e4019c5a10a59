//! `corral-sim up` and `down`: a fixture brought up on a backend through tmux's own commands
//! (the same command stream for the fake and a real scratch server, so both assign the same ids),
//! then titles and `@agent_*` options stamped with `select-pane -T` and `set-option -p`, repos,
//! transcripts (generated, or the fixture's samples as they are), parked hook requests and
//! pending questions written; `down` kills only that server.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use anyhow::{Context, bail};
use golden::Backend;
use golden::fixture::{Fixture, TranscriptSpec};
use golden::sim_file::{PaneDetail, SimFile};
use schema::PaneOption;

use super::api;
use super::git;
use super::hook;
use super::input;
use super::park::park;
use super::simfile;
use super::tmux::{Cmd, Tmux, cmd};
use super::transcript::{self, Recipe};
use golden::plan::{self, PlannedPane, PlannedSession};

/// Size of each session's windows on a real server, so many panes fit.
const SIZE: (&str, &str) = ("400", "200");

/// The tmux binary for a backend.
pub fn tmux_bin(backend: Backend) -> anyhow::Result<String> {
    match backend {
        Backend::Fake => {
            let exe = std::env::current_exe().context("locating corral-sim")?;
            let beside = exe.parent().unwrap_or(Path::new("/"));
            match fake_tmux(beside, std::env::var_os("PATH").as_deref()) {
                Some(fake) => Ok(fake.display().to_string()),
                None => bail!(
                    "corral-fake-tmux is missing: not in {} nor on PATH (it installs with \
                     corral-sim: cargo install --locked --path conformance)",
                    beside.display()
                ),
            }
        }
        Backend::Real => {
            let path = std::env::var_os("PATH").unwrap_or_default();
            std::env::split_paths(&path)
                .map(|dir| dir.join("tmux"))
                .find(|candidate| candidate.is_file())
                .map(|p| p.display().to_string())
                .context("tmux is not on PATH")
        }
    }
}

/// The fake tmux: beside `corral-sim` (where the kit installs it), else on the search path.
fn fake_tmux(beside: &Path, path: Option<&std::ffi::OsStr>) -> Option<PathBuf> {
    const NAME: &str = "corral-fake-tmux";
    let here = beside.join(NAME);
    if here.is_file() {
        return Some(here);
    }
    std::env::split_paths(path?)
        .map(|dir| dir.join(NAME))
        .find(|candidate| candidate.is_file())
}

/// Options of `up`.
#[derive(Debug, Clone)]
pub struct Up {
    /// Fixture file.
    pub fixture: PathBuf,
    /// Backend.
    pub backend: Backend,
    /// `-L` socket name.
    pub socket: String,
    /// "Now".
    pub now_ms: u64,
    /// Host runtime dir override.
    pub runtime_dir: Option<PathBuf>,
}

fn pane_cwd(sim_dir: &Path, pane: &PlannedPane) -> anyhow::Result<String> {
    let base = match &pane.repo {
        Some(repo) => sim_dir.join("repos").join(repo),
        None => sim_dir.join("plain"),
    };
    let dir = match &pane.dir {
        Some(sub) => base.join(sub),
        None => base,
    };
    std::fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
    Ok(dir.display().to_string())
}

/// The creation commands of a fleet, identical for both backends; every pane runs `program`.
fn creation(
    sessions: &[PlannedSession],
    cwds: &BTreeMap<String, String>,
    program: &[String],
) -> Vec<Cmd> {
    let with_program = |mut command: Cmd| {
        command.extend(program.iter().cloned());
        command
    };
    let mut out = Vec::new();
    let mut first = true;
    for session in sessions {
        for (w, window) in session.windows.iter().enumerate() {
            let mut previous: Option<u32> = None;
            for pane in &window.panes {
                let cwd = cwds[&pane.name].as_str();
                match previous {
                    None if w == 0 => {
                        out.push(with_program(cmd(&[
                            "new-session",
                            "-d",
                            "-s",
                            &session.name,
                            "-x",
                            SIZE.0,
                            "-y",
                            SIZE.1,
                            "-c",
                            cwd,
                        ])));
                        if first {
                            out.push(cmd(&["set-option", "-g", "default-size", "400x200"]));
                            first = false;
                        }
                    }
                    None => out.push(with_program(cmd(&[
                        "new-window",
                        "-d",
                        "-t",
                        &format!("{}:", session.name),
                        "-c",
                        cwd,
                    ]))),
                    Some(prev) => {
                        let prev = format!("%{prev}");
                        out.push(with_program(cmd(&[
                            "split-window",
                            "-d",
                            "-t",
                            &prev,
                            "-c",
                            cwd,
                        ])));
                        out.push(cmd(&["select-layout", "-t", &prev, "tiled"]));
                    }
                }
                previous = Some(pane.id);
            }
        }
    }
    out
}

/// Fails, naming the file, when a pane's transcript sample is not beside the fixture, before
/// anything is brought up.
fn check_samples(fixture: &Path, sessions: &[PlannedSession]) -> anyhow::Result<()> {
    for pane in plan::panes(sessions) {
        if let Some(sample) = pane.transcript.as_ref().and_then(|t| t.sample.as_deref()) {
            let path = golden::fixture::sample_path(fixture, sample);
            if !path.is_file() {
                bail!(
                    "pane {}: the transcript sample {} does not exist",
                    pane.name,
                    path.display()
                );
            }
        }
    }
    Ok(())
}

/// Writes a pane's transcript at its store's path under `home`: the fixture's sample as it is,
/// else the records the spec asks for. Returns the path.
fn write_transcript(
    pane: &PlannedPane,
    spec: &TranscriptSpec,
    fixture: &Path,
    home: &Path,
    (cwd, branch): (&str, &str),
    now_ms: u64,
) -> anyhow::Result<PathBuf> {
    let session = pane
        .session_id
        .clone()
        .unwrap_or_else(|| plan::session_id_for(&pane.name));
    let path = transcript::store_path(
        home,
        spec.format,
        cwd,
        &session,
        now_ms,
        spec.sample.as_deref(),
    );
    match &spec.sample {
        Some(sample) => {
            transcript::write_sample(&path, &golden::fixture::sample_path(fixture, sample))
                .with_context(|| format!("pane {}", pane.name))?
        }
        None => transcript::write(
            &path,
            spec.format,
            &session,
            (cwd, branch),
            now_ms,
            &Recipe {
                corpus: spec.corpus,
                events: u64::from(spec.events),
                unknown_every: spec.unknown_every.unwrap_or(0),
                pending_call: spec.pending_call,
                hole: spec
                    .hole
                    .as_deref()
                    .map_or(Ok(0), golden::fixture::parse_size)
                    .map_err(anyhow::Error::msg)?,
            },
        )?,
    }
    Ok(path)
}

/// Brings a fixture up; returns sim.json's contents (also written).
pub fn up(sim_dir: &Path, options: &Up) -> anyhow::Result<SimFile> {
    let fixture: Fixture = golden::fixture::load(&options.fixture).map_err(anyhow::Error::msg)?;
    let sessions = plan::expand(&fixture, options.now_ms).map_err(anyhow::Error::msg)?;
    check_samples(&options.fixture, &sessions)?;
    let tmux = fresh_server(sim_dir, options)?;
    let repos = make_repos(sim_dir, &fixture)?;
    let mut cwds = BTreeMap::new();
    for pane in plan::panes(&sessions) {
        cwds.insert(pane.name.clone(), pane_cwd(sim_dir, pane)?);
    }
    input::reset(sim_dir)?;
    hook::reset(sim_dir, &options.fixture)?;
    tmux.batch(
        &creation(&sessions, &cwds, &input::program(sim_dir)),
        sim_dir,
    )?;
    let socket_path = check_created(&tmux, sim_dir, &sessions)?;
    let ids: Vec<String> = plan::panes(&sessions)
        .map(|p| format!("%{}", p.id))
        .collect();
    input::wait_ready(sim_dir, options.backend, &ids)?;
    let runtime = options
        .runtime_dir
        .clone()
        .unwrap_or_else(|| crate::env::runtime_dir(crate::env::uid(sim_dir)));
    let furnish = Furnish {
        sim_dir,
        options,
        runtime: &runtime,
        home: sim_dir.join("home"),
        cwds: &cwds,
        branches: &repos.branches,
    };
    let mut stamps: Vec<Cmd> = Vec::new();
    if fixture.passthrough {
        stamps.push(cmd(&["set-option", "-g", "allow-passthrough", "on"]));
    }
    let mut details = BTreeMap::new();
    for pane in plan::panes(&sessions) {
        details.insert(pane.name.clone(), furnish.pane(pane, &mut stamps)?);
    }
    tmux.batch(&stamps, sim_dir)?;
    if options.backend == Backend::Fake && !fixture.clients.is_empty() {
        attach_clients(&socket_path, &fixture.clients)?;
    }
    let sim = SimFile {
        backend: options.backend,
        socket: options.socket.clone(),
        socket_path,
        tmux_bin: tmux.bin.clone(),
        panes: plan::ids(&sessions),
        now_ms: options.now_ms,
        runtime_dir: runtime.display().to_string(),
        repos: repos.dirs,
        details,
    };
    simfile::store(&sim, sim_dir)?;
    Ok(sim)
}

/// The tmux of the backend on the socket `up` was given, which no server may hold yet.
fn fresh_server(sim_dir: &Path, options: &Up) -> anyhow::Result<Tmux> {
    let tmux = Tmux {
        bin: tmux_bin(options.backend)?,
        socket: options.socket.clone(),
        backend: options.backend,
    };
    if tmux.run(&[cmd(&["has-session"])], sim_dir)?.code == 0 {
        bail!(
            "a server already runs on socket {:?}: `corral-sim down` first",
            options.socket
        );
    }
    Ok(tmux)
}

/// The fixture's repositories and worktrees, as made under `repos/`.
struct Repos<'a> {
    /// Each one's directory, by name (sim.json's `repos`).
    dirs: BTreeMap<String, String>,
    /// What each one has checked out, by name: a transcript records its pane's branch, and
    /// asking git for it would cost a process per pane.
    branches: BTreeMap<&'a str, &'a str>,
}

/// Makes the fixture's repositories and their worktrees under `repos/`.
fn make_repos<'a>(sim_dir: &Path, fixture: &'a Fixture) -> anyhow::Result<Repos<'a>> {
    let mut repos = Repos {
        dirs: BTreeMap::new(),
        branches: BTreeMap::new(),
    };
    for repo in &fixture.repos {
        let dir = sim_dir.join("repos").join(&repo.name);
        git::init(&dir, &repo.branch)?;
        repos
            .dirs
            .insert(repo.name.clone(), dir.display().to_string());
        repos.branches.insert(&repo.name, &repo.branch);
        for worktree in &repo.worktrees {
            let path = sim_dir.join("repos").join(&worktree.name);
            git::worktree(&dir, &path, &worktree.branch)?;
            repos
                .dirs
                .insert(worktree.name.clone(), path.display().to_string());
            repos.branches.insert(&worktree.name, &worktree.branch);
        }
    }
    Ok(repos)
}

/// Checks that the server made the panes a fresh tmux would, with the ids the plan gave them;
/// returns the server's socket path.
fn check_created(
    tmux: &Tmux,
    sim_dir: &Path,
    sessions: &[PlannedSession],
) -> anyhow::Result<String> {
    // One invocation answers both what the server made and where its socket is.
    let first = plan::panes(sessions).next().map(|p| format!("%{}", p.id));
    let mut ask = vec![cmd(&[
        "list-panes",
        "-a",
        "-F",
        "#{pane_id} #{session_name}:#{window_index}.#{pane_index}",
    ])];
    if let Some(first) = &first {
        ask.push(cmd(&[
            "display-message",
            "-p",
            "-t",
            first,
            "#{socket_path}",
        ]));
    }
    let answer = tmux.ok(&ask, sim_dir)?;
    let mut listed: Vec<&str> = answer.lines().collect();
    let said = if first.is_some() { listed.pop() } else { None };
    let socket_path = match said.map(str::trim).filter(|path| !path.is_empty()) {
        Some(path) => path.to_owned(),
        None => socket_path(tmux, sim_dir)?,
    };
    let expected: Vec<String> = {
        let mut rows: Vec<(&str, u32, u32, u32)> = plan::panes(sessions)
            .map(|p| (p.session.as_str(), p.window, p.index, p.id))
            .collect();
        rows.sort();
        rows.iter()
            .map(|(s, w, i, id)| format!("%{id} {s}:{w}.{i}"))
            .collect()
    };
    let got: Vec<String> = listed.iter().map(|line| (*line).to_owned()).collect();
    if got != expected {
        bail!(
            "the server assigned other pane ids than a fresh tmux would:\nexpected {expected:?}\ngot {got:?}"
        );
    }
    Ok(socket_path)
}

/// What every pane of the fleet is furnished from.
struct Furnish<'a> {
    sim_dir: &'a Path,
    options: &'a Up,
    /// The host's runtime dir, where requests are parked.
    runtime: &'a Path,
    /// Where transcripts are written (the agents' stores' home).
    home: PathBuf,
    /// Each pane's directory, by name.
    cwds: &'a BTreeMap<String, String>,
    /// Each repository's branch, by name.
    branches: &'a BTreeMap<&'a str, &'a str>,
}

impl Furnish<'_> {
    /// Furnishes a pane once it runs: its transcript written, its hook request parked and its
    /// question served at once; its title and options added to `stamps`. Returns what sim.json
    /// remembers of it.
    fn pane(&self, pane: &PlannedPane, stamps: &mut Vec<Cmd>) -> anyhow::Result<PaneDetail> {
        let id = format!("%{}", pane.id);
        let cwd = self.cwds[&pane.name].clone();
        if let Some(title) = &pane.title {
            stamps.push(cmd(&["select-pane", "-t", &id, "-T", title]));
        }
        let mut detail = PaneDetail {
            cwd: cwd.clone(),
            agent: pane.agent.clone(),
            session_id: pane.session_id.clone(),
            transcript: None,
        };
        let mut pane_options = pane.options.clone();
        if let Some(spec) = &pane.transcript {
            let branch = pane
                .repo
                .as_deref()
                .and_then(|repo| self.branches.get(repo))
                .copied()
                .unwrap_or("main");
            let path = write_transcript(
                pane,
                spec,
                &self.options.fixture,
                &self.home,
                (&cwd, branch),
                self.options.now_ms,
            )?;
            if spec.stamp && pane.agent.is_some() {
                let option = PaneOption::Transcript.as_str().to_owned();
                pane_options.push((option, path.display().to_string()));
            }
            detail.transcript = Some((path.display().to_string(), spec.format));
        }
        if let Some(request) = &pane.permission_request {
            park(
                self.runtime,
                &request.id,
                &id,
                pane.session_id.as_deref(),
                &request.tool,
                &request.input,
                pane.episode_ms,
                pane.stamped_at_ms,
            )?;
        }
        if let Some(question) = &pane.question {
            api::pend(
                self.sim_dir,
                api::Pending {
                    request_id: question.id.clone(),
                    session_id: pane.session_id.clone(),
                    questions: question.questions.clone(),
                },
            )?;
        }
        for (key, value) in &pane_options {
            stamps.push(cmd(&["set-option", "-p", "-t", &id, key, value]));
        }
        Ok(detail)
    }
}

/// Attaches the fixture's clients to the fake server whose state is at `socket_path`.
fn attach_clients(socket_path: &str, clients: &[golden::fixture::Client]) -> anyhow::Result<()> {
    let dir = crate::fake::state::ServerDir::new(PathBuf::from(socket_path));
    crate::fake::edit(&dir, |server| {
        for (i, client) in clients.iter().enumerate() {
            server.clients.push(crate::fake::state::Client {
                name: client.name.clone(),
                session: client.session.clone(),
                pid: 90_000 + i as u32,
            });
        }
    })?;
    Ok(())
}

fn socket_path(tmux: &Tmux, sim_dir: &Path) -> anyhow::Result<String> {
    let out = tmux.ok(
        &[cmd(&[
            "display-message",
            "-p",
            "-t",
            "%0",
            "#{socket_path}",
        ])],
        sim_dir,
    );
    match out {
        Ok(text) if !text.trim().is_empty() => Ok(text.trim().to_owned()),
        _ => {
            let listed = tmux.ok(
                &[cmd(&["list-panes", "-a", "-F", "#{socket_path}"])],
                sim_dir,
            )?;
            Ok(listed.lines().next().unwrap_or_default().to_owned())
        }
    }
}

/// Kills the fleet's server (only that socket); idempotent.
pub fn down(sim_dir: &Path) -> anyhow::Result<bool> {
    let sim = match simfile::load(sim_dir) {
        Ok(sim) => sim,
        Err(_) if !simfile::path(sim_dir).exists() => return Ok(false),
        Err(e) => return Err(e),
    };
    // Hooks first: a waiting `corral event` cleans up after itself while its pane still exists.
    hook::stop_all(sim_dir)?;
    let tmux = Tmux::of(&sim);
    let ran = tmux.run(&[cmd(&["kill-server"])], sim_dir)?;
    // A real server exits a moment after kill-server returns; wait until it is gone so the next
    // command sees "no server running" rather than a dying server. The fake's is gone when
    // kill-server returns.
    if sim.backend == Backend::Fake {
        return Ok(ran.code == 0);
    }
    for _ in 0..250 {
        let probe = tmux.run(&[cmd(&["has-session"])], sim_dir)?;
        if probe.code != 0
            && (probe.stderr.starts_with("no server running")
                || probe.stderr.starts_with("error connecting"))
        {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    Ok(ran.code == 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_fake_tmux_beside_corral_sim_wins_and_path_is_the_fallback() {
        let dir = tempfile::tempdir().unwrap();
        let (beside, on_path) = (dir.path().join("kit"), dir.path().join("path"));
        for folder in [&beside, &on_path] {
            std::fs::create_dir_all(folder).unwrap();
        }
        let path = std::env::join_paths([&on_path]).unwrap();
        assert_eq!(fake_tmux(&beside, Some(&path)), None);
        std::fs::write(on_path.join("corral-fake-tmux"), "").unwrap();
        assert_eq!(
            fake_tmux(&beside, Some(&path)),
            Some(on_path.join("corral-fake-tmux"))
        );
        std::fs::write(beside.join("corral-fake-tmux"), "").unwrap();
        assert_eq!(
            fake_tmux(&beside, Some(&path)),
            Some(beside.join("corral-fake-tmux"))
        );
    }
}
