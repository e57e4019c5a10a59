//! The request handlers, one file per request kind, behind the one `match` in [`answer`]. A
//! handler gets the connection's state and the request's body and returns exactly one answer:
//! the response frame, or a typed refusal sent as an error frame. What every request goes
//! through first (decoding, the device check, hello before anything else) is `session.rs`'s job.
//!
//! Adding a request kind is a file here and an arm in [`answer`].

mod hello;
mod snapshot;
mod subscribe;
mod unbuilt;

use schema::{ErrorCode, ErrorFrame, FleetRow, Request, Response};

use crate::devices::StoreWatch;
use crate::fleet::FleetSource;
use crate::serve::stream::Stream;

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
}

/// A handler's answer: the frame to send, or a refusal.
type Answer = Result<Response, ErrorFrame>;

/// The one response to the request `request` with id `id`.
pub fn answer<S: FleetSource>(conn: &mut Connection<S>, id: &str, request: Request) -> Response {
    let answer = match request {
        Request::Hello(hello) => hello::answer(conn, &hello),
        Request::Snapshot(request) => snapshot::answer(conn, &request),
        Request::Subscribe(request) => subscribe::answer(conn, id, request),
        Request::Card(request) => unbuilt::about_pane(conn, &request.pane, "card"),
        Request::Window(request) => unbuilt::about_pane(conn, &request.pane, "window"),
        Request::Event(request) => unbuilt::about_pane(conn, &request.pane, "event"),
        Request::Dispatch(request) => unbuilt::dispatch(conn, &request),
        Request::Receipts(_) => unbuilt::receipts(),
    };
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
            tracing::error!(%err, "reading the fleet failed");
            refusal(
                ErrorCode::Internal,
                "the host could not read its tmux server",
            )
        })
    }

    /// The row of agent pane `pane`, read now; `not-found` when this host has no such pane.
    fn agent_pane(&mut self, pane: &str) -> Result<FleetRow, ErrorFrame> {
        self.read_fleet()?
            .into_iter()
            .find(|row| row.pane == pane)
            .ok_or_else(|| {
                refusal(
                    ErrorCode::NotFound,
                    format!("no agent pane {pane} on this host"),
                )
            })
    }
}
