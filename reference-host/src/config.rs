//! Loading the config file into `schema::Config` and checking what the types cannot.

use anyhow::{Context, bail};
use schema::Config;

use crate::paths::ConfigFile;

/// Reads the config file. An absent file gives the defaults, unless `$CORRAL_CONFIG` named it:
/// then its absence is a mistake a person should hear of, not a silent fall back.
pub fn load(file: &ConfigFile) -> anyhow::Result<Config> {
    let path = &file.path;
    let text = match std::fs::read_to_string(path) {
        Ok(text) => text,
        Err(err) if err.kind() == std::io::ErrorKind::NotFound && file.named => bail!(
            "$CORRAL_CONFIG names {}, which does not exist (create it, or unset CORRAL_CONFIG \
             for the default config file)",
            path.display()
        ),
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => return Ok(Config::default()),
        Err(err) => return Err(err).with_context(|| format!("reading config {}", path.display())),
    };
    let config: Config = toml::from_str(&text)
        .map_err(|err| anyhow::anyhow!("{}", one_line(&text, &err)))
        .with_context(|| format!("config {}", path.display()))?;
    if config.serve.max_connections == 0 {
        bail!(
            "config {}: [serve] max_connections must be at least 1",
            path.display()
        );
    }
    if config.serve.reconcile_interval_ms < 10 {
        bail!(
            "config {}: [serve] reconcile_interval_ms must be at least 10",
            path.display()
        );
    }
    check_notify(&config.notify).with_context(|| format!("config {}", path.display()))?;
    Ok(config)
}

/// What the `[notify]` types let through but cannot mean anything: a typo in `on` would never
/// fire, and a threshold above 100 would never be crossed.
fn check_notify(notify: &schema::config::NotifyConfig) -> anyhow::Result<()> {
    for word in &notify.on {
        if !matches!(word.as_str(), "blocked" | "done") {
            bail!("[notify] on: unknown transition `{word}` (expected `blocked` or `done`)");
        }
    }
    if let Some(threshold) = notify.context_high.as_ref().and_then(|c| c.threshold)
        && threshold > 100
    {
        bail!("[notify.context_high] threshold: {threshold} is not a percent (0 to 100)");
    }
    Ok(())
}

/// A TOML error as one readable line: where, then what (toml's own rendering spans lines).
pub fn one_line(text: &str, err: &toml::de::Error) -> String {
    let message = err.message().trim().replace('\n', "; ");
    match err.span() {
        Some(span) => {
            let before = &text[..span.start.min(text.len())];
            let line = before.matches('\n').count() + 1;
            let start = before.rfind('\n').map_or(0, |at| at + 1);
            let column = before.len() - start + 1;
            let source = text[start..].lines().next().unwrap_or("").trim();
            format!("line {line}, column {column} (`{source}`): {message}")
        }
        None => message,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The config file at `path`, found by the default rule.
    fn at(path: &std::path::Path) -> ConfigFile {
        ConfigFile {
            path: path.to_owned(),
            named: false,
        }
    }

    #[test]
    fn a_broken_config_is_one_line_of_error_never_a_panic() {
        let good = b"[serve]\nmax_connections = 2\nreconcile_interval_ms = 150\n\n[act]\nlog = \"~/act.log\"\n";
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join("config.toml");
        for bytes in crate::testing::mutations(good, 5, 2000) {
            std::fs::write(&path, &bytes).unwrap();
            if let Err(err) = load(&at(&path)) {
                let text = format!("{err:#}");
                assert!(!text.contains('\n'), "{text}");
            }
        }
    }

    #[test]
    fn toml_errors_become_one_line() {
        let text = "[serve]\nmax_connections = \"x\"\n";
        let err = toml::from_str::<Config>(text).unwrap_err();
        let line = one_line(text, &err);
        assert!(
            line.starts_with("line 2, column 19 (`max_connections = \"x\"`): "),
            "{line}"
        );
        assert!(!line.contains('\n'));
    }

    fn load_text(text: &str) -> anyhow::Result<Config> {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join("config.toml");
        std::fs::write(&path, text).unwrap();
        load(&at(&path))
    }

    #[test]
    fn an_absent_file_gives_the_defaults() {
        let tmp = tempfile::tempdir().unwrap();
        let config = load(&at(&tmp.path().join("none.toml"))).unwrap();
        assert_eq!(config.serve.max_connections, 4);
        assert_eq!(config.serve.reconcile_interval_ms, 2000);
    }

    #[test]
    fn a_named_file_that_does_not_exist_is_an_error_of_one_line() {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join("typo.toml");
        let named = ConfigFile {
            path: path.clone(),
            named: true,
        };
        let err = format!("{:#}", load(&named).unwrap_err());
        assert_eq!(
            err,
            format!(
                "$CORRAL_CONFIG names {}, which does not exist (create it, or unset \
                 CORRAL_CONFIG for the default config file)",
                path.display()
            )
        );
        std::fs::write(&path, "[serve]\nmax_connections = 2\n").unwrap();
        assert_eq!(load(&named).unwrap().serve.max_connections, 2);
    }

    #[test]
    fn a_trigger_table_without_its_threshold_loads_and_turns_nothing_on() {
        let config = load_text(
            "[notify.context_high]\ncommand = \"a\"\n\n[notify.stall]\ncommand = \"b\"\n",
        )
        .unwrap();
        let triggers = crate::notify::trigger::Triggers::of(&config.notify);
        assert_eq!((triggers.context_high, triggers.stall_ms), (None, None));
        let config = load_text("[notify.stall]\nthreshold_s = 5\n").unwrap();
        let triggers = crate::notify::trigger::Triggers::of(&config.notify);
        assert_eq!(triggers.stall_ms, Some(5000));
    }

    #[test]
    fn serve_keys_are_read() {
        let config =
            load_text("[serve]\nmax_connections = 2\nreconcile_interval_ms = 150\n").unwrap();
        assert_eq!(config.serve.max_connections, 2);
        assert_eq!(config.serve.reconcile_interval_ms, 150);
    }

    #[test]
    fn an_unknown_key_in_a_trigger_sub_table_is_a_parse_error() {
        let err = load_text("[notify.stall]\nthreshold_s = 5\ncomand = \"x\"\n").unwrap_err();
        assert!(format!("{err:#}").contains("comand"), "{err:#}");
    }

    #[test]
    fn an_unknown_key_anywhere_is_an_error_naming_the_key_and_its_line() {
        for (text, key, line) in [
            ("colour = 1\n", "colour", 1),
            (
                "[serve]\nmax_connections = 2\nmax_conections = 3\n",
                "max_conections",
                3,
            ),
            ("[notify]\nbell = false\n\ncomand = \"x\"\n", "comand", 4),
            ("[notify.blocked]\ncomand = \"x\"\n", "comand", 2),
            ("[act]\nlogg = \"/x\"\n", "logg", 2),
            ("[acts]\n", "acts", 1),
        ] {
            let err = format!("{:#}", load_text(text).unwrap_err());
            assert!(err.contains(&format!("`{key}`")), "{text:?}: {err}");
            assert!(err.contains(&format!("line {line},")), "{text:?}: {err}");
            assert!(!err.contains('\n'), "{err}");
        }
    }

    #[test]
    fn a_transition_outside_on_s_vocabulary_and_a_threshold_over_100_are_refused() {
        let err = load_text("[notify]\non = [\"blocked\", \"blokced\"]\n").unwrap_err();
        assert!(format!("{err:#}").contains("`blokced`"), "{err:#}");
        let err = load_text("[notify.context_high]\nthreshold = 150\n").unwrap_err();
        assert!(format!("{err:#}").contains("150"), "{err:#}");
        let config =
            load_text("[notify]\non = [\"done\"]\n[notify.context_high]\nthreshold = 100\n");
        assert_eq!(config.unwrap().notify.on, ["done"]);
    }

    #[test]
    fn the_command_time_out_is_60_s_unless_set_and_a_bad_one_names_its_key_and_line() {
        assert_eq!(load_text("").unwrap().notify.command_timeout_s, 60);
        let config = load_text("[notify]\ncommand_timeout_s = 2\n").unwrap();
        assert_eq!(config.notify.command_timeout_s, 2);
        for value in ["0", "1.5", "\"2\"", "-3"] {
            let text = format!("[notify]\nbell = true\n\ncommand_timeout_s = {value}\n");
            let err = format!("{:#}", load_text(&text).unwrap_err());
            assert!(err.contains("command_timeout_s"), "{value}: {err}");
            assert!(err.contains("line 4,"), "{value}: {err}");
            assert!(!err.contains('\n'), "{err}");
        }
    }

    #[test]
    fn nonsense_values_are_refused() {
        assert!(load_text("[serve]\nmax_connections = 0\n").is_err());
        assert!(load_text("[serve]\nreconcile_interval_ms = 1\n").is_err());
        assert!(load_text("[serve]\nmax_connections = \"four\"\n").is_err());
    }
}
