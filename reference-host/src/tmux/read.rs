//! Reading the fleet: one `list-panes -a -F …` returns every pane with its `@agent_*` options.
//!
//! tmux copies option values into `-F` output raw: tabs, control bytes, newlines and invalid
//! UTF-8 all pass through. So the format cannot rely on a separator character an agent could
//! stamp into an option; each read draws a fresh nonce and frames records and fields with it, and
//! values are decoded lossily.

use std::collections::hash_map::RandomState;
use std::hash::{BuildHasher, Hasher};

use super::{Answer, Tmux, TmuxError};

/// The pane variables every read asks for, in format order.
const PANE_VARIABLES: &[&str] = &[
    "pane_id",
    "session_name",
    "window_index",
    "pane_index",
    "window_id",
    "pane_tty",
    "pane_current_path",
    "socket_path",
    "pane_pid",
];

/// The pane user options of the contract, in format order (see [`AgentOptions`]).
const OPTIONS: &[&str] = &[
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
    "@agent_notified_at",
    "@agent_context_notified_at",
    "@agent_stall_notified_at",
];

/// The variables and options a wire row is made of (`fleet::row_of`; `pane_current_path` for its
/// repository facts): the cheapest read a snapshot could do. The host reads more (a card, a
/// dispatch and a notification need the rest); `cargo xtask bench` reads this beside the host's
/// own format to show what the extra fields cost.
const ROW_FIELDS: &[&str] = &[
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
    "@agent_transcript",
    "@agent_permission_request",
    "@agent_pending_tool",
    "@agent_pending_call",
    "@agent_context",
    "@agent_context_at",
    "@agent_mute_until",
];

/// Which fields a `list-panes` format asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fields {
    /// What `serve` reads every cycle: every variable and option, no title.
    Host,
    /// Only what a wire row needs ([`ROW_FIELDS`]).
    Row,
}

/// A `list-panes -a -F` format with a fresh nonce, framed as the host frames its reads.
fn format_of(fields: Fields) -> String {
    let nonce = nonce();
    match fields {
        Fields::Host => list_format(&nonce, Titles::Omit),
        Fields::Row => framed(&nonce, ROW_FIELDS),
    }
}

/// The tmux arguments of one fleet read with `format`.
fn list_panes_args(format: String) -> [String; 4] {
    ["list-panes".into(), "-a".into(), "-F".into(), format]
}

/// The `@agent_*` options of one pane, as stamped (empty when unset).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AgentOptions {
    pub name: String,
    pub state: String,
    pub detail: String,
    pub since: String,
    pub turn_at: String,
    pub stamped_at: String,
    pub attention: String,
    pub session: String,
    pub transcript: String,
    pub permission_request: String,
    pub question_request: String,
    pub api_endpoint: String,
    pub pending_tool: String,
    pub pending_call: String,
    pub context: String,
    pub context_at: String,
    pub mute_until: String,
    pub notified_at: String,
    pub context_notified_at: String,
    pub stall_notified_at: String,
}

/// One pane as tmux reported it. Plain data: interpretation is `fleet.rs`'s job.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PaneRead {
    pub pane_id: String,
    pub session_name: String,
    pub window_index: String,
    pub pane_index: String,
    pub window_id: String,
    pub pane_tty: String,
    pub current_path: String,
    pub socket_path: String,
    pub pane_pid: String,
    pub options: AgentOptions,
    /// The pane title: asked for only by local listings, never by `serve`.
    pub title: Option<String>,
}

/// Whether a read asks tmux for the pane title.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Titles {
    /// `corral ls`: the title is shown locally.
    Include,
    /// `serve`: the title never even enters the process.
    Omit,
}

/// One read of the whole fleet.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Listing {
    /// The server's panes.
    Panes(Vec<PaneRead>),
    /// No server listens on the socket (tmux names it): no panes, which a person should hear.
    NoServer {
        /// The socket path tmux tried.
        socket: String,
    },
}

impl Listing {
    /// The panes; none when no server runs.
    pub fn into_panes(self) -> Vec<PaneRead> {
        match self {
            Listing::Panes(panes) => panes,
            Listing::NoServer { .. } => Vec::new(),
        }
    }
}

impl Tmux {
    /// Reads every pane of the server in one invocation, or finds that no server runs.
    pub fn list_panes(&self, titles: Titles) -> Result<Listing, TmuxError> {
        let nonce = nonce();
        Ok(
            match self.ask(&list_panes_args(list_format(&nonce, titles)))? {
                Answer::Output(out) => Listing::Panes(panes_of(&out, &nonce, titles)?),
                Answer::NoServer { socket } => Listing::NoServer { socket },
            },
        )
    }

    /// Reads every pane and every attached client's name in one invocation (`list-panes`, then
    /// `list-clients`): the notification daemon's read, whose fires show a status-line message
    /// to the clients. No server: no panes, no clients.
    pub fn list_panes_and_clients(
        &self,
        titles: Titles,
    ) -> Result<(Listing, Vec<String>), TmuxError> {
        let nonce = nonce();
        let mut args: Vec<String> = list_panes_args(list_format(&nonce, titles)).into();
        args.extend([
            ";".into(),
            "list-clients".into(),
            "-F".into(),
            format!("{}#{{client_name}}", client_marker(&nonce)),
        ]);
        Ok(match self.ask(&args)? {
            Answer::Output(out) => {
                let (panes, clients) = split_clients(&out, &nonce);
                (Listing::Panes(panes_of(panes, &nonce, titles)?), clients)
            }
            Answer::NoServer { socket } => (Listing::NoServer { socket }, Vec::new()),
        })
    }

    /// The whole command line `serve`'s fleet read runs (with a fresh nonce), or with
    /// [`Fields::Row`] the same read of only the row's fields: `corral internal
    /// list-panes-command` prints it for `cargo xtask bench`, whose baseline runs tmux with it.
    pub fn list_panes_command(&self, fields: Fields) -> Vec<std::ffi::OsString> {
        self.invocation(&list_panes_args(format_of(fields))).argv()
    }
}

impl Tmux {
    /// The value of pane option `name` of `pane` (`show-options -p -q -v`), `None` when it is
    /// unset or empty. A pane tmux does not have is an error.
    pub fn pane_option(&self, pane: &str, name: &str) -> Result<Option<String>, TmuxError> {
        let out = self.run(&[
            "show-options".into(),
            "-p".into(),
            "-q".into(),
            "-v".into(),
            "-t".into(),
            pane.into(),
            name.into(),
        ])?;
        Ok(one_value(&out))
    }

    /// The value of global option `name` (`show-options -g -v`); `None` when no server runs.
    pub fn global_option(&self, name: &str) -> Result<Option<String>, TmuxError> {
        let out = self.run(&["show-options".into(), "-g".into(), "-v".into(), name.into()])?;
        Ok(one_value(&out))
    }

    /// The server's socket path as tmux itself names it; `None` when no server runs.
    pub fn socket_path(&self) -> Result<Option<String>, TmuxError> {
        let out = self.run(&[
            "display-message".into(),
            "-p".into(),
            "#{socket_path}".into(),
        ])?;
        Ok(one_value(&out))
    }
}

/// The one value tmux printed, without its newline; `None` when it printed nothing.
fn one_value(out: &[u8]) -> Option<String> {
    let text = String::from_utf8_lossy(out);
    let value = text.strip_suffix('\n').unwrap_or(&text);
    (!value.is_empty()).then(|| value.to_owned())
}

/// A fresh random token for one read's framing.
fn nonce() -> String {
    let mut hasher = RandomState::new().build_hasher();
    hasher.write_u128(
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos()),
    );
    format!("{:016x}", hasher.finish())
}

/// Record start and field separator for a nonce.
fn markers(nonce: &str) -> (String, String) {
    (
        format!("\u{1e}{nonce}\u{1f}"),
        format!("\u{1f}{nonce}\u{1f}"),
    )
}

/// What starts a client's record in a read that lists clients after the panes.
fn client_marker(nonce: &str) -> String {
    format!("\u{1e}{nonce}\u{1d}")
}

/// A `list-panes` answer followed by `list-clients` lines: the panes' part, and the clients'
/// names (the first client marker ends the panes; a value would need the nonce to forge one).
fn split_clients<'a>(out: &'a [u8], nonce: &str) -> (&'a [u8], Vec<String>) {
    let marker = client_marker(nonce);
    let Some(at) = memchr::memmem::find(out, marker.as_bytes()) else {
        return (out, Vec::new());
    };
    let clients = String::from_utf8_lossy(&out[at..])
        .split(marker.as_str())
        .skip(1)
        .map(|record| record.strip_suffix('\n').unwrap_or(record).to_owned())
        .filter(|name| !name.is_empty())
        .collect();
    (&out[..at], clients)
}

/// The `-F` format: a record marker, then every variable and option joined by the separator.
fn list_format(nonce: &str, titles: Titles) -> String {
    let title = (titles == Titles::Include).then_some("pane_title");
    let names: Vec<&str> = PANE_VARIABLES
        .iter()
        .chain(OPTIONS)
        .copied()
        .chain(title)
        .collect();
    framed(nonce, &names)
}

/// A record marker, then `names` as `#{…}` joined by the separator.
fn framed(nonce: &str, names: &[&str]) -> String {
    let (start, sep) = markers(nonce);
    let fields: Vec<String> = names.iter().map(|v| format!("#{{{v}}}")).collect();
    format!("{start}{}", fields.join(&sep))
}

/// The panes of a `list-panes` answer. Output that is not empty yet holds no pane is not tmux's
/// answer to the format asked for (a wrapper's message, another program's output): an error,
/// never an empty fleet, which would report every pane gone. No output is no panes: a running
/// server always has one, and a missing server prints nothing.
fn panes_of(out: &[u8], nonce: &str, titles: Titles) -> Result<Vec<PaneRead>, TmuxError> {
    let panes = parse_panes(out, nonce, titles);
    if panes.is_empty() && !out.is_empty() {
        let text = String::from_utf8_lossy(out);
        let first: String = text.lines().next().unwrap_or("").chars().take(80).collect();
        return Err(TmuxError::Unreadable { output: first });
    }
    Ok(panes)
}

/// Splits `list-panes` output into panes. A record with the wrong field count is skipped.
fn parse_panes(out: &[u8], nonce: &str, titles: Titles) -> Vec<PaneRead> {
    let (start, sep) = markers(nonce);
    let text = String::from_utf8_lossy(out);
    let expected = PANE_VARIABLES.len() + OPTIONS.len() + usize::from(titles == Titles::Include);
    let mut panes = Vec::new();
    for record in text.split(start.as_str()).skip(1) {
        // Each record ends with tmux's newline, unless a value itself ended the output.
        let record = record.strip_suffix('\n').unwrap_or(record);
        let fields: Vec<&str> = record.split(sep.as_str()).collect();
        if fields.len() != expected {
            tracing::warn!(
                fields = fields.len(),
                expected,
                "skipping a malformed list-panes record"
            );
            continue;
        }
        panes.push(pane_from_fields(&fields, titles));
    }
    panes
}

fn pane_from_fields(fields: &[&str], titles: Titles) -> PaneRead {
    let mut it = fields.iter().map(|s| (*s).to_owned());
    let mut next = || it.next().unwrap_or_default();
    let mut pane = PaneRead {
        pane_id: next(),
        session_name: next(),
        window_index: next(),
        pane_index: next(),
        window_id: next(),
        pane_tty: next(),
        current_path: next(),
        socket_path: next(),
        pane_pid: next(),
        ..PaneRead::default()
    };
    pane.options = AgentOptions {
        name: next(),
        state: next(),
        detail: next(),
        since: next(),
        turn_at: next(),
        stamped_at: next(),
        attention: next(),
        session: next(),
        transcript: next(),
        permission_request: next(),
        question_request: next(),
        api_endpoint: next(),
        pending_tool: next(),
        pending_call: next(),
        context: next(),
        context_at: next(),
        mute_until: next(),
        notified_at: next(),
        context_notified_at: next(),
        stall_notified_at: next(),
    };
    if titles == Titles::Include {
        pane.title = Some(next());
    }
    pane
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing;

    /// An agent pane as tmux reports it (see [`testing::pane`]).
    fn agent(id: &str, name: &str, state: &str) -> PaneRead {
        let options = AgentOptions {
            name: name.into(),
            state: state.into(),
            ..AgentOptions::default()
        };
        testing::pane(id, options)
    }

    /// What tmux prints for `variable` (a pane variable or a pane option) of `pane`.
    fn value_of<'a>(pane: &'a PaneRead, variable: &str) -> &'a str {
        let o = &pane.options;
        match variable {
            "pane_id" => &pane.pane_id,
            "session_name" => &pane.session_name,
            "window_index" => &pane.window_index,
            "pane_index" => &pane.pane_index,
            "window_id" => &pane.window_id,
            "pane_tty" => &pane.pane_tty,
            "pane_current_path" => &pane.current_path,
            "socket_path" => &pane.socket_path,
            "pane_pid" => &pane.pane_pid,
            "@agent_name" => &o.name,
            "@agent_state" => &o.state,
            "@agent_detail" => &o.detail,
            "@agent_since" => &o.since,
            "@agent_turn_at" => &o.turn_at,
            "@agent_stamped_at" => &o.stamped_at,
            "@agent_attention" => &o.attention,
            "@agent_session" => &o.session,
            "@agent_transcript" => &o.transcript,
            "@agent_permission_request" => &o.permission_request,
            "@agent_question_request" => &o.question_request,
            "@agent_api_endpoint" => &o.api_endpoint,
            "@agent_pending_tool" => &o.pending_tool,
            "@agent_pending_call" => &o.pending_call,
            "@agent_context" => &o.context,
            "@agent_context_at" => &o.context_at,
            "@agent_mute_until" => &o.mute_until,
            "@agent_notified_at" => &o.notified_at,
            "@agent_context_notified_at" => &o.context_notified_at,
            "@agent_stall_notified_at" => &o.stall_notified_at,
            "pane_title" => pane.title.as_deref().unwrap_or_default(),
            _ => panic!("the format has no {variable}"),
        }
    }

    /// The fields tmux prints for `pane`, in format order.
    fn record(pane: &PaneRead, titles: Titles) -> Vec<String> {
        let title = (titles == Titles::Include).then_some("pane_title");
        PANE_VARIABLES
            .iter()
            .chain(OPTIONS)
            .copied()
            .chain(title)
            .map(|variable| value_of(pane, variable).to_owned())
            .collect()
    }

    /// Renders records the way tmux expands the format.
    fn render(nonce: &str, records: &[Vec<String>]) -> Vec<u8> {
        let (start, sep) = markers(nonce);
        let mut out = String::new();
        for fields in records {
            out.push_str(&start);
            out.push_str(&fields.join(&sep));
            out.push('\n');
        }
        out.into_bytes()
    }

    #[test]
    fn the_format_names_every_variable_and_option_once() {
        let format = list_format("n", Titles::Omit);
        for name in PANE_VARIABLES.iter().chain(OPTIONS) {
            assert_eq!(format.matches(&format!("#{{{name}}}")).count(), 1, "{name}");
        }
        assert!(
            !format.contains("pane_title"),
            "serve never asks for titles"
        );
        assert!(list_format("n", Titles::Include).ends_with("#{pane_title}"));
    }

    /// Each field of the output lands in the field of `PaneRead` its variable names.
    #[test]
    fn every_variable_is_read_into_its_own_field() {
        for titles in [Titles::Omit, Titles::Include] {
            // Every value differs, so a swapped pair of fields shows.
            let mut names = PANE_VARIABLES.iter().chain(OPTIONS).chain(&["pane_title"]);
            let mut next = || format!("value of {}", names.next().unwrap());
            let mut pane = PaneRead {
                pane_id: next(),
                session_name: next(),
                window_index: next(),
                pane_index: next(),
                window_id: next(),
                pane_tty: next(),
                current_path: next(),
                socket_path: next(),
                pane_pid: next(),
                options: AgentOptions {
                    name: next(),
                    state: next(),
                    detail: next(),
                    since: next(),
                    turn_at: next(),
                    stamped_at: next(),
                    attention: next(),
                    session: next(),
                    transcript: next(),
                    permission_request: next(),
                    question_request: next(),
                    api_endpoint: next(),
                    pending_tool: next(),
                    pending_call: next(),
                    context: next(),
                    context_at: next(),
                    mute_until: next(),
                    notified_at: next(),
                    context_notified_at: next(),
                    stall_notified_at: next(),
                },
                title: Some(next()),
            };
            if titles == Titles::Omit {
                pane.title = None;
            }
            let out = render("n", &[record(&pane, titles)]);
            assert_eq!(parse_panes(&out, "n", titles), [pane]);
        }
    }

    /// Where tmux's value for `variable` lands in `pane`.
    fn field_mut<'a>(pane: &'a mut PaneRead, variable: &str) -> &'a mut String {
        let o = &mut pane.options;
        match variable {
            "pane_id" => &mut pane.pane_id,
            "session_name" => &mut pane.session_name,
            "window_index" => &mut pane.window_index,
            "pane_index" => &mut pane.pane_index,
            "window_id" => &mut pane.window_id,
            "pane_tty" => &mut pane.pane_tty,
            "pane_current_path" => &mut pane.current_path,
            "socket_path" => &mut pane.socket_path,
            "pane_pid" => &mut pane.pane_pid,
            "@agent_name" => &mut o.name,
            "@agent_state" => &mut o.state,
            "@agent_detail" => &mut o.detail,
            "@agent_since" => &mut o.since,
            "@agent_turn_at" => &mut o.turn_at,
            "@agent_stamped_at" => &mut o.stamped_at,
            "@agent_attention" => &mut o.attention,
            "@agent_session" => &mut o.session,
            "@agent_transcript" => &mut o.transcript,
            "@agent_permission_request" => &mut o.permission_request,
            "@agent_question_request" => &mut o.question_request,
            "@agent_api_endpoint" => &mut o.api_endpoint,
            "@agent_pending_tool" => &mut o.pending_tool,
            "@agent_pending_call" => &mut o.pending_call,
            "@agent_context" => &mut o.context,
            "@agent_context_at" => &mut o.context_at,
            "@agent_mute_until" => &mut o.mute_until,
            "@agent_notified_at" => &mut o.notified_at,
            "@agent_context_notified_at" => &mut o.context_notified_at,
            "@agent_stall_notified_at" => &mut o.stall_notified_at,
            _ => panic!("the host's format has no {variable}"),
        }
    }

    #[test]
    fn the_row_format_is_a_subset_of_the_host_format_framed_alike() {
        let host = list_format("n", Titles::Omit);
        let row = framed("n", ROW_FIELDS);
        let (start, _) = markers("n");
        assert!(row.starts_with(&start));
        for name in ROW_FIELDS {
            assert!(
                PANE_VARIABLES.contains(name) || OPTIONS.contains(name),
                "{name} is not read by the host"
            );
            assert!(host.contains(&format!("#{{{name}}}")), "{name}");
        }
        assert!(ROW_FIELDS.len() < PANE_VARIABLES.len() + OPTIONS.len());
        assert!(format_of(Fields::Host).contains("#{pane_pid}"));
        assert!(!format_of(Fields::Row).contains("#{pane_pid}"));
    }

    /// The printed command line is the read's own: the same tmux, flags and socket, and a format
    /// of the asked fields.
    #[test]
    fn the_read_command_line_is_the_one_serve_runs() {
        let tmux = Tmux::new(
            "/opt/tmux",
            Some(super::super::Socket::Name("fleet".into())),
        );
        let host = tmux.list_panes_command(Fields::Host);
        let head: Vec<&str> = host[..7].iter().map(|a| a.to_str().unwrap()).collect();
        assert_eq!(
            head,
            ["/opt/tmux", "-u", "-L", "fleet", "list-panes", "-a", "-F"]
        );
        assert_eq!(host.len(), 8);
        let format = host[7].to_str().unwrap();
        for name in PANE_VARIABLES.iter().chain(OPTIONS) {
            assert!(format.contains(&format!("#{{{name}}}")), "{name}");
        }
        assert!(!format.contains("#{pane_title}"));
        let row = tmux.list_panes_command(Fields::Row);
        assert_eq!(row[..7], host[..7]);
        assert!(!row[7].to_str().unwrap().contains("#{pane_pid}"));
    }

    /// A pane whose every field the host reads carries a value a row could use.
    fn everything_stamped() -> PaneRead {
        let mut pane = agent("%7", "claude", "idle");
        let values = [
            ("window_id", "@3"),
            ("pane_tty", "/dev/pts/9"),
            ("pane_current_path", "/nonexistent/src/api"),
            ("pane_pid", "4242"),
            ("@agent_detail", "permission"),
            ("@agent_since", "1000"),
            ("@agent_turn_at", "5000"),
            ("@agent_stamped_at", "5001"),
            ("@agent_attention", "1"),
            ("@agent_session", "sess-1"),
            ("@agent_transcript", "/t.jsonl"),
            ("@agent_permission_request", "req-1"),
            ("@agent_question_request", "que-1"),
            ("@agent_api_endpoint", "http://127.0.0.1:9"),
            ("@agent_pending_tool", "Bash"),
            ("@agent_pending_call", "toolu_1"),
            ("@agent_context", "41"),
            ("@agent_context_at", "4000"),
            ("@agent_mute_until", "99999999999999"),
            ("@agent_notified_at", "5000"),
            ("@agent_context_notified_at", "4000"),
            ("@agent_stall_notified_at", "1000"),
        ];
        for (variable, value) in values {
            *field_mut(&mut pane, variable) = value.into();
        }
        pane
    }

    /// The wire row of `pane` as `serve` makes it (repository facts from its directory).
    fn row(pane: &PaneRead) -> schema::FleetRow {
        let facts = crate::git::GitCache::default().facts(&pane.current_path);
        crate::fleet::row_of(pane, facts, "h", 10_000).expect("an agent pane")
    }

    /// What the row format leaves out, the row never reads: with every other field blanked the
    /// row is the same, so a read of only [`ROW_FIELDS`] could serve a snapshot.
    #[test]
    fn a_row_needs_nothing_outside_the_row_format() {
        let full = everything_stamped();
        let mut bare = full.clone();
        for name in PANE_VARIABLES.iter().chain(OPTIONS) {
            if !ROW_FIELDS.contains(name) {
                field_mut(&mut bare, name).clear();
            }
        }
        assert_ne!(bare, full, "the blanked fields carried values");
        assert_eq!(row(&bare), row(&full));
        // And the row does read the row format's options: blanking one changes the row.
        for name in ROW_FIELDS.iter().filter(|n| n.starts_with('@')) {
            let mut without = full.clone();
            field_mut(&mut without, name).clear();
            if *name == "@agent_name" {
                assert!(crate::fleet::row_of(&without, Default::default(), "h", 1).is_none());
            } else {
                assert_ne!(row(&without), row(&full), "{name} is not read by a row");
            }
        }
    }

    #[test]
    fn values_with_newlines_tabs_and_control_bytes_stay_in_their_field() {
        let nonce = "abc";
        let mut first = agent("%0", "claude", "working");
        first.options.detail = "line one\nline two\t\u{1f}x".into();
        let second = agent("%1", "codex", "idle");
        let out = render(
            nonce,
            &[record(&first, Titles::Omit), record(&second, Titles::Omit)],
        );
        assert_eq!(parse_panes(&out, nonce, Titles::Omit), [first, second]);
    }

    #[test]
    fn invalid_utf8_is_decoded_lossily() {
        let nonce = "n";
        let pane = agent("%0", "claude", "STATE");
        let mut out = render(nonce, &[record(&pane, Titles::Omit)]);
        let at = out.windows(5).position(|w| w == b"STATE").unwrap();
        out[at] = 0xff;
        let panes = parse_panes(&out, nonce, Titles::Omit);
        assert_eq!(panes[0].options.state, "\u{fffd}TATE");
    }

    #[test]
    fn a_record_with_the_wrong_field_count_is_skipped() {
        let nonce = "n";
        let mut short = record(&agent("%0", "claude", "idle"), Titles::Omit);
        short.pop();
        let whole = record(&agent("%1", "codex", "idle"), Titles::Omit);
        let panes = parse_panes(&render(nonce, &[short, whole]), nonce, Titles::Omit);
        assert_eq!(
            panes.iter().map(|p| p.pane_id.as_str()).collect::<Vec<_>>(),
            ["%1"]
        );
    }

    #[test]
    fn output_with_no_pane_in_it_is_an_error_and_no_output_is_no_panes() {
        let nonce = "n";
        for garbage in [
            &b"usage: tmux [-2CDlNuVv]\n"[..],
            b"\x1e\x1f%0\x1fclaude\n",
            b"\n",
            b"\xff\xfe",
        ] {
            let err = panes_of(garbage, nonce, Titles::Omit).unwrap_err();
            assert!(matches!(err, TmuxError::Unreadable { .. }), "{err}");
        }
        let mut short = record(&agent("%0", "claude", "idle"), Titles::Omit);
        short.pop();
        let only_malformed = render(nonce, &[short]);
        assert!(panes_of(&only_malformed, nonce, Titles::Omit).is_err());
        assert_eq!(panes_of(b"", nonce, Titles::Omit).unwrap(), []);
        let one = render(
            nonce,
            &[record(&agent("%1", "codex", "idle"), Titles::Omit)],
        );
        assert_eq!(panes_of(&one, nonce, Titles::Omit).unwrap().len(), 1);
    }

    #[test]
    fn a_forged_record_without_the_nonce_cannot_inject_a_pane() {
        let nonce = "secret";
        let mut first = agent("%0", "claude", "idle");
        first.options.detail = "\n\u{1e}guess\u{1f}%99".into();
        let out = render(nonce, &[record(&first, Titles::Omit)]);
        let panes = parse_panes(&out, nonce, Titles::Omit);
        assert_eq!(panes.len(), 1);
        assert_eq!(panes[0].pane_id, "%0");
    }

    #[test]
    fn clients_listed_after_the_panes_are_told_apart_from_them() {
        let pane = agent("%1", "claude", "idle");
        let mut out = render("n", &[record(&pane, Titles::Omit)]);
        let (panes, clients) = split_clients(&out, "n");
        assert_eq!(
            (parse_panes(panes, "n", Titles::Omit), clients),
            (vec![pane.clone()], vec![])
        );
        for client in ["/dev/pts/1", "/dev/pts/2"] {
            out.extend(format!("{}{client}\n", client_marker("n")).into_bytes());
        }
        let (panes, clients) = split_clients(&out, "n");
        assert_eq!(parse_panes(panes, "n", Titles::Omit), [pane]);
        assert_eq!(clients, ["/dev/pts/1", "/dev/pts/2"]);
        // A value holding a client line without the nonce is the value's own text.
        let mut forged = agent("%1", "claude", "idle");
        forged.options.session = "\u{1e}x\u{1d}/dev/pts/9".into();
        let out = render("n", &[record(&forged, Titles::Omit)]);
        let (panes, clients) = split_clients(&out, "n");
        assert_eq!(
            (parse_panes(panes, "n", Titles::Omit), clients),
            (vec![forged], vec![])
        );
    }

    #[test]
    fn nonces_differ_between_reads() {
        assert_ne!(nonce(), nonce());
    }
}
