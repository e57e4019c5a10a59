//! `card`: the pane read first (the only part that can fail: `not-found`), then the card
//! gathered from it (`crate::card`), best effort and bounded in time.

use schema::{CardRequest, Response};

use super::{Answer, Connection};
use crate::card::{Sources, gather};
use crate::fleet::FleetSource;

pub fn answer<S: FleetSource>(conn: &mut Connection<S>, request: &CardRequest) -> Answer {
    let pane = conn.agent_pane(&request.pane)?;
    // A reader that cannot be made only costs the card its transcript tail.
    let has_reader = conn.reader().is_ok();
    let Connection {
        services, reader, ..
    } = conn;
    let mut sources = Sources {
        manifests: &services.manifests,
        runtime: &services.runtime,
        stores: &services.stores,
        reader: if has_reader { reader.as_mut() } else { None },
    };
    Ok(Response::Card(gather(&pane, &mut sources)))
}
