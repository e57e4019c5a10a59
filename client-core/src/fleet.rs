//! The model: every agent of every host, each host's link and faults, and the rows as shown:
//! grouped by host, blocked panes first (the longest wait first), then the rest in the host's own
//! order, narrowed by the user's filters.
//!
//! Snapshots replace a host's rows (a snapshot narrowed by a selector only updates the rows it
//! holds); edges move a row at once, before the snapshot that follows them brings its other
//! fields. Every update says what changed, row by row, and whether it rings ([`super::attention`]).

use schema::{Edge, FleetRow, HelloReply, State, Wire};

use super::attention::Attention;

/// How a host's connection stands.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Link {
    /// Starting its process, or saying hello.
    Connecting,
    /// The handshake was answered.
    Connected,
    /// Dropped; the next attempt is at `retry_at_ms` (epoch ms), when there is one.
    Down {
        /// Why.
        reason: String,
        /// When the next attempt starts.
        retry_at_ms: Option<u64>,
    },
    /// The device was refused `scope-denied` and the host exited 2: revoked (or never enrolled).
    /// Not retried.
    Revoked {
        /// The host's message.
        reason: String,
    },
}

impl Link {
    /// The word a status line shows.
    pub fn word(&self) -> &'static str {
        match self {
            Link::Connecting => "connecting",
            Link::Connected => "connected",
            Link::Down { .. } => "disconnected",
            Link::Revoked { .. } => "revoked",
        }
    }
}

/// The last fault a host showed: a line the client could not use, an error nothing asked for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fault {
    /// What was wrong.
    pub message: String,
    /// How many faults this host showed so far.
    pub count: u32,
}

/// One host as the model holds it.
#[derive(Debug, Clone)]
pub struct Host {
    /// The configured name.
    pub name: String,
    /// Its connection.
    pub link: Link,
    /// What its handshake said (the host's own name, version, cycle and the granted scopes).
    pub hello: Option<HelloReply>,
    /// Its last fault.
    pub fault: Option<Fault>,
    /// Its agents, in the host's (tmux's) order.
    pub rows: Vec<FleetRow>,
    /// When the host last said anything (epoch ms): how old its rows may be once it is down.
    pub last_news_ms: Option<u64>,
    baseline_taken: bool,
}

impl Host {
    /// Whether its rows are only what it last said: it is not connected now.
    pub fn stale(&self) -> bool {
        self.link != Link::Connected
    }
}

/// What happened to one row.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RowChange {
    /// A pane the model did not have.
    Added,
    /// A pane whose row differs.
    Changed,
    /// A pane that is gone.
    Removed,
}

/// One row's change, with the row as it now is (the last one seen, for a removed pane).
#[derive(Debug, Clone, PartialEq)]
pub struct Changed {
    /// Host index.
    pub host: usize,
    /// What happened.
    pub change: RowChange,
    /// The row.
    pub row: FleetRow,
    /// Whether it rings.
    pub rings: bool,
}

/// Which states a filter admits: the four states and `done` (idle with unreviewed output).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StateWanted {
    /// Rows in this state.
    Is(State),
    /// Rows whose `done` is set.
    Done,
}

impl StateWanted {
    /// Parses `idle`, `working`, `blocked`, `unknown` or `done`.
    pub fn parse(word: &str) -> Option<StateWanted> {
        match word {
            "done" => Some(StateWanted::Done),
            other => State::parse(other).map(StateWanted::Is),
        }
    }

    fn admits(self, row: &FleetRow) -> bool {
        match self {
            StateWanted::Is(state) => row.state == state,
            StateWanted::Done => row.done,
        }
    }
}

/// The user's filters; each one set narrows, the states OR together.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Filter {
    /// Only this host (its configured name).
    pub host: Option<String>,
    /// Only these states (empty: every state).
    pub states: Vec<StateWanted>,
    /// Only this agent.
    pub agent: Option<String>,
}

impl Filter {
    fn admits(&self, host: &str, row: &FleetRow) -> bool {
        self.host.as_deref().is_none_or(|h| h == host)
            && self.agent.as_deref().is_none_or(|a| a == row.agent)
            && (self.states.is_empty() || self.states.iter().any(|s| s.admits(row)))
    }

    /// Whether nothing is filtered out.
    pub fn is_empty(&self) -> bool {
        *self == Filter::default()
    }
}

/// How many agents of a host are in each state.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Counts {
    /// Every agent.
    pub total: usize,
    /// Blocked.
    pub blocked: usize,
    /// Working.
    pub working: usize,
    /// Idle.
    pub idle: usize,
    /// Unknown.
    pub unknown: usize,
    /// Idle with output to read.
    pub done: usize,
}

/// Every host.
#[derive(Debug, Default)]
pub struct Fleet {
    hosts: Vec<Host>,
    attention: Attention,
}

impl Fleet {
    /// A fleet of these hosts, none connected yet.
    pub fn new(names: impl IntoIterator<Item = String>) -> Fleet {
        Fleet {
            hosts: names
                .into_iter()
                .map(|name| Host {
                    name,
                    link: Link::Connecting,
                    hello: None,
                    fault: None,
                    rows: Vec::new(),
                    last_news_ms: None,
                    baseline_taken: false,
                })
                .collect(),
            attention: Attention::default(),
        }
    }

    /// Every host, in order.
    pub fn hosts(&self) -> &[Host] {
        &self.hosts
    }

    /// One host.
    pub fn host(&self, host: usize) -> &Host {
        &self.hosts[host]
    }

    /// The index of the host named `name`.
    pub fn find(&self, name: &str) -> Option<usize> {
        self.hosts.iter().position(|h| h.name == name)
    }

    /// A row of a host.
    pub fn row(&self, host: usize, pane: &str) -> Option<&FleetRow> {
        self.hosts[host].rows.iter().find(|r| r.pane == pane)
    }

    /// The host's connection changed.
    pub fn set_link(&mut self, host: usize, link: Link) {
        self.hosts[host].link = link;
    }

    /// The host said something at `now_ms`.
    pub fn heard(&mut self, host: usize, now_ms: u64) {
        self.hosts[host].last_news_ms = Some(now_ms);
    }

    /// The host answered its handshake.
    pub fn set_hello(&mut self, host: usize, hello: HelloReply) {
        let host = &mut self.hosts[host];
        host.hello = Some(hello);
        host.link = Link::Connected;
    }

    /// The host did something this client cannot use.
    pub fn note_fault(&mut self, host: usize, message: String) {
        let host = &mut self.hosts[host];
        let count = host.fault.as_ref().map_or(0, |f| f.count) + 1;
        host.fault = Some(Fault { message, count });
    }

    /// A snapshot arrived: `whole` when it was not narrowed by a selector.
    pub fn apply_snapshot(
        &mut self,
        host: usize,
        rows: Vec<FleetRow>,
        whole: bool,
    ) -> Vec<Changed> {
        let baseline = !self.hosts[host].baseline_taken;
        if whole {
            self.hosts[host].baseline_taken = true;
        }
        let mut changes = Vec::new();
        if whole {
            let old = std::mem::take(&mut self.hosts[host].rows);
            for gone in old
                .iter()
                .filter(|o| !rows.iter().any(|r| r.pane == o.pane))
            {
                self.attention.forget(host, &gone.pane);
                changes.push(Changed {
                    host,
                    change: RowChange::Removed,
                    row: gone.clone(),
                    rings: false,
                });
            }
            for row in &rows {
                let before = old.iter().find(|o| o.pane == row.pane);
                let rings = self.attention.observe(host, row, baseline);
                match before {
                    None => changes.push(Changed {
                        host,
                        change: RowChange::Added,
                        row: row.clone(),
                        rings,
                    }),
                    Some(before) if before != row || rings => changes.push(Changed {
                        host,
                        change: RowChange::Changed,
                        row: row.clone(),
                        rings,
                    }),
                    Some(_) => {}
                }
            }
            self.hosts[host].rows = rows;
        } else {
            for row in rows {
                let rings = self.attention.observe(host, &row, baseline);
                let list = &mut self.hosts[host].rows;
                let change = match list.iter_mut().find(|r| r.pane == row.pane) {
                    Some(old) if *old == row && !rings => continue,
                    Some(old) => {
                        *old = row.clone();
                        RowChange::Changed
                    }
                    None => {
                        list.push(row.clone());
                        RowChange::Added
                    }
                };
                changes.push(Changed {
                    host,
                    change,
                    row,
                    rings,
                });
            }
        }
        changes
    }

    /// An edge arrived: the row moves now; the snapshot that follows brings the rest.
    pub fn apply_edge(&mut self, host: usize, edge: &Edge) -> Vec<Changed> {
        let name = self.hosts[host].name.clone();
        let rows = &mut self.hosts[host].rows;
        let index = rows.iter().position(|r| r.pane == edge.pane);
        let Some(to) = edge.to else {
            let Some(index) = index else {
                return Vec::new();
            };
            let row = rows.remove(index);
            self.attention.forget(host, &edge.pane);
            return vec![Changed {
                host,
                change: RowChange::Removed,
                row,
                rings: false,
            }];
        };
        let (change, row) = match index {
            Some(index) => (RowChange::Changed, &mut rows[index]),
            None => {
                rows.push(row_of_edge(edge, &name, to));
                let last = rows.len() - 1;
                (RowChange::Added, &mut rows[last])
            }
        };
        row.state = to;
        row.detail = edge.detail.clone();
        row.since_ms = Some(edge.at_ms);
        // A new state is a new episode, which only the next snapshot tells: none is quoted
        // meanwhile.
        row.episode_ms = 0;
        row.done = false;
        row.locator = edge.locator.clone();
        row.repo = edge.repo.clone();
        row.branch = edge.branch.clone();
        // No ring yet: the edge carries no episode. The snapshot the session asks for after
        // every edge tells it, and rings it ([`super::attention`]).
        vec![Changed {
            host,
            change,
            row: row.clone(),
            rings: false,
        }]
    }

    /// The rows the filter admits, grouped by host in host order; in each host blocked panes
    /// first, the longest waiting first, then the rest in the host's order.
    pub fn shown(&self, filter: &Filter) -> Vec<(usize, &FleetRow)> {
        let mut shown = Vec::new();
        for (index, host) in self.hosts.iter().enumerate() {
            let mut rows: Vec<&FleetRow> = host
                .rows
                .iter()
                .filter(|row| filter.admits(&host.name, row))
                .collect();
            // Stable: the host's order stays within each group.
            rows.sort_by_key(|row| match row.state {
                State::Blocked => (0, row.since_ms.unwrap_or(0)),
                _ => (1, 0),
            });
            shown.extend(rows.into_iter().map(|row| (index, row)));
        }
        shown
    }

    /// How many agents of a host are in each state.
    pub fn counts(&self, host: usize) -> Counts {
        let mut counts = Counts::default();
        for row in &self.hosts[host].rows {
            counts.total += 1;
            match row.state {
                State::Blocked => counts.blocked += 1,
                State::Working => counts.working += 1,
                State::Idle => counts.idle += 1,
                State::Unknown => counts.unknown += 1,
            }
            counts.done += usize::from(row.done);
        }
        counts
    }
}

/// A row for a pane an edge shows before any snapshot did; the next snapshot replaces it.
fn row_of_edge(edge: &Edge, host: &str, to: State) -> FleetRow {
    let session = edge
        .locator
        .split_once(':')
        .map_or(edge.locator.as_str(), |(session, _)| session);
    FleetRow {
        pane: edge.pane.clone(),
        agent: edge.agent.clone(),
        state: to,
        detail: edge.detail.clone(),
        since_ms: Some(edge.at_ms),
        episode_ms: 0,
        locator: edge.locator.clone(),
        view: Wire {},
        attention: false,
        done: false,
        session: session.to_owned(),
        transcript: None,
        permission_request: None,
        stamped_at_ms: None,
        context: None,
        context_at_ms: None,
        muted: false,
        repo: edge.repo.clone(),
        branch: edge.branch.clone(),
        worktree: None,
        pending_tool: None,
        pending_call: None,
        server: String::new(),
        host: host.to_owned(),
    }
}

/// A duration for a person: `42s`, `7m`, `3h05m`, `2d04h`.
pub fn human_duration(ms: u64) -> String {
    let s = ms / 1000;
    match s {
        0..60 => format!("{s}s"),
        60..3600 => format!("{}m", s / 60),
        3600..86400 => format!("{}h{:02}m", s / 3600, s % 3600 / 60),
        _ => format!("{}d{:02}h", s / 86400, s % 86400 / 3600),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::row;
    use schema::Detail;

    fn edge(pane: &str, from: Option<State>, to: Option<State>, at: u64) -> Edge {
        Edge {
            at_ms: at,
            pane: pane.into(),
            agent: "claude".into(),
            from,
            to,
            detail: to
                .filter(|s| *s == State::Blocked)
                .map(|_| Detail::Permission),
            locator: "work:0.1".into(),
            repo: Some("api".into()),
            branch: Some("main".into()),
        }
    }

    fn kinds(changes: &[Changed]) -> Vec<(String, RowChange, bool)> {
        changes
            .iter()
            .map(|c| (c.row.pane.clone(), c.change.clone(), c.rings))
            .collect()
    }

    #[test]
    fn a_whole_snapshot_replaces_the_rows_and_says_what_changed() {
        let mut fleet = Fleet::new(["a".to_owned()]);
        let first = fleet.apply_snapshot(
            0,
            vec![row("%0", State::Working), row("%1", State::Idle)],
            true,
        );
        assert_eq!(
            kinds(&first),
            [
                ("%0".into(), RowChange::Added, false),
                ("%1".into(), RowChange::Added, false)
            ]
        );
        let mut moved = row("%1", State::Idle);
        moved.context = Some(40);
        let second = fleet.apply_snapshot(0, vec![moved, row("%2", State::Working)], true);
        assert_eq!(
            kinds(&second),
            [
                ("%0".into(), RowChange::Removed, false),
                ("%1".into(), RowChange::Changed, false),
                ("%2".into(), RowChange::Added, false)
            ]
        );
        assert_eq!(fleet.row(0, "%1").unwrap().context, Some(40));
        // A narrowed snapshot updates what it holds and removes nothing.
        let narrowed = fleet.apply_snapshot(0, vec![row("%9", State::Idle)], false);
        assert_eq!(kinds(&narrowed), [("%9".into(), RowChange::Added, false)]);
        assert_eq!(fleet.host(0).rows.len(), 3);
    }

    #[test]
    fn an_edge_moves_the_row_at_once_and_the_snapshot_after_it_rings() {
        let mut fleet = Fleet::new(["a".to_owned()]);
        fleet.apply_snapshot(0, vec![row("%0", State::Working)], true);
        let changes = fleet.apply_edge(
            0,
            &edge("%0", Some(State::Working), Some(State::Blocked), 99),
        );
        assert_eq!(kinds(&changes), [("%0".into(), RowChange::Changed, false)]);
        let now = fleet.row(0, "%0").unwrap();
        assert_eq!(now.state, State::Blocked);
        assert_eq!(now.detail, Some(Detail::Permission));
        assert_eq!(now.since_ms, Some(99));
        // The snapshot that follows brings the episode, and rings it, once.
        let mut blocked = row("%0", State::Blocked);
        blocked.episode_ms = 99;
        let after = fleet.apply_snapshot(0, vec![blocked.clone()], true);
        assert_eq!(kinds(&after), [("%0".into(), RowChange::Changed, true)]);
        assert!(fleet.apply_snapshot(0, vec![blocked], true).is_empty());
        // A pane that appears, then vanishes.
        let appeared = fleet.apply_edge(0, &edge("%5", None, Some(State::Working), 100));
        assert_eq!(kinds(&appeared), [("%5".into(), RowChange::Added, false)]);
        assert_eq!(fleet.row(0, "%5").unwrap().session, "work");
        let vanished = fleet.apply_edge(0, &edge("%5", Some(State::Working), None, 101));
        assert_eq!(kinds(&vanished), [("%5".into(), RowChange::Removed, false)]);
        assert!(fleet.row(0, "%5").is_none());
    }

    #[test]
    fn a_host_first_snapshot_is_a_baseline() {
        let mut fleet = Fleet::new(["a".to_owned()]);
        let mut blocked = row("%0", State::Blocked);
        blocked.episode_ms = 5;
        assert!(!fleet.apply_snapshot(0, vec![blocked.clone()], true)[0].rings);
        blocked.episode_ms = 6;
        assert!(fleet.apply_snapshot(0, vec![blocked], true)[0].rings);
    }

    #[test]
    fn rows_are_grouped_by_host_blocked_first_longest_wait_first_and_filtered() {
        let mut fleet = Fleet::new(["a".to_owned(), "b".to_owned()]);
        let mut late = row("%2", State::Blocked);
        late.since_ms = Some(200);
        let mut early = row("%3", State::Blocked);
        early.since_ms = Some(100);
        let mut other = row("%4", State::Idle);
        other.agent = "codex".into();
        other.done = true;
        fleet.apply_snapshot(0, vec![row("%1", State::Working), late, early, other], true);
        fleet.apply_snapshot(1, vec![row("%1", State::Blocked)], true);
        let order = |filter: &Filter| -> Vec<(usize, String)> {
            fleet
                .shown(filter)
                .into_iter()
                .map(|(h, r)| (h, r.pane.clone()))
                .collect()
        };
        assert_eq!(
            order(&Filter::default()),
            [
                (0, "%3".into()),
                (0, "%2".into()),
                (0, "%1".into()),
                (0, "%4".into()),
                (1, "%1".into())
            ]
        );
        let blocked_on_b = Filter {
            host: Some("b".into()),
            states: vec![StateWanted::Is(State::Blocked)],
            agent: None,
        };
        assert_eq!(order(&blocked_on_b), [(1, "%1".into())]);
        let done_codex = Filter {
            host: None,
            states: vec![StateWanted::Done, StateWanted::Is(State::Working)],
            agent: Some("codex".into()),
        };
        assert_eq!(order(&done_codex), [(0, "%4".into())]);
        assert_eq!(
            fleet.counts(0),
            Counts {
                total: 4,
                blocked: 2,
                working: 1,
                idle: 1,
                unknown: 0,
                done: 1
            }
        );
    }

    #[test]
    fn durations_read_like_a_person_says_them() {
        assert_eq!(human_duration(42_000), "42s");
        assert_eq!(human_duration(7 * 60_000 + 5), "7m");
        assert_eq!(human_duration(3 * 3_600_000 + 5 * 60_000), "3h05m");
        assert_eq!(human_duration(2 * 86_400_000 + 4 * 3_600_000), "2d04h");
    }
}
