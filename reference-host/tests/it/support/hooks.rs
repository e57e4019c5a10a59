//! `corral event` as an agent's hook runs it: inside a pane (`$TMUX` names the fleet's server as
//! tmux would, `$TMUX_PANE` the pane), the payload on stdin.

use std::io::Write;
use std::process::{Command, Output, Stdio};

use serde_json::Value;

use super::home::Home;

/// The socket path of the home's tmux server, as its rows name it.
pub fn server(home: &Home) -> String {
    let ls: Value = serde_json::from_str(&home.ok(&["ls", "--json"])).unwrap();
    ls["agents"][0]["server"].as_str().unwrap().to_owned()
}

/// `corral event <args>` as a hook inside `pane` runs it, every stream piped.
pub fn hook(home: &Home, pane: &str, args: &[&str]) -> Command {
    let mut cmd = home.corral();
    cmd.env("TMUX", format!("{},1,0", server(home)))
        .env("TMUX_PANE", pane)
        .arg("event")
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    cmd
}

/// Runs [`hook`] with `payload` on its stdin, to its end.
pub fn run_hook(home: &Home, pane: &str, args: &[&str], payload: &Value) -> Output {
    let mut child = hook(home, pane, args).spawn().unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(payload.to_string().as_bytes())
        .unwrap();
    child.wait_with_output().unwrap()
}
