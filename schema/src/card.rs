//! `← card`: what a blocked pane is asking, typed so a wrong affordance cannot be expressed.
//!
//! The inner tag `card` sits beside `t`: `{"schema":1,"id":"4","t":"card","card":"none"}`. Only
//! a permission or question card carries options and a binder; an informational card has no field
//! an approve control could be put in, and both its schema and its decoder refuse one.

use std::borrow::Cow;

use schemars::{JsonSchema, Schema, SchemaGenerator};
use serde::de::IgnoredAny;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::dispatch::Binder;
use crate::vocab::{Detail, Extraction, Lane, OptionKind};

/// The card variants.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "card", rename_all = "snake_case")]
pub enum Card {
    /// The pane is blocked with detail `permission`.
    Permission(PermissionCard),
    /// The pane is blocked with detail `question` and the agent's question set was fetched.
    Question(QuestionCard),
    /// Any other blocked detail (including one this build has never heard of), or a question
    /// whose fetch failed or timed out: a headline, nothing to fire.
    Informational(InformationalCard),
    /// The cycle does not call the pane blocked.
    None,
}

/// A permission dialog and how to answer it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct PermissionCard {
    /// Pane id.
    pub pane: String,
    /// Agent name.
    pub agent: String,
    /// How the reply travels.
    pub lane: Lane,
    /// The actions on offer. A hook card offers exactly `allow-once` and `reject-once`; an agent
    /// no action manifest covers is offered none.
    pub options: Vec<CardOption>,
    /// How well the dialog was read; only `exact` licenses drawing its own controls.
    pub extraction: Extraction,
    /// The call the agent is blocked on, when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pending_call: Option<PendingCall>,
    /// What a dispatch answering this card quotes.
    pub binder: Binder,
}

/// One permission option.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct CardOption {
    /// What choosing it does.
    pub kind: OptionKind,
    /// The label as shown.
    pub name: String,
    /// The option's index or id; omitted when there is none (never invented). A client must not
    /// render an option without one as a keycap.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub option_id: Option<String>,
}

/// The tool call a permission card is about.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct PendingCall {
    /// Tool name.
    pub tool: String,
    /// The tool input as the agent's own JSON object, keys in the agent's order; never a
    /// rendered line.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input: Option<Map<String, Value>>,
    /// The agent's call id.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub call_id: Option<String>,
}

/// The agent's pending question set, verbatim.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct QuestionCard {
    /// Pane id.
    pub pane: String,
    /// Agent name.
    pub agent: String,
    /// The question request id (`@agent_question_request`).
    pub request_id: String,
    /// The questions as the agent asked them.
    pub questions: Vec<Question>,
    /// What a reply quotes.
    pub binder: Binder,
}

/// One question of a question card.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Question {
    /// The question text.
    pub question: String,
    /// A short header.
    pub header: String,
    /// The choices.
    pub options: Vec<QuestionOption>,
    /// More than one choice may be picked.
    pub multiple: bool,
    /// A free-text answer is accepted.
    pub custom: bool,
}

/// One choice of a question.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct QuestionOption {
    /// The label; answers quote it.
    pub label: String,
    /// What it means.
    pub description: String,
}

/// A blocked pane nothing can be fired at from here.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(try_from = "InformationalWire")]
pub struct InformationalCard {
    /// The blocked detail, verbatim (an unknown token is kept).
    pub detail: Detail,
    /// A short headline: "Permission", "Plan approval", "Workspace trust", "Question", "Error",
    /// "Rate limited", "Background task", "Compacting", or "Waiting for you".
    pub headline: String,
}

/// Keys only an actionable card may carry; an informational card carrying one is refused.
const AFFORDANCE_KEYS: &[&str] = &[
    "options",
    "binder",
    "lane",
    "extraction",
    "pending_call",
    "request_id",
    "questions",
];

#[derive(Deserialize)]
struct InformationalWire {
    detail: Detail,
    headline: String,
    options: Option<IgnoredAny>,
    binder: Option<IgnoredAny>,
    lane: Option<IgnoredAny>,
    extraction: Option<IgnoredAny>,
    pending_call: Option<IgnoredAny>,
    request_id: Option<IgnoredAny>,
    questions: Option<IgnoredAny>,
}

impl TryFrom<InformationalWire> for InformationalCard {
    type Error = String;

    fn try_from(wire: InformationalWire) -> Result<Self, String> {
        let present = [
            wire.options.is_some(),
            wire.binder.is_some(),
            wire.lane.is_some(),
            wire.extraction.is_some(),
            wire.pending_call.is_some(),
            wire.request_id.is_some(),
            wire.questions.is_some(),
        ];
        if let Some(i) = present.iter().position(|p| *p) {
            return Err(format!(
                "an informational card has nothing to fire and cannot carry `{}`",
                AFFORDANCE_KEYS[i]
            ));
        }
        Ok(InformationalCard {
            detail: wire.detail,
            headline: wire.headline,
        })
    }
}

impl JsonSchema for InformationalCard {
    fn schema_name() -> Cow<'static, str> {
        Cow::Borrowed("InformationalCard")
    }

    fn json_schema(generator: &mut SchemaGenerator) -> Schema {
        let mut properties = Map::new();
        let mut detail = generator.subschema_for::<Detail>().to_value();
        if let Some(object) = detail.as_object_mut() {
            object.insert("description".into(), "The blocked detail, verbatim.".into());
        }
        properties.insert("detail".into(), detail);
        properties.insert(
            "headline".into(),
            serde_json::json!({ "type": "string", "description": "A short headline." }),
        );
        for key in AFFORDANCE_KEYS {
            properties.insert((*key).into(), Value::Bool(false));
        }
        let mut schema = Schema::default();
        schema.insert("type".into(), "object".into());
        schema.insert(
            "description".into(),
            "A blocked pane nothing can be fired at from here: a headline, no options, no binder."
                .into(),
        );
        schema.insert("properties".into(), Value::Object(properties));
        schema.insert("required".into(), serde_json::json!(["detail", "headline"]));
        schema
    }
}

impl Detail {
    /// The headline an informational card shows for this detail.
    pub fn headline(&self) -> &'static str {
        match self {
            Detail::Permission => "Permission",
            Detail::Plan => "Plan approval",
            Detail::Trust => "Workspace trust",
            Detail::Question => "Question",
            Detail::Error => "Error",
            Detail::RateLimit => "Rate limited",
            Detail::Background => "Background task",
            Detail::Compacting => "Compacting",
            Detail::Other(_) => "Waiting for you",
        }
    }
}
