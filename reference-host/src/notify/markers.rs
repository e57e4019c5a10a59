//! Claiming a fire through its pane marker (docs/protocol.md "Detection paths and
//! deduplication"): under the host-wide marker lock, the marker is read afresh from tmux, and
//! written and read back only when it does not already announce the episode. A fire happens
//! only after its claim: a crash between the two drops the fire, never doubles it, and the daemon
//! and an agent's event hook, which both claim this way, cannot both fire one episode.

use std::time::Duration;

use super::NotifyTmux;
use super::trigger::Marker;
use crate::files;
use crate::runtime::RuntimeDir;
use crate::tmux::write::OptionWrite;

/// How long a claim waits for the marker lock.
pub const LOCK_WAIT: Duration = Duration::from_secs(2);

/// What a claim found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Claim {
    /// The marker now holds the value: fire.
    Claimed,
    /// Another path already announced it: do not fire.
    Taken,
    /// The marker could not be read or written: do not fire.
    Failed(String),
}

/// Claims `value` in `pane`'s `marker`.
pub fn claim<T: NotifyTmux>(
    tmux: &T,
    runtime: &RuntimeDir,
    pane: &str,
    marker: Marker,
    value: &str,
) -> Claim {
    let lock = match files::lock_within(&runtime.marker_lock(), LOCK_WAIT) {
        Ok(Some(lock)) => lock,
        Ok(None) => return Claim::Failed("the marker lock stayed busy".into()),
        Err(err) => return Claim::Failed(format!("the marker lock: {err}")),
    };
    let current = match tmux.pane_option(pane, marker.option()) {
        Ok(current) => current,
        Err(err) => return Claim::Failed(err.to_string()),
    };
    if marker.taken(current.as_deref(), value) {
        return Claim::Taken;
    }
    let claim = match tmux.set_pane_option_confirmed(pane, marker.option(), value) {
        Ok(true) => Claim::Claimed,
        Ok(false) => Claim::Failed(format!("{} did not keep its value", marker.option())),
        Err(err) => Claim::Failed(err.to_string()),
    };
    drop(lock);
    claim
}

/// Unsets `pane`'s `marker`: its trigger is armed again.
pub fn rearm<T: NotifyTmux>(tmux: &T, pane: &str, marker: Marker) {
    if let Err(err) = tmux.set_pane_options(pane, &[OptionWrite::Unset(marker.option())]) {
        tracing::warn!(%pane, marker = marker.option(), %err, "rearming a trigger failed");
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::ScriptedTmux;

    fn runtime() -> (tempfile::TempDir, RuntimeDir) {
        let dir = tempfile::tempdir().unwrap();
        let runtime = RuntimeDir::open(dir.path()).unwrap();
        (dir, runtime)
    }

    #[test]
    fn a_claim_writes_the_marker_once_and_then_finds_it_taken() {
        let (_dir, runtime) = runtime();
        let tmux = ScriptedTmux::with_panes(&["%1"]);
        assert_eq!(
            claim(&tmux, &runtime, "%1", Marker::Notified, "900"),
            Claim::Claimed
        );
        assert_eq!(
            tmux.option("%1", "@agent_notified_at").as_deref(),
            Some("900")
        );
        assert_eq!(
            claim(&tmux, &runtime, "%1", Marker::Notified, "900"),
            Claim::Taken,
            "a second path finds the episode announced"
        );
        assert_eq!(
            claim(&tmux, &runtime, "%1", Marker::Notified, "950"),
            Claim::Claimed
        );
    }

    #[test]
    fn a_marker_that_cannot_be_written_or_read_claims_nothing() {
        let (_dir, runtime) = runtime();
        let tmux = ScriptedTmux::with_panes(&["%1"]);
        tmux.fail_writes(true);
        assert!(matches!(
            claim(&tmux, &runtime, "%1", Marker::Notified, "900"),
            Claim::Failed(_)
        ));
        tmux.fail_writes(false);
        assert!(matches!(
            claim(&tmux, &runtime, "%9", Marker::Notified, "900"),
            Claim::Failed(_)
        ));
    }

    #[test]
    fn a_held_marker_lock_claims_nothing() {
        let (_dir, runtime) = runtime();
        let tmux = ScriptedTmux::with_panes(&["%1"]);
        let held = files::lock_within(&runtime.marker_lock(), LOCK_WAIT)
            .unwrap()
            .unwrap();
        std::thread::scope(|scope| {
            let claimed = scope
                .spawn(|| {
                    let tmux = ScriptedTmux::with_panes(&["%1"]);
                    claim(&tmux, &runtime, "%1", Marker::Notified, "1")
                })
                .join()
                .unwrap();
            assert!(matches!(claimed, Claim::Failed(_)), "{claimed:?}");
        });
        drop(held);
        assert_eq!(
            claim(&tmux, &runtime, "%1", Marker::Notified, "1"),
            Claim::Claimed
        );
    }

    #[test]
    fn context_high_holds_while_any_value_is_set_and_rearm_unsets_it() {
        let (_dir, runtime) = runtime();
        let tmux = ScriptedTmux::with_panes(&["%1"]);
        assert_eq!(
            claim(&tmux, &runtime, "%1", Marker::Context, "5"),
            Claim::Claimed
        );
        assert_eq!(
            claim(&tmux, &runtime, "%1", Marker::Context, "6"),
            Claim::Taken
        );
        rearm(&tmux, "%1", Marker::Context);
        assert_eq!(tmux.option("%1", "@agent_context_notified_at"), None);
        assert_eq!(
            claim(&tmux, &runtime, "%1", Marker::Context, "7"),
            Claim::Claimed
        );
    }
}
