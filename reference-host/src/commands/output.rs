//! The local commands' output: `say!` for stdout and `tell!` for stderr, in place of `println!`
//! and `eprintln!`, which panic when their stream cannot be written. A closed stdout (`corral
//! receipts | head -1`) ends the command quietly with [`StdoutClosed`], which `main` turns into
//! exit 0 as a shell pipeline expects; any other write error is the command's error. A message on
//! stderr that cannot be written (a full disk) is dropped: it must never stop what it reports.

use std::fmt::Arguments;
use std::io::{ErrorKind, Write};

/// Stdout's reader went away: the command stops writing, and that is not a failure.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StdoutClosed;

impl std::fmt::Display for StdoutClosed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("stdout was closed")
    }
}

impl std::error::Error for StdoutClosed {}

/// Writes `text` to `out`; a broken pipe is [`StdoutClosed`].
pub fn write_to(out: &mut impl Write, text: Arguments<'_>) -> anyhow::Result<()> {
    match out.write_fmt(text).and_then(|()| out.flush()) {
        Ok(()) => Ok(()),
        Err(err) if err.kind() == ErrorKind::BrokenPipe => Err(StdoutClosed.into()),
        Err(err) => Err(anyhow::Error::new(err).context("writing stdout")),
    }
}

/// Writes `text` to stdout.
pub fn stdout(text: Arguments<'_>) -> anyhow::Result<()> {
    write_to(&mut std::io::stdout().lock(), text)
}

/// Writes `text` to stderr, dropping it when stderr cannot take it.
pub fn stderr(text: Arguments<'_>) {
    let _ = std::io::stderr().lock().write_fmt(text);
}

/// `println!` for a command's output: `?`s out of the enclosing function on a write error.
macro_rules! say {
    () => {
        $crate::commands::output::stdout(format_args!("\n"))?
    };
    ($($arg:tt)*) => {
        $crate::commands::output::stdout(format_args!("{}\n", format_args!($($arg)*)))?
    };
}

/// `print!` for a command's output, without the newline.
macro_rules! say_raw {
    ($($arg:tt)*) => {
        $crate::commands::output::stdout(format_args!($($arg)*))?
    };
}

/// `eprintln!` that never panics.
macro_rules! tell {
    ($($arg:tt)*) => {
        $crate::commands::output::stderr(format_args!("{}\n", format_args!($($arg)*)))
    };
}

pub(crate) use {say, say_raw, tell};

#[cfg(test)]
mod tests {
    use super::*;

    /// A writer that fails every write with `kind`.
    struct Failing(ErrorKind);

    impl Write for Failing {
        fn write(&mut self, _: &[u8]) -> std::io::Result<usize> {
            Err(self.0.into())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn a_closed_pipe_is_stdout_closed_and_other_errors_are_errors() {
        let closed = write_to(&mut Failing(ErrorKind::BrokenPipe), format_args!("x")).unwrap_err();
        assert!(closed.downcast_ref::<StdoutClosed>().is_some());
        let full = write_to(&mut Failing(ErrorKind::StorageFull), format_args!("x")).unwrap_err();
        assert!(full.downcast_ref::<StdoutClosed>().is_none());
        assert!(
            format!("{full:#}").starts_with("writing stdout"),
            "{full:#}"
        );
        let mut buffer = Vec::new();
        write_to(&mut buffer, format_args!("a {}", 1)).unwrap();
        assert_eq!(buffer, b"a 1");
    }
}
