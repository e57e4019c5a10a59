//! `receipts`: the ledger, read from its file (any serve process, any device with `read`):
//! resolved entries only, filtered by slot and claim time, sorted by `at_ms`, each `cached`.

use schema::{ErrorCode, Receipts, ReceiptsRequest, Response};

use super::{Answer, Connection, refusal};
use crate::fleet::FleetSource;

pub fn answer<S: FleetSource>(conn: &mut Connection<S>, request: &ReceiptsRequest) -> Answer {
    let found = conn
        .ledger()
        .receipts(request.slot.as_deref(), request.since_ms)
        .map_err(|err| {
            tracing::error!(%err, "the ledger cannot answer");
            refusal(
                ErrorCode::Internal,
                "the host's dispatch ledger cannot be read; see its log",
            )
        })?;
    let receipts = found
        .into_iter()
        .map(|mut receipt| {
            receipt.cached = true;
            receipt
        })
        .collect();
    Ok(Response::Receipts(Receipts { receipts }))
}
