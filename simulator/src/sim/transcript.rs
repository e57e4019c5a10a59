//! Agent transcripts in the stores' own JSONL shapes, and the file operations that invalidate a
//! reader's cursor.
//!
//! Claude Code (`~/.claude/projects/<cwd, non-alphanumerics as ->/<session>.jsonl`): records with
//! `type` `user` / `assistant` / `system` / `summary` / `file-history-snapshot`, `message.content`
//! blocks `text` / `thinking` / `tool_use` / `tool_result`, and `uuid`, `parentUuid`,
//! `timestamp`, `sessionId`, `cwd`, `version`, `gitBranch`. Codex
//! (`~/.codex/sessions/YYYY/MM/DD/rollout-<time>-<session>.jsonl`): `session_meta`,
//! `turn_context`, `response_item` (`message` / `reasoning` / `function_call` /
//! `function_call_output`), `event_msg` (`user_message`, `agent_message`, `token_count`), and
//! `compacted`. Both can carry record types no reader knows. Content is deterministic: the same
//! session id and record index always give the same bytes.

use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::time::{Duration, UNIX_EPOCH};

use anyhow::{Context, bail};
use golden::fixture::TranscriptFormat;
use serde_json::{Value, json};

/// How to write records.
#[derive(Debug, Clone)]
pub struct Style {
    /// Every this many records, one of an unknown type (0: none).
    pub unknown_every: u32,
    /// Bytes of filler in each text body (big files).
    pub pad: usize,
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

/// Where a store keeps a session's transcript under `home`.
pub fn store_path(
    home: &Path,
    format: TranscriptFormat,
    cwd: &str,
    session: &str,
    now_ms: u64,
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

    /// A generator positioned after the last record of an existing file.
    pub fn resume(path: &Path) -> anyhow::Result<Self> {
        let text =
            std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
        let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
        let first: Value = lines
            .first()
            .and_then(|l| serde_json::from_str(l).ok())
            .with_context(|| format!("{}: no JSON record to continue from", path.display()))?;
        let codex = first["type"] == "session_meta";
        let mut generator = if codex {
            let payload = &first["payload"];
            Generator::new(
                TranscriptFormat::Codex,
                payload["id"].as_str().unwrap_or("unknown"),
                payload["cwd"].as_str().unwrap_or("/"),
                payload["git"]["branch"].as_str().unwrap_or("main"),
                0,
            )
        } else {
            let meta = lines
                .iter()
                .filter_map(|l| serde_json::from_str::<Value>(l).ok())
                .find(|v| v["sessionId"].is_string())
                .unwrap_or(Value::Null);
            Generator::new(
                TranscriptFormat::Claude,
                meta["sessionId"].as_str().unwrap_or("unknown"),
                meta["cwd"].as_str().unwrap_or("/"),
                meta["gitBranch"].as_str().unwrap_or("main"),
                0,
            )
        };
        generator.index = lines.len() as u64;
        generator.parent = lines
            .iter()
            .rev()
            .filter_map(|l| serde_json::from_str::<Value>(l).ok())
            .find_map(|v| v["uuid"].as_str().map(str::to_owned));
        let last_ts = lines
            .iter()
            .rev()
            .filter_map(|l| serde_json::from_str::<Value>(l).ok())
            .find_map(|v| v["timestamp"].as_str().map(str::to_owned));
        let last_ms = last_ts
            .and_then(|t| humantime::parse_rfc3339(&t).ok())
            .and_then(|t| t.duration_since(UNIX_EPOCH).ok())
            .map(|d| d.as_millis() as u64)
            .unwrap_or(0);
        generator.start_ms = last_ms.saturating_sub(generator.index.saturating_sub(1) * 1000);
        Ok(generator)
    }

    fn ts(&self) -> String {
        rfc3339(self.start_ms + self.index * 1000)
    }

    /// The next record; `pending` forces a tool call with no result.
    pub fn next(&mut self, style: &Style, pending: bool) -> Value {
        let unknown = !pending
            && style.unknown_every > 0
            && self.index > 0
            && (self.index + 1).is_multiple_of(u64::from(style.unknown_every));
        let record = match self.format {
            TranscriptFormat::Claude => self.claude(style, unknown, pending),
            TranscriptFormat::Codex => self.codex(style, unknown, pending),
        };
        self.index += 1;
        record
    }

    fn claude(&mut self, style: &Style, unknown: bool, pending: bool) -> Value {
        let n = self.index;
        let id = uuid(&[&self.session_id], n);
        let call = format!("toolu_{:016x}", hash(&[&self.session_id, "call"], n / 8));
        let text = sentence(hash(&[&self.session_id, "text"], n), 12, style.pad);
        let base = |kind: &str, this: &Generator| {
            json!({
                "parentUuid": this.parent,
                "isSidechain": false,
                "userType": "external",
                "cwd": this.cwd,
                "sessionId": this.session_id,
                "version": "2.0.14",
                "gitBranch": this.branch,
                "type": kind,
            })
        };
        let assistant = |this: &Generator, content: Value| {
            let mut record = base("assistant", this);
            record["message"] = json!({
                "id": format!("msg_{:016x}", hash(&[&this.session_id, "msg"], n)),
                "type": "message",
                "role": "assistant",
                "model": "claude-sonnet-4-5-20250929",
                "content": [content],
                "stop_reason": null,
                "stop_sequence": null,
                "usage": {
                    "input_tokens": 4 + n % 7,
                    "cache_creation_input_tokens": 1200 + n * 13 % 500,
                    "cache_read_input_tokens": 14000 + n * 97,
                    "output_tokens": 60 + n % 90,
                    "service_tier": "standard",
                },
            });
            record["requestId"] =
                json!(format!("req_{:016x}", hash(&[&this.session_id, "req"], n)));
            record
        };
        let mut record = if unknown {
            let mut r = base("x-corral-future-record", self);
            r["payload"] = json!({ "note": "a record type no reader knows", "n": n });
            r
        } else if pending {
            assistant(
                self,
                json!({
                    "type": "tool_use",
                    "id": call,
                    "name": "Bash",
                    "input": { "command": "rm -rf build", "description": "Remove the build directory" },
                }),
            )
        } else {
            match n % 8 {
                0 => {
                    let mut r = base("user", self);
                    r["message"] = json!({ "role": "user", "content": text });
                    r
                }
                1 => assistant(
                    self,
                    json!({
                        "type": "thinking",
                        "thinking": text,
                        "signature": format!("sig{:016x}", hash(&[&self.session_id, "sig"], n)),
                    }),
                ),
                2 => assistant(
                    self,
                    json!({
                        "type": "tool_use",
                        "id": call,
                        "name": "Bash",
                        "input": { "command": "cargo test", "description": "Run the tests" },
                    }),
                ),
                3 => {
                    let mut r = base("user", self);
                    r["message"] = json!({ "role": "user", "content": [{
                        "tool_use_id": call,
                        "type": "tool_result",
                        "content": text,
                        "is_error": n % 16 == 3,
                    }]});
                    r["toolUseResult"] =
                        json!({ "stdout": text, "stderr": "", "interrupted": false });
                    r
                }
                4 => assistant(
                    self,
                    json!({
                        "type": "tool_use",
                        "id": call,
                        "name": "Read",
                        "input": { "file_path": format!("{}/src/lib.rs", self.cwd) },
                    }),
                ),
                5 => {
                    let mut r = base("user", self);
                    r["message"] = json!({ "role": "user", "content": [{
                        "tool_use_id": call,
                        "type": "tool_result",
                        "content": [{ "type": "text", "text": text }],
                    }]});
                    r
                }
                6 => assistant(self, json!({ "type": "text", "text": text })),
                _ if n % 24 == 23 => {
                    let mut r = base("system", self);
                    r["subtype"] = json!("compact_boundary");
                    r["content"] = json!("Conversation compacted");
                    r["isMeta"] = json!(false);
                    r["level"] = json!("info");
                    r["compactMetadata"] = json!({ "trigger": "auto", "preTokens": 150_000 + n });
                    r
                }
                _ => json!({
                    "type": "file-history-snapshot",
                    "messageId": id,
                    "snapshot": { "messageId": id, "trackedFileBackups": {}, "timestamp": self.ts() },
                    "isSnapshotUpdate": false,
                }),
            }
        };
        if record.get("parentUuid").is_some() {
            record["uuid"] = json!(id);
            record["timestamp"] = json!(self.ts());
            self.parent = Some(id);
        }
        record
    }

    fn codex(&mut self, style: &Style, unknown: bool, pending: bool) -> Value {
        let n = self.index;
        let call = format!("call_{:016x}", hash(&[&self.session_id, "call"], n / 8));
        let text = sentence(hash(&[&self.session_id, "text"], n), 12, style.pad);
        let item = |kind: &str, payload: Value| json!({ "timestamp": self.ts(), "type": kind, "payload": payload });
        if n == 0 {
            return item(
                "session_meta",
                json!({
                    "id": self.session_id,
                    "timestamp": self.ts(),
                    "cwd": self.cwd,
                    "originator": "codex_cli_rs",
                    "cli_version": "0.46.0",
                    "instructions": null,
                    "source": "cli",
                    "model_provider": "openai",
                    "git": { "commit_hash": format!("{:016x}", hash(&[&self.session_id], 7)), "branch": self.branch, "repository_url": null },
                }),
            );
        }
        if n == 1 {
            return item(
                "turn_context",
                json!({
                    "cwd": self.cwd,
                    "approval_policy": "on-request",
                    "sandbox_policy": { "mode": "workspace-write", "network_access": false },
                    "model": "gpt-5-codex",
                    "effort": "medium",
                    "summary": "auto",
                }),
            );
        }
        if unknown {
            return item(
                "x_corral_future_item",
                json!({ "note": "a record type no reader knows", "n": n }),
            );
        }
        let shell = |command: &str| {
            json!({
                "type": "function_call",
                "name": "shell",
                "arguments": json!({ "command": ["bash", "-lc", command], "workdir": self.cwd }).to_string(),
                "call_id": call,
            })
        };
        if pending {
            return item("response_item", shell("rm -rf build"));
        }
        match n % 8 {
            2 => item(
                "response_item",
                json!({ "type": "message", "role": "user", "content": [{ "type": "input_text", "text": text }] }),
            ),
            3 => item(
                "event_msg",
                json!({ "type": "user_message", "message": text, "images": [] }),
            ),
            4 => item(
                "response_item",
                json!({
                    "type": "reasoning",
                    "summary": [{ "type": "summary_text", "text": text }],
                    "content": null,
                    "encrypted_content": format!("gAAAA{:016x}", hash(&[&self.session_id, "enc"], n)),
                }),
            ),
            5 => item("response_item", shell("cargo test")),
            6 => item(
                "response_item",
                json!({
                    "type": "function_call_output",
                    "call_id": call,
                    "output": json!({ "output": text, "metadata": { "exit_code": 0, "duration_seconds": 1.5 } }).to_string(),
                }),
            ),
            7 => item(
                "response_item",
                json!({ "type": "message", "role": "assistant", "content": [{ "type": "output_text", "text": text }] }),
            ),
            0 => item(
                "event_msg",
                json!({
                    "type": "token_count",
                    "info": {
                        "total_token_usage": { "input_tokens": 20_000 + n * 50, "cached_input_tokens": 15_000 + n * 40, "output_tokens": 900 + n, "reasoning_output_tokens": 300, "total_tokens": 20_900 + n * 51 },
                        "last_token_usage": { "input_tokens": 3000, "cached_input_tokens": 2500, "output_tokens": 120, "reasoning_output_tokens": 40, "total_tokens": 3120 },
                        "model_context_window": 272_000,
                    },
                    "rate_limits": null,
                }),
            ),
            _ => item(
                "event_msg",
                json!({ "type": "agent_message", "message": text }),
            ),
        }
    }

    /// Appends `events` records to `path` (creating it and its directory); the last is a dangling
    /// tool call when `pending`.
    pub fn append(
        &mut self,
        path: &Path,
        events: u64,
        style: &Style,
        pending: bool,
    ) -> anyhow::Result<()> {
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
        }
        let file = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
            .with_context(|| format!("opening {}", path.display()))?;
        let mut out = BufWriter::new(file);
        for i in 0..events {
            let record = self.next(style, pending && i + 1 == events);
            serde_json::to_writer(&mut out, &record)?;
            out.write_all(b"\n")?;
        }
        out.flush()?;
        Ok(())
    }

    /// Appends records of about 4 KiB each until the file holds at least `bytes`.
    pub fn fill_to(&mut self, path: &Path, bytes: u64, style: &Style) -> anyhow::Result<()> {
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir)?;
        }
        let file = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)?;
        let mut size = file.metadata()?.len();
        let mut out = BufWriter::with_capacity(1 << 20, file);
        while size < bytes {
            let record = self.next(style, false);
            let line = serde_json::to_vec(&record)?;
            out.write_all(&line)?;
            out.write_all(b"\n")?;
            size += line.len() as u64 + 1;
        }
        out.flush()?;
        Ok(())
    }
}

/// Keys whose string values are prose, changed by a rewrite.
const PROSE: &[&str] = &[
    "text", "thinking", "content", "message", "summary", "stdout",
];

fn rot13_prose(value: &mut Value, key: Option<&str>) -> bool {
    match value {
        Value::String(s) if key.is_some_and(|k| PROSE.contains(&k)) => {
            let rotated: String = s
                .chars()
                .map(|c| match c {
                    'a'..='z' => (((c as u8 - b'a') + 13) % 26 + b'a') as char,
                    'A'..='Z' => (((c as u8 - b'A') + 13) % 26 + b'A') as char,
                    _ => c,
                })
                .collect();
            let changed = rotated != *s;
            *s = rotated;
            changed
        }
        Value::Array(items) => items
            .iter_mut()
            .fold(false, |acc, v| rot13_prose(v, key) | acc),
        Value::Object(map) => map
            .iter_mut()
            .fold(false, |acc, (k, v)| rot13_prose(v, Some(k)) | acc),
        _ => false,
    }
}

/// Rewrites the file in place (same inode, same length, different bytes): every prose string is
/// rot13'd.
pub fn rewrite(path: &Path) -> anyhow::Result<()> {
    let text =
        std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
    let mut out = String::with_capacity(text.len());
    let mut changed = false;
    for line in text.split_inclusive('\n') {
        let (body, end) = match line.strip_suffix('\n') {
            Some(body) => (body, "\n"),
            None => (line, ""),
        };
        match serde_json::from_str::<Value>(body) {
            Ok(mut value) => {
                changed |= rot13_prose(&mut value, None);
                out.push_str(&serde_json::to_string(&value)?);
            }
            Err(_) => out.push_str(body),
        }
        out.push_str(end);
    }
    if out.len() != text.len() {
        bail!(
            "{}: cannot rewrite at the same length (not written by corral-sim?)",
            path.display()
        );
    }
    if !changed {
        bail!("{}: nothing to rewrite (no prose in it)", path.display());
    }
    let mut file = std::fs::OpenOptions::new().write(true).open(path)?;
    file.write_all(out.as_bytes())?;
    file.flush()?;
    Ok(())
}

/// Truncates the file in place to `bytes`, or to its first `lines` lines.
pub fn truncate(path: &Path, bytes: Option<u64>, lines: Option<usize>) -> anyhow::Result<u64> {
    let len = match (bytes, lines) {
        (Some(b), None) => b,
        (None, Some(n)) => {
            let text =
                std::fs::read(path).with_context(|| format!("reading {}", path.display()))?;
            text.split_inclusive(|b| *b == b'\n')
                .take(n)
                .map(|l| l.len() as u64)
                .sum()
        }
        _ => bail!("truncate takes exactly one of --bytes and --lines"),
    };
    let file = std::fs::OpenOptions::new()
        .write(true)
        .open(path)
        .with_context(|| format!("opening {}", path.display()))?;
    if len > file.metadata()?.len() {
        bail!(
            "{}: truncating to {len} bytes would grow it",
            path.display()
        );
    }
    file.set_len(len)?;
    Ok(len)
}

/// Replaces the file with a new inode holding `content` (its old bytes when `None`).
pub fn replace(path: &Path, content: Option<Vec<u8>>) -> anyhow::Result<()> {
    let bytes = match content {
        Some(bytes) => bytes,
        None => std::fs::read(path).with_context(|| format!("reading {}", path.display()))?,
    };
    let tmp = path.with_extension("jsonl.replacing");
    std::fs::write(&tmp, bytes)?;
    std::fs::rename(&tmp, path)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn style() -> Style {
        Style {
            unknown_every: 5,
            pad: 0,
        }
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
        g.append(&path, 20, &style(), true).unwrap();
        let lines: Vec<Value> = std::fs::read_to_string(&path)
            .unwrap()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
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
        let next = resumed.next(&style(), false);
        assert_eq!(next["parentUuid"], lines[19]["uuid"]);
    }

    #[test]
    fn codex_starts_with_session_meta() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("r.jsonl");
        let mut g = Generator::new(TranscriptFormat::Codex, "sess", "/r", "dev", 0);
        g.append(&path, 12, &style(), false).unwrap();
        let lines: Vec<Value> = std::fs::read_to_string(&path)
            .unwrap()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
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

    #[test]
    fn rewrite_keeps_length_and_changes_bytes() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.jsonl");
        let mut g = Generator::new(TranscriptFormat::Claude, "sess", "/r", "main", 0);
        g.append(&path, 10, &style(), false).unwrap();
        let before = std::fs::read(&path).unwrap();
        rewrite(&path).unwrap();
        let after = std::fs::read(&path).unwrap();
        assert_eq!(before.len(), after.len());
        assert_ne!(before, after);
    }

    #[test]
    fn store_paths_look_like_the_stores() {
        let home = Path::new("/h");
        assert_eq!(
            store_path(home, TranscriptFormat::Claude, "/work/my.repo", "abc", 0),
            Path::new("/h/.claude/projects/-work-my-repo/abc.jsonl")
        );
        assert_eq!(
            store_path(
                home,
                TranscriptFormat::Codex,
                "/x",
                "abc",
                1_700_000_000_000
            ),
            Path::new("/h/.codex/sessions/2023/11/14/rollout-2023-11-14T22-13-20-abc.jsonl")
        );
    }
}
