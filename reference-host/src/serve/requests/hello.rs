//! `hello`: who this host is and what this device may do. The scopes are the device store's,
//! never the device's own claim; a claim that differs from `--device` is logged as a warning (a
//! misconfigured forced command, or a client pretending). Once per connection: `session.rs`
//! refuses anything before it and a second one, so the warning comes once too.

use schema::{Hello, HelloReply, Response};

use super::{Answer, Connection};
use crate::fleet::FleetSource;

pub fn answer<S: FleetSource>(conn: &Connection<S>, hello: &Hello) -> Answer {
    let device = &conn.config.device;
    tracing::info!(app = %hello.app, app_version = %hello.app_version, claimed = %hello.device, %device, "hello");
    if hello.device != *device {
        tracing::warn!(claimed = %hello.device, %device, "the hello claims another device; the connection stays --device's");
    }
    // The line's device check just refreshed the store; its memo is current.
    let scopes = conn
        .store
        .last()
        .and_then(|store| store.by_id(device))
        .map(|d| d.scopes.clone())
        .unwrap_or_default();
    Ok(Response::Hello(HelloReply {
        host: conn.fleet.host().to_owned(),
        tool_version: env!("CARGO_PKG_VERSION").to_owned(),
        reconcile_interval_ms: u64::try_from(conn.config.interval.as_millis()).unwrap_or(u64::MAX),
        scopes,
    }))
}
