//! The serve process, as docs/protocol.md "The serve process" and "Session" say: start-up in its
//! order (config, device, runtime dir, connection slot), then one loop over lines read from stdin
//! (a reader thread cuts them at 64 KiB) and cycle ticks; an outbox thread writes stdout, so the
//! loop never waits for the client (8 MiB or 30 s unread ends the connection), a closed stdout is
//! noticed every cycle, SIGTERM and SIGHUP end the process at once and every other exit waits up
//! to 2 s for its last frames to be read.

use std::collections::VecDeque;
use std::io::{Read, Write};
use std::path::PathBuf;
use std::sync::mpsc::{self, RecvTimeoutError};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

use serde_json::{Map, Value, json};

use crate::fleet::{self, Fleet, Pane, Tmux};
use crate::places::{self, Slot};
use crate::wire::{self, Line, NO_ID};

/// The longest request line, newline excluded.
const LINE_CAP: usize = 64 * 1024;
/// What may wait unread, and for how long without the client reading.
const UNREAD_BYTES: usize = 8 * 1024 * 1024;
const UNREAD_FOR: Duration = Duration::from_secs(30);
/// How long an exit waits for its last frames to be read.
const LAST_READ: Duration = Duration::from_secs(2);

/// Runs `serve` for `device` to the end of the process.
pub fn serve(device: &str) -> ! {
    on_signals_exit();
    let config = places::config().unwrap_or_else(|why| refuse_at_start("internal", &why, 1));
    let record = match places::device(device) {
        Ok(Some(record)) => record,
        Ok(None) => refuse_at_start("scope-denied", "this device is not enrolled", 2),
        Err(why) => refuse_at_start("internal", &why, 1),
    };
    let runtime = places::runtime_dir().unwrap_or_else(|why| refuse_at_start("internal", &why, 1));
    let _slot = match places::claim_slot(&runtime, config.max_connections) {
        Ok(Slot::Held(file)) => file,
        Ok(Slot::Full) => refuse_at_start(
            "too-many-connections",
            "every connection slot of this host is taken",
            2,
        ),
        Err(why) => refuse_at_start("internal", &why, 1),
    };
    let outbox = Outbox::start();
    let (events, lines) = mpsc::channel();
    std::thread::spawn(move || read_stdin(&events));
    let mut session = Session {
        device: device.to_owned(),
        scopes: record.scopes,
        config,
        runtime,
        tmux: Tmux::new(config.reconcile_interval_ms),
        outbox,
        handshaken: false,
        stream: None,
        warned_no_server: None,
    };
    let cycle = Duration::from_millis(config.reconcile_interval_ms);
    let mut next = Instant::now() + cycle;
    loop {
        let wait = next.saturating_duration_since(Instant::now());
        match lines.recv_timeout(wait) {
            Ok(Input::Line(bytes)) => session.line(&bytes),
            Ok(Input::TooLong) => session.send(wire::error(
                NO_ID,
                "bad-request",
                "the line is longer than 64 KiB",
            )),
            Ok(Input::End) | Err(RecvTimeoutError::Disconnected) => session.finish(0),
            Err(RecvTimeoutError::Timeout) => {
                next += cycle;
                if next < Instant::now() {
                    next = Instant::now() + cycle;
                }
                session.tick();
            }
        }
    }
}

/// Writes one refusal before the session exists and exits with `code`.
fn refuse_at_start(code_word: &str, why: &str, code: i32) -> ! {
    eprintln!("minimal-host: {why}");
    let line = format!("{}\n", wire::error(NO_ID, code_word, why));
    let mut stdout = std::io::stdout().lock();
    let _ = stdout.write_all(line.as_bytes());
    let _ = stdout.flush();
    std::process::exit(code);
}

/// SIGTERM and SIGHUP end the process at once, exit 0.
fn on_signals_exit() {
    std::thread::spawn(|| {
        let Ok(runtime) = tokio::runtime::Builder::new_current_thread()
            .enable_io()
            .build()
        else {
            return;
        };
        runtime.block_on(async {
            use tokio::signal::unix::{SignalKind, signal};
            let (Ok(mut term), Ok(mut hup)) = (
                signal(SignalKind::terminate()),
                signal(SignalKind::hangup()),
            ) else {
                return;
            };
            tokio::select! {
                _ = term.recv() => {}
                _ = hup.recv() => {}
            }
            std::process::exit(0);
        });
    });
}

/// What the reader thread hands the loop.
enum Input {
    Line(Vec<u8>),
    TooLong,
    End,
}

/// Reads stdin into lines of at most [`LINE_CAP`] bytes; a longer one is reported once and
/// discarded up to its newline; an unterminated fragment at the end is dropped.
fn read_stdin(events: &mpsc::Sender<Input>) {
    let mut stdin = std::io::stdin().lock();
    let mut line = Vec::new();
    let mut discarding = false;
    let mut chunk = [0u8; 16 * 1024];
    loop {
        let n = match stdin.read(&mut chunk) {
            Ok(0) | Err(_) => {
                let _ = events.send(Input::End);
                return;
            }
            Ok(n) => n,
        };
        for &byte in &chunk[..n] {
            if byte == b'\n' {
                if !discarding {
                    let _ = events.send(Input::Line(std::mem::take(&mut line)));
                }
                line.clear();
                discarding = false;
                continue;
            }
            if discarding {
                continue;
            }
            line.push(byte);
            if line.len() > LINE_CAP {
                line.clear();
                discarding = true;
                let _ = events.send(Input::TooLong);
            }
        }
    }
}

/// Frames waiting for the writer thread.
#[derive(Debug, Default)]
struct Queue {
    frames: VecDeque<Vec<u8>>,
    bytes: usize,
    /// When the client last took a frame, or when frames began to wait.
    progress: Option<Instant>,
    writing: bool,
}

/// stdout, written by a thread of its own.
#[derive(Debug, Clone)]
struct Outbox {
    queue: Arc<(Mutex<Queue>, Condvar)>,
}

impl Outbox {
    fn start() -> Outbox {
        let outbox = Outbox {
            queue: Arc::new((Mutex::new(Queue::default()), Condvar::new())),
        };
        let writer = outbox.clone();
        std::thread::spawn(move || writer.write_all());
        outbox
    }

    fn write_all(&self) {
        let (lock, ready) = &*self.queue;
        let mut stdout = std::io::stdout();
        loop {
            let frame = {
                let mut queue = lock.lock().unwrap_or_else(|e| e.into_inner());
                while queue.frames.is_empty() {
                    queue = ready.wait(queue).unwrap_or_else(|e| e.into_inner());
                }
                queue.writing = true;
                queue.frames.pop_front().unwrap_or_default()
            };
            let written = stdout.write_all(&frame).and_then(|()| stdout.flush());
            let mut queue = lock.lock().unwrap_or_else(|e| e.into_inner());
            queue.bytes = queue.bytes.saturating_sub(frame.len());
            queue.writing = false;
            queue.progress = Some(Instant::now());
            ready.notify_all();
            if written.is_err() {
                // The client closed its end: the session is over.
                std::process::exit(0);
            }
        }
    }

    /// Queues a frame whole; past the bound of what may wait, the connection ends.
    fn push(&self, frame: &Value) {
        let mut line = frame.to_string().into_bytes();
        line.push(b'\n');
        let (lock, ready) = &*self.queue;
        let mut queue = lock.lock().unwrap_or_else(|e| e.into_inner());
        let waiting = !queue.frames.is_empty() || queue.writing;
        if waiting && queue.bytes + line.len() > UNREAD_BYTES {
            eprintln!("minimal-host: more than 8 MiB waits unread: the connection ends");
            std::process::exit(0);
        }
        if !waiting {
            queue.progress = Some(Instant::now());
        }
        queue.bytes += line.len();
        queue.frames.push_back(line);
        ready.notify_all();
    }

    /// Ends the connection when what waits has not been read for 30 s.
    fn check_stalled(&self) {
        let (lock, _) = &*self.queue;
        let queue = lock.lock().unwrap_or_else(|e| e.into_inner());
        let waiting = !queue.frames.is_empty() || queue.writing;
        if waiting && queue.progress.is_some_and(|at| at.elapsed() > UNREAD_FOR) {
            eprintln!("minimal-host: the client read nothing for 30 s: the connection ends");
            std::process::exit(0);
        }
    }

    /// Waits up to `limit` for every frame to be written.
    fn drain(&self, limit: Duration) {
        let (lock, ready) = &*self.queue;
        let deadline = Instant::now() + limit;
        let mut queue = lock.lock().unwrap_or_else(|e| e.into_inner());
        while !queue.frames.is_empty() || queue.writing {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return;
            }
            queue = ready
                .wait_timeout(queue, left)
                .unwrap_or_else(|e| e.into_inner())
                .0;
        }
    }
}

/// Whether the other end of stdout is gone.
fn stdout_closed() -> bool {
    let stdout = std::io::stdout();
    let mut fds = [rustix::event::PollFd::new(
        &stdout,
        rustix::event::PollFlags::empty(),
    )];
    let zero = rustix::event::Timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    match rustix::event::poll(&mut fds, Some(&zero)) {
        Ok(_) => fds[0]
            .revents()
            .intersects(rustix::event::PollFlags::ERR | rustix::event::PollFlags::HUP),
        Err(_) => false,
    }
}

/// A subscription's stream.
#[derive(Debug)]
struct Stream {
    id: String,
    events: bool,
    selector: Option<Map<String, Value>>,
    /// The last read the stream compared with (edges), unset until a read succeeds.
    baseline: Option<Vec<Pane>>,
    /// The last snapshot sent (snapshots).
    sent: Option<Value>,
}

/// One connection's state.
struct Session {
    device: String,
    scopes: Vec<String>,
    config: places::Config,
    runtime: PathBuf,
    tmux: Tmux,
    outbox: Outbox,
    handshaken: bool,
    stream: Option<Stream>,
    warned_no_server: Option<Instant>,
}

impl Session {
    fn send(&self, frame: Value) {
        self.outbox.push(&frame);
    }

    /// Exits with `code` once the last frames were read, or after 2 s.
    fn finish(&self, code: i32) -> ! {
        self.outbox.drain(LAST_READ);
        std::process::exit(code);
    }

    /// Re-reads the device's record before a request or a publish: a revoked device is refused
    /// with `id` and the process exits 2; a store that no longer reads is `internal`, exit 1.
    fn recheck_device(&mut self, id: &str) {
        match places::device(&self.device) {
            Ok(Some(record)) => self.scopes = record.scopes,
            Ok(None) => {
                self.send(wire::error(id, "scope-denied", "this device was revoked"));
                self.finish(2);
            }
            Err(why) => {
                eprintln!("minimal-host: {why}");
                self.send(wire::error(
                    id,
                    "internal",
                    "the device store does not read",
                ));
                self.finish(1);
            }
        }
    }

    /// One read of the fleet: the panes, `None` when the read failed.
    fn read(&mut self) -> Result<Vec<Pane>, String> {
        match self.tmux.read() {
            Fleet::Panes(panes) => Ok(panes),
            Fleet::NoServer => {
                let due = self
                    .warned_no_server
                    .is_none_or(|at| at.elapsed() >= Duration::from_secs(60));
                if due {
                    eprintln!(
                        "minimal-host: warning: no tmux server is running on the socket {}: the \
                         fleet is empty",
                        self.tmux.socket()
                    );
                    self.warned_no_server = Some(Instant::now());
                }
                Ok(Vec::new())
            }
            Fleet::Failed(why) => {
                eprintln!("minimal-host: reading the fleet failed: {why}");
                Err(why)
            }
        }
    }

    fn line(&mut self, bytes: &[u8]) {
        let (id, t, body) = match wire::read(bytes) {
            Line::Refused(frame) => return self.send(frame),
            Line::Request { id, t, body } => (id, t, body),
        };
        self.recheck_device(&id);
        if t == "hello" {
            if self.handshaken {
                return self.send(wire::error(
                    &id,
                    "bad-request",
                    "the session already said hello",
                ));
            }
            self.handshaken = true;
            let claimed = body["device"].as_str().unwrap_or_default();
            if claimed != self.device {
                eprintln!(
                    "minimal-host: warning: the client claims device {claimed}; this connection is \
                     device {}",
                    self.device
                );
            }
            let reply = wire::frame(
                &id,
                "hello",
                vec![
                    ("host", json!(self.tmux.host())),
                    ("tool_version", json!("0.1.0")),
                    (
                        "reconcile_interval_ms",
                        json!(self.config.reconcile_interval_ms),
                    ),
                    ("scopes", json!(self.scopes)),
                ],
            );
            return self.send(reply);
        }
        if !self.handshaken {
            return self.send(wire::error(
                &id,
                "bad-request",
                "the first frame must be hello",
            ));
        }
        let reads = [
            "snapshot",
            "subscribe",
            "card",
            "window",
            "event",
            "receipts",
        ];
        if reads.contains(&t.as_str()) && !self.scopes.iter().any(|s| s == "read") {
            return self.send(wire::error(&id, "scope-denied", "this device may not read"));
        }
        if t == "subscribe" {
            return self.subscribe(&id, &body);
        }
        let answer = match t.as_str() {
            "snapshot" => self.snapshot(&id, &body),
            "card" => self.card(&id, &body),
            "window" | "event" => self.transcript(&id, &body),
            "dispatch" => self.dispatch(&id, &body),
            _ => self.receipts(&id, &body),
        };
        self.send(answer);
    }

    fn selector(body: &Map<String, Value>) -> Option<Map<String, Value>> {
        body.get("selector").and_then(Value::as_object).cloned()
    }

    fn rows(panes: &[Pane], selector: Option<&Map<String, Value>>) -> Value {
        Value::Array(
            panes
                .iter()
                .filter(|pane| fleet::admits(selector, &pane.row))
                .map(|pane| Value::Object(pane.row.clone()))
                .collect(),
        )
    }

    fn snapshot(&mut self, id: &str, body: &Map<String, Value>) -> Value {
        match self.read() {
            Ok(panes) => {
                let rows = Session::rows(&panes, Session::selector(body).as_ref());
                wire::frame(id, "snapshot", vec![("agents", rows)])
            }
            Err(_) => wire::error(id, "internal", "reading the fleet from tmux failed"),
        }
    }

    /// `subscribe`: `ack`, then the stream's first cycle at once.
    fn subscribe(&mut self, id: &str, body: &Map<String, Value>) {
        if self.stream.is_some() {
            return self.send(wire::error(
                id,
                "bad-request",
                "this connection already subscribed",
            ));
        }
        self.stream = Some(Stream {
            id: id.to_owned(),
            events: body.get("events") == Some(&Value::Bool(true)),
            selector: Session::selector(body),
            baseline: None,
            sent: None,
        });
        self.send(wire::frame(id, "ack", Vec::new()));
        self.publish();
    }

    /// One cycle of the stream: edges from the baseline, or the snapshot when it changed.
    fn publish(&mut self) {
        let Some(id) = self.stream.as_ref().map(|stream| stream.id.clone()) else {
            return;
        };
        self.recheck_device(&id);
        let Ok(panes) = self.read() else {
            return;
        };
        let at = fleet::now_ms();
        let Some(stream) = self.stream.as_mut() else {
            return;
        };
        let mut frames = Vec::new();
        if stream.events {
            if let Some(before) = &stream.baseline {
                for edge in fleet::edges(before, &panes, stream.selector.as_ref(), at) {
                    frames.push(wire::frame(&stream.id, "edge", edge));
                }
            }
            stream.baseline = Some(panes);
        } else {
            let rows = Session::rows(&panes, stream.selector.as_ref());
            if stream.sent.as_ref() != Some(&rows) {
                frames.push(wire::frame(
                    &stream.id,
                    "snapshot",
                    vec![("agents", rows.clone())],
                ));
                stream.sent = Some(rows);
            }
        }
        for frame in frames {
            self.send(frame);
        }
    }

    fn tick(&mut self) {
        if stdout_closed() {
            eprintln!("minimal-host: the client closed its end of stdout");
            std::process::exit(0);
        }
        self.outbox.check_stalled();
        if self.stream.is_some() {
            self.publish();
        }
    }

    /// The pane a request names, from a fresh read; the error answer when there is none.
    fn pane(&mut self, id: &str, body: &Map<String, Value>) -> Result<Pane, Value> {
        let wanted = body["pane"].as_str().unwrap_or_default().to_owned();
        let panes = self
            .read()
            .map_err(|_| wire::error(id, "internal", "reading the fleet from tmux failed"))?;
        panes
            .into_iter()
            .find(|pane| pane.id() == wanted)
            .ok_or_else(|| wire::error(id, "not-found", "this host has no such agent pane"))
    }

    fn card(&mut self, id: &str, body: &Map<String, Value>) -> Value {
        match self.pane(id, body) {
            Ok(pane) => wire::frame(id, "card", crate::cards::card(&pane, &self.runtime)),
            Err(answer) => answer,
        }
    }

    /// `window` and `event`: this host reads no transcript store, so every transcript it finds
    /// is refused `unsupported`.
    fn transcript(&mut self, id: &str, body: &Map<String, Value>) -> Value {
        let pane = match self.pane(id, body) {
            Ok(pane) => pane,
            Err(answer) => return answer,
        };
        // The refused stores are refused whatever file a pane names ("Transcript stores").
        let refused = match pane.text("agent") {
            Some("opencode") => Some("OpenCode keeps its conversation in an embedded database"),
            Some("cursor-agent") => {
                Some("cursor-agent's store has no tool results, timestamps or version stamp")
            }
            _ => None,
        };
        if let Some(why) = refused {
            return wire::error(id, "unsupported", why);
        }
        let found = pane
            .option("@agent_transcript")
            .is_some_and(|path| std::path::Path::new(path).is_file());
        if !found {
            return wire::error(id, "not-found", "this pane's transcript cannot be found");
        }
        wire::error(
            id,
            "unsupported",
            "this host reads no transcript store, so it serves no window of one",
        )
    }

    /// `dispatch`: the host check, then gate 1. This host loads no action manifest, so no
    /// action is one of a loaded manifest and every dispatch is refused at the scope gate.
    fn dispatch(&mut self, id: &str, body: &Map<String, Value>) -> Value {
        let host = body["host"].as_str().unwrap_or_default();
        if !host.is_empty() && host != self.tmux.host() {
            return wire::error(id, "not-found", "that host is not this one");
        }
        wire::frame(
            id,
            "receipt",
            vec![
                ("slot", body["slot"].clone()),
                ("pane", body["pane"].clone()),
                ("action", body["action"].clone()),
                ("outcome", json!("refused")),
                ("reason", json!("scope-denied")),
                ("exit_code", json!(4)),
                ("cached", json!(false)),
                ("device", json!(self.device)),
                ("at_ms", json!(fleet::now_ms())),
            ],
        )
    }

    fn receipts(&mut self, id: &str, body: &Map<String, Value>) -> Value {
        let slot = body.get("slot").and_then(Value::as_str);
        let since = body.get("since_ms").and_then(Value::as_u64);
        let receipts = places::receipts(&self.runtime, slot, since);
        wire::frame(id, "receipts", vec![("receipts", json!(receipts))])
    }
}
