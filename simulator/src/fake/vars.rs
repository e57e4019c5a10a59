//! tmux's format variables the fake expands, in one table: each name with its one-letter alias
//! (`#D`), what it needs (a pane, window or session target, or a client), and how its value is
//! read. The format parser accepts exactly these names and the expansion answers exactly them, so
//! the two cannot drift apart. `#{@option}` (a pane user option) is not in the table: any name
//! after `@` is one.

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
}

/// A pane with its window and session.
struct At<'a> {
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

    /// A pane user option (`@name`) of the pane the expansion is about.
    pub fn option(&self, name: &str) -> Option<String> {
        self.at()?.pane.options.get(name).cloned()
    }
}

/// How a variable's value is read, which is also what it needs.
#[derive(Debug, Clone, Copy)]
enum Read {
    /// From the server alone.
    Server(fn(&Context<'_>) -> String),
    /// From the client the expansion is about; empty without one.
    Client(fn(&Client) -> String),
    /// From the pane the expansion is about, its window or its session; empty without one.
    Target(fn(&Context<'_>, &At<'_>) -> String),
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

impl Variable {
    /// Its value; `None` expands to nothing, as tmux expands a variable it has no value for.
    pub fn value(&self, context: &Context<'_>) -> Option<String> {
        match self.read {
            Read::Server(read) => Some(read(context)),
            Read::Client(read) => context.client.map(read),
            Read::Target(read) => context.at().map(|at| read(context, &at)),
        }
    }

    /// Whether it is about a pane, window or session, so a format naming it needs a target.
    pub fn needs_target(&self) -> bool {
        matches!(self.read, Read::Target(_))
    }
}

impl PartialEq for Variable {
    fn eq(&self, other: &Variable) -> bool {
        self.name == other.name
    }
}

impl Eq for Variable {}

const fn target(
    name: &'static str,
    alias: Option<char>,
    read: fn(&Context<'_>, &At<'_>) -> String,
) -> Variable {
    Variable {
        name,
        alias,
        read: Read::Target(read),
    }
}

const fn client(name: &'static str, read: fn(&Client) -> String) -> Variable {
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

/// Every variable the fake supports, in the order `golden/fixtures/README.md` lists them.
pub const VARIABLES: &[Variable] = &[
    target("pane_id", Some('D'), |_, at| format!("%{}", at.pane.id)),
    target("pane_index", Some('P'), |_, at| at.index.to_string()),
    target("pane_tty", None, |c, at| {
        c.dir.tty(at.pane.id).display().to_string()
    }),
    target("pane_current_path", None, |_, at| at.pane.cwd.clone()),
    target("pane_title", Some('T'), |_, at| at.pane.title.clone()),
    target("pane_pid", None, |_, at| at.pane.pid.to_string()),
    target("pane_active", None, |_, at| {
        u8::from(at.window.active == at.pane.id).to_string()
    }),
    target("pane_dead", None, |_, _| "0".into()),
    target("window_id", None, |_, at| format!("@{}", at.window.id)),
    target("window_index", Some('I'), |_, at| {
        at.window.index.to_string()
    }),
    target("window_active", None, |_, at| {
        u8::from(at.session.current == at.window.index).to_string()
    }),
    target("window_panes", None, |_, at| {
        at.window.panes.len().to_string()
    }),
    target("session_id", None, |_, at| format!("${}", at.session.id)),
    target("session_name", Some('S'), |_, at| at.session.name.clone()),
    target("session_windows", None, |_, at| {
        at.session.windows.len().to_string()
    }),
    server("socket_path", |c| c.socket_path.to_owned()),
    server("host", |c| c.host.to_owned()),
    server("host_short", |c| {
        c.host.split('.').next().unwrap_or(c.host).to_owned()
    }),
    client("client_name", |client| client.name.clone()),
    client("client_tty", |client| client.name.clone()),
    client("client_session", |client| client.session.clone()),
    client("client_pid", |client| client.pid.to_string()),
    server("version", |_| "3.3a".into()),
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
        let aliases: Vec<char> = VARIABLES.iter().filter_map(|v| v.alias).collect();
        assert_eq!(aliases, ['D', 'P', 'T', 'I', 'S']);
    }

    #[test]
    fn the_fixtures_readme_lists_every_variable() {
        let readme = std::fs::read_to_string(
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../golden/fixtures/README.md"),
        )
        .unwrap();
        let listed = readme
            .split_once("Formats: plain `#{variable}`s (")
            .and_then(|(_, rest)| rest.split_once(')'))
            .map(|(list, _)| list.replace('\n', " "))
            .expect("the README lists the variables");
        let names: Vec<&str> = VARIABLES.iter().map(|v| v.name).collect();
        let listed: Vec<&str> = listed
            .split(", ")
            .map(|name| name.trim().trim_matches('`'))
            .collect();
        assert_eq!(listed, names);
    }

    #[test]
    fn what_needs_a_target_is_what_is_about_a_pane_window_or_session() {
        for variable in VARIABLES {
            let scoped = ["pane_", "window_", "session_"]
                .iter()
                .any(|prefix| variable.name.starts_with(prefix));
            assert_eq!(variable.needs_target(), scoped, "{}", variable.name);
        }
    }
}
