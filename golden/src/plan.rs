//! A fixture expanded into the concrete fleet: every `repeat` unrolled, every name and title
//! template filled, every time resolved against "now", every `@agent_*` option listed in stamp
//! order, and the tmux ids a fresh server will assign predicted (creation order: `%0`, `%1`, ...).

use std::collections::{BTreeMap, BTreeSet};

use schema::PaneOption;

use crate::Error;
use crate::clock;
use crate::fixture::{Fixture, Moment, Pane, PermissionRequest, QuestionRequest, TranscriptSpec};

/// One pane of the expanded fleet.
#[derive(Debug, Clone, PartialEq)]
pub struct PlannedPane {
    /// Fixture-local name.
    pub name: String,
    /// Predicted `%N`.
    pub id: u32,
    /// Session name.
    pub session: String,
    /// Window index.
    pub window: u32,
    /// Pane index.
    pub index: u32,
    /// Repository or worktree name the pane starts in.
    pub repo: Option<String>,
    /// Subdirectory inside it.
    pub dir: Option<String>,
    /// Title, when the fixture sets one.
    pub title: Option<String>,
    /// Agent name.
    pub agent: Option<String>,
    /// The agent's session id.
    pub session_id: Option<String>,
    /// Options to stamp, in order.
    pub options: Vec<(String, String)>,
    /// A hook request to park.
    pub permission_request: Option<PermissionRequest>,
    /// A question to serve.
    pub question: Option<QuestionRequest>,
    /// A transcript to write.
    pub transcript: Option<TranscriptSpec>,
    /// `max(since, turn_at)`.
    pub episode_ms: u64,
    /// The stamp time.
    pub stamped_at_ms: u64,
}

/// A window of the expanded fleet.
#[derive(Debug, Clone, PartialEq)]
pub struct PlannedWindow {
    /// Index.
    pub index: u32,
    /// Panes in order.
    pub panes: Vec<PlannedPane>,
}

/// A session of the expanded fleet.
#[derive(Debug, Clone, PartialEq)]
pub struct PlannedSession {
    /// Name.
    pub name: String,
    /// Windows in order.
    pub windows: Vec<PlannedWindow>,
}

fn fill(template: &str, values: &[(&str, String)]) -> String {
    let mut out = template.to_owned();
    for (key, value) in values {
        out = out.replace(&format!("{{{key}}}"), value);
    }
    out
}

fn valid_name(name: &str) -> bool {
    !name.is_empty()
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
}

/// A stable agent session id for a pane, shaped like a UUID.
pub fn session_id_for(name: &str) -> String {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    let mut words = [0u64; 2];
    for (round, word) in words.iter_mut().enumerate() {
        for byte in name.bytes().chain([round as u8]) {
            hash ^= u64::from(byte);
            hash = hash.wrapping_mul(0x0100_0000_01b3);
        }
        *word = hash;
    }
    let hex = format!("{:016x}{:016x}", words[0], words[1]);
    format!(
        "{}-{}-4{}-8{}-{}",
        &hex[0..8],
        &hex[8..12],
        &hex[13..16],
        &hex[17..20],
        &hex[20..32]
    )
}

/// A pane's options in stamp order, its episode and its stamp time.
type Stamps = (Vec<(String, String)>, u64, u64);

/// The `@agent_*` options of a pane, in stamp order, with its episode and stamp time.
fn options(
    pane: &Pane,
    name: &str,
    session_id: Option<&str>,
    values: &[(&str, String)],
    now: u64,
) -> Result<Stamps, Error> {
    let mut out: Vec<(String, String)> = Vec::new();
    let Some(agent) = &pane.agent else {
        if pane.state.is_some() || pane.detail.is_some() {
            return Err(Error::new(format!(
                "pane {name}: `state` and `detail` need `agent`"
            )));
        }
        for (key, value) in &pane.options {
            out.push((key.clone(), value.clone()));
        }
        return Ok((out, 0, 0));
    };
    let at = |m: &Option<Moment>| -> Result<Option<u64>, Error> {
        m.as_ref()
            .map(|m| clock::moment(m, now))
            .transpose()
            .map_err(|err| err.context(format!("pane {name}")))
    };
    let mut push =
        |option: PaneOption, value: String| out.push((option.as_str().to_owned(), value));
    push(PaneOption::Name, agent.clone());
    let since = match at(&pane.since)? {
        Some(ms) => Some(ms),
        None if pane.state.is_some() => Some(now),
        None => None,
    };
    let turn_at = at(&pane.turn_at)?;
    let stamped_at = at(&pane.stamped_at)?.unwrap_or(now);
    if let Some(state) = &pane.state {
        push(PaneOption::State, state.as_str().to_owned());
    }
    if let Some(detail) = &pane.detail {
        push(PaneOption::Detail, detail.as_str().to_owned());
    }
    if let Some(ms) = since {
        push(PaneOption::Since, ms.to_string());
    }
    if let Some(ms) = turn_at {
        push(PaneOption::TurnAt, ms.to_string());
    }
    push(PaneOption::StampedAt, stamped_at.to_string());
    if pane.attention {
        push(PaneOption::Attention, "1".into());
    }
    if let Some(id) = session_id {
        push(PaneOption::Session, id.to_owned());
    }
    if let Some(request) = &pane.permission_request {
        push(PaneOption::PermissionRequest, fill(&request.id, values));
    }
    if let Some(question) = &pane.question {
        push(PaneOption::QuestionRequest, fill(&question.id, values));
    }
    if let Some(url) = &pane.api_endpoint {
        push(PaneOption::ApiEndpoint, url.clone());
    }
    if let Some(tool) = &pane.pending_tool {
        push(PaneOption::PendingTool, tool.clone());
    }
    if let Some(call) = &pane.pending_call {
        push(PaneOption::PendingCall, call.clone());
    }
    if let Some(context) = pane.context {
        if context > 100 {
            return Err(Error::new(format!(
                "pane {name}: context {context} is over 100"
            )));
        }
        push(PaneOption::Context, context.to_string());
        push(
            PaneOption::ContextAt,
            at(&pane.context_at)?.unwrap_or(now).to_string(),
        );
    }
    if let Some(ms) = at(&pane.mute_until)? {
        push(PaneOption::MuteUntil, ms.to_string());
    }
    for (key, value) in &pane.options {
        if !key.starts_with('@') {
            return Err(Error::new(format!(
                "pane {name}: option {key:?} must start with @"
            )));
        }
        out.retain(|(k, _)| k != key);
        out.push((key.clone(), value.clone()));
    }
    let episode = since.unwrap_or(0).max(turn_at.unwrap_or(0));
    Ok((out, episode, stamped_at))
}

/// Expands a fixture.
pub fn expand(fixture: &Fixture, now: u64) -> Result<Vec<PlannedSession>, Error> {
    let mut repos = BTreeSet::new();
    for repo in &fixture.repos {
        for name in std::iter::once(&repo.name).chain(repo.worktrees.iter().map(|w| &w.name)) {
            if !valid_name(name) || !repos.insert(name.clone()) {
                return Err(Error::new(format!(
                    "repo name {name:?} is invalid or used twice"
                )));
            }
        }
    }
    if fixture.sessions.is_empty() {
        return Err(Error::new("a fixture needs at least one [[session]]"));
    }
    let mut names = BTreeSet::new();
    let mut sessions = Vec::new();
    let mut next_id = 0u32;
    let mut ordinal = 0u32;
    for session in &fixture.sessions {
        if !valid_name(&session.name)
            || sessions
                .iter()
                .any(|s: &PlannedSession| s.name == session.name)
        {
            return Err(Error::new(format!(
                "session name {:?} is invalid or used twice (letters, digits, - and _)",
                session.name
            )));
        }
        let mut windows = Vec::new();
        for window in &session.windows {
            for w in 0..window.repeat {
                let index = windows.len() as u32;
                let mut panes = Vec::new();
                for pane in &window.panes {
                    for i in 0..pane.repeat {
                        let mut values = vec![
                            ("session", session.name.clone()),
                            ("window", index.to_string()),
                            ("pane", panes.len().to_string()),
                            ("w", w.to_string()),
                            ("i", i.to_string()),
                            ("n", ordinal.to_string()),
                        ];
                        let name = fill(&pane.name, &values);
                        if name.is_empty() || name.starts_with('%') || !names.insert(name.clone()) {
                            return Err(Error::new(format!(
                                "pane name {name:?} is empty, starts with %, or is used twice (templates: {{session}} {{window}} {{pane}} {{w}} {{i}} {{n}})"
                            )));
                        }
                        values.push(("name", name.clone()));
                        if let Some(repo) = &pane.repo
                            && !repos.contains(repo)
                        {
                            return Err(Error::new(format!(
                                "pane {name}: no repo or worktree named {repo:?}"
                            )));
                        }
                        let session_id = pane
                            .session_id
                            .clone()
                            .or_else(|| pane.transcript.as_ref().map(|_| session_id_for(&name)));
                        let (options, episode_ms, stamped_at_ms) =
                            options(pane, &name, session_id.as_deref(), &values, now)?;
                        let fill_request = |r: &PermissionRequest| PermissionRequest {
                            id: fill(&r.id, &values),
                            ..r.clone()
                        };
                        panes.push(PlannedPane {
                            id: next_id,
                            session: session.name.clone(),
                            window: index,
                            index: panes.len() as u32,
                            repo: pane.repo.clone(),
                            dir: pane.dir.clone(),
                            title: pane.title.as_ref().map(|t| fill(t, &values)),
                            agent: pane.agent.clone(),
                            session_id,
                            options,
                            permission_request: pane.permission_request.as_ref().map(fill_request),
                            question: pane.question.as_ref().map(|q| QuestionRequest {
                                id: fill(&q.id, &values),
                                ..q.clone()
                            }),
                            transcript: pane.transcript.clone(),
                            episode_ms,
                            stamped_at_ms,
                            name,
                        });
                        next_id += 1;
                        ordinal += 1;
                    }
                }
                if panes.is_empty() {
                    return Err(Error::new(format!(
                        "session {}: a window needs at least one pane",
                        session.name
                    )));
                }
                windows.push(PlannedWindow { index, panes });
            }
        }
        if windows.is_empty() {
            return Err(Error::new(format!(
                "session {}: needs at least one window",
                session.name
            )));
        }
        sessions.push(PlannedSession {
            name: session.name.clone(),
            windows,
        });
    }
    Ok(sessions)
}

/// Every pane of an expanded fleet, in creation order.
pub fn panes(sessions: &[PlannedSession]) -> impl Iterator<Item = &PlannedPane> {
    sessions
        .iter()
        .flat_map(|s| s.windows.iter().flat_map(|w| w.panes.iter()))
}

/// Name → `%N` for every pane.
pub fn ids(sessions: &[PlannedSession]) -> BTreeMap<String, String> {
    panes(sessions)
        .map(|p| (p.name.clone(), format!("%{}", p.id)))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fixture(text: &str) -> Fixture {
        toml::from_str(text).unwrap()
    }

    #[test]
    fn repeats_and_templates_expand() {
        let f = fixture(
            r#"
            [[session]]
            name = "big"
            [[session.window]]
            repeat = 2
            [[session.window.pane]]
            name = "a-{window}-{pane}"
            repeat = 3
            agent = "claude"
            state = "working"
            since = "-10s"
            title = "TITLE-CANARY-{name}"
            "#,
        );
        let plan = expand(&f, 100_000).unwrap();
        let all: Vec<_> = panes(&plan).collect();
        assert_eq!(all.len(), 6);
        assert_eq!(all[4].name, "a-1-1");
        assert_eq!(all[4].id, 4);
        assert_eq!(all[4].window, 1);
        assert_eq!(all[4].title.as_deref(), Some("TITLE-CANARY-a-1-1"));
        assert!(
            all[0]
                .options
                .contains(&("@agent_since".into(), "90000".into()))
        );
        assert_eq!(all[0].episode_ms, 90_000);
    }

    #[test]
    fn bad_fixtures_are_refused() {
        let dup = fixture(
            r#"
            [[session]]
            name = "s"
            [[session.window]]
            [[session.window.pane]]
            name = "same"
            repeat = 2
            "#,
        );
        assert!(
            expand(&dup, 0)
                .unwrap_err()
                .to_string()
                .contains("used twice")
        );
        let unknown_key = toml::from_str::<Fixture>(
            "[[session]]\nname='s'\n[[session.window]]\n[[session.window.pane]]\nname='a'\nstat='idle'\n",
        );
        assert!(unknown_key.unwrap_err().to_string().contains("stat"));
        let bad_state = toml::from_str::<Fixture>(
            "[[session]]\nname='s'\n[[session.window]]\n[[session.window.pane]]\nname='a'\nagent='x'\nstate='zombie'\n",
        );
        assert!(bad_state.is_err());
        let no_repo = fixture(
            "[[session]]\nname='s'\n[[session.window]]\n[[session.window.pane]]\nname='a'\nrepo='nope'\n",
        );
        assert!(
            expand(&no_repo, 0)
                .unwrap_err()
                .to_string()
                .contains("nope")
        );
    }

    #[test]
    fn session_ids_are_stable_and_uuid_shaped() {
        let id = session_id_for("pane-a");
        assert_eq!(id, session_id_for("pane-a"));
        assert_ne!(id, session_id_for("pane-b"));
        assert_eq!(id.len(), 36);
        assert_eq!(id.matches('-').count(), 4);
    }
}
