//! What a fire says, built once from the pane (docs/protocol.md "Notification payload",
//! "Notification environment", "Notification log"): the payload on the command's stdin, the log
//! line, the command's `CORRAL_*` environment and the status-line text all come from the one
//! [`Fire`] (or [`Completion`]), so the title is redacted everywhere or nowhere.

use schema::config::NotifyConfig;
use schema::notify::{
    Completion, CompletionPayload, Fire, LogEntry, NOTIFY_SCHEMA_VERSION, NotifyLogLine,
};
use schema::{Detail, NotifyEnv, NotifyPayload, Trigger};

use crate::fleet::Pane;

/// A notification command's `CORRAL_*` environment as a background child's: set what has a
/// value, remove the rest ([`NotifyEnv`], which the host and corral-remote build alike).
pub fn spawn_env(env: &NotifyEnv) -> crate::process::Spawn {
    crate::process::Spawn {
        env: env
            .set
            .iter()
            .map(|(var, value)| (var.as_str().into(), value.into()))
            .collect(),
        env_remove: env.remove.iter().map(|var| var.as_str().into()).collect(),
        ..crate::process::Spawn::default()
    }
}

/// The fire of `trigger` for `pane` at `now`. `since_ms` is how long the episode has lasted;
/// for `stall`, how long the pane has been working (since `@agent_since`). The title is there
/// only with `include_title`.
pub fn fire(pane: &Pane, trigger: Trigger, now: u64, include_title: bool) -> Fire {
    let row = &pane.row;
    let start = match trigger {
        Trigger::Stall => row.since_ms.unwrap_or(row.episode_ms),
        _ => row.episode_ms,
    };
    Fire {
        agent: row.agent.clone(),
        pane: row.pane.clone(),
        state: trigger,
        detail: row.detail.clone(),
        session: row.session.clone(),
        locator: row.locator.clone(),
        title: include_title.then(|| pane.facts.title.clone().unwrap_or_default()),
        repo: row.repo.clone().unwrap_or_default(),
        branch: row.branch.clone().unwrap_or_default(),
        since_ms: if start == 0 {
            0
        } else {
            now.saturating_sub(start)
        },
        episode_ms: row.episode_ms,
        context_pct: row.context,
    }
}

/// A representative fire of `trigger` under `config` at `now`, for `corral debug notify-test`:
/// a made-up pane, the trigger's own threshold where it has one.
pub fn sample(config: &NotifyConfig, trigger: Trigger, now: u64) -> Fire {
    let (detail, since_ms, context_pct) = match trigger {
        Trigger::Blocked => (Some(Detail::Permission), 4200, 37),
        Trigger::ContextHigh => (
            None,
            60_000,
            config
                .context_high
                .as_ref()
                .and_then(|c| c.threshold)
                .unwrap_or(90),
        ),
        Trigger::Stall => (
            None,
            config
                .stall
                .as_ref()
                .and_then(|s| s.threshold_s)
                .map_or(900_000, |s| s.saturating_mul(1000))
                .saturating_add(1000),
            37,
        ),
        _ => (None, 4200, 37),
    };
    Fire {
        agent: "claude".into(),
        pane: "%0".into(),
        state: trigger,
        detail,
        session: "corral-test".into(),
        locator: "corral-test:0.0".into(),
        title: config
            .include_title
            .then(|| "corral notify-test".to_owned()),
        repo: "corral".into(),
        branch: "main".into(),
        since_ms,
        episode_ms: now.saturating_sub(since_ms),
        context_pct: Some(context_pct),
    }
}

/// The payload a command reads on stdin.
pub fn payload(fire: &Fire) -> NotifyPayload {
    NotifyPayload {
        schema: NOTIFY_SCHEMA_VERSION,
        fire: fire.clone(),
    }
}

/// One log line: the payload, or the completion, with `at`.
pub fn log_line(entry: LogEntry, at: u64) -> NotifyLogLine {
    NotifyLogLine {
        schema: NOTIFY_SCHEMA_VERSION,
        at,
        entry,
    }
}

/// The payload of a detached action's completion.
pub fn completion_payload(completion: &Completion, exit_code: Option<i32>) -> CompletionPayload {
    CompletionPayload {
        schema: NOTIFY_SCHEMA_VERSION,
        completion: completion.clone(),
        exit_code,
    }
}

/// The status-line text of a fire: `corral: claude blocked (permission) at work:1.0`; the
/// percent for `context_high`. Never the title.
pub fn status_text(fire: &Fire) -> String {
    let mut text = format!("corral: {} {}", fire.agent, fire.state);
    if let Some(detail) = &fire.detail {
        text.push_str(&format!(" ({detail})"));
    }
    if let (Trigger::ContextHigh, Some(pct)) = (&fire.state, fire.context_pct) {
        text.push_str(&format!(" {pct}%"));
    }
    text.push_str(&format!(" at {}", fire.locator));
    status_message(&text)
}

/// The status-line text of a completion: `corral: claude run-tests exited 0 at work:1.0`.
pub fn completion_text(completion: &Completion, exit_code: Option<i32>) -> String {
    let mut text = format!(
        "corral: {} {} {}",
        completion.agent, completion.action, completion.outcome
    );
    if let Some(code) = exit_code {
        text.push_str(&format!(" {code}"));
    }
    text.push_str(&format!(" at {}", completion.locator));
    status_message(&text)
}

/// A message for `display-message`: printable characters only, at most 200 of them, every `#`
/// doubled because tmux expands the message as a format, and every `%` doubled because it runs
/// the message through strftime(3) first (tmux 3.3a prints `display -p '%d'` as the day of the
/// month, `%%` as `%`): an agent named `50%done` must not show a date.
fn status_message(text: &str) -> String {
    text.chars()
        .filter(|c| !c.is_control())
        .take(200)
        .collect::<String>()
        .replace('#', "##")
        .replace('%', "%%")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A notification environment by variable name, as the command sees it.
    struct Named {
        set: Vec<(&'static str, String)>,
        remove: Vec<&'static str>,
    }

    fn named(env: NotifyEnv) -> Named {
        Named {
            set: env.set.into_iter().map(|(v, x)| (v.as_str(), x)).collect(),
            remove: env.remove.into_iter().map(|v| v.as_str()).collect(),
        }
    }

    fn env(fire: &Fire) -> Named {
        named(NotifyEnv::of_fire(fire))
    }

    fn completion_env(completion: &Completion, exit_code: Option<i32>) -> Named {
        named(NotifyEnv::of_completion(completion, exit_code))
    }
    use crate::testing::row;
    use schema::{Action, Outcome, State};

    fn blocked_pane() -> Pane {
        let mut row = row("%4", State::Blocked);
        row.detail = Some(Detail::Permission);
        row.since_ms = Some(1_763_780_412_000);
        row.episode_ms = 1_763_780_412_000;
        row.repo = Some("api".into());
        row.branch = Some("main".into());
        row.locator = "work:1.0".into();
        row.context = Some(37);
        let mut pane = Pane::of_row(row);
        pane.facts.title = Some("TITLE-CANARY".into());
        pane
    }

    #[test]
    fn the_payload_has_the_documented_keys_in_order() {
        let fire = fire(&blocked_pane(), Trigger::Blocked, 1_763_780_416_200, false);
        assert_eq!(
            serde_json::to_string(&payload(&fire)).unwrap(),
            r#"{"schema":2,"agent":"claude","pane":"%4","state":"blocked","detail":"permission","session":"work","locator":"work:1.0","repo":"api","branch":"main","since_ms":4200,"episode_ms":1763780412000,"context_pct":37}"#
        );
    }

    #[test]
    fn the_title_is_in_the_payload_the_log_and_the_env_together_or_nowhere() {
        let pane = blocked_pane();
        let hidden = fire(&pane, Trigger::Blocked, 1_763_780_416_200, false);
        let shown = fire(&pane, Trigger::Blocked, 1_763_780_416_200, true);
        for (f, present) in [(&hidden, false), (&shown, true)] {
            let payload = serde_json::to_string(&payload(f)).unwrap();
            let log = serde_json::to_string(&log_line(LogEntry::Fire(f.clone()), 7)).unwrap();
            let env = env(f);
            assert_eq!(payload.contains("TITLE-CANARY"), present, "{payload}");
            assert_eq!(log.contains("TITLE-CANARY"), present, "{log}");
            assert_eq!(env.set.iter().any(|(k, _)| *k == "CORRAL_TITLE"), present);
            assert_eq!(env.remove.contains(&"CORRAL_TITLE"), !present);
            assert!(!status_text(f).contains("TITLE"));
        }
        let log =
            serde_json::to_string(&log_line(LogEntry::Fire(hidden), 1_763_780_416_200)).unwrap();
        assert_eq!(
            log,
            r#"{"schema":2,"at":1763780416200,"agent":"claude","pane":"%4","state":"blocked","detail":"permission","session":"work","locator":"work:1.0","repo":"api","branch":"main","since_ms":4200,"episode_ms":1763780412000,"context_pct":37}"#
        );
    }

    #[test]
    fn stall_measures_the_working_run_and_unknown_starts_are_zero() {
        let mut pane = blocked_pane();
        pane.row.state = State::Working;
        pane.row.since_ms = Some(1000);
        pane.row.episode_ms = 5000;
        assert_eq!(fire(&pane, Trigger::Stall, 10_000, false).since_ms, 9000);
        assert_eq!(fire(&pane, Trigger::Blocked, 10_000, false).since_ms, 5000);
        pane.row.since_ms = None;
        pane.row.episode_ms = 0;
        assert_eq!(fire(&pane, Trigger::Stall, 10_000, false).since_ms, 0);
        assert_eq!(fire(&pane, Trigger::Blocked, 10_000, false).since_ms, 0);
    }

    #[test]
    fn the_env_sets_what_has_a_value_and_removes_the_rest() {
        let mut pane = blocked_pane();
        pane.row.repo = None;
        pane.row.detail = None;
        pane.row.context = None;
        let env = env(&fire(&pane, Trigger::Done, 1_763_780_416_200, false));
        let names: Vec<&str> = env.set.iter().map(|(k, _)| *k).collect();
        assert_eq!(
            names,
            [
                "CORRAL_AGENT",
                "CORRAL_PANE",
                "CORRAL_STATE",
                "CORRAL_LOCATOR",
                "CORRAL_BRANCH",
                "CORRAL_SESSION",
                "CORRAL_SINCE_MS",
                "CORRAL_EPISODE_MS"
            ]
        );
        assert_eq!(
            env.remove,
            [
                "CORRAL_REPO",
                "CORRAL_DETAIL",
                "CORRAL_CONTEXT_PCT",
                "CORRAL_TITLE"
            ]
        );
        assert!(env.set.contains(&("CORRAL_STATE", "done".into())));
    }

    #[test]
    fn status_text_names_agent_state_and_locator_and_escapes_formats() {
        let mut pane = blocked_pane();
        pane.row.agent = "cl#{pane_id}\x07aude".into();
        let text = status_text(&fire(&pane, Trigger::Blocked, 0, false));
        assert_eq!(
            text,
            "corral: cl##{pane_id}aude blocked (permission) at work:1.0"
        );
        let mut pane = blocked_pane();
        pane.row.detail = None;
        pane.row.context = Some(91);
        let text = status_text(&fire(&pane, Trigger::ContextHigh, 0, false));
        assert_eq!(text, "corral: claude context_high 91%% at work:1.0");
        let mut pane = blocked_pane();
        pane.row.agent = "50%done %Y".into();
        let text = status_text(&fire(&pane, Trigger::Blocked, 0, false));
        assert_eq!(
            text,
            "corral: 50%%done %%Y blocked (permission) at work:1.0"
        );
    }

    #[test]
    fn a_completion_payload_and_env_carry_action_outcome_and_exit_code() {
        let completion = Completion {
            agent: "claude".into(),
            pane: "%4".into(),
            action: Action::parse("run-tests").unwrap(),
            outcome: Outcome::Exited,
            session: "work".into(),
            locator: "work:1.0".into(),
            repo: "api".into(),
            branch: "".into(),
        };
        assert_eq!(
            serde_json::to_string(&completion_payload(&completion, Some(3))).unwrap(),
            r#"{"schema":2,"agent":"claude","pane":"%4","action":"run-tests","outcome":"exited","session":"work","locator":"work:1.0","repo":"api","branch":"","exit_code":3}"#
        );
        let env = completion_env(&completion, Some(3));
        assert!(env.set.contains(&("CORRAL_EXIT_CODE", "3".into())));
        assert!(env.set.contains(&("CORRAL_OUTCOME", "exited".into())));
        assert!(env.remove.contains(&"CORRAL_BRANCH"));
        assert!(env.remove.contains(&"CORRAL_STATE"));
        assert_eq!(
            completion_text(&completion, Some(3)),
            "corral: claude run-tests exited 3 at work:1.0"
        );
    }
}
