//! What a wrapper between the runner and a host saw and did, written down: every change its
//! filter made to the host's traffic (a line rewritten, dropped or copied, lines held back, the
//! exit code), and on request the traffic itself (the runner's lines, the host's, the quiet ticks,
//! the exit code). The self-test reads the changes to judge a catch ([`super::caught`]); traffic
//! recorded from a real run replays a session's lines through a filter in the unit tests.
//!
//! A wrapper given `--log DIR` writes one log per host process, `DIR/<pid>.ndjson`, one
//! [`Entry`] a line, its working dir (the case's) first. Recorded traffic lives in
//! `conformance/src/traffic/<case>.ndjson`: each host process's entries after a
//! `{"cwd":"."}` line, the case's work dir written as [`CASE_DIR`]. The self-test records it when
//! [`RECORD_VAR`] names a dir: `CORRAL_RECORD_TRAFFIC=conformance/src/traffic cargo
//! xtask conformance --self-test` rewrites the traffic of every session a mutant's rule lists.

use std::collections::BTreeMap;
use std::io::Write as _;
use std::path::{Path, PathBuf};

use anyhow::Context;
use serde::{Deserialize, Serialize};

use super::mutants::Filter;

/// The environment variable naming the dir the self-test records its sessions' traffic into.
pub const RECORD_VAR: &str = "CORRAL_RECORD_TRAFFIC";

/// What recorded traffic writes for the case's work dir (a path that differs on every run).
pub const CASE_DIR: &str = "/corral-kit/case";

/// One thing a wrapper saw or did.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Entry {
    /// The wrapper's working dir, the case's: first in a log.
    Cwd(String),
    /// A line the runner sent the host (traffic).
    Request(String),
    /// A line the host wrote (traffic).
    Host(String),
    /// Quiet ticks in a row, when the host wrote nothing (traffic).
    Quiet(u32),
    /// The host's exit code (traffic).
    Exit(i32),
    /// A host line the filter passed on as other lines: none (dropped), another (rewritten),
    /// several (copies added, or lines held back before it released).
    Changed { host: String, passed: Vec<String> },
    /// Lines held back earlier, passed on at a quiet tick or at the host's end.
    Released(Vec<String>),
    /// The host's exit code passed on as another.
    ExitChanged { host: i32, passed: i32 },
}

impl Entry {
    /// Whether it is a change the filter made (not traffic).
    pub fn is_change(&self) -> bool {
        matches!(
            self,
            Entry::Changed { .. } | Entry::Released(_) | Entry::ExitChanged { .. }
        )
    }
}

/// Where a [`Watched`] filter writes its entries.
pub trait Sink: Send {
    fn record(&mut self, entry: Entry);
}

impl Sink for Vec<Entry> {
    fn record(&mut self, entry: Entry) {
        self.push(entry);
    }
}

/// A wrapper's log: `<dir>/<pid>.ndjson`, each entry written whole as it happens (a host killed
/// mid-case leaves what its wrapper saw until then).
#[derive(Debug)]
pub struct LogFile(std::fs::File);

impl LogFile {
    /// Opens this process's log in `dir` and writes the working dir first.
    pub fn open(dir: &Path) -> anyhow::Result<LogFile> {
        let path = dir.join(format!("{}.ndjson", std::process::id()));
        let file = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&path)
            .with_context(|| format!("opening the wrapper's log {}", path.display()))?;
        let cwd = std::env::current_dir().context("reading the wrapper's working dir")?;
        let mut log = LogFile(file);
        log.record(Entry::Cwd(cwd.display().to_string()));
        Ok(log)
    }
}

impl Sink for LogFile {
    fn record(&mut self, entry: Entry) {
        let mut line = serde_json::to_string(&entry).expect("entries encode");
        line.push('\n');
        // A log that cannot be written leaves the case without its changes: the self-test then
        // finds the mutant changed nothing there and says so.
        let _ = self.0.write_all(line.as_bytes());
    }
}

/// A filter whose every change (and, with `traffic`, everything it sees) goes to a sink.
pub struct Watched<S> {
    filter: Box<dyn Filter>,
    traffic: bool,
    /// Quiet ticks not written yet: a run of them is one entry.
    quiet: u32,
    pub sink: S,
}

impl<S: Sink> Watched<S> {
    pub fn new(filter: Box<dyn Filter>, traffic: bool, sink: S) -> Watched<S> {
        Watched {
            filter,
            traffic,
            quiet: 0,
            sink,
        }
    }

    /// Traffic: the quiet ticks counted so far, then `entry`.
    fn saw(&mut self, entry: Entry) {
        if !self.traffic {
            return;
        }
        if self.quiet > 0 {
            self.sink
                .record(Entry::Quiet(std::mem::take(&mut self.quiet)));
        }
        self.sink.record(entry);
    }
}

impl<S: Sink> Filter for Watched<S> {
    fn request(&mut self, line: &str) {
        self.saw(Entry::Request(line.to_owned()));
        self.filter.request(line);
    }

    fn line(&mut self, line: &str) -> Vec<String> {
        self.saw(Entry::Host(line.to_owned()));
        let passed = self.filter.line(line);
        if passed.len() != 1 || passed[0] != line {
            self.sink.record(Entry::Changed {
                host: line.to_owned(),
                passed: passed.clone(),
            });
        }
        passed
    }

    fn idle(&mut self) -> Vec<String> {
        if self.traffic {
            self.quiet += 1;
        }
        let released = self.filter.idle();
        if !released.is_empty() {
            self.sink.record(Entry::Released(released.clone()));
        }
        released
    }

    fn exit(&mut self, code: i32) -> i32 {
        self.saw(Entry::Exit(code));
        let passed = self.filter.exit(code);
        if passed != code {
            self.sink.record(Entry::ExitChanged { host: code, passed });
        }
        passed
    }
}

/// Every log a run's wrappers wrote in `dir`, by working dir (the case's), one list of entries
/// per host process.
pub fn read_logs(dir: &Path) -> anyhow::Result<BTreeMap<PathBuf, Vec<Vec<Entry>>>> {
    let mut logs: BTreeMap<PathBuf, Vec<Vec<Entry>>> = BTreeMap::new();
    let listing = std::fs::read_dir(dir).with_context(|| format!("listing {}", dir.display()))?;
    for file in listing {
        let path = file?.path();
        let text = std::fs::read_to_string(&path)
            .with_context(|| format!("reading the wrapper's log {}", path.display()))?;
        let mut entries = parse(&text).with_context(|| format!("in {}", path.display()))?;
        let Some(Entry::Cwd(cwd)) = (!entries.is_empty()).then(|| entries.remove(0)) else {
            anyhow::bail!("{} does not start with its working dir", path.display());
        };
        logs.entry(PathBuf::from(cwd)).or_default().push(entries);
    }
    Ok(logs)
}

/// Entries, one JSON object a line.
fn parse(text: &str) -> anyhow::Result<Vec<Entry>> {
    text.lines()
        .enumerate()
        .map(|(i, line)| {
            serde_json::from_str(line).with_context(|| format!("line {}: {line}", i + 1))
        })
        .collect()
}

/// One case's traffic as recorded: each host process's traffic entries, the case's dir
/// (`case_dir`) written as [`CASE_DIR`], each process after a `{"cwd":"."}` line.
pub fn recorded(case_dir: &Path, processes: &[Vec<Entry>]) -> String {
    let dir = case_dir.display().to_string();
    let scrub = |text: &str| text.replace(&dir, CASE_DIR);
    let mut out = String::new();
    for entries in processes {
        let traffic = entries
            .iter()
            .filter(|entry| !entry.is_change())
            .map(|entry| match entry {
                Entry::Request(line) => Entry::Request(scrub(line)),
                Entry::Host(line) => Entry::Host(scrub(line)),
                other => other.clone(),
            });
        for entry in std::iter::once(Entry::Cwd(".".into())).chain(traffic) {
            out.push_str(&serde_json::to_string(&entry).expect("entries encode"));
            out.push('\n');
        }
    }
    out
}

/// Recorded traffic read back: each host process's entries.
#[cfg(test)]
pub fn processes(text: &str) -> anyhow::Result<Vec<Vec<Entry>>> {
    let mut processes: Vec<Vec<Entry>> = Vec::new();
    for entry in parse(text)? {
        match entry {
            Entry::Cwd(_) => processes.push(Vec::new()),
            other => processes
                .last_mut()
                .context("recorded traffic starts with a process's `cwd` line")?
                .push(other),
        }
    }
    Ok(processes)
}

/// Plays one host process's recorded traffic through `filter` as the wrapper would (the
/// runner's lines, the host's, the quiet ticks, the exit code); returns what it changed.
#[cfg(test)]
pub fn replay(filter: Box<dyn Filter>, traffic: &[Entry]) -> Vec<Entry> {
    let mut watched = Watched::new(filter, false, Vec::new());
    for entry in traffic {
        match entry {
            Entry::Request(line) => watched.request(line),
            Entry::Host(line) => {
                watched.line(line);
            }
            Entry::Quiet(ticks) => {
                for _ in 0..*ticks {
                    watched.idle();
                }
            }
            Entry::Exit(code) => {
                watched.exit(*code);
            }
            _ => {}
        }
    }
    watched.sink
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mutants::{Lines, Transparent};

    #[test]
    fn a_watched_filter_writes_down_its_changes_and_on_request_its_traffic() {
        let mut watched = Watched::new(Box::new(Lines(|l| l.replace('a', "b"))), true, Vec::new());
        watched.request("ask");
        assert_eq!(watched.line("xyz"), ["xyz"]);
        watched.idle();
        watched.idle();
        assert_eq!(watched.line("a"), ["b"]);
        assert_eq!(watched.exit(3), 3);
        assert_eq!(
            watched.sink,
            [
                Entry::Request("ask".into()),
                Entry::Host("xyz".into()),
                Entry::Quiet(2),
                Entry::Host("a".into()),
                Entry::Changed {
                    host: "a".into(),
                    passed: vec!["b".into()]
                },
                Entry::Exit(3),
            ]
        );
        let mut quiet = Watched::new(Box::new(Transparent), false, Vec::new());
        quiet.request("ask");
        quiet.line("a");
        quiet.idle();
        quiet.exit(0);
        assert!(quiet.sink.is_empty(), "{:?}", quiet.sink);
    }

    #[test]
    fn recorded_traffic_reads_back_per_process_with_the_case_dir_scrubbed() {
        let dir = Path::new("/dev/shm/corral-kit-x/007");
        let first = vec![
            Entry::Request("{\"id\":\"a\"}".into()),
            Entry::Host("{\"cwd\":\"/dev/shm/corral-kit-x/007/sim/api\"}".into()),
            Entry::Changed {
                host: "h".into(),
                passed: vec![],
            },
            Entry::Exit(0),
        ];
        let second = vec![Entry::Quiet(4), Entry::Exit(2)];
        let text = recorded(dir, &[first, second.clone()]);
        let back = processes(&text).unwrap();
        assert_eq!(
            back,
            [
                vec![
                    Entry::Request("{\"id\":\"a\"}".into()),
                    Entry::Host("{\"cwd\":\"/corral-kit/case/sim/api\"}".into()),
                    Entry::Exit(0),
                ],
                second,
            ]
        );
        assert!(processes("{\"exit\":0}\n").is_err());
    }

    #[test]
    fn a_log_dir_reads_back_by_working_dir() {
        let dir = tempfile::tempdir().unwrap();
        let mut log = LogFile::open(dir.path()).unwrap();
        log.record(Entry::ExitChanged { host: 2, passed: 1 });
        drop(log);
        std::fs::write(
            dir.path().join("1.ndjson"),
            "{\"cwd\":\"/a\"}\n{\"exit\":0}\n",
        )
        .unwrap();
        let logs = read_logs(dir.path()).unwrap();
        let here = std::env::current_dir().unwrap();
        assert_eq!(
            logs[&here],
            [vec![Entry::ExitChanged { host: 2, passed: 1 }]]
        );
        assert_eq!(logs[Path::new("/a")], [vec![Entry::Exit(0)]]);
        std::fs::write(dir.path().join("2.ndjson"), "{\"exit\":0}\n").unwrap();
        let err = read_logs(dir.path()).unwrap_err();
        assert!(format!("{err:#}").contains("working dir"), "{err:#}");
    }
}
