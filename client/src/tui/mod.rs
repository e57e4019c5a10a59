//! The terminal UI: the fleet of every host in one list, blocked panes first; a pane's card,
//! transcript or event below it; keys to answer, steer and filter ([`state`]), drawn by
//! `view`. The terminal is never left in raw mode: it is restored when the loop ends, on an
//! error, on a panic (a hook restores it before the panic is printed) and on SIGTERM, SIGINT and
//! SIGHUP (signals are events of the loop).

mod editor;
pub mod filter;
mod keys;
pub mod state;
#[cfg(test)]
mod testing;
mod view;

use std::io::Write;
use std::sync::Once;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use anyhow::Context;
use ratatui::Terminal;
use ratatui::backend::CrosstermBackend;
use ratatui::crossterm::event::{self, Event as TermEvent, KeyEventKind};
use ratatui::crossterm::{cursor, execute, terminal};

use crate::app::{App, Event};
use crate::config::Config;
use client_core::client::{Change, Command};
use state::{Action, Ui};
use stdx::now_ms;

/// Whether the terminal is in raw mode on the alternate screen, which [`restore`] undoes once.
static ENTERED: AtomicBool = AtomicBool::new(false);

/// Puts the terminal back as it was: cooked mode, the main screen, the cursor shown. Safe to
/// call more than once (the panic hook, then the screen's drop): only the first call acts, for
/// leaving the alternate screen again would move the cursor back over what was printed since
/// (a panic's message).
fn restore() {
    if !ENTERED.swap(false, Ordering::SeqCst) {
        return;
    }
    let _ = terminal::disable_raw_mode();
    let _ = execute!(
        std::io::stdout(),
        terminal::LeaveAlternateScreen,
        cursor::Show
    );
}

/// Raw mode and the alternate screen while it lives.
struct Screen;

impl Screen {
    fn enter() -> anyhow::Result<Screen> {
        static HOOK: Once = Once::new();
        HOOK.call_once(|| {
            let previous = std::panic::take_hook();
            std::panic::set_hook(Box::new(move |info| {
                restore();
                previous(info);
            }));
        });
        terminal::enable_raw_mode().context("cannot put the terminal in raw mode")?;
        ENTERED.store(true, Ordering::SeqCst);
        let screen = Screen;
        execute!(std::io::stdout(), terminal::EnterAlternateScreen)
            .context("cannot switch to the alternate screen")?;
        Ok(screen)
    }
}

impl Drop for Screen {
    fn drop(&mut self) {
        restore();
    }
}

/// Runs the TUI until `q`, Ctrl-C or a signal.
pub fn run(config: Config) -> anyhow::Result<()> {
    let mut app: App<TermEvent> = App::start(crate::app::hosts_of(&config), config.notify.clone());
    let ran = crate::signals::forward(app.sender())
        .context("cannot wait for signals")
        .and_then(|()| Screen::enter())
        .and_then(|screen| {
            let ran = run_loop(&mut app);
            drop(screen);
            ran
        });
    app.shutdown();
    ran
}

fn run_loop(app: &mut App<TermEvent>) -> anyhow::Result<()> {
    let mut terminal = Terminal::new(CrosstermBackend::new(std::io::stdout()))
        .context("cannot draw on the terminal")?;
    terminal.clear()?;
    // Keys are read from here on: not before, so no answer the terminal gives the backend (its
    // cursor position) is taken for a key.
    let input = app.sender();
    std::thread::spawn(move || {
        while let Ok(event) = event::read() {
            if input.send(Event::Input(event)).is_err() {
                return;
            }
        }
    });
    let mut ui = Ui {
        keys_read: keys_counted(),
        ..Ui::default()
    };
    loop {
        terminal.draw(|frame| view::draw(frame, &mut ui, app.client(), now_ms()))?;
        // Redrawn at least every second: the wait times move.
        let Some(event) = app.next(Duration::from_secs(1)) else {
            continue;
        };
        let mut actions = Vec::new();
        match event {
            Event::Signal(_) => return Ok(()),
            Event::Input(TermEvent::Key(key)) if key.kind != KeyEventKind::Release => {
                if let Some(read) = &mut ui.keys_read {
                    *read += 1;
                }
                #[cfg(debug_assertions)]
                panic_on_test_key(&key);
                actions = ui.key(key, app.client());
            }
            Event::Input(_) => {}
            Event::Host(host, event) => {
                for change in app.host_event(host, event) {
                    actions.extend(show(&mut ui, app, &change));
                }
            }
        }
        while let Some(action) = actions.pop() {
            let answer = matches!(&action, Action::Command(Command::Answer { .. }));
            match action {
                Action::Quit => return Ok(()),
                Action::Command(command) => match app.command(command) {
                    Ok(changes) => {
                        if answer {
                            ui.answers_sent += 1;
                        }
                        for change in changes {
                            actions.extend(show(&mut ui, app, &change));
                        }
                    }
                    Err(why) => ui.status = why,
                },
            }
        }
    }
}

/// In debug builds only (the tests' builds), with `CORRAL_REMOTE_TEST_KEY_COUNT` set, the status
/// line counts the keys read: a test that presses keys knows when the screen shows what its last
/// key did. Release builds never count.
fn keys_counted() -> Option<u64> {
    (cfg!(debug_assertions) && std::env::var_os("CORRAL_REMOTE_TEST_KEY_COUNT").is_some())
        .then_some(0)
}

/// In debug builds only (the tests' builds), the key `CORRAL_REMOTE_TEST_PANIC_KEY` names
/// panics the loop: how a test shows the terminal is given back after a panic. Release builds
/// have no such key.
#[cfg(debug_assertions)]
fn panic_on_test_key(key: &event::KeyEvent) {
    if let Ok(wanted) = std::env::var("CORRAL_REMOTE_TEST_PANIC_KEY")
        && let event::KeyCode::Char(c) = key.code
        && wanted.chars().eq(std::iter::once(c))
    {
        panic!("the test panic key was pressed");
    }
}

/// Shows one change: the status line, the focus, and the bell.
fn show(ui: &mut Ui, app: &App<TermEvent>, change: &Change) -> Vec<Action> {
    if let Change::Attention { .. } = change
        && app.bell()
    {
        let mut out = std::io::stdout();
        let _ = out.write_all(b"\x07").and_then(|()| out.flush());
    }
    ui.changed(change, app.client())
}
