//! What the TUI shows, without a terminal: the selection, the focus (the fleet, a transcript, an
//! event), the panel as drawn, the answers being chosen on a question card, the line editor, and
//! the status line. What the keys do is `keys.rs`; changes from the core update the status
//! line and the focus here.
//!
//! Two rules hold a key to what the person sees:
//!
//! - **The selection is a pane, never a position.** It is a host and a pane id; rows re-sorting
//!   never move it, and when its pane leaves the list (filtered out, vanished, its host down) it
//!   stays on that pane, which the panel shows as not in the list, and no pane key acts until the
//!   person selects again.
//! - **A key acts on the panel as it was last drawn** ([`Ui::drawn`], which the view records at
//!   every draw). An answer (approve, deny, deny with a message, a question's reply or
//!   rejection) quotes the binder of the card the panel shows; with no card shown, the key opens
//!   it and sends nothing else; on a card whose pane moved on it is refused with one line. Steer
//!   names its pane in the editor's prompt; interrupt asks for a second `i`, naming the pane on
//!   the status line first.

use std::collections::HashMap;

use schema::{Binder, Card, ErrorCode, EventHeader};

use super::editor::Editor;
use client_core::client::{CARD_CHANGED, Change, Client, Command};
use client_core::fleet::{Filter, human_duration};

/// Where the arrow keys go.
#[derive(Debug, Clone, PartialEq)]
pub enum Focus {
    /// The fleet list; the panel shows the selected pane's card.
    Fleet,
    /// A pane's transcript: the selected event.
    Transcript {
        /// Host index.
        host: usize,
        /// Pane id.
        pane: String,
        /// The selected event (0: the newest).
        selected: usize,
    },
    /// One event in full.
    Event {
        /// Host index.
        host: usize,
        /// Pane id.
        pane: String,
        /// The event.
        event: Box<EventHeader>,
        /// Lines scrolled.
        scroll: u16,
    },
}

/// What the line being typed is for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Purpose {
    /// A line for the agent (`now`: interrupt first).
    Steer {
        /// Host name.
        host: String,
        /// Pane id.
        pane: String,
        /// `steer_now`.
        now: bool,
    },
    /// Why a permission is denied: the card's binder is the one shown when `D` was pressed.
    Deny {
        /// Host name.
        host: String,
        /// Pane id.
        pane: String,
        /// The binder of the card being denied.
        binder: Binder,
    },
    /// A free-text answer to the current question.
    Custom,
    /// The filter: `host=NAME state=blocked,done agent=NAME`.
    Filter,
}

/// The choices made so far on a pane's question card.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Answers {
    /// Which card they are for: host, pane, episode.
    pub card: Option<(usize, String, u64)>,
    /// One list of chosen labels per question.
    pub chosen: Vec<Vec<String>>,
    /// The question the digits choose for.
    pub current: usize,
}

/// Why the selected pane is not in the list.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Absent {
    /// The filter hides it.
    Filtered,
    /// Its host no longer lists it.
    Gone,
    /// Its host is not connected: its row is only what the host last said.
    HostDown,
}

/// A card as the panel shows it: what an answer key quotes.
#[derive(Debug, Clone, PartialEq)]
pub struct ShownCard {
    /// The card.
    pub card: Card,
    /// Its pane moved on since it was read ([`client_core::client::HeldCard::changed`]).
    pub changed: Option<String>,
}

/// What the panel shows of the selected pane.
#[derive(Debug, Clone, PartialEq)]
pub struct Panel {
    /// Host index.
    pub host: usize,
    /// Pane id.
    pub pane: String,
    /// Why the pane is not in the list; `None` while it is.
    pub absent: Option<Absent>,
    /// The pane's card, once read.
    pub card: Option<ShownCard>,
}

/// A key that waits for a second one before it acts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Confirm {
    /// `i` again interrupts this pane (host index, pane id).
    Interrupt(usize, String),
}

/// What a key asks the loop to do.
#[derive(Debug, Clone, PartialEq)]
pub enum Action {
    /// Send this to the core.
    Command(Command),
    /// End the client.
    Quit,
}

/// The TUI's state.
#[derive(Debug, Default)]
pub struct Ui {
    /// The filter of the fleet list.
    pub filter: Filter,
    /// The selected pane (host index, pane id): an identity, kept across reorders, and kept
    /// when the pane leaves the list.
    pub selected: Option<(usize, String)>,
    /// The panel as the last draw showed it: what the pane keys act on.
    pub drawn: Option<Panel>,
    /// A key waiting for its second press.
    pub confirm: Option<Confirm>,
    /// Where the arrows go.
    pub focus: Option<Focus>,
    /// The line being typed.
    pub editor: Option<(Purpose, Editor)>,
    /// The answers being chosen.
    pub answers: Answers,
    /// The last receipt, fault or refusal.
    pub status: String,
    /// The last receipt of each pane answered from here (host index, pane id): what its panel
    /// shows, after the status line has moved on to the next ring.
    pub answered: HashMap<(usize, String), String>,
    /// The help overlay.
    pub help: bool,
    /// The terminal's size (columns, rows), for the transcript's budgets.
    pub size: (u16, u16),
    /// How many rows the fleet list showed at the last draw.
    pub fleet_rows: usize,
    /// Keys read so far, when counted (tests only): shown at the status line's end.
    pub keys_read: Option<u64>,
    /// Answers handed to a host so far, counted with the keys (tests only).
    pub answers_sent: u64,
}

impl Ui {
    /// Where the arrows go now.
    pub fn focus(&self) -> Focus {
        self.focus.clone().unwrap_or(Focus::Fleet)
    }

    /// The selected pane, whether or not the list shows it.
    pub fn selection(&self) -> Option<(usize, String)> {
        self.selected.clone()
    }

    /// What the panel shows of the selected pane now: whether it is in the list, and its card.
    pub fn panel(&self, client: &Client) -> Option<Panel> {
        let (host, pane) = self.selected.clone()?;
        let fleet = client.fleet();
        let listed = fleet
            .shown(&self.filter)
            .iter()
            .any(|(h, r)| *h == host && r.pane == pane);
        let absent = if fleet.host(host).stale() {
            Some(Absent::HostDown)
        } else if fleet.row(host, &pane).is_none() {
            Some(Absent::Gone)
        } else if !listed {
            Some(Absent::Filtered)
        } else {
            None
        };
        let card = client.card(host, &pane).map(|held| ShownCard {
            card: held.card.clone(),
            changed: held.changed.clone(),
        });
        Some(Panel {
            host,
            pane,
            absent,
            card,
        })
    }

    /// Records what the panel shows now: the view calls it at every draw, and the pane keys act
    /// on it.
    pub fn seen(&mut self, client: &Client) {
        self.drawn = self.panel(client);
    }

    pub(super) fn selected_index(&self, client: &Client) -> Option<usize> {
        let (host, pane) = self.selected.as_ref()?;
        client
            .fleet()
            .shown(&self.filter)
            .iter()
            .position(|(h, r)| h == host && &r.pane == pane)
    }

    /// Moves the selection `by` rows; from a pane not in the list, `by` counts from the first
    /// row (down) or the last (up).
    pub(super) fn move_selection(&mut self, client: &Client, by: isize) {
        let shown = client.fleet().shown(&self.filter);
        if shown.is_empty() {
            return;
        }
        let last = shown.len() as isize - 1;
        let to = match self.selected_index(client) {
            Some(at) => at as isize + by,
            None if by >= 0 => by - 1,
            None => last + by + 1,
        };
        let to = to.clamp(0, last) as usize;
        self.selected = Some((shown[to].0, shown[to].1.pane.clone()));
    }

    /// The first row shown becomes the selection when nothing was ever selected.
    pub(super) fn pick_first(&mut self, client: &Client) {
        if self.selected.is_none()
            && let Some((host, row)) = client.fleet().shown(&self.filter).first()
        {
            self.selected = Some((*host, row.pane.clone()));
        }
    }

    /// Starts the answers afresh when the card is another pane's or another episode's.
    pub fn sync_answers(&mut self, host: usize, pane: &str, card: &Card) {
        let Card::Question(card) = card else { return };
        let key = Some((host, pane.to_owned(), card.binder.expect_episode_ms));
        if self.answers.card != key || self.answers.chosen.len() != card.questions.len() {
            self.answers = Answers {
                card: key,
                chosen: vec![Vec::new(); card.questions.len()],
                current: 0,
            };
        }
    }

    /// Updates the status line and the focus from what changed.
    pub fn changed(&mut self, change: &Change, client: &Client) -> Vec<Action> {
        let name = |host: usize| client.fleet().host(host).name.clone();
        match change {
            Change::Receipt {
                host,
                receipt,
                retry,
            } => {
                let mut text = format!("{} → {}", receipt.action, receipt.outcome);
                if let Some(reason) = &receipt.reason {
                    text.push_str(&format!(" ({reason})"));
                }
                if receipt.cached {
                    text.push_str(", already answered (cached)");
                }
                if let Some(retry) = retry {
                    text.push_str(&format!(": the pane is locked, trying again ({retry})"));
                }
                self.status = format!("{} {}: {text}", name(*host), receipt.pane);
                self.answered.insert((*host, receipt.pane.clone()), text);
            }
            Change::Failed {
                host,
                pane,
                what,
                code,
                message,
            } => {
                let pane = pane.as_deref().unwrap_or("");
                let why = match code {
                    Some(code) => format!("{code}: {message}"),
                    None => message.clone(),
                };
                self.status = format!("{} {pane} {what}: {why}", name(*host));
                if *what == "dispatch" && !pane.is_empty() {
                    self.answered
                        .insert((*host, pane.to_owned()), format!("not answered: {why}"));
                }
                // A cursor that no longer addresses its bytes: start again from the end.
                if *code == Some(ErrorCode::CursorInvalid)
                    && let Focus::Transcript {
                        host: h, pane: p, ..
                    } = self.focus()
                    && h == *host
                {
                    self.focus = Some(Focus::Transcript {
                        host: h,
                        pane: p.clone(),
                        selected: 0,
                    });
                    return vec![Action::Command(self.window(name(h), p, false))];
                }
                // A transcript that could not be read at all: back to the fleet, the reason on
                // the status line.
                if *what == "window"
                    && let Focus::Transcript {
                        host: h, pane: p, ..
                    } = self.focus()
                    && h == *host
                    && Some(p.as_str()) == Some(pane)
                    && client.transcript(h, &p).is_none()
                {
                    self.focus = None;
                }
            }
            Change::Host(host) => {
                let h = client.fleet().host(*host);
                if let Some(fault) = &h.fault {
                    self.status = format!("{}: {} (fault {})", h.name, fault.message, fault.count);
                }
            }
            Change::Attention { host, row } => {
                self.status = format!(
                    "{} {} {} is blocked{}",
                    name(*host),
                    row.pane,
                    row.agent,
                    row.detail
                        .as_ref()
                        .map(|d| format!(" ({d})"))
                        .unwrap_or_default()
                );
            }
            Change::Event { host, pane, event } => {
                self.focus = Some(Focus::Event {
                    host: *host,
                    pane: pane.clone(),
                    event: Box::new(event.clone()),
                    scroll: 0,
                });
            }
            Change::CardChanged { host, pane } => {
                if self.selected.as_ref() == Some(&(*host, pane.clone()))
                    && let Some(why) = client.card(*host, pane).and_then(|h| h.changed.clone())
                {
                    self.status = format!(
                        "{} {pane}: {CARD_CHANGED} ({why}; Enter reads it)",
                        name(*host)
                    );
                }
            }
            Change::Row(_) | Change::Snapshot { .. } => self.pick_first(client),
            Change::Card { host, pane, card } => {
                self.sync_answers(*host, pane, card);
                if let Card::None = card {
                    self.status = format!("{} {pane}: not blocked, nothing to answer", name(*host));
                }
            }
            Change::Receipts { host, receipts } => {
                self.status = format!("{}: {} receipt(s)", name(*host), receipts.len());
            }
            Change::Subscribed(_) | Change::Edge(..) | Change::Window { .. } => {}
        }
        Vec::new()
    }
}

/// Why a pane is not in the list, in a few words.
pub fn absent_words(absent: Absent) -> &'static str {
    match absent {
        Absent::Filtered => "the filter hides it",
        Absent::Gone => "it is gone",
        Absent::HostDown => "its host is disconnected",
    }
}

/// How long a blocked row has waited, for the list.
pub fn waited(since_ms: Option<u64>, now_ms: u64) -> String {
    since_ms.map_or_else(String::new, |since| {
        human_duration(now_ms.saturating_sub(since))
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tui::testing::client;
    use client_core::testing::row;
    use schema::State;

    #[test]
    fn an_answers_outcome_stays_on_its_pane_when_the_status_line_moves_on() {
        let client = client();
        let mut ui = Ui::default();
        let receipt = schema::Receipt {
            slot: "%2:5:approve".into(),
            pane: "%2".into(),
            action: schema::Action::Approve,
            outcome: schema::Outcome::Replied,
            reason: None,
            exit_code: 0,
            cached: true,
            device: "d".into(),
            at_ms: 9,
        };
        ui.changed(
            &Change::Receipt {
                host: 0,
                receipt,
                retry: None,
            },
            &client,
        );
        assert_eq!(
            ui.status,
            "a %2: approve → replied, already answered (cached)"
        );
        ui.changed(
            &Change::Attention {
                host: 1,
                row: row("%1", State::Blocked),
            },
            &client,
        );
        assert_eq!(ui.status, "b %1 claude is blocked");
        assert_eq!(
            ui.answered[&(0, "%2".to_owned())],
            "approve → replied, already answered (cached)"
        );
        ui.changed(
            &Change::Failed {
                host: 0,
                pane: Some("%2".into()),
                what: "dispatch",
                code: None,
                message: "not connected".into(),
            },
            &client,
        );
        assert_eq!(
            ui.answered[&(0, "%2".to_owned())],
            "not answered: not connected"
        );
    }
}
