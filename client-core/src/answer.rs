//! What a dispatch answering a card says: the action the choice fires, the binder the card quotes
//! and the slot derived from them ([`super::slot`]). A card only offers what it carries: an
//! approve needs an allow option, a deny a reject option, a reply one answer per question among
//! its options (free text only where the question takes it); an informational card has nothing
//! to fire.

use schema::{Action, Binder, Card, Dispatch, FleetRow, OptionKind, PermissionCard, QuestionCard};

use super::slot::{AnswerKey, answer_slot, text_slot};

/// What the person chose on a card.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Choice {
    /// Allow the permission once.
    Approve,
    /// Reject it.
    Deny,
    /// Reject it, telling the agent why.
    DenyWithMessage(String),
    /// Answer a question card: one entry per question, the chosen labels (or free text).
    Answer(Vec<Vec<String>>),
    /// Dismiss a question card.
    Reject,
}

impl Choice {
    /// The action the choice fires.
    pub fn action(&self) -> Action {
        match self {
            Choice::Approve => Action::Approve,
            Choice::Deny => Action::Deny,
            Choice::DenyWithMessage(_) => Action::DenyWithMessage,
            Choice::Answer(_) => Action::QuestionReply,
            Choice::Reject => Action::QuestionReject,
        }
    }
}

/// The dispatch that answers `card` with `choice`, or why the card does not offer it.
pub fn answer(card: &Card, choice: Choice) -> Result<Dispatch, String> {
    match (card, choice) {
        (
            Card::Permission(card),
            choice @ (Choice::Approve | Choice::Deny | Choice::DenyWithMessage(_)),
        ) => answer_permission(card, choice),
        (Card::Question(card), choice @ (Choice::Answer(_) | Choice::Reject)) => {
            answer_question(card, choice)
        }
        (Card::Permission(card), _) => Err(format!(
            "{} asks for a permission: approve or deny it",
            card.pane
        )),
        (Card::Question(card), _) => Err(format!(
            "{} asks a question: answer or reject it",
            card.pane
        )),
        (Card::Informational(card), _) => Err(format!(
            "nothing to answer from here: the pane is blocked on {} ({})",
            card.detail, card.headline
        )),
        (Card::None, _) => Err("nothing to answer: the pane is not blocked".into()),
    }
}

fn answer_permission(card: &PermissionCard, choice: Choice) -> Result<Dispatch, String> {
    let offered = |wanted: &[OptionKind]| card.options.iter().any(|o| wanted.contains(&o.kind));
    let text = match &choice {
        Choice::Approve if !offered(&[OptionKind::AllowOnce]) => {
            return Err(format!(
                "the host offers no approve for {} (no allow-once option on its card)",
                card.pane
            ));
        }
        Choice::Deny | Choice::DenyWithMessage(_)
            if !offered(&[OptionKind::RejectOnce, OptionKind::RejectAlways]) =>
        {
            return Err(format!(
                "the host offers no deny for {} (no reject option on its card)",
                card.pane
            ));
        }
        Choice::DenyWithMessage(text) => Some(text.clone()),
        _ => None,
    };
    Ok(dispatch(
        &card.pane,
        &card.binder,
        choice.action(),
        text,
        None,
    ))
}

fn answer_question(card: &QuestionCard, choice: Choice) -> Result<Dispatch, String> {
    let answers = match choice {
        Choice::Answer(answers) => {
            check_answers(card, &answers)?;
            Some(answers)
        }
        _ => None,
    };
    Ok(dispatch(
        &card.pane,
        &card.binder,
        choice_action(answers.is_some()),
        None,
        answers,
    ))
}

fn choice_action(reply: bool) -> Action {
    if reply {
        Action::QuestionReply
    } else {
        Action::QuestionReject
    }
}

/// One entry per question, each with a choice, one only unless the question takes several,
/// among its options unless it takes free text.
pub fn check_answers(card: &QuestionCard, answers: &[Vec<String>]) -> Result<(), String> {
    if answers.len() != card.questions.len() {
        return Err(format!(
            "{} asks {} question(s); the answer has {}",
            card.pane,
            card.questions.len(),
            answers.len()
        ));
    }
    for (n, (question, chosen)) in card.questions.iter().zip(answers).enumerate() {
        let n = n + 1;
        if chosen.is_empty() || chosen.iter().any(|c| c.trim().is_empty()) {
            return Err(format!("question {n} ({}) has no answer", question.header));
        }
        if !question.multiple && chosen.len() > 1 {
            return Err(format!(
                "question {n} ({}) takes one choice, not {}",
                question.header,
                chosen.len()
            ));
        }
        if !question.custom
            && let Some(stray) = chosen
                .iter()
                .find(|c| !question.options.iter().any(|o| &o.label == *c))
        {
            return Err(format!(
                "question {n} ({}) has no option {stray:?} and takes no free text",
                question.header
            ));
        }
    }
    Ok(())
}

fn dispatch(
    pane: &str,
    binder: &Binder,
    action: Action,
    text: Option<String>,
    answers: Option<Vec<Vec<String>>>,
) -> Dispatch {
    let slot = answer_slot(AnswerKey {
        pane,
        episode_ms: binder.expect_episode_ms,
        permission_request: binder.expect_permission_request.as_deref(),
        action: &action,
    });
    Dispatch {
        slot,
        host: String::new(),
        pane: pane.to_owned(),
        action,
        binder: binder.clone(),
        text,
        answers,
    }
}

/// A line of text for a pane (`steer`, or `steer_now`, which interrupts first), quoting the
/// episode its row showed when the line was composed; `nonce` is the line's own
/// ([`super::slot::Nonces`]).
pub fn steer(pane: &str, row: Option<&FleetRow>, text: String, now: bool, nonce: &str) -> Dispatch {
    let action = if now { Action::SteerNow } else { Action::Steer };
    let episode = row.map_or(0, |r| r.episode_ms);
    Dispatch {
        slot: text_slot(pane, episode, &action, nonce),
        host: String::new(),
        pane: pane.to_owned(),
        action,
        binder: Binder {
            expect_episode_ms: episode,
            expect_permission_request: None,
        },
        text: Some(text),
        answers: None,
    }
}

/// Interrupts a pane (Escape), once per episode.
pub fn interrupt(pane: &str, row: Option<&FleetRow>) -> Dispatch {
    let binder = Binder {
        expect_episode_ms: row.map_or(0, |r| r.episode_ms),
        expect_permission_request: None,
    };
    dispatch(pane, &binder, Action::Interrupt, None, None)
}

#[cfg(test)]
mod tests {
    use super::*;
    use schema::{
        CardOption, Detail, Extraction, InformationalCard, Lane, Question, QuestionOption,
    };

    fn permission(options: Vec<CardOption>) -> Card {
        Card::Permission(PermissionCard {
            pane: "%4".into(),
            agent: "claude".into(),
            lane: Lane::Hook,
            options,
            extraction: Extraction::Exact,
            pending_call: None,
            binder: Binder {
                expect_episode_ms: 1763780412000,
                expect_permission_request: Some("req-7".into()),
            },
        })
    }

    fn option(kind: OptionKind) -> CardOption {
        CardOption {
            kind,
            name: "x".into(),
            option_id: None,
        }
    }

    fn question_card() -> Card {
        let q = |multiple, custom| Question {
            question: "Which?".into(),
            header: "Pick".into(),
            options: vec![
                QuestionOption {
                    label: "src/".into(),
                    description: String::new(),
                },
                QuestionOption {
                    label: "tests/".into(),
                    description: String::new(),
                },
            ],
            multiple,
            custom,
        };
        Card::Question(QuestionCard {
            pane: "%2".into(),
            agent: "opencode".into(),
            request_id: "que-1".into(),
            questions: vec![q(true, false), q(false, true)],
            binder: Binder {
                expect_episode_ms: 1763780200000,
                expect_permission_request: None,
            },
        })
    }

    #[test]
    fn an_approve_quotes_the_cards_binder_under_the_derived_slot() {
        let card = permission(vec![
            option(OptionKind::AllowOnce),
            option(OptionKind::RejectOnce),
        ]);
        let first = answer(&card, Choice::Approve).unwrap();
        assert_eq!(first.slot, "%4:1763780412000:approve");
        assert_eq!(first.action, Action::Approve);
        assert_eq!(
            first.binder.expect_permission_request.as_deref(),
            Some("req-7")
        );
        assert_eq!(first.host, "");
        assert_eq!(
            answer(&card, Choice::Approve).unwrap(),
            first,
            "pressed twice"
        );
        let deny = answer(&card, Choice::DenyWithMessage("not main".into())).unwrap();
        assert_eq!(deny.slot, "%4:1763780412000:deny_with_message");
        assert_eq!(deny.text.as_deref(), Some("not main"));
    }

    #[test]
    fn a_card_offers_only_what_it_carries() {
        let no_options = permission(Vec::new());
        assert!(
            answer(&no_options, Choice::Approve)
                .unwrap_err()
                .contains("no approve")
        );
        assert!(
            answer(&no_options, Choice::Deny)
                .unwrap_err()
                .contains("no deny")
        );
        let info = Card::Informational(InformationalCard {
            detail: Detail::RateLimit,
            headline: "Rate limited".into(),
        });
        assert_eq!(
            answer(&info, Choice::Approve).unwrap_err(),
            "nothing to answer from here: the pane is blocked on rate_limit (Rate limited)"
        );
        assert!(answer(&Card::None, Choice::Approve).is_err());
        assert!(answer(&question_card(), Choice::Approve).is_err());
    }

    #[test]
    fn a_reply_answers_every_question_within_its_options() {
        let card = question_card();
        let reply = answer(
            &card,
            Choice::Answer(vec![
                vec!["src/".into(), "tests/".into()],
                vec!["only the docs".into()],
            ]),
        )
        .unwrap();
        assert_eq!(reply.slot, "%2:1763780200000:question_reply");
        assert_eq!(reply.answers.as_ref().unwrap().len(), 2);
        let refused = |answers: Vec<Vec<&str>>| {
            let answers = answers
                .into_iter()
                .map(|a| a.into_iter().map(String::from).collect())
                .collect();
            answer(&card, Choice::Answer(answers)).unwrap_err()
        };
        assert_eq!(
            refused(vec![vec!["src/"]]),
            "%2 asks 2 question(s); the answer has 1"
        );
        assert_eq!(
            refused(vec![vec![], vec!["x"]]),
            "question 1 (Pick) has no answer"
        );
        assert_eq!(
            refused(vec![vec!["lib/"], vec!["x"]]),
            "question 1 (Pick) has no option \"lib/\" and takes no free text"
        );
        assert_eq!(
            refused(vec![vec!["src/"], vec!["src/", "tests/"]]),
            "question 2 (Pick) takes one choice, not 2"
        );
        let reject = answer(&card, Choice::Reject).unwrap();
        assert_eq!(reject.action, Action::QuestionReject);
        assert_eq!(reject.answers, None);
    }

    #[test]
    fn a_steer_quotes_its_row_and_mints_a_slot_per_line() {
        let mut row = crate::testing::row("%6", schema::State::Idle);
        row.episode_ms = 55;
        let one = steer("%6", Some(&row), "use the helper".into(), false, "1-1");
        assert_eq!(one.slot, "%6:55:steer:1-1");
        assert_eq!(one.binder.expect_episode_ms, 55);
        let now = steer("%6", None, "stop".into(), true, "1-2");
        assert_eq!(now.action, Action::SteerNow);
        assert_eq!(now.slot, "%6:0:steer_now:1-2");
        assert_eq!(interrupt("%6", Some(&row)).slot, "%6:55:interrupt");
    }
}
