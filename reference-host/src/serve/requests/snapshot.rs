//! `snapshot`: the fleet now, narrowed by the request's selector.

use schema::{Response, Snapshot, SnapshotRequest};

use super::{Answer, Connection};
use crate::fleet::FleetSource;
use crate::selector::admits;

pub fn answer<S: FleetSource>(conn: &mut Connection<S>, request: &SnapshotRequest) -> Answer {
    let agents = conn
        .read_fleet()?
        .into_iter()
        .filter(|row| admits(request.selector.as_ref(), row))
        .collect();
    Ok(Response::Snapshot(Snapshot { agents }))
}
