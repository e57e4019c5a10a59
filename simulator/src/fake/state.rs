//! The fake server's state: sessions, windows, panes (with their user options) and attached
//! clients, kept as JSON in the server directory and changed only under an exclusive file lock,
//! so concurrent invocations never lose an update.
//!
//! The socket path names a directory: `state.json` exists while the server "runs"; `lock`,
//! `tty/<N>` (each pane's tty), `log.ndjson` (send-keys and display-message -c), `calls.ndjson`
//! (every invocation) and `faults.json` sit beside it. A directory without `state.json` is a
//! server that has exited, as a stale tmux socket is.

use std::collections::BTreeMap;
use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

/// The whole server.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Server {
    /// Next `$N` session id.
    pub next_session: u32,
    /// Next `@N` window id.
    pub next_window: u32,
    /// Next `%N` pane id.
    pub next_pane: u32,
    /// Next synthetic pane pid.
    pub next_pid: u32,
    /// Sessions in creation order (listings sort them by name, as tmux does).
    pub sessions: Vec<Session>,
    /// Attached clients, in attach order.
    pub clients: Vec<Client>,
    /// Server and global options that were set (`allow-passthrough`, `@name` with `-g`).
    pub options: BTreeMap<String, String>,
    /// When the server started, in seconds since the epoch (`start_time`).
    #[serde(default)]
    pub start_time: u64,
}

/// A session.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Session {
    /// `$N`.
    pub id: u32,
    /// Name.
    pub name: String,
    /// Windows sorted by index.
    pub windows: Vec<Window>,
    /// Index of the current window.
    pub current: u32,
    /// When it was created, in seconds since the epoch (`session_created`).
    #[serde(default)]
    pub created: u64,
    /// Its size (`new-session -x -y`), which its windows take; 0 before this was recorded.
    #[serde(default)]
    pub size: (u32, u32),
    /// Its working directory (`session_path`).
    #[serde(default)]
    pub path: String,
    /// Indexes of the windows that were current before, most recent first (tmux's `lastw`).
    #[serde(default)]
    pub stack: Vec<u32>,
    /// Session user options (`set-option -t <session> @name`).
    #[serde(default)]
    pub options: BTreeMap<String, String>,
}

/// A window.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Window {
    /// `@N`.
    pub id: u32,
    /// Index in its session.
    pub index: u32,
    /// Panes in layout order; a pane's index is its position.
    pub panes: Vec<Pane>,
    /// Id of the active pane.
    pub active: u32,
    /// When it was created, in seconds since the epoch (`window_activity`: its panes print
    /// nothing, so it sees no later activity).
    #[serde(default)]
    pub created: u64,
    /// Id of the pane that was active before (`pane_last`).
    #[serde(default)]
    pub last: Option<u32>,
    /// Window user options (`set-option -w @name`).
    #[serde(default)]
    pub options: BTreeMap<String, String>,
}

/// A pane.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Pane {
    /// `%N`.
    pub id: u32,
    /// Title (`select-pane -T`); a fresh pane has the host name.
    pub title: String,
    /// Working directory (`pane_current_path`).
    pub cwd: String,
    /// Synthetic pid; no such process exists.
    pub pid: u32,
    /// The shell command the pane was created with, for the record.
    pub command: Vec<String>,
    /// Pane options, sorted by name as tmux keeps them.
    pub options: BTreeMap<String, String>,
}

/// An attached client.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Client {
    /// `client_name` (and `client_tty`).
    pub name: String,
    /// The session it is attached to.
    pub session: String,
    /// Synthetic pid.
    pub pid: u32,
}

/// Where a pane sits, by position.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PanePos {
    /// Index into `Server::sessions`.
    pub session: usize,
    /// Index into `Session::windows`.
    pub window: usize,
    /// Index into `Window::panes`.
    pub pane: usize,
}

impl Server {
    /// Sessions in listing order: by name, byte-wise, as tmux's session tree orders them.
    pub fn sessions_sorted(&self) -> Vec<usize> {
        let mut order: Vec<usize> = (0..self.sessions.len()).collect();
        order.sort_by(|a, b| self.sessions[*a].name.cmp(&self.sessions[*b].name));
        order
    }

    /// Every pane in `list-panes -a` order.
    pub fn all_panes(&self) -> Vec<PanePos> {
        let mut out = Vec::new();
        for s in self.sessions_sorted() {
            out.extend(self.session_panes(s));
        }
        out
    }

    /// The panes of one session in listing order.
    pub fn session_panes(&self, session: usize) -> Vec<PanePos> {
        let mut out = Vec::new();
        for (w, window) in self.sessions[session].windows.iter().enumerate() {
            out.extend((0..window.panes.len()).map(|p| PanePos {
                session,
                window: w,
                pane: p,
            }));
        }
        out
    }

    /// The pane with id `%id`.
    pub fn find_pane(&self, id: u32) -> Option<PanePos> {
        for (s, session) in self.sessions.iter().enumerate() {
            for (w, window) in session.windows.iter().enumerate() {
                if let Some(p) = window.panes.iter().position(|pane| pane.id == id) {
                    return Some(PanePos {
                        session: s,
                        window: w,
                        pane: p,
                    });
                }
            }
        }
        None
    }

    /// The pane at a position.
    pub fn pane(&self, pos: PanePos) -> &Pane {
        &self.sessions[pos.session].windows[pos.window].panes[pos.pane]
    }

    /// The pane at a position, mutably.
    pub fn pane_mut(&mut self, pos: PanePos) -> &mut Pane {
        &mut self.sessions[pos.session].windows[pos.window].panes[pos.pane]
    }

    /// The active pane of a window.
    pub fn active_pane(&self, session: usize, window: usize) -> Option<PanePos> {
        let w = self.sessions.get(session)?.windows.get(window)?;
        let pane = w.panes.iter().position(|p| p.id == w.active).unwrap_or(0);
        (pane < w.panes.len()).then_some(PanePos {
            session,
            window,
            pane,
        })
    }

    /// The current window's active pane of a session.
    pub fn session_active_pane(&self, session: usize) -> Option<PanePos> {
        let s = self.sessions.get(session)?;
        let window = s
            .windows
            .iter()
            .position(|w| w.index == s.current)
            .unwrap_or(0);
        self.active_pane(session, window)
    }

    /// Removes a pane, then its window if empty, then its session if empty, as tmux does. The
    /// active pane moves to the previous pane in the list, else the next.
    pub fn remove_pane(&mut self, pos: PanePos) {
        let window = &mut self.sessions[pos.session].windows[pos.window];
        let removed = window.panes.remove(pos.pane);
        if window.last == Some(removed.id) {
            window.last = None;
        }
        if window.active == removed.id && !window.panes.is_empty() {
            let next = pos.pane.saturating_sub(1).min(window.panes.len() - 1);
            window.active = window.panes[next].id;
        }
        if window.panes.is_empty() {
            let session = &mut self.sessions[pos.session];
            let index = session.windows.remove(pos.window).index;
            session.stack.retain(|i| *i != index);
            if session.current == index
                && let Some(next) = session
                    .windows
                    .iter()
                    .rev()
                    .find(|w| w.index < index)
                    .or_else(|| session.windows.first())
            {
                session.current = next.index;
                let current = session.current;
                session.stack.retain(|i| *i != current);
            }
            if session.windows.is_empty() {
                let name = self.sessions.remove(pos.session).name;
                self.clients.retain(|c| c.session != name);
            }
        }
    }
}

/// The clock's seconds since the epoch, as tmux records its creation times.
pub fn now_secs() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

/// The files of one fake server.
#[derive(Debug, Clone)]
pub struct ServerDir {
    /// The socket path (a directory).
    pub path: PathBuf,
}

impl ServerDir {
    /// The server at socket path `path`.
    pub fn new(path: PathBuf) -> Self {
        ServerDir { path }
    }

    /// `state.json`.
    pub fn state_file(&self) -> PathBuf {
        self.path.join("state.json")
    }

    /// A pane's tty file.
    pub fn tty(&self, pane: u32) -> PathBuf {
        self.path.join("tty").join(pane.to_string())
    }

    /// `log.ndjson`: every send-keys and display-message.
    pub fn log_file(&self) -> PathBuf {
        self.path.join("log.ndjson")
    }

    /// `calls.ndjson`: every invocation's argv, the commands it ran (their canonical names) and
    /// its exit code.
    pub fn calls_file(&self) -> PathBuf {
        self.path.join("calls.ndjson")
    }

    /// `faults.json`.
    pub fn faults_file(&self) -> PathBuf {
        self.path.join("faults.json")
    }

    /// `releases`: one line per `corral-sim fault release`, which ends the hangs under way.
    pub fn releases_file(&self) -> PathBuf {
        self.path.join("releases")
    }

    /// Whether the socket path exists at all (a server ran here once).
    pub fn exists(&self) -> bool {
        self.path.is_dir()
    }

    /// Whether the server runs.
    pub fn running(&self) -> bool {
        self.state_file().is_file()
    }

    /// Takes the server's exclusive lock (creating the directory when `create`).
    pub fn lock(&self, create: bool) -> std::io::Result<Lock> {
        if create {
            std::fs::create_dir_all(&self.path)?;
        }
        let file = OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(self.path.join("lock"))?;
        file.lock()?;
        Ok(Lock { _file: file })
    }

    /// Reads the state; `None` when the server does not run.
    pub fn load(&self) -> std::io::Result<Option<Server>> {
        match std::fs::read(self.state_file()) {
            Ok(bytes) => serde_json::from_slice(&bytes)
                .map(Some)
                .map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidData, e)),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// Writes the state whole (temp file, rename); `None` stops the server.
    pub fn store(&self, server: Option<&Server>) -> std::io::Result<()> {
        match server {
            Some(server) => write_atomic(
                &self.state_file(),
                &serde_json::to_vec(server).map_err(std::io::Error::other)?,
            ),
            None => match std::fs::remove_file(self.state_file()) {
                Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(e),
                _ => Ok(()),
            },
        }
    }

    /// Clears what a previous server left (ttys, logs, faults) when a new one starts here.
    pub fn reset(&self) -> std::io::Result<()> {
        for file in [self.log_file(), self.calls_file(), self.faults_file()] {
            match std::fs::remove_file(file) {
                Err(e) if e.kind() != std::io::ErrorKind::NotFound => return Err(e),
                _ => {}
            }
        }
        match std::fs::remove_dir_all(self.path.join("tty")) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => return Err(e),
            _ => {}
        }
        std::fs::create_dir_all(self.path.join("tty"))
    }

    /// Appends lines to one of the logs.
    pub fn append(&self, file: &Path, lines: &[String]) -> std::io::Result<()> {
        append_lines(file, lines)
    }
}

/// Appends whole lines to a file in one write.
pub fn append_lines(file: &Path, lines: &[String]) -> std::io::Result<()> {
    if lines.is_empty() {
        return Ok(());
    }
    let mut text = String::new();
    for line in lines {
        text.push_str(line);
        text.push('\n');
    }
    let mut log = OpenOptions::new().create(true).append(true).open(file)?;
    log.write_all(text.as_bytes())
}

/// Held while the state is read and written; released on drop.
#[derive(Debug)]
pub struct Lock {
    _file: File,
}

/// Writes `bytes` to `path` through a temp file and a rename, so a reader never sees half.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let tmp = path.with_extension(format!("tmp{}", std::process::id()));
    std::fs::write(&tmp, bytes)?;
    std::fs::rename(&tmp, path)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pane(id: u32) -> Pane {
        Pane {
            id,
            title: String::new(),
            cwd: "/".into(),
            pid: 1,
            command: Vec::new(),
            options: BTreeMap::new(),
        }
    }

    #[test]
    fn killing_the_last_pane_removes_window_and_session() {
        let mut server = Server {
            sessions: vec![Session {
                id: 0,
                name: "s".into(),
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
        };
        server.remove_pane(server.find_pane(0).unwrap());
        assert_eq!(server.sessions[0].windows[0].active, 1);
        server.remove_pane(server.find_pane(1).unwrap());
        assert!(server.sessions.is_empty());
    }

    #[test]
    fn concurrent_lockers_serialize() {
        let dir = tempfile::tempdir().unwrap();
        let server = ServerDir::new(dir.path().join("sock"));
        server.lock(true).unwrap();
        server.store(Some(&Server::default())).unwrap();
        let threads: Vec<_> = (0..8)
            .map(|_| {
                let server = server.clone();
                std::thread::spawn(move || {
                    for _ in 0..10 {
                        let _lock = server.lock(false).unwrap();
                        let mut state = server.load().unwrap().unwrap();
                        state.next_pid += 1;
                        server.store(Some(&state)).unwrap();
                    }
                })
            })
            .collect();
        for thread in threads {
            thread.join().unwrap();
        }
        assert_eq!(server.load().unwrap().unwrap().next_pid, 80);
    }
}
