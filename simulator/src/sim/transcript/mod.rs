//! Agent transcripts in the stores' own JSONL shapes, and the file operations that invalidate a
//! reader's cursor.
//!
//! Claude Code (`~/.claude/projects/<cwd, non-alphanumerics as ->/<session>.jsonl`): records with
//! `type` `user` / `assistant` / `system` / `summary` / `file-history-snapshot`, `message.content`
//! blocks `text` / `thinking` / `redacted_thinking` / `tool_use` / `tool_result` / `image`, and
//! `uuid`, `parentUuid`, `timestamp`, `sessionId`, `cwd`, `version`, `gitBranch`. Codex
//! (`~/.codex/sessions/YYYY/MM/DD/rollout-<time>-<session>.jsonl`): `session_meta`,
//! `turn_context`, `response_item`, `event_msg` and `compacted`, each `{timestamp, type,
//! payload}`. Both can carry record types no reader knows. Content is deterministic: the same
//! session id, working directory, branch, start time and record index always give the same bytes.
//!
//! Modules: `cycle` (the records of `write` and `grow`), `corpus` (every event kind of both
//! stores, in a fixed order), `big` (benchmark files, streamed), `resume` (continuing a file),
//! `files` (rewrite, truncate, replace, rotate). A transcript sample of the kit is no generated
//! record: [`write_sample`] copies it.

mod big;
mod corpus;
mod cycle;
mod files;
mod resume;

pub use files::{regenerated, replace, rewrite, rotate, truncate};

use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::time::{Duration, UNIX_EPOCH};

use anyhow::Context;
use golden::fixture::TranscriptFormat;
use serde_json::{Value, json};

/// What a new transcript holds.
#[derive(Debug, Clone, Default)]
pub struct Recipe {
    /// Start with the `corpus` of the store.
    pub corpus: bool,
    /// Records of the `cycle` after it.
    pub events: u64,
    /// One record of a type no reader knows every this many records of the cycle (0: none).
    pub unknown_every: u32,
    /// End on a tool call with no result.
    pub pending_call: bool,
    /// A sparse region of this many bytes before the records (0: none).
    pub hole: u64,
}

/// Writes a new transcript at `path` (replacing a file there) whose last record is one second
/// before `now_ms`.
pub fn write(
    path: &Path,
    format: TranscriptFormat,
    session: &str,
    (cwd, branch): (&str, &str),
    now_ms: u64,
    recipe: &Recipe,
) -> anyhow::Result<()> {
    generates(format)?;
    let corpus = match (recipe.corpus, format) {
        (false, _) => 0,
        (true, TranscriptFormat::Claude) => corpus::CLAUDE_RECORDS as u64,
        (true, TranscriptFormat::Codex) => corpus::CODEX_RECORDS as u64,
        (true, TranscriptFormat::Gemini) => return Err(no_gemini_records()),
    };
    let start = now_ms.saturating_sub((corpus + recipe.events) * 1000);
    remove(path)?;
    if recipe.hole > 0 {
        write_hole(path, recipe.hole)?;
    }
    let mut generator = Generator::new(format, session, cwd, branch, start);
    if recipe.corpus {
        generator.append_corpus(path)?;
    }
    generator.append(
        path,
        recipe.events,
        recipe.unknown_every,
        recipe.pending_call,
    )
}

/// Makes `path` a sparse file of `bytes` zeros ending in a newline (its directory made): no
/// block is written but the last, so a file of hundreds of gigabytes takes a few kilobytes of
/// disk.
fn write_hole(path: &Path, bytes: u64) -> anyhow::Result<()> {
    use std::io::{Seek, SeekFrom};
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).with_context(|| format!("making {}", dir.display()))?;
    }
    let mut file =
        std::fs::File::create(path).with_context(|| format!("creating {}", path.display()))?;
    file.seek(SeekFrom::Start(bytes - 1))
        .and_then(|_| file.write_all(b"\n"))
        .with_context(|| format!("writing a {bytes}-byte hole into {}", path.display()))
}

/// Refuses a store whose records the simulator does not generate: Gemini CLI's, whose
/// transcripts are only ever samples of the kit.
pub fn generates(format: TranscriptFormat) -> anyhow::Result<()> {
    match format {
        TranscriptFormat::Gemini => Err(no_gemini_records()),
        TranscriptFormat::Claude | TranscriptFormat::Codex => Ok(()),
    }
}

/// Why no Gemini CLI record is generated.
fn no_gemini_records() -> anyhow::Error {
    anyhow::anyhow!(
        "corral-sim generates no Gemini CLI transcript record: a gemini transcript is a sample \
         written as it is (`transcript write --sample`, or a fixture's `sample`)"
    )
}

/// Writes a transcript sample of the kit at `path` as it is (replacing a file there, its
/// directory made): no record is generated, so the file is the agent's own shape to the byte.
/// A missing sample is an error naming its path.
pub fn write_sample(path: &Path, sample: &Path) -> anyhow::Result<()> {
    let bytes = match std::fs::read(sample) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            anyhow::bail!("the transcript sample {} does not exist", sample.display())
        }
        read => read.with_context(|| format!("reading {}", sample.display()))?,
    };
    remove(path)?;
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    }
    std::fs::write(path, bytes).with_context(|| format!("writing {}", path.display()))
}

/// Removes the file at `path`, if there is one, so what is written there is a new file.
fn remove(path: &Path) -> anyhow::Result<()> {
    match std::fs::remove_file(path) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
            Err(e).with_context(|| format!("removing {}", path.display()))
        }
        _ => Ok(()),
    }
}

/// The generator's position in a transcript.
#[derive(Debug, Clone)]
pub struct Generator {
    /// Store format.
    pub format: TranscriptFormat,
    /// Agent session id.
    pub session_id: String,
    /// Working directory recorded in the records.
    pub cwd: String,
    /// Branch recorded in the records.
    pub branch: String,
    /// Index of the next record (the line count so far).
    pub index: u64,
    /// Claude: uuid of the last record, the next one's `parentUuid`.
    pub parent: Option<String>,
    /// Timestamp of record 0, epoch ms; record i is one second later than record i-1.
    pub start_ms: u64,
}

/// Where a store keeps a session's transcript under `home`. `sample` is the name of the kit's
/// sample written there, if any: Gemini CLI's file ends in `.json` for a sample that does (a chat
/// as Gemini CLI saved it before 0.39), else `.jsonl`.
pub fn store_path(
    home: &Path,
    format: TranscriptFormat,
    cwd: &str,
    session: &str,
    now_ms: u64,
    sample: Option<&str>,
) -> PathBuf {
    match format {
        TranscriptFormat::Claude => {
            let dir: String = cwd
                .chars()
                .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
                .collect();
            home.join(".claude/projects")
                .join(dir)
                .join(format!("{session}.jsonl"))
        }
        TranscriptFormat::Codex => {
            let stamp = rfc3339(now_ms);
            let (date, time) = (&stamp[0..10], &stamp[11..19]);
            home.join(".codex/sessions")
                .join(&date[0..4])
                .join(&date[5..7])
                .join(&date[8..10])
                .join(format!(
                    "rollout-{date}T{}-{session}.jsonl",
                    time.replace(':', "-")
                ))
        }
        TranscriptFormat::Gemini => {
            // `new Date().toISOString().slice(0, 16)` with `:` as `-`: UTC to the minute.
            let minute = rfc3339(now_ms)[0..16].replace(':', "-");
            let short: String = session.chars().take(8).collect();
            let extension = match sample {
                Some(sample) if sample.ends_with(".json") => "json",
                _ => "jsonl",
            };
            home.join(".gemini/tmp")
                .join(gemini_slug(cwd))
                .join("chats")
                .join(format!("session-{minute}-{short}.{extension}"))
        }
    }
}

/// Gemini CLI's name for a project's folder under `~/.gemini/tmp/`: the last component of its
/// path, lower-cased, every run of characters other than `a-z` and `0-9` one `-`, none at
/// either end (`project` when nothing is left); gemini-cli `projectRegistry.ts`, without the
/// `-1`, `-2` it adds when another project holds the name.
fn gemini_slug(cwd: &str) -> String {
    let base = Path::new(cwd)
        .file_name()
        .map(|name| name.to_string_lossy().to_lowercase())
        .unwrap_or_default();
    let mut slug = String::new();
    for c in base.chars() {
        if c.is_ascii_lowercase() || c.is_ascii_digit() {
            slug.push(c);
        } else if !slug.is_empty() && !slug.ends_with('-') {
            slug.push('-');
        }
    }
    while slug.ends_with('-') {
        slug.pop();
    }
    if slug.is_empty() {
        "project".to_owned()
    } else {
        slug
    }
}

fn rfc3339(ms: u64) -> String {
    humantime::format_rfc3339_millis(UNIX_EPOCH + Duration::from_millis(ms)).to_string()
}

fn hash(parts: &[&str], n: u64) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325 ^ n.wrapping_mul(0x9e37_79b9_7f4a_7c15);
    for part in parts {
        for b in part.bytes().chain([0xff]) {
            h ^= u64::from(b);
            h = h.wrapping_mul(0x0100_0000_01b3);
        }
    }
    h
}

fn uuid(parts: &[&str], n: u64) -> String {
    let hex = format!("{:016x}{:016x}", hash(parts, n), hash(parts, n ^ 0x5555));
    format!(
        "{}-{}-4{}-a{}-{}",
        &hex[0..8],
        &hex[8..12],
        &hex[13..16],
        &hex[17..20],
        &hex[20..32]
    )
}

const WORDS: &[&str] = &[
    "the", "build", "fails", "on", "a", "missing", "import", "so", "I", "will", "check", "tests",
    "and", "fix", "module", "parser", "returns", "error", "when", "input", "is", "empty", "now",
];

/// `words` words picked by `seed`, then a full stop, then filler up to `pad` bytes.
fn sentence(seed: u64, words: usize, pad: usize) -> String {
    let mut out = String::new();
    let mut h = seed;
    for i in 0..words {
        h = h
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        if i > 0 {
            out.push(' ');
        }
        out.push_str(WORDS[(h >> 33) as usize % WORDS.len()]);
    }
    out.push('.');
    while out.len() < pad {
        out.push_str(" lorem ipsum dolor sit amet");
    }
    out
}

impl Generator {
    /// A generator at the start of a new transcript.
    pub fn new(
        format: TranscriptFormat,
        session_id: &str,
        cwd: &str,
        branch: &str,
        start_ms: u64,
    ) -> Self {
        Generator {
            format,
            session_id: session_id.to_owned(),
            cwd: cwd.to_owned(),
            branch: branch.to_owned(),
            index: 0,
            parent: None,
            start_ms,
        }
    }

    /// The timestamp of the next record.
    fn ts(&self) -> String {
        rfc3339(self.start_ms + self.index * 1000)
    }

    /// The fields every Claude Code conversation record starts with.
    fn claude_base(&self, kind: &str) -> Value {
        json!({
            "parentUuid": self.parent,
            "isSidechain": false,
            "userType": "external",
            "cwd": self.cwd,
            "sessionId": self.session_id,
            "version": "2.0.14",
            "gitBranch": self.branch,
            "type": kind,
        })
    }

    /// A Claude Code assistant record holding `content` blocks, with usage figures, and a stop
    /// reason when the line ends the response.
    fn claude_assistant(&self, content: Vec<Value>, stop_reason: Option<&str>) -> Value {
        let n = self.index;
        let mut record = self.claude_base("assistant");
        record["message"] = json!({
            "id": format!("msg_{:016x}", hash(&[&self.session_id, "msg"], n)),
            "type": "message",
            "role": "assistant",
            "model": "claude-sonnet-4-5-20250929",
            "content": content,
            "stop_reason": stop_reason,
            "stop_sequence": null,
            "usage": {
                "input_tokens": 4 + n % 7,
                "cache_creation_input_tokens": 1200 + n * 13 % 500,
                "cache_read_input_tokens": 14000 + n * 97,
                "output_tokens": 60 + n % 90,
                "service_tier": "standard",
            },
        });
        record["requestId"] = json!(format!("req_{:016x}", hash(&[&self.session_id, "req"], n)));
        record
    }

    /// A part of a streamed Claude Code message that began at record `first`: the message's id and
    /// request id, no stop reason, and the message's usage with `output` as its output count (a
    /// placeholder on every part but the last, `None` for the final count).
    fn claude_part(&self, content: Vec<Value>, first: u64, output: Option<u64>) -> Value {
        let mut record = self.claude_assistant(content, None);
        record["message"]["id"] = json!(format!(
            "msg_{:016x}",
            hash(&[&self.session_id, "msg"], first)
        ));
        record["requestId"] = json!(format!(
            "req_{:016x}",
            hash(&[&self.session_id, "req"], first)
        ));
        let usage = &mut record["message"]["usage"];
        usage["input_tokens"] = json!(4 + first % 7);
        usage["cache_creation_input_tokens"] = json!(1200 + first * 13 % 500);
        usage["cache_read_input_tokens"] = json!(14000 + first * 97);
        if let Some(output) = output {
            usage["output_tokens"] = json!(output);
        }
        record
    }

    /// Gives a Claude Code conversation record (one with `parentUuid`) its `uuid` and
    /// `timestamp`, and makes it the next record's parent.
    fn chain(&mut self, record: &mut Value) {
        if record.get("parentUuid").is_some() {
            let id = uuid(&[&self.session_id], self.index);
            record["uuid"] = json!(id);
            record["timestamp"] = json!(self.ts());
            self.parent = Some(id);
        }
    }

    /// A Codex rollout line.
    fn codex_item(&self, kind: &str, payload: Value) -> Value {
        json!({ "timestamp": self.ts(), "type": kind, "payload": payload })
    }

    /// The payload of Codex's first record.
    fn codex_session_meta(&self) -> Value {
        json!({
            "id": self.session_id,
            "timestamp": self.ts(),
            "cwd": self.cwd,
            "originator": "codex_cli_rs",
            "cli_version": "0.46.0",
            "instructions": null,
            "source": "cli",
            "model_provider": "openai",
            "git": {
                "commit_hash": format!("{:016x}", hash(&[&self.session_id], 7)),
                "branch": self.branch,
                "repository_url": null,
            },
        })
    }

    /// The payload of Codex's `turn_context` (the model a window's session metadata names).
    fn codex_turn_context(&self) -> Value {
        json!({
            "cwd": self.cwd,
            "approval_policy": "on-request",
            "sandbox_policy": { "mode": "workspace-write", "network_access": false },
            "model": "gpt-5-codex",
            "effort": "medium",
            "summary": "auto",
        })
    }

    /// Appends `events` records of the cycle to `path` (creating it and its directory); the last
    /// is a dangling tool call when `pending`.
    pub fn append(
        &mut self,
        path: &Path,
        events: u64,
        unknown_every: u32,
        pending: bool,
    ) -> anyhow::Result<()> {
        generates(self.format)?;
        let mut out = open_append(path)?;
        for i in 0..events {
            let record = self.next(unknown_every, pending && i + 1 == events)?;
            write_record(&mut out, &record)?;
        }
        out.flush()?;
        Ok(())
    }

    /// Appends the corpus of the generator's store (`corpus`) to `path`.
    pub fn append_corpus(&mut self, path: &Path) -> anyhow::Result<()> {
        let records = self.corpus()?;
        let mut out = open_append(path)?;
        for record in records {
            write_record(&mut out, &record)?;
        }
        out.flush()?;
        Ok(())
    }
}

/// `path` opened for appending (created with its directory), buffered.
fn open_append(path: &Path) -> anyhow::Result<BufWriter<std::fs::File>> {
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    }
    let file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .with_context(|| format!("opening {}", path.display()))?;
    Ok(BufWriter::with_capacity(1 << 20, file))
}

fn write_record(out: &mut impl Write, record: &Value) -> anyhow::Result<()> {
    serde_json::to_writer(&mut *out, record)?;
    out.write_all(b"\n")?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A hole makes the file a terabyte larger and takes no disk: the records follow it, the
    /// first of them on a line of its own.
    #[test]
    fn a_hole_is_sparse_and_the_records_follow_it_on_their_own_lines() {
        use std::io::{Read, Seek, SeekFrom};
        use std::os::unix::fs::MetadataExt;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("deep/t.jsonl");
        let hole = 1u64 << 40;
        let recipe = Recipe {
            events: 3,
            hole,
            ..Recipe::default()
        };
        write(
            &path,
            TranscriptFormat::Claude,
            "s",
            ("/w", "main"),
            1_700_000_000_000,
            &recipe,
        )
        .unwrap();
        let meta = std::fs::metadata(&path).unwrap();
        assert!(meta.len() > hole, "{}", meta.len());
        assert!(meta.blocks() * 512 < 1 << 20, "{} blocks", meta.blocks());
        let mut file = std::fs::File::open(&path).unwrap();
        file.seek(SeekFrom::Start(hole - 1)).unwrap();
        let mut tail = String::new();
        file.read_to_string(&mut tail).unwrap();
        let records: Vec<Value> = tail[1..]
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        assert!(tail.starts_with('\n'));
        assert_eq!(records.len(), 3);
    }

    fn lines(path: &Path) -> Vec<Value> {
        std::fs::read_to_string(path)
            .unwrap()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect()
    }

    #[test]
    fn claude_records_chain_and_classify() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.jsonl");
        let mut g = Generator::new(
            TranscriptFormat::Claude,
            "sess",
            "/r",
            "main",
            1_700_000_000_000,
        );
        g.append(&path, 20, 5, true).unwrap();
        let lines = lines(&path);
        assert_eq!(lines.len(), 20);
        assert_eq!(lines[0]["type"], "user");
        assert_eq!(lines[0]["parentUuid"], Value::Null);
        assert_eq!(lines[1]["parentUuid"], lines[0]["uuid"]);
        assert!(lines.iter().any(|l| l["type"] == "x-corral-future-record"));
        assert!(lines.iter().any(|l| l["type"] == "file-history-snapshot"));
        assert_eq!(lines[19]["message"]["content"][0]["type"], "tool_use");
        let mut resumed = Generator::resume(&path).unwrap();
        assert_eq!(resumed.index, 20);
        assert_eq!(resumed.parent.as_deref(), lines[19]["uuid"].as_str());
        let next = resumed.next(5, false).unwrap();
        assert_eq!(next["parentUuid"], lines[19]["uuid"]);
    }

    #[test]
    fn codex_starts_with_session_meta() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("r.jsonl");
        let mut g = Generator::new(TranscriptFormat::Codex, "sess", "/r", "dev", 0);
        g.append(&path, 12, 5, false).unwrap();
        let lines = lines(&path);
        assert_eq!(lines[0]["type"], "session_meta");
        assert_eq!(lines[0]["payload"]["git"]["branch"], "dev");
        assert_eq!(lines[1]["type"], "turn_context");
        assert!(
            lines
                .iter()
                .any(|l| l["payload"]["type"] == "function_call")
        );
        assert!(lines.iter().any(|l| l["type"] == "x_corral_future_item"));
        assert_eq!(
            Generator::resume(&path).unwrap().format,
            TranscriptFormat::Codex
        );
    }

    /// Golden sessions state previews and sizes of the cycle's records, so its bytes must not
    /// drift: these are the hashes of what it wrote when the generator was split into modules.
    #[test]
    fn the_cycle_keeps_its_bytes() {
        let dir = tempfile::tempdir().unwrap();
        for (format, want) in [
            (TranscriptFormat::Claude, 15_912_228_190_793_666_402_u64),
            (TranscriptFormat::Codex, 6_171_520_786_199_000_084_u64),
        ] {
            let path = dir.path().join(format!("{format:?}.jsonl"));
            Generator::new(format, "sess", "/r", "main", 1_700_000_000_000)
                .append(&path, 50, 9, true)
                .unwrap();
            let text = std::fs::read_to_string(&path).unwrap();
            assert_eq!(hash(&[&text], 0), want, "{format:?}");
        }
    }

    #[test]
    fn store_paths_look_like_the_stores() {
        let home = Path::new("/h");
        assert_eq!(
            store_path(
                home,
                TranscriptFormat::Claude,
                "/work/my.repo",
                "abc",
                0,
                None
            ),
            Path::new("/h/.claude/projects/-work-my-repo/abc.jsonl")
        );
        assert_eq!(
            store_path(
                home,
                TranscriptFormat::Codex,
                "/x",
                "abc",
                1_700_000_000_000,
                Some("codex-0.104.jsonl")
            ),
            Path::new("/h/.codex/sessions/2023/11/14/rollout-2023-11-14T22-13-20-abc.jsonl")
        );
        let session = "8f14e45f-ceea-4a5c-9c8e-6b1f3d2a7c10";
        for (cwd, sample, want) in [
            (
                "/home/ana/src/api",
                Some("gemini-0.39.jsonl"),
                "/h/.gemini/tmp/api/chats/session-2023-11-14T22-13-8f14e45f.jsonl",
            ),
            (
                "/home/ana/src/My Repo.v2/",
                Some("gemini-0.38.json"),
                "/h/.gemini/tmp/my-repo-v2/chats/session-2023-11-14T22-13-8f14e45f.json",
            ),
            (
                "/",
                None,
                "/h/.gemini/tmp/project/chats/session-2023-11-14T22-13-8f14e45f.jsonl",
            ),
            (
                "/w/--Ünï--",
                None,
                "/h/.gemini/tmp/n/chats/session-2023-11-14T22-13-8f14e45f.jsonl",
            ),
        ] {
            assert_eq!(
                store_path(
                    home,
                    TranscriptFormat::Gemini,
                    cwd,
                    session,
                    1_700_000_000_000,
                    sample
                ),
                Path::new(want),
                "{cwd}"
            );
        }
    }

    #[test]
    fn nothing_generates_gemini_records() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("g.jsonl");
        let refused = |err: anyhow::Error| {
            let text = format!("{err:#}");
            assert!(text.contains("generates no Gemini CLI"), "{text}");
        };
        refused(
            write(
                &path,
                TranscriptFormat::Gemini,
                "s",
                ("/w", "main"),
                0,
                &Recipe::default(),
            )
            .unwrap_err(),
        );
        let mut g = Generator::new(TranscriptFormat::Gemini, "s", "/w", "main", 0);
        refused(g.append(&path, 3, 0, false).unwrap_err());
        refused(g.append_corpus(&path).unwrap_err());
        refused(g.fill_to(&path, 1000).unwrap_err());
        assert!(!path.exists(), "nothing was written");
        let header = r#"{"sessionId":"s1","projectHash":"ab","startTime":"t","lastUpdated":"t","kind":"main"}"#;
        std::fs::write(&path, format!("{header}\n")).unwrap();
        let resumed = Generator::resume(&path).unwrap();
        assert_eq!(resumed.format, TranscriptFormat::Gemini);
        refused(rotate(&path, 2).unwrap_err());
        refused(regenerated(&path, 2).unwrap_err());
        assert_eq!(
            std::fs::read_to_string(&path).unwrap(),
            format!("{header}\n"),
            "left as it was"
        );
    }
}
