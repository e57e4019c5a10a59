//! The hook lane, from the agent's side: a permission request parked as data
//! (`requests/<id>.json`, 0600), announced on the pane (`@agent_permission_request`), held open by
//! a lock only this waiting process holds (`requests/<id>.lock`, so a hook that dies is seen to be
//! gone), then answered by a dispatch's verdict (`verdicts/<id>`), or by nothing when the wait
//! runs out. Whatever happens, the request file, its lock and the verdict are removed on the way
//! out (a [`Parked`] cleans up when dropped, a panic included).

use std::path::PathBuf;
use std::time::{Duration, Instant};

use schema::hook::{ParkedRequest, Verdict};

use super::payload::Hook;
use crate::files;
use crate::runtime::RuntimeDir;

/// A parked request, waiting; removed from disk when dropped.
#[derive(Debug)]
pub struct Parked {
    /// The request id (file name, `@agent_permission_request`).
    pub id: String,
    request: PathBuf,
    lock_path: PathBuf,
    verdict: PathBuf,
    _lock: files::Lock,
}

/// A fresh request id: `req-` and 16 random hex digits.
pub fn new_id() -> std::io::Result<String> {
    let mut bytes = [0u8; 8];
    getrandom::fill(&mut bytes).map_err(|e| std::io::Error::other(e.to_string()))?;
    Ok(format!("req-{:016x}", u64::from_le_bytes(bytes)))
}

/// Parks `hook`'s permission request for `pane` at episode `now`.
pub fn park(runtime: &RuntimeDir, pane: &str, hook: &Hook, now: u64) -> std::io::Result<Parked> {
    let id = new_id()?;
    let paths = (
        runtime.request_file(&id),
        runtime.request_lock(&id),
        runtime.verdict_file(&id),
    );
    let (Some(request), Some(lock_path), Some(verdict)) = paths else {
        return Err(std::io::Error::other("a request id that names no file"));
    };
    if let Some(dir) = request.parent() {
        files::create_private_dir(dir)?;
    }
    // The lock first: the request is never on disk without its holder.
    let lock = files::try_lock(&lock_path)?
        .ok_or_else(|| std::io::Error::other("a fresh request lock is already held"))?;
    let parked = ParkedRequest {
        id: id.clone(),
        pane: pane.to_owned(),
        session_id: hook.session_id.clone(),
        tool_name: hook.tool_name.clone().unwrap_or_default(),
        tool_input: hook.tool_input.clone(),
        episode_ms: now,
        stamped_at_ms: now,
    };
    let bytes = serde_json::to_vec(&parked).expect("a parked request always encodes");
    let parked = Parked {
        id,
        request,
        lock_path,
        verdict,
        _lock: lock,
    };
    files::write_atomic(&parked.request, &bytes, 0o600)?;
    Ok(parked)
}

impl Parked {
    /// Waits until `deadline` for a verdict, checking `stop` between looks; `None` when none came
    /// (or `stop` said to give up).
    pub fn wait(&self, deadline: Instant, stop: &dyn Fn() -> bool) -> Option<Verdict> {
        loop {
            // A verdict file is created whole-or-growing by an exclusive create; one that does not
            // parse yet is being written: look again.
            if let Ok(text) = std::fs::read_to_string(&self.verdict)
                && let Ok(verdict) = serde_json::from_str::<Verdict>(&text)
                && verdict.request == self.id
            {
                return Some(verdict);
            }
            if stop() || Instant::now() >= deadline {
                return None;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for Parked {
    fn drop(&mut self) {
        for path in [&self.request, &self.verdict, &self.lock_path] {
            let _ = std::fs::remove_file(path);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hook::payload::parse;

    fn hook() -> Hook {
        parse(
            r#"{"hook_event_name":"PermissionRequest","session_id":"s","tool_name":"Bash","tool_input":{"command":"ls"}}"#,
            None,
        )
    }

    #[test]
    fn a_parked_request_is_seen_while_its_hook_waits_and_gone_after() {
        let tmp = tempfile::tempdir().unwrap();
        let runtime = RuntimeDir::open(tmp.path()).unwrap();
        let parked = park(&runtime, "%4", &hook(), 42).unwrap();
        let seen = runtime.parked_request(&parked.id, "%4").unwrap();
        assert_eq!((seen.tool_name.as_str(), seen.episode_ms), ("Bash", 42));
        assert_eq!(seen.tool_input["command"], "ls");
        assert!(
            runtime.parked_request(&parked.id, "%5").is_none(),
            "another pane's"
        );
        let id = parked.id.clone();
        drop(parked);
        assert!(runtime.parked_request(&id, "%4").is_none());
        assert_eq!(
            std::fs::read_dir(tmp.path().join("requests"))
                .unwrap()
                .count(),
            0
        );
    }

    #[test]
    fn a_request_whose_hook_died_is_gone_even_with_its_file_left() {
        let tmp = tempfile::tempdir().unwrap();
        let runtime = RuntimeDir::open(tmp.path()).unwrap();
        let parked = park(&runtime, "%4", &hook(), 1).unwrap();
        let id = parked.id.clone();
        // As a SIGKILL would: the lock is released, the files stay.
        std::mem::forget(parked);
        // (The forgotten guard still holds the lock in this process: free it as the kernel would.)
        let lock = runtime.request_lock(&id).unwrap();
        let copy = tmp.path().join("copy");
        std::fs::copy(&lock, &copy).unwrap();
        std::fs::remove_file(&lock).unwrap();
        std::fs::rename(&copy, &lock).unwrap();
        assert!(runtime.request_file(&id).unwrap().exists());
        assert!(runtime.parked_request(&id, "%4").is_none());
    }

    #[test]
    fn a_verdict_ends_the_wait_and_no_verdict_times_out() {
        let tmp = tempfile::tempdir().unwrap();
        let runtime = RuntimeDir::open(tmp.path()).unwrap();
        let parked = park(&runtime, "%4", &hook(), 1).unwrap();
        let started = Instant::now();
        assert_eq!(
            parked.wait(started + Duration::from_millis(100), &|| false),
            None
        );
        assert!(started.elapsed() >= Duration::from_millis(100));
        let verdict = runtime.verdict_file(&parked.id).unwrap();
        files::create_exclusive(
            &verdict,
            format!(
                r#"{{"decision":"deny","request":"{}","message":"no"}}"#,
                parked.id
            )
            .as_bytes(),
        )
        .unwrap();
        let got = parked
            .wait(Instant::now() + Duration::from_secs(5), &|| false)
            .unwrap();
        assert_eq!(got.decision, schema::hook::Decision::Deny);
        assert_eq!(got.message.as_deref(), Some("no"));
        drop(parked);
        assert!(!verdict.exists(), "the verdict is removed with the request");
    }
}
