//! corral's host profile (`golden/profiles/corral.toml`) declares to the conformance kit exactly
//! the actions its bundled manifests (`reference-host/manifests/`) cover, each fired as they fire
//! it: the kit judges what reached a pane against the profile, so a manifest changed without its
//! profile fails here first.

use std::collections::BTreeMap;
use std::path::Path;

use golden::HostProfile;
use golden::profile::{FireKind, PaneInput};
use schema::manifest::{ActionManifest, ActionSpec};

/// What a pane receives for tmux key names, as `corral-sim pane input` prints it: a key that
/// is one printable character is typed text (runs of them joined), any other a named key (runs
/// of them in one record).
fn received(keys: &[String]) -> Vec<PaneInput> {
    let mut records: Vec<PaneInput> = Vec::new();
    for key in keys {
        let printable = key.chars().count() == 1 && key.chars().all(|c| c.is_ascii_graphic());
        match (records.last_mut(), printable) {
            (Some(PaneInput::Text { text }), true) => text.push_str(key),
            (Some(PaneInput::Keys { keys }), false) => keys.push(key.clone()),
            (_, true) => records.push(PaneInput::Text { text: key.clone() }),
            (_, false) => records.push(PaneInput::Keys {
                keys: vec![key.clone()],
            }),
        }
    }
    records
}

/// An action of a bundled manifest as the profile would declare it: its kind, input and label.
fn as_declared(spec: &ActionSpec) -> (FireKind, Vec<PaneInput>, String) {
    let (kind, input) = match spec {
        ActionSpec::Keys(keys) => (FireKind::Keys, received(&keys.keys)),
        ActionSpec::Text(text) => {
            let mut input = received(&text.before);
            input.push(PaneInput::Text {
                text: golden::profile::TEXT_PLACEHOLDER.to_owned(),
            });
            input.extend(received(&text.submit));
            (FireKind::Text, input)
        }
        ActionSpec::Api(_) => (FireKind::Api, Vec::new()),
        ActionSpec::Hook(_) => (FireKind::Hook, Vec::new()),
        ActionSpec::Exec(_) => panic!("no bundled manifest has a local action"),
    };
    (kind, input, spec.label().to_owned())
}

#[test]
fn corrals_profile_declares_its_bundled_manifests_as_they_fire() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("manifests");
    let mut bundled = BTreeMap::new();
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        let manifest: ActionManifest =
            toml::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        let actions: BTreeMap<String, _> = manifest
            .actions
            .iter()
            .map(|spec| (spec.name().to_string(), as_declared(spec)))
            .collect();
        bundled.insert(manifest.agent, actions);
    }
    let declared: BTreeMap<String, BTreeMap<String, _>> = HostProfile::corral()
        .actions
        .into_iter()
        .map(|(agent, actions)| {
            let actions = actions
                .into_iter()
                .map(|(name, action)| {
                    (
                        name,
                        (action.kind, action.input, action.label.unwrap_or_default()),
                    )
                })
                .collect();
            (agent, actions)
        })
        .collect();
    assert_eq!(declared, bundled);
    assert_eq!(bundled.len(), 4, "{:?}", bundled.keys());
}
