//! The demo's stage: each move of the story played on the fleet with the simulator's own
//! internals, and what an app did to the fleet read back as answers the story goes on from.
//!
//! How a move is played, by agent:
//!
//! | move | claude | opencode | codex, gemini |
//! |---|---|---|---|
//! | a permission | its real hook, `corral event claude PermissionRequest`, parks the request and waits for a verdict (hook lane) | stamped with a request id its API answers (api lane) | stamped (screen lane) |
//! | a question | - | stamped with a question its API serves | - |
//! | start, progress, finish, a rate limit | stamped; the transcript grows (claude, codex) | stamped | stamped; the transcript grows (codex) |
//!
//! What an app did, read every tick: a hook that got a verdict has finished (it stamped the pane
//! working itself); a POST the agent API recorded answers a request; keys or text a pane received
//! answer a screen-lane permission, steer an idle agent, or interrupt a working one (Escape).
//! Then the stage is kept the same size (`upkeep`): finished hooks reaped,
//! transcripts and the fake tmux's call log bounded.

use std::collections::BTreeMap;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use anyhow::Context;
use golden::{Backend, SimFile};
use schema::PaneOption;
use serde_json::Value;

use super::super::api;
use super::super::hook::{self, HookOptions};
use super::super::input;
use super::super::keys::Received;
use super::super::step::{self, StepOptions};
use super::super::transcript::Generator;
use super::story::{Beat, Block, CALLS, Move, Phase, QUESTIONS, Story};
use super::upkeep::{self, Spawned};
use crate::fake::state::ServerDir;

/// How long a hook answered at the desk is given to take its verdict and exit.
const HOOK_EXIT: Duration = Duration::from_secs(5);

/// The options a pane blocked on something carries, cleared when it goes on.
const BLOCKING: [PaneOption; 5] = [
    PaneOption::Detail,
    PaneOption::PermissionRequest,
    PaneOption::QuestionRequest,
    PaneOption::PendingTool,
    PaneOption::PendingCall,
];

/// One pane of the fleet.
#[derive(Debug, Clone)]
struct Pane {
    name: String,
    id: String,
    agent: &'static str,
    transcript: Option<PathBuf>,
}

/// What an app did to a pane since the last look.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Answer {
    /// The pane's index.
    pub pane: usize,
    /// Where it goes on from.
    pub phase: Phase,
    /// What happened, for the log.
    pub how: String,
}

/// The fleet the story is played on.
#[derive(Debug)]
pub struct Stage {
    sim_dir: PathBuf,
    runtime: PathBuf,
    panes: Vec<Pane>,
    /// The environment of the hooks: the demo's config.
    hook_env: Vec<(String, String)>,
    /// Panes whose permission hook waits for a verdict: pane → the hook run's name.
    hooks: BTreeMap<usize, String>,
    /// Every hook started and not yet reaped and forgotten.
    spawned: Vec<Spawned>,
    /// The fake tmux's call log (none on a real server).
    calls: Option<PathBuf>,
    /// Requests the agent API answers for: request id → pane.
    requests: BTreeMap<String, usize>,
    /// Bytes of `api-replies.ndjson` already read.
    replies_read: usize,
}

impl Stage {
    /// The stage of a fleet `up` brought up from the story's fixture.
    pub fn new(
        sim_dir: &Path,
        sim: &SimFile,
        story: &Story,
        names: Vec<String>,
        hook_env: Vec<(String, String)>,
    ) -> anyhow::Result<Stage> {
        let mut panes = Vec::new();
        for (index, name) in names.into_iter().enumerate() {
            let (_, id) = sim.pane(&name)?;
            let transcript = sim
                .details
                .get(&name)
                .and_then(|d| d.transcript.as_ref())
                .map(|(path, _)| PathBuf::from(path));
            panes.push(Pane {
                name,
                id,
                agent: story.actors[index].agent,
                transcript,
            });
        }
        Ok(Stage {
            sim_dir: sim_dir.to_owned(),
            runtime: PathBuf::from(&sim.runtime_dir),
            panes,
            hook_env,
            hooks: BTreeMap::new(),
            spawned: Vec::new(),
            calls: (sim.backend == Backend::Fake)
                .then(|| ServerDir::new(PathBuf::from(&sim.socket_path)).calls_file()),
            requests: BTreeMap::new(),
            replies_read: 0,
        })
    }

    /// A pane's id and name, for the log.
    pub fn label(&self, pane: usize) -> (&str, &str) {
        let pane = &self.panes[pane];
        (&pane.id, &pane.name)
    }

    fn stamp(&self, pane: usize, options: StepOptions) -> anyhow::Result<()> {
        step::step(&self.sim_dir, &self.panes[pane].name, &options)
    }

    /// Stamps the pane in `state` with nothing left of what blocked it.
    fn go_on(&self, pane: usize, state: &str, attention: bool) -> anyhow::Result<()> {
        self.stamp(
            pane,
            StepOptions {
                state: Some(state.to_owned()),
                attention,
                no_attention: !attention,
                unset: BLOCKING.iter().map(|o| o.as_str().to_owned()).collect(),
                ..StepOptions::default()
            },
        )
    }

    fn grow(&self, pane: usize, records: u64) -> anyhow::Result<()> {
        if let Some(path) = &self.panes[pane].transcript {
            Generator::resume(path)?.append(path, records, 0, false)?;
        }
        Ok(())
    }

    /// Plays one move; returns what happened, for the log.
    pub fn play(&mut self, beat: &Beat) -> anyhow::Result<String> {
        let pane = beat.pane;
        match beat.what {
            Move::Start => {
                self.go_on(pane, "working", false)?;
                self.grow(pane, 2)?;
                Ok("idle → working: a new prompt".to_owned())
            }
            Move::Progress { records, context } => {
                self.grow(pane, records)?;
                self.stamp(
                    pane,
                    StepOptions {
                        context: Some(context),
                        ..StepOptions::default()
                    },
                )?;
                Ok(match self.panes[pane].transcript {
                    Some(_) => {
                        format!("working: {records} more transcript records, context {context}%")
                    }
                    None => format!("working: context {context}%"),
                })
            }
            Move::Ask { block, ask, pick } => self.ask(pane, block, ask, pick),
            Move::Resume => {
                self.settle(pane)?;
                Ok("blocked → working: answered at the desk".to_owned())
            }
            Move::Finish => {
                self.go_on(pane, "idle", true)?;
                self.grow(pane, 1)?;
                Ok("working → idle: done, with output to read".to_owned())
            }
        }
    }

    fn ask(&mut self, pane: usize, block: Block, ask: u32, pick: usize) -> anyhow::Result<String> {
        let agent = self.panes[pane].agent;
        let blocked = |detail: &str| StepOptions {
            state: Some("blocked".to_owned()),
            detail: Some(detail.to_owned()),
            ..StepOptions::default()
        };
        match block {
            Block::Permission => {
                let (tool, input) = CALLS[pick];
                let shown = call_summary(tool, input);
                if agent == "claude" {
                    // A name of its own, never one a forgotten run had.
                    let name = format!("{}-{ask}", self.panes[pane].name);
                    let started = self.permission_hook(pane, &name, tool, input);
                    // A hook that started is the pane's even when it was slow to say so: it is
                    // answered, reaped and forgotten like any other.
                    let spawned = Spawned::new(&self.sim_dir, &name);
                    if spawned.started() {
                        self.hooks.insert(pane, name);
                    }
                    self.spawned.push(spawned);
                    started?;
                    return Ok(format!(
                        "working → blocked: permission for {shown} (hook lane: its hook waits)"
                    ));
                }
                let mut options = blocked("permission");
                options.pending_tool = Some(tool.to_owned());
                let lane = if agent == "opencode" {
                    let id = format!("per_demo_{}_{ask}", pane + 1);
                    options.permission_request = Some(id.clone());
                    self.requests.insert(id, pane);
                    "api lane"
                } else {
                    "screen lane"
                };
                self.stamp(pane, options)?;
                Ok(format!(
                    "working → blocked: permission for {shown} ({lane})"
                ))
            }
            Block::Question => {
                let id = format!("que_demo_{}_{ask}", pane + 1);
                let mut options = blocked("question");
                options.question_request = Some(id.clone());
                options.questions = Some(QUESTIONS[pick].to_owned());
                self.stamp(pane, options)?;
                self.requests.insert(id, pane);
                let questions: Value = serde_json::from_str(QUESTIONS[pick])?;
                let text = questions[0]["question"].as_str().unwrap_or_default();
                Ok(format!(
                    "working → blocked: question {text:?} (its API serves it)"
                ))
            }
            Block::RateLimit => {
                self.stamp(pane, blocked("rate_limit"))?;
                Ok("working → blocked: rate limited".to_owned())
            }
        }
    }

    /// Starts the pane's real permission hook in the background, as the run `name`.
    fn permission_hook(
        &self,
        pane: usize,
        name: &str,
        tool: &str,
        input: &str,
    ) -> anyhow::Result<()> {
        let payload = serde_json::json!({
            "session_id": "",
            "transcript_path": "",
            "cwd": "",
            "permission_mode": "default",
            "hook_event_name": "PermissionRequest",
            "tool_name": tool,
            "tool_input": serde_json::from_str::<Value>(input)?,
        });
        let options = HookOptions {
            pane: self.panes[pane].name.clone(),
            agent: self.panes[pane].agent.to_owned(),
            event: "PermissionRequest".to_owned(),
            payload: Some(payload.to_string()),
            pane_facts: true,
            as_argument: false,
            name: Some(name.to_owned()),
            background: true,
            ready: None,
            env: self.hook_env.clone(),
        };
        hook::run(&self.sim_dir, &options)?;
        Ok(())
    }

    /// Answers whatever the pane is blocked on, as the person at the desk would, and has it go
    /// on working.
    fn settle(&mut self, pane: usize) -> anyhow::Result<()> {
        if let Some(name) = self.hooks.remove(&pane) {
            // The hook stamps the pane itself once it has the verdict. An app that answered a
            // moment ago made the verdict first; its answer stands.
            for request in hook::parked_for(&self.runtime, &self.panes[pane].id) {
                write_verdict(&self.runtime, &request)?;
            }
            // Its stamp lands before the pane's next move does (at a high --speed the next move
            // can come within the hook's look for its verdict).
            let deadline = Instant::now() + HOOK_EXIT;
            while hook::finished(&self.sim_dir, &name)?.is_none() && Instant::now() < deadline {
                std::thread::sleep(Duration::from_millis(5));
            }
            return Ok(());
        }
        let settled: Vec<String> = self
            .requests
            .iter()
            .filter(|(_, p)| **p == pane)
            .map(|(id, _)| id.clone())
            .collect();
        for id in &settled {
            self.requests.remove(id);
        }
        api::edit(&self.sim_dir, |s| {
            s.questions.retain(|q| !settled.contains(&q.request_id));
        })?;
        self.go_on(pane, "working", false)
    }

    /// What an app did since the last look; `story` says where each pane was.
    pub fn answers(&mut self, story: &Story) -> anyhow::Result<Vec<Answer>> {
        let mut answers = Vec::new();
        self.finished_hooks(&mut answers)?;
        self.api_replies(&mut answers)?;
        for pane in 0..self.panes.len() {
            let received = input::received(&self.sim_dir, &self.panes[pane].name, true)?;
            if received.is_empty() || self.hooks.contains_key(&pane) {
                continue;
            }
            let shown = received_summary(&received);
            let escape = received
                .iter()
                .any(|r| matches!(r, Received::Keys(keys) if keys.iter().any(|k| k == "Escape")));
            let text = received.iter().any(|r| matches!(r, Received::Text(_)));
            match story.actors[pane].phase {
                Phase::Blocked(_) => {
                    self.settle(pane)?;
                    answers.push(Answer {
                        pane,
                        phase: Phase::Working,
                        how: format!("answered on its screen ({shown}) → working"),
                    });
                }
                Phase::Idle if text => {
                    self.go_on(pane, "working", false)?;
                    answers.push(Answer {
                        pane,
                        phase: Phase::Working,
                        how: format!("steered ({shown}) → working"),
                    });
                }
                Phase::Working if escape && !text => {
                    self.go_on(pane, "idle", false)?;
                    answers.push(Answer {
                        pane,
                        phase: Phase::Idle,
                        how: format!("interrupted ({shown}) → idle"),
                    });
                }
                Phase::Working if text => answers.push(Answer {
                    pane,
                    phase: Phase::Working,
                    how: format!("steered mid-turn ({shown})"),
                }),
                Phase::Idle | Phase::Working => {}
            }
        }
        Ok(answers)
    }

    /// Permission hooks that ended: an app's verdict reached them.
    fn finished_hooks(&mut self, answers: &mut Vec<Answer>) -> anyhow::Result<()> {
        let hooks: Vec<(usize, String)> = self.hooks.iter().map(|(p, n)| (*p, n.clone())).collect();
        for (pane, name) in hooks {
            let Some(out) = hook::finished(&self.sim_dir, &name)? else {
                continue;
            };
            self.hooks.remove(&pane);
            let decision = serde_json::from_slice::<Value>(&out).ok().and_then(|v| {
                v["hookSpecificOutput"]["decision"]["behavior"]
                    .as_str()
                    .map(str::to_owned)
            });
            let how = match decision.as_deref() {
                Some("allow") => "allowed from the app (its hook got the verdict) → working",
                Some(_) => "denied from the app (its hook got the verdict) → working",
                None => {
                    // The hook gave up without a verdict; the agent goes on all the same.
                    self.go_on(pane, "working", false)?;
                    "its hook gave up waiting → working"
                }
            };
            answers.push(Answer {
                pane,
                phase: Phase::Working,
                how: how.to_owned(),
            });
        }
        Ok(())
    }

    /// Keeps the stage the same size: reaps the hooks that exited and forgets those whose verdict
    /// was read, rotates a transcript over its cap, moves a full call log aside. Returns a line
    /// for the log per pane whose transcript was rotated.
    pub fn upkeep(&mut self) -> anyhow::Result<Vec<(usize, String)>> {
        let hooks = &self.hooks;
        upkeep::reap_hooks(&self.sim_dir, &mut self.spawned, |name| {
            hooks.values().any(|waiting| waiting == name)
        })?;
        let mut notes = Vec::new();
        for (index, pane) in self.panes.iter().enumerate() {
            if let Some(path) = &pane.transcript
                && upkeep::bound_transcript(path)?
            {
                notes.push((
                    index,
                    format!(
                        "its transcript passed {} KiB: rotated (a fresh file at its path)",
                        upkeep::TRANSCRIPT_CAP / 1024
                    ),
                ));
            }
        }
        if let Some(calls) = &self.calls {
            upkeep::bound_log(calls, upkeep::CALLS_CAP)?;
        }
        Ok(notes)
    }

    /// POSTs the agent API recorded since the last look: answers to its requests.
    fn api_replies(&mut self, answers: &mut Vec<Answer>) -> anyhow::Result<()> {
        let path = api::replies_path(&self.sim_dir);
        let all = match std::fs::read(&path) {
            Ok(all) => all,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
            Err(e) => return Err(e).with_context(|| format!("reading {}", path.display())),
        };
        let Some(end) = all.iter().rposition(|b| *b == b'\n').map(|i| i + 1) else {
            return Ok(());
        };
        let fresh = all.get(self.replies_read..end).unwrap_or_default().to_vec();
        self.replies_read = end.max(self.replies_read);
        for line in fresh.split(|b| *b == b'\n').filter(|l| !l.is_empty()) {
            let Ok(reply) = serde_json::from_slice::<Value>(line) else {
                continue;
            };
            let id = reply["id"].as_str().unwrap_or_default();
            let Some(pane) = self.requests.remove(id) else {
                continue;
            };
            self.go_on(pane, "working", false)?;
            let kind = reply["kind"].as_str().unwrap_or("reply");
            answers.push(Answer {
                pane,
                phase: Phase::Working,
                how: format!("{kind} from the app ({}) → working", reply["body"]),
            });
        }
        Ok(())
    }
}

/// Writes the verdict of the person at the desk, unless one is there already.
fn write_verdict(runtime: &Path, request: &str) -> anyhow::Result<()> {
    let dir = runtime.join("verdicts");
    std::fs::create_dir_all(&dir)?;
    let verdict = schema::hook::Verdict {
        decision: schema::hook::Decision::Allow,
        request: request.to_owned(),
        message: None,
        answers: None,
    };
    let created = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(dir.join(request));
    match created {
        Ok(mut file) => {
            file.write_all(serde_json::to_string(&verdict)?.as_bytes())?;
            Ok(())
        }
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => Ok(()),
        Err(e) => Err(e).with_context(|| format!("writing the verdict of {request}")),
    }
}

/// `Bash \`cargo test\``: a tool call in a few words.
fn call_summary(tool: &str, input: &str) -> String {
    let input: Value = serde_json::from_str(input).unwrap_or(Value::Null);
    let what = ["command", "file_path", "url"]
        .iter()
        .find_map(|key| input[key].as_str());
    match what {
        Some(what) => format!("{tool} `{what}`"),
        None => tool.to_owned(),
    }
}

/// What a pane received, in a few words.
fn received_summary(received: &[Received]) -> String {
    received
        .iter()
        .map(|r| match r {
            Received::Keys(keys) => format!("keys {}", keys.join(" ")),
            Received::Text(text) => format!("text {text:?}"),
        })
        .collect::<Vec<_>>()
        .join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn calls_and_input_read_in_a_few_words() {
        assert_eq!(
            call_summary(CALLS[0].0, CALLS[0].1),
            "Bash `cargo test --workspace`"
        );
        assert_eq!(call_summary("Edit", CALLS[2].1), "Edit `src/parser.rs`");
        assert_eq!(call_summary("Task", "{}"), "Task");
        assert_eq!(
            received_summary(&[
                Received::Keys(vec!["Escape".into()]),
                Received::Text("go on".into())
            ]),
            "keys Escape, text \"go on\""
        );
    }

    #[test]
    fn every_canned_call_and_question_set_is_what_the_wire_carries() {
        for (tool, input) in CALLS {
            let input: Value = serde_json::from_str(input).unwrap();
            assert!(input.is_object(), "{tool}");
        }
        for questions in QUESTIONS {
            let parsed: Vec<schema::Question> = serde_json::from_str(questions).unwrap();
            assert!(!parsed.is_empty());
        }
    }

    #[test]
    fn the_desk_verdict_never_overwrites_an_apps() {
        let runtime = tempfile::tempdir().unwrap();
        write_verdict(runtime.path(), "req-1").unwrap();
        let path = runtime.path().join("verdicts/req-1");
        let verdict: schema::hook::Verdict =
            serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
        assert_eq!(verdict.decision, schema::hook::Decision::Allow);
        std::fs::write(&path, r#"{"decision":"deny","request":"req-1"}"#).unwrap();
        write_verdict(runtime.path(), "req-1").unwrap();
        assert!(std::fs::read_to_string(&path).unwrap().contains("deny"));
    }
}
