//! One connection's protocol state machine, without I/O: lines in, lines out, and what they mean.
//!
//! The host processes one request at a time per connection, so the session keeps at most one in
//! flight and queues the rest; streamed frames (the subscription's edges) may arrive between a
//! request and its answer, and are told apart by their id. In follow mode the session says hello,
//! takes a snapshot and subscribes to edges; after every edge it asks for a fresh snapshot (one
//! at most waiting at a time), so the rows' other fields (context, repository, since) stay
//! current. A dispatch answered `refused`/`locked` released its claim, so it is sent again with
//! the same slot after a short wait, a bounded number of times. A line it cannot read is a fault
//! of the host, noted, and the connection goes on.
//!
//! Time is an argument: the caller passes `now` and asks [`Session::next_deadline`] when to call
//! [`Session::tick`] again.

use std::collections::VecDeque;
use std::time::{Duration, Instant};

use schema::{
    DecodeError, Dispatch, Edge, Envelope, ErrorCode, ErrorFrame, FleetRow, Frames, Hello,
    HelloReply, Outcome, Reason, Receipt, Request, Response, Selector, SnapshotRequest, Subscribe,
    UNADDRESSED_ID, decode_line, encode_line,
};

/// How many times a dispatch answered `refused`/`locked` is sent again.
pub const LOCKED_RETRIES: u32 = 3;
/// How long the session waits before sending it again.
pub const LOCKED_WAIT: Duration = Duration::from_secs(1);

/// What a session does on its own.
#[derive(Debug, Clone)]
pub struct Policy {
    /// After the handshake: take a snapshot, then subscribe to edges.
    pub follow: bool,
    /// After each edge: ask for a fresh snapshot.
    pub refresh_after_edge: bool,
    /// Also refresh when no snapshot came for this long (an episode can change without an edge).
    pub refresh_every: Option<Duration>,
    /// A request unanswered this long means the connection is stuck.
    pub answer_within: Duration,
}

impl Policy {
    /// What the TUI and the headless mode do: follow the fleet and keep it current.
    pub fn follow() -> Policy {
        Policy {
            follow: true,
            refresh_after_edge: true,
            refresh_every: Some(Duration::from_secs(15)),
            answer_within: Duration::from_secs(60),
        }
    }

    /// Nothing on its own: every request is asked for (the replay harness).
    pub fn manual() -> Policy {
        Policy {
            follow: false,
            refresh_after_edge: false,
            refresh_every: None,
            answer_within: Duration::from_secs(60),
        }
    }
}

/// What a line from the host meant.
// Each value is made once and moved once, through a channel: boxing its large variants buys
// nothing.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Clone, PartialEq)]
pub enum SessionEvent {
    /// The handshake was answered: the host and the scopes it grants.
    Ready(HelloReply),
    /// A snapshot answered; `selector` is the one asked for (`None`: the whole fleet).
    Snapshot {
        /// The rows.
        rows: Vec<FleetRow>,
        /// The selector of the request.
        selector: Option<Selector>,
    },
    /// The subscription was acknowledged; edges follow.
    Subscribed,
    /// One streamed edge.
    Edge(Edge),
    /// An answer to a card, window, event, dispatch or receipts request.
    Answer {
        /// The request.
        request: Request,
        /// Its answer.
        response: Response,
    },
    /// A dispatch was answered `refused`/`locked`: it goes again, same slot, after a wait.
    Retrying {
        /// The dispatch.
        dispatch: Dispatch,
        /// The receipt that said locked.
        receipt: Receipt,
        /// Which retry comes next (1-based).
        attempt: u32,
    },
    /// A request answered with an error frame.
    Failed {
        /// The request.
        request: Request,
        /// The error.
        error: ErrorFrame,
    },
    /// A request that will not be answered (the connection is not up, or went down).
    Unsent {
        /// The request.
        request: Request,
        /// Why.
        reason: String,
    },
    /// The stream was ended by an error frame (a device revoked at a publish).
    StreamFailed(ErrorFrame),
    /// An error frame with id "0": a refusal before the session, or a complaint.
    Refused(ErrorFrame),
    /// A line this client cannot use; the connection goes on.
    Fault(String),
}

/// One output of the session.
#[allow(clippy::large_enum_variant)] // made once, moved once
#[derive(Debug, Clone, PartialEq)]
pub enum Step {
    /// A line to write to the host, `\n` included.
    Send(String),
    /// Something to tell the client.
    Event(SessionEvent),
}

/// How a connection ended, given how the host process ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Ending {
    /// The device was refused `scope-denied` and the host exited 2 (or its exit is not known):
    /// revoked or never enrolled. Not retried.
    Revoked,
    /// Anything else: reconnect.
    Dropped,
}

/// A request waiting to be sent, and how often it was sent already.
#[derive(Debug, Clone)]
struct Pending {
    request: Request,
    attempt: u32,
}

#[derive(Debug)]
struct InFlight {
    id: String,
    pending: Pending,
    since: Instant,
}

/// One connection's protocol state.
#[derive(Debug)]
pub struct Session {
    policy: Policy,
    hello: Hello,
    next_id: u64,
    ready: bool,
    broken: Option<String>,
    in_flight: Option<InFlight>,
    queue: VecDeque<Pending>,
    later: Vec<(Instant, Pending)>,
    subscription: Option<String>,
    last_refresh: Option<Instant>,
    denied: bool,
    out: Vec<Step>,
}

impl Session {
    /// A session that will greet the host with `hello`.
    pub fn new(policy: Policy, hello: Hello) -> Session {
        Session {
            policy,
            hello,
            next_id: 0,
            ready: false,
            broken: None,
            in_flight: None,
            queue: VecDeque::new(),
            later: Vec::new(),
            subscription: None,
            last_refresh: None,
            denied: false,
            out: Vec::new(),
        }
    }

    /// Says hello.
    pub fn start(&mut self, now: Instant) -> Vec<Step> {
        let hello = Request::Hello(self.hello.clone());
        self.send(
            Pending {
                request: hello,
                attempt: 0,
            },
            now,
        );
        self.take()
    }

    /// Whether the handshake was answered.
    pub fn is_ready(&self) -> bool {
        self.ready
    }

    /// Why the connection is of no use any more (a hello refused), when it is not.
    pub fn broken(&self) -> Option<&str> {
        self.broken.as_deref()
    }

    /// Queues a request; it is sent when the ones before it are answered.
    pub fn request(&mut self, request: Request, now: Instant) -> Vec<Step> {
        if let Some(reason) = &self.broken {
            let reason = reason.clone();
            self.emit(SessionEvent::Unsent { request, reason });
        } else {
            self.queue.push_back(Pending {
                request,
                attempt: 0,
            });
            self.pump(now);
        }
        self.take()
    }

    /// One line from the host, without its `\n`.
    pub fn on_line(&mut self, line: &str, now: Instant) -> Vec<Step> {
        match decode_line::<Response>(line) {
            Ok(Envelope { id, body, .. }) => self.on_frame(id, body, now),
            Err(err) => self.on_undecodable(err, line, now),
        }
        self.take()
    }

    /// A line that was not one: over the cap, or not UTF-8.
    pub fn on_bad_line(&mut self, why: &str) -> Vec<Step> {
        self.emit(SessionEvent::Fault(format!(
            "the host sent a line that is not one: {why}"
        )));
        self.take()
    }

    /// Time passed: retries that are due, periodic refreshes. `Err` when a request went
    /// unanswered too long: the connection is stuck and should be dropped.
    pub fn tick(&mut self, now: Instant) -> Result<Vec<Step>, String> {
        if let Some(flight) = &self.in_flight
            && now.saturating_duration_since(flight.since) >= self.policy.answer_within
        {
            return Err(format!(
                "no answer to `{}` in {} s",
                flight.pending.request.name(),
                self.policy.answer_within.as_secs()
            ));
        }
        let (due, later): (Vec<_>, Vec<_>) = std::mem::take(&mut self.later)
            .into_iter()
            .partition(|(at, _)| *at <= now);
        self.later = later;
        self.queue
            .extend(due.into_iter().map(|(_, pending)| pending));
        if let (Some(every), Some(last)) = (self.policy.refresh_every, self.last_refresh)
            && self.subscription.is_some()
            && now.saturating_duration_since(last) >= every
        {
            self.last_refresh = Some(now);
            self.want_refresh();
        }
        self.pump(now);
        Ok(self.take())
    }

    /// When [`Session::tick`] has something to do next.
    pub fn next_deadline(&self) -> Option<Instant> {
        let answer = self
            .in_flight
            .as_ref()
            .map(|flight| flight.since + self.policy.answer_within);
        let retry = self.later.iter().map(|(at, _)| *at).min();
        let refresh = match (self.policy.refresh_every, self.last_refresh) {
            (Some(every), Some(last)) if self.subscription.is_some() => Some(last + every),
            _ => None,
        };
        [answer, retry, refresh].into_iter().flatten().min()
    }

    /// The connection ended: every request not answered, and what the end means given the host's
    /// exit code (`None` when it is not known, as on the replay harness's own stdio).
    pub fn end(&mut self, exit: Option<i32>, reason: &str) -> (Vec<SessionEvent>, Ending) {
        let mut unsent = Vec::new();
        let requests = self
            .in_flight
            .take()
            .map(|flight| flight.pending)
            .into_iter()
            .chain(self.queue.drain(..))
            .chain(self.later.drain(..).map(|(_, pending)| pending));
        for pending in requests {
            if matches!(pending.request, Request::Hello(_)) {
                continue;
            }
            unsent.push(SessionEvent::Unsent {
                request: pending.request,
                reason: reason.to_owned(),
            });
        }
        let ending = if self.denied && matches!(exit, None | Some(2)) {
            Ending::Revoked
        } else {
            Ending::Dropped
        };
        (unsent, ending)
    }

    fn take(&mut self) -> Vec<Step> {
        std::mem::take(&mut self.out)
    }

    fn emit(&mut self, event: SessionEvent) {
        self.out.push(Step::Event(event));
    }

    fn send(&mut self, pending: Pending, now: Instant) {
        self.next_id += 1;
        let id = self.next_id.to_string();
        let line = encode_line(&Envelope::new(id.clone(), pending.request.clone()));
        self.out.push(Step::Send(line));
        self.in_flight = Some(InFlight {
            id,
            pending,
            since: now,
        });
    }

    fn pump(&mut self, now: Instant) {
        if self.in_flight.is_some() || !self.ready {
            return;
        }
        if let Some(pending) = self.queue.pop_front() {
            self.send(pending, now);
        }
    }

    /// Queues a snapshot of the whole fleet unless one is already waiting to be sent (one in
    /// flight may predate what made the refresh necessary, so it does not count).
    fn want_refresh(&mut self) {
        let waiting = self.queue.iter().any(|pending| {
            matches!(
                &pending.request,
                Request::Snapshot(SnapshotRequest { selector: None })
            )
        });
        if !waiting {
            self.queue.push_back(Pending {
                request: Request::Snapshot(SnapshotRequest::default()),
                attempt: 0,
            });
        }
    }

    fn on_frame(&mut self, id: String, body: Response, now: Instant) {
        self.denied = matches!(&body, Response::Error(e) if e.code == ErrorCode::ScopeDenied);
        if self
            .in_flight
            .as_ref()
            .is_some_and(|flight| flight.id == id)
        {
            let flight = self.in_flight.take().expect("checked above");
            self.on_answer(flight.id, flight.pending, body, now);
            self.pump(now);
        } else if self.subscription.as_deref() == Some(id.as_str()) {
            self.on_streamed(body);
            self.pump(now);
        } else if id == UNADDRESSED_ID
            && let Response::Error(error) = body
        {
            self.emit(SessionEvent::Refused(error));
        } else {
            self.emit(SessionEvent::Fault(format!(
                "the host sent a `{}` frame with id {id:?}, which answers no request of this connection",
                body.name()
            )));
        }
    }

    fn on_answer(&mut self, id: String, pending: Pending, body: Response, now: Instant) {
        let Pending { request, attempt } = pending;
        match (request, body) {
            (request, Response::Error(error)) => {
                if let Request::Hello(_) = &request {
                    self.broken = Some(format!(
                        "the host refused the handshake: {} ({})",
                        error.code, error.message
                    ));
                }
                self.emit(SessionEvent::Failed { request, error });
            }
            (Request::Hello(_), Response::Hello(reply)) => {
                self.ready = true;
                if self.policy.follow {
                    self.queue.push_front(Pending {
                        request: Request::Subscribe(Subscribe {
                            events: true,
                            selector: None,
                        }),
                        attempt: 0,
                    });
                    self.queue.push_front(Pending {
                        request: Request::Snapshot(SnapshotRequest::default()),
                        attempt: 0,
                    });
                }
                self.emit(SessionEvent::Ready(reply));
            }
            (Request::Snapshot(asked), Response::Snapshot(snapshot)) => {
                if asked.selector.is_none() {
                    self.last_refresh = Some(now);
                }
                self.emit(SessionEvent::Snapshot {
                    rows: snapshot.agents,
                    selector: asked.selector,
                });
            }
            (Request::Subscribe(_), Response::Ack) => {
                self.subscription = Some(id);
                self.emit(SessionEvent::Subscribed);
            }
            (Request::Dispatch(dispatch), Response::Receipt(receipt))
                if receipt.outcome == Outcome::Refused
                    && receipt.reason == Some(Reason::Locked)
                    && attempt < LOCKED_RETRIES =>
            {
                self.later.push((
                    now + LOCKED_WAIT,
                    Pending {
                        request: Request::Dispatch(dispatch.clone()),
                        attempt: attempt + 1,
                    },
                ));
                self.emit(SessionEvent::Retrying {
                    dispatch,
                    receipt,
                    attempt: attempt + 1,
                });
            }
            (
                request @ (Request::Card(_)
                | Request::Window(_)
                | Request::Event(_)
                | Request::Dispatch(_)
                | Request::Receipts(_)),
                response,
            ) if answers(&request, &response) => {
                self.emit(SessionEvent::Answer { request, response });
            }
            (request, response) => {
                let reason = format!(
                    "the host answered `{}` with a `{}` frame",
                    request.name(),
                    response.name()
                );
                self.emit(SessionEvent::Fault(reason.clone()));
                self.emit(SessionEvent::Unsent { request, reason });
            }
        }
    }

    fn on_streamed(&mut self, body: Response) {
        match body {
            Response::Edge(edge) => {
                self.emit(SessionEvent::Edge(edge));
                if self.policy.refresh_after_edge {
                    self.want_refresh();
                }
            }
            Response::Snapshot(snapshot) => self.emit(SessionEvent::Snapshot {
                rows: snapshot.agents,
                selector: None,
            }),
            Response::Error(error) => {
                self.subscription = None;
                self.emit(SessionEvent::StreamFailed(error));
            }
            other => self.emit(SessionEvent::Fault(format!(
                "the host streamed a `{}` frame",
                other.name()
            ))),
        }
    }

    fn on_undecodable(&mut self, err: DecodeError, line: &str, now: Instant) {
        let shown: String = line.chars().take(120).collect();
        self.emit(SessionEvent::Fault(format!(
            "the host sent a line this client cannot read ({err}): {shown}"
        )));
        let id = match &err {
            DecodeError::BadFrame { id, .. } => Some(id.as_str()),
            DecodeError::UnsupportedSchema { id, .. } => id.as_deref(),
            DecodeError::Unaddressed { .. } => None,
        };
        // An unreadable answer still answers its request: the queue must not wait for it forever.
        if id.is_some() && self.in_flight.as_ref().map(|f| f.id.as_str()) == id {
            let flight = self.in_flight.take().expect("checked above");
            if let Request::Hello(_) = flight.pending.request {
                self.broken = Some(format!("the host's hello could not be read ({err})"));
            } else {
                self.emit(SessionEvent::Unsent {
                    request: flight.pending.request,
                    reason: format!("its answer could not be read ({err})"),
                });
            }
            self.pump(now);
        }
    }
}

/// Whether `response` is the kind of frame that answers `request`.
fn answers(request: &Request, response: &Response) -> bool {
    matches!(
        (request, response),
        (Request::Card(_), Response::Card(_))
            | (Request::Window(_), Response::Window(_))
            | (Request::Event(_), Response::Event(_))
            | (Request::Dispatch(_), Response::Receipt(_))
            | (Request::Receipts(_), Response::Receipts(_))
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use schema::{Action, Binder, CardRequest};

    fn hello() -> Hello {
        Hello {
            app: "corral-remote".into(),
            app_version: "0.1.0".into(),
            device: "SHA256:test".into(),
        }
    }

    fn sent(steps: &[Step]) -> Vec<String> {
        steps
            .iter()
            .filter_map(|step| match step {
                Step::Send(line) => Some(line.trim_end().to_owned()),
                Step::Event(_) => None,
            })
            .collect()
    }

    fn events(steps: Vec<Step>) -> Vec<SessionEvent> {
        steps
            .into_iter()
            .filter_map(|step| match step {
                Step::Event(event) => Some(event),
                Step::Send(_) => None,
            })
            .collect()
    }

    const HELLO_REPLY: &str = r#"{"schema":1,"id":"1","t":"hello","host":"vm","tool_version":"0.1.0","reconcile_interval_ms":500,"scopes":["read","act:answer"]}"#;

    fn row_json(pane: &str, state: &str) -> String {
        format!(
            r#"{{"pane":"{pane}","agent":"claude","state":"{state}","detail":null,"since_ms":1,"episode_ms":1,"locator":"w:0.0","attention":false,"done":false,"session":"w","transcript":null,"permission_request":null,"stamped_at_ms":null,"context":null,"context_at_ms":null,"muted":false,"repo":null,"branch":null,"worktree":null,"pending_tool":null,"pending_call":null,"server":"/tmp/s","host":"vm"}}"#
        )
    }

    fn edge(id: &str) -> String {
        format!(
            r#"{{"schema":1,"id":"{id}","t":"edge","at_ms":5,"pane":"%0","agent":"claude","from":"working","to":"blocked","detail":"permission","locator":"w:0.0","repo":null,"branch":null}}"#
        )
    }

    /// A following session past its handshake, snapshot and subscription (ids 1, 2, 3).
    fn following(now: Instant) -> Session {
        let mut session = Session::new(Policy::follow(), hello());
        session.start(now);
        assert_eq!(
            sent(&session.on_line(HELLO_REPLY, now)),
            [r#"{"schema":1,"id":"2","t":"snapshot"}"#]
        );
        let snapshot = format!(
            r#"{{"schema":1,"id":"2","t":"snapshot","agents":[{}]}}"#,
            row_json("%0", "working")
        );
        assert_eq!(
            sent(&session.on_line(&snapshot, now)),
            [r#"{"schema":1,"id":"3","t":"subscribe","events":true}"#]
        );
        session.on_line(r#"{"schema":1,"id":"3","t":"ack"}"#, now);
        session
    }

    #[test]
    fn follow_says_hello_takes_a_snapshot_then_subscribes() {
        let now = Instant::now();
        let mut session = Session::new(Policy::follow(), hello());
        let start = session.start(now);
        assert_eq!(
            sent(&start),
            [
                r#"{"schema":1,"id":"1","t":"hello","app":"corral-remote","app_version":"0.1.0","device":"SHA256:test"}"#
            ]
        );
        // A request made before the handshake waits for it, behind the follow requests.
        let card = Request::Card(CardRequest { pane: "%0".into() });
        assert!(sent(&session.request(card, now)).is_empty());
        let steps = session.on_line(HELLO_REPLY, now);
        assert_eq!(sent(&steps), [r#"{"schema":1,"id":"2","t":"snapshot"}"#]);
        assert!(matches!(&events(steps)[0], SessionEvent::Ready(reply) if reply.host == "vm"));
        let snapshot = format!(
            r#"{{"schema":1,"id":"2","t":"snapshot","agents":[{}]}}"#,
            row_json("%0", "working")
        );
        let steps = session.on_line(&snapshot, now);
        assert_eq!(
            sent(&steps),
            [r#"{"schema":1,"id":"3","t":"subscribe","events":true}"#]
        );
        let steps = session.on_line(r#"{"schema":1,"id":"3","t":"ack"}"#, now);
        assert_eq!(
            sent(&steps),
            [r#"{"schema":1,"id":"4","t":"card","pane":"%0"}"#]
        );
        assert_eq!(events(steps), [SessionEvent::Subscribed]);
    }

    #[test]
    fn an_edge_asks_for_one_fresh_snapshot_at_a_time() {
        let now = Instant::now();
        let mut session = following(now);
        let steps = session.on_line(&edge("3"), now);
        assert_eq!(sent(&steps), [r#"{"schema":1,"id":"4","t":"snapshot"}"#]);
        assert!(matches!(&events(steps)[0], SessionEvent::Edge(e) if e.pane == "%0"));
        // Two more edges while it is in flight: one more snapshot, after it, not two.
        assert!(sent(&session.on_line(&edge("3"), now)).is_empty());
        assert!(sent(&session.on_line(&edge("3"), now)).is_empty());
        let steps = session.on_line(r#"{"schema":1,"id":"4","t":"snapshot","agents":[]}"#, now);
        assert_eq!(sent(&steps), [r#"{"schema":1,"id":"5","t":"snapshot"}"#]);
        let steps = session.on_line(r#"{"schema":1,"id":"5","t":"snapshot","agents":[]}"#, now);
        assert!(sent(&steps).is_empty());
    }

    #[test]
    fn requests_go_one_at_a_time_while_edges_stream_between() {
        let now = Instant::now();
        let mut session = following(now);
        let card = |pane: &str| Request::Card(CardRequest { pane: pane.into() });
        assert_eq!(sent(&session.request(card("%0"), now)).len(), 1);
        assert!(sent(&session.request(card("%1"), now)).is_empty());
        // An edge of the stream is not the answer; the refresh it asks for waits its turn.
        let steps = session.on_line(&edge("3"), now);
        assert!(sent(&steps).is_empty());
        let steps = session.on_line(r#"{"schema":1,"id":"4","t":"card","card":"none"}"#, now);
        assert_eq!(
            sent(&steps),
            [r#"{"schema":1,"id":"5","t":"card","pane":"%1"}"#]
        );
        assert!(matches!(
            &events(steps)[0],
            SessionEvent::Answer { request: Request::Card(c), response: Response::Card(_) } if c.pane == "%0"
        ));
        let steps = session.on_line(
            r#"{"schema":1,"id":"5","t":"error","code":"not-found","message":"no pane"}"#,
            now,
        );
        assert_eq!(sent(&steps), [r#"{"schema":1,"id":"6","t":"snapshot"}"#]);
        assert!(
            matches!(&events(steps)[0], SessionEvent::Failed { error, .. } if error.code == ErrorCode::NotFound)
        );
    }

    fn dispatch() -> Dispatch {
        Dispatch {
            slot: "%0:7:approve".into(),
            host: String::new(),
            pane: "%0".into(),
            action: Action::Approve,
            binder: Binder {
                expect_episode_ms: 7,
                expect_permission_request: None,
            },
            text: None,
            answers: None,
        }
    }

    fn receipt(id: &str, outcome: &str, reason: &str) -> String {
        format!(
            r#"{{"schema":1,"id":"{id}","t":"receipt","slot":"%0:7:approve","pane":"%0","action":"approve","outcome":"{outcome}","reason":{reason},"exit_code":5,"cached":false,"device":"d","at_ms":1}}"#
        )
    }

    #[test]
    fn a_locked_receipt_is_retried_with_the_same_slot_a_bounded_number_of_times() {
        let start = Instant::now();
        let mut session = following(start);
        let line = sent(&session.request(Request::Dispatch(dispatch()), start)).remove(0);
        assert!(line.contains(r#""slot":"%0:7:approve""#), "{line}");
        let mut now = start;
        let mut id = 4;
        for attempt in 1..=LOCKED_RETRIES {
            let steps = session.on_line(&receipt(&id.to_string(), "refused", "\"locked\""), now);
            assert!(sent(&steps).is_empty());
            assert!(
                matches!(&events(steps)[0], SessionEvent::Retrying { attempt: a, .. } if *a == attempt)
            );
            assert_eq!(session.next_deadline(), Some(now + LOCKED_WAIT));
            assert!(
                sent(&session.tick(now).unwrap()).is_empty(),
                "not before its time"
            );
            now += LOCKED_WAIT;
            id += 1;
            let again = sent(&session.tick(now).unwrap());
            assert_eq!(again.len(), 1);
            assert!(again[0].contains(r#""slot":"%0:7:approve""#));
            assert!(again[0].contains(&format!(r#""id":"{id}""#)));
        }
        // The last one is final.
        let steps = session.on_line(&receipt(&id.to_string(), "refused", "\"locked\""), now);
        assert!(
            matches!(&events(steps)[0], SessionEvent::Answer { response: Response::Receipt(r), .. } if r.reason == Some(Reason::Locked))
        );
    }

    #[test]
    fn malformed_lines_are_faults_and_the_connection_goes_on() {
        let now = Instant::now();
        let mut session = following(now);
        for line in [
            "not json",
            "[1,2]",
            r#"{"schema":1,"t":"ack"}"#,
            r#"{"schema":1,"id":"3","t":"teleport"}"#,
            r#"{"schema":2,"id":"3","t":"edge"}"#,
            r#"{"schema":1,"id":"77","t":"ack"}"#,
            r#"{"schema":1,"id":"3","t":"edge","pane":"%0"}"#,
        ] {
            let steps = session.on_line(line, now);
            assert!(
                matches!(&events(steps)[..], [SessionEvent::Fault(_)]),
                "{line}"
            );
        }
        assert!(matches!(
            &events(session.on_bad_line("not UTF-8"))[..],
            [SessionEvent::Fault(_)]
        ));
        // Unknown keys are ignored: the edge is read.
        let with_extra = edge("3").replace(r#""at_ms":5"#, r#""at_ms":5,"colour":"blue""#);
        let steps = session.on_line(&with_extra, now);
        assert!(matches!(&events(steps)[0], SessionEvent::Edge(_)));
    }

    #[test]
    fn an_unreadable_answer_still_frees_the_queue() {
        let now = Instant::now();
        let mut session = following(now);
        session.request(Request::Card(CardRequest { pane: "%0".into() }), now);
        session.request(Request::Card(CardRequest { pane: "%1".into() }), now);
        let steps = session.on_line(r#"{"schema":1,"id":"4","t":"card","card":"mystery"}"#, now);
        assert_eq!(
            sent(&steps),
            [r#"{"schema":1,"id":"5","t":"card","pane":"%1"}"#]
        );
        let events = events(steps);
        assert!(matches!(&events[0], SessionEvent::Fault(_)));
        assert!(matches!(&events[1], SessionEvent::Unsent { .. }));
    }

    #[test]
    fn scope_denied_then_exit_2_is_revoked_and_anything_else_a_drop() {
        let now = Instant::now();
        let mut session = following(now);
        let steps = session.on_line(
            r#"{"schema":1,"id":"3","t":"error","code":"scope-denied","message":"revoked"}"#,
            now,
        );
        assert!(matches!(&events(steps)[0], SessionEvent::StreamFailed(_)));
        assert_eq!(session.end(Some(2), "gone").1, Ending::Revoked);
        assert_eq!(session.end(None, "gone").1, Ending::Revoked);
        assert_eq!(session.end(Some(0), "gone").1, Ending::Dropped);

        // Refused at start-up (id "0") before the hello was answered: never enrolled.
        let mut fresh = Session::new(Policy::follow(), hello());
        fresh.start(now);
        let steps = fresh.on_line(
            r#"{"schema":1,"id":"0","t":"error","code":"scope-denied","message":"unknown device"}"#,
            now,
        );
        assert!(matches!(&events(steps)[0], SessionEvent::Refused(_)));
        assert_eq!(fresh.end(Some(2), "gone").1, Ending::Revoked);

        // The connection cap is no revocation: retried.
        let mut capped = Session::new(Policy::follow(), hello());
        capped.start(now);
        capped.on_line(
            r#"{"schema":1,"id":"0","t":"error","code":"too-many-connections","message":"full"}"#,
            now,
        );
        assert_eq!(capped.end(Some(2), "gone").1, Ending::Dropped);

        // A read request refused on a living connection, then answered: not revoked at the end.
        let mut reader = following(now);
        reader.request(Request::Card(CardRequest { pane: "%0".into() }), now);
        reader.on_line(
            r#"{"schema":1,"id":"4","t":"error","code":"scope-denied","message":"no read"}"#,
            now,
        );
        reader.on_line(&edge("3"), now);
        assert_eq!(reader.end(Some(2), "gone").1, Ending::Dropped);
    }

    #[test]
    fn what_was_not_answered_is_reported_unsent_at_the_end() {
        let now = Instant::now();
        let mut session = following(now);
        session.request(Request::Card(CardRequest { pane: "%0".into() }), now);
        session.request(Request::Dispatch(dispatch()), now);
        let (unsent, _) = session.end(Some(0), "the connection dropped");
        assert_eq!(unsent.len(), 2);
        assert!(unsent.iter().all(|e| matches!(e, SessionEvent::Unsent { reason, .. } if reason == "the connection dropped")));
    }

    #[test]
    fn a_stuck_request_is_reported_and_a_quiet_fleet_is_refreshed() {
        let start = Instant::now();
        let mut session = following(start);
        let every = Policy::follow().refresh_every.unwrap();
        assert_eq!(session.next_deadline(), Some(start + every));
        let steps = session.tick(start + every).unwrap();
        assert_eq!(sent(&steps), [r#"{"schema":1,"id":"4","t":"snapshot"}"#]);
        let late = start + every + Policy::follow().answer_within;
        assert_eq!(
            session.tick(late).unwrap_err(),
            "no answer to `snapshot` in 60 s"
        );
    }

    #[test]
    fn manual_sessions_send_only_what_is_asked() {
        let now = Instant::now();
        let mut session = Session::new(Policy::manual(), hello());
        session.start(now);
        let steps = session.on_line(HELLO_REPLY, now);
        assert!(sent(&steps).is_empty());
        let steps = session.request(
            Request::Subscribe(Subscribe {
                events: true,
                selector: None,
            }),
            now,
        );
        assert_eq!(
            sent(&steps),
            [r#"{"schema":1,"id":"2","t":"subscribe","events":true}"#]
        );
        session.on_line(r#"{"schema":1,"id":"2","t":"ack"}"#, now);
        assert!(sent(&session.on_line(&edge("2"), now)).is_empty());
    }
}
