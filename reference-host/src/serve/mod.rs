//! `corral serve --stdio --device <id>`: one process per connection.
//!
//! Start-up, in order: the config, then the device (no record: `scope-denied`, exit 2, before
//! anything else), then a connection slot (none free: `too-many-connections`, exit 2), then the
//! session loop. Refusals before the session carry id `"0"`. A start-up failure answers
//! `internal` and exits 1.
//!
//! The loop never blocks on the client: frames go through the outbox (`outbox.rs`), so SIGTERM
//! ends the process at once whatever stdout's state, and every cycle it checks that the client
//! is still there to read.

mod outbox;
mod pushes;
mod requests;
mod session;
mod stream;
mod transport;

use std::io::BufReader;
use std::os::fd::AsFd;
use std::sync::Arc;
use std::time::Duration;

use schema::ErrorCode;
use tokio::signal::unix::{SignalKind, signal};
use tokio::sync::{Notify, mpsc};

use crate::act::manifest::Manifests;
use crate::devices::{DeviceFile, StoreWatch};
use crate::files;
use crate::fleet::FleetReader;
use crate::fleet::shared::{PushDirs, SharedReads};
use crate::paths::Paths;
use crate::runtime::RuntimeDir;
use crate::tmux::Tmux;
use crate::transcript::locate::StoreRoots;
use outbox::Outbox;
pub use requests::Services;
use requests::SessionConfig;
use session::{Event, Flow, Session, refuse};
use transport::{FrameWriter, Incoming, LineReader};

/// How long an exit other than a shutdown waits for the client to read the last frames.
const FLUSH_GRACE: Duration = Duration::from_secs(2);

/// What `serve` needs, already validated.
#[derive(Debug, Clone)]
pub struct ServeOptions {
    /// The device fingerprint the spawner authenticated.
    pub device: String,
    /// How to reach tmux.
    pub tmux: Tmux,
    /// How long one tmux invocation may take; `None`: the cycle, clamped to 1-5 s.
    pub tmux_timeout: Option<Duration>,
    /// Where the host's files are.
    pub paths: Paths,
    /// This host's name.
    pub host: String,
}

/// Runs one connection on stdin/stdout; returns the process exit code.
pub fn run(options: ServeOptions) -> u8 {
    let stdout = std::io::stdout;
    let config = match crate::config::load(&options.paths.config_file) {
        Ok(config) => config,
        Err(err) => return start_up_failure(&format!("{err:#}")),
    };
    let mut store = StoreWatch::new(DeviceFile::new(options.paths.device_store.clone()));
    match store.current() {
        Ok(store) if store.by_id(&options.device).is_some() => {}
        Ok(_) => {
            tracing::warn!(device = %options.device, "refusing a device with no record");
            let message = format!("device {} is not enrolled on this host", options.device);
            refuse(stdout(), ErrorCode::ScopeDenied, &message);
            return 2;
        }
        Err(err) => return start_up_failure(&err.to_string()),
    }
    let runtime = match RuntimeDir::open(&options.paths.runtime_dir) {
        Ok(runtime) => runtime,
        Err(err) => return start_up_failure(&format!("{err:#}")),
    };
    let max = config.serve.max_connections;
    let _slot = match runtime.claim_slot(max) {
        Ok(Some(slot)) => {
            tracing::debug!(slot = slot.index, max, "claimed a connection slot");
            slot
        }
        Ok(None) => {
            tracing::warn!(max, "connection cap reached");
            let message = format!("this host already serves {max} connections");
            refuse(stdout(), ErrorCode::TooManyConnections, &message);
            return 2;
        }
        Err(err) => return start_up_failure(&format!("claiming a connection slot: {err}")),
    };
    let manifests = match Manifests::load(&options.paths.actions_dir) {
        Ok(manifests) => manifests,
        Err(err) => return start_up_failure(&err.to_string()),
    };
    let home = std::env::var_os("HOME").map(std::path::PathBuf::from);
    let services = Services {
        runtime,
        manifests,
        stores: StoreRoots::from_env(),
        act_log: config
            .act
            .log
            .as_deref()
            .map(|log| files::expand_home(log, home.as_deref())),
    };
    let interval = Duration::from_millis(config.serve.reconcile_interval_ms);
    // A hung tmux must not hold the session longer than about a cycle.
    let tmux_timeout = options
        .tmux_timeout
        .unwrap_or_else(|| interval.clamp(Duration::from_secs(1), Duration::from_secs(5)));
    let tmux = options.tmux.with_timeout(tmux_timeout);
    let outbox = match std::io::stdout()
        .as_fd()
        .try_clone_to_owned()
        .and_then(Outbox::new)
    {
        Ok(outbox) => outbox,
        Err(err) => return start_up_failure(&format!("setting up stdout: {err}")),
    };
    let failed = outbox.failure();
    // The server as its selection names it, computed without asking tmux.
    let server = crate::notify::server::identify_answered(&tmux, Ok(None));
    let runtime = services.runtime.clone();
    let push_dirs: PushDirs = Arc::new(move |socket| pushes::push_dir(&runtime, socket));
    let shared = SharedReads::new(&services.runtime, server.key, push_dirs);
    let session = Session::new(
        SessionConfig {
            device: options.device,
            interval,
        },
        store,
        FleetReader::new(tmux, options.host).with_shared(shared),
        services,
        FrameWriter::new(outbox),
    );
    match event_loop(session, interval, &failed) {
        Ok(code) => code,
        Err(err) => start_up_failure(&format!("{err:#}")),
    }
}

fn start_up_failure(message: &str) -> u8 {
    tracing::error!("{message}");
    refuse(
        std::io::stdout(),
        ErrorCode::Internal,
        "the host failed to start; see its log",
    );
    1
}

/// Feeds the session one event at a time: stdin lines (read on a plain thread, so a blocked read
/// never holds the process), cycle ticks and the answers of the cycle reads they begin (each on
/// a thread of its own, so a push is published while tmux answers a read), pushes, output checks (every `interval`, and when the
/// outbox's writer fails: `failed`), and SIGTERM/SIGHUP. A shutdown exits at once; any other exit
/// first gives the client [`FLUSH_GRACE`] to read what was written. Either waits for a cycle's
/// read under way to end (at most the tmux time-out), so no tmux client outlives the process.
fn event_loop(
    mut session: Session<FleetReader, Outbox>,
    interval: Duration,
    failed: &Arc<Notify>,
) -> anyhow::Result<u8> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    let code = runtime.block_on(async move {
        let (lines, mut incoming) = mpsc::channel::<Incoming>(1);
        crate::threads::spawn(move || {
            let mut reader = LineReader::new(BufReader::new(std::io::stdin()));
            loop {
                let next = reader.next_line();
                let last = matches!(next, Incoming::Eof | Incoming::Failed(_));
                if lines.blocking_send(next).is_err() || last {
                    break;
                }
            }
        });
        let mut term = signal(SignalKind::terminate())?;
        let mut hangup = signal(SignalKind::hangup())?;
        session.read_cycles_off_loop();
        let mut watch = tokio::time::interval(interval);
        watch.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            let deadline = session.deadline();
            let sleep_until = deadline.map_or_else(
                || tokio::time::Instant::now() + Duration::from_secs(86_400),
                tokio::time::Instant::from_std,
            );
            let event = tokio::select! {
                _ = term.recv() => Event::Shutdown,
                _ = hangup.recv() => Event::Shutdown,
                () = failed.notified() => Event::Watch,
                _ = watch.tick() => Event::Watch,
                line = incoming.recv() => Event::Line(line.unwrap_or(Incoming::Eof)),
                () = tokio::time::sleep_until(sleep_until), if deadline.is_some() => Event::Tick,
                pushed = session.next_push() => Event::Push(pushed),
                () = session.next_cycle() => Event::Cycled,
            };
            let shutdown = matches!(event, Event::Shutdown);
            if let Flow::Exit(code) = session.handle(event) {
                if !shutdown {
                    session.drain(FLUSH_GRACE);
                }
                session.end_reads();
                return Ok::<u8, anyhow::Error>(code);
            }
        }
    })?;
    // The stdin thread may still be blocked in a read, and the outbox's writer in a write; both
    // end with the process.
    runtime.shutdown_background();
    Ok(code)
}
