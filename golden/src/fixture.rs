//! Fleet fixtures: the TOML files under `golden/fixtures/` that `corral-sim up` turns into a tmux
//! fleet (on the fake tmux or a scratch real tmux server), documented in
//! `golden/fixtures/README.md`.
//!
//! A fixture is sessions → windows → panes. A pane with an `agent` is an agent pane and gets its
//! `@agent_*` options stamped (docs/protocol.md, "The pane-option contract"); a pane without one
//! is a plain pane the host must skip. `repeat` multiplies a window or a pane so a 1000-pane fleet
//! stays short; names and titles are templates so every expanded pane stays addressable.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use schema::{Detail, Question, State};

use crate::Error;

/// A whole fleet.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Fixture {
    /// What the fleet is for; free text, not used by the simulator.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Set tmux's server option `allow-passthrough on`, so OSC notification sequences written to a
    /// pane's tty reach the terminal (real backend); recorded by the fake.
    #[serde(default)]
    pub passthrough: bool,
    /// Git repositories created under `$CORRAL_SIM_DIR/repos/<name>`, one commit each; `[[repo]]`.
    #[serde(default, rename = "repo", skip_serializing_if = "Vec::is_empty")]
    pub repos: Vec<Repo>,
    /// Attached tmux clients (the fake only: a real scratch server has none); `[[client]]`.
    #[serde(default, rename = "client", skip_serializing_if = "Vec::is_empty")]
    pub clients: Vec<Client>,
    /// The tmux sessions, created in this order; `[[session]]`.
    #[serde(rename = "session")]
    pub sessions: Vec<Session>,
}

/// A git repository made with `git init -b <branch>` and one commit.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Repo {
    /// Name panes use in `repo`, and the directory name under `$CORRAL_SIM_DIR/repos/`.
    pub name: String,
    /// The branch checked out (and the initial branch of `git init -b`).
    pub branch: String,
    /// Linked worktrees of this repository; `[[repo.worktree]]`.
    #[serde(default, rename = "worktree", skip_serializing_if = "Vec::is_empty")]
    pub worktrees: Vec<Worktree>,
}

/// A linked worktree (`git worktree add -b <branch>`), a directory of its own whose `.git` is a
/// file pointing back at the main repository.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Worktree {
    /// Name panes use in `repo`, and the directory name under `$CORRAL_SIM_DIR/repos/`.
    pub name: String,
    /// The new branch the worktree has checked out.
    pub branch: String,
}

/// An attached client, as `list-clients` reports it and `display-message -c` addresses it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Client {
    /// The client name (`#{client_name}`), conventionally its tty such as `/dev/pts/40`.
    pub name: String,
    /// The session the client is attached to.
    pub session: String,
}

/// A tmux session.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Session {
    /// Session name: letters, digits, `-` and `_` (tmux rewrites `.` and `:`).
    pub name: String,
    /// The windows, indexed from 0 in this order after expanding `repeat`; `[[session.window]]`.
    #[serde(rename = "window")]
    pub windows: Vec<Window>,
}

/// A window (or `repeat` identical windows).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Window {
    /// How many copies of this window to create (default 1). Pane name templates tell the copies
    /// apart with `{window}` or `{w}`.
    #[serde(default = "one", skip_serializing_if = "is_one")]
    pub repeat: u32,
    /// The panes, indexed from 0 in this order after expanding `repeat`; `[[session.window.pane]]`.
    #[serde(rename = "pane")]
    pub panes: Vec<Pane>,
}

/// A pane (or `repeat` identical panes). Every option field is optional; an absent one leaves the
/// matching `@agent_*` option unset, as a fresh pane has it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Pane {
    /// Fixture-local name, unique in the fleet after expansion; later steps address the pane by
    /// it. A template: `{session}`, `{window}` (window index), `{pane}` (pane index), `{w}`
    /// (window copy, from 0), `{i}` (pane copy, from 0) and `{n}` (pane ordinal in the fleet, from
    /// 0) are replaced.
    pub name: String,
    /// How many copies of this pane to create in its window (default 1).
    #[serde(default = "one", skip_serializing_if = "is_one")]
    pub repeat: u32,
    /// Pane title (`select-pane -T`); a template like `name`, plus `{name}` for the expanded name.
    /// Use a canary such as `TITLE-CANARY-{name}` so a test can prove a title never leaks. Absent:
    /// tmux's default, the host name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// Working directory: the name of a `repo` or one of its worktrees. Absent: a plain directory
    /// `$CORRAL_SIM_DIR/plain` that is not a repository.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub repo: Option<String>,
    /// A subdirectory of the repository to start in (created when missing).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dir: Option<String>,
    /// `@agent_name`. A pane without it is not an agent pane and gets no `@agent_*` option.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent: Option<String>,
    /// `@agent_state`. To stamp a token outside the closed vocabulary, use `options`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub state: Option<State>,
    /// `@agent_detail`, verbatim (an unknown token is kept).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub detail: Option<Detail>,
    /// `@agent_since`; defaults to "now" when `state` is given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub since: Option<Moment>,
    /// `@agent_turn_at`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub turn_at: Option<Moment>,
    /// `@agent_stamped_at`; defaults to "now" on an agent pane.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stamped_at: Option<Moment>,
    /// `@agent_attention` set to `1` (a finished turn nobody has looked at).
    #[serde(default, skip_serializing_if = "is_false")]
    pub attention: bool,
    /// `@agent_context`, percent of the context window in use (0-100).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(max = 100))]
    pub context: Option<u8>,
    /// `@agent_context_at`; defaults to "now" when `context` is given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub context_at: Option<Moment>,
    /// `@agent_mute_until`; `99999999999999` mutes until cleared.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mute_until: Option<Moment>,
    /// `@agent_session`, the agent's own session id. Defaults to a stable id derived from the
    /// pane name when the pane has a `transcript`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session_id: Option<String>,
    /// `@agent_pending_tool`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pending_tool: Option<String>,
    /// `@agent_pending_call`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pending_call: Option<String>,
    /// `@agent_api_endpoint`, the base URL of the agent's HTTP API.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub api_endpoint: Option<String>,
    /// A hook request parked in the host's runtime dir (`<runtime>/requests/<id>.json`) and named
    /// by `@agent_permission_request`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub permission_request: Option<PermissionRequest>,
    /// A pending question: `@agent_question_request` is stamped with its id and the simulator's
    /// agent API (`corral-sim api serve`) serves it on `GET /question`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub question: Option<QuestionRequest>,
    /// A transcript written for the pane in its agent's store format.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub transcript: Option<TranscriptSpec>,
    /// Any further pane user options, stamped verbatim after the fields above (and overriding
    /// them): `{ "@agent_notified_at" = "1700000000000" }`. Keys start with `@`.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub options: BTreeMap<String, String>,
}

/// A point in time: epoch milliseconds, or a string relative to the moment the fixture is brought
/// up (`"now"`, `"-90s"`, `"+5m"`, `"-1h 30m"`; units as humantime reads them).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum Moment {
    /// Epoch milliseconds, stamped as written.
    Absolute(u64),
    /// `now`, or `-`/`+` followed by a duration, relative to "now".
    Relative(String),
}

/// A parked hook request (the hook lane of a permission card).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PermissionRequest {
    /// Request id; the file name and the value of `@agent_permission_request`. A template like
    /// the pane name.
    pub id: String,
    /// Tool name, as the agent's hook payload gives it (`Bash`, `Edit`, ...).
    pub tool: String,
    /// Tool input, the agent's own JSON object.
    #[serde(default)]
    pub input: Map<String, Value>,
}

/// A pending question asked of the agent's HTTP API.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct QuestionRequest {
    /// Question request id (`@agent_question_request`); a template like the pane name.
    pub id: String,
    /// The questions, as a question card carries them.
    pub questions: Vec<Question>,
}

/// A transcript to write for the pane, at its store's path for `format`: generated records (the
/// corpus, then `events` records of the cycle), or a `sample` of the kit written as it is.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TranscriptSpec {
    /// The store format.
    pub format: TranscriptFormat,
    /// A transcript sample to write byte for byte instead of generated records: a plain file name
    /// (no `/`, no `..`) in the `transcripts/` folder beside the fixture file
    /// (`golden/fixtures/transcripts/claude-2.1-late.jsonl` for `golden/fixtures/agents.toml`),
    /// where the kit keeps files written to reproduce real agents' transcripts version by
    /// version. A sample is the whole file, so it takes no `corpus`, non-zero `events` or
    /// `unknown_every`, nor `pending_call` (loading such a fixture is an error).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sample: Option<String>,
    /// Start with the corpus: a fixed sequence of records covering every event kind the host's
    /// reader makes of the store, with its edge cases (listed record by record in
    /// `golden/fixtures/README.md`); `events` more records follow it.
    #[serde(default, skip_serializing_if = "is_false")]
    pub corpus: bool,
    /// Number of records (JSONL lines) to write (after the corpus, when there is one).
    #[serde(default)]
    pub events: u32,
    /// Every this many records, write one of a record type no reader knows (0 or absent: none).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unknown_every: Option<u32>,
    /// End on a tool call with no result yet (what a pane blocked on a permission looks like).
    #[serde(default, skip_serializing_if = "is_false")]
    pub pending_call: bool,
    /// A sparse region this big (`256G`: bytes, or K, M, G, powers of 1024) before the records:
    /// the file is that much larger, but only its records take disk. A reader that pages from
    /// the end reads as little as for a small file; one that scans from the head reads it all
    /// (`window.cost-proportional-to-page`). The region is zeros ending in a newline, so the
    /// records start a line: read from the head, it is one line no store wrote.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hole: Option<String>,
    /// Stamp `@agent_transcript` with the file's path (default true).
    #[serde(default = "yes", skip_serializing_if = "is_true")]
    pub stamp: bool,
}

/// A transcript store format.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum TranscriptFormat {
    /// Claude Code: `~/.claude/projects/<cwd with / as ->/<session>.jsonl`.
    Claude,
    /// Codex: `~/.codex/sessions/YYYY/MM/DD/rollout-<time>-<session>.jsonl`.
    Codex,
    /// Gemini CLI: `~/.gemini/tmp/<slug of the cwd's last path component>/chats/session-<UTC
    /// time to the minute>-<first 8 characters of the session>.jsonl` (`.json` for a sample
    /// whose name ends in `.json`, a chat as Gemini CLI saved it before 0.39). Only a `sample`:
    /// the simulator generates no Gemini CLI record.
    Gemini,
}

/// Reads a fixture file, and refuses one that says two things at once (a transcript `sample`
/// with records to generate).
pub fn load(path: &Path) -> Result<Fixture, Error> {
    let text = std::fs::read_to_string(path)
        .map_err(|err| Error::in_file(path, err.to_string()).what("reading"))?;
    let fixture: Fixture = toml::from_str(&text)
        .map_err(|err| Error::in_file(path, err.to_string()).what("parsing fixture"))?;
    fixture
        .check()
        .map_err(|err| Error::in_file(path, err.message).what("fixture"))?;
    Ok(fixture)
}

impl Fixture {
    /// What the types cannot say: every pane's transcript is either generated or a sample
    /// ([`TranscriptSpec::check`]). The first problem, naming its pane.
    pub fn check(&self) -> Result<(), Error> {
        let panes = self
            .sessions
            .iter()
            .flat_map(|session| &session.windows)
            .flat_map(|window| &window.panes);
        for pane in panes {
            if let Some(transcript) = &pane.transcript {
                transcript
                    .check()
                    .map_err(|err| err.context(format_args!("pane {}", pane.name)))?;
            }
        }
        Ok(())
    }
}

/// A size: bytes, or a number with K, M or G (powers of 1024; `KiB`, `kb` and a space before the
/// unit read the same).
pub fn parse_size(text: &str) -> Result<u64, Error> {
    let lower = text.trim().to_ascii_lowercase();
    let digits: String = lower.chars().take_while(|c| c.is_ascii_digit()).collect();
    let unit = lower[digits.len()..]
        .trim()
        .trim_end_matches("ib")
        .trim_end_matches('b');
    let n: u64 = digits.parse().map_err(|_| {
        Error::new(format!(
            "size {text:?}: a number of bytes, or one with K, M or G"
        ))
    })?;
    let scale = match unit {
        "" => 1,
        "k" => 1 << 10,
        "m" => 1 << 20,
        "g" => 1 << 30,
        _ => return Err(Error::new(format!("size {text:?}: unit must be K, M or G"))),
    };
    n.checked_mul(scale)
        .ok_or_else(|| Error::new(format!("size {text:?} is too large")))
}

impl TranscriptSpec {
    /// A `sample` is a plain file name, and is written as it is: a field that generates records
    /// beside it is an error saying which. A Gemini CLI transcript is only ever a sample.
    pub fn check(&self) -> Result<(), Error> {
        if self.format == TranscriptFormat::Gemini {
            let generating = self.generating();
            if !generating.is_empty() {
                return Err(Error::new(format!(
                    "a gemini transcript is a sample written byte for byte: the simulator \
                     generates no Gemini CLI record, so it cannot take {} (drop them, and name \
                     the `sample`)",
                    generating.join(", ")
                )));
            }
            if self.sample.is_none() {
                return Err(Error::new(
                    "a gemini transcript needs a `sample`: the simulator generates no \
                     Gemini CLI record",
                ));
            }
        }
        if let Some(hole) = &self.hole {
            parse_size(hole)?;
            if self.sample.is_some() {
                return Err(Error::new(
                    "a transcript sample is written byte for byte: it takes no `hole`",
                ));
            }
        }
        let Some(sample) = &self.sample else {
            return Ok(());
        };
        check_sample_name(sample)?;
        let generating = self.generating();
        if !generating.is_empty() {
            return Err(Error::new(format!(
                "transcript sample {sample:?} is written byte for byte, with no generated record, \
                 so it cannot take {} (drop them, or the sample)",
                generating.join(", ")
            )));
        }
        Ok(())
    }

    /// The fields set that would generate records, by name.
    fn generating(&self) -> Vec<&'static str> {
        [
            ("`corpus`", self.corpus),
            ("`events`", self.events > 0),
            ("`unknown_every`", self.unknown_every.is_some_and(|n| n > 0)),
            ("`pending_call`", self.pending_call),
        ]
        .into_iter()
        .filter_map(|(field, set)| set.then_some(field))
        .collect()
    }
}

/// Refuses a transcript sample name that is not a plain file name in the `transcripts/` folder:
/// empty, or with a `/` or `..` (which could reach outside it).
pub fn check_sample_name(sample: &str) -> Result<(), Error> {
    if sample.is_empty() || sample.contains(['/', '\\', '\0']) || sample.contains("..") {
        return Err(Error::new(format!(
            "transcript sample {sample:?} must be a plain file name in the fixture's \
             `transcripts/` folder (no `/`, no `..`)"
        )));
    }
    Ok(())
}

/// Where a transcript sample is: `<the fixture's folder>/transcripts/<sample>`.
pub fn sample_path(fixture: &Path, sample: &str) -> PathBuf {
    fixture
        .parent()
        .unwrap_or(Path::new("."))
        .join("transcripts")
        .join(sample)
}

fn one() -> u32 {
    1
}

fn yes() -> bool {
    true
}

fn is_one(n: &u32) -> bool {
    *n == 1
}

fn is_true(b: &bool) -> bool {
    *b
}

fn is_false(b: &bool) -> bool {
    !*b
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A one-pane fixture whose transcript is `transcript` (an inline TOML table).
    fn with_transcript(transcript: &str) -> String {
        format!(
            "[[session]]\nname = 's'\n[[session.window]]\n[[session.window.pane]]\n\
             name = 'p'\nagent = 'claude'\ntranscript = {transcript}\n"
        )
    }

    /// What loading that fixture from a file answers.
    fn load_transcript(transcript: &str) -> Result<Fixture, Error> {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f.toml");
        std::fs::write(&path, with_transcript(transcript)).unwrap();
        load(&path)
    }

    #[test]
    fn a_sample_loads_alone_or_with_fields_that_generate_nothing() {
        for transcript in [
            "{ format = 'claude', sample = 'claude-2.1-late.jsonl' }",
            "{ format = 'codex', sample = 'codex-0.104.jsonl', events = 0, unknown_every = 0 }",
            "{ format = 'codex', sample = 'codex-0.104.jsonl', stamp = false }",
        ] {
            let fixture = load_transcript(transcript).unwrap();
            let spec = fixture.sessions[0].windows[0].panes[0]
                .transcript
                .clone()
                .unwrap();
            assert!(spec.sample.is_some(), "{transcript}");
        }
    }

    #[test]
    fn a_sample_with_generated_records_is_a_load_error_saying_why() {
        for (transcript, named) in [
            (
                "{ format = 'claude', sample = 'a.jsonl', corpus = true }",
                "`corpus`",
            ),
            (
                "{ format = 'claude', sample = 'a.jsonl', events = 3 }",
                "`events`",
            ),
            (
                "{ format = 'claude', sample = 'a.jsonl', unknown_every = 4 }",
                "`unknown_every`",
            ),
            (
                "{ format = 'codex', sample = 'a.jsonl', pending_call = true }",
                "`pending_call`",
            ),
        ] {
            let err = load_transcript(transcript).unwrap_err().to_string();
            for part in ["f.toml", "pane p", "\"a.jsonl\"", "byte for byte", named] {
                assert!(err.contains(part), "{transcript}: {err} lacks {part}");
            }
        }
        let err = load_transcript(
            "{ format = 'claude', sample = 'a.jsonl', corpus = true, events = 2, pending_call = true }",
        )
        .unwrap_err()
        .to_string();
        assert!(
            err.contains("cannot take `corpus`, `events`, `pending_call`"),
            "{err}"
        );
    }

    #[test]
    fn a_gemini_transcript_is_a_sample_and_nothing_else() {
        for sample in ["gemini-0.39.jsonl", "gemini-0.38.json"] {
            let fixture =
                load_transcript(&format!("{{ format = 'gemini', sample = {sample:?} }}")).unwrap();
            let spec = fixture.sessions[0].windows[0].panes[0]
                .transcript
                .clone()
                .unwrap();
            assert_eq!(spec.format, TranscriptFormat::Gemini);
        }
        for (transcript, named) in [
            (
                "{ format = 'gemini', sample = 'g.jsonl', corpus = true }",
                "`corpus`",
            ),
            (
                "{ format = 'gemini', sample = 'g.jsonl', events = 3 }",
                "`events`",
            ),
            (
                "{ format = 'gemini', unknown_every = 4 }",
                "`unknown_every`",
            ),
            (
                "{ format = 'gemini', pending_call = true }",
                "`pending_call`",
            ),
        ] {
            let err = load_transcript(transcript).unwrap_err().to_string();
            for part in [
                "f.toml",
                "pane p",
                "gemini",
                "generates no Gemini CLI record",
                named,
            ] {
                assert!(err.contains(part), "{transcript}: {err} lacks {part}");
            }
        }
        let err = load_transcript("{ format = 'gemini' }")
            .unwrap_err()
            .to_string();
        assert!(err.contains("needs a `sample`"), "{err}");
    }

    #[test]
    fn a_hole_is_a_size_and_never_beside_a_sample() {
        let fixture = load_transcript("{ format = 'claude', events = 3, hole = '1024G' }").unwrap();
        let spec = fixture.sessions[0].windows[0].panes[0]
            .transcript
            .clone()
            .unwrap();
        assert_eq!(spec.hole.as_deref().map(parse_size), Some(Ok(1u64 << 40)));
        let err = load_transcript("{ format = 'claude', hole = 'a lot' }")
            .unwrap_err()
            .to_string();
        assert!(err.contains("size \"a lot\""), "{err}");
        let err = load_transcript("{ format = 'claude', sample = 'g.jsonl', hole = '1G' }")
            .unwrap_err()
            .to_string();
        assert!(err.contains("takes no `hole`"), "{err}");
        assert_eq!(parse_size("2 KiB"), Ok(2048));
        assert!(parse_size("1T").is_err());
    }

    #[test]
    fn a_sample_is_a_plain_file_name() {
        for name in [
            "",
            "..",
            "../small.toml",
            "sub/a.jsonl",
            "/etc/passwd",
            "a..jsonl",
        ] {
            let err = load_transcript(&format!("{{ format = 'claude', sample = {name:?} }}"))
                .unwrap_err()
                .to_string();
            assert!(err.contains("plain file name"), "{name:?}: {err}");
        }
        assert_eq!(
            sample_path(Path::new("golden/fixtures/agents.toml"), "codex-0.40.jsonl"),
            Path::new("golden/fixtures/transcripts/codex-0.40.jsonl")
        );
        assert_eq!(
            sample_path(Path::new("agents.toml"), "a.jsonl"),
            Path::new("transcripts/a.jsonl")
        );
    }

    #[test]
    fn every_fixture_of_the_kit_loads() {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures");
        let mut loaded = 0;
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.extension().is_some_and(|ext| ext == "toml") {
                load(&path).unwrap();
                loaded += 1;
            }
        }
        assert!(loaded >= 8, "{loaded} fixtures in {}", dir.display());
    }
}
