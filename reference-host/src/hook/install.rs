//! `corral hooks print|install <agent>`: the hook settings that make an agent run `corral event`
//! on every event, and their merge into the agent's own settings files.
//!
//! Claude Code reads `hooks` from `$CLAUDE_CONFIG_DIR/settings.json` (else `~/.claude/`), shaped
//! `{"hooks":{"<Event>":[{"hooks":[{"type":"command","command":"…","timeout":N}]}]}}` with
//! `timeout` in seconds (code.claude.com/docs/en/hooks, Claude Code 2.1). Codex reads the same
//! shape from `$CODEX_HOME/hooks.json` (else `~/.codex/`, hooks since 2026-04) and runs its
//! `notify` program (`notify = [...]` in `config.toml`) with one JSON argument at each turn's end.
//! Gemini CLI reads the same shape from `~/.gemini/settings.json` with `timeout` in milliseconds,
//! its own event names, and hooks switched on by `hooksConfig.enabled` (on by default since
//! 0.27; google-gemini/gemini-cli `hookRunner.ts`, `hookPlanner.ts`, docs/hooks).
//!
//! An install keeps everything else in those files, replaces only corral's own entries (so a
//! second install changes nothing and a moved binary is updated), keeps a backup of every file it
//! changes (`<file>.corral-backup`), and never overwrites a `notify` program that is not corral's.

use std::path::{Path, PathBuf};

use anyhow::{Context, bail};
use serde_json::{Map, Value, json};

/// The agents `hooks` knows.
pub const AGENTS: &[&str] = &["claude", "codex", "gemini"];

/// The events each agent's hooks are installed for.
fn events(agent: &str) -> &'static [&'static str] {
    match agent {
        "claude" => &[
            "SessionStart",
            "UserPromptSubmit",
            "PreToolUse",
            "PermissionRequest",
            "PostToolUse",
            "PostToolUseFailure",
            "Notification",
            "Stop",
            "StopFailure",
            "PreCompact",
            "PostCompact",
            "SessionEnd",
        ],
        // Gemini CLI has no permission hook: its Notification (`ToolPermission`) says it waits.
        "gemini" => &[
            "SessionStart",
            "BeforeAgent",
            "BeforeTool",
            "AfterTool",
            "Notification",
            "AfterAgent",
            "PreCompress",
            "SessionEnd",
        ],
        _ => &[
            "SessionStart",
            "UserPromptSubmit",
            "PreToolUse",
            "PermissionRequest",
            "PostToolUse",
            "Stop",
        ],
    }
}

/// The command line a hook runs for `event`.
fn command(corral: &Path, agent: &str, event: &str) -> String {
    format!(
        "{} event {agent} {event}",
        stdx::shell_quote(&corral.to_string_lossy())
    )
}

/// The `hooks` object for `agent`. A permission request's hook waits up to `wait_s` for a
/// device, so its time-out is that plus a margin.
pub fn hooks_object(corral: &Path, agent: &str, wait_s: u64) -> Value {
    let mut hooks = Map::new();
    for event in events(agent) {
        let mut hook = json!({"type": "command", "command": command(corral, agent, event)});
        let seconds = if *event == "PermissionRequest" {
            wait_s + 30
        } else {
            10
        };
        if agent == "gemini" {
            // Gemini CLI names its hooks (it folds hooks of one name and command) and counts
            // their time-out in milliseconds.
            hook = json!({"name": "corral", "type": "command", "command": command(corral, agent, event)});
            hook["timeout"] = json!(seconds * 1000);
        } else {
            hook["timeout"] = json!(seconds);
        }
        hooks.insert((*event).to_owned(), json!([{ "hooks": [hook] }]));
    }
    Value::Object(hooks)
}

/// Switches Gemini CLI's hooks on (`hooksConfig.enabled`, needed by 0.26, the default since),
/// unless the person switched them off, which it leaves and says.
pub fn enable_gemini_hooks(settings: &mut Value) -> Option<String> {
    let root = settings.as_object_mut()?;
    let config = root
        .entry("hooksConfig")
        .or_insert_with(|| json!({}))
        .as_object_mut()?;
    match config.get("enabled") {
        Some(Value::Bool(false)) => Some(
            "hooksConfig.enabled is false in Gemini CLI's settings: corral's hooks will not run \
             until it is true"
                .to_owned(),
        ),
        Some(_) => None,
        None => {
            config.insert("enabled".into(), Value::Bool(true));
            None
        }
    }
}

/// Codex's `notify` value.
pub fn codex_notify(corral: &Path) -> Vec<String> {
    vec![
        corral.to_string_lossy().into_owned(),
        "event".into(),
        "codex".into(),
        "notify".into(),
    ]
}

/// What `hooks print <agent>` shows.
pub fn snippet(corral: &Path, agent: &str, wait_s: u64) -> anyhow::Result<String> {
    let hooks = json!({"hooks": hooks_object(corral, agent, wait_s)});
    let pretty = serde_json::to_string_pretty(&hooks)?;
    Ok(match agent {
        "claude" => format!("{pretty}\n"),
        "gemini" => {
            let mut settings = json!({"hooksConfig": {"enabled": true}});
            settings["hooks"] = hooks["hooks"].clone();
            format!(
                "# ~/.gemini/settings.json\n{}\n",
                serde_json::to_string_pretty(&settings)?
            )
        }
        "codex" => {
            let notify = toml::Value::Array(
                codex_notify(corral)
                    .into_iter()
                    .map(toml::Value::String)
                    .collect(),
            );
            format!(
                "# $CODEX_HOME/hooks.json (~/.codex/hooks.json)\n{pretty}\n# $CODEX_HOME/config.toml, before any [table]\nnotify = {notify}\n"
            )
        }
        other => bail!(
            "no hook settings for {other:?}; agents with hooks: {}",
            AGENTS.join(", ")
        ),
    })
}

/// True when `hook` (one entry of an event's `hooks` list) is corral's for `agent`.
fn is_ours(hook: &Value, agent: &str) -> bool {
    hook.get("command")
        .and_then(Value::as_str)
        .is_some_and(|c| c.contains(&format!(" event {agent} ")))
}

/// Merges corral's hooks into a settings document, keeping everything else; replaces corral's own
/// entries in place. Returns the new document.
pub fn merge_hooks(mut settings: Value, ours: &Value, agent: &str) -> anyhow::Result<Value> {
    let Some(root) = settings.as_object_mut() else {
        bail!("the settings file is not a JSON object");
    };
    let hooks = root.entry("hooks").or_insert_with(|| json!({}));
    let Some(hooks) = hooks.as_object_mut() else {
        bail!("`hooks` in the settings file is not an object");
    };
    for (event, groups) in ours.as_object().into_iter().flatten() {
        let ours_hook = groups[0]["hooks"][0].clone();
        let list = hooks.entry(event.clone()).or_insert_with(|| json!([]));
        let Some(list) = list.as_array_mut() else {
            bail!("`hooks.{event}` in the settings file is not a list");
        };
        let mut replaced = false;
        for group in list.iter_mut() {
            if let Some(entries) = group.get_mut("hooks").and_then(Value::as_array_mut) {
                for entry in entries.iter_mut().filter(|e| is_ours(e, agent)) {
                    *entry = ours_hook.clone();
                    replaced = true;
                }
            }
        }
        if !replaced {
            list.push(json!({"hooks": [ours_hook]}));
        }
    }
    Ok(settings)
}

/// Sets corral's `notify` in a Codex `config.toml` text: added before the first table when
/// absent, left as is when already corral's; a `notify` that is someone else's is an error.
pub fn merge_notify(text: &str, notify: &[String]) -> anyhow::Result<String> {
    let parsed: toml::Table = toml::from_str(text).context("config.toml does not parse")?;
    let wanted = toml::Value::Array(notify.iter().cloned().map(toml::Value::String).collect());
    match parsed.get("notify") {
        Some(existing) if *existing == wanted => return Ok(text.to_owned()),
        Some(existing)
            if existing
                .as_array()
                .is_some_and(|a| a.iter().any(|v| v.as_str() == Some("event")) && a.len() == 4) =>
        {
            // corral's, from another path: replace that one line.
            let line = text
                .lines()
                .find(|l| l.trim_start().starts_with("notify"))
                .context("notify is set but not on its own line")?;
            return Ok(text.replacen(line, &format!("notify = {wanted}"), 1));
        }
        Some(existing) => bail!(
            "config.toml already runs a notify program ({existing}); corral will not replace it (the hooks still stamp turn ends)"
        ),
        None => {}
    }
    Ok(format!("notify = {wanted}\n{text}"))
}

/// Where an agent keeps its settings: (hooks file, Codex's config.toml).
pub fn settings_files(agent: &str, home: &Path) -> anyhow::Result<(PathBuf, Option<PathBuf>)> {
    let env_dir = |name: &str| {
        std::env::var_os(name)
            .map(PathBuf::from)
            .filter(|p| p.is_absolute())
    };
    match agent {
        "claude" => {
            let dir = env_dir("CLAUDE_CONFIG_DIR").unwrap_or_else(|| home.join(".claude"));
            Ok((dir.join("settings.json"), None))
        }
        "codex" => {
            let dir = env_dir("CODEX_HOME").unwrap_or_else(|| home.join(".codex"));
            Ok((dir.join("hooks.json"), Some(dir.join("config.toml"))))
        }
        "gemini" => Ok((home.join(".gemini").join("settings.json"), None)),
        other => bail!(
            "no hook settings for {other:?}; agents with hooks: {}",
            AGENTS.join(", ")
        ),
    }
}

/// What [`replace_file`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Written {
    /// The file already held the text.
    Unchanged,
    /// There was no file: it was made.
    Created,
    /// The file changed; the old one is kept as `<file>.corral-backup`.
    Replaced,
}

/// Writes `text` to `path` when it differs from what is there, keeping a backup of the old file
/// (when there was one) and its mode.
pub fn replace_file(path: &Path, text: &str) -> anyhow::Result<Written> {
    use std::os::unix::fs::PermissionsExt;
    let old = match std::fs::read_to_string(path) {
        Ok(old) => Some(old),
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => None,
        Err(err) => return Err(err).with_context(|| format!("reading {}", path.display())),
    };
    if old.as_deref() == Some(text) {
        return Ok(Written::Unchanged);
    }
    let mode = match std::fs::metadata(path) {
        Ok(meta) => meta.permissions().mode() & 0o777,
        Err(_) => 0o600,
    };
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    }
    if let Some(old) = &old {
        let backup = PathBuf::from(format!("{}.corral-backup", path.display()));
        crate::files::write_atomic(&backup, old.as_bytes(), mode)
            .with_context(|| format!("writing the backup {}", backup.display()))?;
    }
    crate::files::write_atomic(path, text.as_bytes(), mode)
        .with_context(|| format!("writing {}", path.display()))?;
    Ok(match old {
        Some(_) => Written::Replaced,
        None => Written::Created,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn corral() -> PathBuf {
        PathBuf::from("/opt/corral bin/corral")
    }

    #[test]
    fn every_event_runs_corral_event_and_the_permission_hook_outwaits_the_device() {
        let hooks = hooks_object(&corral(), "claude", 60);
        let permission = &hooks["PermissionRequest"][0]["hooks"][0];
        assert_eq!(
            permission["command"],
            "'/opt/corral bin/corral' event claude PermissionRequest"
        );
        assert_eq!(permission["timeout"], 90);
        assert_eq!(hooks.as_object().unwrap().len(), events("claude").len());
    }

    #[test]
    fn claude_reports_api_errors_and_gemini_names_its_hooks_in_milliseconds() {
        let claude = hooks_object(&corral(), "claude", 60);
        assert_eq!(
            claude["StopFailure"][0]["hooks"][0]["command"],
            "'/opt/corral bin/corral' event claude StopFailure"
        );
        let gemini = hooks_object(&corral(), "gemini", 60);
        let names: Vec<&String> = gemini.as_object().unwrap().keys().collect();
        assert_eq!(names.len(), events("gemini").len());
        for event in [
            "BeforeAgent",
            "BeforeTool",
            "AfterTool",
            "Notification",
            "AfterAgent",
        ] {
            assert!(gemini.get(event).is_some(), "{event}");
        }
        let notify = &gemini["Notification"][0]["hooks"][0];
        assert_eq!(notify["timeout"], 10_000);
        assert_eq!(notify["name"], "corral");
        assert_eq!(
            notify["command"],
            "'/opt/corral bin/corral' event gemini Notification"
        );
        let text = snippet(&corral(), "gemini", 60).unwrap();
        assert!(text.starts_with("# ~/.gemini/settings.json\n"), "{text}");
        let settings: Value =
            serde_json::from_str(text.lines().skip(1).collect::<String>().as_str()).unwrap();
        assert_eq!(settings["hooksConfig"]["enabled"], true);
        // Switched on when absent; a person's `false` is left, and said.
        let mut fresh = json!({"theme": "dark"});
        assert_eq!(enable_gemini_hooks(&mut fresh), None);
        assert_eq!(fresh["hooksConfig"]["enabled"], true);
        let mut off = json!({"hooksConfig": {"enabled": false}});
        assert!(enable_gemini_hooks(&mut off).unwrap().contains("false"));
        assert_eq!(off["hooksConfig"]["enabled"], false);
    }

    #[test]
    fn a_merge_keeps_everything_else_and_is_idempotent() {
        let existing = json!({
            "model": "opus",
            "hooks": {"Stop": [{"hooks": [{"type": "command", "command": "say done"}]}]}
        });
        let ours = hooks_object(&corral(), "claude", 60);
        let once = merge_hooks(existing.clone(), &ours, "claude").unwrap();
        assert_eq!(once["model"], "opus");
        let stop = once["hooks"]["Stop"].as_array().unwrap();
        assert_eq!(stop.len(), 2, "the user's hook stays beside ours");
        assert_eq!(stop[0]["hooks"][0]["command"], "say done");
        let twice = merge_hooks(once.clone(), &ours, "claude").unwrap();
        assert_eq!(once, twice);
        // A moved binary updates corral's entries in place.
        let moved = hooks_object(Path::new("/usr/bin/corral"), "claude", 60);
        let updated = merge_hooks(twice, &moved, "claude").unwrap();
        assert_eq!(updated["hooks"]["Stop"].as_array().unwrap().len(), 2);
        assert_eq!(
            updated["hooks"]["Stop"][1]["hooks"][0]["command"],
            "/usr/bin/corral event claude Stop"
        );
        assert!(merge_hooks(json!([1]), &ours, "claude").is_err());
    }

    #[test]
    fn notify_is_added_kept_or_refused_when_foreign() {
        let notify = codex_notify(Path::new("/usr/bin/corral"));
        let added = merge_notify("model = \"gpt-5\"\n\n[tui]\nx = 1\n", &notify).unwrap();
        assert!(
            added.starts_with("notify = [\"/usr/bin/corral\", \"event\", \"codex\", \"notify\"]\n"),
            "{added}"
        );
        assert!(added.contains("[tui]"));
        assert_eq!(merge_notify(&added, &notify).unwrap(), added, "idempotent");
        let moved = codex_notify(Path::new("/opt/corral"));
        let replaced = merge_notify(&added, &moved).unwrap();
        assert!(
            replaced.starts_with("notify = [\"/opt/corral\""),
            "{replaced}"
        );
        assert!(merge_notify("notify = [\"notify-send\"]\n", &notify).is_err());
    }

    #[test]
    fn a_file_is_replaced_with_a_backup_only_when_it_changes() {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join("settings.json");
        assert_eq!(replace_file(&path, "{}").unwrap(), Written::Created);
        assert!(
            !tmp.path().join("settings.json.corral-backup").exists(),
            "nothing to back up"
        );
        assert_eq!(replace_file(&path, "{}").unwrap(), Written::Unchanged);
        assert_eq!(replace_file(&path, "{\"a\":1}").unwrap(), Written::Replaced);
        assert_eq!(
            std::fs::read_to_string(tmp.path().join("settings.json.corral-backup")).unwrap(),
            "{}"
        );
    }
}
