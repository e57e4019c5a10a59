//! Firing an action that passed the gates, on its lane (the same choice a card shows, first
//! match): `api` when the action is an API call and the pane has a loopback endpoint; `hook` for
//! an approve, a deny, or a question's reply or dismissal when the pane names a parked request
//! of its own (the verdict file is created exclusively; a reply's answers travel in it); else the
//! screen: the manifest's keys, or the caller's text typed literally between the manifest's keys,
//! with `send-keys` to that pane only. A `hook` action with no parked request has nothing to fire
//! (`request-gone`). A local `exec` action asked for at the host runs detached (`exec.rs`).

use std::time::Duration;

use schema::hook::{Decision, Verdict};
use schema::manifest::ActionSpec;
use schema::{Action, Outcome, Reason};
use serde_json::Value;

use super::exec::Exec;
use super::{Order, Surface};
use crate::fleet::{FleetSource, Pane};
use crate::http::{self, HttpError};
use crate::runtime::RuntimeDir;
use crate::tmux::TmuxError;
use crate::tmux::write::Input;

/// How long the api lane waits for the agent's API.
pub const API_TIMEOUT: Duration = Duration::from_secs(2);

/// How an action reaches the agent.
#[derive(Debug, Clone, PartialEq)]
pub enum Lane {
    /// A call to the agent's HTTP API.
    Api {
        endpoint: String,
        method: String,
        path: String,
        body: Option<Value>,
    },
    /// A verdict for a parked request.
    Hook { request: String, verdict: Verdict },
    /// Keys to the pane.
    Keys(Vec<String>),
    /// Text to the pane, between keys.
    Text {
        before: Vec<String>,
        text: String,
        submit: Vec<String>,
    },
    /// A local command, run detached (`corral act` only).
    Exec { command: String, timeout_s: u64 },
}

/// The lane `spec` fires on for this pane; a refusal reason when it cannot fire here.
pub fn lane(
    pane: &Pane,
    spec: &ActionSpec,
    runtime: &RuntimeDir,
    order: &Order<'_>,
) -> Result<Lane, Reason> {
    let endpoint = pane.facts.api_endpoint.as_deref().and_then(http::loopback);
    if let (ActionSpec::Api(api), Some(endpoint)) = (spec, endpoint) {
        return Ok(Lane::Api {
            endpoint: endpoint.to_owned(),
            method: api.method.clone(),
            path: api_path(&api.path, pane)?,
            body: api
                .body
                .as_ref()
                .map(|body| api_body(body, order))
                .transpose()?,
        });
    }
    if let Some(verdict) = hook_verdict(pane, runtime, order)? {
        let request = verdict.request.clone();
        return Ok(Lane::Hook { request, verdict });
    }
    match spec {
        ActionSpec::Keys(keys) => Ok(Lane::Keys(keys.keys.clone())),
        ActionSpec::Text(text) => Ok(Lane::Text {
            before: text.before.clone(),
            text: order.text.unwrap_or_default().to_owned(),
            submit: text.submit.clone(),
        }),
        // A local command, for the person at the host only (the scope gate refuses it to a
        // device; this is a second lock on that door).
        ActionSpec::Exec(exec) if order.surface == Surface::Cli => Ok(Lane::Exec {
            command: exec.command.clone(),
            timeout_s: exec.timeout_s.unwrap_or(super::exec::DEFAULT_TIMEOUT_S),
        }),
        // An API action on a pane with no endpoint to call: nothing here can fire it.
        ActionSpec::Api(_) | ActionSpec::Exec(_) => Err(Reason::NoCoverage),
        // The parked request it answers is gone (its hook gave up waiting).
        ActionSpec::Hook(_) => Err(Reason::RequestGone),
    }
}

/// The verdict an approve, a deny, or a question's reply or dismissal gives the pane's own parked
/// request, when there is one. A reply must answer every question the request asks, each with at
/// least one label (or typed text), else it is refused `requires-unmet`: the agent would run its
/// tool with a question unanswered.
fn hook_verdict(
    pane: &Pane,
    runtime: &RuntimeDir,
    order: &Order<'_>,
) -> Result<Option<Verdict>, Reason> {
    let (decision, answers) = match order.action {
        Action::Approve => (Decision::Allow, None),
        Action::Deny | Action::DenyWithMessage | Action::QuestionReject => (Decision::Deny, None),
        Action::QuestionReply => (Decision::Allow, order.answers),
        _ => return Ok(None),
    };
    let Some(id) = pane.row.permission_request.as_deref() else {
        return Ok(None);
    };
    let Some(parked) = runtime.parked_request(id, &pane.row.pane) else {
        return Ok(None);
    };
    if let Some(answers) = answers {
        let asked = parked
            .tool_input
            .get("questions")
            .and_then(Value::as_array)
            .map_or(0, Vec::len);
        let answered = answers.len() == asked
            && answers
                .iter()
                .all(|chosen| !chosen.is_empty() && chosen.iter().all(|a| !a.trim().is_empty()));
        if !answered {
            return Err(Reason::RequiresUnmet);
        }
    }
    Ok(Some(Verdict {
        decision,
        request: id.to_owned(),
        message: order.text.map(str::to_owned),
        answers: answers.map(<[Vec<String>]>::to_vec),
    }))
}

/// The API path with the pane's ids in place; `requires-unmet` when the pane lacks one.
fn api_path(template: &str, pane: &Pane) -> Result<String, Reason> {
    let mut path = template.to_owned();
    for (name, value) in [
        ("{permission}", pane.row.permission_request.as_deref()),
        ("{question}", pane.facts.question_request.as_deref()),
        ("{session}", pane.facts.agent_session.as_deref()),
    ] {
        if path.contains(name) {
            let value = value.ok_or(Reason::RequiresUnmet)?;
            path = path.replace(name, &percent_encode(value));
        }
    }
    Ok(path)
}

/// A path segment with everything but unreserved characters percent-encoded.
fn percent_encode(segment: &str) -> String {
    let mut out = String::new();
    for byte in segment.bytes() {
        if byte.is_ascii_alphanumeric() || b"-._~".contains(&byte) {
            out.push(char::from(byte));
        } else {
            out.push_str(&format!("%{byte:02X}"));
        }
    }
    out
}

/// The API body with `"{answers}"` and `"{text}"` replaced by the dispatch's payload.
fn api_body(
    template: &std::collections::BTreeMap<String, Value>,
    order: &Order<'_>,
) -> Result<Value, Reason> {
    let mut body = serde_json::Map::new();
    for (key, value) in template {
        let value = match value.as_str() {
            Some("{answers}") => serde_json::to_value(order.answers.ok_or(Reason::RequiresUnmet)?)
                .map_err(|_| Reason::RequiresUnmet)?,
            Some("{text}") => Value::String(order.text.ok_or(Reason::RequiresUnmet)?.to_owned()),
            _ => value.clone(),
        };
        body.insert(key.clone(), value);
    }
    Ok(Value::Object(body))
}

/// Fires `lane`: the outcome and reason of the receipt. The exec lane needs `exec` (how this
/// process starts a detached action); without it an exec action is `no-coverage`.
pub fn fire<S: FleetSource>(
    fleet: &mut S,
    runtime: &RuntimeDir,
    exec: Option<&Exec>,
    pane: &Pane,
    action: &Action,
    lane: &Lane,
) -> (Outcome, Option<Reason>) {
    match lane {
        Lane::Exec { command, timeout_s } => match exec {
            None => (Outcome::Refused, Some(Reason::NoCoverage)),
            Some(exec) => match exec.spawn(pane, action, command, *timeout_s) {
                Ok(()) => (Outcome::Spawned, None),
                Err(err) => {
                    tracing::error!(%err, "a detached action did not start");
                    (Outcome::Error, Some(Reason::FiredUnknown))
                }
            },
        },
        Lane::Hook { request, verdict } => {
            let Some(path) = runtime.verdict_file(request) else {
                return (Outcome::Vanished, Some(Reason::RequestGone));
            };
            let bytes = serde_json::to_vec(verdict).expect("a verdict always encodes");
            match crate::files::create_exclusive(&path, &bytes) {
                Ok(()) => (Outcome::Replied, None),
                // Another dispatch answered the request first.
                Err(err) if err.kind() == std::io::ErrorKind::AlreadyExists => {
                    (Outcome::Vanished, Some(Reason::RequestGone))
                }
                Err(err) => {
                    tracing::error!(path = %path.display(), %err, "writing a verdict failed");
                    (Outcome::Error, Some(Reason::FiredUnknown))
                }
            }
        }
        Lane::Api {
            endpoint,
            method,
            path,
            body,
        } => match http::send_json(endpoint, method, path, body.as_ref(), API_TIMEOUT) {
            Ok(status) if (200..300).contains(&status) => (Outcome::Replied, None),
            Ok(404) => (Outcome::Vanished, Some(Reason::RequestGone)),
            Ok(status) => {
                tracing::warn!(status, %path, "the agent's API refused the dispatch");
                (Outcome::Error, Some(Reason::FiredUnknown))
            }
            Err(HttpError::Timeout) => (Outcome::Timeout, None),
            Err(err) => {
                tracing::warn!(%err, "the agent's API call failed");
                (Outcome::Error, Some(Reason::FiredUnknown))
            }
        },
        Lane::Keys(keys) => sent(fleet.send(&pane.row.pane, &[Input::Keys(keys)])),
        Lane::Text {
            before,
            text,
            submit,
        } => sent(fleet.send(
            &pane.row.pane,
            &[Input::Keys(before), Input::Text(text), Input::Keys(submit)],
        )),
    }
}

/// The outcome of a `send-keys`: a pane tmux no longer has is gone; any other failure leaves
/// what reached the pane unknown.
fn sent(result: Result<(), TmuxError>) -> (Outcome, Option<Reason>) {
    match result {
        Ok(()) => (Outcome::Sent, None),
        Err(TmuxError::Failed { stderr, .. }) if stderr.contains("can't find pane") => {
            (Outcome::Vanished, Some(Reason::PaneGone))
        }
        Err(err) => {
            tracing::error!(%err, "sending keys failed");
            (Outcome::Error, Some(Reason::FiredUnknown))
        }
    }
}
