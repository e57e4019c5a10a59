//! One connection's session: every trigger (a client line, a cycle tick, shutdown) arrives as an
//! [`Event`] and is handled in one `match`, one at a time, so a streamed frame never interleaves
//! with a response and requests keep being answered while a stream runs.
//!
//! What every line goes through is here: decoding (a bad line is answered with the id it can
//! recover, else `"0"`), the device check, and hello before anything else. What a request does is
//! its handler's job, in `requests/`; what a stream publishes is `stream.rs`'s.
//!
//! The device store is consulted on every line and every tick (one `stat` in the steady state): a
//! device whose record is gone gets `scope-denied` with the id of what it was doing, and the
//! process exits 2.

use std::io::Write;
use std::time::{Duration, Instant};

use schema::{DecodeError, Envelope, ErrorCode, Request, Response, UNADDRESSED_ID, decode_line};

use crate::clock::now_ms;
use crate::devices::StoreWatch;
use crate::fleet::{CycleRead, FleetSource, Pane};
use crate::offloop::OffLoop;
use crate::push::{self, Pushed, PushedPane};
use crate::serve::pushes::Pushes;
use crate::serve::requests::{self, Connection, Services, SessionConfig};
use crate::serve::stream::Stream;
use crate::serve::transport::{FrameWriter, Incoming, LINE_CAP, Sink};

/// Something the session must react to.
#[derive(Debug)]
pub enum Event {
    /// The transport read something.
    Line(Incoming),
    /// The stream's cycle is due.
    Tick,
    /// Time to check the output (every cycle, stream or not), or the output's writer failed.
    Watch,
    /// An agent's hook said these panes moved (`crate::push`).
    Push(Pushed),
    /// The stream cycle's read under way answered.
    Cycled,
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

/// One connection.
pub struct Session<S: FleetSource, W> {
    /// What the requests read and change.
    conn: Connection<S>,
    out: FrameWriter<W>,
    greeted: bool,
    /// The connection's push socket.
    pushes: Pushes,
    /// The stream's cycle reads (docs/protocol.md "Pushed reads"): on a thread each under
    /// `serve`'s loop, so a push that comes while tmux answers a read of 1000 panes is published
    /// at once instead of after it; a tick that comes while a read is under way is skipped (the
    /// read under way is that cycle's).
    cycles: OffLoop<UnderWay, S::CycleAnswer>,
}

impl<S: FleetSource + std::fmt::Debug, W: std::fmt::Debug> std::fmt::Debug for Session<S, W> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Session")
            .field("conn", &self.conn)
            .field("greeted", &self.greeted)
            .field("under_way", &self.cycles.under_way())
            .finish_non_exhaustive()
    }
}

/// A read of the whole fleet under way: when its tick (or push) woke, on the loop's clock and the
/// wall clock, and whether its answer moves the stream onto the host's shared schedule (a
/// cycle's does; a read a push asked for leaves the cycle's schedule alone).
#[derive(Debug, Clone, Copy)]
struct UnderWay {
    woke: Instant,
    woke_ms: u64,
    aligns: bool,
}

impl<S: FleetSource, W: Sink> Session<S, W> {
    /// A session that has not seen hello yet.
    pub fn new(
        config: SessionConfig,
        store: StoreWatch,
        fleet: S,
        services: Services,
        out: FrameWriter<W>,
    ) -> Self {
        Session {
            pushes: Pushes::new(services.runtime.clone()),
            conn: Connection::new(config, store, fleet, services),
            out,
            greeted: false,
            cycles: OffLoop::inline(),
        }
    }

    /// Runs the stream's cycle reads on threads from now on (`serve`'s loop, which waits for
    /// their answers with [`Session::next_cycle`]).
    pub fn read_cycles_off_loop(&mut self) {
        self.cycles.on_threads();
    }

    /// Waits until a cycle's read has answered (never, while none is under way).
    pub async fn next_cycle(&self) {
        self.cycles.answered().await;
    }

    /// Waits for the cycle's read under way to end, before the process exits: the tmux client
    /// it runs is bounded by the tmux time-out, and would otherwise outlive the process (a
    /// client of a hung server waits for it forever).
    pub fn end_reads(&mut self) {
        self.cycles.end();
    }

    /// Keeps cycle reads until [`Session::answer_held`] runs them (tests).
    #[cfg(test)]
    pub fn hold_cycles(&mut self) {
        self.cycles.hold();
    }

    /// Runs the cycle reads held so far: their answers wait for [`Event::Cycled`] (tests).
    #[cfg(test)]
    pub fn answer_held(&mut self) -> usize {
        self.cycles.run_held()
    }

    /// When the next [`Event::Tick`] is due, if a stream runs.
    pub fn deadline(&self) -> Option<Instant> {
        self.conn.stream.as_ref().map(Stream::due)
    }

    /// The next push to this connection, whenever it comes (never, before its stream's first
    /// read found a pane: until then a push could publish nothing).
    pub async fn next_push(&self) -> Pushed {
        self.pushes.next().await
    }

    /// The socket path of the tmux server whose pushes this session hears, if it hears any.
    #[cfg(test)]
    pub fn push_server(&self) -> Option<&str> {
        self.pushes.server()
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
            Event::Watch => self.on_watch(),
            Event::Push(pushed) => self.on_push(pushed),
            Event::Cycled => self.on_cycled(),
            Event::Shutdown => Ok(Flow::Exit(0)),
        };
        handled.unwrap_or(Flow::Exit(0))
    }

    /// Waits up to `within` for the frames written so far to be read (before an exit that is not
    /// a shutdown, so a refusal or the last answers reach the client).
    pub fn drain(&mut self, within: Duration) -> bool {
        self.out.drain(within)
    }

    /// The output's reader left, or stopped reading: the session ends.
    fn on_watch(&mut self) -> Handled {
        self.out.check().map_err(|err| {
            tracing::info!(%err, "output unusable");
            Gone
        })?;
        Ok(Flow::Continue)
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
        let device = &self.conn.config.device;
        match self.conn.store.current() {
            Ok(store) if store.by_id(device).is_some() => Ok(None),
            Ok(_) => {
                tracing::warn!(%device, "device record removed; ending the session");
                let message = format!("device {device} is not enrolled on this host");
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
                "the line is longer than {LINE_CAP} bytes"
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

    /// Hello first and only once; then the request's handler answers it.
    fn on_request(&mut self, id: String, request: Request) -> Handled {
        let hello = matches!(request, Request::Hello(_));
        if !self.greeted && !hello {
            return self.error(&id, ErrorCode::BadRequest, "the first frame must be hello");
        }
        if self.greeted && hello {
            return self.error(
                &id,
                ErrorCode::BadRequest,
                "this connection already said hello",
            );
        }
        self.greeted = true;
        let response = requests::answer(&mut self.conn, &id, request);
        self.send(&id, response)?;
        Ok(Flow::Continue)
    }

    /// One cycle of the stream: the device check, then one read of the fleet begun (as the
    /// stream's kind needs it, shared with the host's other connections where the source
    /// shares), off the loop where the session runs its reads there. The next cycle is one
    /// interval on, or the shared schedule's next instant. A tick while a read is under way is
    /// skipped: that read is this cycle's.
    fn on_tick(&mut self) -> Handled {
        let Some(stream) = self.conn.stream.as_mut() else {
            return Ok(Flow::Continue);
        };
        let interval = self.conn.config.interval;
        let (woke, woke_ms) = (Instant::now(), now_ms());
        stream.reschedule(interval, woke);
        if self.cycles.under_way().is_some() {
            tracing::debug!("a cycle's read is still under way; this tick is skipped");
            return Ok(Flow::Continue);
        }
        let (id, floor_ms) = (stream.id().to_owned(), stream.floor_ms());
        if let Some(flow) = self.check_device(&id)? {
            return Ok(flow);
        }
        let woke = UnderWay {
            woke,
            woke_ms,
            aligns: true,
        };
        self.begin_read(floor_ms, woke)
    }

    /// Begins a read of the whole fleet for the stream, from a read that starts no earlier than
    /// `floor_ms`, where the session runs its reads; an inline one is answered at once.
    fn begin_read(&mut self, floor_ms: u64, under_way: UnderWay) -> Handled {
        let Some(stream) = self.conn.stream.as_ref() else {
            return Ok(Flow::Continue);
        };
        let (kind, interval) = (stream.kind(), self.conn.config.interval);
        let job = self.conn.fleet.cycle_job(kind, interval, floor_ms);
        let inline = self.cycles.inline_now();
        self.cycles.start(under_way, job);
        if inline {
            return self.on_cycled();
        }
        Ok(Flow::Continue)
    }

    /// A push of too many panes to read each: one read of the whole fleet, as a cycle reads it,
    /// from a read that starts now (a shared read made before these moves is not taken). It
    /// leaves the cycle's schedule alone. With a read under way, which may have begun before
    /// the moves, it begins as soon as that one answers.
    fn read_after_push(&mut self) -> Handled {
        if self.cycles.under_way().is_some() {
            self.cycles.again();
            return Ok(Flow::Continue);
        }
        let Some(stream) = self.conn.stream.as_ref() else {
            return Ok(Flow::Continue);
        };
        let (woke, woke_ms) = (Instant::now(), now_ms());
        let floor_ms = stream.floor_ms().max(woke_ms);
        let under_way = UnderWay {
            woke,
            woke_ms,
            aligns: false,
        };
        self.begin_read(floor_ms, under_way)
    }

    /// The read under way answered: what the stream publishes of it, then the read a push of
    /// many panes asked for meanwhile, if one did.
    fn on_cycled(&mut self) -> Handled {
        let flow = self.take_answer()?;
        if flow == Flow::Continue && self.cycles.take_again() {
            return self.read_after_push();
        }
        Ok(flow)
    }

    /// The read's answer: the device check again (a device revoked while tmux answered gets
    /// nothing of it), then what the stream publishes of the read.
    fn take_answer(&mut self) -> Handled {
        let Some((under_way, answer)) = self.cycles.take() else {
            return Ok(Flow::Continue);
        };
        tracing::debug!("the cycle's read answered");
        let read = self.conn.fleet.finish_cycle(answer);
        let Some(stream) = self.conn.stream.as_ref() else {
            return Ok(Flow::Continue);
        };
        let id = stream.id().to_owned();
        if let Some(flow) = self.check_device(&id)? {
            return Ok(flow);
        }
        let read = match read {
            Ok(read) => read,
            Err(err) => {
                // A transient tmux failure skips one publish; the stream and its baseline live on.
                // The fleet reader logged the failure, once for a run of them.
                tracing::debug!(%err, "reading the fleet failed; skipping this cycle");
                return Ok(Flow::Continue);
            }
        };
        self.publish_cycle(&id, read, under_way)
    }

    /// What the stream publishes of its `read`, begun as `under_way` says.
    fn publish_cycle(&mut self, id: &str, read: CycleRead, under_way: UnderWay) -> Handled {
        let interval = self.conn.config.interval;
        // The read names the server whose hooks push to this stream: it listens before it
        // publishes, so a client that has this read's frames is pushed what comes after them.
        if let Some(row) = read.rows.first() {
            self.pushes.follow(&row.server);
        }
        let stream = self.conn.stream.as_mut().expect("the caller found it");
        stream.fed(read.started_ms);
        if let Some(origin_ms) = read.origin_ms.filter(|_| under_way.aligns) {
            stream.align(origin_ms, interval, under_way.woke, under_way.woke_ms);
        }
        for frame in stream.publish(read.rows, read.at_ms) {
            self.send(id, frame)?;
        }
        Ok(Flow::Continue)
    }

    /// A push: the device check, then each pushed pane read on its own (or, for many, the whole
    /// fleet, as a cycle reads it: [`Session::read_after_push`]), and what the stream publishes
    /// of it. The cycle's cadence is left as it is. Before the stream's baseline, or with no
    /// stream, nothing is read.
    fn on_push(&mut self, pushed: Pushed) -> Handled {
        let Some(stream) = self.conn.stream.as_ref().filter(|s| s.has_baseline()) else {
            return Ok(Flow::Continue);
        };
        let id = stream.id().to_owned();
        if let Some(flow) = self.check_device(&id)? {
            return Ok(flow);
        }
        let panes = match pushed {
            Pushed::Panes(panes) => panes,
            Pushed::Fleet => return self.read_after_push(),
        };
        for pushed in panes {
            let Some((found, started_ms, at_ms)) = self.pushed_pane(&pushed) else {
                continue;
            };
            let stream = self.conn.stream.as_mut().expect("checked above");
            stream.fed(started_ms);
            // No agent pane (any more): the cycle reports what became of it.
            let Some(pane) = found else { continue };
            for frame in stream.publish_pane(pane.row, at_ms) {
                self.send(&id, frame)?;
            }
        }
        Ok(Flow::Continue)
    }

    /// A pushed pane as read now, with when its read started and answered: the read the hook
    /// carried when it is fresh and the stream may take it (`Carried::takeable`: no older than
    /// the stream's last read, or showing a later stamp of the pane than the stream remembers),
    /// else one of its own (`None` when tmux failed it).
    fn pushed_pane(&mut self, pushed: &PushedPane) -> Option<(Option<Pane>, u64, u64)> {
        let stream = self.conn.stream.as_ref();
        let floor_ms = stream.map_or(0, Stream::floor_ms);
        let remembered = stream.and_then(|s| s.stamped_at(&pushed.pane));
        let fleet = &mut self.conn.fleet;
        if let Some((found, read)) = push::take(
            pushed.read.as_ref(),
            (floor_ms, now_ms()),
            remembered,
            |read| fleet.carried(&pushed.pane, read),
            |pane| pane.row.stamped_at_ms,
        ) {
            return Some((found, read.started_ms, read.answered_ms));
        }
        let started_ms = now_ms();
        match self.conn.fleet.pane(&pushed.pane) {
            Ok(found) => Some((found, started_ms, now_ms())),
            Err(err) => {
                tracing::debug!(%err, pane = %pushed.pane, "reading a pushed pane failed");
                None
            }
        }
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
