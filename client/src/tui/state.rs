//! What the TUI shows and what its keys do, without a terminal: the selection, the focus (the
//! fleet, a transcript, an event), the answers being chosen on a question card, the line editor,
//! and the status line. Keys become commands for the core; changes from the core update the
//! status line and the focus.

use std::collections::HashMap;

use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use schema::{Budget, Card, ErrorCode, EventHeader, State};

use super::editor::{Edit, Editor};
use crate::core::answer::Choice;
use crate::core::client::{Change, Client, Command, EventRef};
use crate::core::fleet::{Filter, StateWanted, human_duration};

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
    /// Why a permission is denied.
    Deny {
        /// Host name.
        host: String,
        /// Pane id.
        pane: String,
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
    /// The selected pane (host index, pane id), kept across reorders.
    pub selected: Option<(usize, String)>,
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
}

impl Ui {
    /// Where the arrows go now.
    pub fn focus(&self) -> Focus {
        self.focus.clone().unwrap_or(Focus::Fleet)
    }

    /// The selected row's host and pane, clamped to what the filter shows.
    pub fn selection(&self, client: &Client) -> Option<(usize, String)> {
        let shown = client.fleet().shown(&self.filter);
        if let Some((host, pane)) = &self.selected
            && shown.iter().any(|(h, r)| h == host && &r.pane == pane)
        {
            return self.selected.clone();
        }
        shown.first().map(|(h, r)| (*h, r.pane.clone()))
    }

    fn selected_index(&self, client: &Client) -> Option<usize> {
        let selection = self.selection(client)?;
        client
            .fleet()
            .shown(&self.filter)
            .iter()
            .position(|(h, r)| *h == selection.0 && r.pane == selection.1)
    }

    fn move_selection(&mut self, client: &Client, by: isize) {
        let shown = client.fleet().shown(&self.filter);
        if shown.is_empty() {
            return;
        }
        let at = self.selected_index(client).unwrap_or(0) as isize;
        let to = (at + by).clamp(0, shown.len() as isize - 1) as usize;
        self.selected = Some((shown[to].0, shown[to].1.pane.clone()));
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

    /// Keys that act on the selected pane.
    fn pane_key(&mut self, key: KeyEvent, client: &Client) -> Vec<Action> {
        let Some((host, pane)) = self.selection(client) else {
            return Vec::new();
        };
        let name = client.fleet().host(host).name.clone();
        let answer = |choice| {
            vec![Action::Command(Command::Answer {
                host: name.clone(),
                pane: pane.clone(),
                choice,
            })]
        };
        let question = match client.card(host, &pane) {
            Some(Card::Question(card)) => Some(card.clone()),
            _ => None,
        };
        match key.code {
            KeyCode::Enter => vec![Action::Command(Command::Card { host: name, pane })],
            KeyCode::Char('a') => answer(Choice::Approve),
            KeyCode::Char('d') => answer(Choice::Deny),
            KeyCode::Char('D') => {
                self.editor = Some((Purpose::Deny { host: name, pane }, Editor::default()));
                Vec::new()
            }
            KeyCode::Char(c @ ('s' | 'S')) => {
                let purpose = Purpose::Steer {
                    host: name,
                    pane,
                    now: c == 'S',
                };
                self.editor = Some((purpose, Editor::default()));
                Vec::new()
            }
            KeyCode::Char('i') => vec![Action::Command(Command::Interrupt { host: name, pane })],
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
            KeyCode::Char('x') if question.is_some() => answer(Choice::Reject),
            KeyCode::Char('y') if question.is_some() => {
                let card = question.expect("checked");
                self.sync_answers(host, &pane, &Card::Question(card));
                answer(Choice::Answer(self.answers.chosen.clone()))
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
            Purpose::Deny { host, pane } => vec![Action::Command(Command::Answer {
                host,
                pane,
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
            Change::Card { host, pane, card } => {
                self.sync_answers(*host, pane, card);
                if let Card::None = card {
                    self.status = format!("{} {pane}: not blocked, nothing to answer", name(*host));
                }
            }
            Change::Receipts { host, receipts } => {
                self.status = format!("{}: {} receipt(s)", name(*host), receipts.len());
            }
            Change::Row(_)
            | Change::Snapshot { .. }
            | Change::Subscribed(_)
            | Change::Edge(..)
            | Change::Window { .. } => {}
        }
        Vec::new()
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
    use crate::core::client::HostEvent;
    use crate::core::session::SessionEvent;
    use crate::core::testing::row;
    use schema::{Binder, CardRequest, Question, QuestionCard, QuestionOption, Request, Response};

    fn key(code: KeyCode) -> KeyEvent {
        KeyEvent::new(code, KeyModifiers::NONE)
    }

    fn client() -> Client {
        let mut client = Client::new(["a".to_owned(), "b".to_owned()]);
        let mut blocked = row("%2", State::Blocked);
        blocked.since_ms = Some(5);
        client.host_event(
            0,
            HostEvent::Session(SessionEvent::Snapshot {
                rows: vec![row("%1", State::Working), blocked],
                selector: None,
            }),
        );
        client.host_event(
            1,
            HostEvent::Session(SessionEvent::Snapshot {
                rows: vec![row("%1", State::Idle)],
                selector: None,
            }),
        );
        client
    }

    #[test]
    fn the_selection_starts_on_the_first_blocked_pane_and_moves() {
        let client = client();
        let mut ui = Ui::default();
        assert_eq!(ui.selection(&client), Some((0, "%2".into())));
        ui.key(key(KeyCode::Down), &client);
        ui.key(key(KeyCode::Down), &client);
        assert_eq!(ui.selection(&client), Some((1, "%1".into())));
        ui.key(key(KeyCode::Down), &client);
        assert_eq!(
            ui.selection(&client),
            Some((1, "%1".into())),
            "stays at the end"
        );
        ui.key(key(KeyCode::Char('b')), &client);
        assert_eq!(
            ui.selection(&client),
            Some((0, "%2".into())),
            "filtered away"
        );
    }

    #[test]
    fn keys_become_commands_for_the_selected_pane() {
        let client = client();
        let mut ui = Ui::default();
        assert_eq!(
            ui.key(key(KeyCode::Char('a')), &client),
            [Action::Command(Command::Answer {
                host: "a".into(),
                pane: "%2".into(),
                choice: Choice::Approve
            })]
        );
        assert_eq!(
            ui.key(key(KeyCode::Enter), &client),
            [Action::Command(Command::Card {
                host: "a".into(),
                pane: "%2".into()
            })]
        );
        // A steer is typed in the editor, then sent.
        assert!(ui.key(key(KeyCode::Char('s')), &client).is_empty());
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
        assert_eq!(ui.key(key(KeyCode::Char('q')), &client), [Action::Quit]);
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
        );
        let mut ui = Ui::default();
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
        let sent = ui.key(key(KeyCode::Char('y')), &client);
        assert_eq!(
            sent,
            [Action::Command(Command::Answer {
                host: "a".into(),
                pane: "%2".into(),
                choice: Choice::Answer(vec![
                    vec!["src/".into(), "tests/".into()],
                    vec!["No".into(), "later".into()]
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
