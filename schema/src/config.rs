//! The host's config file (`$CORRAL_CONFIG`, else `$XDG_CONFIG_HOME/corral/config.toml`).
//!
//! Every key is optional. An unknown key anywhere (the top level, `[serve]`, `[notify]`, its
//! trigger sub-tables, `[act]`) is a parse error naming the key and its line: a typo would
//! otherwise silently drop a setting, such as the command a trigger runs.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// The whole config file.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct Config {
    /// `corral serve`.
    pub serve: ServeConfig,
    /// The notification subsystem.
    pub notify: NotifyConfig,
    /// Dispatch.
    pub act: ActConfig,
    /// `corral event`, the agents' hook entry.
    pub event: EventConfig,
}

/// `[serve]`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct ServeConfig {
    /// Live serve processes allowed at once across the host (default 4).
    #[schemars(range(min = 1))]
    pub max_connections: u32,
    /// Cadence of the reconcile cycle and of subscription streams, in milliseconds (default 2000).
    #[schemars(range(min = 1))]
    pub reconcile_interval_ms: u64,
}

impl Default for ServeConfig {
    fn default() -> Self {
        ServeConfig {
            max_connections: 4,
            reconcile_interval_ms: 2000,
        }
    }
}

/// `[notify]`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct NotifyConfig {
    /// Transitions that fire: `blocked`, `done` (default `["blocked"]`).
    pub on: Vec<String>,
    /// Write BEL to the firing pane's tty (default true).
    pub bell: bool,
    /// Write an OSC 9 notification to the firing pane's tty (default false).
    pub osc: bool,
    /// Write the OSC 777 form beside OSC 9 (default false).
    pub osc_777: bool,
    /// Write OSC 9;4 progress sequences per window (default false).
    pub osc_progress: bool,
    /// Command run on each fire with the payload on stdin; the fallback of every trigger.
    pub command: Option<String>,
    /// Append one JSON line per fire to this file (`~` expanded).
    pub log: Option<String>,
    /// Seconds a notification command (a trigger's, `corral debug notify-test`'s, a detached
    /// action's completion's) may run before it is killed with its whole process group and
    /// recorded (default 60). A whole number, at least 1: anything else is an error naming the
    /// key and its line.
    #[schemars(range(min = 1))]
    #[serde(deserialize_with = "at_least_one_second")]
    pub command_timeout_s: u64,
    /// Include the pane title in the payload and the log (default false).
    pub include_title: bool,
    /// Let the event hook fire the notification itself (default false).
    pub from_event: bool,
    /// `[notify.blocked]`.
    pub blocked: Option<TriggerConfig>,
    /// `[notify.done]`.
    pub done: Option<TriggerConfig>,
    /// `[notify.context_high]`.
    pub context_high: Option<ContextHighConfig>,
    /// `[notify.stall]`.
    pub stall: Option<StallConfig>,
}

impl Default for NotifyConfig {
    fn default() -> Self {
        NotifyConfig {
            on: vec!["blocked".into()],
            bell: true,
            osc: false,
            osc_777: false,
            osc_progress: false,
            command: None,
            log: None,
            command_timeout_s: 60,
            include_title: false,
            from_event: false,
            blocked: None,
            done: None,
            context_high: None,
            stall: None,
        }
    }
}

/// A whole number of seconds, at least 1. A `0` is refused where it is read, so the error points
/// at its line like every other error of the file.
fn at_least_one_second<'de, D: serde::Deserializer<'de>>(deserializer: D) -> Result<u64, D::Error> {
    let seconds = u64::deserialize(deserializer)?;
    if seconds == 0 {
        return Err(serde::de::Error::invalid_value(
            serde::de::Unexpected::Unsigned(0),
            &"a whole number of seconds, at least 1",
        ));
    }
    Ok(seconds)
}

/// `[notify.blocked]`, `[notify.done]`.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TriggerConfig {
    /// This trigger's command; falls back to `notify.command` when absent.
    pub command: Option<String>,
}

/// `[notify.context_high]`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ContextHighConfig {
    /// Fire when utilisation crosses this percent; rearm below `threshold - 10`. Absent: the
    /// trigger never fires.
    #[schemars(range(max = 100))]
    pub threshold: Option<u8>,
    /// This trigger's command; falls back to `notify.command` when absent.
    pub command: Option<String>,
}

/// `[notify.stall]`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct StallConfig {
    /// Fire once per run when a pane has been working longer than this many seconds. Absent:
    /// the trigger never fires.
    pub threshold_s: Option<u64>,
    /// This trigger's command; falls back to `notify.command` when absent.
    pub command: Option<String>,
}

/// `[event]`: how `corral event` (run by an agent's hook) behaves.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct EventConfig {
    /// Seconds a permission-request hook waits for a device's verdict before it lets the agent
    /// show its own dialog (default 60). The agent's own hook time-out must be longer. A whole
    /// number, at least 1: anything else is an error naming the key and its line.
    #[schemars(range(min = 1))]
    #[serde(deserialize_with = "at_least_one_second")]
    pub permission_wait_s: u64,
}

impl Default for EventConfig {
    fn default() -> Self {
        EventConfig {
            permission_wait_s: 60,
        }
    }
}

/// `[act]`.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct ActConfig {
    /// Act audit log: one line per act fire (`~` expanded).
    pub log: Option<String>,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn notify(text: &str) -> Result<NotifyConfig, toml::de::Error> {
        toml::from_str::<Config>(text).map(|config| config.notify)
    }

    #[test]
    fn the_command_time_out_defaults_to_60_seconds() {
        assert_eq!(notify("").unwrap().command_timeout_s, 60);
        assert_eq!(
            notify("[notify]\nbell = false\n")
                .unwrap()
                .command_timeout_s,
            60
        );
    }

    #[test]
    fn a_configured_command_time_out_is_read() {
        let config = notify("[notify]\ncommand_timeout_s = 2\n").unwrap();
        assert_eq!(config.command_timeout_s, 2);
        let text = toml::to_string(&Config {
            notify: config,
            ..Config::default()
        })
        .unwrap();
        assert!(text.contains("command_timeout_s = 2"), "{text}");
    }

    #[test]
    fn a_command_time_out_of_zero_or_not_a_whole_number_is_refused_at_its_value() {
        for value in ["0", "-1", "2.5", "\"60\"", "true"] {
            let text = format!("[notify]\nbell = true\ncommand_timeout_s = {value}\n");
            let err = notify(&text).unwrap_err();
            let span = err.span().expect("the error points at the value");
            let line = text[..span.start].matches('\n').count() + 1;
            assert_eq!(line, 3, "{value}: {err}");
        }
        let err = notify("[notify]\ncommand_timeout_s = 0\n").unwrap_err();
        assert!(err.message().contains("at least 1"), "{err}");
    }

    #[test]
    fn the_permission_wait_is_a_whole_number_of_seconds_and_event_keys_are_known() {
        let event = |text: &str| toml::from_str::<Config>(text).map(|config| config.event);
        assert_eq!(event("").unwrap().permission_wait_s, 60);
        assert_eq!(
            event("[event]\npermission_wait_s = 5\n")
                .unwrap()
                .permission_wait_s,
            5
        );
        for value in ["0", "-1", "2.5", "\"60\""] {
            let text = format!("[event]\npermission_wait_s = {value}\n");
            assert!(event(&text).is_err(), "{value}");
        }
        let err = event("[event]\npermission_wait = 5\n").unwrap_err();
        assert!(err.message().contains("permission_wait"), "{err}");
    }
}
