//! What the TUI shows and what its keys do, without a terminal: the selection, the focus (the
//! fleet, a transcript, an event), the answers being chosen on a question card, the line editor,
//! and the status line. Keys become commands for the core; changes from the core update the
//! status line and the focus.
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

use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use schema::{Binder, Budget, Card, ErrorCode, EventHeader, State};

use super::editor::{Edit, Editor};
use client_core::answer::{self, Choice};
use client_core::client::{CARD_CHANGED, Change, Client, Command, EventRef};
use client_core::fleet::{Filter, StateWanted, human_duration};

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

    fn selected_index(&self, client: &Client) -> Option<usize> {
        let (host, pane) = self.selected.as_ref()?;
        client
            .fleet()
            .shown(&self.filter)
            .iter()
            .position(|(h, r)| h == host && &r.pane == pane)
    }

    /// Moves the selection `by` rows; from a pane not in the list, `by` counts from the first
    /// row (down) or the last (up).
    fn move_selection(&mut self, client: &Client, by: isize) {
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
    fn pick_first(&mut self, client: &Client) {
        if self.selected.is_none()
            && let Some((host, row)) = client.fleet().shown(&self.filter).first()
        {
            self.selected = Some((*host, row.pane.clone()));
        }
    }

    /// One key.
    pub fn key(&mut self, key: KeyEvent, client: &Client) -> Vec<Action> {
        if key.modifiers.contains(KeyModifiers::CONTROL) && key.code == KeyCode::Char('c') {
            return vec![Action::Quit];
        }
        if self.editor.is_some() {
            return self.edit(key, client);
        }
        if self.help {
            self.help = false;
            return Vec::new();
        }
        if let Some(Confirm::Interrupt(host, pane)) = self.confirm.take() {
            let name = client.fleet().host(host).name.clone();
            if key.code != KeyCode::Char('i') {
                self.status = format!("{name} {pane}: not interrupted");
                return Vec::new();
            }
            return match self.drawn.as_ref() {
                Some(panel)
                    if panel.host == host && panel.pane == pane && panel.absent.is_none() =>
                {
                    vec![Action::Command(Command::Interrupt { host: name, pane })]
                }
                _ => {
                    self.status = format!("{name} {pane}: not interrupted, it left the list");
                    Vec::new()
                }
            };
        }
        match self.focus() {
            Focus::Fleet => self.fleet_key(key, client),
            Focus::Transcript {
                host,
                pane,
                selected,
            } => self.transcript_key(key, client, host, pane, selected),
            Focus::Event {
                host,
                pane,
                event,
                scroll,
            } => {
                let scroll = match key.code {
                    KeyCode::Up | KeyCode::Char('k') => scroll.saturating_sub(1),
                    KeyCode::Down | KeyCode::Char('j') => scroll.saturating_add(1),
                    KeyCode::PageUp => scroll.saturating_sub(10),
                    KeyCode::PageDown | KeyCode::Char(' ') => scroll.saturating_add(10),
                    KeyCode::Esc | KeyCode::Backspace | KeyCode::Char('q') => {
                        let selected = client
                            .transcript(host, &pane)
                            .and_then(|t| t.events.iter().position(|e| e.cursor == event.cursor))
                            .unwrap_or(0);
                        self.focus = Some(Focus::Transcript {
                            host,
                            pane,
                            selected,
                        });
                        return Vec::new();
                    }
                    _ => return Vec::new(),
                };
                self.focus = Some(Focus::Event {
                    host,
                    pane,
                    event,
                    scroll,
                });
                Vec::new()
            }
        }
    }

    fn fleet_key(&mut self, key: KeyEvent, client: &Client) -> Vec<Action> {
        let page = self.fleet_rows.max(1) as isize;
        match key.code {
            KeyCode::Char('q') => return vec![Action::Quit],
            KeyCode::Char('?') => self.help = true,
            KeyCode::Up | KeyCode::Char('k') => self.move_selection(client, -1),
            KeyCode::Down | KeyCode::Char('j') => self.move_selection(client, 1),
            KeyCode::PageUp => self.move_selection(client, -page),
            KeyCode::PageDown => self.move_selection(client, page),
            KeyCode::Home => self.move_selection(client, isize::MIN / 2),
            KeyCode::End => self.move_selection(client, isize::MAX / 2),
            KeyCode::Char('f') => {
                self.editor = Some((Purpose::Filter, filter_editor(&self.filter, client)));
            }
            KeyCode::Char('b') => {
                let blocked = vec![StateWanted::Is(State::Blocked)];
                self.filter.states = if self.filter.states == blocked {
                    Vec::new()
                } else {
                    blocked
                };
            }
            KeyCode::Char('h') => self.cycle_host(client),
            KeyCode::Esc => self.filter = Filter::default(),
            _ => return self.pane_key(key, client),
        }
        Vec::new()
    }

    /// Keys that act on the selected pane, as the panel was last drawn.
    fn pane_key(&mut self, key: KeyEvent, client: &Client) -> Vec<Action> {
        let acts = matches!(
            key.code,
            KeyCode::Enter
                | KeyCode::Tab
                | KeyCode::BackTab
                | KeyCode::Left
                | KeyCode::Right
                | KeyCode::Char(
                    'a' | 'd' | 'D' | 's' | 'S' | 'i' | 'r' | 't' | 'x' | 'y' | 'c' | '1'..='9'
                )
        );
        if !acts {
            return Vec::new();
        }
        let Some(panel) = self.drawn.clone() else {
            self.status = "select a pane first (↑↓)".into();
            return Vec::new();
        };
        let Panel {
            host,
            ref pane,
            absent,
            ref card,
        } = panel;
        let pane = pane.clone();
        let name = client.fleet().host(host).name.clone();
        if let Some(absent) = absent {
            self.status = format!(
                "{name} {pane} is not in the list ({}): select a pane (↑↓)",
                absent_words(absent)
            );
            return Vec::new();
        }
        let question = match card {
            Some(ShownCard {
                card: Card::Question(question),
                ..
            }) => Some(question.clone()),
            _ => None,
        };
        match key.code {
            KeyCode::Enter => vec![Action::Command(Command::Card { host: name, pane })],
            KeyCode::Char('a') => self.answer(&panel, &name, Choice::Approve),
            KeyCode::Char('d') => self.answer(&panel, &name, Choice::Deny),
            KeyCode::Char('D') => match self.bound(&panel, &name, &Choice::Deny) {
                Ok(binder) => {
                    self.editor = Some((
                        Purpose::Deny {
                            host: name,
                            pane,
                            binder,
                        },
                        Editor::default(),
                    ));
                    Vec::new()
                }
                Err(actions) => actions,
            },
            KeyCode::Char(c @ ('s' | 'S')) => {
                let purpose = Purpose::Steer {
                    host: name,
                    pane,
                    now: c == 'S',
                };
                self.editor = Some((purpose, Editor::default()));
                Vec::new()
            }
            KeyCode::Char('i') => {
                self.status =
                    format!("interrupt {name} {pane}? i again sends it, any other key does not");
                self.confirm = Some(Confirm::Interrupt(host, pane));
                Vec::new()
            }
            KeyCode::Char('r') => vec![Action::Command(Command::Snapshot {
                host: name,
                selector: None,
            })],
            KeyCode::Char('t') => {
                self.focus = Some(Focus::Transcript {
                    host,
                    pane: pane.clone(),
                    selected: 0,
                });
                vec![Action::Command(self.window(name, pane, false))]
            }
            KeyCode::Char('x') if question.is_some() => self.answer(&panel, &name, Choice::Reject),
            KeyCode::Char('y') if question.is_some() => {
                let card = question.expect("checked");
                self.sync_answers(host, &pane, &Card::Question(card));
                let chosen = self.answers.chosen.clone();
                self.answer(&panel, &name, Choice::Answer(chosen))
            }
            KeyCode::Tab | KeyCode::Right if question.is_some() => {
                let card = question.expect("checked");
                self.sync_answers(host, &pane, &Card::Question(card.clone()));
                self.answers.current = (self.answers.current + 1) % card.questions.len().max(1);
                Vec::new()
            }
            KeyCode::BackTab | KeyCode::Left if question.is_some() => {
                let card = question.expect("checked");
                self.sync_answers(host, &pane, &Card::Question(card.clone()));
                let n = card.questions.len().max(1);
                self.answers.current = (self.answers.current + n - 1) % n;
                Vec::new()
            }
            KeyCode::Char('c') if question.is_some() => {
                let card = question.expect("checked");
                self.sync_answers(host, &pane, &Card::Question(card));
                self.editor = Some((Purpose::Custom, Editor::default()));
                Vec::new()
            }
            KeyCode::Char(digit @ '1'..='9') if question.is_some() => {
                let card = question.expect("checked");
                self.sync_answers(host, &pane, &Card::Question(card.clone()));
                let index = digit as usize - '1' as usize;
                if let Some(q) = card.questions.get(self.answers.current)
                    && let Some(option) = q.options.get(index)
                {
                    let chosen = &mut self.answers.chosen[self.answers.current];
                    if let Some(at) = chosen.iter().position(|c| *c == option.label) {
                        chosen.remove(at);
                    } else if q.multiple {
                        chosen.push(option.label.clone());
                    } else {
                        *chosen = vec![option.label.clone()];
                    }
                }
                Vec::new()
            }
            _ => Vec::new(),
        }
    }

    /// An answer to the card the panel shows, quoting its binder.
    fn answer(&mut self, panel: &Panel, name: &str, choice: Choice) -> Vec<Action> {
        match self.bound(panel, name, &choice) {
            Ok(binder) => vec![Action::Command(Command::Answer {
                host: name.to_owned(),
                pane: panel.pane.clone(),
                binder,
                choice,
            })],
            Err(actions) => actions,
        }
    }

    /// The binder an answer to the panel's card quotes; otherwise what the key does instead: it
    /// opens the card when none is shown, and says why when the card changed or offers nothing
    /// to answer.
    fn bound(&mut self, panel: &Panel, name: &str, choice: &Choice) -> Result<Binder, Vec<Action>> {
        let pane = &panel.pane;
        let Some(shown) = &panel.card else {
            self.status = format!("{name} {pane}: opening its card; read it, then answer");
            return Err(vec![Action::Command(Command::Card {
                host: name.to_owned(),
                pane: pane.clone(),
            })]);
        };
        if let Some(why) = &shown.changed {
            self.status = format!("{name} {pane}: {CARD_CHANGED} ({why}; Enter reads it)");
            return Err(Vec::new());
        }
        // What the card does not offer is said here, as the core would say it.
        if let Err(why) = answer::answer(&shown.card, choice.clone()) {
            self.status = format!("{name} {pane}: {why}");
            return Err(Vec::new());
        }
        match client_core::client::binder_of(&shown.card) {
            Some(binder) => Ok(binder.clone()),
            None => Err(Vec::new()),
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

    fn transcript_key(
        &mut self,
        key: KeyEvent,
        client: &Client,
        host: usize,
        pane: String,
        selected: usize,
    ) -> Vec<Action> {
        let name = client.fleet().host(host).name.clone();
        let loaded = client.transcript(host, &pane).map_or(0, |t| t.events.len());
        let selected = match key.code {
            KeyCode::Esc | KeyCode::Char('q') => {
                self.focus = None;
                return Vec::new();
            }
            KeyCode::Up | KeyCode::Char('k') => selected.saturating_sub(1),
            KeyCode::Down | KeyCode::Char('j') => (selected + 1).min(loaded.saturating_sub(1)),
            KeyCode::Home => 0,
            KeyCode::Char('o') | KeyCode::PageDown => {
                return vec![Action::Command(self.window(name, pane, true))];
            }
            KeyCode::Char('r') => {
                self.focus = Some(Focus::Transcript {
                    host,
                    pane: pane.clone(),
                    selected: 0,
                });
                return vec![Action::Command(self.window(name, pane, false))];
            }
            KeyCode::Enter if loaded > 0 => {
                return vec![Action::Command(Command::Event {
                    host: name,
                    pane,
                    which: EventRef::Index(selected),
                })];
            }
            _ => return Vec::new(),
        };
        self.focus = Some(Focus::Transcript {
            host,
            pane,
            selected,
        });
        Vec::new()
    }

    /// A window request sized to the terminal: as many events as two screens of the panel hold,
    /// each header's strings no wider than a line.
    fn window(&self, host: String, pane: String, older: bool) -> Command {
        let (cols, rows) = self.size;
        let last = (u32::from(rows) * 2).clamp(20, 200);
        let header_bytes = u32::from(cols).clamp(32, 256);
        Command::Window {
            host,
            pane,
            older,
            last: Some(last),
            budget: Some(Budget {
                header_bytes: Some(header_bytes),
                read_bytes: None,
                frame_bytes: None,
            }),
        }
    }

    fn cycle_host(&mut self, client: &Client) {
        let hosts = client.fleet().hosts();
        let next = match &self.filter.host {
            None => hosts.first(),
            Some(name) => hosts
                .iter()
                .position(|h| &h.name == name)
                .and_then(|at| hosts.get(at + 1)),
        };
        self.filter.host = next.map(|h| h.name.clone());
    }

    fn edit(&mut self, key: KeyEvent, client: &Client) -> Vec<Action> {
        let Some((purpose, editor)) = self.editor.as_mut() else {
            return Vec::new();
        };
        let control = key.modifiers.contains(KeyModifiers::CONTROL);
        let edit = match key.code {
            KeyCode::Esc => {
                self.editor = None;
                return Vec::new();
            }
            KeyCode::Enter => {
                let text = editor.text().to_owned();
                let purpose = purpose.clone();
                self.editor = None;
                return self.submit(purpose, text, client);
            }
            KeyCode::Char('u') if control => Edit::KillStart,
            KeyCode::Char('w') if control => Edit::KillWord,
            KeyCode::Char('a') if control => Edit::Home,
            KeyCode::Char('e') if control => Edit::End,
            KeyCode::Char(c) if !control => Edit::Insert(c),
            KeyCode::Backspace => Edit::Backspace,
            KeyCode::Delete => Edit::Delete,
            KeyCode::Left => Edit::Left,
            KeyCode::Right => Edit::Right,
            KeyCode::Home => Edit::Home,
            KeyCode::End => Edit::End,
            _ => return Vec::new(),
        };
        editor.apply(edit);
        Vec::new()
    }

    fn submit(&mut self, purpose: Purpose, text: String, client: &Client) -> Vec<Action> {
        match purpose {
            Purpose::Steer { host, pane, now } => {
                if text.trim().is_empty() {
                    return Vec::new();
                }
                vec![Action::Command(Command::Steer {
                    host,
                    pane,
                    text,
                    now,
                })]
            }
            Purpose::Deny { host, pane, binder } => vec![Action::Command(Command::Answer {
                host,
                pane,
                binder,
                choice: if text.trim().is_empty() {
                    Choice::Deny
                } else {
                    Choice::DenyWithMessage(text)
                },
            })],
            Purpose::Custom => {
                if let Some(chosen) = self.answers.chosen.get_mut(self.answers.current)
                    && !text.trim().is_empty()
                {
                    chosen.push(text);
                }
                Vec::new()
            }
            Purpose::Filter => {
                match parse_filter(&text, client) {
                    Ok(filter) => self.filter = filter,
                    Err(why) => self.status = why,
                }
                Vec::new()
            }
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

/// The filter editor starts with the filter as it is.
fn filter_editor(filter: &Filter, _client: &Client) -> Editor {
    let mut editor = Editor::default();
    for c in show_filter(filter).chars() {
        editor.apply(Edit::Insert(c));
    }
    editor
}

/// The filter as the editor reads it.
pub fn show_filter(filter: &Filter) -> String {
    let mut words = Vec::new();
    if let Some(host) = &filter.host {
        words.push(format!("host={host}"));
    }
    if !filter.states.is_empty() {
        let states: Vec<String> = filter
            .states
            .iter()
            .map(|s| match s {
                StateWanted::Is(state) => state.to_string(),
                StateWanted::Done => "done".to_owned(),
            })
            .collect();
        words.push(format!("state={}", states.join(",")));
    }
    if let Some(agent) = &filter.agent {
        words.push(format!("agent={agent}"));
    }
    words.join(" ")
}

/// Reads `host=NAME state=blocked,done agent=NAME` (any of them; empty: no filter).
pub fn parse_filter(text: &str, client: &Client) -> Result<Filter, String> {
    let mut filter = Filter::default();
    for word in text.split_whitespace() {
        let Some((key, value)) = word.split_once('=') else {
            return Err(format!(
                "filter: {word:?} is not KEY=VALUE (host, state, agent)"
            ));
        };
        match key {
            "host" => {
                if client.fleet().find(value).is_none() {
                    return Err(format!("filter: no host is named {value}"));
                }
                filter.host = Some(value.to_owned());
            }
            "agent" => filter.agent = Some(value.to_owned()),
            "state" => {
                for state in value.split(',') {
                    filter.states.push(StateWanted::parse(state).ok_or_else(|| {
                        format!(
                            "filter: unknown state {state} (idle, working, blocked, unknown, done)"
                        )
                    })?);
                }
            }
            other => return Err(format!("filter: unknown key {other} (host, state, agent)")),
        }
    }
    Ok(filter)
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
    use client_core::client::HostEvent;
    use client_core::fleet::Link;
    use client_core::session::SessionEvent;
    use client_core::testing::{permission_card, row};
    use schema::{
        CardRequest, FleetRow, Question, QuestionCard, QuestionOption, Request, Response,
    };

    fn key(code: KeyCode) -> KeyEvent {
        KeyEvent::new(code, KeyModifiers::NONE)
    }

    fn client() -> Client {
        let mut client = Client::new(["a".to_owned(), "b".to_owned()]);
        for host in [0, 1] {
            client.host_event(host, HostEvent::Link(Link::Connected), 0);
        }
        let mut blocked = row("%2", State::Blocked);
        blocked.since_ms = Some(5);
        client.host_event(
            0,
            HostEvent::Session(SessionEvent::Snapshot {
                rows: vec![row("%1", State::Working), blocked],
                selector: None,
            }),
            0,
        );
        client.host_event(
            1,
            HostEvent::Session(SessionEvent::Snapshot {
                rows: vec![row("%1", State::Idle)],
                selector: None,
            }),
            0,
        );
        client
    }

    fn snapshot(client: &mut Client, host: usize, rows: Vec<FleetRow>) {
        client.host_event(
            host,
            HostEvent::Session(SessionEvent::Snapshot {
                rows,
                selector: None,
            }),
            0,
        );
    }

    fn read_card(client: &mut Client, pane: &str, card: Card) {
        client.host_event(
            0,
            HostEvent::Session(SessionEvent::Answer {
                request: Request::Card(CardRequest { pane: pane.into() }),
                response: Response::Card(card),
            }),
            0,
        );
    }

    /// A key pressed on the screen as drawn now.
    fn press(ui: &mut Ui, client: &Client, code: KeyCode) -> Vec<Action> {
        ui.seen(client);
        ui.key(key(code), client)
    }

    /// A UI that picked its first row, as it does when the first rows arrive.
    fn ui(client: &Client) -> Ui {
        let mut ui = Ui::default();
        ui.pick_first(client);
        ui
    }

    #[test]
    fn the_selection_starts_on_the_first_blocked_pane_and_moves() {
        let client = client();
        let mut ui = ui(&client);
        assert_eq!(ui.selection(), Some((0, "%2".into())));
        press(&mut ui, &client, KeyCode::Down);
        press(&mut ui, &client, KeyCode::Down);
        assert_eq!(ui.selection(), Some((1, "%1".into())));
        press(&mut ui, &client, KeyCode::Down);
        assert_eq!(ui.selection(), Some((1, "%1".into())), "stays at the end");
    }

    #[test]
    fn the_selection_is_a_pane_and_stays_on_it_when_it_leaves_the_list() {
        let mut client = client();
        let mut ui = ui(&client);
        press(&mut ui, &client, KeyCode::Down);
        assert_eq!(ui.selection(), Some((0, "%1".into())));
        // Filtered away: the selection stays on %1, which the panel shows as not in the list,
        // and no pane key acts on it, nor on the blocked pane the list now shows first.
        press(&mut ui, &client, KeyCode::Char('b'));
        assert_eq!(ui.selection(), Some((0, "%1".into())));
        ui.seen(&client);
        assert_eq!(ui.drawn.as_ref().unwrap().absent, Some(Absent::Filtered));
        for code in [
            KeyCode::Char('a'),
            KeyCode::Enter,
            KeyCode::Char('i'),
            KeyCode::Char('s'),
        ] {
            assert!(press(&mut ui, &client, code).is_empty(), "{code:?}");
            assert!(ui.editor.is_none() && ui.confirm.is_none());
        }
        assert!(
            ui.status.contains("not in the list (the filter hides it)"),
            "{}",
            ui.status
        );
        // Selecting again picks a row the list shows.
        press(&mut ui, &client, KeyCode::Down);
        assert_eq!(ui.selection(), Some((0, "%2".into())));
        // Rows re-sorting never move it: %2 stops blocking and %1 blocks.
        press(&mut ui, &client, KeyCode::Esc);
        let mut blocked = row("%1", State::Blocked);
        blocked.since_ms = Some(9);
        snapshot(&mut client, 0, vec![blocked, row("%2", State::Working)]);
        assert_eq!(ui.selection(), Some((0, "%2".into())));
        // It vanishes: the selection stays, gone, and nothing acts.
        snapshot(&mut client, 0, vec![row("%1", State::Blocked)]);
        ui.seen(&client);
        assert_eq!(ui.drawn.as_ref().unwrap().absent, Some(Absent::Gone));
        assert!(press(&mut ui, &client, KeyCode::Char('d')).is_empty());
        assert_eq!(ui.selection(), Some((0, "%2".into())));
        // Its host drops: the row stays, stale, and nothing acts on it.
        press(&mut ui, &client, KeyCode::Up);
        assert_eq!(ui.selection(), Some((1, "%1".into())));
        client.host_event(
            1,
            HostEvent::Link(Link::Down {
                reason: "gone".into(),
                retry_at_ms: None,
            }),
            0,
        );
        ui.seen(&client);
        assert_eq!(ui.drawn.as_ref().unwrap().absent, Some(Absent::HostDown));
        assert!(press(&mut ui, &client, KeyCode::Enter).is_empty());
    }

    #[test]
    fn an_answer_key_opens_the_card_when_none_is_shown_and_never_dispatches() {
        let client = client();
        let mut ui = ui(&client);
        assert_eq!(
            press(&mut ui, &client, KeyCode::Char('a')),
            [Action::Command(Command::Card {
                host: "a".into(),
                pane: "%2".into()
            })]
        );
        assert_eq!(ui.status, "a %2: opening its card; read it, then answer");
        assert!(matches!(
            press(&mut ui, &client, KeyCode::Char('D'))[..],
            [Action::Command(Command::Card { .. })]
        ));
        assert!(ui.editor.is_none(), "no deny message without a card shown");
    }

    #[test]
    fn an_answer_key_quotes_the_card_drawn() {
        let mut client = client();
        let mut ui = ui(&client);
        let mut blocked = row("%2", State::Blocked);
        blocked.since_ms = Some(5);
        blocked.episode_ms = 70;
        blocked.permission_request = Some("req-1".into());
        snapshot(
            &mut client,
            0,
            vec![row("%1", State::Working), blocked.clone()],
        );
        read_card(&mut client, "%2", permission_card("%2", 70));
        let binder = Binder {
            expect_episode_ms: 70,
            expect_permission_request: Some("req-1".into()),
        };
        assert_eq!(
            press(&mut ui, &client, KeyCode::Char('a')),
            [Action::Command(Command::Answer {
                host: "a".into(),
                pane: "%2".into(),
                binder: binder.clone(),
                choice: Choice::Approve
            })]
        );
        // Deny with a message: the editor holds the binder of the card drawn when D was pressed.
        assert!(press(&mut ui, &client, KeyCode::Char('D')).is_empty());
        for c in "not main".chars() {
            ui.key(key(KeyCode::Char(c)), &client);
        }
        assert_eq!(
            ui.key(key(KeyCode::Enter), &client),
            [Action::Command(Command::Answer {
                host: "a".into(),
                pane: "%2".into(),
                binder,
                choice: Choice::DenyWithMessage("not main".into())
            })]
        );
        // A key acts on what was drawn: the model moved on, the screen not redrawn yet.
        ui.seen(&client);
        let mut moved = blocked;
        moved.episode_ms = 80;
        snapshot(&mut client, 0, vec![row("%1", State::Working), moved]);
        let acted = ui.key(key(KeyCode::Char('a')), &client);
        assert!(
            matches!(&acted[..], [Action::Command(Command::Answer { binder, .. })] if binder.expect_episode_ms == 70),
            "the drawn card's binder, which the core then refuses: {acted:?}"
        );
        // Drawn again: the card is marked changed, and the key is refused on the spot.
        assert!(press(&mut ui, &client, KeyCode::Char('a')).is_empty());
        assert_eq!(
            ui.status,
            "a %2: the card changed: read it again (the pane is in another episode; Enter reads it)"
        );
        assert!(press(&mut ui, &client, KeyCode::Char('d')).is_empty());
        assert!(press(&mut ui, &client, KeyCode::Char('D')).is_empty());
        assert!(ui.editor.is_none());
    }

    #[test]
    fn steer_names_its_pane_and_interrupt_asks_twice() {
        let client = client();
        let mut ui = ui(&client);
        // A steer is typed in the editor, whose prompt names the pane, then sent.
        assert!(press(&mut ui, &client, KeyCode::Char('s')).is_empty());
        assert_eq!(
            ui.editor.as_ref().map(|(p, _)| p.clone()),
            Some(Purpose::Steer {
                host: "a".into(),
                pane: "%2".into(),
                now: false
            })
        );
        for c in "go on".chars() {
            ui.key(key(KeyCode::Char(c)), &client);
        }
        assert_eq!(
            ui.key(key(KeyCode::Enter), &client),
            [Action::Command(Command::Steer {
                host: "a".into(),
                pane: "%2".into(),
                text: "go on".into(),
                now: false
            })]
        );
        // Interrupt: the first i names the pane, the second sends it; another key does not.
        assert!(press(&mut ui, &client, KeyCode::Char('i')).is_empty());
        assert_eq!(
            ui.status,
            "interrupt a %2? i again sends it, any other key does not"
        );
        assert_eq!(
            press(&mut ui, &client, KeyCode::Char('i')),
            [Action::Command(Command::Interrupt {
                host: "a".into(),
                pane: "%2".into()
            })]
        );
        assert!(press(&mut ui, &client, KeyCode::Char('i')).is_empty());
        assert!(press(&mut ui, &client, KeyCode::Down).is_empty());
        assert_eq!(ui.status, "a %2: not interrupted");
        assert_eq!(
            ui.selection(),
            Some((0, "%2".into())),
            "the cancelling key did nothing else"
        );
        assert_eq!(press(&mut ui, &client, KeyCode::Char('q')), [Action::Quit]);
    }

    #[test]
    fn a_question_is_answered_with_digits_tab_free_text_and_y() {
        let mut client = client();
        let option = |label: &str| QuestionOption {
            label: label.into(),
            description: String::new(),
        };
        let card = Card::Question(QuestionCard {
            pane: "%2".into(),
            agent: "claude".into(),
            request_id: "q".into(),
            questions: vec![
                Question {
                    question: "Which?".into(),
                    header: "Dirs".into(),
                    options: vec![option("src/"), option("tests/")],
                    multiple: true,
                    custom: false,
                },
                Question {
                    question: "Cache?".into(),
                    header: "Cache".into(),
                    options: vec![option("Yes"), option("No")],
                    multiple: false,
                    custom: true,
                },
            ],
            binder: Binder {
                expect_episode_ms: 1,
                expect_permission_request: None,
            },
        });
        client.host_event(
            0,
            HostEvent::Session(SessionEvent::Answer {
                request: Request::Card(CardRequest { pane: "%2".into() }),
                response: Response::Card(card),
            }),
            0,
        );
        let mut ui = ui(&client);
        ui.seen(&client);
        for code in [
            KeyCode::Char('1'),
            KeyCode::Char('2'),
            KeyCode::Tab,
            KeyCode::Char('1'),
            KeyCode::Char('2'),
        ] {
            assert!(ui.key(key(code), &client).is_empty());
        }
        ui.key(key(KeyCode::Char('c')), &client);
        for c in "later".chars() {
            ui.key(key(KeyCode::Char(c)), &client);
        }
        ui.key(key(KeyCode::Enter), &client);
        // Two answers to a question that takes one: said on the status line, nothing sent.
        assert!(ui.key(key(KeyCode::Char('y')), &client).is_empty());
        assert_eq!(
            ui.status,
            "a %2: question 2 (Cache) takes one choice, not 2"
        );
        ui.key(key(KeyCode::Char('2')), &client);
        let sent = ui.key(key(KeyCode::Char('y')), &client);
        assert_eq!(
            sent,
            [Action::Command(Command::Answer {
                host: "a".into(),
                pane: "%2".into(),
                binder: Binder {
                    expect_episode_ms: 1,
                    expect_permission_request: None,
                },
                choice: Choice::Answer(vec![
                    vec!["src/".into(), "tests/".into()],
                    vec!["later".into()]
                ])
            })]
        );
    }

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

    #[test]
    fn the_filter_is_typed_and_read_back() {
        let client = client();
        let filter = parse_filter("host=b state=blocked,done agent=claude", &client).unwrap();
        assert_eq!(
            show_filter(&filter),
            "host=b state=blocked,done agent=claude"
        );
        assert!(parse_filter("state=sleeping", &client).is_err());
        assert!(parse_filter("host=zzz", &client).is_err());
        assert_eq!(parse_filter("", &client).unwrap(), Filter::default());
        let mut ui = Ui::default();
        ui.key(key(KeyCode::Char('h')), &client);
        assert_eq!(ui.filter.host.as_deref(), Some("a"));
        ui.key(key(KeyCode::Char('h')), &client);
        ui.key(key(KeyCode::Char('h')), &client);
        assert_eq!(ui.filter.host, None);
    }
}
