//! Which file is a pane's transcript. Only the pane decides, never a request: the path its
//! agent's hook stamped (`@agent_transcript`), else the agent's store layout walked from the
//! agent's session id (`@agent_session`) and the pane's working directory.
//!
//! Claude Code keeps `<config>/projects/<cwd with every non-alphanumeric as ->/<session>.jsonl`
//! (`<config>` is `$CLAUDE_CONFIG_DIR`, else `~/.claude`; a project name over 200 characters is
//! shortened by Claude with a hash, so every project dir is searched when the direct one misses).
//! Codex keeps `<home>/sessions/YYYY/MM/DD/rollout-<time>-<session>.jsonl` (`<home>` is
//! `$CODEX_HOME`, else `~/.codex`), searched newest day first. Two stores are refused outright:
//! cursor-agent's and OpenCode's.

use std::path::{Path, PathBuf};

/// What the pane says about its transcript.
#[derive(Debug, Clone, Copy)]
pub struct PaneStore<'a> {
    /// `@agent_name`.
    pub agent: &'a str,
    /// `@agent_transcript`, when stamped.
    pub transcript: Option<&'a str>,
    /// `@agent_session`, when stamped.
    pub session: Option<&'a str>,
    /// The pane's working directory.
    pub cwd: Option<&'a str>,
}

/// Where the agents keep their stores on this machine.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct StoreRoots {
    /// Claude Code's config dir.
    pub claude: Option<PathBuf>,
    /// Codex's home.
    pub codex: Option<PathBuf>,
}

impl StoreRoots {
    /// The roots for an environment given as a lookup.
    pub fn from_vars(var: impl Fn(&str) -> Option<std::ffi::OsString>) -> StoreRoots {
        let absolute = |name: &str| var(name).map(PathBuf::from).filter(|p| p.is_absolute());
        let home = absolute("HOME");
        StoreRoots {
            claude: absolute("CLAUDE_CONFIG_DIR")
                .or_else(|| home.as_ref().map(|h| h.join(".claude"))),
            codex: absolute("CODEX_HOME").or_else(|| home.as_ref().map(|h| h.join(".codex"))),
        }
    }

    /// The roots of this process's environment.
    pub fn from_env() -> StoreRoots {
        StoreRoots::from_vars(|name| std::env::var_os(name))
    }
}

/// Why a pane has no transcript to serve.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Missing {
    /// The agent's store is refused; the sentence says why.
    Unsupported(&'static str),
    /// Nothing on the pane leads to a file.
    NotFound,
}

/// Most day directories of a Codex store searched for a session.
const CODEX_DAYS: usize = 1000;

/// The pane's transcript file.
pub fn locate(pane: &PaneStore<'_>, roots: &StoreRoots) -> Result<PathBuf, Missing> {
    if let Some(reason) = refusal(pane.agent) {
        return Err(Missing::Unsupported(reason));
    }
    if let Some(path) = pane.transcript.filter(|p| Path::new(p).is_absolute()) {
        return Ok(PathBuf::from(path));
    }
    let Some(session) = pane.session.filter(|s| is_plain_name(s)) else {
        return Err(Missing::NotFound);
    };
    // Only a store whose layout is known is walked: another agent's session id names no file
    // in Claude Code's projects.
    let found = match pane.agent {
        "codex" => roots
            .codex
            .as_deref()
            .and_then(|home| codex_rollout(&home.join("sessions"), session)),
        "claude" | "claude-code" => roots
            .claude
            .as_deref()
            .and_then(|config| claude_project_file(&config.join("projects"), pane.cwd, session)),
        _ => None,
    };
    found.ok_or(Missing::NotFound)
}

/// The refusal sentence for an agent whose store cannot be served.
pub fn refusal(agent: &str) -> Option<&'static str> {
    match agent {
        "cursor-agent" | "cursor" => Some(
            "cursor-agent's transcripts have no tool results, timestamps or version stamp, so \
             their events cannot be served",
        ),
        "opencode" => Some(
            "OpenCode keeps its conversation in an embedded database, not in a transcript file",
        ),
        _ => None,
    }
}

/// A session id is used as a file name: nothing that could climb out of the store.
fn is_plain_name(session: &str) -> bool {
    !session.is_empty() && session != "." && session != ".." && !session.contains(['/', '\0'])
}

/// Claude's project directory name for a working directory.
fn claude_project(cwd: &str) -> String {
    cwd.chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
        .collect()
}

fn claude_project_file(projects: &Path, cwd: Option<&str>, session: &str) -> Option<PathBuf> {
    let file = format!("{session}.jsonl");
    if let Some(cwd) = cwd {
        let direct = projects.join(claude_project(cwd)).join(&file);
        if direct.is_file() {
            return Some(direct);
        }
    }
    std::fs::read_dir(projects)
        .ok()?
        .filter_map(Result::ok)
        .map(|entry| entry.path().join(&file))
        .find(|path| path.is_file())
}

/// Entries of a directory, names sorted newest-first (the store's names sort by date).
fn sorted_desc(dir: &Path) -> Vec<PathBuf> {
    let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)
        .map(|it| it.filter_map(Result::ok).map(|e| e.path()).collect())
        .unwrap_or_default();
    entries.sort();
    entries.reverse();
    entries
}

fn codex_rollout(sessions: &Path, session: &str) -> Option<PathBuf> {
    let suffix = format!("-{session}.jsonl");
    let days = sorted_desc(sessions)
        .into_iter()
        .flat_map(|year| sorted_desc(&year))
        .flat_map(|month| sorted_desc(&month))
        .take(CODEX_DAYS);
    for day in days {
        let hit = sorted_desc(&day).into_iter().find(|file| {
            file.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with("rollout-") && n.ends_with(&suffix))
        });
        if hit.is_some() {
            return hit;
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pane<'a>(
        agent: &'a str,
        transcript: Option<&'a str>,
        session: Option<&'a str>,
    ) -> PaneStore<'a> {
        PaneStore {
            agent,
            transcript,
            session,
            cwd: Some("/home/me/my_app"),
        }
    }

    fn touch(path: &Path) {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, "{}\n").unwrap();
    }

    #[test]
    fn the_stamped_path_wins_and_a_relative_one_is_ignored() {
        let roots = StoreRoots::default();
        assert_eq!(
            locate(&pane("claude", Some("/t/x.jsonl"), None), &roots),
            Ok(PathBuf::from("/t/x.jsonl"))
        );
        assert_eq!(
            locate(&pane("claude", Some("x.jsonl"), None), &roots),
            Err(Missing::NotFound)
        );
    }

    #[test]
    fn refused_stores_are_unsupported_even_with_a_stamped_path() {
        for agent in ["cursor-agent", "opencode"] {
            assert!(matches!(
                locate(
                    &pane(agent, Some("/t/x.jsonl"), None),
                    &StoreRoots::default()
                ),
                Err(Missing::Unsupported(_))
            ));
        }
    }

    #[test]
    fn claude_layout_is_walked_from_the_session_and_cwd() {
        let dir = tempfile::tempdir().unwrap();
        let roots = StoreRoots::from_vars(|n| (n == "HOME").then(|| dir.path().into()));
        let file = dir.path().join(".claude/projects/-home-me-my-app/s1.jsonl");
        touch(&file);
        assert_eq!(locate(&pane("claude", None, Some("s1")), &roots), Ok(file));
        // A project dir Claude shortened is found by searching every project.
        let other = dir
            .path()
            .join(".claude/projects/-home-me-x-123abc/s2.jsonl");
        touch(&other);
        assert_eq!(locate(&pane("claude", None, Some("s2")), &roots), Ok(other));
        assert_eq!(
            locate(&pane("claude", None, Some("../../etc/passwd")), &roots),
            Err(Missing::NotFound)
        );
        // Another agent's session never names a file in Claude Code's store.
        assert_eq!(
            locate(&pane("gemini", None, Some("s1")), &roots),
            Err(Missing::NotFound)
        );
    }

    #[test]
    fn codex_layout_is_searched_newest_day_first() {
        let dir = tempfile::tempdir().unwrap();
        let roots = StoreRoots::from_vars(|n| (n == "CODEX_HOME").then(|| dir.path().into()));
        let old = dir
            .path()
            .join("sessions/2026/01/02/rollout-2026-01-02T10-00-00-abc.jsonl");
        let new = dir
            .path()
            .join("sessions/2026/03/01/rollout-2026-03-01T10-00-00-abc.jsonl");
        touch(&old);
        touch(&new);
        touch(
            &dir.path()
                .join("sessions/2026/03/01/rollout-2026-03-01T11-00-00-zzz.jsonl"),
        );
        assert_eq!(locate(&pane("codex", None, Some("abc")), &roots), Ok(new));
        assert_eq!(
            locate(&pane("codex", None, Some("nope")), &roots),
            Err(Missing::NotFound)
        );
    }
}
