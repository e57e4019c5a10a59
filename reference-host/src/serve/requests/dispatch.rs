//! `dispatch`: a non-empty `host` that is not this host is `not-found`; the rest is the dispatch
//! pipeline (`crate::act::dispatch`), with the device's scopes as the device check of this line
//! read them from the store.

use schema::{Dispatch, ErrorCode, Response};

use super::{Answer, Connection, refusal};
use crate::act::dispatch::{self, Dispatcher, Order, Refusal, Surface};
use crate::fleet::FleetSource;

pub fn answer<S: FleetSource>(conn: &mut Connection<S>, request: &Dispatch) -> Answer {
    let host = conn.fleet.host();
    if !request.host.is_empty() && request.host != host {
        let message = format!("this host is {host}, not {}", request.host);
        return Err(refusal(ErrorCode::NotFound, message));
    }
    let surface = Surface::Device {
        id: conn.config.device.clone(),
        scopes: conn.scopes(),
    };
    let order = Order {
        slot: &request.slot,
        pane: &request.pane,
        action: &request.action,
        binder: &request.binder,
        text: request.text.as_deref(),
        answers: request.answers.as_deref(),
        surface,
    };
    conn.ledger();
    let Connection {
        fleet,
        services,
        ledger,
        ..
    } = conn;
    let mut dispatcher = Dispatcher {
        manifests: &services.manifests,
        runtime: &services.runtime,
        ledger: ledger.as_mut().expect("opened above"),
        act_log: services.act_log.clone(),
        exec: None,
    };
    match dispatch::dispatch(fleet, &mut dispatcher, &order) {
        Ok(receipt) => Ok(Response::Receipt(receipt)),
        Err(Refusal::BadRequest(message)) => Err(refusal(ErrorCode::BadRequest, message)),
        Err(Refusal::Internal(message)) => Err(refusal(ErrorCode::Internal, message)),
    }
}
