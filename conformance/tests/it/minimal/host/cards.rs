//! Cards, as docs/protocol.md "Cards" says: `none` for a pane the read does not call blocked;
//! a permission card (the hook lane when the pane names a parked request of its own, else the
//! screen lane: this host loads no manifest, so its options are none); a question card from a
//! parked `AskUserQuestion` request, else from the agent's API ("The question fetch": a plain
//! HTTP/1.1 GET on a loopback endpoint within 750 ms); else an informational card.

use std::io::{Read, Write};
use std::net::{TcpStream, ToSocketAddrs};
use std::path::Path;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::fleet::Pane;

/// The card of a pane, as the body of a `card` frame (its keys after `t`).
pub fn card(pane: &Pane, runtime: &Path) -> Vec<(&'static str, Value)> {
    if pane.text("state") != Some("blocked") {
        return vec![("card", json!("none"))];
    }
    let detail = pane.text("detail");
    match detail {
        Some("permission") => permission(pane, runtime),
        Some("question") => question(pane, runtime).unwrap_or_else(|| informational("question")),
        Some(other) => informational(other),
        None => informational("unknown"),
    }
}

fn informational(detail: &str) -> Vec<(&'static str, Value)> {
    let headline = match detail {
        "permission" => "Permission",
        "plan" => "Plan approval",
        "trust" => "Workspace trust",
        "question" => "Question",
        "error" => "Error",
        "rate_limit" => "Rate limited",
        "background" => "Background task",
        "compacting" => "Compacting",
        _ => "Waiting for you",
    };
    vec![
        ("card", json!("informational")),
        ("detail", json!(detail)),
        ("headline", json!(headline)),
    ]
}

/// The binder a dispatch answering this pane's card quotes.
fn binder(pane: &Pane, request: Option<&str>) -> Value {
    let mut binder = json!({"expect_episode_ms": pane.row["episode_ms"]});
    if let Some(request) = request {
        binder["expect_permission_request"] = json!(request);
    }
    binder
}

/// The request the pane's hook parked, when `@agent_permission_request` names one of this pane.
fn parked(pane: &Pane, runtime: &Path) -> Option<Value> {
    let id = pane.option("@agent_permission_request")?;
    if id.contains('/') || id.starts_with('.') {
        return None;
    }
    let text = std::fs::read_to_string(runtime.join("requests").join(format!("{id}.json"))).ok()?;
    let request: Value = serde_json::from_str(&text).ok()?;
    (request["id"] == id && request["pane"] == pane.id()).then_some(request)
}

fn permission(pane: &Pane, runtime: &Path) -> Vec<(&'static str, Value)> {
    let request = pane.option("@agent_permission_request");
    let stamped_tool = pane.option("@agent_pending_tool");
    let call_id = pane.option("@agent_pending_call");
    let mut body = vec![
        ("card", json!("permission")),
        ("pane", json!(pane.id())),
        ("agent", pane.row["agent"].clone()),
    ];
    let pending = match parked(pane, runtime) {
        Some(parked) => {
            let id = parked["id"].clone();
            body.push(("lane", json!("hook")));
            body.push((
                "options",
                json!([
                    {"kind": "allow-once", "name": "Yes", "option_id": id},
                    {"kind": "reject-once", "name": "No", "option_id": id},
                ]),
            ));
            body.push(("extraction", json!("exact")));
            let tool = parked["tool_name"]
                .as_str()
                .or(stamped_tool)
                .map(str::to_owned);
            tool.map(|tool| {
                let mut call = json!({"tool": tool, "input": parked["tool_input"]});
                if let Some(call_id) = call_id {
                    call["call_id"] = json!(call_id);
                }
                call
            })
        }
        None => {
            body.push(("lane", json!("screen")));
            body.push(("options", json!([])));
            body.push(("extraction", json!("failed")));
            stamped_tool.map(|tool| {
                let mut call = json!({"tool": tool});
                if let Some(call_id) = call_id {
                    call["call_id"] = json!(call_id);
                }
                call
            })
        }
    };
    if let Some(pending) = pending {
        body.push(("pending_call", pending));
    }
    body.push(("binder", binder(pane, request)));
    body
}

/// A question card, from the parked request or the agent's API; `None` when neither gives one.
fn question(pane: &Pane, runtime: &Path) -> Option<Vec<(&'static str, Value)>> {
    if let Some(parked) = parked(pane, runtime)
        && parked["tool_name"] == "AskUserQuestion"
    {
        let questions = parked["tool_input"]["questions"]
            .as_array()?
            .iter()
            .map(|asked| {
                let mut record = record(asked)?;
                record["multiple"] = json!(asked["multiSelect"].as_bool().unwrap_or(false));
                record["custom"] = json!(true);
                Some(record)
            })
            .collect::<Option<Vec<Value>>>()?;
        let id = parked["id"].as_str()?.to_owned();
        return Some(vec![
            ("card", json!("question")),
            ("pane", json!(pane.id())),
            ("agent", pane.row["agent"].clone()),
            ("request_id", json!(id)),
            ("questions", json!(questions)),
            ("binder", binder(pane, Some(&id))),
        ]);
    }
    let id = pane.option("@agent_question_request")?;
    let endpoint = pane.option("@agent_api_endpoint")?;
    let pending = fetch(endpoint, "/question", Duration::from_millis(750))?;
    let entry = pending.as_array()?.iter().find(|entry| {
        entry["request_id"].as_str() == Some(id) || entry["id"].as_str() == Some(id)
    })?;
    let questions = entry["questions"]
        .as_array()?
        .iter()
        .map(record)
        .collect::<Option<Vec<Value>>>()?;
    Some(vec![
        ("card", json!("question")),
        ("pane", json!(pane.id())),
        ("agent", pane.row["agent"].clone()),
        ("request_id", json!(id)),
        ("questions", json!(questions)),
        ("binder", binder(pane, None)),
    ])
}

/// A question record in the protocol's form from the agent's; `None` without a question text.
fn record(asked: &Value) -> Option<Value> {
    let text = |value: &Value| value.as_str().unwrap_or_default().to_owned();
    let question = text(&asked["question"]);
    if question.is_empty() {
        return None;
    }
    let options: Vec<Value> = asked["options"]
        .as_array()
        .map(|options| {
            options
                .iter()
                .map(
                    |o| json!({"label": text(&o["label"]), "description": text(&o["description"])}),
                )
                .collect()
        })
        .unwrap_or_default();
    Some(json!({
        "question": question,
        "header": text(&asked["header"]),
        "options": options,
        "multiple": asked["multiple"].as_bool().unwrap_or(false),
        "custom": asked["custom"].as_bool().unwrap_or(false),
    }))
}

/// `GET <endpoint><path>` on a loopback `http://` endpoint, within `limit`: the JSON body of a
/// 2xx answer.
fn fetch(endpoint: &str, path: &str, limit: Duration) -> Option<Value> {
    let deadline = Instant::now() + limit;
    let rest = endpoint.strip_prefix("http://")?;
    let (authority, prefix) = match rest.find('/') {
        Some(at) => (&rest[..at], rest[at..].trim_end_matches('/')),
        None => (rest, ""),
    };
    let host = match authority.strip_prefix('[') {
        Some(v6) => &v6[..v6.find(']')?],
        None => authority.split(':').next().unwrap_or_default(),
    };
    let loopback = host == "localhost"
        || host == "::1"
        || host
            .parse::<std::net::Ipv4Addr>()
            .is_ok_and(|ip| ip.octets()[0] == 127);
    if !loopback {
        return None;
    }
    let with_port =
        if authority.contains("]:") || (!authority.starts_with('[') && authority.contains(':')) {
            authority.to_owned()
        } else {
            format!("{authority}:80")
        };
    let address = with_port.to_socket_addrs().ok()?.next()?;
    let left = deadline.checked_duration_since(Instant::now())?;
    let mut stream = TcpStream::connect_timeout(&address, left).ok()?;
    let request = format!(
        "GET {prefix}{path} HTTP/1.1\r\nHost: {authority}\r\nAccept: application/json\r\nConnection: close\r\n\r\n"
    );
    stream.write_all(request.as_bytes()).ok()?;
    let mut answer = Vec::new();
    let mut chunk = [0u8; 8192];
    loop {
        let left = deadline.checked_duration_since(Instant::now())?;
        stream.set_read_timeout(Some(left)).ok()?;
        match stream.read(&mut chunk) {
            Ok(0) => break,
            Ok(n) => answer.extend_from_slice(&chunk[..n]),
            Err(_) => return None,
        }
    }
    let text = String::from_utf8_lossy(&answer);
    let (head, body) = text.split_once("\r\n\r\n")?;
    let status: u16 = head.split_whitespace().nth(1)?.parse().ok()?;
    if !(200..300).contains(&status) {
        return None;
    }
    let chunked = head.lines().any(|line| {
        line.to_ascii_lowercase().starts_with("transfer-encoding:")
            && line.to_ascii_lowercase().contains("chunked")
    });
    let body = if chunked {
        dechunk(body)?
    } else {
        body.to_owned()
    };
    serde_json::from_str(&body).ok()
}

/// A chunked body's bytes.
fn dechunk(mut body: &str) -> Option<String> {
    let mut out = String::new();
    loop {
        let (size, rest) = body.split_once("\r\n")?;
        let size = usize::from_str_radix(size.split(';').next()?.trim(), 16).ok()?;
        if size == 0 {
            return Some(out);
        }
        out.push_str(rest.get(..size)?);
        body = rest.get(size + 2..)?;
    }
}
