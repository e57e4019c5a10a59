//! The `osc_progress` rollup (docs/protocol.md "Progress sequences"): per tmux window, the
//! indeterminate sequence when the window gains its first working agent and the clear when its
//! last one stops; nothing in between. Pure: it says which tty gets which sequence.
//!
//! Progress is a status, not a notification: a muted pane counts like any other.

use std::collections::BTreeMap;

use schema::State;

use crate::fleet::Pane;

/// One progress sequence to write.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProgressWrite {
    /// The tty to write it to.
    pub tty: String,
    /// Indeterminate when true, clear when false.
    pub working: bool,
}

/// The windows showing progress, each with the tty its clear will go to.
#[derive(Debug, Clone, Default)]
pub struct Rollup {
    active: BTreeMap<String, String>,
}

impl Rollup {
    /// The writes one read of the fleet calls for.
    pub fn update(&mut self, panes: &[Pane]) -> Vec<ProgressWrite> {
        let mut working: BTreeMap<&str, &str> = BTreeMap::new();
        let mut any: BTreeMap<&str, &str> = BTreeMap::new();
        for pane in panes {
            let window = pane.facts.window_id.as_str();
            if window.is_empty() || pane.facts.tty.is_empty() {
                continue;
            }
            any.entry(window).or_insert(&pane.facts.tty);
            if pane.row.state == State::Working {
                working.entry(window).or_insert(&pane.facts.tty);
            }
        }
        let mut writes = Vec::new();
        let stopped: Vec<String> = self
            .active
            .keys()
            .filter(|window| !working.contains_key(window.as_str()))
            .cloned()
            .collect();
        for window in stopped {
            let kept = self.active.remove(&window).unwrap_or_default();
            let tty = any.get(window.as_str()).map_or(kept, |t| (*t).to_owned());
            writes.push(ProgressWrite {
                tty,
                working: false,
            });
        }
        for (window, tty) in working {
            if self
                .active
                .insert(window.to_owned(), tty.to_owned())
                .is_none()
            {
                writes.push(ProgressWrite {
                    tty: tty.to_owned(),
                    working: true,
                });
            }
        }
        writes
    }

    /// Clears every window showing progress (shutdown, or the key turned off).
    pub fn clear_all(&mut self) -> Vec<ProgressWrite> {
        std::mem::take(&mut self.active)
            .into_values()
            .map(|tty| ProgressWrite {
                tty,
                working: false,
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::row;

    fn pane(id: &str, window: &str, state: State) -> Pane {
        let mut pane = Pane::of_row(row(id, state));
        pane.facts.window_id = window.into();
        pane.facts.tty = format!("/dev/tty{}", &id[1..]);
        pane
    }

    fn w(tty: &str, working: bool) -> ProgressWrite {
        ProgressWrite {
            tty: tty.into(),
            working,
        }
    }

    #[test]
    fn a_window_starts_with_its_first_worker_and_clears_with_its_last() {
        let mut rollup = Rollup::default();
        let idle = [pane("%1", "@1", State::Idle), pane("%2", "@1", State::Idle)];
        assert!(rollup.update(&idle).is_empty());
        let one = [
            pane("%1", "@1", State::Idle),
            pane("%2", "@1", State::Working),
        ];
        assert_eq!(rollup.update(&one), [w("/dev/tty2", true)]);
        let two = [
            pane("%1", "@1", State::Working),
            pane("%2", "@1", State::Working),
        ];
        assert!(rollup.update(&two).is_empty(), "nothing in between");
        let back = [
            pane("%1", "@1", State::Working),
            pane("%2", "@1", State::Idle),
        ];
        assert!(rollup.update(&back).is_empty());
        assert_eq!(rollup.update(&idle), [w("/dev/tty1", false)]);
        assert!(rollup.update(&idle).is_empty());
    }

    #[test]
    fn windows_roll_up_separately_and_a_vanished_window_is_cleared_where_it_was() {
        let mut rollup = Rollup::default();
        let both = [
            pane("%1", "@1", State::Working),
            pane("%2", "@2", State::Working),
        ];
        assert_eq!(
            rollup.update(&both),
            [w("/dev/tty1", true), w("/dev/tty2", true)]
        );
        let one = [pane("%1", "@1", State::Working)];
        assert_eq!(rollup.update(&one), [w("/dev/tty2", false)]);
        assert_eq!(rollup.clear_all(), [w("/dev/tty1", false)]);
        assert!(rollup.clear_all().is_empty());
        assert_eq!(
            rollup.update(&one),
            [w("/dev/tty1", true)],
            "it starts over"
        );
    }
}
