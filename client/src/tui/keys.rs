//! What the keys do, without a terminal: keys become commands for the core, acting on the
//! selected pane as the panel was last drawn ([`Ui::drawn`]); an answer quotes the binder of the
//! card that panel shows ([`super::state`] has the rules).

use client_core::answer::{self, Choice};
use client_core::client::{CARD_CHANGED, Client, Command, EventRef};
use client_core::fleet::StateWanted;
use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use schema::{Binder, Budget, Card, State};

use super::editor::{Edit, Editor};
use super::filter::{filter_editor, parse_filter};
use super::state::{Action, Confirm, Focus, Panel, Purpose, ShownCard, Ui, absent_words};
use client_core::fleet::Filter;

impl Ui {
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
    pub(super) fn window(&self, host: String, pane: String, older: bool) -> Command {
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
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tui::state::Absent;
    use crate::tui::testing::{client, key, press, read_card, snapshot, ui};
    use client_core::client::HostEvent;
    use client_core::fleet::Link;
    use client_core::session::SessionEvent;
    use client_core::testing::{permission_card, row};
    use schema::{CardRequest, Question, QuestionCard, QuestionOption, Request, Response};

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
    fn h_shows_one_host_at_a_time() {
        let client = client();
        let mut ui = Ui::default();
        ui.key(key(KeyCode::Char('h')), &client);
        assert_eq!(ui.filter.host.as_deref(), Some("a"));
        ui.key(key(KeyCode::Char('h')), &client);
        assert_eq!(ui.filter.host.as_deref(), Some("b"));
        ui.key(key(KeyCode::Char('h')), &client);
        assert_eq!(ui.filter.host, None);
    }
}
