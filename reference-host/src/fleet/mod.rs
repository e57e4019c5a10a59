//! From one tmux read to fleet rows, per the pane-option contract and wire-details "Fleet row".
//!
//! A pane without `@agent_name` is not an agent pane and has no row. Rows keep tmux's pane order.
//!
//! A stream's cycle reads only what it publishes ([`FleetSource::cycle_job`]: an edge stream the
//! fields of an edge, a snapshot stream those of a row), through [`shared`]: one read per cycle
//! for every `serve` of the host.

pub mod shared;

use schema::{Detail, FleetRow, Local, LsRow, Row, State, Wire};

use std::time::{Duration, Instant};

use crate::clock::now_ms;
use crate::git::GitCache;
use crate::push::Carried;
use crate::repeated::RepeatedWarning;
use crate::tmux::read::{Fields, Listing, PaneRead, Titles, carried_pane};
use crate::tmux::write::Input;
use crate::tmux::{Tmux, TmuxCopy, TmuxError};
use shared::SharedReads;

/// Reads the fleet: one tmux call, plus cached repository lookups.
#[derive(Debug)]
pub struct FleetReader {
    tmux: Tmux,
    git: GitCache,
    host: String,
    fields: Fields,
    titles: Titles,
    /// A failing read is logged here, once, not by every cycle and request that meets it.
    failing: RepeatedWarning,
    /// So is a read that found no server.
    absent: RepeatedWarning,
    /// The clients attached at the last read, for a reader that lists them
    /// ([`FleetReader::with_clients`]); `None` for one that does not.
    clients: Option<Vec<String>>,
    /// Where its streams' cycle reads are shared with the host's other `serve` processes
    /// ([`FleetReader::with_shared`]); `None`: each cycle reads tmux.
    shared: Option<SharedReads>,
}

/// What a stream's cycle publishes, and so what it reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CycleKind {
    /// Edges: the fields of an edge and a selector (`Fields::Edge`).
    Edges,
    /// Snapshots: the fields of a row (`Fields::Row`).
    Snapshots,
}

/// One stream cycle's read of the whole fleet.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CycleRead {
    /// Every agent pane, in pane order, with the fields the cycle's kind needs (the others
    /// empty).
    pub rows: Vec<FleetRow>,
    /// When the read started, epoch ms: the floor of the stream's next shared read.
    pub started_ms: u64,
    /// When the read answered, epoch ms: an edge's `at_ms`.
    pub at_ms: u64,
    /// The origin of the host's shared schedule (epoch ms) when the read was shared: the cycle
    /// after this one is due at an instant of it (`shared::next_instant`).
    pub origin_ms: Option<u64>,
}

/// The local listing: the rows, titles included, and when no tmux server runs, the line that says
/// so (the rows are then none).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LocalListing {
    pub rows: Vec<LsRow>,
    pub no_server: Option<String>,
}

/// What a person hears when a read finds no tmux server on the socket; the fleet is answered
/// all the same, empty.
pub fn no_server_line(socket: &str) -> String {
    format!("no tmux server is running on {socket}: the fleet is empty")
}

/// One agent pane as one read saw it: its wire row, and what only the host uses.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pane {
    /// What a snapshot carries.
    pub row: FleetRow,
    /// What a card, a dispatch or a notification needs beyond the row.
    pub facts: PaneFacts,
}

/// What the host reads of a pane beyond its wire row (never on the wire).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PaneFacts {
    /// The agent's own session id (`@agent_session`).
    pub agent_session: Option<String>,
    /// The pending question's id (`@agent_question_request`).
    pub question_request: Option<String>,
    /// The agent's HTTP API base URL (`@agent_api_endpoint`).
    pub api_endpoint: Option<String>,
    /// The pane's working directory.
    pub cwd: String,
    /// The pane's tty.
    pub tty: String,
    /// The pane's window (`@N`).
    pub window_id: String,
    /// `@agent_mute_until`, when it parses.
    pub mute_until: Option<u64>,
    /// `@agent_notified_at`: the episode a notification already fired for.
    pub notified_at: Option<String>,
    /// `@agent_context_notified_at`.
    pub context_notified_at: Option<String>,
    /// `@agent_stall_notified_at`.
    pub stall_notified_at: Option<String>,
    /// The pane title, read only by a reader made [`FleetReader::with_titles`] (a notification
    /// with `include_title`); `None` otherwise.
    pub title: Option<String>,
}

impl Pane {
    /// A pane with no facts beyond its row (tests, scripted fleets).
    #[cfg(test)]
    pub fn of_row(row: FleetRow) -> Pane {
        Pane {
            row,
            facts: PaneFacts::default(),
        }
    }
}

/// Anything that can produce the fleet; the serve loop reads through this so its tests can
/// script a fleet.
pub trait FleetSource {
    /// Every agent pane now, in pane order: one read of the whole fleet.
    fn panes(&mut self) -> Result<Vec<Pane>, TmuxError>;

    /// This host's name.
    fn host(&self) -> &str;

    /// Sends keys and text to pane `pane`, in order (a dispatch's screen lane).
    fn send(&mut self, pane: &str, inputs: &[Input<'_>]) -> Result<(), TmuxError>;

    /// The wire rows now, in pane order.
    fn read(&mut self) -> Result<Vec<FleetRow>, TmuxError> {
        Ok(self.panes()?.into_iter().map(|pane| pane.row).collect())
    }

    /// Agent pane `id` now, from a fresh read of tmux; `None` when this host has no such agent
    /// pane. A card, a window, a dispatch's binder and the event hook read a pane through this.
    fn pane(&mut self, id: &str) -> Result<Option<Pane>, TmuxError> {
        Ok(self.panes()?.into_iter().find(|pane| pane.row.pane == id))
    }

    /// Agent pane `id` from a read an agent's hook carried with its push (`crate::push`):
    /// `Some(None)` when the read shows the pane is no agent pane, `None` when the read cannot
    /// be taken (it does not hold the pane, or this source reads what it lacks); the caller then
    /// reads the pane itself.
    fn carried(&mut self, id: &str, read: &Carried) -> Option<Option<Pane>> {
        let _ = (id, read);
        None
    }

    /// What a stream cycle's job answers ([`FleetSource::cycle_job`]): what
    /// [`FleetSource::finish_cycle`] makes the cycle's read of.
    type CycleAnswer: Send + 'static;

    /// A stream's cycle, begun: a job that reads the whole fleet as `kind` needs it, at a cycle
    /// of `interval`, from a read that starts no earlier than `floor_ms` (the stream's last
    /// read). `serve` runs it on a thread of its own, so pushes and requests go on while tmux
    /// answers, and hands its answer back to [`FleetSource::finish_cycle`] on its loop.
    fn cycle_job(
        &mut self,
        kind: CycleKind,
        interval: Duration,
        floor_ms: u64,
    ) -> CycleJob<Self::CycleAnswer>;

    /// The cycle's read, from what its job answered.
    fn finish_cycle(&mut self, answer: Self::CycleAnswer) -> Result<CycleRead, TmuxError>;
}

/// A stream cycle's read, to run off the loop ([`FleetSource::cycle_job`]).
pub type CycleJob<A> = crate::offloop::Job<A>;

impl FleetReader {
    /// A reader of the server `tmux` talks to, on host `host`.
    pub fn new(tmux: Tmux, host: String) -> FleetReader {
        FleetReader {
            tmux,
            git: GitCache::default(),
            host,
            fields: Fields::Host,
            titles: Titles::Omit,
            failing: RepeatedWarning::default(),
            absent: RepeatedWarning::default(),
            clients: None,
            shared: None,
        }
    }

    /// A reader whose streams' cycles share their reads through `shared` ([`shared`]).
    pub fn with_shared(mut self, shared: SharedReads) -> FleetReader {
        self.shared = Some(shared);
        self
    }

    /// Logs what a read's result says about tmux: a failure, or a socket no server listens on,
    /// when it first happens and then once a minute while it repeats (a stuck tmux fails every
    /// cycle), and the recovery.
    fn log_read(&mut self, read: Result<&Listing, &TmuxError>) {
        if let Ok(listing) = read {
            if let Some(line) = self.failing.stopped() {
                tracing::info!("tmux answers again: {line}");
            }
            match listing {
                Listing::NoServer { socket } => {
                    let line = no_server_line(socket);
                    if let Some(line) = self.absent.occurred(&line, Instant::now()) {
                        tracing::warn!("{line}");
                    }
                }
                Listing::Panes(_) => {
                    if self.absent.stopped().is_some() {
                        tracing::info!("a tmux server runs on the socket now");
                    }
                }
            }
            return;
        }
        match read {
            Ok(_) => {}
            // The time-out that caused it was logged.
            Err(err @ TmuxError::Hung { .. }) => tracing::debug!(%err, "fleet read skipped"),
            Err(err) => {
                if let Some(line) = self.failing.occurred(&err.to_string(), Instant::now()) {
                    tracing::warn!("reading the fleet failed: {line}");
                }
            }
        }
    }

    /// A reader whose panes carry their titles (`PaneFacts::title`): only the notifier with
    /// `include_title` asks for them; `serve` never does.
    pub fn with_titles(mut self, titles: Titles) -> FleetReader {
        self.titles = titles;
        self
    }

    /// A reader that asks tmux for `fields` only: what it does not ask for is empty in its rows
    /// and facts. The notification daemon reads [`Fields::Notify`], what its triggers and
    /// status line use, because each field costs tmux time on every cycle.
    pub fn with_fields(mut self, fields: Fields) -> FleetReader {
        self.fields = fields;
        self
    }

    /// A reader whose every read, of the fleet or of one pane, also lists the attached clients,
    /// in the same tmux invocation (the notification daemon and an agent's event hook: a fire
    /// shows its status-line message to them).
    pub fn with_clients(mut self) -> FleetReader {
        self.clients = Some(Vec::new());
        self
    }

    /// The clients attached at the last read that succeeded; none for a reader made without
    /// [`FleetReader::with_clients`].
    pub fn clients(&self) -> &[String] {
        self.clients.as_deref().unwrap_or_default()
    }

    /// The tmux this reader reads.
    pub fn tmux(&self) -> &Tmux {
        &self.tmux
    }

    /// The rows with pane titles, for the local listing only, and the line a person should see
    /// when they are none because no tmux server runs.
    pub fn read_local(&mut self) -> Result<LocalListing, TmuxError> {
        let now = now_ms();
        self.git.next_read();
        let (panes, no_server) = match self.tmux.list_panes(Fields::Host, Titles::Include)? {
            Listing::Panes(panes) => (panes, None),
            Listing::NoServer { socket } => (Vec::new(), Some(no_server_line(&socket))),
        };
        let rows = panes
            .iter()
            .filter_map(|pane| {
                let title = pane.title.clone().unwrap_or_default();
                let row = self.row(pane, now)?;
                Some(row.with_view(Local { title }))
            })
            .collect();
        Ok(LocalListing { rows, no_server })
    }

    fn row(&mut self, pane: &PaneRead, now: u64) -> Option<FleetRow> {
        let facts = self.git.facts(&pane.current_path);
        row_of(pane, facts, &self.host, now)
    }

    /// The agent pane `pane` is at `now`; `None` when it is not an agent pane.
    fn agent_pane(&mut self, pane: &PaneRead, now: u64) -> Option<Pane> {
        let row = self.row(pane, now)?;
        Some(Pane {
            row,
            facts: facts_of(pane),
        })
    }

    /// One read of tmux: of pane `one` alone, or of the whole fleet; with the attached clients
    /// for a reader made [`FleetReader::with_clients`]. Its failure is logged as
    /// [`FleetReader::log_read`] says, and it starts a new read of the repositories' `HEAD`s.
    fn read(&mut self, one: Option<&str>) -> Result<Vec<PaneRead>, TmuxError> {
        let (fields, titles) = (self.fields, self.titles);
        let read = match (one, self.clients.is_some()) {
            (Some(pane), true) => self.tmux.list_pane_and_clients(pane, fields, titles),
            (Some(pane), false) => self
                .tmux
                .list_pane(pane, fields, titles)
                .map(|l| (l, Vec::new())),
            (None, true) => self.tmux.list_panes_and_clients(fields, titles),
            (None, false) => self
                .tmux
                .list_panes(fields, titles)
                .map(|l| (l, Vec::new())),
        }
        .map(|(listing, clients)| {
            if self.clients.is_some() {
                self.clients = Some(clients);
            }
            listing
        });
        self.log_read(read.as_ref());
        self.git.next_read();
        Ok(read?.into_panes())
    }
}

impl FleetSource for FleetReader {
    /// Agent pane `id` now, from a read of that pane alone ([`Tmux::list_pane`]).
    fn pane(&mut self, id: &str) -> Result<Option<Pane>, TmuxError> {
        let now = now_ms();
        let panes = self.read(Some(id))?;
        Ok(panes
            .iter()
            .find(|pane| pane.pane_id == id)
            .and_then(|pane| self.agent_pane(pane, now)))
    }

    fn panes(&mut self) -> Result<Vec<Pane>, TmuxError> {
        let now = now_ms();
        let panes = self.read(None)?;
        Ok(panes
            .iter()
            .filter_map(|pane| self.agent_pane(pane, now))
            .collect())
    }

    fn host(&self) -> &str {
        &self.host
    }

    fn send(&mut self, pane: &str, inputs: &[Input<'_>]) -> Result<(), TmuxError> {
        self.tmux.send(pane, inputs)
    }

    /// The hook's read holds the host's fields and no title: a reader that shows titles reads
    /// the pane itself. A reader made [`FleetReader::with_clients`] takes the clients listed
    /// with it.
    fn carried(&mut self, id: &str, read: &Carried) -> Option<Option<Pane>> {
        if self.titles == Titles::Include {
            return None;
        }
        let (pane, clients) = carried_pane(id, &read.nonce, &read.output)?;
        if self.clients.is_some() {
            self.clients = Some(clients);
        }
        self.git.next_read();
        Some(self.agent_pane(&pane, read.answered_ms))
    }

    type CycleAnswer = ReaderCycle;

    /// One read of the fields `kind` needs: shared with the host's other `serve` processes when
    /// the reader was made [`FleetReader::with_shared`]. The job reads with a copy of this
    /// reader's tmux, and parses tmux's answer too: the loop is left only the rows.
    fn cycle_job(
        &mut self,
        kind: CycleKind,
        interval: Duration,
        floor_ms: u64,
    ) -> CycleJob<ReaderCycle> {
        let fields = match kind {
            CycleKind::Edges => Fields::Edge,
            CycleKind::Snapshots => Fields::Row,
        };
        let (copy, shared) = (self.tmux.copy(), self.shared.clone());
        Box::new(move || {
            let tmux = &copy.tmux;
            let woke_ms = now_ms();
            let read = match &shared {
                Some(shared) => shared
                    .read(fields, interval, (woke_ms, floor_ms), |f| {
                        tmux.list_panes_raw(f)
                    })
                    .map(|read| {
                        let times = (read.started_ms, read.answered_ms);
                        (read.listing, times, Some(read.origin_ms))
                    }),
                None => tmux
                    .list_panes(fields, Titles::Omit)
                    .map(|listing| (listing, (woke_ms, now_ms()), None)),
            };
            ReaderCycle { read, tmux: copy }
        })
    }

    /// What tmux answered the job: its verdict on tmux (a time-out) becomes this reader's, since
    /// it is the latest; then the rows, with their repositories.
    fn finish_cycle(&mut self, answer: ReaderCycle) -> Result<CycleRead, TmuxError> {
        self.tmux.adopt_verdict(&answer.tmux);
        self.log_read(answer.read.as_ref().map(|(listing, ..)| listing));
        let (listing, (started_ms, at_ms), origin_ms) = answer.read?;
        self.git.next_read();
        let rows = listing
            .into_panes()
            .iter()
            .filter_map(|pane| self.row(pane, at_ms))
            .collect();
        Ok(CycleRead {
            rows,
            started_ms,
            at_ms,
            origin_ms,
        })
    }
}

/// What a [`FleetReader`]'s cycle job answers: tmux's listing (or why there is none), when the
/// read started and answered, the shared schedule's origin when the read was shared, and the
/// copy of the reader's tmux it read with.
#[derive(Debug)]
pub struct ReaderCycle {
    read: Result<Listed, TmuxError>,
    tmux: TmuxCopy,
}

/// A cycle's listing, when its read started and answered (epoch ms), and the shared schedule's
/// origin when the read was shared.
type Listed = (Listing, (u64, u64), Option<u64>);

/// This machine's host name: every row's `host`.
pub fn host_name() -> String {
    rustix::system::uname()
        .nodename()
        .to_string_lossy()
        .into_owned()
}

fn non_empty(value: &str) -> Option<String> {
    (!value.is_empty()).then(|| value.to_owned())
}

fn millis(value: &str) -> Option<u64> {
    value.trim().parse().ok()
}

/// What the host keeps of a pane beyond its row.
pub fn facts_of(pane: &PaneRead) -> PaneFacts {
    let o = &pane.options;
    PaneFacts {
        agent_session: non_empty(&o.session),
        question_request: non_empty(&o.question_request),
        api_endpoint: non_empty(&o.api_endpoint),
        cwd: pane.current_path.clone(),
        tty: pane.pane_tty.clone(),
        window_id: pane.window_id.clone(),
        mute_until: millis(&o.mute_until),
        notified_at: non_empty(&o.notified_at),
        context_notified_at: non_empty(&o.context_notified_at),
        stall_notified_at: non_empty(&o.stall_notified_at),
        title: pane.title.clone(),
    }
}

/// The wire row of one pane, or `None` for a pane that is not an agent pane.
pub fn row_of(
    pane: &PaneRead,
    facts: crate::git::RepoFacts,
    host: &str,
    now: u64,
) -> Option<FleetRow> {
    let o = &pane.options;
    let agent = non_empty(&o.name)?;
    let state = State::parse(o.state.trim()).unwrap_or(State::Unknown);
    let since_ms = millis(&o.since);
    let episode_ms = since_ms.max(millis(&o.turn_at)).unwrap_or(0);
    let attention = !o.attention.is_empty();
    let context = o
        .context
        .trim()
        .parse::<u8>()
        .ok()
        .filter(|pct| *pct <= 100);
    Some(Row {
        pane: pane.pane_id.clone(),
        agent,
        state,
        detail: Detail::parse(o.detail.trim()),
        since_ms,
        episode_ms,
        locator: format!(
            "{}:{}.{}",
            pane.session_name, pane.window_index, pane.pane_index
        ),
        view: Wire {},
        attention,
        done: state == State::Idle && attention,
        session: pane.session_name.clone(),
        transcript: non_empty(&o.transcript),
        permission_request: non_empty(&o.permission_request),
        stamped_at_ms: millis(&o.stamped_at),
        context,
        context_at_ms: millis(&o.context_at),
        muted: millis(&o.mute_until).is_some_and(|until| until > now),
        repo: facts.repo,
        branch: facts.branch,
        worktree: facts.worktree,
        pending_tool: non_empty(&o.pending_tool),
        pending_call: non_empty(&o.pending_call),
        server: pane.socket_path.clone(),
        host: host.to_owned(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::git::RepoFacts;
    use crate::testing;
    use crate::tmux::read::AgentOptions;

    fn pane(options: AgentOptions) -> PaneRead {
        testing::pane("%3", options)
    }

    #[test]
    fn a_pane_without_an_agent_name_has_no_row() {
        assert_eq!(
            row_of(&pane(AgentOptions::default()), RepoFacts::default(), "h", 0),
            None
        );
    }

    #[test]
    fn every_field_is_derived_from_its_option() {
        let options = AgentOptions {
            name: "claude".into(),
            state: "idle".into(),
            detail: "".into(),
            since: "1000".into(),
            turn_at: "5000".into(),
            stamped_at: "5001".into(),
            attention: "1".into(),
            transcript: "/t.jsonl".into(),
            permission_request: "req-1".into(),
            context: "41".into(),
            context_at: "4000".into(),
            mute_until: "99999999999999".into(),
            pending_tool: "Bash".into(),
            pending_call: "toolu_1".into(),
            ..AgentOptions::default()
        };
        let facts = RepoFacts {
            repo: Some("corral".into()),
            branch: Some("main".into()),
            worktree: Some("/src/corral".into()),
        };
        let row = row_of(&pane(options), facts, "studio", 10_000).unwrap();
        assert_eq!(row.agent, "claude");
        assert_eq!(row.state, State::Idle);
        assert_eq!(row.detail, None);
        assert_eq!(row.since_ms, Some(1000));
        assert_eq!(row.episode_ms, 5000, "episode is max(since, turn_at)");
        assert_eq!(row.locator, "work:1.2");
        assert!(row.attention && row.done, "idle with attention is done");
        assert_eq!(row.session, "work");
        assert_eq!(row.transcript.as_deref(), Some("/t.jsonl"));
        assert_eq!(row.permission_request.as_deref(), Some("req-1"));
        assert_eq!(row.stamped_at_ms, Some(5001));
        assert_eq!(row.context, Some(41));
        assert_eq!(row.context_at_ms, Some(4000));
        assert!(row.muted);
        assert_eq!(row.repo.as_deref(), Some("corral"));
        assert_eq!(row.branch.as_deref(), Some("main"));
        assert_eq!(row.worktree.as_deref(), Some("/src/corral"));
        assert_eq!(row.pending_tool.as_deref(), Some("Bash"));
        assert_eq!(row.pending_call.as_deref(), Some("toolu_1"));
        assert_eq!(row.server, "/tmp/tmux-0/s");
        assert_eq!(row.host, "studio");
    }

    #[test]
    fn odd_values_degrade_instead_of_failing_the_row() {
        let options = AgentOptions {
            name: "codex".into(),
            state: "napping".into(),
            detail: "sandbox_escape".into(),
            since: "soon".into(),
            context: "140".into(),
            mute_until: "5".into(),
            attention: "".into(),
            ..AgentOptions::default()
        };
        let row = row_of(&pane(options), RepoFacts::default(), "h", 10).unwrap();
        assert_eq!(
            row.state,
            State::Unknown,
            "a token outside the vocabulary reads as unknown"
        );
        assert_eq!(
            row.detail.as_ref().map(Detail::as_str),
            Some("sandbox_escape")
        );
        assert_eq!(row.since_ms, None);
        assert_eq!(row.episode_ms, 0);
        assert_eq!(row.context, None);
        assert!(!row.muted, "a mute deadline in the past is no mute");
        assert!(!row.attention && !row.done);
    }

    #[test]
    fn working_with_attention_is_not_done() {
        let options = AgentOptions {
            name: "claude".into(),
            state: "working".into(),
            attention: "1".into(),
            ..AgentOptions::default()
        };
        let row = row_of(&pane(options), RepoFacts::default(), "h", 0).unwrap();
        assert!(row.attention && !row.done);
    }
}
