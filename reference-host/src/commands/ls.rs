//! `corral ls [--json]`: the fleet as this machine sees it, pane titles included (local only). A
//! socket with no tmux server behind it lists nothing and is said on stderr. The config is read
//! first, as by every command: a mistake in it (an unknown key, a `$CORRAL_CONFIG` naming no
//! file) is an error here too, though the listing uses none of it.

use super::output::{say, say_raw, tell};
use anyhow::Context;
use schema::{LsDocument, LsRow, SCHEMA_VERSION};

use crate::fleet::FleetReader;
use crate::paths::Paths;
use crate::tmux::Tmux;

pub fn run(json: bool, tmux: Tmux, host: String, paths: &Paths) -> anyhow::Result<u8> {
    crate::config::load(&paths.config_file)?;
    let listing = FleetReader::new(tmux, host)
        .read_local()
        .context("reading the fleet")?;
    // A mistaken socket lists nothing, and says so; the listing itself stays what it is.
    if let Some(line) = &listing.no_server {
        tell!("corral: {line}");
    }
    let rows = listing.rows;
    if json {
        let document = LsDocument {
            schema: SCHEMA_VERSION,
            agents: rows,
        };
        say!(
            "{}",
            serde_json::to_string(&document).context("encoding the listing")?
        );
    } else {
        say_raw!("{}", table(&rows));
    }
    Ok(0)
}

/// The human table: one row per agent pane, aligned columns.
fn table(rows: &[LsRow]) -> String {
    let header = [
        "PANE", "AGENT", "STATE", "DETAIL", "LOCATOR", "REPO", "BRANCH", "TITLE",
    ];
    let mut lines: Vec<Vec<String>> = vec![header.iter().map(|h| (*h).to_owned()).collect()];
    for row in rows {
        let state = if row.done {
            "done".to_owned()
        } else {
            row.state.to_string()
        };
        let muted = if row.muted { " (muted)" } else { "" };
        lines.push(vec![
            row.pane.clone(),
            row.agent.clone(),
            format!("{state}{muted}"),
            row.detail.as_ref().map_or("-".into(), ToString::to_string),
            row.locator.clone(),
            row.repo.clone().unwrap_or_else(|| "-".into()),
            row.branch.clone().unwrap_or_else(|| "-".into()),
            row.view.title.clone(),
        ]);
    }
    super::table(&lines)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::paths::ConfigFile;

    fn paths(config_file: ConfigFile) -> Paths {
        Paths {
            config_file,
            device_store: "/nonexistent/devices.toml".into(),
            runtime_dir: "/nonexistent/run".into(),
            actions_dir: "/nonexistent/actions".into(),
        }
    }

    /// A tmux that cannot be started: a test that reaches the fleet read fails on it.
    fn no_tmux() -> Tmux {
        Tmux::new("/nonexistent/tmux", None)
    }

    #[test]
    fn a_config_mistake_is_an_error_before_the_fleet_is_read() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("config.toml");
        std::fs::write(&file, "bogus = 1\n").unwrap();
        let err = run(
            false,
            no_tmux(),
            "h".into(),
            &paths(ConfigFile {
                path: file,
                named: false,
            }),
        )
        .unwrap_err();
        assert!(
            format!("{err:#}").contains("unknown field `bogus`"),
            "{err:#}"
        );
        let missing = dir.path().join("missing.toml");
        let err = run(
            false,
            no_tmux(),
            "h".into(),
            &paths(ConfigFile {
                path: missing,
                named: true,
            }),
        )
        .unwrap_err();
        assert!(
            format!("{err:#}").contains("$CORRAL_CONFIG names"),
            "{err:#}"
        );
    }
}
