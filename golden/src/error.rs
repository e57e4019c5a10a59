//! The kit's one error: what is wrong, and the file and line it is in when it is in one. Every
//! loader and check of the kit's formats returns it. A lower layer that does not know the place
//! (a pattern, a step's check) leaves it out, and the layer that read the file adds it
//! ([`Error::at`]), so what a user reads is `file:line: message` however deep the fault was found.

use std::fmt;
use std::path::{Path, PathBuf};

use crate::pattern::SyntaxError;

/// Why some of the kit's data cannot be read or used.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Error {
    /// What the file is to the kit, or what was being done with it, said before its path
    /// (`parsing fixture`, `reading the host profile`).
    pub what: Option<&'static str>,
    /// The file, when the fault is in one (or the name a text was given, when it was not read
    /// from a file).
    pub file: Option<PathBuf>,
    /// The 1-based line, when the fault is in one.
    pub line: Option<usize>,
    /// What is wrong.
    pub message: String,
}

impl Error {
    /// An error whose place the caller adds, if it knows one.
    pub fn new(message: impl Into<String>) -> Error {
        Error {
            what: None,
            file: None,
            line: None,
            message: message.into(),
        }
    }

    /// An error in a file, at no particular line.
    pub fn in_file(file: impl Into<PathBuf>, message: impl Into<String>) -> Error {
        Error {
            file: Some(file.into()),
            ..Error::new(message)
        }
    }

    /// The same error, at a line of a file.
    pub fn at(self, file: &Path, line: usize) -> Error {
        Error {
            file: Some(file.to_owned()),
            line: Some(line),
            ..self
        }
    }

    /// The same error, at a line (of a text, or of the file a caller names later).
    pub fn at_line(self, line: usize) -> Error {
        Error {
            line: Some(line),
            ..self
        }
    }

    /// The same error, saying before its file what the file is or what was being done with it.
    pub fn what(self, what: &'static str) -> Error {
        Error {
            what: Some(what),
            ..self
        }
    }

    /// The same error, its message inside a larger thing: `context: message` (the key of a step
    /// it was found under, the pane of a fixture).
    pub fn context(self, context: impl fmt::Display) -> Error {
        Error {
            message: format!("{context}: {}", self.message),
            ..self
        }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(what) = self.what {
            write!(f, "{what} ")?;
        }
        match (&self.file, self.line) {
            (Some(file), Some(line)) => write!(f, "{}:{line}: ", file.display())?,
            (Some(file), None) => write!(f, "{}: ", file.display())?,
            (None, Some(line)) => write!(f, "line {line}: ")?,
            (None, None) => {}
        }
        f.write_str(&self.message)
    }
}

impl std::error::Error for Error {}

impl From<SyntaxError> for Error {
    fn from(err: SyntaxError) -> Error {
        Error::new(err.to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_error_reads_file_line_message_with_what_it_knows() {
        let err = Error::new("bad");
        assert_eq!(err.to_string(), "bad");
        assert_eq!(err.clone().at_line(3).to_string(), "line 3: bad");
        assert_eq!(
            err.clone()
                .context("`content`")
                .at(Path::new("s/x.ndjson"), 2)
                .to_string(),
            "s/x.ndjson:2: `content`: bad"
        );
        assert_eq!(
            Error::in_file("f.toml", "bad")
                .what("parsing fixture")
                .to_string(),
            "parsing fixture f.toml: bad"
        );
    }

    #[test]
    fn an_error_crosses_threads_and_into_other_errors() {
        fn boxed<E: std::error::Error + Send + Sync + 'static>(
            err: E,
        ) -> Box<dyn std::error::Error + Send + Sync> {
            Box::new(err)
        }
        assert_eq!(boxed(Error::in_file("a", "b")).to_string(), "a: b");
    }
}
