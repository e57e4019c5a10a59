//! Which fleet rows a selector admits (wire-details "Selector"): keys AND together, state tokens
//! OR together, `done` means idle with unreviewed output, an unknown state token matches nothing.

use schema::{FleetRow, Selector, State, StateFilter};

/// True when `row` is in `selector`'s scope; no selector admits every row.
pub fn admits(selector: Option<&Selector>, row: &FleetRow) -> bool {
    let Some(s) = selector else { return true };
    let exact = |want: &Option<String>, have: Option<&str>| match want {
        None => true,
        Some(want) => have == Some(want.as_str()),
    };
    exact(&s.session, Some(&row.session))
        && exact(&s.repo, row.repo.as_deref())
        && exact(&s.branch, row.branch.as_deref())
        && exact(&s.agent, Some(&row.agent))
        && s.state
            .as_ref()
            .is_none_or(|tokens| tokens.iter().any(|t| state_matches(t, row)))
}

fn state_matches(token: &StateFilter, row: &FleetRow) -> bool {
    match token {
        StateFilter::Idle => row.state == State::Idle,
        StateFilter::Working => row.state == State::Working,
        StateFilter::Blocked => row.state == State::Blocked,
        StateFilter::Unknown => row.state == State::Unknown,
        StateFilter::Done => row.done,
        StateFilter::Other(_) => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing;

    /// A row in repository `corral` on branch `main`; `done` comes with its attention.
    fn row(pane: &str, state: State, done: bool) -> FleetRow {
        FleetRow {
            attention: done,
            done,
            repo: Some("corral".into()),
            branch: Some("main".into()),
            ..testing::row(pane, state)
        }
    }

    fn sel(json: &str) -> Selector {
        serde_json::from_str(json).unwrap()
    }

    #[test]
    fn no_selector_and_an_empty_selector_admit_everything() {
        assert!(admits(None, &row("%1", State::Idle, false)));
        assert!(admits(Some(&sel("{}")), &row("%1", State::Blocked, false)));
    }

    #[test]
    fn keys_and_together() {
        let r = row("%1", State::Blocked, false);
        assert!(admits(
            Some(&sel(
                r#"{"session":"work","repo":"corral","branch":"main","agent":"claude"}"#
            )),
            &r
        ));
        assert!(!admits(
            Some(&sel(r#"{"session":"work","agent":"codex"}"#)),
            &r
        ));
        assert!(!admits(Some(&sel(r#"{"branch":"dev"}"#)), &r));
    }

    #[test]
    fn a_repo_key_never_matches_a_pane_outside_a_repository() {
        let mut r = row("%1", State::Idle, false);
        r.repo = None;
        assert!(!admits(Some(&sel(r#"{"repo":"corral"}"#)), &r));
    }

    #[test]
    fn state_tokens_or_together_and_done_means_idle_with_attention() {
        let s = sel(r#"{"state":["blocked","done"]}"#);
        assert!(admits(Some(&s), &row("%1", State::Blocked, false)));
        assert!(admits(Some(&s), &row("%2", State::Idle, true)));
        assert!(!admits(Some(&s), &row("%3", State::Idle, false)));
        assert!(!admits(Some(&s), &row("%4", State::Working, false)));
    }

    #[test]
    fn an_unknown_state_token_narrows_to_nothing() {
        let s = sel(r#"{"state":["asleep"]}"#);
        for state in State::ALL {
            assert!(!admits(Some(&s), &row("%1", *state, false)));
        }
        let s = sel(r#"{"state":["asleep","idle"]}"#);
        assert!(admits(Some(&s), &row("%1", State::Idle, false)));
    }
}
