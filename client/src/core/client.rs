//! The client without I/O: the user's commands and the hosts' events in, requests to send and
//! changes to show out. The model is [`Fleet`]; beside it the last card of each pane (what an
//! answer quotes) and the last transcript page (what paging and opening an event start from).
//!
//! An answer needs the card it answers: when the pane's card is not at hand, or belongs to an
//! episode the pane has left, the card is fetched first and the answer follows it. Pressing the
//! same answer again, with the same card, sends the same slot.

use std::collections::HashMap;

use schema::{
    Budget, Card, CardRequest, Cursor, Edge, ErrorCode, EventHeader, EventRequest, FleetRow,
    Frames, Receipt, ReceiptsRequest, Request, Response, Selector, SessionMeta, SnapshotRequest,
    State, Subscribe, Window, WindowRequest,
};

use super::answer::{self, Choice};
use super::fleet::{Changed, Fleet, Link, RowChange};
use super::session::SessionEvent;
use super::slot::Nonces;

/// What the user asks for. Hosts are named as configured; panes by their id (`%4`).
#[derive(Debug, Clone, PartialEq)]
pub enum Command {
    /// Fetch what a pane asks.
    Card {
        /// Host name.
        host: String,
        /// Pane id.
        pane: String,
    },
    /// Answer a pane's card.
    Answer {
        /// Host name.
        host: String,
        /// Pane id.
        pane: String,
        /// The choice.
        choice: Choice,
    },
    /// Send a line of text to a pane.
    Steer {
        /// Host name.
        host: String,
        /// Pane id.
        pane: String,
        /// The line.
        text: String,
        /// Interrupt first (`steer_now`).
        now: bool,
    },
    /// Interrupt a pane.
    Interrupt {
        /// Host name.
        host: String,
        /// Pane id.
        pane: String,
    },
    /// A page of a pane's transcript: the newest, or the one before the last page shown.
    Window {
        /// Host name.
        host: String,
        /// Pane id.
        pane: String,
        /// Page back from the last page shown.
        older: bool,
        /// Events at most.
        last: Option<u32>,
        /// Byte budget.
        budget: Option<Budget>,
    },
    /// One event of a pane's transcript in full.
    Event {
        /// Host name.
        host: String,
        /// Pane id.
        pane: String,
        /// Which.
        which: EventRef,
    },
    /// Read the fleet (narrowed by a selector).
    Snapshot {
        /// Host name.
        host: String,
        /// The selector.
        selector: Option<Selector>,
    },
    /// Follow a host's edges (what follow mode does by itself).
    Subscribe {
        /// Host name.
        host: String,
        /// The selector.
        selector: Option<Selector>,
    },
    /// Look receipts up in a host's ledger.
    Receipts {
        /// Host name.
        host: String,
        /// Only this slot.
        slot: Option<String>,
        /// Only those claimed since.
        since_ms: Option<u64>,
    },
}

/// Which event of a transcript.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EventRef {
    /// The n-th event (0: the newest) of the last page shown for the pane.
    Index(usize),
    /// A cursor the host minted.
    Cursor(String),
}

/// What a connection reports.
// Each value is made once and moved once, through a channel: boxing its large variants buys
// nothing.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Clone, PartialEq)]
pub enum HostEvent {
    /// The link changed.
    Link(Link),
    /// The session said something.
    Session(SessionEvent),
}

/// What the front-ends show.
// Each value is made once and moved once, through a channel: boxing its large variants buys
// nothing.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Clone, PartialEq)]
pub enum Change {
    /// A host's link, handshake or fault changed.
    Host(usize),
    /// A row changed.
    Row(Changed),
    /// A snapshot was answered.
    Snapshot {
        /// Host index.
        host: usize,
        /// Its rows.
        rows: usize,
        /// Not narrowed by a selector.
        whole: bool,
    },
    /// A subscription was acknowledged.
    Subscribed(usize),
    /// A streamed edge.
    Edge(usize, Edge),
    /// A card.
    Card {
        /// Host index.
        host: usize,
        /// Pane id.
        pane: String,
        /// The card.
        card: Card,
    },
    /// A receipt; `retry` when it said locked and the dispatch goes again.
    Receipt {
        /// Host index.
        host: usize,
        /// The receipt.
        receipt: Receipt,
        /// The retry that follows.
        retry: Option<u32>,
    },
    /// A transcript page.
    Window {
        /// Host index.
        host: usize,
        /// The page.
        window: Window,
        /// It pages back from an earlier one.
        older: bool,
    },
    /// One event in full.
    Event {
        /// Host index.
        host: usize,
        /// Pane id.
        pane: String,
        /// The event, its body populated.
        event: EventHeader,
    },
    /// Receipts looked up.
    Receipts {
        /// Host index.
        host: usize,
        /// The entries.
        receipts: Vec<Receipt>,
    },
    /// A request failed or could not be sent, or an answer could not be made from its card.
    Failed {
        /// Host index.
        host: usize,
        /// The pane, when the request named one.
        pane: Option<String>,
        /// What failed: a request's name (`card`, `dispatch`, ...).
        what: &'static str,
        /// The host's error code, when it answered with one.
        code: Option<ErrorCode>,
        /// Why.
        message: String,
    },
    /// A pane became blocked: ring.
    Attention {
        /// Host index.
        host: usize,
        /// Its row.
        row: FleetRow,
    },
}

/// What to do next.
#[allow(clippy::large_enum_variant)] // made once, moved once
#[derive(Debug, Clone, PartialEq)]
pub enum Effect {
    /// Send a request to a host.
    Send {
        /// Host index.
        host: usize,
        /// The request.
        request: Request,
    },
    /// Show a change.
    Show(Change),
}

/// A pane's transcript as far as it was paged: the newest page, then each older one after it.
#[derive(Debug, Clone, PartialEq)]
pub struct Transcript {
    /// Agent name.
    pub agent: String,
    /// The transcript's session metadata.
    pub session: Option<SessionMeta>,
    /// Every event loaded, newest first.
    pub events: Vec<EventHeader>,
    /// The cursor of the next older page; `None` at the head.
    pub older: Option<Cursor>,
    /// Records the pages loaded could not classify.
    pub unknown: u32,
}

/// An answer waiting for its card.
#[derive(Debug, Clone)]
struct Waiting {
    host: usize,
    pane: String,
    choice: Choice,
}

/// The whole client's state.
#[derive(Debug)]
pub struct Client {
    fleet: Fleet,
    cards: HashMap<(usize, String), Card>,
    transcripts: HashMap<(usize, String), Transcript>,
    waiting: Vec<Waiting>,
    nonces: Nonces,
}

impl Client {
    /// A client of these hosts.
    pub fn new(names: impl IntoIterator<Item = String>) -> Client {
        Client {
            fleet: Fleet::new(names),
            cards: HashMap::new(),
            transcripts: HashMap::new(),
            waiting: Vec::new(),
            nonces: Nonces::default(),
        }
    }

    /// The model.
    pub fn fleet(&self) -> &Fleet {
        &self.fleet
    }

    /// The last card fetched for a pane.
    pub fn card(&self, host: usize, pane: &str) -> Option<&Card> {
        self.cards.get(&(host, pane.to_owned()))
    }

    /// A pane's transcript as far as it was paged.
    pub fn transcript(&self, host: usize, pane: &str) -> Option<&Transcript> {
        self.transcripts.get(&(host, pane.to_owned()))
    }

    /// A user command; `now_ms` is the time it was made (epoch ms). `Err` says why it cannot be
    /// done, and nothing was sent.
    pub fn command(&mut self, command: Command, now_ms: u64) -> Result<Vec<Effect>, String> {
        let send = |host, request| Ok(vec![Effect::Send { host, request }]);
        match command {
            Command::Card { host, pane } => {
                let host = self.host(&host)?;
                send(host, Request::Card(CardRequest { pane }))
            }
            Command::Answer { host, pane, choice } => {
                let host = self.host(&host)?;
                if let Some(card) = self.current_card(host, &pane) {
                    let dispatch = answer::answer(card, choice)?;
                    return send(host, Request::Dispatch(dispatch));
                }
                let asked = self
                    .waiting
                    .iter()
                    .any(|w| w.host == host && w.pane == pane);
                self.waiting.push(Waiting {
                    host,
                    pane: pane.clone(),
                    choice,
                });
                if asked {
                    Ok(Vec::new())
                } else {
                    send(host, Request::Card(CardRequest { pane }))
                }
            }
            Command::Steer {
                host,
                pane,
                text,
                now,
            } => {
                let host = self.host(&host)?;
                let nonce = self.nonces.mint(now_ms);
                let row = self.fleet.row(host, &pane);
                let dispatch = answer::steer(&pane, row, text, now, &nonce);
                send(host, Request::Dispatch(dispatch))
            }
            Command::Interrupt { host, pane } => {
                let host = self.host(&host)?;
                let dispatch = answer::interrupt(&pane, self.fleet.row(host, &pane));
                send(host, Request::Dispatch(dispatch))
            }
            Command::Window {
                host,
                pane,
                older,
                last,
                budget,
            } => {
                let host = self.host(&host)?;
                let before = if older {
                    let Some(transcript) = self.transcript(host, &pane) else {
                        return Err(format!("no page of {pane}'s transcript is shown yet"));
                    };
                    let Some(older) = transcript.older.clone() else {
                        return Err(format!("{pane}'s transcript has no older page"));
                    };
                    Some(older)
                } else {
                    None
                };
                send(
                    host,
                    Request::Window(WindowRequest {
                        pane,
                        last,
                        before,
                        budget,
                    }),
                )
            }
            Command::Event { host, pane, which } => {
                let host = self.host(&host)?;
                let cursor = match which {
                    EventRef::Cursor(cursor) => Cursor(cursor),
                    EventRef::Index(index) => {
                        let Some(transcript) = self.transcript(host, &pane) else {
                            return Err(format!("no page of {pane}'s transcript is shown yet"));
                        };
                        let Some(event) = transcript.events.get(index) else {
                            return Err(format!(
                                "{} event(s) of {pane}'s transcript are loaded; there is no event {index}",
                                transcript.events.len()
                            ));
                        };
                        event.cursor.clone()
                    }
                };
                send(host, Request::Event(EventRequest { pane, cursor }))
            }
            Command::Snapshot { host, selector } => {
                let host = self.host(&host)?;
                send(host, Request::Snapshot(SnapshotRequest { selector }))
            }
            Command::Subscribe { host, selector } => {
                let host = self.host(&host)?;
                send(
                    host,
                    Request::Subscribe(Subscribe {
                        events: true,
                        selector,
                    }),
                )
            }
            Command::Receipts {
                host,
                slot,
                since_ms,
            } => {
                let host = self.host(&host)?;
                send(host, Request::Receipts(ReceiptsRequest { slot, since_ms }))
            }
        }
    }

    fn host(&self, name: &str) -> Result<usize, String> {
        self.fleet.find(name).ok_or_else(|| {
            let names: Vec<&str> = self.fleet.hosts().iter().map(|h| h.name.as_str()).collect();
            format!(
                "no host is named {name:?} (the hosts: {})",
                names.join(", ")
            )
        })
    }

    /// The pane's card, when it can still be answered: the pane's row (when there is one) is
    /// blocked in the episode the card's binder quotes.
    fn current_card(&self, host: usize, pane: &str) -> Option<&Card> {
        let card = self.cards.get(&(host, pane.to_owned()))?;
        let episode = match card {
            Card::Permission(card) => card.binder.expect_episode_ms,
            Card::Question(card) => card.binder.expect_episode_ms,
            Card::Informational(_) | Card::None => return None,
        };
        match self.fleet.row(host, pane) {
            Some(row) => (row.state == State::Blocked && row.episode_ms == episode).then_some(card),
            None => Some(card),
        }
    }

    /// What a connection reported.
    pub fn host_event(&mut self, host: usize, event: HostEvent) -> Vec<Effect> {
        let mut out = Vec::new();
        match event {
            HostEvent::Link(link) => {
                self.fleet.set_link(host, link);
                out.push(Effect::Show(Change::Host(host)));
            }
            HostEvent::Session(event) => self.session_event(host, event, &mut out),
        }
        out
    }

    fn session_event(&mut self, host: usize, event: SessionEvent, out: &mut Vec<Effect>) {
        let show = |out: &mut Vec<Effect>, change| out.push(Effect::Show(change));
        match event {
            SessionEvent::Ready(reply) => {
                self.fleet.set_hello(host, reply);
                show(out, Change::Host(host));
            }
            SessionEvent::Snapshot { rows, selector } => {
                let whole = selector.is_none();
                let count = rows.len();
                let changes = self.fleet.apply_snapshot(host, rows, whole);
                self.rows_changed(changes, out);
                show(
                    out,
                    Change::Snapshot {
                        host,
                        rows: count,
                        whole,
                    },
                );
            }
            SessionEvent::Subscribed => show(out, Change::Subscribed(host)),
            SessionEvent::Edge(edge) => {
                let changes = self.fleet.apply_edge(host, &edge);
                show(out, Change::Edge(host, edge));
                self.rows_changed(changes, out);
            }
            SessionEvent::Answer { request, response } => {
                self.answered(host, request, response, out);
            }
            SessionEvent::Retrying {
                receipt, attempt, ..
            } => show(
                out,
                Change::Receipt {
                    host,
                    receipt,
                    retry: Some(attempt),
                },
            ),
            SessionEvent::Failed { request, error } => {
                self.failed(host, &request, Some(error.code), error.message, out);
            }
            SessionEvent::Unsent { request, reason } => {
                self.failed(host, &request, None, reason, out);
            }
            SessionEvent::StreamFailed(error) => {
                self.fleet.note_fault(
                    host,
                    format!("the stream ended: {} ({})", error.code, error.message),
                );
                show(out, Change::Host(host));
            }
            SessionEvent::Refused(error) => {
                self.fleet
                    .note_fault(host, format!("refused: {} ({})", error.code, error.message));
                show(out, Change::Host(host));
            }
            SessionEvent::Fault(message) => {
                self.fleet.note_fault(host, message);
                show(out, Change::Host(host));
            }
        }
    }

    fn rows_changed(&mut self, changes: Vec<Changed>, out: &mut Vec<Effect>) {
        for changed in changes {
            let key = (changed.host, changed.row.pane.clone());
            // A card stays only while the pane is blocked in the episode it quotes.
            if changed.change == RowChange::Removed {
                self.cards.remove(&key);
                self.transcripts.remove(&key);
            } else if self.cards.contains_key(&key)
                && self.current_card(changed.host, &changed.row.pane).is_none()
            {
                self.cards.remove(&key);
            }
            if changed.rings {
                out.push(Effect::Show(Change::Attention {
                    host: changed.host,
                    row: changed.row.clone(),
                }));
            }
            out.push(Effect::Show(Change::Row(changed)));
        }
    }

    fn answered(
        &mut self,
        host: usize,
        request: Request,
        response: Response,
        out: &mut Vec<Effect>,
    ) {
        match (request, response) {
            (Request::Card(asked), Response::Card(card)) => {
                let pane = asked.pane;
                self.cards.insert((host, pane.clone()), card.clone());
                out.push(Effect::Show(Change::Card {
                    host,
                    pane: pane.clone(),
                    card: card.clone(),
                }));
                let (ready, rest): (Vec<_>, Vec<_>) = std::mem::take(&mut self.waiting)
                    .into_iter()
                    .partition(|w| w.host == host && w.pane == pane);
                self.waiting = rest;
                for waiting in ready {
                    match answer::answer(&card, waiting.choice) {
                        Ok(dispatch) => out.push(Effect::Send {
                            host,
                            request: Request::Dispatch(dispatch),
                        }),
                        Err(message) => out.push(Effect::Show(Change::Failed {
                            host,
                            pane: Some(pane.clone()),
                            what: "dispatch",
                            code: None,
                            message,
                        })),
                    }
                }
            }
            (Request::Window(asked), Response::Window(window)) => {
                let older = asked.before.is_some();
                let key = (host, asked.pane);
                let continues = older
                    && self.transcripts.get(&key).and_then(|t| t.older.as_ref())
                        == asked.before.as_ref();
                let page = window.clone();
                match self.transcripts.get_mut(&key) {
                    Some(transcript) if continues => {
                        transcript.events.extend(page.events);
                        transcript.older = page.older;
                        transcript.unknown += page.unknown;
                    }
                    _ => {
                        self.transcripts.insert(
                            key,
                            Transcript {
                                agent: page.agent,
                                session: page.session,
                                events: page.events,
                                older: page.older,
                                unknown: page.unknown,
                            },
                        );
                    }
                }
                out.push(Effect::Show(Change::Window {
                    host,
                    window,
                    older,
                }));
            }
            (Request::Event(asked), Response::Event(reply)) => {
                out.push(Effect::Show(Change::Event {
                    host,
                    pane: asked.pane,
                    event: reply.event,
                }));
            }
            (Request::Dispatch(_), Response::Receipt(receipt)) => {
                out.push(Effect::Show(Change::Receipt {
                    host,
                    receipt,
                    retry: None,
                }));
            }
            (Request::Receipts(_), Response::Receipts(list)) => {
                out.push(Effect::Show(Change::Receipts {
                    host,
                    receipts: list.receipts,
                }));
            }
            (request, response) => {
                self.fleet.note_fault(
                    host,
                    format!(
                        "the host answered `{}` with a `{}` frame",
                        request.name(),
                        response.name()
                    ),
                );
                out.push(Effect::Show(Change::Host(host)));
            }
        }
    }

    fn failed(
        &mut self,
        host: usize,
        request: &Request,
        code: Option<ErrorCode>,
        message: String,
        out: &mut Vec<Effect>,
    ) {
        let pane = pane_of(request).map(str::to_owned);
        if let Request::Card(asked) = request {
            // The answers that waited for this card cannot be made.
            let (dropped, rest): (Vec<_>, Vec<_>) = std::mem::take(&mut self.waiting)
                .into_iter()
                .partition(|w| w.host == host && w.pane == asked.pane);
            self.waiting = rest;
            for waiting in dropped {
                out.push(Effect::Show(Change::Failed {
                    host,
                    pane: Some(waiting.pane),
                    what: "dispatch",
                    code: None,
                    message: format!("not sent: the card it answers could not be read ({message})"),
                }));
            }
        }
        if code == Some(ErrorCode::CursorInvalid)
            && let Some(pane) = &pane
        {
            // The protocol's advice: drop the cursor; a fresh window starts from the end.
            self.transcripts.remove(&(host, pane.clone()));
        }
        out.push(Effect::Show(Change::Failed {
            host,
            pane,
            what: request.name(),
            code,
            message,
        }));
    }
}

/// The pane a request names.
fn pane_of(request: &Request) -> Option<&str> {
    match request {
        Request::Card(r) => Some(&r.pane),
        Request::Window(r) => Some(&r.pane),
        Request::Event(r) => Some(&r.pane),
        Request::Dispatch(r) => Some(&r.pane),
        Request::Hello(_) | Request::Snapshot(_) | Request::Subscribe(_) | Request::Receipts(_) => {
            None
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::testing::{permission_card, row};
    use schema::{Action, Dispatch, Outcome};

    fn client() -> Client {
        Client::new(["a".to_owned(), "b".to_owned()])
    }

    fn sends(effects: &[Effect]) -> Vec<(usize, Request)> {
        effects
            .iter()
            .filter_map(|e| match e {
                Effect::Send { host, request } => Some((*host, request.clone())),
                Effect::Show(_) => None,
            })
            .collect()
    }

    fn approve(host: &str, pane: &str) -> Command {
        Command::Answer {
            host: host.into(),
            pane: pane.into(),
            choice: Choice::Approve,
        }
    }

    fn answer_card(client: &mut Client, host: usize, pane: &str, card: Card) -> Vec<Effect> {
        client.host_event(
            host,
            HostEvent::Session(SessionEvent::Answer {
                request: Request::Card(CardRequest { pane: pane.into() }),
                response: Response::Card(card),
            }),
        )
    }

    fn dispatched(effects: &[Effect]) -> Dispatch {
        match sends(effects).pop() {
            Some((_, Request::Dispatch(d))) => d,
            other => panic!("no dispatch: {other:?}"),
        }
    }

    #[test]
    fn an_approve_fetches_the_card_first_then_repeats_the_same_slot() {
        let mut client = client();
        let mut blocked = row("%4", State::Blocked);
        blocked.episode_ms = 70;
        client.host_event(
            1,
            HostEvent::Session(SessionEvent::Snapshot {
                rows: vec![blocked],
                selector: None,
            }),
        );
        let first = client.command(approve("b", "%4"), 0).unwrap();
        assert_eq!(
            sends(&first),
            [(1, Request::Card(CardRequest { pane: "%4".into() }))]
        );
        // Pressed again before the card came: no second card request.
        assert!(client.command(approve("b", "%4"), 0).unwrap().is_empty());
        let effects = answer_card(&mut client, 1, "%4", permission_card("%4", 70));
        let dispatches: Vec<_> = sends(&effects).into_iter().map(|(_, r)| r).collect();
        assert_eq!(dispatches.len(), 2);
        assert_eq!(dispatches[0], dispatches[1], "the same slot twice");
        // With the card at hand, a third press sends the same slot at once.
        let third = dispatched(&client.command(approve("b", "%4"), 0).unwrap());
        assert_eq!(Request::Dispatch(third.clone()), dispatches[0]);
        assert_eq!(third.slot, "%4:70:approve");
    }

    #[test]
    fn a_card_of_an_episode_the_pane_left_is_fetched_again() {
        let mut client = client();
        let mut blocked = row("%4", State::Blocked);
        blocked.episode_ms = 70;
        client.host_event(
            0,
            HostEvent::Session(SessionEvent::Snapshot {
                rows: vec![blocked.clone()],
                selector: None,
            }),
        );
        answer_card(&mut client, 0, "%4", permission_card("%4", 70));
        assert!(client.card(0, "%4").is_some());
        blocked.episode_ms = 80;
        client.host_event(
            0,
            HostEvent::Session(SessionEvent::Snapshot {
                rows: vec![blocked],
                selector: None,
            }),
        );
        assert!(client.card(0, "%4").is_none());
        let effects = client.command(approve("a", "%4"), 0).unwrap();
        assert!(matches!(sends(&effects)[0].1, Request::Card(_)));
    }

    #[test]
    fn an_answer_its_card_does_not_offer_is_refused_after_the_card() {
        let mut client = client();
        client.command(approve("a", "%1"), 0).unwrap();
        let effects = answer_card(&mut client, 0, "%1", Card::None);
        assert!(sends(&effects).is_empty());
        assert!(effects.iter().any(|e| matches!(
            e,
            Effect::Show(Change::Failed { what: "dispatch", message, .. }) if message.contains("not blocked")
        )));
        assert!(
            client
                .command(approve("nowhere", "%1"), 0)
                .unwrap_err()
                .contains("no host is named")
        );
    }

    #[test]
    fn two_steers_are_two_slots() {
        let mut client = client();
        let steer = |text: &str| Command::Steer {
            host: "a".into(),
            pane: "%3".into(),
            text: text.into(),
            now: false,
        };
        let one = dispatched(&client.command(steer("run the tests"), 5).unwrap());
        let two = dispatched(&client.command(steer("run them again"), 5).unwrap());
        assert_eq!(one.action, Action::Steer);
        assert_ne!(one.slot, two.slot);
    }

    #[test]
    fn paging_starts_from_the_last_page_and_a_bad_cursor_drops_it() {
        let mut client = client();
        let window = |pane: &str| Command::Window {
            host: "a".into(),
            pane: pane.into(),
            older: true,
            last: None,
            budget: None,
        };
        assert!(client.command(window("%0"), 0).is_err());
        let page: Window = serde_json::from_str(
            r#"{"pane":"%0","agent":"claude","session":null,"older":"c-old","budget_truncated":false,"unknown":0,"events":[{"cursor":"c-1","kind":"assistant_text","bytes":3,"ts":null,"preview":"hi","body":null}]}"#,
        )
        .unwrap();
        let asked = Request::Window(WindowRequest {
            pane: "%0".into(),
            last: None,
            before: None,
            budget: None,
        });
        client.host_event(
            0,
            HostEvent::Session(SessionEvent::Answer {
                request: asked,
                response: Response::Window(page),
            }),
        );
        let back = sends(&client.command(window("%0"), 0).unwrap());
        assert!(
            matches!(&back[0].1, Request::Window(w) if w.before == Some(Cursor("c-old".into())))
        );
        let event = Command::Event {
            host: "a".into(),
            pane: "%0".into(),
            which: EventRef::Index(0),
        };
        let opened = sends(&client.command(event.clone(), 0).unwrap());
        assert!(matches!(&opened[0].1, Request::Event(e) if e.cursor == Cursor("c-1".into())));
        client.host_event(
            0,
            HostEvent::Session(SessionEvent::Failed {
                request: back[0].1.clone(),
                error: schema::ErrorFrame {
                    code: ErrorCode::CursorInvalid,
                    message: "rewritten".into(),
                },
            }),
        );
        assert!(client.command(event, 0).is_err(), "the cursor was dropped");
    }

    #[test]
    fn receipts_and_retries_are_shown() {
        let mut client = client();
        let receipt = Receipt {
            slot: "s".into(),
            pane: "%1".into(),
            action: Action::Approve,
            outcome: Outcome::Refused,
            reason: Some(schema::Reason::Locked),
            exit_code: 5,
            cached: false,
            device: "d".into(),
            at_ms: 1,
        };
        let effects = client.host_event(
            0,
            HostEvent::Session(SessionEvent::Retrying {
                dispatch: answer::interrupt("%1", None),
                receipt: receipt.clone(),
                attempt: 1,
            }),
        );
        assert_eq!(
            effects,
            [Effect::Show(Change::Receipt {
                host: 0,
                receipt,
                retry: Some(1)
            })]
        );
    }

    #[test]
    fn an_edge_into_blocked_rings_and_moves_the_row() {
        let mut client = client();
        client.host_event(
            0,
            HostEvent::Session(SessionEvent::Snapshot {
                rows: vec![row("%1", State::Working)],
                selector: None,
            }),
        );
        let edge = Edge {
            at_ms: 9,
            pane: "%1".into(),
            agent: "claude".into(),
            from: Some(State::Working),
            to: Some(State::Blocked),
            detail: None,
            locator: "w:0.0".into(),
            repo: None,
            branch: None,
        };
        let effects = client.host_event(0, HostEvent::Session(SessionEvent::Edge(edge)));
        assert!(
            effects
                .iter()
                .any(|e| matches!(e, Effect::Show(Change::Attention { host: 0, .. })))
        );
        assert_eq!(client.fleet().row(0, "%1").unwrap().state, State::Blocked);
    }
}
