//! Dispatch slots: the idempotency keys the client derives, so that pressing a key twice sends the
//! same slot and the host answers the first receipt, cached.
//!
//! An answer to what a card asks (approve, deny, a question's reply or rejection, an interrupt)
//! is derived from the pane, the card's episode, the permission request it quotes and the action:
//! `%4:1763780412000:approve`, the protocol's own convention. The permission request is written
//! only when the episode is 0: every dialog is an episode of its own (docs/protocol.md
//! "Episode"), so a non-zero episode already names it, and only a pane with no episode needs the
//! request to tell two dialogs apart. The host is not written: a slot is only ever sent to its
//! host, whose ledger is the host's alone, so two hosts never share a slot; and two names for one
//! host answering the same dialog is one answer, which is what the ledger then gives.
//!
//! Text (steer) is different: two lines typed to one pane are two actions. Its slot is minted once
//! per composed line (`%6:1763780300000:steer:<nonce>`), so resending that line after a lost
//! receipt is still idempotent, and the next line is not mistaken for it.

use schema::Action;

/// What an answer to a card is derived from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AnswerKey<'a> {
    /// Pane id.
    pub pane: &'a str,
    /// The episode the card's binder quotes.
    pub episode_ms: u64,
    /// The permission request the card's binder quotes.
    pub permission_request: Option<&'a str>,
    /// The action.
    pub action: &'a Action,
}

/// The slot of an answer: the same key gives the same slot, every time, in every process.
pub fn answer_slot(key: AnswerKey<'_>) -> String {
    let AnswerKey {
        pane,
        episode_ms,
        permission_request,
        action,
    } = key;
    match (episode_ms, permission_request) {
        (0, Some(request)) => format!("{pane}:0:{action}:{request}"),
        _ => format!("{pane}:{episode_ms}:{action}"),
    }
}

/// The slot of one composed line of text: `nonce` is minted once per line by the caller
/// ([`Nonces`]).
pub fn text_slot(pane: &str, episode_ms: u64, action: &Action, nonce: &str) -> String {
    format!("{pane}:{episode_ms}:{action}:{nonce}")
}

/// Mints the nonces of composed lines: the time the line was composed and a counter, so two
/// lines in one millisecond, or in two runs of the client, never share one.
#[derive(Debug, Default)]
pub struct Nonces {
    next: u64,
}

impl Nonces {
    /// A nonce for a line composed at `now_ms`.
    pub fn mint(&mut self, now_ms: u64) -> String {
        self.next += 1;
        format!("{now_ms}-{}", self.next)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key<'a>(
        pane: &'a str,
        episode_ms: u64,
        request: Option<&'a str>,
        action: &'a Action,
    ) -> AnswerKey<'a> {
        AnswerKey {
            pane,
            episode_ms,
            permission_request: request,
            action,
        }
    }

    #[test]
    fn the_same_answer_gives_the_same_slot() {
        let approve = Action::Approve;
        let first = answer_slot(key("%4", 1763780412000, Some("req-7"), &approve));
        let again = answer_slot(key("%4", 1763780412000, Some("req-7"), &approve));
        assert_eq!(first, again);
        assert_eq!(first, "%4:1763780412000:approve");
    }

    #[test]
    fn another_episode_pane_or_action_gives_another_slot() {
        let (approve, deny) = (Action::Approve, Action::Deny);
        let base = answer_slot(key("%4", 1763780412000, Some("req-7"), &approve));
        for other in [
            answer_slot(key("%4", 1763780412001, Some("req-7"), &approve)),
            answer_slot(key("%5", 1763780412000, Some("req-7"), &approve)),
            answer_slot(key("%4", 1763780412000, Some("req-7"), &deny)),
        ] {
            assert_ne!(base, other);
        }
    }

    #[test]
    fn without_an_episode_the_request_tells_two_dialogs_apart() {
        let approve = Action::Approve;
        let one = answer_slot(key("%4", 0, Some("req-1"), &approve));
        let two = answer_slot(key("%4", 0, Some("req-2"), &approve));
        assert_ne!(one, two);
        assert_eq!(one, "%4:0:approve:req-1");
        assert_eq!(answer_slot(key("%4", 0, None, &approve)), "%4:0:approve");
    }

    #[test]
    fn every_composed_line_has_a_slot_of_its_own() {
        let mut nonces = Nonces::default();
        let steer = Action::Steer;
        let a = text_slot("%6", 5, &steer, &nonces.mint(1000));
        let b = text_slot("%6", 5, &steer, &nonces.mint(1000));
        assert_ne!(a, b);
        assert_eq!(a, "%6:5:steer:1000-1");
    }
}
