//! CPU time of a process as `/proc/<pid>/stat` counts it, in clock ticks: its own (every thread's,
//! those ended too), and with [`Children::Reaped`] that of the children it has waited for (a
//! `serve`'s tmux invocations), as a share of one core over a span.

use std::time::{Duration, Instant};

use anyhow::Context;

use super::process::{command, stdout};

/// Whether a process's count includes its reaped children's.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Children {
    /// utime + stime.
    Excluded,
    /// utime + stime + cutime + cstime: what its children it has waited for used too.
    Reaped,
}

/// Clock ticks per second (`getconf CLK_TCK`, 100 when it does not say).
pub fn hz() -> u64 {
    stdout(command("getconf").arg("CLK_TCK"))
        .ok()
        .and_then(|text| text.parse().ok())
        .unwrap_or(100)
}

/// The clock ticks process `pid` has used.
pub fn ticks(pid: u32, children: Children) -> anyhow::Result<u64> {
    let path = format!("/proc/{pid}/stat");
    let stat = std::fs::read_to_string(&path).with_context(|| format!("reading {path}"))?;
    ticks_of(&stat, children).with_context(|| format!("reading {path}"))
}

/// The fields of a `/proc/<pid>/stat` line after the command name, from the state (its 3rd
/// field) on: counted from the name's closing parenthesis, since a name may hold spaces and
/// parentheses. `None` for a line without one.
pub fn stat_fields(stat: &str) -> Option<Vec<&str>> {
    let (_, rest) = stat.rsplit_once(')')?;
    Some(rest.split_whitespace().collect())
}

/// The ticks of a `/proc/<pid>/stat` line: its 14th and 15th fields (and 16th and 17th with
/// [`Children::Reaped`]), found by [`stat_fields`].
pub fn ticks_of(stat: &str, children: Children) -> anyhow::Result<u64> {
    let fields = stat_fields(stat).context("no command name")?;
    let field = |i: usize| -> anyhow::Result<u64> {
        fields
            .get(i)
            .and_then(|f| f.parse().ok())
            .with_context(|| format!("field {} is not a number", i + 3))
    };
    let own = field(11)? + field(12)?;
    Ok(match children {
        Children::Excluded => own,
        Children::Reaped => own + field(13)? + field(14)?,
    })
}

/// The bytes process `pid` (with the children it has waited for) sent to storage: the
/// `write_bytes` of `/proc/<pid>/io`, counted when it dirtied a page, less its
/// `cancelled_write_bytes`, the dirty pages it truncated or removed before they were written.
/// `None` where the kernel keeps no such count.
pub fn written(pid: u32) -> Option<u64> {
    written_of(&std::fs::read_to_string(format!("/proc/{pid}/io")).ok()?)
}

/// [`written`] of a `/proc/<pid>/io` text.
pub fn written_of(io: &str) -> Option<u64> {
    let field = |name: &str| -> Option<u64> {
        io.lines()
            .find_map(|line| line.strip_prefix(name)?.strip_prefix(':'))
            .and_then(|value| value.trim().parse().ok())
    };
    Some(field("write_bytes")?.saturating_sub(field("cancelled_write_bytes")?))
}

/// What some processes used over a span.
#[derive(Debug, Clone)]
pub struct Used {
    /// Ticks per process, in the order asked.
    pub ticks: Vec<u64>,
    /// The span.
    pub span: Duration,
    /// Clock ticks per second.
    pub hz: u64,
}

impl Used {
    /// The share of one core, in percent, of the ticks `of` adds up to.
    pub fn percent(&self, of: u64) -> f64 {
        100.0 * of as f64 / self.hz as f64 / self.span.as_secs_f64()
    }

    /// Every process's share together, in percent of one core.
    pub fn total(&self) -> f64 {
        self.percent(self.ticks.iter().sum())
    }
}

/// What each of `pids` (with how it counts) uses over `span`, sleeping meanwhile.
pub fn over(pids: &[(u32, Children)], span: Duration) -> anyhow::Result<Used> {
    let read = || -> anyhow::Result<Vec<u64>> {
        pids.iter()
            .map(|&(pid, children)| ticks(pid, children))
            .collect()
    };
    let before = read()?;
    let started = Instant::now();
    std::thread::sleep(span);
    let after = read()?;
    let span = started.elapsed();
    Ok(Used {
        ticks: after.iter().zip(&before).map(|(a, b)| a - b).collect(),
        span,
        hz: hz(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ticks_are_read_past_a_command_name_with_spaces() {
        let line = "4242 (corral (re) mote) S 1 4242 4242 0 -1 4194560 700 0 0 0 31 17 5 2 20 0 \
                    6 0 123 456 789";
        assert_eq!(ticks_of(line, Children::Excluded).unwrap(), 48);
        assert_eq!(ticks_of(line, Children::Reaped).unwrap(), 55);
        assert!(ticks_of("4242 (x) S 1", Children::Excluded).is_err());
        assert!(ticks(std::process::id(), Children::Reaped).is_ok());
    }

    #[test]
    fn written_bytes_are_those_not_cancelled() {
        let io = "rchar: 5\nwchar: 9\nsyscr: 1\nsyscw: 1\nread_bytes: 0\nwrite_bytes: 8192\n\
                  cancelled_write_bytes: 4096\n";
        assert_eq!(written_of(io), Some(4096));
        assert_eq!(
            written_of("write_bytes: 10\ncancelled_write_bytes: 20\n"),
            Some(0)
        );
        assert_eq!(written_of("write_bytes: 10\n"), None);
    }

    #[test]
    fn a_share_is_of_one_core_over_the_span() {
        let used = Used {
            ticks: vec![30, 20],
            span: Duration::from_secs(10),
            hz: 100,
        };
        assert_eq!(used.total(), 5.0);
        assert_eq!(used.percent(10), 1.0);
    }
}
