//! The two tmux backends a fleet runs on, named once for every part of the kit: sessions'
//! `backends`, `corral-sim up --backend`, `cargo xtask conformance --backend`, the bench and the
//! host's tests.

use std::fmt;
use std::str::FromStr;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// A backend the simulator runs a fleet on.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum Backend {
    /// `corral-fake-tmux`: tmux's CLI subset over a state directory.
    Fake,
    /// A scratch real tmux server (`tmux -L <unique> -f /dev/null`).
    Real,
}

impl Backend {
    /// Both backends, in the order a session lists them.
    pub const ALL: [Backend; 2] = [Backend::Fake, Backend::Real];

    /// The backend's name as written in sessions and on the command line.
    pub fn as_str(self) -> &'static str {
        match self {
            Backend::Fake => "fake",
            Backend::Real => "real",
        }
    }
}

impl fmt::Display for Backend {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A name that is no backend.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnknownBackend(pub String);

impl fmt::Display for UnknownBackend {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "`{}` is no backend (fake or real)", self.0)
    }
}

impl std::error::Error for UnknownBackend {}

impl FromStr for Backend {
    type Err = UnknownBackend;

    /// Reads a backend's name, as [`Backend::as_str`] writes it.
    fn from_str(name: &str) -> Result<Backend, UnknownBackend> {
        Backend::ALL
            .into_iter()
            .find(|backend| backend.as_str() == name)
            .ok_or_else(|| UnknownBackend(name.to_owned()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_backend_reads_back_what_it_writes() {
        for backend in Backend::ALL {
            assert_eq!(backend.to_string().parse::<Backend>(), Ok(backend));
            assert_eq!(
                serde_json::to_value(backend).unwrap(),
                serde_json::Value::from(backend.as_str())
            );
        }
        assert_eq!(
            "tmux".parse::<Backend>().unwrap_err().to_string(),
            "`tmux` is no backend (fake or real)"
        );
    }
}
