//! Target resolution (`-t`): `%N`, `@N`, `$N`, `session`, `session:window`, `session:window.pane`,
//! `window.pane`, with tmux's error texts. A failed lookup also reports how far it got, because
//! `display-message` (whose target may fail) falls back to that session's or window's pane.

use super::state::{PanePos, Server};

/// A target that names nothing, with tmux's message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Missing {
    /// `can't find session: x` and the like.
    pub message: String,
    /// The pane tmux falls back to when the lookup may fail.
    pub partial: Option<PanePos>,
}

fn missing(kind: &str, what: &str, partial: Option<PanePos>) -> Missing {
    Missing {
        message: format!("can't find {kind}: {what}"),
        partial,
    }
}

fn number(text: &str) -> Option<u32> {
    (!text.is_empty() && text.bytes().all(|b| b.is_ascii_digit()))
        .then(|| text.parse().ok())
        .flatten()
}

fn id(text: &str, sigil: char) -> Option<u32> {
    text.strip_prefix(sigil).and_then(number)
}

/// The session a command without a session in its target means: the first one by name.
fn current_session(server: &Server) -> Option<usize> {
    server.sessions_sorted().first().copied()
}

/// Finds a session by `$N`, exact name, or unique name prefix.
pub fn find_session(server: &Server, text: &str) -> Option<usize> {
    if let Some(n) = id(text, '$') {
        return server.sessions.iter().position(|s| s.id == n);
    }
    if let Some(at) = server.sessions.iter().position(|s| s.name == text) {
        return Some(at);
    }
    let prefixed: Vec<usize> = (0..server.sessions.len())
        .filter(|at| server.sessions[*at].name.starts_with(text))
        .collect();
    match prefixed.as_slice() {
        [one] if !text.is_empty() => Some(*one),
        _ => None,
    }
}

/// Resolves a session target (`has-session -t`, `new-window -t`, ...).
pub fn session(server: &Server, target: &str) -> Result<usize, Missing> {
    if let Some(n) = id(target, '%') {
        return server
            .find_pane(n)
            .map(|p| p.session)
            .ok_or_else(|| missing("pane", target, None));
    }
    let name = target.split(':').next().unwrap_or(target);
    if name.is_empty() {
        return current_session(server).ok_or_else(|| missing("session", target, None));
    }
    find_session(server, name).ok_or_else(|| missing("session", name, None))
}

/// Resolves a window part (`3`, `@4`, empty for the current one) inside a session.
fn window_in(server: &Server, session: usize, text: &str) -> Option<usize> {
    let s = &server.sessions[session];
    if text.is_empty() {
        return s.windows.iter().position(|w| w.index == s.current);
    }
    if let Some(n) = id(text, '@') {
        return s.windows.iter().position(|w| w.id == n);
    }
    let n = number(text)?;
    s.windows.iter().position(|w| w.index == n)
}

/// Resolves a pane target.
pub fn pane(server: &Server, target: &str) -> Result<PanePos, Missing> {
    if target.starts_with('%') {
        return id(target, '%')
            .and_then(|n| server.find_pane(n))
            .ok_or_else(|| missing("pane", target, None));
    }
    if target.starts_with('@') && !target.contains(['.', ':']) {
        for (s, session) in server.sessions.iter().enumerate() {
            if let Some(w) = session
                .windows
                .iter()
                .position(|w| Some(w.id) == id(target, '@'))
            {
                return server
                    .active_pane(s, w)
                    .ok_or_else(|| missing("window", target, None));
            }
        }
        return Err(missing("window", target, None));
    }
    if target.starts_with('$') && !target.contains([':', '.']) {
        return find_session(server, target)
            .and_then(|s| server.session_active_pane(s))
            .ok_or_else(|| missing("session", target, None));
    }
    let (session_part, rest) = match target.split_once(':') {
        Some((s, rest)) => (Some(s), rest),
        None => (None, target),
    };
    let session = match session_part {
        Some("") => current_session(server).ok_or_else(|| missing("session", "", None))?,
        Some(name) => find_session(server, name).ok_or_else(|| missing("session", name, None))?,
        None if !rest.contains('.') => {
            // A bare word: a session name, else nothing (tmux says it found no pane).
            return find_session(server, rest)
                .and_then(|s| server.session_active_pane(s))
                .ok_or_else(|| missing("pane", target, None));
        }
        None => current_session(server).ok_or_else(|| missing("session", "", None))?,
    };
    let fallback = server.session_active_pane(session);
    let (window_part, pane_part) = match rest.rsplit_once('.') {
        Some((w, p)) => (w, Some(p)),
        None => (rest, None),
    };
    let window = window_in(server, session, window_part)
        .ok_or_else(|| missing("window", window_part, fallback))?;
    let active = server.active_pane(session, window);
    let Some(pane_part) = pane_part else {
        return active.ok_or_else(|| missing("pane", target, fallback));
    };
    let panes = &server.sessions[session].windows[window].panes;
    let found = if let Some(n) = id(pane_part, '%') {
        panes.iter().position(|p| p.id == n)
    } else if pane_part.is_empty() {
        active.map(|a| a.pane)
    } else {
        number(pane_part)
            .map(|n| n as usize)
            .filter(|n| *n < panes.len())
    };
    found
        .map(|p| PanePos {
            session,
            window,
            pane: p,
        })
        .ok_or_else(|| missing("pane", pane_part, active))
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;
    use crate::fake::state::{Pane, Session, Window};

    fn server() -> Server {
        let pane = |id| Pane {
            id,
            title: String::new(),
            cwd: "/".into(),
            pid: 1,
            command: Vec::new(),
            options: BTreeMap::new(),
        };
        Server {
            sessions: vec![Session {
                id: 0,
                name: "s1".into(),
                windows: vec![Window {
                    id: 0,
                    index: 0,
                    panes: vec![pane(0), pane(1)],
                    active: 0,
                    ..Window::default()
                }],
                current: 0,
                ..Session::default()
            }],
            ..Server::default()
        }
    }

    /// Messages as tmux 3.3a's `kill-pane -t <target>` printed them.
    #[test]
    fn messages_match_tmux() {
        let server = server();
        let message = |t: &str| pane(&server, t).unwrap_err().message;
        assert_eq!(message("%9"), "can't find pane: %9");
        assert_eq!(message("s1:0.5"), "can't find pane: 5");
        assert_eq!(message("nosuch:0.0"), "can't find session: nosuch");
        assert_eq!(message("s1:9"), "can't find window: 9");
        assert_eq!(message("@9"), "can't find window: @9");
        assert_eq!(message("$9"), "can't find session: $9");
        assert_eq!(message("nosuch"), "can't find pane: nosuch");
        assert_eq!(message("%x"), "can't find pane: %x");
    }

    #[test]
    fn finds_panes_every_way() {
        let server = server();
        let second = PanePos {
            session: 0,
            window: 0,
            pane: 1,
        };
        assert_eq!(pane(&server, "%1"), Ok(second));
        assert_eq!(pane(&server, "s1:0.1"), Ok(second));
        assert_eq!(pane(&server, "s1:0.%1"), Ok(second));
        assert_eq!(pane(&server, "s1").unwrap().pane, 0);
        assert_eq!(pane(&server, "@0").unwrap().pane, 0);
        assert_eq!(
            pane(&server, "s1:0.5").unwrap_err().partial.unwrap().pane,
            0
        );
    }
}
