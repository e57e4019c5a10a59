//! One dispatch, through the three gates in order, none substituting for another:
//!
//! 1. **scope** (devices only): the action is in the scope table, some loaded manifest defines
//!    it as an action a device may fire (not `exec`), and the device's current scopes hold the
//!    scope it needs. A refusal is a receipt `refused`/`scope-denied`, exit 4, `cached: false`,
//!    and nothing is recorded, claimed, read or sent. The payload's shape is checked next
//!    (`bad-request`, nothing recorded).
//! 2. **slot**: the slot is claimed in the host-wide ledger before any tmux call. A resolved slot
//!    answers its receipt, `cached: true`; one in flight in a live process is waited for (at
//!    most [`IN_FLIGHT_WAIT`]); one whose claimer died is `error`/`fired-unknown`.
//! 3. **binder**: inside the pane's single-flight lock (at most [`LOCK_WAIT`], else
//!    `refused`/`locked` and the claim is released), on a fresh read of the pane: gone,
//!    uncovered, requirement unmet, episode changed, request gone, then the text's own rules.
//!
//! Then the action fires on its lane (`fire.rs`), and the receipt is written to the ledger before
//! it is answered. A receipt the ledger cannot take (a full disk) is still answered, and its claim
//! abandoned: from then on the slot resolves `error`/`fired-unknown`. `force` does not exist
//! here. The person at the host (`corral act`) goes through gates 2 and 3 and the same fire, with
//! no scope gate.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use schema::manifest::ActionSpec;
use schema::{Action, Outcome, Reason, Receipt, Scope};

use super::fire::{self, Lane};
use super::ledger::{self, Claim, Ledger, LedgerError};
use super::manifest::Manifests;
pub use super::{Order, Surface};
use crate::clock::now_ms;
use crate::fleet::{FleetSource, Pane};
use crate::runtime::RuntimeDir;

/// How long a dispatch waits for a slot another process is dispatching.
pub const IN_FLIGHT_WAIT: Duration = Duration::from_secs(10);
/// How long a dispatch waits for the pane's single-flight lock.
pub const LOCK_WAIT: Duration = Duration::from_secs(2);
/// The longest text a dispatch may send, in bytes.
pub const TEXT_CAP: usize = 4096;

/// A dispatch that is answered with an error frame instead of a receipt.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Refusal {
    /// The payload does not fit the action (`bad-request`); nothing was recorded.
    BadRequest(String),
    /// The host could not decide safely (`internal`): a ledger it cannot read, a tmux read that
    /// failed before anything was fired. The claim, if any, was released.
    Internal(String),
}

/// What a dispatch needs besides the fleet.
#[derive(Debug)]
pub struct Dispatcher<'a> {
    pub manifests: &'a Manifests,
    pub runtime: &'a RuntimeDir,
    pub ledger: &'a mut Ledger,
    /// `[act] log`, expanded.
    pub act_log: Option<PathBuf>,
    /// How this process runs a detached `exec` action: `corral act` has it, `serve` does not
    /// (a device never fires `exec`).
    pub exec: Option<super::exec::Exec>,
}

/// The scope an action needs, or `None` for an action outside the scope table.
pub fn scope_needed(action: &Action) -> Option<Scope> {
    match action {
        Action::Approve | Action::Deny | Action::QuestionReply | Action::QuestionReject => {
            Some(Scope::ActAnswer)
        }
        Action::ApproveAlways => Some(Scope::ActAlways),
        Action::Steer | Action::SteerNow | Action::Interrupt | Action::DenyWithMessage => {
            Some(Scope::ActSteer)
        }
        Action::Other(_) => None,
    }
}

/// What payload an action takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Payload {
    None,
    Text,
    Answers,
}

fn payload_of(action: &Action) -> Payload {
    match action {
        Action::Steer | Action::SteerNow | Action::DenyWithMessage => Payload::Text,
        Action::QuestionReply => Payload::Answers,
        _ => Payload::None,
    }
}

/// A receipt for `order` at `at_ms`.
pub fn receipt(order: &Order<'_>, outcome: Outcome, reason: Option<Reason>, at_ms: u64) -> Receipt {
    Receipt {
        slot: order.slot.to_owned(),
        pane: order.pane.to_owned(),
        action: order.action.clone(),
        exit_code: exit_code(&outcome, reason.as_ref()),
        outcome,
        reason,
        cached: false,
        device: order.surface.device().to_owned(),
        at_ms,
    }
}

/// The exit code of an outcome: sent/replied/spawned 0, refused 4 (locked 5), vanished 3,
/// error 1, timeout 124.
pub fn exit_code(outcome: &Outcome, reason: Option<&Reason>) -> i32 {
    match (outcome, reason) {
        (Outcome::Refused, Some(Reason::Locked)) => 5,
        (Outcome::Sent | Outcome::Replied | Outcome::Spawned, _) => 0,
        (Outcome::Refused, _) => 4,
        (Outcome::Vanished, _) => 3,
        (Outcome::Timeout, _) => 124,
        (Outcome::Error | Outcome::Exited | Outcome::Other(_), _) => 1,
    }
}

/// The refusal of a dispatch the ledger cannot answer (unreadable, or no room to write): every
/// caller of it has fired nothing, and says so.
fn internal(err: LedgerError) -> Refusal {
    tracing::error!(%err, "the ledger cannot answer");
    Refusal::Internal(
        "the host's dispatch ledger cannot be read or written (see the host's log); nothing was fired"
            .into(),
    )
}

/// Runs `order` through the gates and fires it: its receipt, or an error frame's refusal.
pub fn dispatch<S: FleetSource>(
    fleet: &mut S,
    d: &mut Dispatcher<'_>,
    order: &Order<'_>,
) -> Result<Receipt, Refusal> {
    // Gate 1: scope. Nothing is claimed, read or sent before it passes.
    if let Surface::Device { scopes, .. } = &order.surface {
        let permitted = scope_needed(order.action).is_some_and(|needed| scopes.contains(&needed))
            && d.manifests.device_reachable(order.action);
        if !permitted {
            return Ok(receipt(
                order,
                Outcome::Refused,
                Some(Reason::ScopeDenied),
                now_ms(),
            ));
        }
    }
    check_payload(order)?;
    // Gate 2: the slot.
    let claimed_at = now_ms();
    let request = ledger::Request {
        slot: order.slot,
        device: order.surface.device(),
        pane: order.pane,
        action: order.action,
    };
    let patience = Instant::now() + IN_FLIGHT_WAIT;
    loop {
        match d.ledger.claim(&request, claimed_at).map_err(internal)? {
            Claim::Claimed => break,
            Claim::Resolved(found) => return Ok(cached(found)),
            // Another live process is dispatching it: wait for its receipt (or its release).
            Claim::InFlight if Instant::now() < patience => {
                std::thread::sleep(Duration::from_millis(20));
            }
            Claim::InFlight => {
                return Ok(receipt(
                    order,
                    Outcome::Refused,
                    Some(Reason::Locked),
                    now_ms(),
                ));
            }
        }
    }
    // Gate 3 and the fire, inside the pane's lock; every answer but `locked` resolves the slot.
    let lock_path = d.runtime.pane_lock(order.pane);
    let lock = match crate::files::lock_within(&lock_path, LOCK_WAIT) {
        Ok(Some(lock)) => lock,
        Ok(None) => {
            release(d.ledger, order.slot)?;
            return Ok(receipt(
                order,
                Outcome::Refused,
                Some(Reason::Locked),
                claimed_at,
            ));
        }
        Err(err) => {
            tracing::error!(path = %lock_path.display(), %err, "the pane lock cannot be taken");
            release(d.ledger, order.slot)?;
            return Err(Refusal::Internal(
                "the host cannot lock the pane; see its log".into(),
            ));
        }
    };
    let pane = match fleet.pane(order.pane) {
        Ok(pane) => pane,
        Err(err) => {
            tracing::debug!(%err, "reading the pane for a dispatch failed");
            release(d.ledger, order.slot)?;
            return Err(Refusal::Internal(
                "the host could not read its tmux server".into(),
            ));
        }
    };
    let answer = match binder_gate(pane.as_ref(), d.manifests, d.runtime, order) {
        Err(refused) => receipt(order, refused.0, Some(refused.1), claimed_at),
        Ok((pane, lane)) => {
            let (outcome, reason) =
                fire::fire(fleet, d.runtime, d.exec.as_ref(), pane, order.action, &lane);
            let fired = receipt(order, outcome, reason, claimed_at);
            log_act(d.act_log.as_deref(), order, &fired);
            fired
        }
    };
    // What happened is answered even when the ledger cannot record it: the claim is abandoned,
    // and later askers get `fired-unknown`, never a second fire.
    if let Err(err) = d.ledger.resolve(&answer) {
        tracing::error!(
            %err,
            slot = order.slot,
            "the receipt could not be recorded; the slot resolves fired-unknown from now on"
        );
        d.ledger.abandon();
    }
    drop(lock);
    Ok(answer)
}

/// Releases a claim this dispatch gives back (nothing fired); when the release cannot be
/// written, the claim is abandoned rather than left in flight.
fn release(ledger: &mut Ledger, slot: &str) -> Result<(), Refusal> {
    ledger.release(slot).map_err(|err| {
        ledger.abandon();
        internal(err)
    })
}

fn cached(mut found: Receipt) -> Receipt {
    found.cached = true;
    found
}

fn check_payload(order: &Order<'_>) -> Result<(), Refusal> {
    let bad = |why: &str| Err(Refusal::BadRequest(format!("`{}` {why}", order.action)));
    match (payload_of(order.action), order.text, order.answers) {
        (Payload::Text, None, _) => bad("needs `text`"),
        (Payload::Text, _, Some(_)) => bad("takes no `answers`"),
        (Payload::Answers, _, None) => bad("needs `answers`"),
        (Payload::Answers, Some(_), _) => bad("takes no `text`"),
        (Payload::None, Some(_), _) => bad("takes no `text`"),
        (Payload::None, _, Some(_)) => bad("takes no `answers`"),
        _ => Ok(()),
    }
}

/// A gate-3 refusal: outcome and reason.
struct Refused(Outcome, Reason);

fn refused(reason: Reason) -> Refused {
    Refused(Outcome::Refused, reason)
}

/// Gate 3: the checks, in order, on the fresh read of the pane; the lane the action fires on.
fn binder_gate<'p>(
    pane: Option<&'p Pane>,
    manifests: &Manifests,
    runtime: &RuntimeDir,
    order: &Order<'_>,
) -> Result<(&'p Pane, Lane), Refused> {
    let pane = pane.ok_or(Refused(Outcome::Vanished, Reason::PaneGone))?;
    let row = &pane.row;
    let spec = manifests
        .action(&row.agent, order.action)
        .map(|loaded| &loaded.spec)
        .filter(|spec| {
            // An exec action is never fired by a device.
            !(matches!(order.surface, Surface::Device { .. })
                && matches!(spec, ActionSpec::Exec(_)))
        })
        .ok_or(refused(Reason::NoCoverage))?;
    let requires = spec.requires();
    let state_ok = requires.state.is_none_or(|state| state == row.state);
    let detail_ok = requires.detail.is_empty()
        || row
            .detail
            .as_ref()
            .is_some_and(|detail| requires.detail.contains(detail));
    if !(state_ok && detail_ok) {
        return Err(refused(Reason::RequiresUnmet));
    }
    let binder = order.binder;
    if binder.expect_episode_ms != 0 && binder.expect_episode_ms != row.episode_ms {
        return Err(refused(Reason::EpisodeChanged));
    }
    if let Some(quoted) = &binder.expect_permission_request
        && row.permission_request.as_ref() != Some(quoted)
    {
        return Err(refused(Reason::RequestGone));
    }
    if let Some(text) = order.text {
        check_text(text).map_err(refused)?;
    }
    let lane = fire::lane(pane, spec, runtime, order).map_err(refused)?;
    Ok((pane, lane))
}

/// A text a dispatch may type into an agent: not empty, at most [`TEXT_CAP`] bytes, no control
/// bytes, and no leading `/` or `!` (a slash command or a shell escape, not a message).
pub fn check_text(text: &str) -> Result<(), Reason> {
    if text.trim().is_empty() {
        return Err(Reason::Empty);
    }
    if text.len() > TEXT_CAP {
        return Err(Reason::TooLong);
    }
    if text.chars().any(|c| c.is_control()) {
        return Err(Reason::ControlBytes);
    }
    if text.trim_start().starts_with(['/', '!']) {
        return Err(Reason::Sigil);
    }
    Ok(())
}

/// One line of the act log for a fired action.
fn log_act(path: Option<&std::path::Path>, order: &Order<'_>, fired: &Receipt) {
    let Some(path) = path else { return };
    let (surface, device) = match &order.surface {
        Surface::Device { id, .. } => ("serve", Some(id.as_str())),
        Surface::Cli => ("cli", None),
    };
    let line = serde_json::json!({
        "at_ms": now_ms(),
        "surface": surface,
        "device": device,
        "slot": fired.slot,
        "pane": fired.pane,
        "action": fired.action,
        "outcome": fired.outcome,
        "reason": fired.reason,
        "exit_code": fired.exit_code,
    });
    crate::files::append_log(path, &line.to_string());
}

#[cfg(test)]
mod tests;
