//! The fleet, as docs/protocol.md "The pane-option contract" and "The fleet row" say: one tmux
//! `list-panes -a -F` per read for the whole fleet (each row framed by a nonce, so output that
//! holds no row of the format asked for is a failed read, never an empty fleet), a time-out on
//! every invocation (the process group killed), "no server" as an empty fleet; each agent pane's
//! row with its derived fields and its repository facts read from the repository's files; the
//! selector; and the edges between two reads.

use std::io::Read;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use serde_json::{Map, Value, json};

/// The tmux variables, then the pane options, in the order the format asks for them.
const FIELDS: [&str; 23] = [
    "pane_id",
    "session_name",
    "window_index",
    "pane_index",
    "pane_current_path",
    "socket_path",
    "@agent_name",
    "@agent_state",
    "@agent_detail",
    "@agent_since",
    "@agent_turn_at",
    "@agent_stamped_at",
    "@agent_attention",
    "@agent_session",
    "@agent_transcript",
    "@agent_permission_request",
    "@agent_question_request",
    "@agent_api_endpoint",
    "@agent_pending_tool",
    "@agent_pending_call",
    "@agent_context",
    "@agent_context_at",
    "@agent_mute_until",
];

/// One agent pane.
#[derive(Debug, Clone)]
pub struct Pane {
    /// The wire row, keys in order.
    pub row: Map<String, Value>,
    /// The options the host needs beyond the row, by field name (unset or empty ones absent).
    pub options: Vec<(String, String)>,
}

impl Pane {
    pub fn id(&self) -> &str {
        self.row["pane"].as_str().unwrap_or_default()
    }

    pub fn option(&self, name: &str) -> Option<&str> {
        self.options
            .iter()
            .find(|(field, _)| field == name)
            .map(|(_, value)| value.as_str())
    }

    pub fn text(&self, key: &str) -> Option<&str> {
        self.row.get(key).and_then(Value::as_str)
    }
}

/// What one read of the fleet came to.
#[derive(Debug)]
pub enum Fleet {
    /// The agent panes, in tmux's order.
    Panes(Vec<Pane>),
    /// No server runs on the socket: an empty fleet.
    NoServer,
    /// The read failed (it could not run, failed, timed out, or printed no row).
    Failed(String),
}

/// How the host reaches its tmux.
#[derive(Debug, Clone)]
pub struct Tmux {
    bin: String,
    socket: Option<String>,
    timeout: Duration,
    host: String,
}

impl Tmux {
    /// From the environment; `cycle_ms` bounds an invocation (clamped to 1 to 5 s).
    pub fn new(cycle_ms: u64) -> Tmux {
        let bin = std::env::var("MINIMAL_TMUX_BIN").unwrap_or_else(|_| "tmux".to_owned());
        let socket = std::env::var("MINIMAL_TMUX_SOCKET")
            .ok()
            .filter(|s| !s.is_empty());
        let host = rustix::system::uname()
            .nodename()
            .to_string_lossy()
            .into_owned();
        Tmux {
            bin,
            socket,
            timeout: Duration::from_millis(cycle_ms.clamp(1000, 5000)),
            host,
        }
    }

    /// The host's name, as rows and hello say it.
    pub fn host(&self) -> &str {
        &self.host
    }

    /// The socket as the host was given it.
    pub fn socket(&self) -> &str {
        self.socket.as_deref().unwrap_or("default")
    }

    /// Reads the whole fleet.
    pub fn read(&self) -> Fleet {
        let nonce = format!(
            "MH{}x{}",
            std::process::id(),
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.subsec_nanos())
        );
        let format: String = format!(
            "{nonce}R{}{nonce}E",
            FIELDS
                .iter()
                .map(|field| format!("#{{{field}}}"))
                .collect::<Vec<_>>()
                .join(&format!("{nonce}F"))
        );
        let mut args: Vec<String> = Vec::new();
        if let Some(socket) = &self.socket {
            args.push(if socket.contains('/') { "-S" } else { "-L" }.to_owned());
            args.push(socket.clone());
        }
        args.extend(["list-panes", "-a", "-F"].map(str::to_owned));
        args.push(format);
        let (code, stdout, stderr) = match run(&self.bin, &args, self.timeout) {
            Ok(done) => done,
            Err(why) => return Fleet::Failed(why),
        };
        if code != Some(0) {
            if stderr.contains("no server running") || stderr.contains("error connecting to") {
                return Fleet::NoServer;
            }
            return Fleet::Failed(format!("tmux failed: {}", stderr.trim()));
        }
        let row_mark = format!("{nonce}R");
        let mut rows = stdout.split(&row_mark);
        let before = rows.next().unwrap_or_default();
        if !before.trim().is_empty() || (!stdout.trim().is_empty() && !stdout.contains(&nonce)) {
            return Fleet::Failed("tmux printed something that is no pane".to_owned());
        }
        let now = now_ms();
        let mut panes = Vec::new();
        for row in rows {
            let Some(row) = row
                .trim_end_matches('\n')
                .strip_suffix(&format!("{nonce}E"))
            else {
                return Fleet::Failed("tmux printed a row cut short".to_owned());
            };
            let values: Vec<&str> = row.split(&format!("{nonce}F")).collect();
            if values.len() != FIELDS.len() {
                return Fleet::Failed("tmux printed a row of another shape".to_owned());
            }
            if let Some(pane) = self.pane(&values, now) {
                panes.push(pane);
            }
        }
        Fleet::Panes(panes)
    }

    /// The row of one pane's values, when it is an agent pane.
    fn pane(&self, values: &[&str], now: u64) -> Option<Pane> {
        let get = |name: &str| {
            FIELDS
                .iter()
                .position(|field| *field == name)
                .map(|at| values[at])
                .filter(|value| !value.is_empty())
        };
        let agent = get("@agent_name")?;
        let ms = |name: &str| get(name).and_then(|v| v.parse::<u64>().ok());
        let text = |name: &str| get(name).map_or(Value::Null, |v| json!(v));
        let state = get("@agent_state")
            .filter(|s| ["idle", "working", "blocked", "unknown"].contains(s))
            .unwrap_or("unknown");
        let attention = get("@agent_attention").is_some();
        let since = ms("@agent_since");
        let turn = ms("@agent_turn_at");
        let episode = since.max(turn).unwrap_or(0);
        let context = ms("@agent_context").filter(|c| *c <= 100);
        let muted = ms("@agent_mute_until").is_some_and(|until| until > now);
        let session = get("session_name").unwrap_or_default();
        let locator = format!(
            "{session}:{}.{}",
            get("window_index").unwrap_or_default(),
            get("pane_index").unwrap_or_default()
        );
        let git = get("pane_current_path").map(|cwd| git(Path::new(cwd)));
        let git = git.unwrap_or_default();
        let mut row = Map::new();
        for (key, value) in [
            ("pane", json!(get("pane_id").unwrap_or_default())),
            ("agent", json!(agent)),
            ("state", json!(state)),
            ("detail", text("@agent_detail")),
            ("since_ms", since.map_or(Value::Null, |v| json!(v))),
            ("episode_ms", json!(episode)),
            ("locator", json!(locator)),
            ("attention", json!(attention)),
            ("done", json!(state == "idle" && attention)),
            ("session", json!(session)),
            ("transcript", text("@agent_transcript")),
            ("permission_request", text("@agent_permission_request")),
            (
                "stamped_at_ms",
                ms("@agent_stamped_at").map_or(Value::Null, |v| json!(v)),
            ),
            ("context", context.map_or(Value::Null, |v| json!(v))),
            (
                "context_at_ms",
                ms("@agent_context_at").map_or(Value::Null, |v| json!(v)),
            ),
            ("muted", json!(muted)),
            ("repo", git.repo.map_or(Value::Null, Value::from)),
            ("branch", git.branch.map_or(Value::Null, Value::from)),
            ("worktree", git.worktree.map_or(Value::Null, Value::from)),
            ("pending_tool", text("@agent_pending_tool")),
            ("pending_call", text("@agent_pending_call")),
            ("server", json!(get("socket_path").unwrap_or_default())),
            ("host", json!(self.host)),
        ] {
            row.insert(key.to_owned(), value);
        }
        let options = FIELDS
            .iter()
            .filter_map(|field| get(field).map(|value| ((*field).to_owned(), value.to_owned())))
            .collect();
        Some(Pane { row, options })
    }
}

/// Runs `bin args` in a process group of its own, within `timeout` (the group killed at it):
/// its exit code, stdout and stderr.
#[allow(clippy::disallowed_methods)] // This host's one spawner: tmux, and nothing else.
fn run(
    bin: &str,
    args: &[String],
    timeout: Duration,
) -> Result<(Option<i32>, String, String), String> {
    let mut child = Command::new(bin)
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0)
        .spawn()
        .map_err(|err| format!("tmux ({bin}) cannot start: {err}"))?;
    let (out_tx, out_rx) = mpsc::channel();
    for (which, stream) in [
        (
            0,
            child
                .stdout
                .take()
                .map(|s| Box::new(s) as Box<dyn Read + Send>),
        ),
        (
            1,
            child
                .stderr
                .take()
                .map(|s| Box::new(s) as Box<dyn Read + Send>),
        ),
    ] {
        let tx = out_tx.clone();
        std::thread::spawn(move || {
            let mut text = Vec::new();
            if let Some(mut stream) = stream {
                let _ = stream.read_to_end(&mut text);
            }
            let _ = tx.send((which, String::from_utf8_lossy(&text).into_owned()));
        });
    }
    let deadline = Instant::now() + timeout;
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break status,
            Ok(None) if Instant::now() < deadline => std::thread::sleep(Duration::from_millis(2)),
            _ => {
                if let Some(pid) = rustix::process::Pid::from_raw(child.id() as i32) {
                    let _ = rustix::process::kill_process_group(pid, rustix::process::Signal::KILL);
                }
                let _ = child.wait();
                return Err(format!(
                    "tmux did not answer within {} ms",
                    timeout.as_millis()
                ));
            }
        }
    };
    let (mut stdout, mut stderr) = (String::new(), String::new());
    for _ in 0..2 {
        match out_rx.recv_timeout(Duration::from_millis(500)) {
            Ok((0, text)) => stdout = text,
            Ok((_, text)) => stderr = text,
            Err(_) => return Err("tmux's output did not end".to_owned()),
        }
    }
    Ok((status.code(), stdout, stderr))
}

/// Epoch milliseconds now.
pub fn now_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64)
}

/// A working directory's repository facts.
#[derive(Debug, Default)]
struct Git {
    repo: Option<String>,
    branch: Option<String>,
    worktree: Option<String>,
}

/// Reads the repository a directory is in from its files: the working tree whose `.git` (a
/// directory, or a file naming a linked worktree's git dir) is nearest above it; the repository's
/// name is its main worktree's directory name; the branch is `HEAD`'s (none when detached).
fn git(cwd: &Path) -> Git {
    let mut dir = Some(cwd);
    while let Some(here) = dir {
        let dot_git = here.join(".git");
        let git_dir = if dot_git.is_dir() {
            Some(dot_git.clone())
        } else if let Ok(text) = std::fs::read_to_string(&dot_git) {
            text.trim()
                .strip_prefix("gitdir:")
                .map(|path| here.join(path.trim()))
        } else {
            None
        };
        if let Some(git_dir) = git_dir {
            let common = match std::fs::read_to_string(git_dir.join("commondir")) {
                Ok(text) => git_dir.join(text.trim()),
                Err(_) => git_dir.clone(),
            };
            let common = std::fs::canonicalize(&common).unwrap_or(common);
            let main: PathBuf = if common.file_name().is_some_and(|n| n == ".git") {
                common
                    .parent()
                    .map(Path::to_path_buf)
                    .unwrap_or(common.clone())
            } else {
                common.clone()
            };
            let branch = std::fs::read_to_string(git_dir.join("HEAD"))
                .ok()
                .and_then(|head| {
                    head.trim()
                        .strip_prefix("ref: refs/heads/")
                        .map(str::to_owned)
                });
            return Git {
                repo: main.file_name().map(|n| n.to_string_lossy().into_owned()),
                branch,
                worktree: Some(here.display().to_string()),
            };
        }
        dir = here.parent();
    }
    Git::default()
}

/// Whether a row is admitted by a selector (`None`: every row).
pub fn admits(selector: Option<&Map<String, Value>>, row: &Map<String, Value>) -> bool {
    let Some(selector) = selector else {
        return true;
    };
    for key in ["session", "repo", "branch", "agent"] {
        if let Some(Value::String(wanted)) = selector.get(key)
            && row.get(key).and_then(Value::as_str) != Some(wanted.as_str())
        {
            return false;
        }
    }
    if let Some(Value::Array(tokens)) = selector.get("state") {
        let state = row.get("state").and_then(Value::as_str).unwrap_or_default();
        let done = row.get("done") == Some(&Value::Bool(true));
        return tokens.iter().any(|token| match token.as_str() {
            Some("done") => done,
            Some(token @ ("idle" | "working" | "blocked" | "unknown")) => token == state,
            _ => false,
        });
    }
    true
}

/// The edges from one read to the next, for a selector: one per pane whose state moved, that
/// appeared or vanished, sent when its row was admitted before or after.
pub fn edges(
    before: &[Pane],
    after: &[Pane],
    selector: Option<&Map<String, Value>>,
    at_ms: u64,
) -> Vec<Vec<(&'static str, Value)>> {
    let mut out = Vec::new();
    let edge = |pane: &Pane, from: &str, to: &str| {
        vec![
            ("at_ms", json!(at_ms)),
            ("pane", pane.row["pane"].clone()),
            ("agent", pane.row["agent"].clone()),
            ("from", json!(from)),
            ("to", json!(to)),
            ("detail", pane.row["detail"].clone()),
            ("locator", pane.row["locator"].clone()),
            ("repo", pane.row["repo"].clone()),
            ("branch", pane.row["branch"].clone()),
        ]
    };
    let state = |pane: &Pane| pane.text("state").unwrap_or_default().to_owned();
    for now in after {
        let was = before.iter().find(|old| old.id() == now.id());
        let admitted =
            admits(selector, &now.row) || was.is_some_and(|old| admits(selector, &old.row));
        match was {
            None if admitted => out.push(edge(now, "", &state(now))),
            Some(old) if admitted && state(old) != state(now) => {
                out.push(edge(now, &state(old), &state(now)));
            }
            _ => {}
        }
    }
    for old in before {
        if !after.iter().any(|now| now.id() == old.id()) && admits(selector, &old.row) {
            out.push(edge(old, &state(old), ""));
        }
    }
    out
}
