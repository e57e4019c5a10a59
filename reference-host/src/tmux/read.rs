//! Reading the fleet: one `list-panes -a -F …` returns every pane with its `@agent_*` options.
//!
//! tmux copies option values into `-F` output raw: tabs, control bytes, newlines and invalid
//! UTF-8 all pass through. So the format cannot rely on a separator character an agent could
//! stamp into an option; each read draws a fresh nonce and frames records and fields with it, and
//! values are decoded lossily.

use std::collections::hash_map::RandomState;
use std::fmt;
use std::hash::{BuildHasher, Hasher};

use schema::PaneOption;

use super::write::PanePlace;
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

/// The pane user options of the contract, in format order: every one, in the vocabulary's order
/// (see [`AgentOptions`]).
const OPTIONS: &[PaneOption] = PaneOption::ALL;

/// The variables and options a wire row is made of (`fleet::row_of`; `pane_current_path` for its
/// repository facts): the cheapest read a snapshot could do. The host reads more (a card, a
/// dispatch and a notification need the rest); `cargo xtask bench` reads this beside the host's
/// own format to show what the extra fields cost.
const ROW_FIELDS: &[Column] = &[
    Column::Variable("pane_id"),
    Column::Variable("session_name"),
    Column::Variable("window_index"),
    Column::Variable("pane_index"),
    Column::Variable("pane_current_path"),
    Column::Variable("socket_path"),
    Column::Option(PaneOption::Name),
    Column::Option(PaneOption::State),
    Column::Option(PaneOption::Detail),
    Column::Option(PaneOption::Since),
    Column::Option(PaneOption::TurnAt),
    Column::Option(PaneOption::StampedAt),
    Column::Option(PaneOption::Attention),
    Column::Option(PaneOption::Transcript),
    Column::Option(PaneOption::PermissionRequest),
    Column::Option(PaneOption::PendingTool),
    Column::Option(PaneOption::PendingCall),
    Column::Option(PaneOption::Context),
    Column::Option(PaneOption::ContextAt),
    Column::Option(PaneOption::MuteUntil),
];

/// What an edge stream's cycle reads: what an edge carries (`edges.rs`: the pane, its agent,
/// state and detail, its locator, its repository and branch, from its directory) and what a
/// selector filters on (the session, and the attention that makes an idle pane `done`), with the
/// socket path that names the server pushes come from, and the pane's last stamp, which tells a
/// push's read from an older one (`push::Carried::takeable`). On 1000 panes tmux takes about half
/// the time of the host's whole format to print it.
const EDGE_FIELDS: &[Column] = &[
    Column::Variable("pane_id"),
    Column::Variable("session_name"),
    Column::Variable("window_index"),
    Column::Variable("pane_index"),
    Column::Variable("pane_current_path"),
    Column::Variable("socket_path"),
    Column::Option(PaneOption::Name),
    Column::Option(PaneOption::State),
    Column::Option(PaneOption::Detail),
    Column::Option(PaneOption::Attention),
    Column::Option(PaneOption::StampedAt),
];

/// What the notification daemon reads every cycle: what its triggers, markers and status-line
/// message use, and the pane's last stamp, which tells a push's read from an older one
/// (`push::Carried::takeable`). tmux's cost of a read grows with what it asks for (on 1000
/// panes, the host's 29 fields take about 35 ms, these 16 about 15 ms), and a fire waits for the
/// read that saw its transition. A fire's tty and directory come with its claim
/// (`tmux::write::PanePlace`): `pane_current_path` alone costs tmux a lookup of each pane's
/// foreground process, 7 ms on 1000 panes.
const NOTIFY_FIELDS: &[Column] = &[
    Column::Variable("pane_id"),
    Column::Variable("session_name"),
    Column::Variable("window_index"),
    Column::Variable("pane_index"),
    Column::Option(PaneOption::Name),
    Column::Option(PaneOption::State),
    Column::Option(PaneOption::Detail),
    Column::Option(PaneOption::Since),
    Column::Option(PaneOption::TurnAt),
    Column::Option(PaneOption::Attention),
    Column::Option(PaneOption::Context),
    Column::Option(PaneOption::MuteUntil),
    Column::Option(PaneOption::NotifiedAt),
    Column::Option(PaneOption::ContextNotifiedAt),
    Column::Option(PaneOption::StallNotifiedAt),
    Column::Option(PaneOption::StampedAt),
];

/// What the daemon reads besides [`NOTIFY_FIELDS`] with `osc_progress` on: the rollup writes
/// each window's progress to one of its panes' ttys.
const PROGRESS_FIELDS: &[&str] = &["window_id", "pane_tty"];

/// A pane's tty and directory, read on their own when a fire's claim did not print them.
const PLACE_FIELDS: &[&str] = &["pane_id", "pane_tty", "pane_current_path"];

/// Which fields a `list-panes` format asks for; a field not asked for stays empty in the
/// [`PaneRead`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fields {
    /// What `serve` reads every cycle: every variable and option.
    Host,
    /// What the notification daemon reads every cycle ([`NOTIFY_FIELDS`]), and with `progress`
    /// (`osc_progress` on) [`PROGRESS_FIELDS`].
    Notify {
        /// The progress rollup's fields too.
        progress: bool,
    },
    /// Only what a wire row needs ([`ROW_FIELDS`]): what a snapshot stream's cycle reads.
    Row,
    /// Only what an edge and a selector need ([`EDGE_FIELDS`]): what an edge stream's cycle
    /// reads.
    Edge,
    /// A pane's tty and directory ([`PLACE_FIELDS`]).
    Place,
}

/// One name a read asks tmux for: a variable tmux keeps for every pane, or a pane user option
/// of the contract.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Column {
    /// A pane variable: `pane_id`.
    Variable(&'static str),
    /// A pane user option of the contract: [`PaneOption::State`].
    Option(PaneOption),
}

impl Column {
    /// The name as tmux spells it: `pane_id`, `@agent_state`.
    fn name(self) -> &'static str {
        match self {
            Column::Variable(name) => name,
            Column::Option(option) => option.as_str(),
        }
    }

    /// The format that expands to its value: `#{pane_id}`, `#{@agent_state}`.
    fn format(self) -> String {
        match self {
            Column::Variable(name) => format!("#{{{name}}}"),
            Column::Option(option) => option.format(),
        }
    }
}

impl fmt::Display for Column {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The names a read of `fields` asks for, in format order; `pane_title` last with
/// [`Titles::Include`].
fn names(fields: Fields, titles: Titles) -> Vec<Column> {
    let variables = |names: &'static [&'static str]| names.iter().copied().map(Column::Variable);
    let mut columns: Vec<Column> = match fields {
        Fields::Host => variables(PANE_VARIABLES)
            .chain(OPTIONS.iter().copied().map(Column::Option))
            .collect(),
        Fields::Notify { progress: false } => NOTIFY_FIELDS.to_vec(),
        Fields::Notify { progress: true } => NOTIFY_FIELDS
            .iter()
            .copied()
            .chain(variables(PROGRESS_FIELDS))
            .collect(),
        Fields::Row => ROW_FIELDS.to_vec(),
        Fields::Edge => EDGE_FIELDS.to_vec(),
        Fields::Place => variables(PLACE_FIELDS).collect(),
    };
    if titles == Titles::Include {
        columns.push(Column::Variable("pane_title"));
    }
    columns
}

/// Where a read puts the value of one variable or option.
type Slot = fn(&mut PaneRead) -> &mut String;

/// The [`PaneRead`] field that `column` is read into; `None` for a variable the host never
/// reads. Every option of the contract has one.
fn slot(column: Column) -> Option<Slot> {
    match column {
        Column::Variable(name) => variable_slot(name),
        Column::Option(option) => Some(option_slot(option)),
    }
}

/// The [`PaneRead`] field that variable `name` is read into; `None` for a variable the host
/// never reads.
fn variable_slot(name: &str) -> Option<Slot> {
    let slot: Slot = match name {
        "pane_id" => |p| &mut p.pane_id,
        "session_name" => |p| &mut p.session_name,
        "window_index" => |p| &mut p.window_index,
        "pane_index" => |p| &mut p.pane_index,
        "window_id" => |p| &mut p.window_id,
        "pane_tty" => |p| &mut p.pane_tty,
        "pane_current_path" => |p| &mut p.current_path,
        "socket_path" => |p| &mut p.socket_path,
        "pane_pid" => |p| &mut p.pane_pid,
        "pane_title" => |p| p.title.get_or_insert_with(String::new),
        _ => return None,
    };
    Some(slot)
}

/// The [`AgentOptions`] field that `option` is read into: exhaustive, so an option added to the
/// contract cannot be left unread.
fn option_slot(option: PaneOption) -> Slot {
    match option {
        PaneOption::Name => |p| &mut p.options.name,
        PaneOption::State => |p| &mut p.options.state,
        PaneOption::Detail => |p| &mut p.options.detail,
        PaneOption::Since => |p| &mut p.options.since,
        PaneOption::TurnAt => |p| &mut p.options.turn_at,
        PaneOption::StampedAt => |p| &mut p.options.stamped_at,
        PaneOption::Attention => |p| &mut p.options.attention,
        PaneOption::Session => |p| &mut p.options.session,
        PaneOption::Transcript => |p| &mut p.options.transcript,
        PaneOption::PermissionRequest => |p| &mut p.options.permission_request,
        PaneOption::QuestionRequest => |p| &mut p.options.question_request,
        PaneOption::ApiEndpoint => |p| &mut p.options.api_endpoint,
        PaneOption::PendingTool => |p| &mut p.options.pending_tool,
        PaneOption::PendingCall => |p| &mut p.options.pending_call,
        PaneOption::Context => |p| &mut p.options.context,
        PaneOption::ContextAt => |p| &mut p.options.context_at,
        PaneOption::MuteUntil => |p| &mut p.options.mute_until,
        PaneOption::NotifiedAt => |p| &mut p.options.notified_at,
        PaneOption::ContextNotifiedAt => |p| &mut p.options.context_notified_at,
        PaneOption::StallNotifiedAt => |p| &mut p.options.stall_notified_at,
    }
}

/// One read's format: the names asked for, in order, and the nonce that frames them.
#[derive(Debug, Clone)]
struct Format {
    names: Vec<Column>,
    nonce: String,
}

impl Format {
    /// A format of `fields` with a fresh nonce.
    fn new(fields: Fields, titles: Titles) -> Format {
        Format {
            names: names(fields, titles),
            nonce: nonce(),
        }
    }

    /// The tmux arguments of one read with this format: of the whole fleet (`-a`), or with
    /// `Some(pane)` of that pane's window (`-t`).
    fn args(&self, pane: Option<&str>) -> Vec<String> {
        let format = framed(&self.nonce, &self.names);
        match pane {
            None => vec!["list-panes".into(), "-a".into(), "-F".into(), format],
            Some(pane) => vec![
                "list-panes".into(),
                "-F".into(),
                format,
                "-t".into(),
                pane.into(),
            ],
        }
    }

    /// The panes of this read's answer (see [`panes_of`]).
    fn panes(&self, out: &[u8]) -> Result<Vec<PaneRead>, TmuxError> {
        panes_of(out, &self.nonce, &self.names)
    }
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
    pub fn panes(&self) -> &[PaneRead] {
        match self {
            Listing::Panes(panes) => panes,
            Listing::NoServer { .. } => &[],
        }
    }

    /// The panes; none when no server runs.
    pub fn into_panes(self) -> Vec<PaneRead> {
        match self {
            Listing::Panes(panes) => panes,
            Listing::NoServer { .. } => Vec::new(),
        }
    }
}

/// One read of the whole fleet as tmux answered it, not parsed yet: what several processes can
/// share (`fleet::shared`), each parsing it alike. Never with titles.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RawListing {
    /// The fields asked for.
    pub fields: Fields,
    /// The nonce that frames the answer's records.
    pub nonce: String,
    /// tmux's answer: its stdout, or the socket no server listens on.
    pub answer: Answer,
}

impl RawListing {
    /// The panes of the answer, parsed as [`Tmux::list_panes`] parses them.
    pub fn listing(&self) -> Result<Listing, TmuxError> {
        Ok(match &self.answer {
            Answer::Output(out) => Listing::Panes(panes_of(
                out,
                &self.nonce,
                &names(self.fields, Titles::Omit),
            )?),
            Answer::NoServer { socket } => Listing::NoServer {
                socket: socket.clone(),
            },
        })
    }
}

impl Tmux {
    /// Reads `fields` of every pane of the server in one invocation, or finds that no server
    /// runs.
    pub fn list_panes(&self, fields: Fields, titles: Titles) -> Result<Listing, TmuxError> {
        let format = Format::new(fields, titles);
        Ok(match self.ask(&format.args(None))? {
            Answer::Output(out) => Listing::Panes(format.panes(&out)?),
            Answer::NoServer { socket } => Listing::NoServer { socket },
        })
    }

    /// [`Tmux::list_panes`] without titles, its answer kept as tmux gave it beside its panes.
    pub fn list_panes_raw(&self, fields: Fields) -> Result<(RawListing, Listing), TmuxError> {
        let format = Format::new(fields, Titles::Omit);
        let raw = RawListing {
            fields,
            answer: self.ask(&format.args(None))?,
            nonce: format.nonce,
        };
        let listing = raw.listing()?;
        Ok((raw, listing))
    }

    /// Reads `fields` of every pane and every attached client's name in one invocation
    /// (`list-panes`, then `list-clients`): the notification daemon's read, whose fires show a
    /// status-line message to the clients. No server: no panes, no clients.
    pub fn list_panes_and_clients(
        &self,
        fields: Fields,
        titles: Titles,
    ) -> Result<(Listing, Vec<String>), TmuxError> {
        let format = Format::new(fields, titles);
        let mut args = format.args(None);
        args.extend(list_clients_args(&format.nonce));
        Ok(match self.ask(&args)? {
            Answer::Output(out) => {
                let (panes, clients) = split_clients(&out, &format.nonce);
                (Listing::Panes(format.panes(panes)?), clients)
            }
            Answer::NoServer { socket } => (Listing::NoServer { socket }, Vec::new()),
        })
    }

    /// Reads `fields` of pane `pane` alone: one `list-panes -t <pane>`, which lists the panes of
    /// its window (the others are dropped), a twentieth of a whole-fleet read on a big server.
    /// A pane tmux does not have (`can't find pane`), or an id that is not `%<digits>` (which no
    /// pane has; tmux is not asked), reads as no panes.
    pub fn list_pane(
        &self,
        pane: &str,
        fields: Fields,
        titles: Titles,
    ) -> Result<Listing, TmuxError> {
        Ok(self.list_pane_with(pane, fields, titles, false)?.0)
    }

    /// [`Tmux::list_pane`], and every attached client's name, in the same invocation (an agent's
    /// event hook that fires shows the status-line message to them). No pane: no clients.
    pub fn list_pane_and_clients(
        &self,
        pane: &str,
        fields: Fields,
        titles: Titles,
    ) -> Result<(Listing, Vec<String>), TmuxError> {
        self.list_pane_with(pane, fields, titles, true)
    }

    fn list_pane_with(
        &self,
        pane: &str,
        fields: Fields,
        titles: Titles,
        clients: bool,
    ) -> Result<(Listing, Vec<String>), TmuxError> {
        let none = || Ok((Listing::Panes(Vec::new()), Vec::new()));
        let digits = pane.strip_prefix('%').unwrap_or_default();
        if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
            return none();
        }
        let format = Format::new(fields, titles);
        let mut args = format.args(Some(pane));
        if clients {
            args.extend(list_clients_args(&format.nonce));
        }
        let attempt = self.attempt(&args)?;
        if attempt.failed.is_none() {
            let (out, clients) = split_clients(&attempt.stdout, &format.nonce);
            let mut panes = format.panes(out)?;
            panes.retain(|read| read.pane_id == pane);
            return Ok((Listing::Panes(panes), clients));
        }
        if attempt.stderr.starts_with("can't find pane") {
            return none();
        }
        if let Some(socket) = super::no_server_socket(&attempt.stderr) {
            return Ok((Listing::NoServer { socket }, Vec::new()));
        }
        Err(attempt.error())
    }

    /// Stamps `pane` with `writes`, then reads it (`list-panes -t <pane>`: its window, the host's
    /// fields, no title) and lists the attached clients, all in one invocation: what an agent's
    /// hook does, handing the read on with its push ([`carried_pane`] reads it back). The nonce
    /// and tmux's output; `None` when there is nothing to write.
    pub fn stamp_and_read(
        &self,
        pane: &str,
        writes: &[super::write::OptionWrite<'_>],
    ) -> Result<Option<(String, Vec<u8>)>, TmuxError> {
        let mut args = super::write::option_args(pane, writes);
        if args.is_empty() {
            return Ok(None);
        }
        let format = Format::new(Fields::Host, Titles::Omit);
        args.push(";".into());
        args.extend(format.args(Some(pane)));
        args.extend(list_clients_args(&format.nonce));
        let out = self.run(&args)?;
        Ok(Some((format.nonce, out)))
    }

    /// Pane `pane`'s tty and directory ([`Tmux::list_pane`]); `None` when tmux has no such pane
    /// or no server runs.
    pub fn pane_place(&self, pane: &str) -> Result<Option<PanePlace>, TmuxError> {
        let listing = self.list_pane(pane, Fields::Place, Titles::Omit)?;
        Ok(listing
            .into_panes()
            .into_iter()
            .next()
            .map(|read| PanePlace {
                tty: read.pane_tty,
                current_path: read.current_path,
            }))
    }

    /// The whole command line of a fleet read of `fields` (with a fresh nonce, no title):
    /// `corral internal list-panes-command` prints it for `cargo xtask bench`, whose baseline
    /// runs tmux with it.
    pub fn list_panes_command(&self, fields: Fields) -> Vec<std::ffi::OsString> {
        self.invocation(&Format::new(fields, Titles::Omit).args(None))
            .argv()
    }
}

impl Tmux {
    /// The value of pane option `option` of `pane` (`show-options -p -q -v`), `None` when it is
    /// unset or empty. A pane tmux does not have is an error.
    pub fn pane_option(&self, pane: &str, option: PaneOption) -> Result<Option<String>, TmuxError> {
        let out = self.run(&[
            "show-options".into(),
            "-p".into(),
            "-q".into(),
            "-v".into(),
            "-t".into(),
            pane.into(),
            option.as_str().into(),
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

/// Pane `pane` in the output of a [`Tmux::stamp_and_read`] framed by `nonce` (a copy a push
/// carried), with the clients listed after it; `None` when the output holds no such pane.
pub fn carried_pane(pane: &str, nonce: &str, output: &[u8]) -> Option<(PaneRead, Vec<String>)> {
    let (panes, clients) = split_clients(output, nonce);
    let panes = panes_of(panes, nonce, &names(Fields::Host, Titles::Omit)).ok()?;
    let read = panes.into_iter().find(|read| read.pane_id == pane)?;
    Some((read, clients))
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

/// What a read appends to list the attached clients after its panes, in the same invocation.
fn list_clients_args(nonce: &str) -> [String; 4] {
    [
        ";".into(),
        "list-clients".into(),
        "-F".into(),
        format!("{}#{{client_name}}", client_marker(nonce)),
    ]
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

/// A record marker, then `names` as `#{…}` joined by the separator.
fn framed(nonce: &str, names: &[Column]) -> String {
    let (start, sep) = markers(nonce);
    let fields: Vec<String> = names.iter().map(|column| column.format()).collect();
    format!("{start}{}", fields.join(&sep))
}

/// The panes of a `list-panes` answer of `names`. Output that is not empty yet holds no pane is
/// not tmux's answer to the format asked for (a wrapper's message, another program's output): an
/// error, never an empty fleet, which would report every pane gone. No output is no panes: a
/// running server always has one, and a missing server prints nothing.
fn panes_of(out: &[u8], nonce: &str, names: &[Column]) -> Result<Vec<PaneRead>, TmuxError> {
    let panes = parse_panes(out, nonce, names);
    if panes.is_empty() && !out.is_empty() {
        let text = String::from_utf8_lossy(out);
        let first: String = text.lines().next().unwrap_or("").chars().take(80).collect();
        return Err(TmuxError::Unreadable { output: first });
    }
    Ok(panes)
}

/// Splits `list-panes` output of `names` into panes; each value is decoded lossily on its own.
/// A record with the wrong field count is skipped.
fn parse_panes(out: &[u8], nonce: &str, names: &[Column]) -> Vec<PaneRead> {
    let (start, sep) = markers(nonce);
    let slots: Vec<Slot> = names
        .iter()
        .map(|&column| slot(column).unwrap_or_else(|| panic!("no PaneRead field for {column}")))
        .collect();
    let sep = memchr::memmem::Finder::new(sep.as_bytes());
    let mut panes = Vec::new();
    let mut fields: Vec<&[u8]> = Vec::with_capacity(names.len());
    let starts: Vec<usize> = memchr::memmem::find_iter(out, start.as_bytes()).collect();
    for (i, at) in starts.iter().enumerate() {
        let end = starts.get(i + 1).copied().unwrap_or(out.len());
        let record = &out[at + start.len()..end];
        // Each record ends with tmux's newline, unless a value itself ended the output.
        let record = record.strip_suffix(b"\n").unwrap_or(record);
        fields.clear();
        let mut from = 0;
        for at in sep.find_iter(record) {
            fields.push(&record[from..at]);
            from = at + sep.needle().len();
        }
        fields.push(&record[from..]);
        if fields.len() != slots.len() {
            tracing::warn!(
                fields = fields.len(),
                expected = slots.len(),
                "skipping a malformed list-panes record"
            );
            continue;
        }
        let mut pane = PaneRead::default();
        for (slot, value) in slots.iter().zip(&fields) {
            *slot(&mut pane) = String::from_utf8_lossy(value).into_owned();
        }
        panes.push(pane);
    }
    panes
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

    /// Every variable and option the host reads, in format order, without the title.
    fn every_column() -> Vec<Column> {
        let variables = PANE_VARIABLES.iter().copied().map(Column::Variable);
        let options = OPTIONS.iter().copied().map(Column::Option);
        variables.chain(options).collect()
    }

    /// The column a name spelled as tmux spells it is: an option of the contract, or a variable.
    fn column(name: &'static str) -> Column {
        PaneOption::parse(name).map_or(Column::Variable(name), Column::Option)
    }

    /// The fields tmux prints for `pane`, in format order.
    fn record(pane: &PaneRead, titles: Titles) -> Vec<String> {
        let title = (titles == Titles::Include).then_some(Column::Variable("pane_title"));
        every_column()
            .into_iter()
            .chain(title)
            .map(|column| value_of(pane, column.name()).to_owned())
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
        let format = framed("n", &names(Fields::Host, Titles::Omit));
        for name in every_column() {
            assert_eq!(format.matches(&format!("#{{{name}}}")).count(), 1, "{name}");
        }
        assert!(
            !format.contains("pane_title"),
            "serve never asks for titles"
        );
        assert!(framed("n", &names(Fields::Host, Titles::Include)).ends_with("#{pane_title}"));
    }

    /// Each field of the output lands in the field of `PaneRead` its variable names.
    #[test]
    fn every_variable_is_read_into_its_own_field() {
        for titles in [Titles::Omit, Titles::Include] {
            // Every value differs, so a swapped pair of fields shows.
            let mut every = every_column()
                .into_iter()
                .chain([Column::Variable("pane_title")]);
            let mut next = || format!("value of {}", every.next().unwrap());
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
            assert_eq!(parse_panes(&out, "n", &names(Fields::Host, titles)), [pane]);
        }
    }

    /// Where tmux's value for `variable` lands in `pane`.
    fn field_mut(pane: &mut PaneRead, variable: Column) -> &mut String {
        slot(variable).unwrap_or_else(|| panic!("the host reads no {variable}"))(pane)
    }

    /// The `-F` text of a fresh read of `fields`.
    fn format_text(fields: Fields) -> String {
        Format::new(fields, Titles::Omit).args(None).remove(3)
    }

    #[test]
    fn the_row_format_is_a_subset_of_the_host_format_framed_alike() {
        let host = framed("n", &names(Fields::Host, Titles::Omit));
        let row = framed("n", ROW_FIELDS);
        let (start, _) = markers("n");
        assert!(row.starts_with(&start));
        for name in ROW_FIELDS {
            assert!(
                every_column().contains(name),
                "{name} is not read by the host"
            );
            assert!(host.contains(&format!("#{{{name}}}")), "{name}");
        }
        assert!(ROW_FIELDS.len() < every_column().len());
        assert!(format_text(Fields::Host).contains("#{pane_pid}"));
        assert!(!format_text(Fields::Row).contains("#{pane_pid}"));
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
        for name in every_column() {
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
            *field_mut(&mut pane, column(variable)) = value.into();
        }
        pane
    }

    /// The wire row of `pane` as `serve` makes it (repository facts from its directory).
    fn row(pane: &PaneRead) -> schema::FleetRow {
        let facts = crate::git::GitCache::default().facts(&pane.current_path);
        crate::fleet::row_of(pane, facts, "h", 10_000).expect("an agent pane")
    }

    /// Every name of every read lands in the field [`value_of`] (a mapping written out apart
    /// from [`slot`]) reads it from, so a swapped pair of slots shows.
    #[test]
    fn every_name_of_every_read_has_its_own_field() {
        for fields in [
            Fields::Host,
            Fields::Notify { progress: false },
            Fields::Notify { progress: true },
            Fields::Row,
            Fields::Edge,
            Fields::Place,
        ] {
            for titles in [Titles::Omit, Titles::Include] {
                let names = names(fields, titles);
                let mut pane = PaneRead::default();
                for name in &names {
                    *field_mut(&mut pane, *name) = format!("value of {name}");
                }
                for name in &names {
                    assert_eq!(value_of(&pane, name.name()), format!("value of {name}"));
                }
                assert_eq!(
                    names.contains(&Column::Variable("pane_title")),
                    titles == Titles::Include,
                    "{fields:?}"
                );
            }
        }
    }

    #[test]
    fn the_notify_read_asks_for_host_fields_and_fewer_of_them() {
        let host = names(Fields::Host, Titles::Omit);
        for progress in [false, true] {
            let notify = names(Fields::Notify { progress }, Titles::Omit);
            for name in &notify {
                assert!(host.contains(name), "{name} is not read by the host");
            }
            assert!(notify.len() < host.len());
            assert_eq!(notify.contains(&Column::Variable("pane_tty")), progress);
            assert!(
                !notify.contains(&Column::Variable("pane_current_path")),
                "the directory comes with the claim"
            );
        }
        let format = format_text(Fields::Notify { progress: false });
        assert!(format.contains("#{@agent_notified_at}") && !format.contains("#{pane_pid}"));
    }

    /// Everything the notifier decides and says about a pane from its cycle read: its fires of
    /// every trigger (the payload, log line and status line are made from these; the repository
    /// and the tty a fire rings at come with its claim), what each trigger calls for, the mute,
    /// and with `progress` the tty and window the rollup writes to. `None` for a pane that is not
    /// an agent pane.
    fn notifier_view(read: &PaneRead, progress: bool) -> Option<String> {
        use crate::notify::{payload, trigger};
        const NOW: u64 = 10_000;
        let pane = crate::fleet::Pane {
            row: crate::fleet::row_of(read, Default::default(), "h", NOW)?,
            facts: crate::fleet::facts_of(read),
        };
        let every = trigger::Triggers {
            blocked: true,
            done: true,
            context_high: Some(40),
            stall_ms: Some(1),
        };
        let fires: Vec<_> = [
            schema::Trigger::Blocked,
            schema::Trigger::Done,
            schema::Trigger::ContextHigh,
            schema::Trigger::Stall,
        ]
        .into_iter()
        .map(|t| payload::fire(&pane, t, NOW, true))
        .collect();
        let below = trigger::Triggers {
            context_high: Some(90),
            ..every
        };
        let rollup = progress.then(|| (pane.facts.tty.clone(), pane.facts.window_id.clone()));
        // The stamp the daemon remembers, which decides whether it takes a push's read.
        let stamped = pane.row.stamped_at_ms;
        Some(format!(
            "{fires:?} {:?} {:?} {} {} {:?} {rollup:?} {stamped:?}",
            trigger::evaluate(&pane, &every, NOW),
            trigger::evaluate(&pane, &below, NOW),
            trigger::muted(&pane, NOW),
            pane.row.pane,
            pane.row.state,
        ))
    }

    /// What the notify read leaves out, the notifier never uses: with every other field blanked,
    /// a pane in each state, announced or not, fires, claims, mutes and writes alike. And it
    /// reads nothing it does not use: blanking any one of its fields changes what the notifier
    /// does.
    #[test]
    fn the_notifier_needs_exactly_the_notify_read() {
        for progress in [false, true] {
            let host = names(Fields::Host, Titles::Include);
            let notify = names(Fields::Notify { progress }, Titles::Include);
            let mut used = std::collections::BTreeSet::new();
            // Each state, with its episode announced and not.
            let bases = ["blocked", "idle", "working"]
                .into_iter()
                .flat_map(|state| [(state, ["5000", "1000"]), (state, ["1", "1"])]);
            for (state, [notified, stall_notified]) in bases {
                let mut full = everything_stamped();
                full.options.state = state.into();
                full.options.notified_at = notified.into();
                full.options.stall_notified_at = stall_notified.into();
                full.title = Some("a title".into());
                // Past the view's "now", so blanking the mute changes it.
                full.options.mute_until = "20000".into();
                let view = notifier_view(&full, progress);
                assert!(view.is_some());
                let mut bare = full.clone();
                for name in host.iter().filter(|n| !notify.contains(n)) {
                    field_mut(&mut bare, *name).clear();
                }
                assert_ne!(bare, full, "the blanked fields carried values");
                assert_eq!(notifier_view(&bare, progress), view, "{state}");
                for name in &notify {
                    let mut without = full.clone();
                    field_mut(&mut without, *name).clear();
                    if notifier_view(&without, progress) != view {
                        used.insert(name.name());
                    }
                }
            }
            for name in &notify {
                assert!(
                    used.contains(name.name()),
                    "{name} is read by the daemon but the notifier never uses it"
                );
            }
        }
    }

    /// What the row format leaves out, the row never reads: with every other field blanked the
    /// row is the same, so a read of only [`ROW_FIELDS`] could serve a snapshot.
    #[test]
    fn a_row_needs_nothing_outside_the_row_format() {
        let full = everything_stamped();
        let mut bare = full.clone();
        for name in every_column() {
            if !ROW_FIELDS.contains(&name) {
                field_mut(&mut bare, name).clear();
            }
        }
        assert_ne!(bare, full, "the blanked fields carried values");
        assert_eq!(row(&bare), row(&full));
        // And the row does read the row format's options: blanking one changes the row.
        for &name in ROW_FIELDS.iter().filter(|n| n.name().starts_with('@')) {
            let mut without = full.clone();
            field_mut(&mut without, name).clear();
            if name.name() == "@agent_name" {
                assert!(crate::fleet::row_of(&without, Default::default(), "h", 1).is_none());
            } else {
                assert_ne!(row(&without), row(&full), "{name} is not read by a row");
            }
        }
    }

    /// What an edge stream does with a row: the edge of its move from another state (every key
    /// of the frame), which selectors admit it, and the stamp it remembers.
    fn edge_view(read: &PaneRead) -> String {
        let after = row(read);
        let mut before = after.clone();
        before.state = schema::State::Unknown;
        let edges = crate::edges::edges(&[before], std::slice::from_ref(&after), None, 7);
        let selectors = [
            r#"{"session":"work"}"#,
            r#"{"repo":"api"}"#,
            r#"{"branch":"main"}"#,
            r#"{"agent":"claude"}"#,
            r#"{"state":["done"]}"#,
            r#"{"state":["idle"]}"#,
        ];
        let admitted: Vec<bool> = selectors
            .iter()
            .map(|s| crate::selector::admits(Some(&serde_json::from_str(s).unwrap()), &after))
            .collect();
        // The stamp the stream remembers, which decides whether it takes a push's read.
        format!(
            "{edges:?} {admitted:?} {} {:?}",
            after.server, after.stamped_at_ms
        )
    }

    /// What the edge format leaves out, an edge stream never uses: with every other field
    /// blanked, the edge and the selectors' verdicts are the same; and blanking any one of its
    /// options changes them.
    #[test]
    fn an_edge_stream_needs_nothing_outside_the_edge_format() {
        let full = everything_stamped();
        let mut bare = full.clone();
        for name in every_column() {
            if !EDGE_FIELDS.contains(&name) {
                field_mut(&mut bare, name).clear();
            }
        }
        assert_ne!(bare, full, "the blanked fields carried values");
        assert_eq!(edge_view(&bare), edge_view(&full));
        for &name in EDGE_FIELDS {
            let mut without = full.clone();
            field_mut(&mut without, name).clear();
            if name.name() == "@agent_name" {
                assert!(crate::fleet::row_of(&without, Default::default(), "h", 1).is_none());
            } else if name.name() != "pane_current_path" {
                assert_ne!(edge_view(&without), edge_view(&full), "{name} is not used");
            }
        }
        assert!(EDGE_FIELDS.iter().all(|n| ROW_FIELDS.contains(n)));
        // Much lighter than a row: at most 55% of its fields.
        assert!(EDGE_FIELDS.len() * 20 <= ROW_FIELDS.len() * 11);
    }

    #[test]
    fn a_raw_listing_parses_as_the_read_it_kept() {
        let pane = agent("%4", "codex", "idle");
        let out = render("n", &[record(&pane, Titles::Omit)]);
        let raw = RawListing {
            fields: Fields::Host,
            nonce: "n".into(),
            answer: Answer::Output(out),
        };
        assert_eq!(raw.listing().unwrap(), Listing::Panes(vec![pane]));
        let none = RawListing {
            answer: Answer::NoServer {
                socket: "/s".into(),
            },
            ..raw.clone()
        };
        assert_eq!(
            none.listing().unwrap(),
            Listing::NoServer {
                socket: "/s".into()
            }
        );
        let garbage = RawListing {
            answer: Answer::Output(b"usage: tmux\n".to_vec()),
            ..raw
        };
        assert!(garbage.listing().is_err());
    }

    /// What a hook's stamp-and-read prints (its window's panes, then the clients) reads back as
    /// the pane it stamped and the clients; a pane the output lacks, or output that is not a
    /// read, is nothing.
    #[test]
    fn a_carried_read_gives_back_its_pane_and_the_clients() {
        let (mine, other) = (everything_stamped(), agent("%8", "codex", "idle"));
        let mut out = render(
            "n",
            &[record(&other, Titles::Omit), record(&mine, Titles::Omit)],
        );
        out.extend(format!("{}/dev/pts/3\n", client_marker("n")).into_bytes());
        assert_eq!(
            carried_pane("%7", "n", &out),
            Some((mine, vec!["/dev/pts/3".to_owned()]))
        );
        assert_eq!(carried_pane("%9", "n", &out), None);
        assert_eq!(carried_pane("%7", "other", &out), None, "another nonce");
        assert_eq!(carried_pane("%7", "n", b"usage: tmux"), None);
    }

    /// The stamp and the read go to tmux as one command line: the writes, `;`, the read of the
    /// pane's window with the host's fields, `;`, the clients.
    #[test]
    fn a_stamp_and_its_read_are_one_invocation() {
        let tmp = tempfile::tempdir().unwrap();
        let argv = tmp.path().join("argv");
        let bin = tmp.path().join("tmux");
        std::fs::write(
            &bin,
            format!("#!/bin/sh\nprintf '%s\\n' \"$@\" > {}\n", argv.display()),
        )
        .unwrap();
        std::fs::set_permissions(&bin, std::os::unix::fs::PermissionsExt::from_mode(0o755))
            .unwrap();
        let tmux = Tmux::new(&bin, None);
        assert_eq!(tmux.stamp_and_read("%3", &[]).unwrap(), None);
        assert!(!argv.exists(), "nothing to write, nothing run");
        let write = super::super::write::OptionWrite::Set(PaneOption::State, "idle");
        let (nonce, out) = tmux.stamp_and_read("%3", &[write]).unwrap().unwrap();
        assert!(out.is_empty());
        let args = std::fs::read_to_string(&argv).unwrap();
        let args: Vec<&str> = args.lines().collect();
        assert_eq!(
            args[..8],
            [
                "-u",
                "set-option",
                "-p",
                "-t",
                "%3",
                "@agent_state",
                "idle",
                ";"
            ]
        );
        assert_eq!(args[8..10], ["list-panes", "-F"]);
        assert!(args[10].contains(&nonce) && args[10].contains("#{@agent_notified_at}"));
        assert!(!args[10].contains("pane_title"));
        assert_eq!(args[11..14], ["-t", "%3", ";"]);
        assert_eq!(args[14], "list-clients");
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
        assert_eq!(
            parse_panes(&out, nonce, &names(Fields::Host, Titles::Omit)),
            [first, second]
        );
    }

    #[test]
    fn invalid_utf8_is_decoded_lossily() {
        let nonce = "n";
        let pane = agent("%0", "claude", "STATE");
        let mut out = render(nonce, &[record(&pane, Titles::Omit)]);
        let at = out.windows(5).position(|w| w == b"STATE").unwrap();
        out[at] = 0xff;
        let panes = parse_panes(&out, nonce, &names(Fields::Host, Titles::Omit));
        assert_eq!(panes[0].options.state, "\u{fffd}TATE");
    }

    #[test]
    fn a_record_with_the_wrong_field_count_is_skipped() {
        let nonce = "n";
        let mut short = record(&agent("%0", "claude", "idle"), Titles::Omit);
        short.pop();
        let whole = record(&agent("%1", "codex", "idle"), Titles::Omit);
        let panes = parse_panes(
            &render(nonce, &[short, whole]),
            nonce,
            &names(Fields::Host, Titles::Omit),
        );
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
            let err = panes_of(garbage, nonce, &names(Fields::Host, Titles::Omit)).unwrap_err();
            assert!(matches!(err, TmuxError::Unreadable { .. }), "{err}");
        }
        let mut short = record(&agent("%0", "claude", "idle"), Titles::Omit);
        short.pop();
        let only_malformed = render(nonce, &[short]);
        assert!(panes_of(&only_malformed, nonce, &names(Fields::Host, Titles::Omit)).is_err());
        assert_eq!(
            panes_of(b"", nonce, &names(Fields::Host, Titles::Omit)).unwrap(),
            []
        );
        let one = render(
            nonce,
            &[record(&agent("%1", "codex", "idle"), Titles::Omit)],
        );
        assert_eq!(
            panes_of(&one, nonce, &names(Fields::Host, Titles::Omit))
                .unwrap()
                .len(),
            1
        );
    }

    #[test]
    fn a_forged_record_without_the_nonce_cannot_inject_a_pane() {
        let nonce = "secret";
        let mut first = agent("%0", "claude", "idle");
        first.options.detail = "\n\u{1e}guess\u{1f}%99".into();
        let out = render(nonce, &[record(&first, Titles::Omit)]);
        let panes = parse_panes(&out, nonce, &names(Fields::Host, Titles::Omit));
        assert_eq!(panes.len(), 1);
        assert_eq!(panes[0].pane_id, "%0");
    }

    #[test]
    fn clients_listed_after_the_panes_are_told_apart_from_them() {
        let pane = agent("%1", "claude", "idle");
        let mut out = render("n", &[record(&pane, Titles::Omit)]);
        let (panes, clients) = split_clients(&out, "n");
        assert_eq!(
            (
                parse_panes(panes, "n", &names(Fields::Host, Titles::Omit)),
                clients
            ),
            (vec![pane.clone()], vec![])
        );
        for client in ["/dev/pts/1", "/dev/pts/2"] {
            out.extend(format!("{}{client}\n", client_marker("n")).into_bytes());
        }
        let (panes, clients) = split_clients(&out, "n");
        assert_eq!(
            parse_panes(panes, "n", &names(Fields::Host, Titles::Omit)),
            [pane]
        );
        assert_eq!(clients, ["/dev/pts/1", "/dev/pts/2"]);
        // A value holding a client line without the nonce is the value's own text.
        let mut forged = agent("%1", "claude", "idle");
        forged.options.session = "\u{1e}x\u{1d}/dev/pts/9".into();
        let out = render("n", &[record(&forged, Titles::Omit)]);
        let (panes, clients) = split_clients(&out, "n");
        assert_eq!(
            (
                parse_panes(panes, "n", &names(Fields::Host, Titles::Omit)),
                clients
            ),
            (vec![forged], vec![])
        );
    }

    /// Only `%<digits>` can name a pane: any other id reads as no pane without starting tmux
    /// (here a tmux that does not exist, which a `%<digits>` id does try to start).
    #[test]
    fn an_id_no_pane_can_have_asks_tmux_nothing() {
        let tmux = Tmux::new("/nonexistent/tmux", None);
        for id in ["", "%", "abc", "%1x", "%-1", "1", "work:0.1"] {
            let listing = tmux.list_pane(id, Fields::Host, Titles::Omit).unwrap();
            assert_eq!(listing, Listing::Panes(Vec::new()), "{id:?}");
        }
        assert!(tmux.list_pane("%12", Fields::Host, Titles::Omit).is_err());
    }

    #[test]
    fn nonces_differ_between_reads() {
        assert_ne!(nonce(), nonce());
    }
}
