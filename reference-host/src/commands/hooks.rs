//! `corral hooks print|install <agent>`: the hook settings that make an agent run `corral event`.

use super::output::{say, say_raw};
use anyhow::Context;

use crate::cli::HooksCommand;
use crate::hook::install;
use crate::paths::Paths;

pub fn run(command: HooksCommand, paths: &Paths) -> anyhow::Result<u8> {
    let config = crate::config::load(&paths.config_file)?;
    let wait_s = config.event.permission_wait_s;
    let corral = std::env::current_exe()
        .and_then(std::fs::canonicalize)
        .context("finding this binary's path")?;
    match command {
        HooksCommand::Print { agent } => {
            say_raw!("{}", install::snippet(&corral, &agent, wait_s)?);
        }
        HooksCommand::Install { agent } => {
            let home = std::env::var_os("HOME")
                .map(std::path::PathBuf::from)
                .context("HOME is not set")?;
            let (hooks_file, config_toml) = install::settings_files(&agent, &home)?;
            let ours = install::hooks_object(&corral, &agent, wait_s);
            let existing = match std::fs::read_to_string(&hooks_file) {
                Ok(text) => serde_json::from_str(&text)
                    .with_context(|| format!("{} is not JSON", hooks_file.display()))?,
                Err(err) if err.kind() == std::io::ErrorKind::NotFound => serde_json::json!({}),
                Err(err) => {
                    return Err(err).with_context(|| format!("reading {}", hooks_file.display()));
                }
            };
            let mut merged = install::merge_hooks(existing, &ours, &agent)
                .with_context(|| format!("merging into {}", hooks_file.display()))?;
            let warning = if agent == "gemini" {
                install::enable_gemini_hooks(&mut merged)
            } else {
                None
            };
            let text = format!("{}\n", serde_json::to_string_pretty(&merged)?);
            report(&hooks_file, install::replace_file(&hooks_file, &text)?)?;
            if let Some(config_toml) = config_toml {
                let old = std::fs::read_to_string(&config_toml).unwrap_or_default();
                let new = install::merge_notify(&old, &install::codex_notify(&corral))
                    .with_context(|| format!("{}", config_toml.display()))?;
                report(&config_toml, install::replace_file(&config_toml, &new)?)?;
            }
            if let Some(warning) = warning {
                say!("{warning}");
            }
        }
    }
    Ok(0)
}

fn report(path: &std::path::Path, written: install::Written) -> anyhow::Result<()> {
    match written {
        install::Written::Replaced => say!(
            "updated {} (the old file is kept as {}.corral-backup)",
            path.display(),
            path.display()
        ),
        install::Written::Created => say!("created {}", path.display()),
        install::Written::Unchanged => say!("{} already has corral's hooks", path.display()),
    }
    Ok(())
}
