//! The agent HTTP API a question card is fetched from, on 127.0.0.1 only, shaped after an agent
//! server's question surface:
//!
//! - `GET /question`: the pending question requests, a JSON array of
//!   `{"request_id","session_id","questions":[{question,header,options[{label,description}],multiple,custom}]}`,
//!   answered after the configured delay (to provoke the host's 750 ms time-out);
//! - `POST /question/<id>/reply`, `POST /question/<id>/reject`: settle a pending question (404 for
//!   an unknown id), `POST /permission/<id>/reply`: always 200. Every POST is appended to
//!   `$CORRAL_SIM_DIR/api-replies.ndjson` when it arrives, whatever its answer; the answer comes
//!   after the POST delay (to provoke a dispatch's 2 s api-lane time-out: the agent got the
//!   reply, the host never heard back).
//!
//! The pending set and both delays live in `$CORRAL_SIM_DIR/api-state.json`, re-read per request,
//! so steps change them while the server runs. The bound address goes to `api.json`.

use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::Context;
use schema::card::Question;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

/// One pending question request.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Pending {
    /// Request id (`@agent_question_request`).
    pub request_id: String,
    /// The agent session it belongs to.
    #[serde(default)]
    pub session_id: Option<String>,
    /// The questions.
    pub questions: Vec<Question>,
}

/// api-state.json.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ApiState {
    /// Delay before answering `GET /question`, ms.
    #[serde(default)]
    pub delay_ms: u64,
    /// Delay before answering a POST (after recording it), ms.
    #[serde(default)]
    pub post_delay_ms: u64,
    /// Pending questions.
    #[serde(default)]
    pub questions: Vec<Pending>,
}

fn state_path(sim_dir: &Path) -> PathBuf {
    sim_dir.join("api-state.json")
}

/// The file the bound address is written to.
pub fn address_path(sim_dir: &Path) -> PathBuf {
    sim_dir.join("api.json")
}

/// The file replies are recorded in.
pub fn replies_path(sim_dir: &Path) -> PathBuf {
    sim_dir.join("api-replies.ndjson")
}

/// Changes api-state.json under a lock.
pub fn edit<T>(sim_dir: &Path, change: impl FnOnce(&mut ApiState) -> T) -> anyhow::Result<T> {
    std::fs::create_dir_all(sim_dir)?;
    let lock = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(sim_dir.join("api-state.lock"))?;
    lock.lock()?;
    let mut state = load(sim_dir)?;
    let result = change(&mut state);
    crate::fake::state::write_atomic(&state_path(sim_dir), &serde_json::to_vec_pretty(&state)?)?;
    Ok(result)
}

/// Adds a pending question request, replacing one with its id.
pub fn pend(sim_dir: &Path, pending: Pending) -> anyhow::Result<()> {
    edit(sim_dir, |s| {
        s.questions.retain(|q| q.request_id != pending.request_id);
        s.questions.push(pending);
    })
}

fn load(sim_dir: &Path) -> anyhow::Result<ApiState> {
    match std::fs::read(state_path(sim_dir)) {
        Ok(bytes) => serde_json::from_slice(&bytes).context("parsing api-state.json"),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(ApiState::default()),
        Err(e) => Err(e.into()),
    }
}

/// The base URL of a running server, from api.json.
pub fn endpoint(sim_dir: &Path) -> anyhow::Result<String> {
    let text = std::fs::read_to_string(address_path(sim_dir))
        .context("api.json is missing: start `corral-sim api serve` first")?;
    let value: Value = serde_json::from_str(&text)?;
    value["url"]
        .as_str()
        .map(str::to_owned)
        .context("api.json has no url")
}

/// Serves until killed; the delays, when given, are stored first.
pub fn serve(
    sim_dir: &Path,
    port: u16,
    delay_ms: Option<u64>,
    post_delay_ms: Option<u64>,
) -> anyhow::Result<()> {
    if delay_ms.is_some() || post_delay_ms.is_some() {
        edit(sim_dir, |s| {
            s.delay_ms = delay_ms.unwrap_or(s.delay_ms);
            s.post_delay_ms = post_delay_ms.unwrap_or(s.post_delay_ms);
        })?;
    }
    let server = tiny_http::Server::http(("127.0.0.1", port))
        .map_err(|e| anyhow::anyhow!("binding 127.0.0.1:{port}: {e}"))?;
    let addr = server
        .server_addr()
        .to_ip()
        .context("the server has no IP address")?;
    let info = json!({ "addr": addr.to_string(), "url": format!("http://{addr}"), "pid": std::process::id() });
    crate::fake::state::write_atomic(&address_path(sim_dir), info.to_string().as_bytes())?;
    for request in server.incoming_requests() {
        let sim_dir = sim_dir.to_owned();
        std::thread::spawn(move || {
            let _ = handle(&sim_dir, request);
        });
    }
    Ok(())
}

fn respond(request: tiny_http::Request, status: u16, body: &Value) -> std::io::Result<()> {
    let header = tiny_http::Header::from_bytes("Content-Type", "application/json")
        .expect("a static header is valid");
    request.respond(
        tiny_http::Response::from_string(body.to_string())
            .with_status_code(status)
            .with_header(header),
    )
}

fn handle(sim_dir: &Path, mut request: tiny_http::Request) -> anyhow::Result<()> {
    let path = request.url().split('?').next().unwrap_or("").to_owned();
    let method = request.method().as_str().to_owned();
    let parts: Vec<&str> = path.trim_matches('/').split('/').collect();
    if method == "GET" && parts == ["question"] {
        let state = load(sim_dir)?;
        std::thread::sleep(Duration::from_millis(state.delay_ms));
        respond(request, 200, &serde_json::to_value(&state.questions)?)?;
        return Ok(());
    }
    if method != "POST" {
        respond(request, 404, &json!({ "error": "not found" }))?;
        return Ok(());
    }
    let mut body = String::new();
    request.as_reader().read_to_string(&mut body)?;
    let parsed: Value = serde_json::from_str(&body).unwrap_or(Value::String(body.clone()));
    let (kind, id) = match parts.as_slice() {
        ["question", id, "reply"] => ("question_reply", *id),
        ["question", id, "reject"] => ("question_reject", *id),
        ["permission", id, "reply"] => ("permission_reply", *id),
        _ => {
            respond(request, 404, &json!({ "error": "not found" }))?;
            return Ok(());
        }
    };
    let status = if kind == "permission_reply" {
        200
    } else {
        let known = edit(sim_dir, |s| {
            let before = s.questions.len();
            s.questions.retain(|q| q.request_id != id);
            before != s.questions.len()
        })?;
        if known { 200 } else { 404 }
    };
    let line = json!({ "kind": kind, "id": id, "method": method, "path": path, "status": status, "body": parsed });
    crate::fake::state::append_lines(&replies_path(sim_dir), &[line.to_string()])?;
    std::thread::sleep(Duration::from_millis(load(sim_dir)?.post_delay_ms));
    let answer = if status == 200 {
        json!(true)
    } else {
        json!({ "error": "unknown request" })
    };
    respond(request, status, &answer)?;
    Ok(())
}
