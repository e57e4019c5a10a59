//! Continuing an existing transcript: its store, session, directory and branch from its first
//! records, its record count, and the last record's uuid and timestamp, read in one streaming
//! pass (a benchmark file of 1 GiB is never held in memory).

use std::collections::VecDeque;
use std::io::{BufRead, BufReader};
use std::path::Path;
use std::time::UNIX_EPOCH;

use anyhow::Context;
use golden::fixture::TranscriptFormat;
use serde_json::Value;

use super::Generator;

/// Lines kept from the head (where the session is named) and from the tail (the last uuid and
/// timestamp).
const KEPT: usize = 32;

impl Generator {
    /// A generator positioned after the last record of an existing file.
    pub fn resume(path: &Path) -> anyhow::Result<Self> {
        let file =
            std::fs::File::open(path).with_context(|| format!("reading {}", path.display()))?;
        let mut reader = BufReader::with_capacity(1 << 20, file);
        let mut head: Vec<Value> = Vec::new();
        let mut tail: VecDeque<Vec<u8>> = VecDeque::new();
        let mut count = 0u64;
        let mut line = Vec::new();
        loop {
            line.clear();
            let read = reader
                .read_until(b'\n', &mut line)
                .with_context(|| format!("reading {}", path.display()))?;
            if read == 0 {
                break;
            }
            if line.iter().all(u8::is_ascii_whitespace) {
                continue;
            }
            count += 1;
            if head.len() < KEPT
                && let Ok(value) = serde_json::from_slice::<Value>(&line)
            {
                head.push(value);
            }
            if tail.len() == KEPT {
                tail.pop_front();
            }
            tail.push_back(std::mem::take(&mut line));
        }
        let first = head
            .first()
            .with_context(|| format!("{}: no JSON record to continue from", path.display()))?;
        let mut generator = if first.get("type").is_none()
            && first["sessionId"].is_string()
            && first.get("projectHash").is_some()
        {
            // A Gemini CLI chat's header: its store has no generated record to continue with,
            // which the functions that generate say.
            Generator::new(
                TranscriptFormat::Gemini,
                first["sessionId"].as_str().unwrap_or("unknown"),
                "/",
                "main",
                0,
            )
        } else if first["type"] == "session_meta" {
            let payload = &first["payload"];
            Generator::new(
                TranscriptFormat::Codex,
                payload["id"].as_str().unwrap_or("unknown"),
                payload["cwd"].as_str().unwrap_or("/"),
                payload["git"]["branch"].as_str().unwrap_or("main"),
                0,
            )
        } else {
            let meta = head
                .iter()
                .find(|v| v["sessionId"].is_string())
                .unwrap_or(&Value::Null);
            Generator::new(
                TranscriptFormat::Claude,
                meta["sessionId"].as_str().unwrap_or("unknown"),
                meta["cwd"].as_str().unwrap_or("/"),
                meta["gitBranch"].as_str().unwrap_or("main"),
                0,
            )
        };
        let last: Vec<Value> = tail
            .iter()
            .rev()
            .filter_map(|l| serde_json::from_slice(l).ok())
            .collect();
        generator.index = count;
        generator.parent = last
            .iter()
            .find_map(|v| v["uuid"].as_str().map(str::to_owned));
        let last_ms = last
            .iter()
            .find_map(|v| v["timestamp"].as_str())
            .and_then(|t| humantime::parse_rfc3339(t).ok())
            .and_then(|t| t.duration_since(UNIX_EPOCH).ok())
            .map(|d| d.as_millis() as u64)
            .unwrap_or(0);
        generator.start_ms = last_ms.saturating_sub(count.saturating_sub(1) * 1000);
        Ok(generator)
    }
}
