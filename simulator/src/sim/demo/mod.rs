//! `corral-sim demo`: a lively fleet for a client app to connect to. It brings a fleet up (on
//! the fake tmux, in a dir of its own), serves the agent API, enrols a device, prints the one
//! command that connects a client, and animates the fleet until SIGINT or SIGTERM: agents start
//! work, ask for permissions and answers, finish, and go on when an app answers them. Then it
//! takes everything down: the hooks it started, the tmux server, and its dir (kept with `--dir`).
//!
//! Read in this order: [`story`] (what the agents do, a pure function of the seed), [`fleet`]
//! (the fixture `up` brings up), [`connect`] (the host's files, the printed command and the
//! `connect` script), [`stage`] (moves played on the fleet, an app's answers read back),
//! [`upkeep`] (what keeps a demo that runs for days the same size).

pub mod connect;
pub mod fleet;
pub mod stage;
pub mod story;
pub mod upkeep;

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use golden::Backend;

use super::print_line;
use super::tmux::{Tmux, cmd};
use super::up::{self, Up};
use super::{api, simfile};
use connect::Dirs;
use stage::Stage;
use story::Story;

/// A tick at speed 1.
const TICK: Duration = Duration::from_millis(500);

/// How the demo plays, and where.
#[derive(Debug, Clone)]
pub struct DemoOptions {
    /// The story's seed: the same seed plays the same moves in the same order.
    pub seed: u64,
    /// Agent panes in the fleet (claude, opencode, codex and gemini in turn), 1 to 64.
    pub panes: u16,
    /// How fast the story goes: 2 is twice as fast (a tick is 500 ms divided by this).
    pub speed: f64,
    /// Work in this dir (empty or missing) and keep it afterwards, instead of a temp dir that is
    /// removed.
    pub dir: Option<PathBuf>,
    /// The fake tmux, or a scratch real tmux server to attach to and watch.
    pub backend: Backend,
    /// The device the printed command connects as.
    pub device: String,
}

/// Runs `corral-sim demo`; returns the exit code.
pub fn main(options: DemoOptions) -> ExitCode {
    if !(options.speed.is_finite() && options.speed > 0.0) {
        eprintln!(
            "corral-sim demo: --speed must be a positive number, not {}",
            options.speed
        );
        return ExitCode::from(2);
    }
    // Listening first: a Ctrl-C during bring-up still ends in the clean-up below.
    let signals = match listen() {
        Ok(signals) => signals,
        Err(err) => return fail(&err),
    };
    let dirs = match make_dir(options.dir.as_deref()) {
        Ok(dirs) => dirs,
        Err(err) => return fail(&err),
    };
    let socket = format!("corral-demo-{}", std::process::id());
    let outcome = run(&options, &dirs, &socket, &signals);
    let teardown = teardown(&options, &dirs, &socket);
    match (outcome, teardown) {
        (Ok(signal), Ok(())) => {
            let kept = match &options.dir {
                Some(_) => format!("{} kept", dirs.root.display()),
                None => format!("{} removed", dirs.root.display()),
            };
            print_line(&format!("stopped by {signal}: the fleet is down, {kept}"));
            ExitCode::SUCCESS
        }
        (Err(err), _) | (Ok(_), Err(err)) => fail(&err),
    }
}

fn fail(err: &anyhow::Error) -> ExitCode {
    eprintln!("corral-sim demo: {err:#}");
    ExitCode::FAILURE
}

/// SIGINT, SIGTERM and SIGHUP, each sent as its name once it arrives.
fn listen() -> anyhow::Result<Receiver<&'static str>> {
    use tokio::signal::unix::{SignalKind, signal};
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("starting the signal listener")?;
    let mut signals = runtime.block_on(async {
        anyhow::Ok([
            (signal(SignalKind::interrupt())?, "SIGINT"),
            (signal(SignalKind::terminate())?, "SIGTERM"),
            (signal(SignalKind::hangup())?, "SIGHUP"),
        ])
    })?;
    let (to, from) = mpsc::channel();
    std::thread::spawn(move || {
        runtime.block_on(async move {
            let [(interrupt, a), (terminate, b), (hangup, c)] = &mut signals;
            let name = tokio::select! {
                _ = interrupt.recv() => *a,
                _ = terminate.recv() => *b,
                _ = hangup.recv() => *c,
            };
            let _ = to.send(name);
        });
    });
    Ok(from)
}

/// The demo's dir: `--dir` (empty or missing), else a new one under the temp dir.
fn make_dir(given: Option<&Path>) -> anyhow::Result<Dirs> {
    if let Some(dir) = given {
        let dir = std::path::absolute(dir)?;
        if let Ok(mut entries) = std::fs::read_dir(&dir)
            && entries.next().is_some()
        {
            bail!("--dir {} is not empty", dir.display());
        }
        std::fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
        return Ok(Dirs {
            root: std::fs::canonicalize(&dir)?,
        });
    }
    let temp = std::env::temp_dir();
    for n in 0..1000 {
        let dir = temp.join(format!("corral-demo-{}-{n}", std::process::id()));
        match std::fs::create_dir(&dir) {
            Ok(()) => {
                return Ok(Dirs {
                    root: std::fs::canonicalize(&dir)?,
                });
            }
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(e).with_context(|| format!("creating {}", dir.display())),
        }
    }
    bail!("no free corral-demo-* name in {}", temp.display())
}

/// Brings the demo up and plays it until a signal; returns the signal's name.
fn run(
    options: &DemoOptions,
    dirs: &Dirs,
    socket: &str,
    signals: &Receiver<&'static str>,
) -> anyhow::Result<&'static str> {
    let corral = connect::corral_bin().context(
        "the host's `corral` is neither beside corral-sim nor on PATH (cargo build -p \
         reference-host, or cargo install --locked --path reference-host)",
    )?;
    let now = crate::time::now(None)?;
    dirs.prepare(&options.device, "demo-app", now)?;
    let sim_dir = dirs.sim();
    let url = serve_api(&sim_dir)?;
    let mut story = Story::new(options.seed, usize::from(options.panes));
    let fixture = sim_dir.join("demo-fixture.toml");
    std::fs::write(&fixture, toml::to_string(&fleet::fixture(&story, &url))?)?;
    let sim = up::up(
        &sim_dir,
        &Up {
            fixture,
            backend: options.backend,
            socket: socket.to_owned(),
            now_ms: now,
            runtime_dir: Some(dirs.runtime()),
        },
    )?;
    // The socket by its path: the name would be looked up under the client's own
    // `$TMUX_TMPDIR`, which need not be the demo's.
    let env = dirs.host_env(options.backend, &sim.tmux_bin, &sim.socket_path);
    let mut hook_env = env.clone();
    hook_env.push(("HOME".to_owned(), dirs.home().display().to_string()));
    let names = (0..story.actors.len())
        .map(|i| fleet::pane_name(&story, i))
        .collect();
    let mut stage = Stage::new(&sim_dir, &sim, &story, names, hook_env)?;
    let command = connect::command_line(&env, &corral, &options.device);
    dirs.write_connect_script(&command)?;
    for line in banner(options, dirs, &command, &sim.socket_path) {
        print_line(&line);
    }
    let tick = TICK.div_f64(options.speed);
    let started = Instant::now();
    let mut next = started + tick;
    loop {
        match signals.recv_timeout(next.saturating_duration_since(Instant::now())) {
            Ok(name) => return Ok(name),
            Err(RecvTimeoutError::Disconnected) => bail!("the signal listener stopped"),
            Err(RecvTimeoutError::Timeout) => {}
        }
        next += tick;
        let at = started.elapsed().as_secs_f64();
        let log = |stage: &Stage, pane: usize, text: &str| {
            let (id, name) = stage.label(pane);
            print_line(&format!("{at:7.1}s  {id:<4} {name:<12} {text}"));
        };
        // An app's answers first: a pane it answered is not answered again at the desk.
        match stage.answers(&story) {
            Ok(answers) => {
                for answer in answers {
                    story.moved(answer.pane, answer.phase);
                    log(&stage, answer.pane, &format!("app: {}", answer.how));
                }
            }
            Err(err) => eprintln!("corral-sim demo: reading what the app did: {err:#}"),
        }
        for beat in story.advance() {
            match stage.play(&beat) {
                Ok(text) => log(&stage, beat.pane, &text),
                Err(err) => eprintln!("corral-sim demo: tick {}: {err:#}", beat.tick),
            }
        }
        match stage.upkeep() {
            Ok(notes) => {
                for (pane, text) in notes {
                    log(&stage, pane, &text);
                }
            }
            Err(err) => eprintln!("corral-sim demo: keeping the fleet's size: {err:#}"),
        }
    }
}

/// Starts the agent API on a thread of its own (it ends with the process); returns its URL.
fn serve_api(sim_dir: &Path) -> anyhow::Result<String> {
    let dir = sim_dir.to_owned();
    std::thread::spawn(move || {
        if let Err(err) = api::serve(&dir, 0, None, None) {
            eprintln!("corral-sim demo: the agent API stopped: {err:#}");
        }
    });
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        if let Ok(url) = api::endpoint(sim_dir) {
            return Ok(url);
        }
        if Instant::now() >= deadline {
            bail!("the agent API did not start within 10 s");
        }
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// What the demo says once the fleet is up; `command` is the line that connects a client.
fn banner(options: &DemoOptions, dirs: &Dirs, command: &str, socket: &str) -> Vec<String> {
    let scopes: Vec<&str> = connect::SCOPES.iter().map(|s| s.as_str()).collect();
    let mut lines = vec![
        format!(
            "corral demo: {} agents on the {} tmux (seed {}, speed {}), in {}",
            options.panes,
            options.backend.as_str(),
            options.seed,
            options.speed,
            dirs.root.display()
        ),
        format!(
            "device {} enrolled as demo-app with scopes {}",
            options.device,
            scopes.join(", ")
        ),
        String::new(),
        format!("connect with: {}", dirs.connect_script().display()),
        String::new(),
        "It speaks NDJSON on stdin and stdout: run it in a terminal and type frames, or have the"
            .to_owned(),
        "app's transport spawn it. It runs this line, which an app can spawn as well:".to_owned(),
        String::new(),
        format!("  {command}"),
        String::new(),
        "Over ssh: on this machine, give the app's key this forced command in".to_owned(),
        "~/.ssh/authorized_keys, then connect with `ssh -T <user>@<this host>`:".to_owned(),
        String::new(),
        format!("  {}", connect::authorized_keys_line(command)),
        String::new(),
    ];
    if options.backend == Backend::Real {
        lines.push(format!(
            "Watch the panes: tmux -S {socket} attach -r (read-only)"
        ));
        lines.push(String::new());
    }
    lines.push("Ctrl-C stops the demo and cleans up. The fleet:".to_owned());
    lines
}

/// Takes down what the demo started: the hooks and the tmux server (`down`), a real server's
/// socket, and the dir unless it was given.
fn teardown(options: &DemoOptions, dirs: &Dirs, socket: &str) -> anyhow::Result<()> {
    let sim_dir = dirs.sim();
    let sim = simfile::load(&sim_dir).ok();
    let down = up::down(&sim_dir).map(|_| ());
    if options.backend == Backend::Real {
        // A server `up` started before it could write sim.json is still this demo's.
        let tmux = Tmux {
            bin: up::tmux_bin(Backend::Real)?,
            socket: socket.to_owned(),
            backend: Backend::Real,
        };
        let _ = tmux.run(&[cmd(&["kill-server"])], &sim_dir);
        if let Some(sim) = &sim {
            match std::fs::remove_file(&sim.socket_path) {
                Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                    return Err(e).with_context(|| format!("removing {}", sim.socket_path));
                }
                _ => {}
            }
        }
    }
    down?;
    if options.dir.is_none() {
        std::fs::remove_dir_all(&dirs.root)
            .with_context(|| format!("removing {}", dirs.root.display()))?;
    }
    Ok(())
}
