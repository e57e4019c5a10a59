//! tmux's format variables, in one table: every name tmux 3.3a's manual lists in its FORMATS
//! section (`man tmux`, "The following variables are available"), each with its one-letter alias
//! (`#D`), what it needs (a pane, window or session target, or a client) and how the fake reads it.
//! The format parser resolves names against this table and the expansion answers from it, so the
//! two cannot drift apart. A variable is one of:
//!
//! - **modelled** from the fake's state ([`super::state`]): ids, indexes, names, paths, titles,
//!   sizes, the attached clients, the windows' recency stack, creation times;
//! - **a constant**, where tmux's value is fixed for what the fake's panes are: nothing is ever in a
//!   mode, dead, marked, zoomed, piped, synchronized or in an alert, and a pane's screen is blank
//!   (the fake keeps nothing a program drew: the cursor at 0,0, no history, default modes); values
//!   tmux only has inside a mode, a hook, a buffer or command listing, a mouse event or a session
//!   group expand to nothing, as tmux expands them outside those;
//! - **geometry** (`pane_width`, `pane_top`, `window_layout`, ...): modelled for a window of one
//!   pane (the pane fills the window); the fake keeps no layout, so in a window of several panes
//!   the expansion fails naming the variable;
//! - **known but not modelled**: [`UNMODELLED`] (a client's terminal, its times and counters, the
//!   cell size in pixels, the character under the cursor and the memory a pane's history takes,
//!   the loaded configuration files). A
//!   format naming one is refused when it is parsed, with one line naming the variable.
//!
//! A name that is in none of these lists and is no option is unknown to tmux too, and expands to
//! nothing as tmux expands it. User options (`#{@name}`) and tmux options (`#{default-size}`) are
//! not in the table: [`super::format`] resolves them.
//!
//! Times (`session_created`, `start_time`, ...) are the fake's clock when the thing was created.
//! `pane_pid` and `pid` are synthetic: no such process exists. `pane_current_command` and the
//! window name (tmux's automatic rename) are the program the pane's command line runs, as far as
//! the line tells: the program after the last `exec` of a `sh -c` script, else the first word.

use super::escape;
use super::state::{Client, Pane, PanePos, Server, ServerDir, Session, Window};

/// What an expansion knows: the server, and the pane and client it is about, if any.
#[derive(Debug, Clone, Copy)]
pub struct Context<'a> {
    /// The server's state.
    pub server: &'a Server,
    /// The server's directory (pane ttys live there).
    pub dir: &'a ServerDir,
    /// The socket path, as tmux shows it.
    pub socket_path: &'a str,
    /// The host name.
    pub host: &'a str,
    /// The pane the expansion is about.
    pub pos: Option<PanePos>,
    /// The client the expansion is about.
    pub client: Option<&'a Client>,
    /// The command expanding the format (`#{command}`).
    pub command: &'a str,
    /// The line number in a listing (`#{line}`), if the expansion is for a listing.
    pub line: Option<usize>,
}

/// A pane with its window and session.
#[derive(Debug, Clone, Copy)]
pub struct At<'a> {
    session: &'a Session,
    window: &'a Window,
    index: usize,
    pane: &'a Pane,
}

impl<'a> Context<'a> {
    fn at(&self) -> Option<At<'a>> {
        let pos = self.pos?;
        let session = &self.server.sessions[pos.session];
        let window = &session.windows[pos.window];
        Some(At {
            session,
            window,
            index: pos.pane,
            pane: &window.panes[pos.pane],
        })
    }

    /// A user option (`@name`) as tmux finds it for the pane the expansion is about: the pane's
    /// own, else its window's, else its session's, else the global one.
    pub fn option(&self, name: &str) -> Option<String> {
        let at = self.at();
        at.and_then(|at| at.pane.options.get(name))
            .or_else(|| at.and_then(|at| at.window.options.get(name)))
            .or_else(|| at.and_then(|at| at.session.options.get(name)))
            .or_else(|| self.server.options.get(name))
            .cloned()
    }

    /// A tmux option the fake stores (set with `set-option`), if set.
    pub fn server_option(&self, name: &str) -> Option<String> {
        self.server.options.get(name).cloned()
    }
}

/// How a variable's value is read, which is also what it needs.
#[derive(Debug, Clone, Copy)]
enum Read {
    /// From the server alone.
    Server(fn(&Context<'_>) -> String),
    /// From the client the expansion is about; empty without one.
    Client(fn(&Context<'_>, &Client) -> String),
    /// From the pane the expansion is about, its window or its session; empty without one.
    Target(fn(&Context<'_>, &At<'_>) -> String),
    /// From the pane's place in its window: known for a window of one pane only.
    Geometry(fn(&Geometry) -> String),
    /// Always empty where the fake expands formats.
    Empty,
    /// Known to tmux, not modelled: a format naming it is refused.
    Unmodelled,
}

/// A pane's place in its window, and the window's size.
#[derive(Debug, Clone, Copy)]
pub struct Geometry {
    pane: u32,
    window: (u32, u32),
    left: u32,
    top: u32,
    size: (u32, u32),
}

/// One variable.
#[derive(Debug)]
pub struct Variable {
    /// tmux's name (`pane_id`).
    pub name: &'static str,
    /// The letter of its `#X` alias, if it has one.
    pub alias: Option<char>,
    read: Read,
}

/// A variable the fake has no value for where it would need one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NotModelled {
    /// The variable.
    pub name: &'static str,
    /// Why, to end the error line.
    pub why: &'static str,
}

impl Variable {
    /// Its value; `Ok(None)` expands to nothing, as tmux expands a variable it has no value for.
    pub fn value(&self, context: &Context<'_>) -> Result<Option<String>, NotModelled> {
        Ok(match self.read {
            Read::Server(read) => Some(read(context)),
            Read::Client(read) => context.client.map(|client| read(context, client)),
            Read::Target(read) => context.at().map(|at| read(context, &at)),
            Read::Geometry(read) => match context.at() {
                None => None,
                Some(at) if at.window.panes.len() == 1 => Some(read(&Geometry {
                    pane: at.pane.id,
                    window: window_size(at.session),
                    left: 0,
                    top: 0,
                    size: window_size(at.session),
                })),
                Some(_) => {
                    return Err(NotModelled {
                        name: self.name,
                        why: "in a window of several panes (the fake keeps no layout)",
                    });
                }
            },
            Read::Empty => Some(String::new()),
            Read::Unmodelled => {
                return Err(NotModelled {
                    name: self.name,
                    why: "",
                });
            }
        })
    }

    /// Whether it is about a pane, window or session, so a format naming it needs a target.
    pub fn needs_target(&self) -> bool {
        matches!(self.read, Read::Target(_) | Read::Geometry(_))
    }

    /// Whether tmux knows it but the fake does not model it.
    pub fn unmodelled(&self) -> bool {
        matches!(self.read, Read::Unmodelled)
    }
}

impl PartialEq for Variable {
    fn eq(&self, other: &Variable) -> bool {
        self.name == other.name
    }
}

impl Eq for Variable {}

const fn target(name: &'static str, read: fn(&Context<'_>, &At<'_>) -> String) -> Variable {
    Variable {
        name,
        alias: None,
        read: Read::Target(read),
    }
}

const fn aliased_target(
    name: &'static str,
    alias: char,
    read: fn(&Context<'_>, &At<'_>) -> String,
) -> Variable {
    Variable {
        name,
        alias: Some(alias),
        read: Read::Target(read),
    }
}

const fn client(name: &'static str, read: fn(&Context<'_>, &Client) -> String) -> Variable {
    Variable {
        name,
        alias: None,
        read: Read::Client(read),
    }
}

const fn server(name: &'static str, read: fn(&Context<'_>) -> String) -> Variable {
    Variable {
        name,
        alias: None,
        read: Read::Server(read),
    }
}

const fn geometry(name: &'static str, read: fn(&Geometry) -> String) -> Variable {
    Variable {
        name,
        alias: None,
        read: Read::Geometry(read),
    }
}

const fn empty(name: &'static str) -> Variable {
    Variable {
        name,
        alias: None,
        read: Read::Empty,
    }
}

const fn unmodelled(name: &'static str) -> Variable {
    Variable {
        name,
        alias: None,
        read: Read::Unmodelled,
    }
}

fn flag(on: bool) -> String {
    u8::from(on).to_string()
}

fn zero(_: &Context<'_>, _: &At<'_>) -> String {
    "0".into()
}

fn one(_: &Context<'_>, _: &At<'_>) -> String {
    "1".into()
}

/// A session's size (which every window of it has); 80x24 for a state from before sizes were
/// recorded, tmux's default.
fn window_size(session: &Session) -> (u32, u32) {
    match session.size {
        (0, _) | (_, 0) => (80, 24),
        size => size,
    }
}

/// The clients attached to a session.
fn clients_of<'a>(context: &Context<'a>, session: &Session) -> Vec<&'a Client> {
    context
        .server
        .clients
        .iter()
        .filter(|c| c.session == session.name)
        .collect()
}

/// The windows' flags as tmux prints them: `*` current, `-` the last window before it.
fn window_flags(at: &At<'_>) -> String {
    let mut flags = String::new();
    if at.session.current == at.window.index {
        flags.push('*');
    } else if at.session.stack.first() == Some(&at.window.index) {
        flags.push('-');
    }
    flags
}

/// The program a pane's command line runs: the program after the last `exec` of a `sh -c`
/// script, else the first word of the command (a single argument is a shell command line), else
/// the default shell.
pub fn current_command(command: &[String]) -> String {
    let base = |word: &str| word.rsplit('/').next().unwrap_or(word).to_owned();
    match command {
        [] => base(&std::env::var("SHELL").unwrap_or_else(|_| "sh".into())),
        [shell, c, script, ..] if c == "-c" && script.contains("exec ") => {
            let after = script.rsplit("exec ").next().unwrap_or("");
            let word = after.split_whitespace().next().unwrap_or("");
            if word.is_empty() {
                base(shell)
            } else {
                base(word)
            }
        }
        [line] => base(line.split_whitespace().next().unwrap_or("")),
        [program, ..] => base(program),
    }
}

/// The user of a uid, from `/etc/passwd`.
fn user_name(uid: u32) -> String {
    std::fs::read_to_string("/etc/passwd")
        .ok()
        .and_then(|passwd| {
            passwd.lines().find_map(|line| {
                let fields: Vec<&str> = line.split(':').collect();
                (fields.get(2) == Some(&uid.to_string().as_str())).then(|| fields[0].to_owned())
            })
        })
        .unwrap_or_else(|| uid.to_string())
}

fn uid() -> u32 {
    rustix::process::getuid().as_raw()
}

/// tmux's layout description of one pane filling its window: checksum, then the cell.
fn layout(g: &Geometry) -> String {
    let cell = format!("{}x{},{},{},{}", g.size.0, g.size.1, g.left, g.top, g.pane);
    format!("{:04x},{cell}", layout_checksum(&cell))
}

/// tmux's layout checksum (`layout_checksum` in layout-custom.c): a 16-bit rotate-and-add.
fn layout_checksum(text: &str) -> u16 {
    text.bytes().fold(0u16, |sum, byte| {
        (sum >> 1)
            .wrapping_add((sum & 1) << 15)
            .wrapping_add(u16::from(byte))
    })
}

/// Every variable of tmux 3.3a's FORMATS table, in its order, and what the fake makes of it.
pub const VARIABLES: &[Variable] = &[
    target("active_window_index", |_, at| {
        at.session.current.to_string()
    }),
    target("alternate_on", zero),
    empty("alternate_saved_x"),
    empty("alternate_saved_y"),
    empty("buffer_created"),
    empty("buffer_name"),
    empty("buffer_sample"),
    empty("buffer_size"),
    unmodelled("client_activity"),
    unmodelled("client_cell_height"),
    unmodelled("client_cell_width"),
    client("client_control_mode", |_, _| "0".into()),
    unmodelled("client_created"),
    unmodelled("client_discarded"),
    unmodelled("client_flags"),
    // A fake client is as big as its session's windows, plus the status line.
    client("client_height", |c, client| {
        client_session(c, client).map_or(String::new(), |s| (window_size(s).1 + 1).to_string())
    }),
    unmodelled("client_key_table"),
    empty("client_last_session"),
    client("client_name", |_, client| client.name.clone()),
    client("client_pid", |_, client| client.pid.to_string()),
    client("client_prefix", |_, _| "0".into()),
    client("client_readonly", |_, _| "0".into()),
    client("client_session", |_, client| client.session.clone()),
    unmodelled("client_termfeatures"),
    unmodelled("client_termname"),
    unmodelled("client_termtype"),
    client("client_tty", |_, client| client.name.clone()),
    unmodelled("client_uid"),
    unmodelled("client_user"),
    unmodelled("client_utf8"),
    client("client_width", |c, client| {
        client_session(c, client).map_or(String::new(), |s| window_size(s).0.to_string())
    }),
    unmodelled("client_written"),
    server("command", |c| c.command.to_owned()),
    empty("command_list_alias"),
    empty("command_list_name"),
    empty("command_list_usage"),
    unmodelled("config_files"),
    empty("copy_cursor_line"),
    empty("copy_cursor_word"),
    empty("copy_cursor_x"),
    empty("copy_cursor_y"),
    empty("current_file"),
    unmodelled("cursor_character"),
    target("cursor_flag", one),
    target("cursor_x", zero),
    target("cursor_y", zero),
    unmodelled("history_bytes"),
    target("history_limit", |_, _| "2000".into()),
    target("history_size", zero),
    empty("hook"),
    empty("hook_client"),
    empty("hook_pane"),
    empty("hook_session"),
    empty("hook_session_name"),
    empty("hook_window"),
    empty("hook_window_name"),
    Variable {
        name: "host",
        alias: Some('H'),
        read: Read::Server(|c| c.host.to_owned()),
    },
    Variable {
        name: "host_short",
        alias: Some('h'),
        read: Read::Server(|c| c.host.split('.').next().unwrap_or(c.host).to_owned()),
    },
    target("insert_flag", zero),
    target("keypad_cursor_flag", zero),
    target("keypad_flag", zero),
    target("last_window_index", |_, at| {
        let last = at.session.windows.iter().map(|w| w.index).max();
        last.map_or(String::new(), |i| i.to_string())
    }),
    server("line", |c| c.line.map_or(String::new(), |l| l.to_string())),
    target("mouse_all_flag", zero),
    target("mouse_any_flag", zero),
    target("mouse_button_flag", zero),
    empty("mouse_line"),
    target("mouse_sgr_flag", zero),
    target("mouse_standard_flag", zero),
    target("mouse_utf8_flag", zero),
    empty("mouse_word"),
    empty("mouse_x"),
    empty("mouse_y"),
    server("next_session_id", |c| format!("${}", c.server.next_session)),
    target("origin_flag", zero),
    target("pane_active", |_, at| flag(at.window.active == at.pane.id)),
    geometry("pane_at_bottom", |g| flag(g.top + g.size.1 == g.window.1)),
    geometry("pane_at_left", |g| flag(g.left == 0)),
    geometry("pane_at_right", |g| flag(g.left + g.size.0 == g.window.0)),
    geometry("pane_at_top", |g| flag(g.top == 0)),
    target("pane_bg", |_, _| "default".into()),
    geometry("pane_bottom", |g| (g.top + g.size.1 - 1).to_string()),
    target("pane_current_command", |_, at| {
        current_command(&at.pane.command)
    }),
    target("pane_current_path", |_, at| at.pane.cwd.clone()),
    target("pane_dead", zero),
    empty("pane_dead_signal"),
    empty("pane_dead_status"),
    empty("pane_dead_time"),
    target("pane_fg", |_, _| "default".into()),
    target("pane_format", one),
    geometry("pane_height", |g| g.size.1.to_string()),
    aliased_target("pane_id", 'D', |_, at| format!("%{}", at.pane.id)),
    target("pane_in_mode", zero),
    aliased_target("pane_index", 'P', |_, at| at.index.to_string()),
    target("pane_input_off", zero),
    target("pane_last", |_, at| {
        flag(at.window.last == Some(at.pane.id))
    }),
    geometry("pane_left", |g| g.left.to_string()),
    target("pane_marked", zero),
    target("pane_marked_set", zero),
    empty("pane_mode"),
    empty("pane_path"),
    target("pane_pid", |_, at| at.pane.pid.to_string()),
    target("pane_pipe", zero),
    geometry("pane_right", |g| (g.left + g.size.0 - 1).to_string()),
    empty("pane_search_string"),
    target("pane_start_command", |_, at| {
        let words: Vec<String> = at
            .pane
            .command
            .iter()
            .map(|w| escape::args_escape(w))
            .collect();
        words.join(" ")
    }),
    target("pane_start_path", |_, at| at.pane.cwd.clone()),
    target("pane_synchronized", zero),
    geometry("pane_tabs", |g| {
        let stops: Vec<String> = (1..)
            .map(|n| n * 8)
            .take_while(|stop| *stop < g.size.0)
            .map(|stop| stop.to_string())
            .collect();
        stops.join(",")
    }),
    aliased_target("pane_title", 'T', |_, at| at.pane.title.clone()),
    geometry("pane_top", |g| g.top.to_string()),
    target("pane_tty", |c, at| {
        c.dir.tty(at.pane.id).display().to_string()
    }),
    geometry("pane_width", |g| g.size.0.to_string()),
    // Synthetic, as `pane_pid` is: no server process exists.
    server("pid", |_| "99999".into()),
    empty("rectangle_toggle"),
    empty("scroll_position"),
    geometry("scroll_region_lower", |g| (g.size.1 - 1).to_string()),
    geometry("scroll_region_upper", |_| "0".into()),
    empty("search_match"),
    empty("search_present"),
    empty("selection_active"),
    empty("selection_end_x"),
    empty("selection_end_y"),
    empty("selection_present"),
    empty("selection_start_x"),
    empty("selection_start_y"),
    target("session_activity", |_, at| at.session.created.to_string()),
    empty("session_alerts"),
    target("session_attached", |c, at| {
        clients_of(c, at.session).len().to_string()
    }),
    target("session_attached_list", |c, at| {
        let names: Vec<&str> = clients_of(c, at.session)
            .iter()
            .map(|client| client.name.as_str())
            .collect();
        names.join(",")
    }),
    target("session_created", |_, at| at.session.created.to_string()),
    target("session_format", zero),
    empty("session_group"),
    empty("session_group_attached"),
    empty("session_group_attached_list"),
    empty("session_group_list"),
    empty("session_group_many_attached"),
    empty("session_group_size"),
    target("session_grouped", zero),
    target("session_id", |_, at| format!("${}", at.session.id)),
    unmodelled("session_last_attached"),
    target("session_many_attached", |c, at| {
        flag(clients_of(c, at.session).len() > 1)
    }),
    target("session_marked", zero),
    aliased_target("session_name", 'S', |_, at| at.session.name.clone()),
    target("session_path", |_, at| at.session.path.clone()),
    target("session_stack", |_, at| {
        let stack: Vec<String> = std::iter::once(at.session.current)
            .chain(at.session.stack.iter().copied())
            .map(|i| i.to_string())
            .collect();
        stack.join(",")
    }),
    target("session_windows", |_, at| {
        at.session.windows.len().to_string()
    }),
    server("socket_path", |c| c.socket_path.to_owned()),
    server("start_time", |c| c.server.start_time.to_string()),
    server("uid", |_| uid().to_string()),
    server("user", |_| user_name(uid())),
    server("version", |_| "3.3a".into()),
    target("window_active", |_, at| {
        flag(at.session.current == at.window.index)
    }),
    target("window_active_clients", |c, at| {
        let current = at.session.current == at.window.index;
        let count = if current {
            clients_of(c, at.session).len()
        } else {
            0
        };
        count.to_string()
    }),
    target("window_active_clients_list", |c, at| {
        if at.session.current != at.window.index {
            return String::new();
        }
        let names: Vec<&str> = clients_of(c, at.session)
            .iter()
            .map(|client| client.name.as_str())
            .collect();
        names.join(",")
    }),
    target("window_active_sessions", |_, at| {
        flag(at.session.current == at.window.index)
    }),
    target("window_active_sessions_list", |_, at| {
        if at.session.current == at.window.index {
            at.session.name.clone()
        } else {
            String::new()
        }
    }),
    target("window_activity", |_, at| at.window.created.to_string()),
    target("window_activity_flag", zero),
    target("window_bell_flag", zero),
    empty("window_bigger"),
    unmodelled("window_cell_height"),
    unmodelled("window_cell_width"),
    target("window_end_flag", |_, at| {
        flag(
            at.session
                .windows
                .iter()
                .all(|w| w.index <= at.window.index),
        )
    }),
    Variable {
        name: "window_flags",
        alias: Some('F'),
        read: Read::Target(|_, at| window_flags(at)),
    },
    target("window_format", zero),
    target("window_height", |_, at| {
        window_size(at.session).1.to_string()
    }),
    target("window_id", |_, at| format!("@{}", at.window.id)),
    aliased_target("window_index", 'I', |_, at| at.window.index.to_string()),
    target("window_last_flag", |_, at| {
        flag(at.session.stack.first() == Some(&at.window.index))
    }),
    geometry("window_layout", layout),
    target("window_linked", zero),
    target("window_linked_sessions", one),
    target("window_linked_sessions_list", |_, at| {
        at.session.name.clone()
    }),
    target("window_marked_flag", zero),
    Variable {
        name: "window_name",
        alias: Some('W'),
        read: Read::Target(|_, at| {
            let active = at.window.panes.iter().find(|p| p.id == at.window.active);
            current_command(&active.unwrap_or(at.pane).command)
        }),
    },
    empty("window_offset_x"),
    empty("window_offset_y"),
    target("window_panes", |_, at| at.window.panes.len().to_string()),
    target("window_raw_flags", |_, at| window_flags(at)),
    target("window_silence_flag", zero),
    target("window_stack_index", |_, at| {
        let place = at.session.stack.iter().position(|i| *i == at.window.index);
        place.map_or(0, |p| p + 1).to_string()
    }),
    target("window_start_flag", |_, at| {
        flag(
            at.session
                .windows
                .iter()
                .all(|w| w.index >= at.window.index),
        )
    }),
    geometry("window_visible_layout", layout),
    target("window_width", |_, at| {
        window_size(at.session).0.to_string()
    }),
    target("window_zoomed_flag", zero),
    target("wrap_flag", one),
];

/// The session a client is attached to.
fn client_session<'a>(context: &Context<'a>, client: &Client) -> Option<&'a Session> {
    context
        .server
        .sessions
        .iter()
        .find(|s| s.name == client.session)
}

/// The variables tmux knows that the fake refuses, by name.
pub fn unmodelled_names() -> impl Iterator<Item = &'static str> {
    VARIABLES.iter().filter(|v| v.unmodelled()).map(|v| v.name)
}

/// The list [`UNMODELLED`] spells out for the reader; a test keeps it equal to the table's.
pub const UNMODELLED: &[&str] = &[
    "client_activity",
    "client_cell_height",
    "client_cell_width",
    "client_created",
    "client_discarded",
    "client_flags",
    "client_key_table",
    "client_termfeatures",
    "client_termname",
    "client_termtype",
    "client_uid",
    "client_user",
    "client_utf8",
    "client_written",
    "config_files",
    "cursor_character",
    "history_bytes",
    "session_last_attached",
    "window_cell_height",
    "window_cell_width",
];

/// The variable of a name.
pub fn named(name: &str) -> Option<&'static Variable> {
    VARIABLES.iter().find(|variable| variable.name == name)
}

/// The variable of a one-letter alias (`D` for `#D`).
pub fn aliased(letter: char) -> Option<&'static Variable> {
    VARIABLES
        .iter()
        .find(|variable| variable.alias == Some(letter))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_name_and_alias_is_listed_once() {
        for variable in VARIABLES {
            assert_eq!(named(variable.name), Some(variable), "{}", variable.name);
            if let Some(letter) = variable.alias {
                assert_eq!(aliased(letter), Some(variable), "#{letter}");
            }
        }
        let mut aliases: Vec<char> = VARIABLES.iter().filter_map(|v| v.alias).collect();
        aliases.sort_unstable();
        assert_eq!(aliases, ['D', 'F', 'H', 'I', 'P', 'S', 'T', 'W', 'h']);
    }

    #[test]
    fn the_unmodelled_list_is_the_tables() {
        assert_eq!(unmodelled_names().collect::<Vec<_>>(), UNMODELLED);
    }

    /// Every variable tmux 3.3a's manual lists is in the table (the list as printed by
    /// `man tmux`, FORMATS section).
    #[test]
    fn the_table_covers_the_manual() {
        let manual = "active_window_index alternate_on alternate_saved_x alternate_saved_y \
            buffer_created buffer_name buffer_sample buffer_size client_activity \
            client_cell_height client_cell_width client_control_mode client_created \
            client_discarded client_flags client_height client_key_table client_last_session \
            client_name client_pid client_prefix client_readonly client_session \
            client_termfeatures client_termname client_termtype client_tty client_uid \
            client_user client_utf8 client_width client_written command command_list_alias \
            command_list_name command_list_usage config_files copy_cursor_line \
            copy_cursor_word copy_cursor_x copy_cursor_y current_file cursor_character \
            cursor_flag cursor_x cursor_y history_bytes history_limit history_size hook \
            hook_client hook_pane hook_session hook_session_name hook_window hook_window_name \
            host host_short insert_flag keypad_cursor_flag keypad_flag last_window_index line \
            mouse_all_flag mouse_any_flag mouse_button_flag mouse_line mouse_sgr_flag \
            mouse_standard_flag mouse_utf8_flag mouse_word mouse_x mouse_y next_session_id \
            origin_flag pane_active pane_at_bottom pane_at_left pane_at_right pane_at_top \
            pane_bg pane_bottom pane_current_command pane_current_path pane_dead \
            pane_dead_signal pane_dead_status pane_dead_time pane_fg pane_format pane_height \
            pane_id pane_in_mode pane_index pane_input_off pane_last pane_left pane_marked \
            pane_marked_set pane_mode pane_path pane_pid pane_pipe pane_right \
            pane_search_string pane_start_command pane_start_path pane_synchronized pane_tabs \
            pane_title pane_top pane_tty pane_width pid rectangle_toggle scroll_position \
            scroll_region_lower scroll_region_upper search_match search_present \
            selection_active selection_end_x selection_end_y selection_present \
            selection_start_x selection_start_y session_activity session_alerts \
            session_attached session_attached_list session_created session_format \
            session_group session_group_attached session_group_attached_list \
            session_group_list session_group_many_attached session_group_size session_grouped \
            session_id session_last_attached session_many_attached session_marked \
            session_name session_path session_stack session_windows socket_path start_time \
            uid user version window_active window_active_clients window_active_clients_list \
            window_active_sessions window_active_sessions_list window_activity \
            window_activity_flag window_bell_flag window_bigger window_cell_height \
            window_cell_width window_end_flag window_flags window_format window_height \
            window_id window_index window_last_flag window_layout window_linked \
            window_linked_sessions window_linked_sessions_list window_marked_flag window_name \
            window_offset_x window_offset_y window_panes window_raw_flags window_silence_flag \
            window_stack_index window_start_flag window_visible_layout window_width \
            window_zoomed_flag wrap_flag";
        let names: Vec<&str> = VARIABLES.iter().map(|v| v.name).collect();
        assert_eq!(names, manual.split_whitespace().collect::<Vec<_>>());
    }

    /// The fixtures README names every variable the fake refuses, and only those.
    #[test]
    fn the_fixtures_readme_names_the_refused_variables() {
        let readme = std::fs::read_to_string(
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../golden/fixtures/README.md"),
        )
        .unwrap();
        let listed = readme
            .split_once("(refused variables: ")
            .and_then(|(_, rest)| rest.split_once(')'))
            .map(|(list, _)| list.replace('\n', " "))
            .expect("the README names the refused variables");
        let mut listed: Vec<&str> = listed
            .split(", ")
            .map(|name| name.trim().trim_matches('`'))
            .collect();
        listed.sort_unstable();
        let mut refused: Vec<&str> = unmodelled_names().collect();
        refused.sort_unstable();
        assert_eq!(listed, refused);
    }

    #[test]
    fn what_needs_a_target_is_about_a_pane_window_or_session() {
        for variable in VARIABLES {
            if variable.needs_target() {
                let scoped = ["pane_", "window_", "session_"]
                    .iter()
                    .any(|prefix| variable.name.starts_with(prefix))
                    || variable.name.contains("_flag")
                    || variable.name.starts_with("cursor_")
                    || variable.name.starts_with("history_")
                    || variable.name.starts_with("scroll_region")
                    || variable.name.ends_with("window_index")
                    || variable.name == "alternate_on";
                assert!(scoped, "{}", variable.name);
            }
        }
    }

    /// Printed by tmux 3.3a for a 100x30 window of one pane `%0`.
    #[test]
    fn a_lone_pane_fills_its_window() {
        let g = Geometry {
            pane: 0,
            window: (100, 30),
            left: 0,
            top: 0,
            size: (100, 30),
        };
        assert_eq!(layout(&g), "a87d,100x30,0,0,0");
        let find = |name: &str| match named(name).unwrap().read {
            Read::Geometry(read) => read(&g),
            _ => panic!("{name}"),
        };
        assert_eq!(
            [
                "pane_right",
                "pane_bottom",
                "pane_at_right",
                "pane_at_bottom"
            ]
            .map(find),
            ["99", "29", "1", "1"]
        );
        assert_eq!(find("pane_tabs"), "8,16,24,32,40,48,56,64,72,80,88,96");
    }

    #[test]
    fn current_command_follows_the_command_line() {
        let words = |w: &[&str]| w.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert_eq!(
            current_command(&words(&["sh", "-c", "stty raw && exec cat >> x", "a"])),
            "cat"
        );
        assert_eq!(
            current_command(&words(&["/usr/bin/claude", "--x"])),
            "claude"
        );
        assert_eq!(current_command(&words(&["sleep 300"])), "sleep");
    }
}
