//! The requests this host does not serve yet. `card`, `window`, `event` and `dispatch` answer
//! `not-found` for a pane this host does not have (and `dispatch` for another host), so a client
//! can rely on that part of the contract now; past that, they and `receipts` answer `internal`.
//! Each moves to a file of its own when it is built.

use schema::{Dispatch, ErrorCode};

use super::{Answer, Connection, refusal};
use crate::fleet::FleetSource;

/// A request about `pane`: `not-found` without such an agent pane, else not implemented.
pub fn about_pane<S: FleetSource>(conn: &mut Connection<S>, pane: &str, what: &str) -> Answer {
    conn.agent_pane(pane)?;
    Err(refusal(
        ErrorCode::Internal,
        format!("{what} is not implemented by this host yet"),
    ))
}

/// `dispatch`: a non-empty `host` that is not this host is `not-found`, before the pane.
pub fn dispatch<S: FleetSource>(conn: &mut Connection<S>, request: &Dispatch) -> Answer {
    let host = conn.fleet.host();
    if !request.host.is_empty() && request.host != host {
        let message = format!("this host is {host}, not {}", request.host);
        return Err(refusal(ErrorCode::NotFound, message));
    }
    about_pane(conn, &request.pane, "dispatch")
}

/// `receipts`: the ledger is not built yet.
pub fn receipts() -> Answer {
    Err(refusal(
        ErrorCode::Internal,
        "receipts are not implemented by this host yet",
    ))
}
