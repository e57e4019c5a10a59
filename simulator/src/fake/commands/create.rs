//! Commands that create panes: `new-session`, `new-window` and `split-window` (each pane with
//! the next id and a tty file), and `respawn-pane`, which starts a pane's program again.

use super::{CmdError, Run, tmux, unsupported};
use crate::fake::cli::Command;
use crate::fake::format::Format;
use crate::fake::state::{Pane, PanePos, Session, Window, now_secs};
use crate::fake::target;

impl Run<'_> {
    pub(super) fn new_session(&mut self, command: &Command) -> Result<(), CmdError> {
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
        let size = self.new_session_size(command)?;
        self.server.next_session += 1;
        let path = Self::default_cwd(command);
        let pane = self.new_pane(command, path.clone())?;
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
                created: now_secs(),
                ..Window::default()
            }],
            current: 0,
            created: now_secs(),
            size,
            path,
            ..Session::default()
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

    pub(super) fn new_window(&mut self, command: &Command) -> Result<(), CmdError> {
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
                created: now_secs(),
                ..Window::default()
            },
        );
        if !command.has('d') && s.current != index {
            // tmux's `lastw`: the window that was current goes to the front of the stack.
            let previous = s.current;
            s.stack.retain(|i| *i != previous && *i != index);
            s.stack.insert(0, previous);
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

    pub(super) fn split_window(&mut self, command: &Command) -> Result<(), CmdError> {
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

    pub(super) fn respawn_pane(&mut self, command: &Command) -> Result<(), CmdError> {
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

    /// A new session's size: `-x` and `-y`, else the global `default-size`, else 80x24, as
    /// tmux 3.3a sizes a detached session.
    fn new_session_size(&self, command: &Command) -> Result<(u32, u32), CmdError> {
        let default = self
            .server
            .options
            .get("default-size")
            .and_then(|size| size.split_once('x'))
            .and_then(|(x, y)| Some((x.parse().ok()?, y.parse().ok()?)))
            .unwrap_or((80, 24));
        let dimension = |flag: char, fallback: u32| match command.value(flag) {
            None => Ok(fallback),
            Some(text) => text
                .parse::<u32>()
                .ok()
                .filter(|n| (1..=10_000).contains(n))
                .ok_or_else(|| {
                    tmux(format!(
                        "invalid {} size",
                        if flag == 'x' { "width" } else { "height" }
                    ))
                }),
        };
        Ok((dimension('x', default.0)?, dimension('y', default.1)?))
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
            let line = Format::parse(&text)
                .map_err(|e| unsupported(e.to_string()))
                .and_then(|format| self.expand(command, &format, Some(pos), None, None));
            match line {
                Ok(line) => self.print(&line),
                Err(CmdError::Tmux(e) | CmdError::Unsupported(e)) => self.print(&e),
            }
        }
    }
}
