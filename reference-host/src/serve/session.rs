//! One connection's session: every trigger (a client line, a cycle tick, shutdown) arrives as an
//! [`Event`] and is handled in one `match`, one at a time, so a streamed frame never interleaves
//! with a response and requests keep being answered while a stream runs.
//!
//! The device store is consulted on every line and every tick (one `stat` in the steady state): a
//! device whose record is gone gets `scope-denied` with the id of what it was doing, and the
//! process exits 2.

use std::io::Write;
use std::time::{Duration, Instant};

use schema::{
    DecodeError, Envelope, ErrorCode, FleetRow, HelloReply, Request, Response, Selector, Snapshot,
    UNADDRESSED_ID, decode_line,
};

use crate::clock::now_ms;
use crate::devices::StoreWatch;
use crate::edges::edges;
use crate::fleet::FleetSource;
use crate::selector::admits;
use crate::serve::transport::{FrameWriter, Incoming};

/// Something the session must react to.
#[derive(Debug)]
pub enum Event {
    /// The transport read something.
    Line(Incoming),
    /// The stream's cycle is due.
    Tick,
    /// SIGTERM or SIGHUP.
    Shutdown,
}

/// What the loop does next.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Flow {
    /// Wait for the next event.
    Continue,
    /// Exit the process with this code: 0 on EOF or shutdown, 2 refused, 1 host failure.
    Exit(u8),
}

/// The output is gone (closed pipe): the session ends cleanly.
struct Gone;

type Handled = Result<Flow, Gone>;

/// A running subscription.
#[derive(Debug)]
struct Stream {
    /// The subscribe request's id; every streamed frame carries it.
    id: String,
    events: bool,
    selector: Option<Selector>,
    /// Edges: the whole fleet at the last cycle (`None` before the baseline). Snapshots: the
    /// rows last sent.
    last: Option<Vec<FleetRow>>,
}

/// The fixed facts of a session.
#[derive(Debug, Clone)]
pub struct SessionConfig {
    /// The device fingerprint the spawner passed; the only identity trusted.
    pub device: String,
    /// The cycle cadence.
    pub interval: Duration,
}

/// One connection.
#[derive(Debug)]
pub struct Session<S, W> {
    config: SessionConfig,
    store: StoreWatch,
    fleet: S,
    out: FrameWriter<W>,
    greeted: bool,
    stream: Option<Stream>,
    deadline: Option<Instant>,
}

impl<S: FleetSource, W: Write> Session<S, W> {
    /// A session that has not seen hello yet.
    pub fn new(config: SessionConfig, store: StoreWatch, fleet: S, out: FrameWriter<W>) -> Self {
        Session {
            config,
            store,
            fleet,
            out,
            greeted: false,
            stream: None,
            deadline: None,
        }
    }

    /// When the next [`Event::Tick`] is due, if a stream runs.
    pub fn deadline(&self) -> Option<Instant> {
        self.deadline
    }

    /// The output, for tests.
    #[cfg(test)]
    pub fn output(&self) -> &W {
        self.out.get_ref()
    }

    /// Reacts to one event.
    pub fn handle(&mut self, event: Event) -> Flow {
        let handled = match event {
            Event::Line(incoming) => self.on_line(incoming),
            Event::Tick => self.on_tick(),
            Event::Shutdown => Ok(Flow::Exit(0)),
        };
        handled.unwrap_or(Flow::Exit(0))
    }

    fn send(&mut self, id: &str, body: Response) -> Result<(), Gone> {
        self.out.send(&Envelope::new(id, body)).map_err(|err| {
            tracing::info!(%err, "output closed");
            Gone
        })
    }

    fn error(&mut self, id: &str, code: ErrorCode, message: impl Into<String>) -> Handled {
        self.send(id, Response::error(code, message))?;
        Ok(Flow::Continue)
    }

    /// Checks the device's record; answers and ends the session when it is gone.
    fn check_device(&mut self, id: &str) -> Result<Option<Flow>, Gone> {
        match self.store.current() {
            Ok(store) if store.by_id(&self.config.device).is_some() => Ok(None),
            Ok(_) => {
                tracing::warn!(device = %self.config.device, "device record removed; ending the session");
                let message = format!("device {} is not enrolled on this host", self.config.device);
                self.send(id, Response::error(ErrorCode::ScopeDenied, message))?;
                Ok(Some(Flow::Exit(2)))
            }
            Err(err) => {
                tracing::error!(%err, "device store unreadable");
                self.send(
                    id,
                    Response::error(ErrorCode::Internal, "the host's device store is unreadable"),
                )?;
                Ok(Some(Flow::Exit(1)))
            }
        }
    }

    fn on_line(&mut self, incoming: Incoming) -> Handled {
        let decoded = match incoming {
            Incoming::Eof => return Ok(Flow::Exit(0)),
            Incoming::Failed(err) => {
                tracing::warn!(%err, "reading stdin failed; ending the session");
                return Ok(Flow::Exit(0));
            }
            Incoming::TooLong => Err(bad_line(format!(
                "the line is longer than {} bytes",
                super::transport::LINE_CAP
            ))),
            Incoming::NotUtf8 => Err(bad_line("the line is not UTF-8".into())),
            Incoming::Line(text) if text.trim().is_empty() => {
                Err(bad_line("the line is empty".into()))
            }
            Incoming::Line(text) => decode_line::<Request>(&text),
        };
        let id = match &decoded {
            Ok(frame) => frame.id.clone(),
            Err(err) => err.reply_id().to_owned(),
        };
        if let Some(flow) = self.check_device(&id)? {
            return Ok(flow);
        }
        match decoded {
            Ok(frame) => self.on_request(frame.id, frame.body),
            Err(err) => {
                tracing::debug!(%err, "refused a line");
                self.error(&id, err.code(), err.to_string())
            }
        }
    }

    fn on_request(&mut self, id: String, request: Request) -> Handled {
        if !self.greeted && !matches!(request, Request::Hello(_)) {
            return self.error(&id, ErrorCode::BadRequest, "the first frame must be hello");
        }
        match request {
            Request::Hello(hello) => {
                if self.greeted {
                    return self.error(
                        &id,
                        ErrorCode::BadRequest,
                        "this connection already said hello",
                    );
                }
                self.greeted = true;
                tracing::info!(app = %hello.app, app_version = %hello.app_version, claimed = %hello.device, device = %self.config.device, "hello");
                // The line's device check just refreshed the store; its memo is current.
                let scopes = self
                    .store
                    .last()
                    .and_then(|store| store.by_id(&self.config.device))
                    .map(|d| d.scopes.clone())
                    .unwrap_or_default();
                let reply = HelloReply {
                    host: self.fleet.host().to_owned(),
                    tool_version: env!("CARGO_PKG_VERSION").to_owned(),
                    reconcile_interval_ms: u64::try_from(self.config.interval.as_millis())
                        .unwrap_or(u64::MAX),
                    scopes,
                };
                self.send(&id, Response::Hello(reply))?;
                Ok(Flow::Continue)
            }
            Request::Snapshot(request) => {
                let Some(rows) = self.read_for(&id)? else {
                    return Ok(Flow::Continue);
                };
                let agents = rows
                    .into_iter()
                    .filter(|r| admits(request.selector.as_ref(), r))
                    .collect();
                self.send(&id, Response::Snapshot(Snapshot { agents }))?;
                Ok(Flow::Continue)
            }
            Request::Subscribe(request) => {
                if self.stream.is_some() {
                    return self.error(
                        &id,
                        ErrorCode::BadRequest,
                        "this connection is already subscribed",
                    );
                }
                self.send(&id, Response::Ack)?;
                self.stream = Some(Stream {
                    id,
                    events: request.events,
                    selector: request.selector,
                    last: None,
                });
                // The first cycle runs at once: the silent baseline, or the first snapshot.
                self.deadline = Some(Instant::now());
                Ok(Flow::Continue)
            }
            Request::Card(request) => self.about_pane(&id, &request.pane, "card"),
            Request::Window(request) => self.about_pane(&id, &request.pane, "window"),
            Request::Event(request) => self.about_pane(&id, &request.pane, "event"),
            Request::Dispatch(request) => {
                let host = self.fleet.host().to_owned();
                if !request.host.is_empty() && request.host != host {
                    let message = format!("this host is {host}, not {}", request.host);
                    return self.error(&id, ErrorCode::NotFound, message);
                }
                self.about_pane(&id, &request.pane, "dispatch")
            }
            Request::Receipts(_) => self.error(
                &id,
                ErrorCode::Internal,
                "receipts are not implemented by this host yet",
            ),
        }
    }

    /// A request that names a pane: `not-found` for a pane this host does not have. The
    /// operations themselves are not built yet.
    fn about_pane(&mut self, id: &str, pane: &str, what: &str) -> Handled {
        let Some(rows) = self.read_for(id)? else {
            return Ok(Flow::Continue);
        };
        if !rows.iter().any(|row| row.pane == pane) {
            return self.error(
                id,
                ErrorCode::NotFound,
                format!("no agent pane {pane} on this host"),
            );
        }
        self.error(
            id,
            ErrorCode::Internal,
            format!("{what} is not implemented by this host yet"),
        )
    }

    /// Reads the fleet for a request; a failed read is answered `internal`.
    fn read_for(&mut self, id: &str) -> Result<Option<Vec<FleetRow>>, Gone> {
        match self.fleet.read() {
            Ok(rows) => Ok(Some(rows)),
            Err(err) => {
                tracing::error!(%err, "reading the fleet failed");
                self.send(
                    id,
                    Response::error(
                        ErrorCode::Internal,
                        "the host could not read its tmux server",
                    ),
                )?;
                Ok(None)
            }
        }
    }

    fn on_tick(&mut self) -> Handled {
        let Some(stream_id) = self.stream.as_ref().map(|s| s.id.clone()) else {
            self.deadline = None;
            return Ok(Flow::Continue);
        };
        self.schedule();
        if let Some(flow) = self.check_device(&stream_id)? {
            return Ok(flow);
        }
        let rows = match self.fleet.read() {
            Ok(rows) => rows,
            Err(err) => {
                // A transient tmux failure skips one publish; the stream and its baseline live on.
                tracing::warn!(%err, "reading the fleet failed; skipping this cycle");
                return Ok(Flow::Continue);
            }
        };
        let stream = self.stream.as_mut().expect("checked above");
        let mut frames = Vec::new();
        if stream.events {
            if let Some(before) = &stream.last {
                let at = now_ms();
                frames.extend(
                    edges(before, &rows, stream.selector.as_ref(), at)
                        .into_iter()
                        .map(Response::Edge),
                );
            }
            stream.last = Some(rows);
        } else {
            let agents: Vec<FleetRow> = rows
                .into_iter()
                .filter(|r| admits(stream.selector.as_ref(), r))
                .collect();
            if stream.last.as_ref() != Some(&agents) {
                frames.push(Response::Snapshot(Snapshot {
                    agents: agents.clone(),
                }));
                stream.last = Some(agents);
            }
        }
        for frame in frames {
            self.send(&stream_id, frame)?;
        }
        Ok(Flow::Continue)
    }

    /// The next tick: one interval after the last deadline, never in the past.
    fn schedule(&mut self) {
        let now = Instant::now();
        let next = self.deadline.map_or(now, |d| d + self.config.interval);
        self.deadline = Some(if next <= now {
            now + self.config.interval
        } else {
            next
        });
    }
}

fn bad_line(reason: String) -> DecodeError {
    DecodeError::Unaddressed { reason }
}

/// Answers a refusal that happens before any session exists (unknown device, connection cap,
/// start-up failure): one error frame with id `"0"`.
pub fn refuse<W: Write>(out: W, code: ErrorCode, message: &str) {
    let mut writer = FrameWriter::new(out);
    if let Err(err) = writer.send(&Envelope::new(
        UNADDRESSED_ID,
        Response::error(code, message),
    )) {
        tracing::info!(%err, "could not write the refusal");
    }
}

#[cfg(test)]
mod tests;
