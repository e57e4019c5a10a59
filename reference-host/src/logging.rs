//! Where logs go: `tracing` to stderr, filtered by `RUST_LOG` (else the command's default,
//! [`crate::default_log_filter`]). A log line stderr cannot take (a full disk, `/dev/full`) is
//! dropped: a log must never stop what it records.
//!
//! An agent's hook (`corral event`) runs on every agent event and almost never logs. Without
//! `RUST_LOG` it gets [`Plain`]: warnings and errors written to stderr as they come, one line
//! each, instead of tracing-subscriber's registry and filter, whose set-up alone is about a tenth
//! of a millisecond of every hook run. With `RUST_LOG` it is logged like every other command.

use std::io::{IsTerminal, Write};
use std::sync::Mutex;

use tracing::field::{Field, Visit};
use tracing::span::{Attributes, Id, Record};
use tracing::subscriber::Interest;
use tracing::{Event, Level, Metadata, Subscriber};

use crate::cli::Command;

/// Sets up logging for `command`, once per process.
pub fn init(command: &Command) {
    let default = crate::default_log_filter(command);
    let rust_log = std::env::var_os("RUST_LOG").is_some();
    if matches!(command, Command::Event(_)) && !rust_log {
        let level = default.parse().unwrap_or(Level::WARN);
        let _ = tracing::subscriber::set_global_default(Plain::new(level, std::io::stderr()));
        return;
    }
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new(default));
    tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(std::io::stderr().is_terminal())
        .log_internal_errors(false)
        .init();
}

/// A subscriber that writes each event at `max` or more severe as one line,
/// `LEVEL target: message key=value ...`; no spans, no timestamps.
pub struct Plain<W> {
    max: Level,
    out: Mutex<W>,
}

impl<W: Write> Plain<W> {
    /// Events at `max` or more severe, to `out`.
    pub fn new(max: Level, out: W) -> Plain<W> {
        Plain {
            max,
            out: Mutex::new(out),
        }
    }
}

impl<W: Write + Send + 'static> Subscriber for Plain<W> {
    fn register_callsite(&self, metadata: &'static Metadata<'static>) -> Interest {
        if self.enabled(metadata) {
            Interest::always()
        } else {
            Interest::never()
        }
    }

    fn enabled(&self, metadata: &Metadata<'_>) -> bool {
        // A more verbose level compares greater.
        *metadata.level() <= self.max
    }

    fn max_level_hint(&self) -> Option<tracing::level_filters::LevelFilter> {
        Some(self.max.into())
    }

    fn new_span(&self, _: &Attributes<'_>) -> Id {
        Id::from_u64(1)
    }

    fn record(&self, _: &Id, _: &Record<'_>) {}

    fn record_follows_from(&self, _: &Id, _: &Id) {}

    fn event(&self, event: &Event<'_>) {
        let metadata = event.metadata();
        let mut line = Line::default();
        event.record(&mut line);
        let text = format!(
            "{:>5} {}: {}{}\n",
            metadata.level(),
            metadata.target(),
            line.message,
            line.fields
        );
        if let Ok(mut out) = self.out.lock() {
            let _ = out.write_all(text.as_bytes());
        }
    }

    fn enter(&self, _: &Id) {}

    fn exit(&self, _: &Id) {}
}

/// One event's message and its other fields, as text.
#[derive(Default)]
struct Line {
    message: String,
    fields: String,
}

impl Visit for Line {
    fn record_str(&mut self, field: &Field, value: &str) {
        if field.name() == "message" {
            self.message.push_str(value);
        } else {
            self.fields.push_str(&format!(" {}={value}", field.name()));
        }
    }

    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        if field.name() == "message" {
            self.message.push_str(&format!("{value:?}"));
        } else {
            self.fields
                .push_str(&format!(" {}={value:?}", field.name()));
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::{Arc, Mutex};

    use super::*;

    /// A writer the test reads back.
    #[derive(Clone, Default)]
    struct Shared(Arc<Mutex<Vec<u8>>>);

    impl Write for Shared {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0.lock().unwrap().extend_from_slice(buf);
            Ok(buf.len())
        }

        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn warnings_are_one_line_each_and_quieter_levels_are_dropped() {
        let out = Shared::default();
        tracing::subscriber::with_default(Plain::new(Level::WARN, out.clone()), || {
            let err = "tmux failed (exit status: 1): no such pane: %4";
            tracing::warn!("corral event claude: {err}");
            tracing::error!(pane = %"%4", code = 3, "not fired");
            tracing::info!("not shown");
            tracing::debug!(x = 1, "nor this");
        });
        let text = String::from_utf8(out.0.lock().unwrap().clone()).unwrap();
        assert_eq!(
            text,
            concat!(
                " WARN reference_host::logging::tests: corral event claude: tmux failed (exit status: 1): no such pane: %4\n",
                "ERROR reference_host::logging::tests: not fired pane=%4 code=3\n",
            )
        );
    }
}
