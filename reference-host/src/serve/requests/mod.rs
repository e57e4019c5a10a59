//! The request handlers, one file per request kind, behind the one `match` in [`answer`]. A
//! handler gets the connection's state and the request's body and returns exactly one answer:
//! the response frame, or a typed refusal sent as an error frame. What every request goes
//! through first (decoding, the device check, hello before anything else) is `session.rs`'s job.
//!
//! Adding a request kind is a file here and an arm in [`answer`].

mod card;
mod dispatch;
mod hello;
mod receipts;
mod snapshot;
mod subscribe;
mod transcript;

use std::path::PathBuf;

use schema::{ErrorCode, ErrorFrame, FleetRow, Request, Response, Scope};

use crate::act::ledger::Ledger;
use crate::act::manifest::Manifests;
use crate::devices::StoreWatch;
use crate::fleet::{FleetSource, Pane};
use crate::runtime::RuntimeDir;
use crate::serve::stream::Stream;
use crate::transcript::Reader;
use crate::transcript::cursor::Keyring;
use crate::transcript::locate::StoreRoots;

/// What the host lends every connection: its files and its loaded configuration.
#[derive(Debug, Clone)]
pub struct Services {
    /// The runtime dir (ledger, pane locks, parked requests, the cursor secret).
    pub runtime: RuntimeDir,
    /// The loaded action manifests.
    pub manifests: Manifests,
    /// Where the agents keep their transcripts.
    pub stores: StoreRoots,
    /// `[act] log`, expanded; `None` when not configured.
    pub act_log: Option<PathBuf>,
}

/// The fixed facts of a session.
#[derive(Debug, Clone)]
pub struct SessionConfig {
    /// The device fingerprint the spawner passed; the only identity trusted.
    pub device: String,
    /// The cycle cadence.
    pub interval: std::time::Duration,
}

/// What a connection's requests read and change.
#[derive(Debug)]
pub struct Connection<S> {
    /// The session's fixed facts.
    pub config: SessionConfig,
    /// The device store, as the device check of the current line last saw it.
    pub store: StoreWatch,
    /// The fleet.
    pub fleet: S,
    /// The running subscription, if any.
    pub stream: Option<Stream>,
    /// The host's files and loaded configuration.
    pub services: Services,
    /// The connection's one transcript reader, made at the first request that needs it.
    reader: Option<Reader>,
    /// The ledger as this process reads it, opened at the first dispatch or lookup.
    ledger: Option<Ledger>,
}

impl<S> Connection<S> {
    /// A connection with no stream, reader or ledger yet.
    pub fn new(config: SessionConfig, store: StoreWatch, fleet: S, services: Services) -> Self {
        Connection {
            config,
            store,
            fleet,
            stream: None,
            services,
            reader: None,
            ledger: None,
        }
    }
}

/// A handler's answer: the frame to send, or a refusal.
type Answer = Result<Response, ErrorFrame>;

/// The one response to the request `request` with id `id`.
pub fn answer<S: FleetSource>(conn: &mut Connection<S>, id: &str, request: Request) -> Response {
    let answer = conn.read_scope(&request).and_then(|()| match request {
        Request::Hello(hello) => hello::answer(conn, &hello),
        Request::Snapshot(request) => snapshot::answer(conn, &request),
        Request::Subscribe(request) => subscribe::answer(conn, id, request),
        Request::Card(request) => card::answer(conn, &request),
        Request::Window(request) => transcript::window(conn, id, &request),
        Request::Event(request) => transcript::event(conn, &request),
        Request::Dispatch(request) => dispatch::answer(conn, &request),
        Request::Receipts(request) => receipts::answer(conn, &request),
    });
    answer.unwrap_or_else(Response::Error)
}

/// A typed refusal.
fn refusal(code: ErrorCode, message: impl Into<String>) -> ErrorFrame {
    ErrorFrame {
        code,
        message: message.into(),
    }
}

impl<S: FleetSource> Connection<S> {
    /// The fleet now; a failed read is refused `internal`.
    fn read_fleet(&mut self) -> Result<Vec<FleetRow>, ErrorFrame> {
        self.fleet.read().map_err(|err| {
            tracing::debug!(%err, "reading the fleet failed");
            refusal(
                ErrorCode::Internal,
                "the host could not read its tmux server",
            )
        })
    }

    /// Agent pane `pane`, read now (the one pane read a card, a window or an event starts from);
    /// `not-found` when this host has no such pane.
    fn agent_pane(&mut self, pane: &str) -> Result<Pane, ErrorFrame> {
        let found = self.fleet.pane(pane).map_err(|err| {
            tracing::debug!(%err, "reading the fleet failed");
            refusal(
                ErrorCode::Internal,
                "the host could not read its tmux server",
            )
        })?;
        found.ok_or_else(|| {
            refusal(
                ErrorCode::NotFound,
                format!("no agent pane {pane} on this host"),
            )
        })
    }

    /// The device's scopes, as the device check of this line read them from the store.
    fn scopes(&self) -> Vec<Scope> {
        self.store
            .last()
            .and_then(|store| store.by_id(&self.config.device))
            .map(|device| device.scopes.clone())
            .unwrap_or_default()
    }

    /// Reading frames need `read`; a device whose record lacks it is refused `scope-denied`
    /// (the connection lives; a revoked device was already refused by the device check).
    fn read_scope(&self, request: &Request) -> Result<(), ErrorFrame> {
        if needs_read(request) && !self.scopes().contains(&Scope::Read) {
            return Err(refusal(
                ErrorCode::ScopeDenied,
                format!("device {} does not hold the read scope", self.config.device),
            ));
        }
        Ok(())
    }

    /// The connection's transcript reader, made now if this is the first request needing it.
    fn reader(&mut self) -> Result<&mut Reader, ErrorFrame> {
        if self.reader.is_none() {
            let keys = Keyring::load_or_create(self.services.runtime.path()).map_err(|err| {
                tracing::error!(%err, "the transcript cursor secret cannot be read or made");
                refusal(
                    ErrorCode::Internal,
                    "the host cannot mint cursors; see its log",
                )
            })?;
            self.reader = Some(Reader::new(keys));
        }
        Ok(self.reader.as_mut().expect("just made"))
    }

    /// The ledger, opened now if this is the first request needing it.
    fn ledger(&mut self) -> &mut Ledger {
        let runtime = self.services.runtime.path().to_owned();
        self.ledger.get_or_insert_with(|| Ledger::new(&runtime))
    }
}

/// Whether a request reads the fleet or the host's files, and so needs the `read` scope
/// (docs/protocol.md "Read access"). Exhaustive, so a new request kind is a compile error here
/// until someone says whether it reads.
fn needs_read(request: &Request) -> bool {
    match request {
        Request::Snapshot(_)
        | Request::Subscribe(_)
        | Request::Card(_)
        | Request::Window(_)
        | Request::Event(_)
        | Request::Receipts(_) => true,
        // `hello` needs no scope; `dispatch` needs its action's (the scope gate).
        Request::Hello(_) | Request::Dispatch(_) => false,
    }
}
