//! What a ring runs besides the bell: the configured command, `sh -c`, with the payload the
//! host's own notification command reads (`notify-payload.schema.json`, trigger `blocked`) on its
//! stdin and the same `CORRAL_*` variables, plus `CORRAL_HOST`: the configured name of the host
//! the pane is on.

use schema::notify::Fire;
use schema::{FleetRow, NotifyPayload, Trigger};

use crate::process;

/// The payload and the environment of a ring for `row` of host `host` at `now_ms`.
pub fn payload(host: &str, row: &FleetRow, now_ms: u64) -> (String, Vec<(String, String)>) {
    let since_ms = row.since_ms.map_or(0, |since| now_ms.saturating_sub(since));
    let fire = Fire {
        agent: row.agent.clone(),
        pane: row.pane.clone(),
        state: Trigger::Blocked,
        detail: row.detail.clone(),
        session: row.session.clone(),
        locator: row.locator.clone(),
        title: None,
        repo: row.repo.clone().unwrap_or_default(),
        branch: row.branch.clone().unwrap_or_default(),
        since_ms,
        episode_ms: row.episode_ms,
        context_pct: row.context,
    };
    let mut env = vec![
        ("CORRAL_HOST", host.to_owned()),
        ("CORRAL_AGENT", fire.agent.clone()),
        ("CORRAL_PANE", fire.pane.clone()),
        ("CORRAL_STATE", "blocked".to_owned()),
        ("CORRAL_LOCATOR", fire.locator.clone()),
        ("CORRAL_SESSION", fire.session.clone()),
        ("CORRAL_SINCE_MS", since_ms.to_string()),
        ("CORRAL_EPISODE_MS", fire.episode_ms.to_string()),
    ];
    for (name, value) in [
        ("CORRAL_REPO", row.repo.clone()),
        ("CORRAL_BRANCH", row.branch.clone()),
        ("CORRAL_DETAIL", row.detail.as_ref().map(|d| d.to_string())),
        ("CORRAL_CONTEXT_PCT", row.context.map(|c| c.to_string())),
    ] {
        if let Some(value) = value {
            env.push((name, value));
        }
    }
    let payload = NotifyPayload {
        schema: schema::notify::NOTIFY_SCHEMA_VERSION,
        fire,
    };
    let mut json = serde_json::to_string(&payload).expect("a payload always encodes");
    json.push('\n');
    let env = env.into_iter().map(|(k, v)| (k.to_owned(), v)).collect();
    (json, env)
}

/// Runs the ring command for `row`; why it did not run, when it did not.
pub fn run(command: &str, host: &str, row: &FleetRow, now_ms: u64) -> Result<(), String> {
    let (json, env) = payload(host, row, now_ms);
    process::run_notify_command(command, json, env)
}

#[cfg(test)]
mod tests {
    use super::*;
    use client_core::testing::row;
    use schema::{Detail, State};

    #[test]
    fn the_payload_is_the_hosts_own_with_the_host_named_beside_it() {
        let mut blocked = row("%4", State::Blocked);
        blocked.detail = Some(Detail::Permission);
        blocked.since_ms = Some(1_000);
        blocked.episode_ms = 1_000;
        blocked.repo = Some("api".into());
        let (json, env) = payload("studio", &blocked, 5_200);
        assert_eq!(
            json,
            "{\"schema\":2,\"agent\":\"claude\",\"pane\":\"%4\",\"state\":\"blocked\",\"detail\":\"permission\",\"session\":\"work\",\"locator\":\"work:0.0\",\"repo\":\"api\",\"branch\":\"\",\"since_ms\":4200,\"episode_ms\":1000,\"context_pct\":null}\n"
        );
        assert!(env.contains(&("CORRAL_HOST".into(), "studio".into())));
        assert!(env.contains(&("CORRAL_DETAIL".into(), "permission".into())));
        assert!(!env.iter().any(|(k, _)| k == "CORRAL_BRANCH"));
    }
}
