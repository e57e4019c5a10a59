//! Card gathering: what a blocked pane is asking, from a pane read that already succeeded. The
//! read is the caller's (the same read a dispatch's binder gate uses) and is the only thing that
//! can fail a card; everything here is best effort and bounded in time:
//!
//! - the parked hook request `@agent_permission_request` names (hook lane, `exact`, exactly
//!   `allow-once` "Yes" and `reject-once` "No" with `option_id` = the request id, the agent's own
//!   tool input as the pending call); a named request that is gone gives lane `screen`, `failed`;
//! - approve and deny labels from the loaded action manifests (no options for an agent no
//!   manifest covers; never an `option_id` on a screen or api option);
//! - for a pane blocked on a question: the question its hook parked (`@agent_permission_request`
//!   naming a parked `AskUserQuestion` request, Claude Code's questions: the request id is the
//!   card's, the binder quotes it, and a reply's answers travel in the verdict), else the pending
//!   question of the agent's API (`GET {@agent_api_endpoint}/question`, only when the pane carries
//!   `@agent_question_request`, at most [`QUESTION_TIMEOUT`]); a time-out, an error or no match
//!   gives an informational card;
//! - the transcript tail ([`TAIL_HEADERS`] events off the end of the pane's own file), read only
//!   to fill the pending call the stamps did not.
//!
//! Lanes are chosen first match: `api` when the agent's manifest gives `approve` an API transport
//! and the pane has an endpoint, `hook` when the pane names a parked request, else `screen`.

use std::time::Duration;

use schema::manifest::ActionSpec;
use schema::{
    Action, Binder, Card, CardOption, Detail, Extraction, InformationalCard, Lane, OptionKind,
    PendingCall, PermissionCard, Question, QuestionCard, State,
};
use serde_json::Value;

use crate::act::manifest::Manifests;
use crate::fleet::Pane;
use crate::runtime::RuntimeDir;
use crate::transcript::locate::{self, PaneStore, StoreRoots};
use crate::transcript::{Reader, Source, Wanted};

/// The bound on fetching a pending question.
pub const QUESTION_TIMEOUT: Duration = Duration::from_millis(750);

/// How many events off the end of a transcript a card reads for the pending call.
pub const TAIL_HEADERS: usize = 20;

/// What card gathering reads besides the pane.
#[derive(Debug)]
pub struct Sources<'a> {
    /// The loaded action manifests.
    pub manifests: &'a Manifests,
    /// The runtime dir (parked requests).
    pub runtime: &'a RuntimeDir,
    /// Where the agents keep their transcripts.
    pub stores: &'a StoreRoots,
    /// The connection's transcript reader.
    pub reader: Option<&'a mut Reader>,
}

/// The card for `pane`.
pub fn gather(pane: &Pane, sources: &mut Sources<'_>) -> Card {
    let row = &pane.row;
    if row.state != State::Blocked {
        return Card::None;
    }
    match &row.detail {
        Some(Detail::Permission) => Card::Permission(permission(pane, sources)),
        Some(Detail::Question) => match parked_question(pane, sources).or_else(|| question(pane)) {
            Some(card) => Card::Question(card),
            None => informational(Detail::Question),
        },
        Some(other) => informational(other.clone()),
        // Blocked with no detail stamped: nothing says what to answer.
        None => informational(Detail::parse("unknown").expect("a non-empty token")),
    }
}

fn informational(detail: Detail) -> Card {
    let headline = detail.headline().to_owned();
    Card::Informational(InformationalCard { detail, headline })
}

fn binder(pane: &Pane) -> Binder {
    Binder {
        expect_episode_ms: pane.row.episode_ms,
        expect_permission_request: pane.row.permission_request.clone(),
    }
}

fn permission(pane: &Pane, sources: &mut Sources<'_>) -> PermissionCard {
    let row = &pane.row;
    let approve = sources.manifests.action(&row.agent, &Action::Approve);
    let api = matches!(approve.map(|a| &a.spec), Some(ActionSpec::Api(_)))
        && api_endpoint(pane).is_some();
    let (lane, options, extraction, parked) = if api {
        (
            Lane::Api,
            manifest_options(pane, sources.manifests),
            Extraction::Failed,
            None,
        )
    } else if let Some(id) = &row.permission_request {
        match sources.runtime.parked_request(id, &row.pane) {
            Some(request) => {
                let options = vec![
                    hook_option(OptionKind::AllowOnce, "Yes", id),
                    hook_option(OptionKind::RejectOnce, "No", id),
                ];
                (Lane::Hook, options, Extraction::Exact, Some(request))
            }
            // An expired hold left nothing on disk: answer on the screen, open the pane.
            None => (
                Lane::Screen,
                manifest_options(pane, sources.manifests),
                Extraction::Failed,
                None,
            ),
        }
    } else {
        (
            Lane::Screen,
            manifest_options(pane, sources.manifests),
            Extraction::Failed,
            None,
        )
    };
    let pending_call = match parked {
        Some(request) => Some(PendingCall {
            tool: request.tool_name,
            input: Some(request.tool_input),
            call_id: row.pending_call.clone(),
        }),
        None => pending_call(pane, sources),
    };
    PermissionCard {
        pane: row.pane.clone(),
        agent: row.agent.clone(),
        lane,
        options,
        extraction,
        pending_call,
        binder: binder(pane),
    }
}

/// The pane's agent API endpoint, when it is one the host may call (loopback).
fn api_endpoint(pane: &Pane) -> Option<&str> {
    pane.facts
        .api_endpoint
        .as_deref()
        .and_then(crate::http::loopback)
}

fn hook_option(kind: OptionKind, name: &str, id: &str) -> CardOption {
    CardOption {
        kind,
        name: name.to_owned(),
        option_id: Some(id.to_owned()),
    }
}

/// The approve and deny the host would fire, labelled by the agent's manifest; none for an agent
/// no manifest covers.
fn manifest_options(pane: &Pane, manifests: &Manifests) -> Vec<CardOption> {
    [
        (Action::Approve, OptionKind::AllowOnce),
        (Action::Deny, OptionKind::RejectOnce),
    ]
    .into_iter()
    .filter_map(|(action, kind)| {
        let loaded = manifests.action(&pane.row.agent, &action)?;
        // Only what a dispatch of this pane could fire: never a local command, and an API call
        // only where the pane names a loopback endpoint (elsewhere it is refused `no-coverage`).
        let fireable = match loaded.spec {
            ActionSpec::Exec(_) => false,
            ActionSpec::Api(_) => api_endpoint(pane).is_some(),
            ActionSpec::Keys(_) | ActionSpec::Text(_) => true,
            // Only a parked request answers it: the hook lane's own options cover that.
            ActionSpec::Hook(_) => false,
        };
        if !fireable {
            return None;
        }
        Some(CardOption {
            kind,
            name: loaded.spec.label().to_owned(),
            option_id: None,
        })
    })
    .collect()
}

/// The call the pane is blocked on: its stamps (`@agent_pending_tool`/`_call`), with the input
/// and whatever the stamps left out filled from the transcript tail, from a call that matches
/// every stamp there is.
fn pending_call(pane: &Pane, sources: &mut Sources<'_>) -> Option<PendingCall> {
    let row = &pane.row;
    let wanted = Wanted {
        call_id: row.pending_call.as_deref(),
        tool: row.pending_tool.as_deref(),
    };
    let found = transcript_call(pane, sources, wanted);
    match &row.pending_tool {
        Some(tool) => Some(PendingCall {
            tool: tool.clone(),
            call_id: row
                .pending_call
                .clone()
                .or_else(|| found.as_ref().and_then(|c| c.call_id.clone())),
            input: found.and_then(|c| c.input),
        }),
        None => found,
    }
}

fn transcript_call(
    pane: &Pane,
    sources: &mut Sources<'_>,
    wanted: Wanted<'_>,
) -> Option<PendingCall> {
    let reader = sources.reader.as_deref_mut()?;
    let row = &pane.row;
    let store = PaneStore {
        agent: &row.agent,
        transcript: row.transcript.as_deref(),
        session: pane.facts.agent_session.as_deref(),
        cwd: Some(&pane.facts.cwd),
    };
    let path = locate::locate(&store, sources.stores).ok()?;
    let source = Source {
        pane: &row.pane,
        agent: &row.agent,
        path: &path,
    };
    match reader.pending_call(&source, wanted, TAIL_HEADERS) {
        Ok(call) => call,
        Err(err) => {
            tracing::debug!(%err, pane = %row.pane, "no pending call from the transcript");
            None
        }
    }
}

/// The question the pane's hook parked: Claude Code asks through its `PermissionRequest` hook
/// for the `AskUserQuestion` tool, whose input holds the questions as `{question, header,
/// options: [{label, description}], multiSelect}` (code.claude.com/docs/en/hooks); its "Other"
/// choice takes typed text, so every question accepts one (`custom`).
fn parked_question(pane: &Pane, sources: &Sources<'_>) -> Option<QuestionCard> {
    let id = pane.row.permission_request.as_deref()?;
    let request = sources.runtime.parked_request(id, &pane.row.pane)?;
    if request.tool_name != crate::hook::payload::ASK_USER_QUESTION {
        return None;
    }
    let questions: Vec<Question> = request
        .tool_input
        .get("questions")?
        .as_array()?
        .iter()
        .map(|value| {
            let mut question = question_of(value)?;
            question.multiple = value
                .get("multiSelect")
                .and_then(Value::as_bool)
                .unwrap_or(false);
            question.custom = true;
            Some(question)
        })
        .collect::<Option<_>>()?;
    Some(QuestionCard {
        pane: pane.row.pane.clone(),
        agent: pane.row.agent.clone(),
        request_id: id.to_owned(),
        questions,
        binder: binder(pane),
    })
}

/// The pane's pending question, fetched from the agent's API; `None` on any failure.
fn question(pane: &Pane) -> Option<QuestionCard> {
    let id = pane.facts.question_request.as_deref()?;
    let endpoint = pane.facts.api_endpoint.as_deref()?;
    let pending = match crate::http::get_json(endpoint, "/question", QUESTION_TIMEOUT) {
        Ok(pending) => pending,
        Err(err) => {
            tracing::info!(%err, pane = %pane.row.pane, "no question card");
            return None;
        }
    };
    let entry = pending.as_array()?.iter().find(|entry| {
        ["request_id", "id"]
            .iter()
            .any(|key| entry.get(key).and_then(Value::as_str) == Some(id))
    })?;
    let questions: Vec<Question> = entry
        .get("questions")?
        .as_array()?
        .iter()
        .map(question_of)
        .collect::<Option<_>>()?;
    Some(QuestionCard {
        pane: pane.row.pane.clone(),
        agent: pane.row.agent.clone(),
        request_id: id.to_owned(),
        questions,
        binder: Binder {
            expect_episode_ms: pane.row.episode_ms,
            expect_permission_request: None,
        },
    })
}

/// One question as the agent's API gives it; missing flags are false, missing texts empty.
fn question_of(value: &Value) -> Option<Question> {
    let text = |key: &str| {
        value
            .get(key)
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_owned()
    };
    let flag = |key: &str| value.get(key).and_then(Value::as_bool).unwrap_or(false);
    let options = value
        .get("options")
        .and_then(Value::as_array)
        .map(|options| {
            options
                .iter()
                .map(|o| schema::QuestionOption {
                    label: o
                        .get("label")
                        .and_then(Value::as_str)
                        .unwrap_or("")
                        .to_owned(),
                    description: o
                        .get("description")
                        .and_then(Value::as_str)
                        .unwrap_or("")
                        .to_owned(),
                })
                .collect()
        })
        .unwrap_or_default();
    let question = text("question");
    if question.is_empty() {
        return None;
    }
    Some(Question {
        question,
        header: text("header"),
        options,
        multiple: flag("multiple"),
        custom: flag("custom"),
    })
}

#[cfg(test)]
mod tests;
