//! The transcript corpus: a fixed sequence of records per store that covers every event kind the
//! host's reader makes of that store (`reference-host/src/transcript/classify/`), with the edge
//! cases a window and an event must handle: several events in one record, a tool call without a
//! result, strings far over the 256-byte header cap, multi-byte characters straddling it, a
//! record over 1 MiB (an event body is cut there), and a record type no reader knows. Texts are
//! fixed; ids, uuids and timestamps follow from the session id, the record index and the start
//! time, so a golden session can state exact previews, sizes and kinds.
//! `golden/fixtures/README.md` ("The transcript corpus") lists every record and its events.

use golden::fixture::TranscriptFormat;
use serde_json::{Value, json};

use super::{Generator, hash, uuid};

/// Records in the Claude Code corpus.
pub const CLAUDE_RECORDS: usize = 20;
/// Records in the Codex corpus.
pub const CODEX_RECORDS: usize = 27;

/// Lines in the big log of the record over 1 MiB; each is 64 bytes with its newline.
const LOG_LINES: usize = 20_480;

/// 1 310 720 bytes of a build log: line `i` is `i`, a fixed text, and its newline, 64 bytes.
fn build_log() -> String {
    let mut out = String::with_capacity(LOG_LINES * 64);
    for i in 0..LOG_LINES {
        let line = format!(
            "{i:06} nightly build: compiling parser unit {:05} ... ok",
            i * 7 % 100_000
        );
        out.push_str(&format!("{line:<63}\n"));
    }
    out
}

/// A first line whose 256th byte falls inside a three-byte character.
fn japanese_line() -> String {
    format!(
        "\u{dc}berpr\u{fc}fe bitte auch die Fehlermeldungen: {}",
        "\u{65e5}\u{672c}\u{8a9e}\u{306e}\u{30a8}\u{30e9}\u{30fc}\u{30e1}\u{30c3}\u{30bb}\u{30fc}\u{30b8}\u{3001}"
            .repeat(8)
    )
}

/// A first line whose 256th byte falls inside a four-byte character.
fn emoji_line() -> String {
    format!(
        "R\u{e9}sum\u{e9} for the team, with accents (\u{e4}, \u{f6}, \u{fc}, \u{e9}) and crabs: {}",
        "\u{1f980} ".repeat(60)
    )
}

/// A first line of 700 ASCII bytes (prose, no line break), then two more lines.
fn long_text() -> String {
    let mut first = String::from("Summary of the change: ");
    let words = [
        "the", "parser", "now", "returns", "an", "empty", "token", "list", "for", "empty", "input",
        "instead", "of", "an", "error,", "and",
    ];
    let mut i = 0;
    while first.len() < 699 {
        first.push_str(words[i % words.len()]);
        first.push(' ');
        i += 1;
    }
    first.truncate(699);
    first.push('.');
    format!("{first}\nEvery caller handled the error already.\nNo other behaviour changes.")
}

impl Generator {
    /// The corpus of the generator's store, from its current position (a new file). Gemini CLI's
    /// store has none ([`super::generates`]).
    pub fn corpus(&mut self) -> anyhow::Result<Vec<Value>> {
        let (count, record_of): (usize, fn(&Self, usize) -> Value) = match self.format {
            TranscriptFormat::Claude => (CLAUDE_RECORDS, Self::claude_corpus),
            TranscriptFormat::Codex => (CODEX_RECORDS, Self::codex_corpus),
            TranscriptFormat::Gemini => return Err(super::no_gemini_records()),
        };
        let mut out = Vec::with_capacity(count);
        for i in 0..count {
            let mut record = record_of(self, i);
            self.chain(&mut record);
            self.index += 1;
            out.push(record);
        }
        Ok(out)
    }

    /// A tool call id of the corpus: `<prefix><16 hex digits>`, the `k`th of the session.
    fn corpus_call(&self, prefix: &str, k: u64) -> String {
        format!(
            "{prefix}{:016x}",
            hash(&[&self.session_id, "corpus-call"], k)
        )
    }

    fn claude_user(&self, content: Value) -> Value {
        let mut record = self.claude_base("user");
        record["message"] = json!({ "role": "user", "content": content });
        record
    }

    fn claude_corpus(&self, i: usize) -> Value {
        let read_log = self.corpus_call("toolu_", 0);
        let bash_test = self.corpus_call("toolu_", 1);
        let read_src = self.corpus_call("toolu_", 2);
        let task = self.corpus_call("toolu_", 3);
        let clean = self.corpus_call("toolu_", 4);
        match i {
            0 => json!({
                "type": "summary",
                "summary": "Fix the parser's empty-input test",
                "leafUuid": uuid(&[&self.session_id, "leaf"], 0),
            }),
            1 => {
                let id = uuid(&[&self.session_id, "snapshot"], 0);
                json!({
                    "type": "file-history-snapshot",
                    "messageId": id,
                    "snapshot": { "messageId": id, "trackedFileBackups": {}, "timestamp": self.ts() },
                    "isSnapshotUpdate": false,
                })
            }
            2 => self.claude_user(json!(
                "Fix the failing parser test, then run the whole suite.\nThe failure is in src/parse.rs."
            )),
            3 => self.claude_assistant(
                vec![json!({
                    "type": "tool_use",
                    "id": read_log,
                    "name": "Read",
                    "input": { "file_path": "logs/build.log" },
                })],
                None,
            ),
            4 => self.claude_user(json!([{
                "tool_use_id": read_log,
                "type": "tool_result",
                "content": build_log(),
            }])),
            // Records 5 to 7 are one API message streamed as three records (Claude Code 2.0.76 to
            // 2.1.6x): one `message.id`, `stop_reason: null`, each a copy of the usage whose output
            // count is a placeholder but on the last part.
            5 => self.claude_part(
                vec![json!({
                    "type": "thinking",
                    "thinking": "The log shows one failing test: parse::tests::empty_input.\nAn empty slice must give an empty token list, not an error.",
                    "signature": format!("EqMB{:016x}", hash(&[&self.session_id, "sig"], 5)),
                })],
                5,
                Some(8),
            ),
            6 => self.claude_part(
                vec![json!({
                    "type": "redacted_thinking",
                    "data": format!("EmwKAhgB{}", "Qk9SRUFMSVNSRURBQ1RFRA".repeat(12)),
                })],
                5,
                Some(8),
            ),
            7 => self.claude_part(
                vec![
                    json!({ "type": "text", "text": "I'll run the failing test and read the parser." }),
                    json!({
                        "type": "tool_use",
                        "id": bash_test,
                        "name": "Bash",
                        "input": { "command": "cargo test -p parser empty_input", "description": "Run the failing test" },
                    }),
                    json!({
                        "type": "tool_use",
                        "id": read_src,
                        "name": "Read",
                        "input": { "file_path": "src/parse.rs" },
                    }),
                ],
                5,
                None,
            ),
            8 => self.claude_user(json!([
                {
                    "tool_use_id": bash_test,
                    "type": "tool_result",
                    "content": "test parse::tests::empty_input ... FAILED\nthread 'parse::tests::empty_input' panicked: called `Result::unwrap()` on an `Err` value: Empty",
                    "is_error": true,
                },
                {
                    "tool_use_id": read_src,
                    "type": "tool_result",
                    "content": [{ "type": "text", "text": "pub fn parse(input: &[u8]) -> Result<Vec<Token>, Error> {\n    if input.is_empty() {\n        return Err(Error::Empty);\n    }\n    lex(input)\n}" }],
                    "is_error": false,
                },
            ])),
            9 => self.claude_user(json!([
                { "type": "text", "text": "This is what the failing CI run shows." },
                {
                    "type": "image",
                    "source": {
                        "type": "base64",
                        "media_type": "image/png",
                        "data": "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==",
                    },
                },
            ])),
            10 => self.claude_assistant(
                vec![json!({
                    "type": "tool_use",
                    "id": task,
                    "name": "Task",
                    "input": {
                        "description": "Find callers of parse",
                        "prompt": "List every caller of parser::parse in the workspace.",
                        "subagent_type": "general-purpose",
                    },
                })],
                None,
            ),
            11 => {
                let text = "parse is called from src/main.rs and src/repl.rs.";
                let mut record = self.claude_user(json!([{
                    "tool_use_id": task,
                    "type": "tool_result",
                    "content": [{ "type": "text", "text": text }],
                }]));
                record["toolUseResult"] = json!({
                    "status": "completed",
                    "prompt": "List every caller of parser::parse in the workspace.",
                    "agentId": format!("{:08x}", hash(&[&self.session_id, "agent"], 0) as u32),
                    "content": [{ "type": "text", "text": text }],
                    "totalDurationMs": 5210,
                    "totalTokens": 8123,
                    "totalToolUseCount": 3,
                });
                record
            }
            12 => self.claude_assistant(vec![json!({ "type": "text", "text": long_text() })], None),
            13 => self.claude_user(json!(format!("{}\nDanke!", japanese_line()))),
            14 => {
                let mut record = self.claude_base("system");
                record["subtype"] = json!("compact_boundary");
                record["content"] = json!("Conversation compacted");
                record["isMeta"] = json!(false);
                record["level"] = json!("info");
                record["compactMetadata"] = json!({ "trigger": "manual", "preTokens": 48_213 });
                record
            }
            15 => {
                let mut record = self.claude_base("x-corral-drift");
                record["payload"] = json!({ "note": "a record type no reader knows" });
                record
            }
            16 => self.claude_assistant(
                vec![json!({
                    "type": "text",
                    "text": "The parser now returns an empty token list for empty input; all 214 tests pass.",
                })],
                None,
            ),
            // The turn's end, as Claude Code 2.1 writes it (the stop reason never reaches the file).
            17 => {
                let mut record = self.claude_base("system");
                record["subtype"] = json!("turn_duration");
                record["durationMs"] = json!(48_213);
                record["isMeta"] = json!(false);
                record
            }
            18 => self.claude_user(json!("Now clean the build directory.")),
            _ => self.claude_assistant(
                vec![json!({
                    "type": "tool_use",
                    "id": clean,
                    "name": "Bash",
                    "input": { "command": "rm -rf build", "description": "Remove the build directory" },
                })],
                None,
            ),
        }
    }

    fn codex_corpus(&self, i: usize) -> Value {
        let build = self.corpus_call("call_", 0);
        let test = self.corpus_call("call_", 1);
        let search = self.corpus_call("call_", 2);
        let patch = self.corpus_call("call_", 3);
        let clean = self.corpus_call("call_", 4);
        let item = |payload: Value| self.codex_item("response_item", payload);
        let event = |payload: Value| self.codex_item("event_msg", payload);
        let message = |role: &str, kind: &str, text: &str| {
            item(
                json!({ "type": "message", "role": role, "content": [{ "type": kind, "text": text }] }),
            )
        };
        let shell = |call: &str, command: &str| {
            item(json!({
                "type": "function_call",
                "name": "shell",
                "arguments": json!({ "command": ["bash", "-lc", command], "timeout_ms": 120_000 }).to_string(),
                "call_id": call,
            }))
        };
        let output = |call: &str, text: &str, exit: u32, seconds: f64| {
            json!({
                "type": "function_call_output",
                "call_id": call,
                "output": json!({ "output": text, "metadata": { "exit_code": exit, "duration_seconds": seconds } }).to_string(),
            })
        };
        let prompt = "Make the parser accept empty input, then run the tests.";
        let answer = long_text();
        match i {
            0 => self.codex_item("session_meta", self.codex_session_meta()),
            1 => self.codex_item("turn_context", self.codex_turn_context()),
            2 => event(json!({ "type": "task_started", "model_context_window": 272_000 })),
            3 => message(
                "user",
                "input_text",
                &format!("The nightly build fails; here is its log:\n{}", build_log()),
            ),
            4 => message("user", "input_text", prompt),
            5 => event(json!({ "type": "user_message", "message": prompt, "images": [] })),
            6 => item(json!({
                "type": "reasoning",
                "summary": [{ "type": "summary_text", "text": "**Reading the parser**\n\nThe empty-input case returns Err(Empty); it should return no tokens." }],
                "content": null,
                "encrypted_content": format!("gAAAAB{:016x}", hash(&[&self.session_id, "enc"], 6)),
            })),
            7 => item(json!({
                "type": "reasoning",
                "summary": [],
                "content": null,
                "encrypted_content": format!("gAAAAB{}", "c2VjcmV0IHJlYXNvbmluZw".repeat(16)),
            })),
            8 => shell(&build, "cargo build"),
            9 => item(output(&build, "Finished `dev` profile in 2.10s\n", 0, 2.1)),
            10 => shell(&test, "cargo test"),
            11 => item(output(
                &test,
                "test parse::tests::empty_input ... FAILED\nerror: test failed, to rerun pass `-p parser --lib`\n",
                101,
                4.2,
            )),
            12 => item(json!({
                "type": "local_shell_call",
                "id": format!("lsh_{:016x}", hash(&[&self.session_id, "lsh"], 12)),
                "call_id": search,
                "status": "completed",
                "action": { "type": "exec", "command": ["rg", "-n", "fn parse", "src"], "timeout_ms": 10_000, "working_directory": null, "env": null, "user": null },
            })),
            13 => item(json!({
                "type": "custom_tool_call",
                "status": "completed",
                "call_id": patch,
                "name": "apply_patch",
                "input": "*** Begin Patch\n*** Update File: src/parse.rs\n@@\n-        return Err(Error::Empty);\n+        return Ok(Vec::new());\n*** End Patch\n",
            })),
            14 => item(json!({
                "type": "custom_tool_call_output",
                "call_id": patch,
                "output": json!({ "output": "Success. Updated the following files:\nM src/parse.rs\n", "metadata": { "exit_code": 0, "duration_seconds": 0.0 } }).to_string(),
            })),
            15 => item(json!({
                "type": "web_search_call",
                "id": format!("ws_{:016x}", hash(&[&self.session_id, "ws"], 15)),
                "status": "completed",
                "action": { "type": "search", "query": "rust parser empty input idiom" },
            })),
            16 => message("assistant", "output_text", &answer),
            17 => event(json!({ "type": "agent_message", "message": answer })),
            18 => event(json!({
                "type": "token_count",
                "info": {
                    "total_token_usage": { "input_tokens": 48_210, "cached_input_tokens": 40_960, "output_tokens": 1_874, "reasoning_output_tokens": 640, "total_tokens": 50_084 },
                    "last_token_usage": { "input_tokens": 6_120, "cached_input_tokens": 5_888, "output_tokens": 312, "reasoning_output_tokens": 128, "total_tokens": 6_432 },
                    "model_context_window": 272_000,
                },
                "rate_limits": null,
            })),
            19 => event(json!({
                "type": "task_complete",
                "last_agent_message": "Every caller handled the error already.",
            })),
            20 => event(json!({ "type": "task_started", "model_context_window": 272_000 })),
            21 => message("user", "input_text", &format!("{}\nThanks!", emoji_line())),
            22 => event(json!({ "type": "turn_aborted", "reason": "interrupted" })),
            23 => self.codex_item(
                "compacted",
                json!({ "message": "The parser accepts empty input; the tests pass; the build directory is next." }),
            ),
            24 => self.codex_item(
                "x_corral_drift",
                json!({ "note": "a record type no reader knows" }),
            ),
            25 => shell(&clean, "rm -rf build"),
            _ => event(json!({
                "type": "exec_approval_request",
                "call_id": clean,
                "command": ["bash", "-lc", "rm -rf build"],
                "cwd": self.cwd,
                "reason": "Remove the build directory outside the sandbox's writable roots?",
            })),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Byte 256 (the default header cap) falls inside a character, so a cut must step back.
    #[test]
    fn the_non_ascii_lines_straddle_the_header_cap() {
        for (line, width) in [(japanese_line(), 3), (emoji_line(), 4)] {
            assert!(line.len() > 300);
            assert!(!line.is_char_boundary(256), "{line}");
            let start = (0..256).rev().find(|i| line.is_char_boundary(*i)).unwrap();
            assert_eq!(line[start..].chars().next().unwrap().len_utf8(), width);
            assert!(start + width > 256);
        }
    }

    #[test]
    fn the_big_strings_have_their_sizes() {
        assert_eq!(build_log().len(), 1_310_720);
        assert!(build_log().lines().all(|l| l.len() == 63));
        let long = long_text();
        assert_eq!(long.lines().next().unwrap().len(), 700);
    }

    #[test]
    fn the_corpus_is_the_same_bytes_for_the_same_input() {
        for format in [TranscriptFormat::Claude, TranscriptFormat::Codex] {
            let make = || {
                let mut g = Generator::new(format, "sess", "/w", "main", 1_700_000_000_000);
                serde_json::to_string(&g.corpus().unwrap()).unwrap()
            };
            assert_eq!(make(), make());
        }
        let mut g = Generator::new(TranscriptFormat::Claude, "s", "/w", "main", 0);
        let records = g.corpus().unwrap();
        assert_eq!(records.len(), CLAUDE_RECORDS);
        assert_eq!(g.index, CLAUDE_RECORDS as u64);
        assert_eq!(
            records[2]["parentUuid"],
            Value::Null,
            "the first conversation record"
        );
        assert_eq!(records[3]["parentUuid"], records[2]["uuid"]);
        assert_eq!(g.parent.as_deref(), records[19]["uuid"].as_str());
        let mut g = Generator::new(TranscriptFormat::Codex, "s", "/w", "main", 0);
        assert_eq!(g.corpus().unwrap().len(), CODEX_RECORDS);
    }
}
