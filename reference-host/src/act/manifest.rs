//! The loaded action manifests: the ones bundled in the binary (claude, codex, gemini, opencode,
//! from `reference-host/manifests/`), then the user's `$XDG_CONFIG_HOME/corral/actions/*.toml` in
//! file-name order. A user action replaces the action of the same agent and name; anything else
//! adds to what is loaded. A file that does not read is one error naming the file, the line and
//! the key, never skipped: an action a person wrote and that silently went missing could leave a
//! dialog unanswerable, or answer it differently than they meant.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use schema::manifest::{ActionManifest, ActionSpec, Requires};
use schema::{Action, Detail, State};

/// The manifests compiled into the binary: (file name, text).
const BUNDLED: &[(&str, &str)] = &[
    ("claude.toml", include_str!("../../manifests/claude.toml")),
    ("codex.toml", include_str!("../../manifests/codex.toml")),
    ("gemini.toml", include_str!("../../manifests/gemini.toml")),
    (
        "opencode.toml",
        include_str!("../../manifests/opencode.toml"),
    ),
];

/// Where a loaded action came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Source {
    /// Compiled in; the bundled file's name.
    Bundled(&'static str),
    /// A user's file.
    File(PathBuf),
}

impl std::fmt::Display for Source {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Source::Bundled(name) => write!(f, "bundled:{name}"),
            Source::File(path) => write!(f, "{}", path.display()),
        }
    }
}

/// One loaded action.
#[derive(Debug, Clone, PartialEq)]
pub struct Loaded {
    /// The agent it is for.
    pub agent: String,
    /// What it is.
    pub spec: ActionSpec,
    /// Where it was read.
    pub source: Source,
}

/// A manifest that could not be loaded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ManifestError {
    /// The file (or `bundled:<name>`).
    pub source: String,
    /// What is wrong, on one line: where (line, column, the line's text), then what.
    pub message: String,
}

impl std::fmt::Display for ManifestError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "action manifest {}: {}", self.source, self.message)
    }
}

impl std::error::Error for ManifestError {}

/// Every loaded action, by agent, in load order.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Manifests {
    agents: BTreeMap<String, Vec<Loaded>>,
}

impl Manifests {
    /// The bundled manifests, then every `*.toml` in `user_dir` (absent: none).
    pub fn load(user_dir: &Path) -> Result<Manifests, ManifestError> {
        let mut manifests = Manifests::bundled();
        let mut files: Vec<PathBuf> = match std::fs::read_dir(user_dir) {
            Ok(entries) => entries
                .filter_map(Result::ok)
                .map(|e| e.path())
                .filter(|p| p.extension().is_some_and(|x| x == "toml"))
                .collect(),
            Err(err) if err.kind() == std::io::ErrorKind::NotFound => Vec::new(),
            Err(err) => {
                return Err(ManifestError {
                    source: user_dir.display().to_string(),
                    message: format!("cannot list the directory: {err}"),
                });
            }
        };
        files.sort();
        for path in files {
            let text = std::fs::read_to_string(&path).map_err(|err| ManifestError {
                source: path.display().to_string(),
                message: format!("cannot read it: {err}"),
            })?;
            manifests.add(&text, Source::File(path))?;
        }
        Ok(manifests)
    }

    /// Only the bundled manifests.
    pub fn bundled() -> Manifests {
        let mut manifests = Manifests::default();
        for (name, text) in BUNDLED {
            manifests
                .add(text, Source::Bundled(name))
                .expect("the bundled manifests load (a unit test checks them)");
        }
        manifests
    }

    /// Reads one manifest's text and adds its actions, replacing those it redefines.
    fn add(&mut self, text: &str, source: Source) -> Result<(), ManifestError> {
        let error = |message: String| ManifestError {
            source: source.to_string(),
            message,
        };
        let mut manifest: ActionManifest =
            toml::from_str(text).map_err(|err| error(crate::config::one_line(text, &err)))?;
        if manifest.agent.trim().is_empty() {
            return Err(error("`agent` is empty".into()));
        }
        let mut seen: Vec<Action> = Vec::new();
        for spec in &mut manifest.actions {
            let name = spec.name().clone();
            if seen.contains(&name) {
                return Err(error(format!("action `{name}` is defined twice")));
            }
            check(spec).map_err(|why| error(format!("action `{name}`: {why}")))?;
            seen.push(name);
        }
        let actions = self.agents.entry(manifest.agent.clone()).or_default();
        for spec in manifest.actions {
            let loaded = Loaded {
                agent: manifest.agent.clone(),
                spec,
                source: source.clone(),
            };
            match actions
                .iter_mut()
                .find(|a| a.spec.name() == loaded.spec.name())
            {
                Some(existing) => *existing = loaded,
                None => actions.push(loaded),
            }
        }
        Ok(())
    }

    /// The action `name` of `agent`, if a manifest covers it.
    pub fn action(&self, agent: &str, name: &Action) -> Option<&Loaded> {
        self.agents
            .get(agent)?
            .iter()
            .find(|loaded| loaded.spec.name() == name)
    }

    /// True when some loaded manifest defines `name` as an action a device may fire (not
    /// `exec`): the manifest half of the scope gate, which reads no pane.
    pub fn device_reachable(&self, name: &Action) -> bool {
        self.all()
            .any(|loaded| loaded.spec.name() == name && !matches!(loaded.spec, ActionSpec::Exec(_)))
    }

    /// True when a manifest covers `agent` at all.
    pub fn covers(&self, agent: &str) -> bool {
        self.agents.get(agent).is_some_and(|a| !a.is_empty())
    }

    /// Every loaded action, by agent then load order.
    pub fn all(&self) -> impl Iterator<Item = &Loaded> {
        self.agents.values().flatten()
    }
}

/// What the protocol says an action requires of the pane, whatever manifest fires it
/// (docs/protocol.md, "Actions"); `None` for an action it says nothing of (`compact`, a local
/// user action).
pub fn protocol_requires(action: &Action) -> Option<Requires> {
    let needs = |state, detail: &[Detail]| {
        Some(Requires {
            state: Some(state),
            detail: detail.to_vec(),
        })
    };
    match action {
        Action::Approve | Action::ApproveAlways | Action::Deny | Action::DenyWithMessage => {
            needs(State::Blocked, &[Detail::Permission])
        }
        Action::QuestionReply | Action::QuestionReject => {
            needs(State::Blocked, &[Detail::Question])
        }
        Action::Interrupt | Action::SteerNow => needs(State::Working, &[]),
        Action::Steer => needs(State::Idle, &[]),
        _ => None,
    }
}

/// What the types cannot say: keys to send, a path to call, a command to run; and that an
/// action a device fires requires what the protocol says: a manifest that leaves `requires` out
/// gets the protocol's, one that says otherwise is refused.
fn check(spec: &mut ActionSpec) -> Result<(), String> {
    if !matches!(spec, ActionSpec::Exec(_))
        && let Some(want) = protocol_requires(spec.name())
    {
        if spec.requires().is_any() {
            *spec.requires_mut() = want.clone();
        }
        if *spec.requires() == want {
            return check_kind(spec);
        }
        let detail: Vec<String> = want.detail.iter().map(|d| format!("\"{d}\"")).collect();
        let detail = if detail.is_empty() {
            String::new()
        } else {
            format!(", detail = [{}]", detail.join(", "))
        };
        let state = want.state.map(|s| s.to_string()).unwrap_or_default();
        return Err(format!(
            "`requires` is the protocol's for `{}`: {{ state = \"{state}\"{detail} }} \
             (docs/protocol.md, Actions); a manifest may leave it out, not change it",
            spec.name()
        ));
    }
    check_kind(spec)
}

/// What the types cannot say of each kind.
fn check_kind(spec: &ActionSpec) -> Result<(), String> {
    match spec {
        ActionSpec::Keys(a) if a.keys.iter().all(|k| k.trim().is_empty()) => {
            Err("`keys` sends nothing".into())
        }
        ActionSpec::Api(a) if !a.path.starts_with('/') => {
            Err(format!("`path` {:?} must start with `/`", a.path))
        }
        ActionSpec::Exec(a) if a.command.trim().is_empty() => Err("`command` is empty".into()),
        ActionSpec::Hook(a)
            if !matches!(
                a.name,
                Action::Approve
                    | Action::Deny
                    | Action::DenyWithMessage
                    | Action::QuestionReply
                    | Action::QuestionReject
            ) =>
        {
            Err(format!(
                "a `hook` action answers a parked request: `{}` is not approve, deny, \
                 deny_with_message, question_reply or question_reject",
                a.name
            ))
        }
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_broken_manifest_is_one_line_of_error_never_a_panic() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("mine.toml");
        let good = BUNDLED[3].1.as_bytes();
        for bytes in crate::testing::mutations(good, 9, 1500) {
            std::fs::write(&path, &bytes).unwrap();
            if let Err(err) = Manifests::load(dir.path()) {
                let text = err.to_string();
                assert!(!text.contains('\n') && text.contains("mine.toml"), "{text}");
            }
        }
    }

    #[test]
    fn the_bundled_manifests_cover_every_agent_with_the_actions_a_device_needs() {
        let m = Manifests::bundled();
        for agent in ["claude", "codex", "gemini", "opencode"] {
            for name in [
                Action::Approve,
                Action::Deny,
                Action::Interrupt,
                Action::Steer,
            ] {
                assert!(m.action(agent, &name).is_some(), "{agent} {name}");
            }
        }
        for agent in ["claude", "codex", "gemini"] {
            assert!(m.action(agent, &Action::SteerNow).is_some(), "{agent}");
        }
        assert_eq!(
            m.action("opencode", &Action::QuestionReply)
                .unwrap()
                .spec
                .kind(),
            "api"
        );
        // Claude Code's questions are answered through the request its hook parked.
        for action in [Action::QuestionReply, Action::QuestionReject] {
            assert_eq!(
                m.action("claude", &action).unwrap().spec.kind(),
                "hook",
                "{action}"
            );
        }
        assert!(m.device_reachable(&Action::Approve));
        assert!(!m.device_reachable(&Action::parse("run-tests").unwrap()));
        assert!(m.all().all(|a| matches!(a.source, Source::Bundled(_))));
    }

    fn user_dir(files: &[(&str, &str)]) -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        for (name, text) in files {
            std::fs::write(dir.path().join(name), text).unwrap();
        }
        dir
    }

    #[test]
    fn a_user_file_overrides_an_action_and_adds_agents_and_exec_actions() {
        let dir = user_dir(&[(
            "mine.toml",
            r#"agent = "claude"

[[action]]
name = "approve"
kind = "keys"
keys = ["Enter"]
label = "Go"

[[action]]
name = "run-tests"
kind = "exec"
command = "cargo test"
"#,
        )]);
        let m = Manifests::load(dir.path()).unwrap();
        let approve = m.action("claude", &Action::Approve).unwrap();
        assert_eq!(approve.spec.label(), "Go");
        assert_eq!(approve.source, Source::File(dir.path().join("mine.toml")));
        assert!(
            m.action("claude", &Action::Deny).is_some(),
            "the rest stays"
        );
        let run = Action::parse("run-tests").unwrap();
        assert!(m.action("claude", &run).is_some());
        assert!(!m.device_reachable(&run), "exec never reaches a device");
        // Left out, `requires` is the protocol's.
        assert_eq!(
            approve.spec.requires(),
            &protocol_requires(&Action::Approve).unwrap()
        );
    }

    #[test]
    fn a_manifest_cannot_change_what_an_action_requires() {
        let dir = user_dir(&[(
            "loose.toml",
            "agent = \"claude\"\n[[action]]\nname = \"approve\"\nkind = \"keys\"\nkeys = [\"1\"]\nrequires = { state = \"working\" }\n",
        )]);
        assert_eq!(
            Manifests::load(dir.path()).unwrap_err().to_string(),
            format!(
                "action manifest {}: action `approve`: `requires` is the protocol's for `approve`: {{ state = \"blocked\", detail = [\"permission\"] }} (docs/protocol.md, Actions); a manifest may leave it out, not change it",
                dir.path().join("loose.toml").display()
            )
        );
        // Every bundled action a device fires says exactly what the protocol does.
        for loaded in Manifests::bundled().all() {
            if let Some(want) = protocol_requires(loaded.spec.name()) {
                assert_eq!(
                    loaded.spec.requires(),
                    &want,
                    "{}.{}",
                    loaded.agent,
                    loaded.spec.name()
                );
            }
        }
        // An action the protocol says nothing of keeps its own.
        let free = user_dir(&[(
            "free.toml",
            "agent = \"claude\"\n[[action]]\nname = \"compact\"\nkind = \"keys\"\nkeys = [\"/compact\"]\nrequires = { state = \"idle\" }\n",
        )]);
        let m = Manifests::load(free.path()).unwrap();
        let compact = Action::parse("compact").unwrap();
        assert_eq!(
            m.action("claude", &compact).unwrap().spec.requires().state,
            Some(State::Idle)
        );
    }

    #[test]
    fn a_broken_file_is_one_error_naming_the_file_line_and_key() {
        let dir = user_dir(&[(
            "broken.toml",
            "agent = \"claude\"\n\n[[action]]\nname = \"approve\"\nkind = \"keys\"\nkyes = [\"1\"]\n",
        )]);
        let err = Manifests::load(dir.path()).unwrap_err();
        let text = err.to_string();
        assert!(text.contains("broken.toml"), "{text}");
        assert!(text.contains("line 3"), "{text}");
        assert!(text.contains("kyes"), "{text}");
        assert!(!text.contains('\n'), "one line: {text}");
        let dup = user_dir(&[(
            "dup.toml",
            "agent = \"x\"\n[[action]]\nname = \"deny\"\nkind = \"keys\"\nkeys = [\"n\"]\n[[action]]\nname = \"deny\"\nkind = \"keys\"\nkeys = [\"n\"]\n",
        )]);
        assert!(
            Manifests::load(dup.path())
                .unwrap_err()
                .to_string()
                .contains("defined twice")
        );
        let empty = user_dir(&[(
            "e.toml",
            "agent = \"x\"\n[[action]]\nname = \"deny\"\nkind = \"keys\"\nkeys = []\n",
        )]);
        assert!(
            Manifests::load(empty.path())
                .unwrap_err()
                .to_string()
                .contains("sends nothing")
        );
    }

    #[test]
    fn no_user_dir_means_the_bundled_ones() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(
            Manifests::load(&dir.path().join("absent")).unwrap(),
            Manifests::bundled()
        );
    }
}
