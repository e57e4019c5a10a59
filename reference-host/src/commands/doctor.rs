//! `corral doctor [--json]`: why nothing rings. The last notification-command failure (reason,
//! command, age), then the checks a person needs: the config parses, a tmux server runs, this
//! shell is inside a tmux pane (where an agent's hook can stamp), a daemon runs for the tmux
//! server, tmux passes OSC sequences through when an OSC key is on, the device store has its mode
//! and holds no scope this build does not know, and the runtime dir has its mode. Nothing is
//! created or changed. Exit 1 when a check fails.

use super::output::{say, say_raw};
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::Path;

use schema::doctor::{
    CheckStatus, DOCTOR_SCHEMA_VERSION, DoctorCheck, DoctorReport, ReportedFailure,
};
use schema::notify::CommandFailure;

use schema::Scope;

use crate::clock::now_ms;
use crate::devices::DeviceFile;
use crate::notify::{command, server, socket};
use crate::paths::Paths;
use crate::runtime::RuntimeDir;
use crate::tmux::Tmux;

pub fn run(json: bool, tmux: Tmux, paths: &Paths) -> anyhow::Result<u8> {
    let report = report(&tmux, paths, now_ms());
    if json {
        say!("{}", serde_json::to_string(&report)?);
    } else {
        say_raw!("{}", text(&report));
    }
    let failed = report.checks.iter().any(|c| c.status == CheckStatus::Fail);
    Ok(u8::from(failed))
}

/// Whether a tmux server runs on the socket, and the server it is or would be (one question to
/// tmux serves both this check and the daemon's): the fleet is its panes, so with none every
/// listing is empty and nothing rings.
fn tmux_check(tmux: &Tmux) -> (CheckStatus, String, server::Server) {
    let asked = tmux.socket_path();
    let known = match &asked {
        Ok(Some(path)) => Some((CheckStatus::Ok, format!("a tmux server runs at {path}"))),
        Ok(None) => None,
        Err(err) => Some((CheckStatus::Fail, format!("tmux cannot be asked: {err}"))),
    };
    let server = server::identify_answered(tmux, asked);
    let (status, message) = known.unwrap_or_else(|| {
        (
            CheckStatus::Warn,
            format!(
                "no tmux server is running on {}: the fleet is empty until one starts (run \
                 `tmux`, or name another server with CORRAL_TMUX_SOCKET)",
                server.socket_path
            ),
        )
    });
    (status, message, server)
}

/// Whether this shell runs in a tmux pane: an agent started here has one for its hook
/// (`corral event`) to stamp. `var` reads the environment.
fn place_check(var: impl Fn(&str) -> Option<String>) -> (CheckStatus, String) {
    let set = |name| var(name).filter(|v| !v.is_empty());
    match (set("TMUX"), set("TMUX_PANE")) {
        (Some(_), Some(pane)) => (
            CheckStatus::Ok,
            format!("inside tmux pane {pane}: an agent started here is stamped by its hook"),
        ),
        _ => (
            CheckStatus::Warn,
            "outside tmux ($TMUX or $TMUX_PANE unset): an agent started in this shell has no \
             pane, and its hook (corral event) stamps nothing"
                .into(),
        ),
    }
}

/// Every check, in order.
fn report(tmux: &Tmux, paths: &Paths, now: u64) -> DoctorReport {
    let runtime = RuntimeDir::peek(&paths.runtime_dir);
    let mut checks = Vec::new();
    let mut check = |name: &str, status: CheckStatus, message: String| {
        checks.push(DoctorCheck {
            check: name.to_owned(),
            status,
            message,
        });
    };
    let config = crate::config::load(&paths.config_file);
    let config_path = &paths.config_file.path;
    match &config {
        Ok(_) if config_path.exists() => check(
            "config",
            CheckStatus::Ok,
            format!("{} parses", config_path.display()),
        ),
        Ok(_) => check(
            "config",
            CheckStatus::Ok,
            format!("no {}: the defaults apply", config_path.display()),
        ),
        Err(err) => check("config", CheckStatus::Fail, format!("{err:#}")),
    }
    let failure = command::last_failure(&runtime);
    let last_failure = match failure {
        Ok(Some(failure)) => {
            let age_ms = now.saturating_sub(failure.at_ms);
            check(
                "notify-command",
                CheckStatus::Fail,
                failed(&failure, age_ms),
            );
            Some(ReportedFailure { failure, age_ms })
        }
        Ok(None) => {
            check(
                "notify-command",
                CheckStatus::Ok,
                "no notification-command failure is recorded".into(),
            );
            None
        }
        Err(err) => {
            check(
                "notify-command",
                CheckStatus::Fail,
                format!("unreadable record: {err:#}"),
            );
            None
        }
    };
    let (status, message, server) = tmux_check(tmux);
    check("tmux", status, message);
    let (status, message) = place_check(|name| std::env::var(name).ok());
    check("hook-place", status, message);
    if socket::ping(&runtime.daemon_socket(&server.key)) {
        check(
            "daemon",
            CheckStatus::Ok,
            format!(
                "a notification daemon runs for the tmux server {}",
                server.socket_path
            ),
        );
    } else {
        check(
            "daemon",
            CheckStatus::Warn,
            format!(
                "no notification daemon runs for the tmux server {}: start `corral daemon`; \
                 without one only an agent hook with from_event rings, and stall, context_high \
                 and progress never do",
                server.socket_path
            ),
        );
    }
    let osc = config
        .as_ref()
        .map(|c| c.notify.osc || c.notify.osc_777 || c.notify.osc_progress);
    match (osc, tmux.global_option("allow-passthrough")) {
        (Ok(false), _) | (Err(_), _) => check(
            "passthrough",
            CheckStatus::Ok,
            "no OSC key is on: allow-passthrough does not matter".into(),
        ),
        (Ok(true), Ok(Some(value))) if value == "on" || value == "all" => check(
            "passthrough",
            CheckStatus::Ok,
            format!("tmux passes OSC sequences through (allow-passthrough {value})"),
        ),
        (Ok(true), Ok(Some(value))) => check(
            "passthrough",
            CheckStatus::Fail,
            format!(
                "allow-passthrough is {value}: tmux drops every OSC sequence; run \
                 `tmux set -g allow-passthrough on` (and put it in tmux.conf)"
            ),
        ),
        (Ok(true), Ok(None)) => check(
            "passthrough",
            CheckStatus::Warn,
            "no tmux server runs: allow-passthrough cannot be checked".into(),
        ),
        (Ok(true), Err(err)) => check(
            "passthrough",
            CheckStatus::Warn,
            format!("allow-passthrough cannot be read: {err}"),
        ),
    }
    let (status, message) = device_store_check(&paths.device_store);
    check("device-store", status, message);
    let (status, message) = mode_check(&paths.runtime_dir, 0o700, "not created yet");
    check("runtime-dir", status, message);
    DoctorReport {
        schema: DOCTOR_SCHEMA_VERSION,
        last_failure,
        checks,
    }
}

fn failed(failure: &CommandFailure, age_ms: u64) -> String {
    format!(
        "the last notification command failed {} ago: {} (command: {}); the next clean run \
         clears this",
        age(age_ms),
        failure.reason,
        failure.command
    )
}

/// The device store: its mode, then whether it reads, then the scopes it holds that this build
/// does not know. Such a token (a typo in a hand edit, or a newer corral's scope) is kept and
/// grants nothing, so a device silently lacks what its owner meant to give: a warning.
fn device_store_check(path: &Path) -> (CheckStatus, String) {
    let (status, message) = mode_check(path, 0o600, "no device is enrolled");
    if status == CheckStatus::Fail || !path.exists() {
        return (status, message);
    }
    let store = match DeviceFile::new(path.to_owned()).load() {
        Ok(store) => store,
        Err(err) => return (CheckStatus::Fail, err.to_string()),
    };
    let unknown: Vec<String> = store
        .devices
        .iter()
        .flat_map(|device| {
            device
                .scopes
                .iter()
                .filter(|scope| scope.is_other())
                .map(move |scope| format!("{} has `{}`", device.name, scope.as_str()))
        })
        .collect();
    if unknown.is_empty() {
        return (status, message);
    }
    (
        CheckStatus::Warn,
        format!(
            "{}: {}, which this corral does not know and which grants nothing (known scopes: \
             {}); fix the record, then `corral device grant NAME SCOPE`",
            path.display(),
            unknown.join(", "),
            Scope::KNOWN.join(", ")
        ),
    )
}

/// A file or dir that must have `mode` and belong to this user; absent is fine.
fn mode_check(path: &Path, mode: u32, absent: &str) -> (CheckStatus, String) {
    let meta = match std::fs::metadata(path) {
        Ok(meta) => meta,
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => {
            return (CheckStatus::Ok, format!("{}: {absent}", path.display()));
        }
        Err(err) => return (CheckStatus::Fail, format!("{}: {err}", path.display())),
    };
    let uid = rustix::process::getuid().as_raw();
    let found = meta.permissions().mode() & 0o777;
    if meta.uid() != uid {
        (
            CheckStatus::Fail,
            format!(
                "{} belongs to uid {}, not to this user",
                path.display(),
                meta.uid()
            ),
        )
    } else if found != mode {
        (
            CheckStatus::Fail,
            format!(
                "{} has mode {found:04o}, not {mode:04o}: run `chmod {mode:o} {}`",
                path.display(),
                path.display()
            ),
        )
    } else {
        (
            CheckStatus::Ok,
            format!("{} has mode {mode:04o}", path.display()),
        )
    }
}

/// `4s`, `3m`, `2h`, `1d`: the largest whole unit.
fn age(ms: u64) -> String {
    let secs = ms / 1000;
    match secs {
        0..60 => format!("{secs}s"),
        60..3600 => format!("{}m", secs / 60),
        3600..86_400 => format!("{}h", secs / 3600),
        _ => format!("{}d", secs / 86_400),
    }
}

/// The report for a person: one line per check.
fn text(report: &DoctorReport) -> String {
    let mut out = String::new();
    for check in &report.checks {
        let status = match check.status {
            CheckStatus::Ok => "ok  ",
            CheckStatus::Warn => "warn",
            CheckStatus::Fail => "FAIL",
        };
        out.push_str(&format!(
            "{status}  {:<15} {}\n",
            check.check, check.message
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_missing_tmux_server_and_an_unrunnable_tmux_are_named() {
        let dir = tempfile::tempdir().unwrap();
        let socket = dir.path().join("no-server");
        let tmux = Tmux::new("tmux", Some(crate::tmux::Socket::Path(socket.clone())));
        let (status, message, _) = tmux_check(&tmux);
        assert_eq!(status, CheckStatus::Warn, "{message}");
        assert!(
            message.starts_with(&format!(
                "no tmux server is running on {}",
                socket.display()
            )),
            "{message}"
        );
        let (status, message, _) = tmux_check(&Tmux::new("/nonexistent/tmux", None));
        assert_eq!(status, CheckStatus::Fail);
        assert!(message.starts_with("tmux cannot be asked"), "{message}");
    }

    #[test]
    fn outside_tmux_is_a_warning_and_inside_names_the_pane() {
        let (status, message) = place_check(|_| None);
        assert_eq!(status, CheckStatus::Warn);
        assert!(message.starts_with("outside tmux"), "{message}");
        let (status, message) = place_check(|name| {
            Some(match name {
                "TMUX" => "/tmp/tmux-0/default,1,0".into(),
                _ => "%3".into(),
            })
        });
        assert_eq!(status, CheckStatus::Ok);
        assert!(message.contains("pane %3"), "{message}");
    }

    #[test]
    fn ages_use_the_largest_whole_unit() {
        assert_eq!(age(4200), "4s");
        assert_eq!(age(185_000), "3m");
        assert_eq!(age(7_300_000), "2h");
        assert_eq!(age(90_000_000), "1d");
    }

    #[test]
    fn a_scope_this_build_does_not_know_is_a_warning_naming_device_and_token() {
        let tmp = tempfile::tempdir().unwrap();
        let file = tmp.path().join("devices.toml");
        let write = |text: &str| {
            std::fs::write(&file, text).unwrap();
            std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o600)).unwrap();
        };
        assert_eq!(device_store_check(&file).0, CheckStatus::Ok, "absent");
        write(
            "[[device]]\nid = \"SHA256:p\"\nname = \"phone\"\nscopes = [\"read\", \"act:anwser\"]\npaired_at_ms = 1\n\n\
             [[device]]\nid = \"SHA256:t\"\nname = \"tablet\"\nscopes = [\"read\", \"act:steer\"]\npaired_at_ms = 1\n",
        );
        let (status, message) = device_store_check(&file);
        assert_eq!(status, CheckStatus::Warn, "{message}");
        assert!(
            message.contains("phone has `act:anwser`") && !message.contains("tablet"),
            "{message}"
        );
        assert!(message.contains("act:answer, act:always"), "{message}");
        write(
            "[[device]]\nid = \"SHA256:p\"\nname = \"phone\"\nscopes = [\"read\"]\npaired_at_ms = 1\n",
        );
        assert_eq!(device_store_check(&file).0, CheckStatus::Ok);
        write("[[device]\n");
        assert_eq!(device_store_check(&file).0, CheckStatus::Fail, "malformed");
    }

    #[test]
    fn modes_are_checked_and_an_absent_path_is_fine() {
        let tmp = tempfile::tempdir().unwrap();
        let file = tmp.path().join("devices.toml");
        assert_eq!(mode_check(&file, 0o600, "none").0, CheckStatus::Ok);
        std::fs::write(&file, "").unwrap();
        std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o644)).unwrap();
        let (status, message) = mode_check(&file, 0o600, "none");
        assert_eq!(status, CheckStatus::Fail);
        assert!(
            message.contains("0644") && message.contains("chmod 600"),
            "{message}"
        );
        std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o600)).unwrap();
        assert_eq!(mode_check(&file, 0o600, "none").0, CheckStatus::Ok);
    }
}
