//! The suites a session belongs to: what a host must have for the session to judge it. A run
//! counts and reports each suite on its own, so "passes `wire`" means something for any host.

use std::fmt;
use std::str::FromStr;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// What a session needs of the host under test, beyond its connections.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, JsonSchema,
)]
#[serde(rename_all = "kebab-case")]
pub enum Suite {
    /// Any host: its `serve` over stdio, the fleet it reads and the hook command its agents run.
    Wire,
    /// Files the protocol names: the device store, the runtime dir and what lives there (slots,
    /// the ledger, parked requests and verdicts, the act log).
    HostFiles,
    /// The notification daemon's behaviour: started, stopped and asked through the host
    /// profile's adapter.
    Notify,
    /// corral's own command words, output texts and exit codes: run only for corral.
    CorralCli,
}

impl Suite {
    /// Every suite, in the order reports list them.
    pub const ALL: [Suite; 4] = [
        Suite::Wire,
        Suite::HostFiles,
        Suite::Notify,
        Suite::CorralCli,
    ];

    /// The suite's name, as sessions, reports and `--suite` write it.
    pub fn as_str(self) -> &'static str {
        match self {
            Suite::Wire => "wire",
            Suite::HostFiles => "host-files",
            Suite::Notify => "notify",
            Suite::CorralCli => "corral-cli",
        }
    }
}

impl fmt::Display for Suite {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A name that is no suite.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnknownSuite(pub String);

impl fmt::Display for UnknownSuite {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let names: Vec<&str> = Suite::ALL.iter().map(|suite| suite.as_str()).collect();
        write!(f, "`{}` is no suite ({})", self.0, names.join(", "))
    }
}

impl std::error::Error for UnknownSuite {}

impl FromStr for Suite {
    type Err = UnknownSuite;

    /// Reads a suite's name, as [`Suite::as_str`] writes it.
    fn from_str(name: &str) -> Result<Suite, UnknownSuite> {
        Suite::ALL
            .into_iter()
            .find(|suite| suite.as_str() == name)
            .ok_or_else(|| UnknownSuite(name.to_owned()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_suite_reads_back_what_it_writes() {
        for suite in Suite::ALL {
            assert_eq!(suite.to_string().parse::<Suite>(), Ok(suite));
            assert_eq!(
                serde_json::to_value(suite).unwrap(),
                serde_json::Value::from(suite.as_str())
            );
        }
        assert_eq!(
            "cli".parse::<Suite>().unwrap_err().to_string(),
            "`cli` is no suite (wire, host-files, notify, corral-cli)"
        );
    }
}
