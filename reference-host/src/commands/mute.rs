//! `corral mute [--pane ID | --session NAME] [--for DURATION | --clear]`: writes (or unsets)
//! `@agent_mute_until` on the current pane (`$TMUX_PANE`), a named pane, or every agent pane of a
//! session. Without a duration the mute holds until cleared (`99999999999999`).

use super::output::say;
use std::time::Duration;

use anyhow::{Context, bail};
use schema::PaneOption;

use crate::cli::MuteArgs;
#[cfg(test)]
use crate::cli::parse_duration;
use crate::clock::now_ms;
use crate::fleet::{FleetReader, FleetSource};
use crate::tmux::Tmux;
use crate::tmux::write::OptionWrite;

/// `@agent_mute_until` for a mute that holds until cleared.
pub const UNTIL_CLEARED: u64 = 99_999_999_999_999;

const OPTION: PaneOption = PaneOption::MuteUntil;

pub fn run(args: MuteArgs, tmux: Tmux, host: String) -> anyhow::Result<u8> {
    let panes = match (&args.session, &args.pane) {
        (Some(session), _) => {
            let panes: Vec<String> = FleetReader::new(tmux.clone(), host)
                .panes()
                .context("reading the fleet")?
                .into_iter()
                .filter(|pane| &pane.row.session == session)
                .map(|pane| pane.row.pane)
                .collect();
            if panes.is_empty() {
                bail!("session {session} has no agent pane");
            }
            panes
        }
        (None, Some(pane)) => vec![pane.clone()],
        (None, None) => match std::env::var("TMUX_PANE") {
            Ok(pane) if !pane.is_empty() => vec![pane],
            _ => bail!("not inside a tmux pane: name one with --pane or a session with --session"),
        },
    };
    for pane in &panes {
        if args.clear {
            tmux.set_pane_options(pane, &[OptionWrite::Unset(OPTION)])
                .with_context(|| format!("unmuting {pane}"))?;
            say!("{pane}: unmuted");
            continue;
        }
        let (until, how) = match args.duration {
            Some(duration) => {
                let ms = u64::try_from(duration.as_millis()).unwrap_or(u64::MAX);
                let until = now_ms().saturating_add(ms).min(UNTIL_CLEARED);
                (until, format!("muted for {}", describe(duration)))
            }
            None => (UNTIL_CLEARED, "muted until cleared".to_owned()),
        };
        let held = tmux
            .set_pane_option_confirmed(pane, OPTION, &until.to_string())
            .with_context(|| format!("muting {pane}"))?;
        if !held {
            bail!("muting {pane}: tmux did not keep {OPTION} (is its server running?)");
        }
        say!("{pane}: {how}");
    }
    Ok(0)
}

/// A duration the way `--for` spells it: `1h30m`.
pub fn describe(duration: Duration) -> String {
    let mut left = duration.as_secs();
    let mut out = String::new();
    for (unit, secs) in [('d', 86_400), ('h', 3600), ('m', 60), ('s', 1)] {
        if left >= secs {
            out.push_str(&format!("{}{unit}", left / secs));
            left %= secs;
        }
    }
    if out.is_empty() {
        out.push_str("0s");
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_take_seconds_minutes_hours_and_days() {
        for (text, secs) in [
            ("45s", 45),
            ("30m", 1800),
            ("2h", 7200),
            ("1d", 86_400),
            ("1h30m", 5400),
        ] {
            assert_eq!(
                parse_duration(text),
                Ok(Duration::from_secs(secs)),
                "{text}"
            );
            assert_eq!(describe(Duration::from_secs(secs)), text);
        }
        for bad in [
            "",
            "30",
            "m",
            "30x",
            "-5m",
            "0s",
            "1.5h",
            "99999999999999999999d",
            "5 m",
        ] {
            assert!(parse_duration(bad).is_err(), "{bad}");
        }
    }
}
