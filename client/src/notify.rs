//! What a ring runs besides the bell: the configured command, `sh -c`, with the payload the
//! host's own notification command reads (`notify-payload.schema.json`, trigger `blocked`) on its
//! stdin and the same `CORRAL_*` variables, plus `CORRAL_HOST`: the configured name of the host
//! the pane is on.

use schema::notify::Fire;
use schema::{FleetRow, NotifyEnv, NotifyPayload, NotifyVar, Trigger};

use crate::process;

/// The payload and the environment of a ring for `row` of host `host` at `now_ms`: the host's
/// own fire's ([`NotifyEnv::of_fire`], which sets what has a value and removes the rest, as the
/// host's daemon does), plus `CORRAL_HOST`.
pub fn payload(host: &str, row: &FleetRow, now_ms: u64) -> (String, NotifyEnv) {
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
    let mut env = NotifyEnv::of_fire(&fire);
    env.put(NotifyVar::Host, Some(host.to_owned()));
    let payload = NotifyPayload {
        schema: schema::notify::NOTIFY_SCHEMA_VERSION,
        fire,
    };
    let mut json = serde_json::to_string(&payload).expect("a payload always encodes");
    json.push('\n');
    (json, env)
}

/// Runs the ring command for `row`; why it did not run, when it did not.
pub fn run(command: &str, host: &str, row: &FleetRow, now_ms: u64) -> Result<(), String> {
    let (json, env) = payload(host, row, now_ms);
    process::run_notify_command(command, json, &env)
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
        assert!(env.set.contains(&(NotifyVar::Host, "studio".into())));
        assert!(env.set.contains(&(NotifyVar::Detail, "permission".into())));
        // What has no value is removed, so an inherited one never reaches the command.
        assert!(env.remove.contains(&NotifyVar::Branch));
        assert!(env.remove.contains(&NotifyVar::ContextPct));
        assert!(env.remove.contains(&NotifyVar::Title));
        assert!(!env.set.iter().any(|(v, _)| *v == NotifyVar::Branch));
    }
}
