//! The client without I/O: the user's commands and the hosts' events in, requests to send and
//! changes to show out. The model is [`Fleet`]; beside it the last card of each pane (what an
//! answer quotes) and the last transcript page (what paging and opening an event start from).
//!
//! An answer is bound to the card the person read: the command quotes that card's binder, and
//! the dispatch is built from the card held for the pane only when it is that very card and its
//! pane has not moved on since (a [`HeldCard`] keeps why it no longer stands). Anything else is
//! refused here, before a byte is sent: no card held ("open it first"), another card, or one whose
//! pane moved on ("the card changed: read it again"). A card that arrives after the command never
//! answers it: nothing waits for a card. The host's binder is the second line of defence. Pressing
//! the same answer again, on the same card, sends the same slot.

use std::collections::HashMap;

use schema::{
    Binder, Budget, Card, CardRequest, Cursor, Edge, ErrorCode, EventHeader, EventRequest,
    FleetRow, Frames, Receipt, ReceiptsRequest, Request, Response, Selector, SessionMeta,
    SnapshotRequest, State, Subscribe, Window, WindowRequest,
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
    /// Answer a pane's card: the one whose binder is quoted, which the person read.
    Answer {
        /// Host name.
        host: String,
        /// Pane id.
        pane: String,
        /// The binder of the card answered, as the card showed it.
        binder: Binder,
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
    /// A held card no longer stands: its pane moved on ([`HeldCard::changed`] says how).
    CardChanged {
        /// Host index.
        host: usize,
        /// Pane id.
        pane: String,
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

/// What an answer to a card that no longer stands is refused with.
pub const CARD_CHANGED: &str = "the card changed: read it again";

/// A pane's card as the client holds it: what the host answered, and, once the pane moved on
/// (an edge, a new episode or permission request, the pane gone), why it no longer stands. A card
/// that changed stays shown, marked, until the person opens the pane's card again.
#[derive(Debug, Clone, PartialEq)]
pub struct HeldCard {
    /// The card.
    pub card: Card,
    /// Why the card no longer stands; `None` while it does.
    pub changed: Option<String>,
    /// The card was read ahead of the stream: when it came, the pane's row did not show it
    /// blocked yet, so the edge into `blocked` that follows is the news the card already told,
    /// not a move (the snapshot after it still checks the episode).
    ahead: bool,
}

impl HeldCard {
    /// The binder an answer to this card quotes; `None` for a card with nothing to answer.
    pub fn binder(&self) -> Option<&Binder> {
        binder_of(&self.card)
    }

    /// Whether an answer quoting `binder` may be built from this card: it is that card and it
    /// still stands.
    pub fn answers(&self, binder: &Binder) -> Result<&Card, String> {
        if self.binder() != Some(binder) {
            return Err(CARD_CHANGED.to_owned());
        }
        match &self.changed {
            Some(why) => Err(format!("{CARD_CHANGED} ({why})")),
            None => Ok(&self.card),
        }
    }
}

/// The binder a card's answer quotes.
pub fn binder_of(card: &Card) -> Option<&Binder> {
    match card {
        Card::Permission(card) => Some(&card.binder),
        Card::Question(card) => Some(&card.binder),
        Card::Informational(_) | Card::None => None,
    }
}

/// Why a held card no longer stands once its pane's row reads `row`, or `None` while it does.
fn moved_on(binder: &Binder, row: &FleetRow) -> Option<String> {
    if row.state != State::Blocked {
        return Some(format!("the pane is {} now", row.state));
    }
    if row.episode_ms != binder.expect_episode_ms {
        return Some("the pane is in another episode".to_owned());
    }
    if let Some(quoted) = &binder.expect_permission_request
        && row.permission_request.as_ref() != Some(quoted)
    {
        return Some("the pane asks another permission".to_owned());
    }
    None
}

/// Where a row change came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Via {
    /// An edge: a transition, so whatever card the pane had no longer stands.
    Edge,
    /// A snapshot: the row as it is.
    Snapshot,
}

/// The whole client's state.
#[derive(Debug)]
pub struct Client {
    fleet: Fleet,
    cards: HashMap<(usize, String), HeldCard>,
    transcripts: HashMap<(usize, String), Transcript>,
    nonces: Nonces,
}

impl Client {
    /// A client of these hosts.
    pub fn new(names: impl IntoIterator<Item = String>) -> Client {
        Client {
            fleet: Fleet::new(names),
            cards: HashMap::new(),
            transcripts: HashMap::new(),
            nonces: Nonces::default(),
        }
    }

    /// The model.
    pub fn fleet(&self) -> &Fleet {
        &self.fleet
    }

    /// The last card fetched for a pane, and whether it still stands.
    pub fn card(&self, host: usize, pane: &str) -> Option<&HeldCard> {
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
            Command::Answer {
                host,
                pane,
                binder,
                choice,
            } => {
                let host = self.host(&host)?;
                let Some(held) = self.cards.get(&(host, pane.clone())) else {
                    return Err(format!(
                        "no card of {pane} was read here: open its card and read it first"
                    ));
                };
                let dispatch = answer::answer(held.answers(&binder)?, choice)?;
                send(host, Request::Dispatch(dispatch))
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

    /// What a connection reported; `now_ms` is when (epoch ms): a host's last news is shown
    /// beside its rows while it is disconnected.
    pub fn host_event(&mut self, host: usize, event: HostEvent, now_ms: u64) -> Vec<Effect> {
        let mut out = Vec::new();
        match event {
            HostEvent::Link(link) => {
                self.fleet.set_link(host, link);
                out.push(Effect::Show(Change::Host(host)));
            }
            HostEvent::Session(event) => {
                self.fleet.heard(host, now_ms);
                self.session_event(host, event, &mut out);
            }
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
                self.rows_changed(changes, Via::Snapshot, out);
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
                self.rows_changed(changes, Via::Edge, out);
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

    fn rows_changed(&mut self, changes: Vec<Changed>, via: Via, out: &mut Vec<Effect>) {
        for changed in changes {
            let key = (changed.host, changed.row.pane.clone());
            if changed.change == RowChange::Removed {
                self.transcripts.remove(&key);
            }
            // A card stands while its pane stays blocked in the episode (and on the permission
            // request) it quotes; once the pane moves on it is marked, never silently replaced.
            if let Some(held) = self.cards.get_mut(&key)
                && held.changed.is_none()
                && let Some(binder) = held.binder()
            {
                let why = match (&changed.change, via) {
                    (RowChange::Removed, _) => Some("the pane is gone".to_owned()),
                    (_, Via::Edge) if held.ahead && changed.row.state == State::Blocked => None,
                    (_, Via::Edge) => {
                        Some(format!("the pane moved: it is {} now", changed.row.state))
                    }
                    (_, Via::Snapshot) => moved_on(binder, &changed.row),
                };
                held.ahead = false;
                if let Some(why) = why {
                    held.changed = Some(why);
                    out.push(Effect::Show(Change::CardChanged {
                        host: changed.host,
                        pane: changed.row.pane.clone(),
                    }));
                }
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
                // The card read now replaces whatever was held: it is what the host says the
                // pane asks, and what the screen shows next.
                let pane = asked.pane;
                let ahead = self
                    .fleet
                    .row(host, &pane)
                    .is_none_or(|row| row.state != State::Blocked);
                self.cards.insert(
                    (host, pane.clone()),
                    HeldCard {
                        card: card.clone(),
                        changed: None,
                        ahead,
                    },
                );
                out.push(Effect::Show(Change::Card { host, pane, card }));
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
    use crate::testing::{permission_card, row};
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

    fn approve(host: &str, pane: &str, episode: u64) -> Command {
        Command::Answer {
            host: host.into(),
            pane: pane.into(),
            binder: Binder {
                expect_episode_ms: episode,
                expect_permission_request: Some("req-1".into()),
            },
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
            0,
        )
    }

    fn snapshot(client: &mut Client, host: usize, rows: Vec<FleetRow>) -> Vec<Effect> {
        client.host_event(
            host,
            HostEvent::Session(SessionEvent::Snapshot {
                rows,
                selector: None,
            }),
            0,
        )
    }

    fn blocked(pane: &str, episode: u64) -> FleetRow {
        let mut row = row(pane, State::Blocked);
        row.episode_ms = episode;
        row.permission_request = Some("req-1".into());
        row
    }

    fn dispatched(effects: &[Effect]) -> Dispatch {
        match sends(effects).pop() {
            Some((_, Request::Dispatch(d))) => d,
            other => panic!("no dispatch: {other:?}"),
        }
    }

    fn card_changed(effects: &[Effect]) -> bool {
        effects
            .iter()
            .any(|e| matches!(e, Effect::Show(Change::CardChanged { .. })))
    }

    #[test]
    fn an_answer_is_built_from_the_card_read_and_the_same_press_sends_the_same_slot() {
        let mut client = client();
        snapshot(&mut client, 1, vec![blocked("%4", 70)]);
        // No card read: refused here, nothing sent, and no card fetched to answer later.
        let unread = client.command(approve("b", "%4", 70), 0).unwrap_err();
        assert!(
            unread.contains("open its card and read it first"),
            "{unread}"
        );
        answer_card(&mut client, 1, "%4", permission_card("%4", 70));
        let first = dispatched(&client.command(approve("b", "%4", 70), 0).unwrap());
        let second = dispatched(&client.command(approve("b", "%4", 70), 0).unwrap());
        assert_eq!(first, second, "the same slot twice");
        assert_eq!(first.slot, "%4:70:approve");
        assert_eq!(first.pane, "%4");
        assert_eq!(first.binder.expect_episode_ms, 70);
        // Quoting another card than the one held: refused before anything is sent.
        assert_eq!(
            client.command(approve("b", "%4", 69), 0).unwrap_err(),
            CARD_CHANGED
        );
        // The other host's pane of the same id has no card read.
        assert!(client.command(approve("a", "%4", 70), 0).is_err());
    }

    #[test]
    fn a_card_arriving_after_the_command_never_answers_it() {
        let mut client = client();
        snapshot(&mut client, 0, vec![blocked("%4", 70)]);
        assert!(client.command(approve("a", "%4", 70), 0).is_err());
        let effects = answer_card(&mut client, 0, "%4", permission_card("%4", 70));
        assert!(sends(&effects).is_empty(), "{effects:?}");
    }

    #[test]
    fn a_card_whose_pane_moved_on_is_marked_and_refused() {
        let fresh = client;
        // A new episode by snapshot.
        let mut client = fresh();
        snapshot(&mut client, 0, vec![blocked("%4", 70)]);
        answer_card(&mut client, 0, "%4", permission_card("%4", 70));
        assert!(card_changed(&snapshot(
            &mut client,
            0,
            vec![blocked("%4", 80)]
        )));
        let held = client.card(0, "%4").unwrap();
        assert_eq!(
            held.changed.as_deref(),
            Some("the pane is in another episode")
        );
        let refused = client.command(approve("a", "%4", 70), 0).unwrap_err();
        assert!(refused.starts_with(CARD_CHANGED), "{refused}");
        // Reading the card again makes the new one answerable.
        answer_card(&mut client, 0, "%4", permission_card("%4", 80));
        assert!(client.command(approve("a", "%4", 80), 0).is_ok());

        // Another permission request in the same episode.
        let mut client = fresh();
        snapshot(&mut client, 0, vec![blocked("%4", 70)]);
        answer_card(&mut client, 0, "%4", permission_card("%4", 70));
        let mut other = blocked("%4", 70);
        other.permission_request = Some("req-2".into());
        assert!(card_changed(&snapshot(&mut client, 0, vec![other])));
        assert!(client.command(approve("a", "%4", 70), 0).is_err());

        // An edge: whatever it says, the pane moved.
        let mut client = fresh();
        snapshot(&mut client, 0, vec![blocked("%4", 70)]);
        answer_card(&mut client, 0, "%4", permission_card("%4", 70));
        let edge = Edge {
            at_ms: 9,
            pane: "%4".into(),
            agent: "claude".into(),
            from: Some(State::Blocked),
            to: Some(State::Working),
            detail: None,
            locator: "w:0.0".into(),
            repo: None,
            branch: None,
        };
        let effects = client.host_event(0, HostEvent::Session(SessionEvent::Edge(edge)), 0);
        assert!(card_changed(&effects));
        assert_eq!(
            client.card(0, "%4").unwrap().changed.as_deref(),
            Some("the pane moved: it is working now")
        );
        assert!(client.command(approve("a", "%4", 70), 0).is_err());

        // The pane gone.
        let mut client = fresh();
        snapshot(&mut client, 0, vec![blocked("%4", 70)]);
        answer_card(&mut client, 0, "%4", permission_card("%4", 70));
        assert!(card_changed(&snapshot(&mut client, 0, Vec::new())));
        assert_eq!(
            client.card(0, "%4").unwrap().changed.as_deref(),
            Some("the pane is gone")
        );
        assert!(client.command(approve("a", "%4", 70), 0).is_err());
    }

    #[test]
    fn a_card_read_ahead_of_the_stream_stands_through_the_edge_that_catches_up() {
        let fresh = client;
        let mut client = fresh();
        // The row still says working when the card, read after the hook blocked the pane, comes.
        snapshot(&mut client, 0, vec![row("%4", State::Working)]);
        answer_card(&mut client, 0, "%4", permission_card("%4", 70));
        let edge = |from, to| Edge {
            at_ms: 9,
            pane: "%4".into(),
            agent: "claude".into(),
            from: Some(from),
            to: Some(to),
            detail: None,
            locator: "w:0.0".into(),
            repo: None,
            branch: None,
        };
        let caught_up = client.host_event(
            0,
            HostEvent::Session(SessionEvent::Edge(edge(State::Working, State::Blocked))),
            0,
        );
        assert!(!card_changed(&caught_up));
        assert!(client.command(approve("a", "%4", 70), 0).is_ok());
        // The snapshot after it tells the episode: the card's, so it stands.
        assert!(!card_changed(&snapshot(
            &mut client,
            0,
            vec![blocked("%4", 70)]
        )));
        // The next edge is a move.
        let moved = client.host_event(
            0,
            HostEvent::Session(SessionEvent::Edge(edge(State::Blocked, State::Working))),
            0,
        );
        assert!(card_changed(&moved));

        // Read ahead, but the snapshot after the edge shows another episode: changed.
        let mut client = fresh();
        snapshot(&mut client, 0, vec![row("%4", State::Working)]);
        answer_card(&mut client, 0, "%4", permission_card("%4", 70));
        client.host_event(
            0,
            HostEvent::Session(SessionEvent::Edge(edge(State::Working, State::Blocked))),
            0,
        );
        assert!(card_changed(&snapshot(
            &mut client,
            0,
            vec![blocked("%4", 71)]
        )));
        assert!(client.command(approve("a", "%4", 70), 0).is_err());
    }

    #[test]
    fn a_row_that_did_not_move_leaves_the_card_standing() {
        let mut client = client();
        snapshot(&mut client, 0, vec![blocked("%4", 70)]);
        answer_card(&mut client, 0, "%4", permission_card("%4", 70));
        let mut same = blocked("%4", 70);
        same.context = Some(55);
        assert!(!card_changed(&snapshot(&mut client, 0, vec![same])));
        assert!(client.command(approve("a", "%4", 70), 0).is_ok());
    }

    #[test]
    fn an_answer_its_card_does_not_offer_is_refused() {
        let mut client = client();
        answer_card(&mut client, 0, "%1", Card::None);
        let refused = client.command(approve("a", "%1", 70), 0).unwrap_err();
        assert_eq!(
            refused, CARD_CHANGED,
            "a card with no binder answers nothing"
        );
        assert!(
            client
                .command(approve("nowhere", "%1", 70), 0)
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
            0,
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
            0,
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
            0,
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
    fn an_edge_into_blocked_moves_the_row_and_the_snapshot_after_it_rings_its_episode() {
        let mut client = client();
        snapshot(&mut client, 0, vec![row("%1", State::Working)]);
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
        let rang = |effects: &[Effect]| -> Vec<u64> {
            effects
                .iter()
                .filter_map(|e| match e {
                    Effect::Show(Change::Attention { row, .. }) => Some(row.episode_ms),
                    _ => None,
                })
                .collect()
        };
        let effects = client.host_event(0, HostEvent::Session(SessionEvent::Edge(edge)), 0);
        assert_eq!(rang(&effects), Vec::<u64>::new(), "no episode known yet");
        assert_eq!(client.fleet().row(0, "%1").unwrap().state, State::Blocked);
        let effects = snapshot(&mut client, 0, vec![blocked("%1", 9)]);
        assert_eq!(rang(&effects), [9], "the ring carries the row's episode");
        assert!(rang(&snapshot(&mut client, 0, vec![blocked("%1", 9)])).is_empty());
    }

    #[test]
    fn news_from_a_host_is_timed() {
        let mut client = client();
        assert_eq!(client.fleet().host(0).last_news_ms, None);
        client.host_event(
            0,
            HostEvent::Session(SessionEvent::Snapshot {
                rows: Vec::new(),
                selector: None,
            }),
            1234,
        );
        assert_eq!(client.fleet().host(0).last_news_ms, Some(1234));
        client.host_event(0, HostEvent::Link(Link::Connecting), 5678);
        assert_eq!(
            client.fleet().host(0).last_news_ms,
            Some(1234),
            "a link change is not news from the host"
        );
    }
}
