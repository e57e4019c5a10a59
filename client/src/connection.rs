//! One host's connection, on a thread of its own: start its `serve`, run the session over it,
//! and when it drops, reconnect after the backoff ([`client_core::backoff`]), unless the device
//! was revoked. One thread's host failing (garbage, a crash, a hang) touches no other host.
//!
//! The thread waits on one channel: the reader thread's lines (tagged with the attempt they
//! belong to, so a dead attempt's stragglers are dropped), the client's requests, and shutdown;
//! its time-out is the session's next deadline (a locked retry, a refresh, a stuck request).

use std::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use schema::{Hello, Request};

use crate::transport::{LineIn, Link};
use client_core::backoff::Backoff;
use client_core::client::HostEvent;
use client_core::fleet::Link as LinkState;
use client_core::session::{Ending, Policy, Session, SessionEvent, Step};

/// How long a closed connection's host gets to exit before its group is killed.
const GRACE: Duration = Duration::from_secs(3);

/// What a connection needs to know.
#[derive(Debug, Clone)]
pub struct Spec {
    /// The argv of the host's `serve`; `None`: this process's own stdin and stdout.
    pub argv: Option<Vec<String>>,
    /// The hello it says.
    pub hello: Hello,
    /// What the session does by itself.
    pub policy: Policy,
}

enum Input {
    Line(u64, LineIn),
    Request(Request),
    Shutdown,
}

/// A running connection.
#[derive(Debug)]
pub struct Connection {
    to: Sender<Input>,
    thread: Option<JoinHandle<()>>,
}

impl std::fmt::Debug for Input {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Input::Line(..) => "line",
            Input::Request(_) => "request",
            Input::Shutdown => "shutdown",
        })
    }
}

impl Connection {
    /// Starts the connection; everything it learns goes to `report`.
    pub fn start(spec: Spec, report: impl Fn(HostEvent) + Send + 'static) -> Connection {
        let (to, from) = mpsc::channel();
        let lines = to.clone();
        let thread = std::thread::spawn(move || Worker::new(spec, lines, from, report).run());
        Connection {
            to,
            thread: Some(thread),
        }
    }

    /// Sends a request (queued behind the ones before it; refused when not connected).
    pub fn request(&self, request: Request) {
        let _ = self.to.send(Input::Request(request));
    }

    /// Closes the connection and waits for its thread.
    pub fn shutdown(mut self) {
        let _ = self.to.send(Input::Shutdown);
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

struct Worker<R> {
    spec: Spec,
    lines: Sender<Input>,
    inbox: Receiver<Input>,
    report: R,
    attempt: u64,
}

/// Why an attempt ended.
enum End {
    /// The host went away or was given up on; reconnect unless revoked.
    Dropped(String),
    /// The client is closing.
    Shutdown,
}

impl<R: Fn(HostEvent)> Worker<R> {
    fn new(spec: Spec, lines: Sender<Input>, inbox: Receiver<Input>, report: R) -> Self {
        Worker {
            spec,
            lines,
            inbox,
            report,
            attempt: 0,
        }
    }

    fn link(&self, state: LinkState) {
        (self.report)(HostEvent::Link(state));
    }

    fn run(mut self) {
        let mut backoff = Backoff::default();
        loop {
            self.attempt += 1;
            self.link(LinkState::Connecting);
            let attempt = self.attempt;
            let lines = self.lines.clone();
            let sink = move |line| lines.send(Input::Line(attempt, line)).is_ok();
            let opened = match &self.spec.argv {
                Some(argv) => Link::spawn(argv, sink)
                    .map_err(|err| format!("cannot start `{}`: {err}", argv.join(" "))),
                None => Ok(Link::stdio(sink)),
            };
            let (reason, ending) = match opened {
                Ok(mut link) => {
                    let mut session =
                        Session::new(self.spec.policy.clone(), self.spec.hello.clone());
                    let end = self.serve(&mut link, &mut session, &mut backoff);
                    let exit = link.finish(GRACE);
                    let reason = match &end {
                        End::Dropped(reason) => describe(reason, exit, link.stderr()),
                        End::Shutdown => "the client closed the connection".to_owned(),
                    };
                    let (unsent, ending) = session.end(exit, &reason);
                    for event in unsent {
                        (self.report)(HostEvent::Session(event));
                    }
                    if let End::Shutdown = end {
                        return;
                    }
                    (reason, ending)
                }
                Err(reason) => (reason, Ending::Dropped),
            };
            match ending {
                Ending::Revoked => {
                    self.link(LinkState::Revoked {
                        reason: format!(
                            "the host refused this device (scope-denied): revoked or never enrolled; not retried ({reason})"
                        ),
                    });
                    self.idle(None, "the device was revoked");
                    return;
                }
                Ending::Dropped if self.spec.argv.is_none() => {
                    self.link(LinkState::Down {
                        reason,
                        retry_at_ms: None,
                    });
                    self.idle(None, "the connection ended");
                    return;
                }
                Ending::Dropped => {
                    let wait = backoff.dropped(Instant::now());
                    self.link(LinkState::Down {
                        reason,
                        retry_at_ms: Some(stdx::now_ms() + wait.as_millis() as u64),
                    });
                    if !self.idle(Some(Instant::now() + wait), "not connected") {
                        return;
                    }
                }
            }
        }
    }

    /// Runs one attempt's session until the connection ends.
    fn serve(&mut self, link: &mut Link, session: &mut Session, backoff: &mut Backoff) -> End {
        let steps = session.start(Instant::now());
        if let Some(end) = self.deliver(steps, link, backoff) {
            return end;
        }
        loop {
            let timeout = session
                .next_deadline()
                .map_or(Duration::from_secs(3600), |at| {
                    at.saturating_duration_since(Instant::now())
                });
            let steps = match self.inbox.recv_timeout(timeout) {
                Ok(Input::Line(attempt, _)) if attempt != self.attempt => continue,
                Ok(Input::Line(_, LineIn::Line(line))) => session.on_line(&line, Instant::now()),
                Ok(Input::Line(_, LineIn::Bad(why))) => session.on_bad_line(&why),
                Ok(Input::Line(_, LineIn::Eof)) => {
                    return End::Dropped("the host closed the connection".into());
                }
                Ok(Input::Request(request)) => session.request(request, Instant::now()),
                Ok(Input::Shutdown) | Err(RecvTimeoutError::Disconnected) => return End::Shutdown,
                Err(RecvTimeoutError::Timeout) => match session.tick(Instant::now()) {
                    Ok(steps) => steps,
                    Err(stuck) => return End::Dropped(stuck),
                },
            };
            if let Some(end) = self.deliver(steps, link, backoff) {
                return end;
            }
            if let Some(broken) = session.broken() {
                return End::Dropped(broken.to_owned());
            }
        }
    }

    fn deliver(&self, steps: Vec<Step>, link: &mut Link, backoff: &mut Backoff) -> Option<End> {
        for step in steps {
            match step {
                Step::Send(line) => {
                    if let Err(err) = link.send(&line) {
                        return Some(End::Dropped(format!("cannot write to the host: {err}")));
                    }
                }
                Step::Event(event) => {
                    if let SessionEvent::Ready(_) = &event {
                        backoff.connected(Instant::now());
                    }
                    (self.report)(HostEvent::Session(event));
                }
            }
        }
        None
    }

    /// Waits without a connection until `until` (forever when `None`), refusing requests.
    /// False when the client is closing.
    fn idle(&self, until: Option<Instant>, why: &str) -> bool {
        loop {
            let timeout = until.map_or(Duration::from_secs(3600), |at| {
                at.saturating_duration_since(Instant::now())
            });
            match self.inbox.recv_timeout(timeout) {
                Ok(Input::Request(request)) => {
                    (self.report)(HostEvent::Session(SessionEvent::Unsent {
                        request,
                        reason: why.to_owned(),
                    }));
                }
                Ok(Input::Line(..)) => {}
                Ok(Input::Shutdown) | Err(RecvTimeoutError::Disconnected) => return false,
                Err(RecvTimeoutError::Timeout) if until.is_some() => return true,
                Err(RecvTimeoutError::Timeout) => {}
            }
        }
    }
}

/// Why a connection ended, with the host's exit and its last word on stderr.
fn describe(reason: &str, exit: Option<i32>, stderr: Option<String>) -> String {
    let mut text = reason.to_owned();
    if let Some(code) = exit {
        text.push_str(&format!(" (exit {code})"));
    }
    if let Some(line) = stderr {
        let line: String = line.chars().take(200).collect();
        text.push_str(&format!(": {line}"));
    }
    text
}
