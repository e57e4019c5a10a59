//! The hook lane's files in the host's runtime dir: a permission request an agent's hook parked
//! (`requests/<id>.json`, written by `corral event`), and the verdict a dispatch answers it with
//! (`verdicts/<id>`, created exclusively). The request id is the file name and the value of the
//! pane's `@agent_permission_request`.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// `requests/<id>.json`: a permission request parked by an agent's hook, as data.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ParkedRequest {
    /// The request id: the file's name and `@agent_permission_request`.
    pub id: String,
    /// The pane the agent runs in (`%N`).
    pub pane: String,
    /// The agent's own session id.
    #[serde(default)]
    pub session_id: Option<String>,
    /// The tool the agent asks to run, as the agent names it (`Bash`, `Edit`, ...).
    pub tool_name: String,
    /// The tool's input: the agent's own JSON object, keys in the agent's order.
    #[serde(default)]
    pub tool_input: Map<String, Value>,
    /// The episode the request belongs to (the pane's `episode_ms` when it was parked).
    #[serde(default)]
    pub episode_ms: u64,
    /// Epoch ms the request was parked.
    #[serde(default)]
    pub stamped_at_ms: u64,
}

/// What a verdict decides.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Decision {
    /// Let the tool run.
    Allow,
    /// Refuse it.
    Deny,
}

/// `verdicts/<id>`: a dispatch's answer to a parked request.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Verdict {
    /// Allow or deny.
    pub decision: Decision,
    /// The request it answers.
    pub request: String,
    /// What to tell the agent with a denial (`deny_with_message`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    /// The person's answers to a parked question (`question_reply`), as the dispatch gave them:
    /// one entry per question, in the order of the request's questions, each the chosen labels
    /// (or the typed text). Present only on an allow that answers a question.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub answers: Option<Vec<Vec<String>>>,
}
