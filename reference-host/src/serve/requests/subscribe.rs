//! `subscribe`: starts the connection's one stream and answers `ack`; the stream's first cycle
//! runs at once, and `stream.rs` decides what each cycle publishes. A second subscribe is refused.

use std::time::Instant;

use schema::{ErrorCode, Response, Subscribe};

use super::{Answer, Connection, refusal};
use crate::clock::now_ms;
use crate::serve::stream::Stream;

pub fn answer<S>(conn: &mut Connection<S>, id: &str, request: Subscribe) -> Answer {
    if conn.stream.is_some() {
        return Err(refusal(
            ErrorCode::BadRequest,
            "this connection is already subscribed",
        ));
    }
    conn.stream = Some(Stream::new(
        id.to_owned(),
        request,
        Instant::now(),
        now_ms(),
    ));
    Ok(Response::Ack)
}
