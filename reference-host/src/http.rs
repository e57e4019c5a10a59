//! The host's HTTP client, for an agent's own API (`@agent_api_endpoint`): a card's pending
//! question (`GET /question`) and a dispatch's api lane. Every call has a hard time-out, and only
//! plain `http://` on a loopback address is called: the endpoint is a pane stamp, and the host
//! never reaches beyond the machine on its say-so.

use std::time::Duration;

use serde_json::Value;

/// Why a call gave no answer.
#[derive(Debug)]
pub enum HttpError {
    /// No answer within the time-out.
    Timeout,
    /// The endpoint is not a loopback `http://` URL.
    NotLoopback(String),
    /// Connecting, sending or reading failed, or the answer was not JSON.
    Failed(String),
}

impl std::fmt::Display for HttpError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            HttpError::Timeout => f.write_str("the agent's API did not answer in time"),
            HttpError::NotLoopback(url) => write!(f, "{url} is not a loopback http:// endpoint"),
            HttpError::Failed(why) => write!(f, "calling the agent's API failed: {why}"),
        }
    }
}

impl std::error::Error for HttpError {}

/// `endpoint` (without a trailing `/`) when it is `http://127.0.0.1…`, `http://localhost…` or
/// `http://[::1]…`.
pub fn loopback(endpoint: &str) -> Option<&str> {
    let rest = endpoint.strip_prefix("http://")?;
    let host_end = rest.find(['/', '?']).unwrap_or(rest.len());
    let authority = &rest[..host_end];
    let host = match authority.strip_prefix('[') {
        Some(v6) => &v6[..v6.find(']')?],
        None => authority.split(':').next().unwrap_or(""),
    };
    let loopback = host == "localhost"
        || host == "::1"
        || host.split('.').next() == Some("127") && host.parse::<std::net::Ipv4Addr>().is_ok();
    loopback.then(|| endpoint.trim_end_matches('/'))
}

fn agent(timeout: Duration) -> ureq::Agent {
    ureq::Agent::config_builder()
        .timeout_global(Some(timeout))
        .http_status_as_error(false)
        .build()
        .into()
}

fn failed(err: ureq::Error) -> HttpError {
    match err {
        ureq::Error::Timeout(_) => HttpError::Timeout,
        other => HttpError::Failed(other.to_string()),
    }
}

fn url(endpoint: &str, path: &str) -> Result<String, HttpError> {
    let base = loopback(endpoint).ok_or_else(|| HttpError::NotLoopback(endpoint.to_owned()))?;
    Ok(format!("{base}{path}"))
}

/// `GET {endpoint}{path}`: the JSON body of a 2xx answer.
pub fn get_json(endpoint: &str, path: &str, timeout: Duration) -> Result<Value, HttpError> {
    let mut response = agent(timeout)
        .get(&url(endpoint, path)?)
        .call()
        .map_err(failed)?;
    let status = response.status().as_u16();
    if !(200..300).contains(&status) {
        return Err(HttpError::Failed(format!("status {status}")));
    }
    let text = response.body_mut().read_to_string().map_err(failed)?;
    serde_json::from_str(&text).map_err(|err| HttpError::Failed(format!("not JSON: {err}")))
}

/// `{method} {endpoint}{path}` with a JSON body (or none): the answer's status code.
pub fn send_json(
    endpoint: &str,
    method: &str,
    path: &str,
    body: Option<&Value>,
    timeout: Duration,
) -> Result<u16, HttpError> {
    let url = url(endpoint, path)?;
    let agent = agent(timeout);
    let text = body.map(Value::to_string).unwrap_or_default();
    let response = match method.to_ascii_uppercase().as_str() {
        "POST" => agent
            .post(&url)
            .header("content-type", "application/json")
            .send(text),
        "PUT" => agent
            .put(&url)
            .header("content-type", "application/json")
            .send(text),
        "PATCH" => agent
            .patch(&url)
            .header("content-type", "application/json")
            .send(text),
        "DELETE" => agent.delete(&url).call(),
        "GET" => agent.get(&url).call(),
        other => {
            return Err(HttpError::Failed(format!(
                "method {other} is not supported"
            )));
        }
    };
    Ok(response.map_err(failed)?.status().as_u16())
}

/// A loopback HTTP server's halves for tests: reading a whole request and answering it so the
/// client always sees the answer.
#[cfg(test)]
pub(crate) mod testing {
    use std::io::{Read, Write};
    use std::net::{Shutdown, TcpStream};
    use std::time::Duration;

    /// Reads one whole request (its head and as many body bytes as its content-length says; a
    /// client may send the body in a segment of its own) and returns it, or what came before the
    /// client closed.
    pub fn read_request(stream: &mut TcpStream) -> String {
        let mut seen = Vec::new();
        let mut buf = [0u8; 4096];
        loop {
            let n = stream.read(&mut buf).unwrap_or(0);
            seen.extend_from_slice(&buf[..n]);
            let text = String::from_utf8_lossy(&seen).into_owned();
            if n == 0 {
                return text;
            }
            let Some(head_end) = text.find("\r\n\r\n") else {
                continue;
            };
            let length = text[..head_end]
                .lines()
                .filter_map(|line| line.split_once(':'))
                .find(|(name, _)| name.trim().eq_ignore_ascii_case("content-length"))
                .map_or(0, |(_, value)| value.trim().parse::<usize>().unwrap_or(0));
            if seen.len() >= head_end + 4 + length {
                return text;
            }
        }
    }

    /// Answers `status` (such as `200 OK`) with `body` and `connection: close`, then closes
    /// only once the client has: a close with unread bytes would be a reset, and a reset can
    /// reach the client before the answer does.
    pub fn answer(mut stream: TcpStream, status: &str, body: &str) {
        let _ = write!(
            stream,
            "HTTP/1.1 {status}\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
            body.len()
        );
        let _ = stream.shutdown(Shutdown::Write);
        let _ = stream.set_read_timeout(Some(Duration::from_secs(10)));
        let _ = stream.read_to_end(&mut Vec::new());
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::TcpListener;

    #[test]
    fn only_loopback_http_endpoints_are_called() {
        for ok in [
            "http://127.0.0.1:4096",
            "http://127.0.0.1:4096/",
            "http://localhost:1",
            "http://[::1]:80",
            "http://127.1.2.3:9",
        ] {
            assert!(loopback(ok).is_some(), "{ok}");
        }
        for bad in [
            "https://127.0.0.1:1",
            "http://example.com",
            "http://127.0.0.1.evil.com:1",
            "http://10.0.0.1:1",
            "ftp://127.0.0.1",
            "",
        ] {
            assert!(loopback(bad).is_none(), "{bad}");
        }
        assert_eq!(loopback("http://127.0.0.1:1/"), Some("http://127.0.0.1:1"));
    }

    /// A server that accepts one connection and never answers.
    fn silent() -> (TcpListener, String) {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        (listener, url)
    }

    #[test]
    fn a_silent_server_is_a_timeout_within_the_bound() {
        let (_listener, url) = silent();
        let started = std::time::Instant::now();
        let err = get_json(&url, "/question", Duration::from_millis(200)).unwrap_err();
        assert!(matches!(err, HttpError::Timeout), "{err:?}");
        assert!(started.elapsed() < Duration::from_secs(2));
    }

    #[test]
    fn a_json_answer_is_read_and_a_post_gets_its_status() {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        let server = crate::threads::spawn(move || {
            for body in ["[1,2]", "{}"] {
                let (mut stream, _) = listener.accept().unwrap();
                testing::read_request(&mut stream);
                let status = if body == "{}" {
                    "404 Not Found"
                } else {
                    "200 OK"
                };
                testing::answer(stream, status, body);
            }
        });
        let value = get_json(&url, "/question", Duration::from_secs(2)).unwrap();
        assert_eq!(value, serde_json::json!([1, 2]));
        let status = send_json(
            &url,
            "POST",
            "/x",
            Some(&serde_json::json!({})),
            Duration::from_secs(2),
        );
        assert_eq!(status.unwrap(), 404);
        server.join().unwrap();
    }
}
