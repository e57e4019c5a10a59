//! What a case needs of the host's action manifests, as its profile declares them: whether the
//! host under test can run the case at all (its header's `manifests`), and what a pane received
//! when declared actions fired (`fired`), from the profile's own `input`, never corral's keys.

use golden::HostProfile;
use golden::pattern::{self, Captures};
use golden::session::{Content, Fired, SessionHeader};
use serde_json::Value;

use super::StepError;

/// Why the host's profile cannot run a case, when its declared actions are not what the case
/// needs (the first such action, in the header's order).
pub(super) fn unmet(profile: &HostProfile, header: &SessionHeader) -> Option<String> {
    header
        .manifests
        .iter()
        .find_map(|(key, needed)| profile.unmet(key, *needed))
}

/// `content` as the runner judges it: a `fired` expectation becomes the JSON lines the pane
/// received when the actions fired as the profile declares them (`${name}` replaced in their
/// texts), and no line at all for none; anything else as it is.
pub(super) fn expected(
    content: Option<&Content>,
    profile: &HostProfile,
    captures: &Captures,
) -> Result<Option<Content>, StepError> {
    let Some(Content::Fired(fired)) = content else {
        return Ok(content.cloned());
    };
    let mut lines: Vec<Value> = Vec::new();
    for one in fired {
        lines.extend(typed(one, profile, captures)?);
    }
    Ok(Some(if lines.is_empty() {
        Content::Text(String::new())
    } else {
        Content::JsonLines(lines.iter().map(pattern::escape_literal).collect())
    }))
}

/// What one fired action typed into its pane, as the profile declares it.
fn typed(
    fired: &Fired,
    profile: &HostProfile,
    captures: &Captures,
) -> Result<Vec<Value>, StepError> {
    let declared = profile.action(&fired.agent, &fired.action).ok_or_else(|| {
        StepError::new(format!(
            "the host profile declares no `{}` action for `{}`, which `fired` names",
            fired.action, fired.agent
        ))
    })?;
    let text = match &fired.text {
        Some(text) => Some(pattern::instantiate_text(text, captures).map_err(StepError::new)?),
        None => None,
    };
    declared.typed(text.as_deref()).ok_or_else(|| {
        StepError::new(format!(
            "the host profile declares `{}` of `{}` as {}: it types nothing into the pane",
            fired.action,
            fired.agent,
            declared.kind.as_str()
        ))
    })
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn fired(agent: &str, action: &str, text: Option<&str>) -> Fired {
        Fired {
            agent: agent.to_owned(),
            action: action.to_owned(),
            text: text.map(str::to_owned),
        }
    }

    /// corral's profile types corral's keys; another's, its own: the expectation is the
    /// profile's.
    #[test]
    fn fired_actions_are_what_the_profile_declares_reached_the_pane() {
        let corral = HostProfile::corral();
        let mut captures = Captures::new();
        captures.insert("why".into(), json!("Use $HOME, not ~."));
        let content = Content::Fired(vec![
            fired("claude", "approve", None),
            fired("codex", "steer_now", Some("${why}")),
        ]);
        assert_eq!(
            expected(Some(&content), &corral, &captures).unwrap(),
            Some(Content::JsonLines(vec![
                json!({"text": "1"}),
                json!({"keys": ["Escape"]}),
                json!({"text": "Use $$HOME, not ~."}),
                json!({"keys": ["Enter"]}),
            ]))
        );
        let other = HostProfile::parse(
            &golden::profile::CORRAL.replace(
                r#"approve = { kind = "keys", input = [{ text = "1" }], label = "Yes" }"#,
                r#"approve = { kind = "keys", input = [{ keys = ["Enter"] }], label = "Allow" }"#,
            ),
            "other.toml",
        )
        .unwrap();
        let only = Content::Fired(vec![fired("claude", "approve", None)]);
        assert_eq!(
            expected_of(&only, &other),
            Content::JsonLines(vec![json!({"keys": ["Enter"]})])
        );
        assert_eq!(
            expected_of(&Content::Fired(Vec::new()), &corral),
            Content::Text(String::new())
        );
        let api = Content::Fired(vec![fired("opencode", "approve", None)]);
        let err = expected(Some(&api), &corral, &Captures::new()).unwrap_err();
        assert!(
            err.message.contains("types nothing into the pane"),
            "{}",
            err.message
        );
    }

    fn expected_of(content: &Content, profile: &HostProfile) -> Content {
        expected(Some(content), profile, &Captures::new())
            .unwrap()
            .unwrap()
    }
}
