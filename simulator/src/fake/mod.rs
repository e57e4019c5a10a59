//! `corral-fake-tmux`: the subset of tmux's command line the host (and `corral-sim`) uses, with
//! tmux 3.3a's output formats, exit codes and error texts, and state in files under
//! `$CORRAL_SIM_DIR` instead of a server process.
//!
//! An invocation parses every command first (as tmux does), takes the server's exclusive lock,
//! applies any injected fault, runs the commands in order against the loaded state, stops at the
//! first error, writes the state back whole, and appends to the observable logs.

pub mod cli;
pub mod escape;
pub mod faults;
pub mod format;
pub mod state;
pub mod target;

use std::path::{Path, PathBuf};

use serde_json::json;

use cli::{CliError, Command, Socket};
use format::{Format, Var};
use state::{Client, Pane, PanePos, Server, ServerDir, Session, Window};

/// What an invocation printed and how it exited.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Output {
    /// Bytes for stdout.
    pub stdout: Vec<u8>,
    /// Bytes for stderr.
    pub stderr: Vec<u8>,
    /// Exit status.
    pub code: i32,
}

impl Output {
    fn fail(line: &str) -> Output {
        Output {
            stdout: Vec::new(),
            stderr: format!("{line}\n").into_bytes(),
            code: 1,
        }
    }
}

/// The fake's own prefix on errors about what it does not implement.
pub const PREFIX: &str = "corral-fake-tmux";

/// The usage text of `corral-fake-tmux --help`.
pub const HELP: &str = "\
corral-fake-tmux: a stand-in for tmux 3.3a's command line, for tests (state under $CORRAL_SIM_DIR)

usage: corral-fake-tmux [-uV] [-f file] [-L socket-name | -S socket-path] command [flags] [; command ...]

commands: list-panes (lsp), display-message (display), show-options (show), set-option (set),
send-keys (send), list-clients (lsc), has-session (has), kill-pane (killp), kill-session,
kill-server, new-session (new), new-window (neww), split-window (splitw), select-pane (selectp),
select-layout (selectl), respawn-pane (respawnp)

-L name uses $CORRAL_SIM_DIR/tmux-<uid>/<name>; -S path uses path. Output is sanitized to
printable ASCII unless -u is given or LC_ALL / LC_CTYPE / LANG names UTF-8 or TMUX is set,
as tmux does. See golden/fixtures/README.md.";

/// Whether tmux would treat the client as UTF-8 capable, from the environment.
pub fn utf8_from_env() -> bool {
    if std::env::var_os("TMUX").is_some() {
        return true;
    }
    let locale = ["LC_ALL", "LC_CTYPE", "LANG"]
        .iter()
        .filter_map(|name| std::env::var(name).ok())
        .find(|value| !value.is_empty())
        .unwrap_or_default()
        .to_ascii_uppercase();
    locale.contains("UTF-8") || locale.contains("UTF8")
}

/// The socket path of a socket selection.
pub fn socket_path(sim_dir: &Path, uid: u32, socket: &Socket) -> PathBuf {
    match socket {
        Socket::Name(name) => sim_dir.join(format!("tmux-{uid}")).join(name),
        Socket::Path(path) => path.clone(),
    }
}

/// Runs one invocation (argv without the program name).
pub fn run(args: &[String], sim_dir: &Path, utf8_env: bool) -> Output {
    let (global, rest) = match cli::parse_global(args) {
        Ok(parsed) => parsed,
        Err(err) => return cli_error(err),
    };
    if global.version {
        return Output {
            stdout: b"tmux 3.3a\n".to_vec(),
            ..Output::default()
        };
    }
    let mut commands = Vec::new();
    for argv in cli::split_commands(rest) {
        match cli::parse_command(&argv) {
            Ok(command) => commands.push(command),
            Err(err) => return cli_error(err),
        }
    }
    if commands.is_empty() {
        return Output::fail(&format!(
            "{PREFIX}: no command given (the fake cannot attach a terminal)"
        ));
    }
    let uid = crate::env::uid(sim_dir);
    let path = socket_path(sim_dir, uid, &global.socket);
    let dir = ServerDir::new(path.clone());
    let output = execute(&dir, &commands, global.utf8 || utf8_env, true);
    if dir.exists() {
        let line = json!({ "argv": args, "exit": output.code }).to_string();
        let _ = dir.append(&dir.calls_file(), &[line]);
    }
    output
}

fn cli_error(err: CliError) -> Output {
    match err {
        CliError::Tmux(text) => Output::fail(&text),
        CliError::Unsupported(text) => Output::fail(&format!("{PREFIX}: {text}")),
    }
}

/// An error from one command.
#[derive(Debug)]
enum CmdError {
    Tmux(String),
    Unsupported(String),
}

fn tmux(text: impl Into<String>) -> CmdError {
    CmdError::Tmux(text.into())
}

fn unsupported(text: impl Into<String>) -> CmdError {
    CmdError::Unsupported(text.into())
}

fn execute(dir: &ServerDir, commands: &[Command], utf8: bool, with_faults: bool) -> Output {
    let starts = commands[0].name == "new-session";
    if !dir.running() && !starts {
        let path = dir.path.display();
        return if dir.exists() {
            Output::fail(&format!("no server running on {path}"))
        } else {
            Output::fail(&format!(
                "error connecting to {path} (No such file or directory)"
            ))
        };
    }
    let lock = match dir.lock(starts) {
        Ok(lock) => lock,
        Err(e) => return Output::fail(&format!("{PREFIX}: locking {}: {e}", dir.path.display())),
    };
    let server = match dir.load() {
        Ok(Some(server)) => server,
        Ok(None) if starts => {
            if let Err(e) = dir.reset() {
                return Output::fail(&format!("{PREFIX}: {}: {e}", dir.path.display()));
            }
            Server {
                next_pid: 100_000,
                ..Server::default()
            }
        }
        Ok(None) => return Output::fail(&format!("no server running on {}", dir.path.display())),
        Err(e) => return Output::fail(&format!("{PREFIX}: reading state: {e}")),
    };
    if with_faults {
        match faults::load(dir) {
            Ok(mut list) if !list.is_empty() => {
                let hit = commands.iter().find_map(|command| {
                    let pane = command
                        .value('t')
                        .and_then(|t| target::pane(&server, t).ok())
                        .map(|pos| format!("%{}", server.pane(pos).id));
                    faults::take(&mut list, command.name, pane.as_deref())
                });
                if let Some(effect) = hit {
                    if let Err(e) = faults::store(dir, &list) {
                        return Output::fail(&format!("{PREFIX}: writing faults: {e}"));
                    }
                    match effect {
                        faults::Effect::Fail { exit_code, stderr } => {
                            return Output {
                                stdout: Vec::new(),
                                stderr: if stderr.is_empty() {
                                    Vec::new()
                                } else {
                                    format!("{stderr}\n").into_bytes()
                                },
                                code: exit_code,
                            };
                        }
                        faults::Effect::Hang { ms } => {
                            drop(lock);
                            std::thread::sleep(std::time::Duration::from_millis(ms));
                            return execute(dir, commands, utf8, false);
                        }
                    }
                }
            }
            Ok(_) => {}
            Err(e) => return Output::fail(&format!("{PREFIX}: reading faults: {e}")),
        }
    }
    let mut run = Run {
        dir,
        server,
        utf8,
        dirty: starts,
        stopped: false,
        stdout: Vec::new(),
        log: Vec::new(),
        host: None,
    };
    let mut code = 0;
    let mut stderr = Vec::new();
    for command in commands {
        if run.stopped {
            break;
        }
        if let Err(err) = run.command(command) {
            let line = match err {
                CmdError::Tmux(text) => text,
                CmdError::Unsupported(text) => format!("{PREFIX}: {text}"),
            };
            if utf8 {
                stderr.extend_from_slice(line.as_bytes());
            } else {
                stderr.extend(escape::sanitize(line.as_bytes()));
            }
            stderr.push(b'\n');
            code = 1;
            break;
        }
    }
    let stopped = run.stopped || run.server.sessions.is_empty();
    let stored = if stopped {
        dir.store(None)
    } else if run.dirty {
        dir.store(Some(&run.server))
    } else {
        Ok(())
    };
    let logged = dir.append(&dir.log_file(), &run.log);
    drop(lock);
    if let Err(e) = stored.and(logged) {
        return Output::fail(&format!("{PREFIX}: writing state: {e}"));
    }
    Output {
        stdout: run.stdout,
        stderr,
        code,
    }
}

/// One invocation's working set.
struct Run<'a> {
    dir: &'a ServerDir,
    server: Server,
    /// Whether output lines pass unsanitized (a UTF-8 client).
    utf8: bool,
    dirty: bool,
    stopped: bool,
    stdout: Vec<u8>,
    log: Vec<String>,
    host: Option<String>,
}

impl Run<'_> {
    fn print(&mut self, line: &str) {
        if self.utf8 {
            self.stdout.extend_from_slice(line.as_bytes());
        } else {
            self.stdout.extend(escape::sanitize(line.as_bytes()));
        }
        self.stdout.push(b'\n');
    }

    fn host(&mut self) -> String {
        self.host.get_or_insert_with(crate::env::hostname).clone()
    }

    fn expand(&mut self, format: &Format, pos: Option<PanePos>, client: Option<&Client>) -> String {
        let host = self.host();
        let server = &self.server;
        let socket = self.dir.path.display().to_string();
        format.expand(|var| lookup(server, self.dir, &socket, &host, pos, client, var))
    }

    fn command(&mut self, command: &Command) -> Result<(), CmdError> {
        match command.name {
            "list-panes" => self.list_panes(command),
            "display-message" => self.display_message(command),
            "show-options" => self.show_options(command),
            "set-option" => self.set_option(command),
            "send-keys" => self.send_keys(command),
            "list-clients" => self.list_clients(command),
            "has-session" => match command.value('t') {
                Some(t) => target::session(&self.server, t)
                    .map(|_| ())
                    .map_err(|m| tmux(m.message)),
                None => Ok(()),
            },
            "kill-pane" => {
                let pos = self.pane_target(command)?;
                self.server.remove_pane(pos);
                self.dirty = true;
                Ok(())
            }
            "kill-session" => {
                let t = command
                    .value('t')
                    .ok_or_else(|| unsupported("kill-session needs -t"))?;
                let session = target::session(&self.server, t).map_err(|m| tmux(m.message))?;
                let name = self.server.sessions.remove(session).name;
                self.server.clients.retain(|c| c.session != name);
                self.dirty = true;
                Ok(())
            }
            "kill-server" => {
                self.stopped = true;
                Ok(())
            }
            "new-session" => self.new_session(command),
            "new-window" => self.new_window(command),
            "split-window" => self.split_window(command),
            "select-pane" => {
                let pos = self.pane_target(command)?;
                match command.value('T') {
                    Some(title) => self.server.pane_mut(pos).title = title.to_owned(),
                    None => {
                        let id = self.server.pane(pos).id;
                        self.server.sessions[pos.session].windows[pos.window].active = id;
                    }
                }
                self.dirty = true;
                Ok(())
            }
            "select-layout" => {
                if command.has('t') {
                    self.pane_target(command)?;
                }
                Ok(())
            }
            "respawn-pane" => {
                let pos = self.pane_target(command)?;
                let id = self.server.pane(pos).id;
                if !command.has('k') {
                    return Err(tmux(format!("pane %{id} still active")));
                }
                let pid = self.next_pid();
                let pane = self.server.pane_mut(pos);
                if let Some(cwd) = command.value('c') {
                    pane.cwd = cwd.to_owned();
                }
                if !command.args.is_empty() {
                    pane.command = command.args.clone();
                }
                pane.pid = pid;
                self.dirty = true;
                Ok(())
            }
            other => Err(unsupported(format!("{other} is not supported"))),
        }
    }

    fn pane_target(&self, command: &Command) -> Result<PanePos, CmdError> {
        let t = command
            .value('t')
            .ok_or_else(|| unsupported(format!("{} needs -t in the fake", command.name)))?;
        target::pane(&self.server, t).map_err(|m| tmux(m.message))
    }

    fn options_target(&self, command: &Command) -> Result<PanePos, CmdError> {
        let t = command
            .value('t')
            .ok_or_else(|| unsupported(format!("{} -p needs -t in the fake", command.name)))?;
        target::pane(&self.server, t).map_err(|_| tmux(format!("no such pane: {t}")))
    }

    fn parse_format(&self, command: &Command) -> Result<Format, CmdError> {
        let text = command.value('F').ok_or_else(|| {
            unsupported(format!(
                "{} without -F (tmux's default format)",
                command.name
            ))
        })?;
        Format::parse(text).map_err(|e| unsupported(e.to_string()))
    }

    fn list_panes(&mut self, command: &Command) -> Result<(), CmdError> {
        let format = self.parse_format(command)?;
        let panes = if command.has('a') {
            self.server.all_panes()
        } else if command.has('s') {
            let session = match command.value('t') {
                Some(t) => target::session(&self.server, t).map_err(|m| tmux(m.message))?,
                None => self.server.sessions_sorted()[0],
            };
            self.server.session_panes(session)
        } else {
            let pos = match command.value('t') {
                Some(_) => self.pane_target(command)?,
                None => self
                    .server
                    .session_active_pane(self.server.sessions_sorted()[0])
                    .ok_or_else(|| tmux("no current window"))?,
            };
            let count = self.server.sessions[pos.session].windows[pos.window]
                .panes
                .len();
            (0..count).map(|pane| PanePos { pane, ..pos }).collect()
        };
        for pos in panes {
            let line = self.expand(&format, Some(pos), None);
            self.print(&line);
        }
        Ok(())
    }

    fn display_message(&mut self, command: &Command) -> Result<(), CmdError> {
        let text = match (command.value('F'), command.args.first().map(String::as_str)) {
            (Some(f), None) | (None, Some(f)) => f.to_owned(),
            (Some(_), Some(_)) => return Err(tmux("only one of -F or argument must be given")),
            (None, None) => {
                return Err(unsupported(
                    "display-message without a format (tmux's default format)",
                ));
            }
        };
        let format = Format::parse(&text).map_err(|e| unsupported(e.to_string()))?;
        let client = match command.value('c') {
            Some(name) => match self.server.clients.iter().find(|c| c.name == name) {
                Some(client) => Some(client.clone()),
                // tmux does nothing for a client it cannot find.
                None => return Ok(()),
            },
            None => None,
        };
        let pos = match command.value('t') {
            Some(t) => match target::pane(&self.server, t) {
                Ok(pos) => Some(pos),
                Err(missing) => missing.partial,
            },
            None => match &client {
                Some(c) => target::find_session(&self.server, &c.session)
                    .and_then(|s| self.server.session_active_pane(s)),
                None if format.needs_target() => {
                    return Err(unsupported(
                        "display-message needs -t (or -c) for pane, window or session variables",
                    ));
                }
                None => None,
            },
        };
        let line = self.expand(&format, pos, client.as_ref());
        if command.has('p') {
            self.print(&line);
        } else {
            self.log.push(
                json!({
                    "command": "display-message",
                    "client": client.as_ref().map(|c| c.name.clone()),
                    "text": line,
                })
                .to_string(),
            );
        }
        Ok(())
    }

    fn show_options(&mut self, command: &Command) -> Result<(), CmdError> {
        if command.has('g') || command.has('s') || command.has('w') {
            let name = command.args.first().map(String::as_str);
            if name != Some("allow-passthrough") {
                return Err(unsupported(
                    "show-options -g/-s/-w is only supported for allow-passthrough",
                ));
            }
            let value = self
                .server
                .options
                .get("allow-passthrough")
                .cloned()
                .unwrap_or_else(|| "off".into());
            let line = if command.has('v') {
                value
            } else {
                format!("allow-passthrough {value}")
            };
            self.print(&line);
            return Ok(());
        }
        if !command.has('p') {
            return Err(unsupported("show-options needs -p (pane options)"));
        }
        let pos = self.options_target(command)?;
        let options = self.server.pane(pos).options.clone();
        let lines: Vec<String> = match command.args.first() {
            Some(name) => {
                if !name.starts_with('@') {
                    return Err(unsupported(format!(
                        "show-options -p {name}: only user options (@name) are supported"
                    )));
                }
                match options.get(name) {
                    Some(value) => vec![show_line(name, value, command.has('v'))],
                    None if command.has('q') => Vec::new(),
                    None => return Err(tmux(format!("invalid option: {name}"))),
                }
            }
            None => options
                .iter()
                .map(|(name, value)| show_line(name, value, command.has('v')))
                .collect(),
        };
        for line in lines {
            self.print(&line);
        }
        Ok(())
    }

    fn set_option(&mut self, command: &Command) -> Result<(), CmdError> {
        let name = command.args[0].clone();
        let value = command.args.get(1).cloned();
        if !name.starts_with('@') && !command.has('p') {
            // Server, session and window options are stored, not interpreted.
            match (command.has('u'), value) {
                (true, _) => self.server.options.remove(&name),
                (false, Some(v)) => self.server.options.insert(name, v),
                (false, None) => return Err(tmux("empty value")),
            };
            self.dirty = true;
            return Ok(());
        }
        if !name.starts_with('@') {
            return Err(unsupported(format!(
                "set-option -p {name}: only user options (@name) are supported on panes"
            )));
        }
        if !command.has('p') {
            return Err(unsupported(
                "set-option of a user option needs -p (only pane options are modelled)",
            ));
        }
        let pos = self.options_target(command)?;
        let pane = self.server.pane_mut(pos);
        if command.has('u') {
            pane.options.remove(&name);
        } else {
            let value = value.ok_or_else(|| tmux("empty value"))?;
            pane.options.insert(name, value);
        }
        self.dirty = true;
        Ok(())
    }

    fn send_keys(&mut self, command: &Command) -> Result<(), CmdError> {
        let pos = self.pane_target(command)?;
        let id = self.server.pane(pos).id;
        self.log.push(
            json!({
                "command": "send-keys",
                "pane": format!("%{id}"),
                "literal": command.has('l'),
                "keys": command.args,
            })
            .to_string(),
        );
        Ok(())
    }

    fn list_clients(&mut self, command: &Command) -> Result<(), CmdError> {
        let format = self.parse_format(command)?;
        let only = match command.value('t') {
            Some(t) => Some(
                self.server.sessions
                    [target::session(&self.server, t).map_err(|m| tmux(m.message))?]
                .name
                .clone(),
            ),
            None => None,
        };
        let clients: Vec<Client> = self
            .server
            .clients
            .iter()
            .filter(|c| only.as_ref().is_none_or(|s| *s == c.session))
            .cloned()
            .collect();
        for client in clients {
            let pos = target::find_session(&self.server, &client.session)
                .and_then(|s| self.server.session_active_pane(s));
            let line = self.expand(&format, pos, Some(&client));
            self.print(&line);
        }
        Ok(())
    }

    fn next_pid(&mut self) -> u32 {
        self.server.next_pid += 1;
        self.server.next_pid
    }

    /// A fresh pane with the next id, its tty file created.
    fn new_pane(&mut self, command: &Command, cwd: String) -> Result<Pane, CmdError> {
        let id = self.server.next_pane;
        self.server.next_pane += 1;
        let pid = self.next_pid();
        let title = self.host();
        let tty = self.dir.tty(id);
        std::fs::create_dir_all(self.dir.path.join("tty"))
            .and_then(|()| std::fs::write(&tty, b""))
            .map_err(|e| unsupported(format!("creating {}: {e}", tty.display())))?;
        Ok(Pane {
            id,
            title,
            cwd,
            pid,
            command: command.args.clone(),
            options: Default::default(),
        })
    }

    fn default_cwd(command: &Command) -> String {
        command.value('c').map(str::to_owned).unwrap_or_else(|| {
            std::env::current_dir()
                .map(|d| d.display().to_string())
                .unwrap_or_else(|_| "/".into())
        })
    }

    fn print_created(&mut self, command: &Command, pos: PanePos, default: &str) {
        if command.has('P') {
            let text = command.value('F').unwrap_or(default).to_owned();
            match Format::parse(&text) {
                Ok(format) => {
                    let line = self.expand(&format, Some(pos), None);
                    self.print(&line);
                }
                Err(e) => self.print(&e.to_string()),
            }
        }
    }

    fn new_session(&mut self, command: &Command) -> Result<(), CmdError> {
        if !command.has('d') {
            return Err(unsupported("new-session needs -d (the fake cannot attach)"));
        }
        if let Some(f) = command.value('F') {
            Format::parse(f).map_err(|e| unsupported(e.to_string()))?;
        }
        let id = self.server.next_session;
        let name = command
            .value('s')
            .map(str::to_owned)
            .unwrap_or_else(|| id.to_string());
        if name.contains([':', '.']) || name.is_empty() {
            return Err(unsupported(format!(
                "session name {name:?} (use letters, digits, - and _)"
            )));
        }
        if self.server.sessions.iter().any(|s| s.name == name) {
            return Err(tmux(format!("duplicate session: {name}")));
        }
        self.server.next_session += 1;
        let pane = self.new_pane(command, Self::default_cwd(command))?;
        let window = self.server.next_window;
        self.server.next_window += 1;
        self.server.sessions.push(Session {
            id,
            name,
            windows: vec![Window {
                id: window,
                index: 0,
                active: pane.id,
                panes: vec![pane],
            }],
            current: 0,
        });
        self.dirty = true;
        let pos = PanePos {
            session: self.server.sessions.len() - 1,
            window: 0,
            pane: 0,
        };
        self.print_created(command, pos, "#{session_name}:");
        Ok(())
    }

    fn new_window(&mut self, command: &Command) -> Result<(), CmdError> {
        if let Some(f) = command.value('F') {
            Format::parse(f).map_err(|e| unsupported(e.to_string()))?;
        }
        let t = command.value('t').unwrap_or(":");
        let (session_part, index_part) = t.split_once(':').unwrap_or((t, ""));
        let session = target::session(&self.server, session_part).map_err(|m| tmux(m.message))?;
        let used: Vec<u32> = self.server.sessions[session]
            .windows
            .iter()
            .map(|w| w.index)
            .collect();
        let index = if index_part.is_empty() {
            (0..).find(|i| !used.contains(i)).unwrap_or(0)
        } else {
            let index: u32 = index_part.parse().map_err(|_| {
                unsupported(format!("new-window -t {t}: window part must be a number"))
            })?;
            if used.contains(&index) {
                return Err(tmux(format!("create window failed: index {index} in use")));
            }
            index
        };
        let pane = self.new_pane(command, Self::default_cwd(command))?;
        let id = self.server.next_window;
        self.server.next_window += 1;
        let s = &mut self.server.sessions[session];
        let at = s
            .windows
            .iter()
            .position(|w| w.index > index)
            .unwrap_or(s.windows.len());
        s.windows.insert(
            at,
            Window {
                id,
                index,
                active: pane.id,
                panes: vec![pane],
            },
        );
        if !command.has('d') {
            s.current = index;
        }
        self.dirty = true;
        let pos = PanePos {
            session,
            window: at,
            pane: 0,
        };
        self.print_created(command, pos, "#{session_name}:#{window_index}");
        Ok(())
    }

    fn split_window(&mut self, command: &Command) -> Result<(), CmdError> {
        if let Some(f) = command.value('F') {
            Format::parse(f).map_err(|e| unsupported(e.to_string()))?;
        }
        let at = self.pane_target(command)?;
        let cwd = command
            .value('c')
            .map(str::to_owned)
            .unwrap_or_else(|| self.server.pane(at).cwd.clone());
        let pane = self.new_pane(command, cwd)?;
        let id = pane.id;
        let window = &mut self.server.sessions[at.session].windows[at.window];
        window.panes.insert(at.pane + 1, pane);
        if !command.has('d') {
            window.active = id;
        }
        self.dirty = true;
        let pos = PanePos {
            pane: at.pane + 1,
            ..at
        };
        self.print_created(
            command,
            pos,
            "#{session_name}:#{window_index}.#{pane_index}",
        );
        Ok(())
    }
}

fn show_line(name: &str, value: &str, value_only: bool) -> String {
    if value_only {
        value.to_owned()
    } else {
        format!("{name} {}", escape::args_escape(value))
    }
}

fn lookup(
    server: &Server,
    dir: &ServerDir,
    socket: &str,
    host: &str,
    pos: Option<PanePos>,
    client: Option<&Client>,
    var: &Var,
) -> Option<String> {
    let name = match var {
        Var::Option(name) => return pos.and_then(|p| server.pane(p).options.get(name).cloned()),
        Var::Builtin(name) => *name,
    };
    match name {
        "socket_path" => return Some(socket.to_owned()),
        "host" => return Some(host.to_owned()),
        "host_short" => return Some(host.split('.').next().unwrap_or(host).to_owned()),
        "version" => return Some("3.3a".into()),
        "client_name" | "client_tty" => return client.map(|c| c.name.clone()),
        "client_session" => return client.map(|c| c.session.clone()),
        "client_pid" => return client.map(|c| c.pid.to_string()),
        _ => {}
    }
    let pos = pos?;
    let session = &server.sessions[pos.session];
    let window = &session.windows[pos.window];
    let pane = &window.panes[pos.pane];
    Some(match name {
        "pane_id" => format!("%{}", pane.id),
        "pane_index" => pos.pane.to_string(),
        "pane_tty" => dir.tty(pane.id).display().to_string(),
        "pane_current_path" => pane.cwd.clone(),
        "pane_title" => pane.title.clone(),
        "pane_pid" => pane.pid.to_string(),
        "pane_active" => u8::from(window.active == pane.id).to_string(),
        "pane_dead" => "0".into(),
        "window_id" => format!("@{}", window.id),
        "window_index" => window.index.to_string(),
        "window_active" => u8::from(session.current == window.index).to_string(),
        "window_panes" => window.panes.len().to_string(),
        "session_id" => format!("${}", session.id),
        "session_name" => session.name.clone(),
        "session_windows" => session.windows.len().to_string(),
        _ => return None,
    })
}

/// Changes a running fake server's state under its lock (what the simulator does that no tmux
/// command can, such as attaching a client). Fails when the server does not run.
pub fn edit<T>(dir: &ServerDir, change: impl FnOnce(&mut Server) -> T) -> std::io::Result<T> {
    let _lock = dir.lock(false)?;
    let mut server = dir.load()?.ok_or_else(|| {
        std::io::Error::new(
            std::io::ErrorKind::NotFound,
            format!("no server running on {}", dir.path.display()),
        )
    })?;
    let result = change(&mut server);
    dir.store(Some(&server))?;
    Ok(result)
}
