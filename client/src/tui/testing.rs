//! What the TUI's unit tests share: a client of two hosts with a blocked pane, and keys pressed
//! on the screen as drawn.

use client_core::client::{Client, HostEvent};
use client_core::fleet::Link;
use client_core::session::SessionEvent;
use client_core::testing::row;
use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use schema::{Card, CardRequest, FleetRow, Request, Response, State};

use super::state::{Action, Ui};

pub fn key(code: KeyCode) -> KeyEvent {
    KeyEvent::new(code, KeyModifiers::NONE)
}

pub fn client() -> Client {
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

pub fn snapshot(client: &mut Client, host: usize, rows: Vec<FleetRow>) {
    client.host_event(
        host,
        HostEvent::Session(SessionEvent::Snapshot {
            rows,
            selector: None,
        }),
        0,
    );
}

pub fn read_card(client: &mut Client, pane: &str, card: Card) {
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
pub fn press(ui: &mut Ui, client: &Client, code: KeyCode) -> Vec<Action> {
    ui.seen(client);
    ui.key(key(code), client)
}

/// A UI that picked its first row, as it does when the first rows arrive.
pub fn ui(client: &Client) -> Ui {
    let mut ui = Ui::default();
    ui.pick_first(client);
    ui
}
