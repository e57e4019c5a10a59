//! Claiming a fire through its pane marker (docs/protocol.md "Detection paths and
//! deduplication"): under the host-wide marker lock, one tmux invocation tests the marker as tmux
//! holds it now and, only when it does not already announce the episode, writes it, reads it
//! back and shows the fire's status-line message. A fire happens only after its claim: a crash
//! between the two drops the fire, never doubles it, and the daemon and an agent's event hook,
//! which both claim this way, cannot both fire one episode.

use std::time::Duration;

use super::NotifyTmux;
use super::trigger::Marker;
use crate::files;
use crate::runtime::RuntimeDir;
use crate::tmux::write::{Claimed, MarkerClaim, OptionWrite, PanePlace};

/// How long a claim waits for the marker lock.
pub const LOCK_WAIT: Duration = Duration::from_secs(2);

/// What a claim found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Claim {
    /// The marker now holds the value: fire, at the pane's tty and directory as tmux printed
    /// them with the claim.
    Claimed(PanePlace),
    /// Another path already announced it: do not fire.
    Taken,
    /// The marker could not be read or written: do not fire.
    Failed(String),
}

/// The status-line message a won claim shows, in the claim's own invocation (sink 1 of the
/// fire).
#[derive(Debug, Clone, Copy)]
pub struct Status<'a> {
    /// The attached clients.
    pub clients: &'a [String],
    /// The message; none for a claim that rings nothing (a muted pane).
    pub message: Option<&'a str>,
}

/// Claims `value` in `pane`'s `marker`, showing `status` when the claim is won.
pub fn claim<T: NotifyTmux>(
    tmux: &T,
    runtime: &RuntimeDir,
    pane: &str,
    marker: Marker,
    value: &str,
    status: &Status<'_>,
) -> Claim {
    let lock = match files::lock_within(&runtime.marker_lock(), LOCK_WAIT) {
        Ok(Some(lock)) => lock,
        Ok(None) => return Claim::Failed("the marker lock stayed busy".into()),
        Err(err) => return Claim::Failed(format!("the marker lock: {err}")),
    };
    let claimed = tmux.claim_marker(&MarkerClaim {
        pane,
        option: marker.option(),
        value,
        held: marker.held(),
        clients: status.clients,
        message: status.message,
    });
    drop(lock);
    match claimed {
        Ok(Claimed::Won { status, pane: at }) => {
            if let Some(why) = status {
                tracing::warn!(%pane, %why, "the status-line message was not shown");
            }
            Claim::Claimed(at)
        }
        Ok(Claimed::Held) => Claim::Taken,
        Err(err) => Claim::Failed(err.to_string()),
    }
}

/// Unsets `pane`'s `marker`: its trigger is armed again.
pub fn rearm<T: NotifyTmux>(tmux: &T, pane: &str, marker: Marker) {
    if let Err(err) = tmux.set_pane_options(pane, &[OptionWrite::Unset(marker.option())]) {
        tracing::warn!(%pane, marker = marker.option().as_str(), %err, "rearming a trigger failed");
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::ScriptedTmux;

    /// A claim that shows nothing.
    const QUIET: Status<'static> = Status {
        clients: &[],
        message: None,
    };

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
            claim(&tmux, &runtime, "%1", Marker::Notified, "900", &QUIET),
            Claim::Claimed(PanePlace::default())
        );
        assert_eq!(
            tmux.option("%1", "@agent_notified_at").as_deref(),
            Some("900")
        );
        assert_eq!(
            claim(&tmux, &runtime, "%1", Marker::Notified, "900", &QUIET),
            Claim::Taken,
            "a second path finds the episode announced"
        );
        assert_eq!(
            claim(&tmux, &runtime, "%1", Marker::Notified, "950", &QUIET),
            Claim::Claimed(PanePlace::default())
        );
    }

    #[test]
    fn only_a_won_claim_shows_its_message_and_in_its_own_invocation() {
        let (_dir, runtime) = runtime();
        let tmux = ScriptedTmux::with_panes(&["%1"]);
        tmux.attach(&["/dev/pts/1", "/dev/pts/2"]);
        let clients = tmux.clients();
        let status = Status {
            clients: &clients,
            message: Some("corral: claude blocked at work:0.1"),
        };
        let claimed = claim(&tmux, &runtime, "%1", Marker::Notified, "900", &status);
        assert_eq!(claimed, Claim::Claimed(PanePlace::default()));
        assert_eq!(tmux.take_calls(), ["claim_marker"]);
        assert_eq!(tmux.messages().len(), 2, "{:?}", tmux.messages());
        let again = claim(&tmux, &runtime, "%1", Marker::Notified, "900", &status);
        assert_eq!(again, Claim::Taken);
        assert_eq!(tmux.messages().len(), 2, "a held claim shows nothing");
        let gone = claim(&tmux, &runtime, "%9", Marker::Notified, "900", &status);
        assert!(matches!(gone, Claim::Failed(_)));
        assert_eq!(tmux.messages().len(), 2, "a failed claim shows nothing");
    }

    #[test]
    fn a_marker_that_cannot_be_written_or_read_claims_nothing() {
        let (_dir, runtime) = runtime();
        let tmux = ScriptedTmux::with_panes(&["%1"]);
        tmux.fail_writes(true);
        assert!(matches!(
            claim(&tmux, &runtime, "%1", Marker::Notified, "900", &QUIET),
            Claim::Failed(_)
        ));
        tmux.fail_writes(false);
        assert!(matches!(
            claim(&tmux, &runtime, "%9", Marker::Notified, "900", &QUIET),
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
        let elsewhere = runtime.clone();
        let claimed = crate::threads::spawn(move || {
            let tmux = ScriptedTmux::with_panes(&["%1"]);
            claim(&tmux, &elsewhere, "%1", Marker::Notified, "1", &QUIET)
        })
        .join()
        .unwrap();
        assert!(matches!(claimed, Claim::Failed(_)), "{claimed:?}");
        drop(held);
        assert_eq!(
            claim(&tmux, &runtime, "%1", Marker::Notified, "1", &QUIET),
            Claim::Claimed(PanePlace::default())
        );
    }

    #[test]
    fn context_high_holds_while_any_value_is_set_and_rearm_unsets_it() {
        let (_dir, runtime) = runtime();
        let tmux = ScriptedTmux::with_panes(&["%1"]);
        assert_eq!(
            claim(&tmux, &runtime, "%1", Marker::Context, "5", &QUIET),
            Claim::Claimed(PanePlace::default())
        );
        assert_eq!(
            claim(&tmux, &runtime, "%1", Marker::Context, "6", &QUIET),
            Claim::Taken
        );
        rearm(&tmux, "%1", Marker::Context);
        assert_eq!(tmux.option("%1", "@agent_context_notified_at"), None);
        assert_eq!(
            claim(&tmux, &runtime, "%1", Marker::Context, "7", &QUIET),
            Claim::Claimed(PanePlace::default())
        );
    }
}
