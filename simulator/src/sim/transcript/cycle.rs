//! The records `transcript write`, `grow` and a fixture's `events` produce: a cycle of eight
//! record shapes per store, deterministic in the session id and the record index, with a record
//! type no reader knows every `unknown_every` records and, when asked, a tool call left without
//! a result at the end.

use golden::fixture::TranscriptFormat;
use serde_json::{Value, json};

use super::{Generator, hash, sentence, uuid};

impl Generator {
    /// The next record of the cycle; one of an unknown type every `unknown_every` records (0:
    /// never); `pending` makes it a tool call with no result. Gemini CLI's store has no cycle
    /// ([`super::generates`]).
    pub fn next(&mut self, unknown_every: u32, pending: bool) -> anyhow::Result<Value> {
        let unknown = !pending
            && unknown_every > 0
            && self.index > 0
            && (self.index + 1).is_multiple_of(u64::from(unknown_every));
        let record = match self.format {
            TranscriptFormat::Claude => self.claude(unknown, pending),
            TranscriptFormat::Codex => self.codex(unknown, pending),
            TranscriptFormat::Gemini => return Err(super::no_gemini_records()),
        };
        self.index += 1;
        Ok(record)
    }

    fn claude(&mut self, unknown: bool, pending: bool) -> Value {
        let n = self.index;
        let id = uuid(&[&self.session_id], n);
        let call = format!("toolu_{:016x}", hash(&[&self.session_id, "call"], n / 8));
        let text = sentence(hash(&[&self.session_id, "text"], n), 12, 0);
        let assistant =
            |this: &Generator, content: Value| this.claude_assistant(vec![content], None);
        let mut record = if unknown {
            let mut r = self.claude_base("x-corral-future-record");
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
                    let mut r = self.claude_base("user");
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
                    let mut r = self.claude_base("user");
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
                    let mut r = self.claude_base("user");
                    r["message"] = json!({ "role": "user", "content": [{
                        "tool_use_id": call,
                        "type": "tool_result",
                        "content": [{ "type": "text", "text": text }],
                    }]});
                    r
                }
                6 => assistant(self, json!({ "type": "text", "text": text })),
                _ if n % 24 == 23 => {
                    let mut r = self.claude_base("system");
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
        self.chain(&mut record);
        record
    }

    fn codex(&mut self, unknown: bool, pending: bool) -> Value {
        let n = self.index;
        let call = format!("call_{:016x}", hash(&[&self.session_id, "call"], n / 8));
        let text = sentence(hash(&[&self.session_id, "text"], n), 12, 0);
        let item = |kind: &str, payload: Value| self.codex_item(kind, payload);
        if n == 0 {
            return item("session_meta", self.codex_session_meta());
        }
        if n == 1 {
            return item("turn_context", self.codex_turn_context());
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
}
