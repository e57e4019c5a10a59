//! The agent HTTP API: questions served after a delay, replies recorded.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::Duration;

use serde_json::{Value, json};

use crate::common::{command, corral_sim, fake_fleet};

/// Kills the server on drop.
struct Server(std::process::Child);

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn http(
    addr: &str,
    method: &str,
    path: &str,
    body: &str,
    timeout: Duration,
) -> std::io::Result<(u16, String)> {
    let mut stream = TcpStream::connect(addr)?;
    stream.set_read_timeout(Some(timeout))?;
    write!(
        stream,
        "{method} {path} HTTP/1.0\r\nHost: {addr}\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    )?;
    let mut response = String::new();
    stream.read_to_string(&mut response)?;
    let status = response[9..12].parse().unwrap();
    let body = response
        .split_once("\r\n\r\n")
        .map(|(_, b)| b.to_owned())
        .unwrap_or_default();
    Ok((status, body))
}

#[test]
fn questions_replies_and_delay() {
    let (sim, socket) = fake_fleet("small.toml");
    let child = command(corral_sim())
        .env("CORRAL_SIM_DIR", sim.path())
        .args(["api", "serve", "--question-delay-ms", "0"])
        .spawn()
        .unwrap();
    let _server = Server(child);
    let api_json = sim.path().join("api.json");
    let mut info = Value::Null;
    for _ in 0..500 {
        if let Ok(bytes) = std::fs::read(&api_json)
            && let Ok(value) = serde_json::from_slice::<Value>(&bytes)
        {
            info = value;
            break;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    let addr = info["addr"]
        .as_str()
        .expect("api.json names the address")
        .to_owned();
    assert!(addr.starts_with("127.0.0.1:"), "{addr}");
    let long = Duration::from_secs(10);

    let (status, body) = http(&addr, "GET", "/question", "", long).unwrap();
    assert_eq!(status, 200);
    let pending: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(pending[0]["request_id"], "que-1");
    assert_eq!(
        pending[0]["questions"][0]["options"][1],
        json!({"label": "tests/", "description": "Tests"})
    );
    assert_eq!(pending[0]["questions"][0]["multiple"], true);

    sim.sim(&["step", "--pane", "opencode-ask", "--api-endpoint", "auto"]);
    let (endpoint, _, _) = sim.fake(&[
        "-L",
        &socket,
        "show-options",
        "-p",
        "-v",
        "-t",
        "%2",
        "@agent_api_endpoint",
    ]);
    assert_eq!(endpoint, format!("http://{addr}\n"));

    let (status, _) = http(
        &addr,
        "POST",
        "/question/que-1/reply",
        r#"{"answers":[["src/"]]}"#,
        long,
    )
    .unwrap();
    assert_eq!(status, 200);
    let (status, _) = http(&addr, "POST", "/question/que-1/reject", "{}", long).unwrap();
    assert_eq!(status, 404, "a settled question is gone");
    let (status, _) = http(
        &addr,
        "POST",
        "/permission/per-7/reply",
        r#"{"reply":"once"}"#,
        long,
    )
    .unwrap();
    assert_eq!(status, 200);
    let replies: Vec<Value> = std::fs::read_to_string(sim.path().join("api-replies.ndjson"))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(replies.len(), 3);
    assert_eq!(replies[0]["kind"], "question_reply");
    assert_eq!(replies[0]["body"], json!({"answers": [["src/"]]}));
    assert_eq!(replies[1]["status"], 404);
    assert_eq!(replies[2]["id"], "per-7");
    let (_, body) = http(&addr, "GET", "/question", "", long).unwrap();
    assert_eq!(body, "[]");

    // A POST answered late: recorded at once, answered after the delay (a dispatch's api lane
    // gives up after 2 s).
    sim.sim(&["api", "delay", "--post", "1500"]);
    let started = std::time::Instant::now();
    let err = http(
        &addr,
        "POST",
        "/permission/per-8/reply",
        r#"{"reply":"once"}"#,
        Duration::from_millis(300),
    )
    .unwrap_err();
    assert!(
        matches!(
            err.kind(),
            std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
        ),
        "{err}"
    );
    let replies = std::fs::read_to_string(sim.path().join("api-replies.ndjson")).unwrap();
    assert!(
        replies.contains("per-8"),
        "recorded before the answer: {replies}"
    );
    assert!(started.elapsed() < Duration::from_millis(1500));
    sim.sim(&["api", "delay", "--post", "0"]);
    let (status, _) = http(&addr, "POST", "/permission/per-9/reply", "{}", long).unwrap();
    assert_eq!(status, 200);

    sim.sim(&["api", "delay", "60000"]);
    let err = http(&addr, "GET", "/question", "", Duration::from_millis(300)).unwrap_err();
    assert!(
        matches!(
            err.kind(),
            std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
        ),
        "{err}"
    );
}
