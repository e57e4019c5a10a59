//! Builders the unit tests share: a fleet row, a pane as tmux reports it, an enrolled device, and
//! a scripted fleet, each with plain defaults that a test overrides field by field.

use std::cell::RefCell;
use std::rc::Rc;

use schema::{DeviceRecord, FleetRow, Row, Scope, State, Wire};

use crate::devices::{DeviceFile, StoreError};
use crate::fleet::{FleetSource, Pane};
use crate::tmux::TmuxError;
use crate::tmux::read::{AgentOptions, PaneRead};
use crate::tmux::write::Input;

/// The host's services for a test whose runtime dir is `dir`: bundled manifests, no stores, no
/// act log.
pub fn services(dir: &std::path::Path) -> crate::serve::Services {
    crate::serve::Services {
        runtime: crate::runtime::RuntimeDir::open(dir).unwrap(),
        manifests: crate::act::manifest::Manifests::bundled(),
        stores: crate::transcript::locate::StoreRoots::default(),
        act_log: None,
    }
}

/// A fleet a test scripts between events: the panes it reads, whether reading fails, and what
/// was sent to which pane (each input rendered as `keys:A B` or `text:...`). Clones share state.
#[derive(Debug, Clone, Default)]
pub struct Scripted {
    panes: Rc<RefCell<Vec<Pane>>>,
    fail: Rc<RefCell<bool>>,
    sent: Rc<RefCell<Vec<(String, String)>>>,
    reads: Rc<RefCell<u32>>,
    /// The floor each stream cycle's read was asked for.
    floors: Rc<RefCell<Vec<u64>>>,
    /// How many reads a push carried were parsed (a listener then takes them or not).
    carried: Rc<RefCell<u32>>,
    /// The next stream cycle's job panics (a bug in a read made off the loop).
    panic_next_cycle: Rc<RefCell<bool>>,
}

impl Scripted {
    /// The next stream cycle's job panics when it runs.
    pub fn panic_next_cycle(&self) {
        *self.panic_next_cycle.borrow_mut() = true;
    }

    /// The fleet is these rows (no host-only facts).
    pub fn set(&self, rows: Vec<FleetRow>) {
        *self.panes.borrow_mut() = rows.into_iter().map(Pane::of_row).collect();
    }

    /// The fleet is these panes.
    pub fn set_panes(&self, panes: Vec<Pane>) {
        *self.panes.borrow_mut() = panes;
    }

    /// Changes the rows in place.
    pub fn edit(&self, change: impl FnOnce(&mut Vec<FleetRow>)) {
        let mut rows: Vec<FleetRow> = self.panes.borrow().iter().map(|p| p.row.clone()).collect();
        change(&mut rows);
        self.set(rows);
    }

    /// Reads fail (as a lost tmux server) while `fail` is true.
    pub fn fail(&self, fail: bool) {
        *self.fail.borrow_mut() = fail;
    }

    /// What was sent so far: (pane, input) pairs in order.
    pub fn sent(&self) -> Vec<(String, String)> {
        self.sent.borrow().clone()
    }

    /// How many reads of the fleet were made.
    pub fn reads(&self) -> u32 {
        *self.reads.borrow()
    }

    /// The floors the stream cycles' reads were asked for, in order.
    pub fn floors(&self) -> Vec<u64> {
        self.floors.borrow().clone()
    }

    /// How many reads a push carried were parsed (a listener then takes them or reads itself).
    pub fn carried_parsed(&self) -> u32 {
        *self.carried.borrow()
    }
}

/// A read a push carries that a [`Scripted`] fleet takes: the fleet as scripted when it is taken,
/// started and answered at `at_ms`.
pub fn carried(at_ms: u64) -> crate::push::Carried {
    crate::push::Carried {
        started_ms: at_ms,
        answered_ms: at_ms,
        nonce: "scripted".into(),
        output: Vec::new(),
    }
}

impl FleetSource for Scripted {
    fn panes(&mut self) -> Result<Vec<Pane>, TmuxError> {
        *self.reads.borrow_mut() += 1;
        if *self.fail.borrow() {
            return Err(TmuxError::Failed {
                status: "exit status: 1".into(),
                stderr: "lost server".into(),
            });
        }
        Ok(self.panes.borrow().clone())
    }

    fn host(&self) -> &str {
        "studio"
    }

    fn carried(&mut self, id: &str, read: &crate::push::Carried) -> Option<Option<Pane>> {
        if read.nonce != "scripted" {
            return None;
        }
        *self.carried.borrow_mut() += 1;
        let panes = self.panes.borrow();
        Some(panes.iter().find(|p| p.row.pane == id).cloned())
    }

    type CycleAnswer = Result<crate::fleet::CycleRead, TmuxError>;

    /// The fleet as scripted when the cycle begins: its job only hands that read over, so a
    /// test that runs the job later has a read that tmux answered late.
    fn cycle_job(
        &mut self,
        _kind: crate::fleet::CycleKind,
        _interval: std::time::Duration,
        floor_ms: u64,
    ) -> crate::fleet::CycleJob<Self::CycleAnswer> {
        self.floors.borrow_mut().push(floor_ms);
        let started_ms = crate::clock::now_ms();
        let read = self.read().map(|rows| crate::fleet::CycleRead {
            rows,
            started_ms,
            at_ms: crate::clock::now_ms(),
            origin_ms: None,
        });
        if std::mem::take(&mut *self.panic_next_cycle.borrow_mut()) {
            return Box::new(|| panic!("a scripted cycle read panicked"));
        }
        Box::new(move || read)
    }

    fn finish_cycle(
        &mut self,
        answer: Self::CycleAnswer,
    ) -> Result<crate::fleet::CycleRead, TmuxError> {
        answer
    }

    fn send(&mut self, pane: &str, inputs: &[Input<'_>]) -> Result<(), TmuxError> {
        if !self.panes.borrow().iter().any(|p| p.row.pane == pane) {
            return Err(TmuxError::Failed {
                status: "exit status: 1".into(),
                stderr: format!("can't find pane: {pane}"),
            });
        }
        for input in inputs {
            let rendered = match input {
                Input::Keys([]) => continue,
                Input::Keys(keys) => format!("keys:{}", keys.join(" ")),
                Input::Text(text) => format!("text:{text}"),
            };
            self.sent.borrow_mut().push((pane.to_owned(), rendered));
        }
        Ok(())
    }
}

/// The wire row of a `claude` agent in pane `pane` at `work:0.0` of host `studio`, in `state`;
/// every optional field empty.
pub fn row(pane: &str, state: State) -> FleetRow {
    Row {
        pane: pane.into(),
        agent: "claude".into(),
        state,
        detail: None,
        since_ms: None,
        episode_ms: 0,
        locator: "work:0.0".into(),
        view: Wire {},
        attention: false,
        done: false,
        session: "work".into(),
        transcript: None,
        permission_request: None,
        stamped_at_ms: None,
        context: None,
        context_at_ms: None,
        muted: false,
        repo: None,
        branch: None,
        worktree: None,
        pending_tool: None,
        pending_call: None,
        server: "/s".into(),
        host: "studio".into(),
    }
}

/// Pane `id` at `work:1.2` of the server at `/tmp/tmux-0/s`, with `options` stamped on it.
pub fn pane(id: &str, options: AgentOptions) -> PaneRead {
    PaneRead {
        pane_id: id.into(),
        session_name: "work".into(),
        window_index: "1".into(),
        pane_index: "2".into(),
        socket_path: "/tmp/tmux-0/s".into(),
        options,
        ..PaneRead::default()
    }
}

/// Enrols device `name` with fingerprint `id` and `scopes` in the store at `file`, through a
/// locked update; returns its record.
pub fn enrol(file: &DeviceFile, name: &str, id: &str, scopes: &[Scope]) -> DeviceRecord {
    let record = DeviceRecord {
        id: id.into(),
        name: name.into(),
        scopes: scopes.to_vec(),
        paired_at_ms: 1,
    };
    file.update(|store| {
        store.devices.push(record.clone());
        Ok::<_, StoreError>(())
    })
    .unwrap();
    record
}

/// Broken versions of a good file, for the tests that every file the host reads is an error or a
/// value, never a panic: each of `count` variants flips, drops, inserts or duplicates bytes, cuts
/// the text short, or mixes in garbage, deterministically from `seed`.
pub fn mutations(good: &[u8], seed: u64, count: usize) -> Vec<Vec<u8>> {
    let mut state = seed;
    let mut next = move || {
        state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = state;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    };
    let garbage: &[&[u8]] = &[
        b"\xff\xfe",
        b"\0",
        b"[[[[",
        b"\"",
        b"=",
        b"]]",
        b"\n\n",
        b"{",
        b"9e999",
    ];
    (0..count)
        .map(|_| {
            let mut bytes = good.to_vec();
            for _ in 0..=(next() % 3) {
                let at = if bytes.is_empty() {
                    0
                } else {
                    (next() as usize) % bytes.len()
                };
                match next() % 6 {
                    0 if !bytes.is_empty() => bytes[at] ^= 1 << (next() % 8),
                    1 if !bytes.is_empty() => {
                        bytes.remove(at);
                    }
                    2 => {
                        let insert = garbage[(next() as usize) % garbage.len()];
                        bytes.splice(at..at, insert.iter().copied());
                    }
                    3 => bytes.truncate(at),
                    4 if !bytes.is_empty() => {
                        let end = (at + 1 + (next() as usize) % 40).min(bytes.len());
                        let copy = bytes[at..end].to_vec();
                        bytes.splice(at..at, copy);
                    }
                    _ => bytes.push(b'\n'),
                }
            }
            bytes
        })
        .collect()
}

/// The tmux a notifier talks to beyond the fleet read, scripted: pane options per pane,
/// attached clients, every status-line message shown (client, text), and every invocation made
/// (its method's name), so a test counts what a fire costs. Clones share state.
#[derive(Debug, Clone, Default)]
pub struct ScriptedTmux {
    options: Rc<RefCell<std::collections::BTreeMap<(String, String), String>>>,
    panes: Rc<RefCell<Vec<String>>>,
    clients: Rc<RefCell<Vec<String>>>,
    messages: Rc<RefCell<Vec<(String, String)>>>,
    fail_writes: Rc<RefCell<bool>>,
    calls: Rc<RefCell<Vec<&'static str>>>,
    /// What a won claim prints of each pane (its tty and directory); nothing for a pane not
    /// here.
    places: Rc<RefCell<std::collections::BTreeMap<String, crate::tmux::write::PanePlace>>>,
    /// Won claims print nothing after their read-back, as when a later command of the claim's
    /// sequence failed.
    quiet_claims: Rc<RefCell<bool>>,
}

impl ScriptedTmux {
    /// A server with these panes and no client.
    pub fn with_panes(panes: &[&str]) -> ScriptedTmux {
        let tmux = ScriptedTmux::default();
        *tmux.panes.borrow_mut() = panes.iter().map(|p| (*p).to_owned()).collect();
        tmux
    }

    /// Attaches clients.
    pub fn attach(&self, clients: &[&str]) {
        *self.clients.borrow_mut() = clients.iter().map(|c| (*c).to_owned()).collect();
    }

    /// Gives `pane` a tty and a directory, which a won claim prints.
    pub fn set_place(&self, pane: &str, tty: &str, current_path: &str) {
        self.places.borrow_mut().insert(
            pane.to_owned(),
            crate::tmux::write::PanePlace {
                tty: tty.to_owned(),
                current_path: current_path.to_owned(),
            },
        );
    }

    /// Won claims print no tty and directory while `quiet` is true.
    pub fn quiet_claims(&self, quiet: bool) {
        *self.quiet_claims.borrow_mut() = quiet;
    }

    /// Option writes fail (as a lost server) while `fail` is true.
    pub fn fail_writes(&self, fail: bool) {
        *self.fail_writes.borrow_mut() = fail;
    }

    /// Pane option `name` of `pane`.
    pub fn option(&self, pane: &str, name: &str) -> Option<String> {
        self.options
            .borrow()
            .get(&(pane.to_owned(), name.to_owned()))
            .cloned()
    }

    /// Every message shown so far: (client, text).
    pub fn messages(&self) -> Vec<(String, String)> {
        self.messages.borrow().clone()
    }

    /// Every invocation so far, by the name of the method that made it; the list starts afresh.
    pub fn take_calls(&self) -> Vec<&'static str> {
        std::mem::take(&mut *self.calls.borrow_mut())
    }

    /// The clients attached now.
    pub fn clients(&self) -> Vec<String> {
        self.clients.borrow().clone()
    }

    fn check(&self, pane: &str) -> Result<(), TmuxError> {
        if *self.fail_writes.borrow() || !self.panes.borrow().iter().any(|p| p == pane) {
            return Err(TmuxError::Failed {
                status: "exit status: 1".into(),
                stderr: format!("no such pane: {pane}"),
            });
        }
        Ok(())
    }
}

impl crate::notify::NotifyTmux for ScriptedTmux {
    /// As tmux runs the claim's `if-shell`: the marker tested as it is now; held, nothing
    /// written; else written (a pane that is gone, or writes failing, fail it there) and the
    /// message shown to each client in the claim that is still attached.
    fn claim_marker(
        &self,
        claim: &crate::tmux::write::MarkerClaim<'_>,
    ) -> Result<crate::tmux::write::Claimed, TmuxError> {
        use crate::tmux::write::{Claimed, Held};
        self.calls.borrow_mut().push("claim_marker");
        let current = self.option(claim.pane, claim.option.as_str());
        let held = match claim.held {
            Held::WhileEqual => current.as_deref() == Some(claim.value),
            Held::WhileSet => current.is_some_and(|c| !c.is_empty()),
        };
        if held {
            return Ok(Claimed::Held);
        }
        self.check(claim.pane)?;
        self.options.borrow_mut().insert(
            (claim.pane.to_owned(), claim.option.as_str().to_owned()),
            claim.value.to_owned(),
        );
        if let Some(message) = claim.message {
            let attached = self.clients.borrow().clone();
            for client in claim.clients.iter().filter(|c| attached.contains(c)) {
                self.messages
                    .borrow_mut()
                    .push((client.clone(), message.to_owned()));
            }
        }
        let place = match *self.quiet_claims.borrow() {
            true => None,
            false => self.places.borrow().get(claim.pane).cloned(),
        };
        Ok(Claimed::Won {
            status: None,
            pane: place.unwrap_or_default(),
        })
    }

    fn pane_place(&self, pane: &str) -> Result<Option<crate::tmux::write::PanePlace>, TmuxError> {
        self.calls.borrow_mut().push("pane_place");
        self.check(pane)?;
        Ok(self.places.borrow().get(pane).cloned())
    }

    fn set_pane_options(
        &self,
        pane: &str,
        writes: &[crate::tmux::write::OptionWrite<'_>],
    ) -> Result<(), TmuxError> {
        use crate::tmux::write::OptionWrite;
        self.calls.borrow_mut().push("set_pane_options");
        self.check(pane)?;
        let mut options = self.options.borrow_mut();
        for write in writes {
            match write {
                OptionWrite::Set(option, value) => {
                    options.insert((pane.to_owned(), option.to_string()), (*value).to_owned());
                }
                OptionWrite::Unset(option) => {
                    options.remove(&(pane.to_owned(), option.to_string()));
                }
                OptionWrite::SetUnless(option, value, (tested, held)) => {
                    let now = options.get(&(pane.to_owned(), tested.to_string()));
                    if now.map(String::as_str) != Some(*held) {
                        options.insert((pane.to_owned(), option.to_string()), (*value).to_owned());
                    }
                }
            }
        }
        Ok(())
    }

    fn list_clients(&self) -> Result<Vec<String>, TmuxError> {
        self.calls.borrow_mut().push("list_clients");
        Ok(self.clients.borrow().clone())
    }

    fn display_message(&self, clients: &[String], message: &str) -> Result<(), TmuxError> {
        self.calls.borrow_mut().push("display_message");
        for client in clients {
            self.messages
                .borrow_mut()
                .push((client.clone(), message.to_owned()));
        }
        Ok(())
    }
}
