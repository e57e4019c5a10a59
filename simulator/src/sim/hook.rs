//! `corral-sim hook`: a recorded hook payload replayed through the host's own producer,
//! `corral event <agent> <event>` (or, under the conformance kit, the host profile's hook command
//! `$CORRAL_SIM_HOOK <agent> <event>`), run as the agent's hook would run it inside a pane: with
//! `TMUX=<socket path>,<server pid>,<session>` and `TMUX_PANE=%N` (and `CORRAL_TMUX_BIN`, so the
//! fake is the tmux it talks to; a profile's own variables come from the kit's environment), the
//! host's runtime dir the fleet's, and the payload on stdin.
//!
//! Each run is recorded under `$CORRAL_SIM_DIR/hooks/`: `<name>.payload` (what went to stdin),
//! `<name>.out` and `<name>.err` (what `corral event` printed: for a permission request, the
//! decision of the verdict it got), `<name>.json` (`{"name","pane","agent","event","pid"}`).
//! While `corral event` runs it holds an exclusive lock on `<name>.out` (its stdout is that open
//! file), which the kernel releases when it exits: `hook-output` waits on that lock, and `down`
//! stops every hook still holding it (SIGTERM, which makes `corral event` clean up its parked
//! request), before the server goes.
//!
//! A permission request blocks until a verdict or its time-out, so it can run in the background:
//! `--background` returns once the request is parked and the pane names it (or `corral event`
//! has exited), and prints the run's name.

use std::collections::BTreeSet;
use std::fs::{File, TryLockError};
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use golden::{Backend, SimFile};
use schema::PaneOption;
use serde_json::{Map, Value, json};

use super::simfile;
use super::tmux::{Tmux, cmd};

/// How long `--background` (and `--ready`) wait for the hook to park its request.
const READY_WITHIN: Duration = Duration::from_secs(10);

/// A hook run: which pane's agent, which hook event, and the payload it is given.
#[derive(Debug, Clone)]
pub struct HookOptions {
    /// The pane the agent runs in: fixture name or %N.
    pub pane: String,
    /// The agent (`claude`, `codex`, ...): `corral event`'s first argument.
    pub agent: String,
    /// The hook event (`PermissionRequest`, `Stop`, `notify`, ...): its second argument.
    pub event: String,
    /// The payload: JSON, or `@FILE` (a relative FILE is looked up in the current directory,
    /// then beside the fixture `up` brought up). Default `{}`.
    pub payload: Option<String>,
    /// Give the payload's `session_id` (`thread-id`), `transcript_path` and `cwd`, where it has
    /// them, the pane's own values from sim.json.
    pub pane_facts: bool,
    /// Pass the payload as `corral event`'s third argument (Codex's `notify`) instead of stdin.
    pub as_argument: bool,
    /// The run's name (its files are `hooks/<NAME>.*`); default: the next free number.
    pub name: Option<String>,
    /// Return once it waits for a verdict (or has finished).
    pub background: bool,
    /// Create this file (relative to $CORRAL_SIM_DIR) once the hook waits for a verdict or has
    /// finished.
    pub ready: Option<PathBuf>,
    /// Variables `corral event` gets on top of the simulator's environment (`corral-sim demo`
    /// points it at the demo's own config).
    pub env: Vec<(String, String)>,
}

/// `$CORRAL_SIM_DIR/hooks/`.
pub fn dir(sim_dir: &Path) -> PathBuf {
    sim_dir.join("hooks")
}

/// Where `up` notes the fixture it brought up, so payload files resolve beside it.
fn fixture_note(sim_dir: &Path) -> PathBuf {
    dir(sim_dir).join("fixture")
}

/// The fixture `up` brought up (as it noted it), beside which payload files and transcript
/// samples are found; `None` before any `up`.
pub fn fixture(sim_dir: &Path) -> Option<PathBuf> {
    let noted = std::fs::read_to_string(fixture_note(sim_dir)).ok()?;
    Some(PathBuf::from(noted.trim()))
}

/// Empties `hooks/` for a fleet coming up from `fixture`.
pub fn reset(sim_dir: &Path, fixture: &Path) -> anyhow::Result<()> {
    let dir = dir(sim_dir);
    match std::fs::remove_dir_all(&dir) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
            return Err(e).with_context(|| format!("removing {}", dir.display()));
        }
        _ => {}
    }
    std::fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
    let fixture = std::path::absolute(fixture)?;
    std::fs::write(fixture_note(sim_dir), fixture.display().to_string())?;
    Ok(())
}

fn file(sim_dir: &Path, name: &str, ext: &str) -> PathBuf {
    dir(sim_dir).join(format!("{name}.{ext}"))
}

/// The host's hook command, when the kit names one (`$CORRAL_SIM_HOOK`).
fn hook_command() -> Option<String> {
    std::env::var(crate::env::HOOK_VAR)
        .ok()
        .filter(|hook| !hook.trim().is_empty())
}

/// The `corral` binary: `$CORRAL_BIN`, else beside `corral-sim`, else `corral` on PATH.
fn corral_bin() -> PathBuf {
    if let Some(bin) = std::env::var_os("CORRAL_BIN").filter(|b| !b.is_empty()) {
        return PathBuf::from(bin);
    }
    std::env::current_exe()
        .ok()
        .map(|exe| exe.with_file_name("corral"))
        .filter(|beside| beside.is_file())
        .unwrap_or_else(|| PathBuf::from("corral"))
}

/// The environment that makes `corral event` use `runtime` as its runtime dir: it is
/// `$XDG_RUNTIME_DIR/corral`, else `$TMPDIR/corral-<uid>`.
fn runtime_env(runtime: &Path, uid: u32) -> anyhow::Result<Vec<(&'static str, Option<PathBuf>)>> {
    let runtime = std::path::absolute(runtime)?;
    let parent = runtime.parent().map(Path::to_path_buf);
    let name = runtime.file_name().and_then(|n| n.to_str()).unwrap_or("");
    if name == "corral" {
        return Ok(vec![("XDG_RUNTIME_DIR", parent)]);
    }
    if name == format!("corral-{uid}") {
        return Ok(vec![("XDG_RUNTIME_DIR", None), ("TMPDIR", parent)]);
    }
    bail!(
        "corral event keeps its requests in $XDG_RUNTIME_DIR/corral or $TMPDIR/corral-{uid}, and \
         the fleet's runtime dir {} is neither (bring it up with --runtime-dir <dir>/corral)",
        runtime.display()
    )
}

/// The payload text: the argument, or the file it names.
fn payload_text(sim_dir: &Path, given: Option<&str>) -> anyhow::Result<String> {
    let Some(given) = given else {
        return Ok("{}".to_owned());
    };
    let Some(path) = given.strip_prefix('@') else {
        return Ok(given.to_owned());
    };
    let path = Path::new(path);
    let mut candidates = vec![path.to_path_buf()];
    if path.is_relative()
        && let Some(fixture) = fixture(sim_dir)
        && let Some(beside) = fixture.parent()
    {
        candidates.push(beside.join(path));
    }
    let found = candidates.iter().find(|c| c.is_file()).with_context(|| {
        format!(
            "no payload file {} (looked at {candidates:?})",
            path.display()
        )
    })?;
    std::fs::read_to_string(found).with_context(|| format!("reading {}", found.display()))
}

/// The payload with the pane's own session, transcript and directory where it names them.
fn with_pane_facts(text: &str, sim: &SimFile, name: &str) -> anyhow::Result<String> {
    let mut payload: Map<String, Value> =
        serde_json::from_str(text).context("--pane-facts needs the payload to be a JSON object")?;
    let detail = sim.details.get(name).cloned().unwrap_or_default();
    let facts = [
        ("session_id", detail.session_id.clone()),
        ("thread-id", detail.session_id.clone()),
        ("thread_id", detail.session_id.clone()),
        ("transcript_path", detail.transcript.map(|(path, _)| path)),
        ("cwd", Some(detail.cwd).filter(|c| !c.is_empty())),
    ];
    for (key, value) in facts {
        if let (Some(slot), Some(value)) = (payload.get_mut(key), value) {
            *slot = Value::String(value);
        }
    }
    Ok(Value::Object(payload).to_string())
}

/// Claims a run name by creating its record exclusively: `name`, or the next free number.
fn claim(sim_dir: &Path, name: Option<&str>) -> anyhow::Result<String> {
    std::fs::create_dir_all(dir(sim_dir))?;
    let create = |name: &str| {
        std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(file(sim_dir, name, "json"))
    };
    if let Some(name) = name {
        if name.is_empty() || name.contains(['/', '\0']) || name.starts_with('.') {
            bail!("hook name {name:?} cannot name a file");
        }
        return match create(name) {
            Ok(_) => Ok(name.to_owned()),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
                bail!("a hook named {name:?} ran already")
            }
            Err(e) => Err(e.into()),
        };
    }
    for n in 1u32.. {
        let name = n.to_string();
        match create(&name) {
            Ok(_) => return Ok(name),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(e.into()),
        }
    }
    unreachable!("some number is free")
}

/// `TMUX` as tmux sets it in a pane: the socket path, the server's pid, the session's number.
fn tmux_var(sim: &SimFile, sim_dir: &Path, pane: &str) -> anyhow::Result<String> {
    // The fake has no server process; its `TMUX` names pid 0.
    let format = match sim.backend {
        Backend::Real => "#{pid} #{session_id}",
        Backend::Fake => "0 #{session_id}",
    };
    let out = Tmux::of(sim).ok(
        &[cmd(&["display-message", "-p", "-t", pane, format])],
        sim_dir,
    )?;
    let mut fields = out.split_whitespace();
    let pid = fields.next().unwrap_or("0");
    let session = fields.next().unwrap_or("$0").trim_start_matches('$');
    Ok(format!("{},{pid},{session}", sim.socket_path))
}

/// Whether the run that wrote `out` still runs (its `corral event` holds the lock).
fn running(out: &Path) -> anyhow::Result<bool> {
    let file = File::open(out).with_context(|| format!("opening {}", out.display()))?;
    match file.try_lock() {
        Ok(()) => Ok(false),
        Err(TryLockError::WouldBlock) => Ok(true),
        Err(TryLockError::Error(e)) => Err(e).with_context(|| format!("locking {}", out.display())),
    }
}

/// The request ids parked in `runtime` for `pane`.
pub fn parked_for(runtime: &Path, pane: &str) -> BTreeSet<String> {
    let Ok(entries) = std::fs::read_dir(runtime.join("requests")) else {
        return BTreeSet::new();
    };
    entries
        .flatten()
        .filter(|e| e.path().extension().is_some_and(|x| x == "json"))
        .filter_map(|e| std::fs::read(e.path()).ok())
        .filter_map(|bytes| serde_json::from_slice::<Value>(&bytes).ok())
        .filter(|request| request["pane"] == pane)
        .filter_map(|request| request["id"].as_str().map(str::to_owned))
        .collect()
}

/// Waits until the hook has parked a new request for the pane and stamped the pane with it, or
/// has exited.
fn wait_ready(
    sim: &SimFile,
    sim_dir: &Path,
    pane: &str,
    out: &Path,
    before: &BTreeSet<String>,
) -> anyhow::Result<()> {
    let runtime = Path::new(&sim.runtime_dir);
    let deadline = Instant::now() + READY_WITHIN;
    loop {
        if !running(out)? {
            return Ok(());
        }
        let fresh: Vec<String> = parked_for(runtime, pane)
            .difference(before)
            .cloned()
            .collect();
        if !fresh.is_empty() {
            let stamped = Tmux::of(sim).ok(
                &[cmd(&[
                    "show-options",
                    "-p",
                    "-q",
                    "-v",
                    "-t",
                    pane,
                    PaneOption::PermissionRequest.as_str(),
                ])],
                sim_dir,
            )?;
            if fresh.iter().any(|id| id == stamped.trim_end()) {
                return Ok(());
            }
        }
        if Instant::now() >= deadline {
            bail!(
                "the hook neither parked a request for {pane} nor finished within {READY_WITHIN:?}"
            );
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// How a run left `hook`: still running in the background, or finished; with its name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Run {
    /// `--background`: it waits for a verdict (or has finished already).
    Background(String),
    /// It ran to its end.
    Finished(String),
}

/// Runs `corral event` for a pane with a payload; see the module doc.
pub fn run(sim_dir: &Path, options: &HookOptions) -> anyhow::Result<Run> {
    let sim = simfile::load(sim_dir)?;
    let (name, pane) = sim.pane(&options.pane)?;
    let mut payload = payload_text(sim_dir, options.payload.as_deref())?;
    if options.pane_facts {
        payload = with_pane_facts(&payload, &sim, &name)?;
    }
    let run = claim(sim_dir, options.name.as_deref())?;
    let payload_file = file(sim_dir, &run, "payload");
    std::fs::write(&payload_file, &payload)?;
    let out_path = file(sim_dir, &run, "out");
    let out = File::create(&out_path)?;
    // The lock is on the open file, which becomes the child's stdout: held while it lives.
    out.lock()?;
    let err = File::create(file(sim_dir, &run, "err"))?;
    let hook = hook_command();
    let mut command = match &hook {
        // The host profile's hook command, its words as the profile wrote them (through `sh`),
        // the agent's name and the hook's after them.
        Some(hook) => {
            let mut command = crate::process::command("sh");
            command.args(["-c", &format!("exec {hook} \"$@\""), "sh"]);
            command
        }
        None => {
            let mut command = crate::process::command(corral_bin());
            command.arg("event");
            command
        }
    };
    command.args([&options.agent, &options.event]);
    if options.as_argument {
        command.arg(&payload).stdin(Stdio::null());
    } else {
        command.stdin(File::open(&payload_file)?);
    }
    command
        .stdout(out.try_clone()?)
        .stderr(err)
        .env("TMUX", tmux_var(&sim, sim_dir, &pane)?)
        .env("TMUX_PANE", &pane)
        .env(crate::env::SIM_DIR_VAR, sim_dir)
        .envs(options.env.iter().map(|(name, value)| (name, value)));
    // A host profile's hook finds its tmux and its runtime dir as its host does, in the
    // environment the kit gave the simulator; corral's are told by corral's own rules.
    if hook.is_none() {
        command.env("CORRAL_TMUX_BIN", &sim.tmux_bin);
        for (key, value) in runtime_env(Path::new(&sim.runtime_dir), crate::env::uid(sim_dir))? {
            match value {
                Some(value) => command.env(key, value),
                None => command.env_remove(key),
            };
        }
    }
    let before = parked_for(Path::new(&sim.runtime_dir), &pane);
    let mut child = command.spawn().with_context(|| match &hook {
        Some(hook) => format!("starting the hook command {hook}"),
        None => format!("starting {}", corral_bin().display()),
    })?;
    drop(out);
    let record = json!({
        "name": run, "pane": pane, "agent": options.agent, "event": options.event, "pid": child.id(),
    });
    std::fs::write(file(sim_dir, &run, "json"), format!("{record}\n"))?;
    if options.background || options.ready.is_some() {
        wait_ready(&sim, sim_dir, &pane, &out_path, &before)?;
        if let Some(ready) = &options.ready {
            let ready = sim_dir.join(ready);
            if let Some(parent) = ready.parent() {
                std::fs::create_dir_all(parent)?;
            }
            std::fs::write(&ready, b"")?;
        }
    }
    if options.background {
        return Ok(Run::Background(run));
    }
    child.wait().context("waiting for corral event")?;
    Ok(Run::Finished(run))
}

/// What run `name` printed on stdout (or stderr), once it has finished: waits up to `wait`.
pub fn output(sim_dir: &Path, name: &str, wait: Duration, stderr: bool) -> anyhow::Result<Vec<u8>> {
    let out = file(sim_dir, name, "out");
    if !out.exists() {
        bail!("no hook named {name:?} ran (no {})", out.display());
    }
    let deadline = Instant::now() + wait;
    while running(&out)? {
        if Instant::now() >= deadline {
            bail!(
                "hook {name:?} is still running after {} ms",
                wait.as_millis()
            );
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    let path = if stderr {
        file(sim_dir, name, "err")
    } else {
        out
    };
    std::fs::read(&path).with_context(|| format!("reading {}", path.display()))
}

/// What run `name` printed on stdout once it has finished; `None` while it runs.
pub fn finished(sim_dir: &Path, name: &str) -> anyhow::Result<Option<Vec<u8>>> {
    let out = file(sim_dir, name, "out");
    if running(&out)? {
        return Ok(None);
    }
    Ok(Some(
        std::fs::read(&out).with_context(|| format!("reading {}", out.display()))?,
    ))
}

/// Stops every hook still running (SIGTERM, then SIGKILL after 3 s), for `down`.
pub fn stop_all(sim_dir: &Path) -> anyhow::Result<()> {
    use rustix::process::{Pid, Signal, kill_process};
    let Ok(entries) = std::fs::read_dir(dir(sim_dir)) else {
        return Ok(());
    };
    let mut live: Vec<(PathBuf, Pid)> = Vec::new();
    for entry in entries.flatten() {
        let path = entry.path();
        if path.extension().is_none_or(|x| x != "json") {
            continue;
        }
        let Ok(record) = serde_json::from_slice::<Value>(&std::fs::read(&path)?) else {
            continue;
        };
        let out = path.with_extension("out");
        let pid = record["pid"]
            .as_i64()
            .and_then(|p| i32::try_from(p).ok())
            .and_then(Pid::from_raw);
        if let Some(pid) = pid
            && out.exists()
            && running(&out)?
        {
            let _ = kill_process(pid, Signal::TERM);
            live.push((out, pid));
        }
    }
    let deadline = Instant::now() + Duration::from_secs(3);
    while !live.is_empty() {
        live.retain(|(out, _)| running(out).unwrap_or(false));
        if Instant::now() >= deadline {
            for (_, pid) in &live {
                let _ = kill_process(*pid, Signal::KILL);
            }
            break;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_runtime_dir_is_told_to_corral_event_by_its_own_rule() {
        assert_eq!(
            runtime_env(Path::new("/run/user/7/corral"), 7).unwrap(),
            [("XDG_RUNTIME_DIR", Some(PathBuf::from("/run/user/7")))]
        );
        assert_eq!(
            runtime_env(Path::new("/tmp/corral-7"), 7).unwrap(),
            [
                ("XDG_RUNTIME_DIR", None),
                ("TMPDIR", Some(PathBuf::from("/tmp")))
            ]
        );
        assert!(runtime_env(Path::new("/x/run"), 7).is_err());
    }

    #[test]
    fn pane_facts_replace_only_what_the_payload_names() {
        let sim: SimFile = serde_json::from_value(json!({
            "backend": "fake", "socket": "s", "socket_path": "/p", "tmux_bin": "t",
            "panes": {"a": "%0"}, "now_ms": 0, "runtime_dir": "/r", "repos": {},
            "details": {"a": {"cwd": "/w", "session_id": "S", "transcript": ["/t.jsonl", "claude"]}},
        }))
        .unwrap();
        let got = with_pane_facts(
            r#"{"session_id":"x","cwd":"/old","hook_event_name":"Stop"}"#,
            &sim,
            "a",
        )
        .unwrap();
        assert_eq!(
            got,
            r#"{"session_id":"S","cwd":"/w","hook_event_name":"Stop"}"#
        );
        let notify = with_pane_facts(
            r#"{"type":"agent-turn-complete","thread-id":"x"}"#,
            &sim,
            "a",
        );
        assert_eq!(
            notify.unwrap(),
            r#"{"type":"agent-turn-complete","thread-id":"S"}"#
        );
    }
}
