//! Benchmark transcripts: records of about 4 KiB appended until the file reaches a size (1 GiB
//! for the reader's benchmark; such a file is made on demand, never committed). Streamed: each
//! line is formatted straight into a buffered writer from four fixed shapes per store (a user
//! message, assistant text or reasoning, a tool call, its result), so nothing but one line is in
//! memory and a gigabyte takes seconds, not minutes. The records chain and carry timestamps like
//! the [`cycle`](super::cycle)'s, so a reader pages through them as through a real store.

use std::io::Write;
use std::path::Path;

use anyhow::Context;
use golden::fixture::TranscriptFormat;

use super::{Generator, hash, open_append, rfc3339, sentence, uuid};

/// Bytes of filler prose in a record's text: plain ASCII that JSON writes as it is.
const FILLER_BYTES: usize = 4000;

/// A string as a JSON string literal.
fn quoted(text: &str) -> String {
    serde_json::to_string(text).expect("a string always encodes")
}

impl Generator {
    /// Appends records of about 4 KiB each until the file holds at least `bytes`; returns its
    /// size.
    pub fn fill_to(&mut self, path: &Path, bytes: u64) -> anyhow::Result<u64> {
        super::generates(self.format)?;
        let mut out = open_append(path)?;
        let mut size = std::fs::metadata(path)
            .with_context(|| format!("reading {}", path.display()))?
            .len();
        // A rollout opens with its session and turn context, whatever follows.
        while self.format == TranscriptFormat::Codex && self.index < 2 && size < bytes {
            let mut line = serde_json::to_vec(&self.next(0, false)?)?;
            line.push(b'\n');
            out.write_all(&line)?;
            size += line.len() as u64;
        }
        let filler = " lorem ipsum dolor sit amet".repeat(FILLER_BYTES / 27);
        let envelope = format!(
            r#""isSidechain":false,"userType":"external","cwd":{},"sessionId":{},"version":"2.0.14","gitBranch":{}"#,
            quoted(&self.cwd),
            quoted(&self.session_id),
            quoted(&self.branch)
        );
        let mut line: Vec<u8> = Vec::with_capacity(FILLER_BYTES + 1024);
        while size < bytes {
            line.clear();
            match self.format {
                TranscriptFormat::Claude => self.claude_line(&mut line, &envelope, &filler)?,
                TranscriptFormat::Codex => self.codex_line(&mut line, &filler)?,
                TranscriptFormat::Gemini => super::generates(self.format)?,
            }
            line.push(b'\n');
            out.write_all(&line)?;
            size += line.len() as u64;
            self.index += 1;
        }
        out.flush()?;
        Ok(size)
    }

    fn claude_line(
        &mut self,
        line: &mut Vec<u8>,
        envelope: &str,
        filler: &str,
    ) -> anyhow::Result<()> {
        let n = self.index;
        let id = uuid(&[&self.session_id], n);
        let parent = match &self.parent {
            Some(parent) => format!("\"{parent}\""),
            None => "null".to_owned(),
        };
        let ts = self.ts();
        let text = sentence(hash(&[&self.session_id, "text"], n), 12, 0);
        let call = format!("toolu_{:016x}", hash(&[&self.session_id, "call"], n / 4));
        write!(line, r#"{{"parentUuid":{parent},{envelope},"#)?;
        match n % 4 {
            0 => write!(
                line,
                r#""type":"user","message":{{"role":"user","content":"{text}{filler}"}}"#
            )?,
            1 | 2 => {
                let content = if n % 4 == 1 {
                    format!(r#"{{"type":"text","text":"{text}{filler}"}}"#)
                } else {
                    format!(
                        r#"{{"type":"tool_use","id":"{call}","name":"Bash","input":{{"command":"cargo test","description":"Run the tests"}}}}"#
                    )
                };
                write!(
                    line,
                    r#""type":"assistant","message":{{"id":"msg_{:016x}","type":"message","role":"assistant","model":"claude-sonnet-4-5-20250929","content":[{content}],"stop_reason":null,"stop_sequence":null,"usage":{{"input_tokens":{},"cache_creation_input_tokens":{},"cache_read_input_tokens":{},"output_tokens":{},"service_tier":"standard"}}}},"requestId":"req_{:016x}""#,
                    hash(&[&self.session_id, "msg"], n),
                    4 + n % 7,
                    1200 + n * 13 % 500,
                    14000 + n * 97,
                    60 + n % 90,
                    hash(&[&self.session_id, "req"], n),
                )?;
            }
            _ => write!(
                line,
                r#""type":"user","message":{{"role":"user","content":[{{"tool_use_id":"{call}","type":"tool_result","content":"{text}{filler}","is_error":false}}]}}"#
            )?,
        }
        write!(line, r#","uuid":"{id}","timestamp":"{ts}"}}"#)?;
        self.parent = Some(id);
        Ok(())
    }

    fn codex_line(&self, line: &mut Vec<u8>, filler: &str) -> anyhow::Result<()> {
        let n = self.index;
        let ts = rfc3339(self.start_ms + n * 1000);
        let text = sentence(hash(&[&self.session_id, "text"], n), 12, 0);
        let call = format!("call_{:016x}", hash(&[&self.session_id, "call"], n / 4));
        write!(
            line,
            r#"{{"timestamp":"{ts}","type":"response_item","payload":"#
        )?;
        match n % 4 {
            0 => write!(
                line,
                r#"{{"type":"message","role":"user","content":[{{"type":"input_text","text":"{text}{filler}"}}]}}"#
            )?,
            1 => write!(
                line,
                r#"{{"type":"reasoning","summary":[{{"type":"summary_text","text":"{text}{filler}"}}],"content":null,"encrypted_content":"gAAAA{:016x}"}}"#,
                hash(&[&self.session_id, "enc"], n)
            )?,
            2 => write!(
                line,
                r#"{{"type":"function_call","name":"shell","arguments":"{{\"command\":[\"bash\",\"-lc\",\"cargo test\"]}}","call_id":"{call}"}}"#
            )?,
            _ => write!(
                line,
                r#"{{"type":"function_call_output","call_id":"{call}","output":"{{\"output\":\"{text}{filler}\",\"metadata\":{{\"exit_code\":0,\"duration_seconds\":1.5}}}}"}}"#
            )?,
        }
        line.push(b'}');
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::Value;

    #[test]
    fn big_files_are_valid_chained_records_of_about_four_kib() {
        let dir = tempfile::tempdir().unwrap();
        for format in [TranscriptFormat::Claude, TranscriptFormat::Codex] {
            let path = dir.path().join(format!("{format:?}.jsonl"));
            let size = Generator::new(format, "s\"q", "/w d", "main", 1_700_000_000_000)
                .fill_to(&path, 100_000)
                .unwrap();
            assert_eq!(size, std::fs::metadata(&path).unwrap().len());
            assert!((100_000..100_000 + 8192).contains(&size), "{size}");
            let records: Vec<Value> = std::fs::read_to_string(&path)
                .unwrap()
                .lines()
                .map(|l| serde_json::from_str(l).unwrap())
                .collect();
            match format {
                TranscriptFormat::Claude => {
                    assert_eq!(records[0]["parentUuid"], Value::Null);
                    assert_eq!(records[0]["sessionId"], "s\"q");
                    for pair in records.windows(2) {
                        assert_eq!(pair[1]["parentUuid"], pair[0]["uuid"]);
                    }
                    assert_eq!(records[5]["timestamp"], "2023-11-14T22:13:25.000Z");
                }
                TranscriptFormat::Codex => {
                    assert_eq!(records[0]["type"], "session_meta");
                    assert_eq!(records[1]["type"], "turn_context");
                    assert_eq!(records[3]["payload"]["type"], "function_call_output");
                    let output: Value =
                        serde_json::from_str(records[3]["payload"]["output"].as_str().unwrap())
                            .unwrap();
                    assert_eq!(output["metadata"]["exit_code"], 0);
                }
                TranscriptFormat::Gemini => unreachable!("not generated"),
            }
            // Growing goes on where the file ends.
            let mut again = Generator::resume(&path).unwrap();
            assert_eq!(again.index, records.len() as u64);
            again.fill_to(&path, 150_000).unwrap();
            let last: Value = serde_json::from_str(
                std::fs::read_to_string(&path)
                    .unwrap()
                    .lines()
                    .last()
                    .unwrap(),
            )
            .unwrap();
            assert!(
                last["timestamp"]
                    .as_str()
                    .unwrap()
                    .starts_with("2023-11-14T22:1")
            );
        }
    }
}
