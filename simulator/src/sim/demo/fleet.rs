//! The demo's fleet as a fixture (`golden::fixture`), so `corral-sim up` brings it up like any
//! other: one pane per agent of the story, four to a session and two to a window, spread over
//! two repositories and a linked worktree, with transcripts for the agents whose store the
//! simulator writes, and the agent API's endpoint on the agents that have one.

use golden::fixture::{
    Fixture, Moment, Pane, Repo, Session, TranscriptFormat, TranscriptSpec, Window, Worktree,
};
use schema::State;

use super::story::{Phase, Story};

/// Session names, in order; a fleet bigger than their count numbers its sessions instead.
const SESSIONS: [&str; 4] = ["work", "ops", "lab", "play"];

/// Panes per window and windows per session.
const PER_WINDOW: usize = 2;
const PER_SESSION: usize = 4;

/// Where the panes work, in turn: a repository or a worktree of the fixture's.
const PLACES: [&str; 3] = ["api", "web", "api-auth"];

/// The name of pane `index` (an agent's name and its ordinal from 1: `opencode-2`).
pub fn pane_name(story: &Story, index: usize) -> String {
    format!("{}-{}", story.actors[index].agent, index + 1)
}

/// The agent's transcript store, for the agents whose format the simulator writes.
pub fn transcript_format(agent: &str) -> Option<TranscriptFormat> {
    match agent {
        "claude" => Some(TranscriptFormat::Claude),
        "codex" => Some(TranscriptFormat::Codex),
        _ => None,
    }
}

/// The agent's own session id, for the agents whose API needs it.
pub fn session_id(story: &Story, index: usize) -> Option<String> {
    (story.actors[index].agent == "opencode").then(|| format!("ses_demo_{}", index + 1))
}

fn session_name(index: usize) -> String {
    match SESSIONS.get(index) {
        Some(name) => (*name).to_owned(),
        None => format!("work{}", index + 1),
    }
}

fn pane(story: &Story, index: usize, api: &str) -> Pane {
    let actor = &story.actors[index];
    let state = match actor.phase {
        Phase::Idle => State::Idle,
        Phase::Working | Phase::Blocked(_) => State::Working,
    };
    let opencode = actor.agent == "opencode";
    Pane {
        name: pane_name(story, index),
        repeat: 1,
        title: Some(format!(
            "{} on {}",
            actor.agent,
            PLACES[index % PLACES.len()]
        )),
        repo: Some(PLACES[index % PLACES.len()].to_owned()),
        dir: None,
        agent: Some(actor.agent.to_owned()),
        state: Some(state),
        detail: None,
        since: Some(Moment::Relative(format!("-{}s", 20 + 7 * index))),
        turn_at: None,
        stamped_at: None,
        attention: false,
        context: Some(actor.context),
        context_at: None,
        mute_until: None,
        session_id: session_id(story, index),
        pending_tool: None,
        pending_call: None,
        api_endpoint: opencode.then(|| api.to_owned()),
        permission_request: None,
        question: None,
        transcript: transcript_format(actor.agent).map(|format| TranscriptSpec {
            format,
            sample: None,
            corpus: false,
            events: 24,
            unknown_every: None,
            pending_call: false,
            hole: None,
            stamp: true,
        }),
        options: Default::default(),
    }
}

/// The fixture of the story's fleet; `api` is the agent API's base URL.
pub fn fixture(story: &Story, api: &str) -> Fixture {
    let indexes: Vec<usize> = (0..story.actors.len()).collect();
    let sessions = indexes
        .chunks(PER_SESSION)
        .enumerate()
        .map(|(s, members)| Session {
            name: session_name(s),
            windows: members
                .chunks(PER_WINDOW)
                .map(|window| Window {
                    repeat: 1,
                    panes: window.iter().map(|&i| pane(story, i, api)).collect(),
                })
                .collect(),
        })
        .collect();
    Fixture {
        description: Some(format!(
            "corral-sim demo: {} agents, animated",
            story.actors.len()
        )),
        passthrough: false,
        repos: vec![
            Repo {
                name: "api".into(),
                branch: "main".into(),
                worktrees: vec![Worktree {
                    name: "api-auth".into(),
                    branch: "feature/auth".into(),
                }],
            },
            Repo {
                name: "web".into(),
                branch: "develop".into(),
                worktrees: Vec::new(),
            },
        ],
        clients: Vec::new(),
        sessions,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_fleet_has_one_pane_per_agent_grouped_in_sessions_and_windows() {
        let story = Story::new(1, 9);
        let fixture = fixture(&story, "http://127.0.0.1:5");
        let names: Vec<&str> = fixture.sessions.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(names, ["work", "ops", "lab"]);
        let shape: Vec<Vec<usize>> = fixture
            .sessions
            .iter()
            .map(|s| s.windows.iter().map(|w| w.panes.len()).collect())
            .collect();
        assert_eq!(shape, [vec![2, 2], vec![2, 2], vec![1]]);
        let panes: Vec<&Pane> = fixture
            .sessions
            .iter()
            .flat_map(|s| s.windows.iter().flat_map(|w| w.panes.iter()))
            .collect();
        let names: Vec<&str> = panes.iter().map(|p| p.name.as_str()).collect();
        assert_eq!(
            names,
            [
                "claude-1",
                "opencode-2",
                "codex-3",
                "gemini-4",
                "claude-5",
                "opencode-6",
                "codex-7",
                "gemini-8",
                "claude-9"
            ]
        );
        for (i, pane) in panes.iter().enumerate() {
            let agent = pane.agent.as_deref().unwrap();
            assert_eq!(
                pane.api_endpoint.is_some(),
                agent == "opencode",
                "{}",
                pane.name
            );
            assert_eq!(
                pane.transcript.as_ref().map(|t| t.format),
                transcript_format(agent)
            );
            let expected = match story.actors[i].phase {
                Phase::Idle => State::Idle,
                _ => State::Working,
            };
            assert_eq!(pane.state, Some(expected));
        }
    }

    #[test]
    fn the_fixture_is_one_the_loader_reads() {
        let story = Story::new(4, 6);
        let text = toml::to_string(&fixture(&story, "http://127.0.0.1:5")).unwrap();
        let again: Fixture = toml::from_str(&text).unwrap();
        assert_eq!(again, fixture(&story, "http://127.0.0.1:5"));
    }
}
