//! SIGTERM, SIGINT and SIGHUP as events of the loop, so the client ends the way it always does:
//! connections closed, the terminal restored.

use std::sync::mpsc::Sender;

use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};
use signal_hook::iterator::Signals;

use crate::app::Event;

/// Forwards the three signals to `to` from a thread of their own.
pub fn forward<I: Send + 'static>(to: Sender<Event<I>>) -> std::io::Result<()> {
    let mut signals = Signals::new([SIGTERM, SIGINT, SIGHUP])?;
    std::thread::spawn(move || {
        for signal in signals.forever() {
            if to.send(Event::Signal(signal)).is_err() {
                return;
            }
        }
    });
    Ok(())
}
