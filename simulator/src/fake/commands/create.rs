//! Commands that create panes: `new-session`, `new-window` and `split-window` (each pane with
//! the next id and a tty file), and `respawn-pane`, which starts a pane's program again.

use super::{CmdError, Run, tmux, unsupported};
use crate::fake::cli::Command;
use crate::fake::format::Format;
use crate::fake::state::{Pane, PanePos, Session, Window};
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
}
