//! A bench stopped by a signal (Ctrl-C, `SIGTERM`, `SIGHUP`) leaves nothing behind. A run keeps
//! scratch tmux servers of up to 1000 panes, `serve` processes, a daemon and clients, and a
//! scratch dir that can hold a 1 GiB transcript; the `Drop`s that end them at a normal exit do
//! not run when a signal ends the process. A thread of its own waits for those signals and then
//! ends, in turn:
//!
//! 1. every process descending from the bench (its children lead process groups of their own,
//!    so a Ctrl-C at the terminal reaches none of them): each gets `SIGKILL`, its group too;
//! 2. every tmux server of the bench's socket names (`corral-bench-<pid>` and
//!    `corral-bench-<pid>-<name>`), which left the bench's tree when it forked: `SIGTERM`, on
//!    which tmux exits and its panes get `SIGHUP`;
//! 3. the scratch dir;
//!
//! then exits with 128 + the signal's number, after one line on stderr.

use std::collections::{BTreeSet, HashMap};
use std::path::{Path, PathBuf};

use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};
use signal_hook::iterator::Signals;
use stdx::process::Signal;

/// Starts the thread that cleans up after a signal: the processes of the bench that runs as
/// `root` (this process), its tmux servers, and `scratch`.
pub fn clean_up_on_signal(root: u32, scratch: PathBuf) -> anyhow::Result<()> {
    let mut signals = Signals::new([SIGINT, SIGTERM, SIGHUP])?;
    std::thread::Builder::new()
        .name("bench-signals".into())
        .spawn(move || {
            if let Some(signal) = signals.forever().next() {
                let ended = clean_up(root, &scratch);
                eprintln!(
                    "bench: stopped by signal {signal}; ended {} processes and {} tmux servers, \
                     removed {}",
                    ended.processes,
                    ended.servers,
                    scratch.display()
                );
                std::process::exit(128 + signal);
            }
        })?;
    Ok(())
}

/// What [`clean_up`] ended.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Ended {
    pub processes: usize,
    pub servers: usize,
}

/// Ends every process descending from `root` (not `root` itself) and every tmux server of
/// `root`'s socket names, then removes `scratch`.
pub fn clean_up(root: u32, scratch: &Path) -> Ended {
    let table = processes();
    let descendants = descendants(root, &table);
    for &pid in &descendants {
        stdx::process::signal_group(pid, Signal::KILL);
        stdx::process::signal(pid, Signal::KILL);
    }
    let servers: Vec<u32> = table
        .iter()
        .filter(|(pid, p)| !descendants.contains(pid) && is_bench_tmux(&p.argv, root))
        .map(|(&pid, _)| pid)
        .collect();
    for &pid in &servers {
        stdx::process::signal(pid, Signal::TERM);
    }
    // A server takes a moment to close its panes; its socket file stays (tmux 3.3a does not
    // remove it), inside the scratch dir.
    let _ = std::fs::remove_dir_all(scratch);
    Ended {
        processes: descendants.len(),
        servers: servers.len(),
    }
}

/// One process as `/proc` shows it.
#[derive(Debug)]
struct Process {
    ppid: u32,
    argv: Vec<String>,
}

/// Every process this user can see, by pid.
fn processes() -> HashMap<u32, Process> {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return HashMap::new();
    };
    entries
        .flatten()
        .filter_map(|entry| {
            let pid: u32 = entry.file_name().to_str()?.parse().ok()?;
            let stat = std::fs::read_to_string(entry.path().join("stat")).ok()?;
            let cmdline = std::fs::read(entry.path().join("cmdline")).unwrap_or_default();
            Some((
                pid,
                Process {
                    ppid: ppid_of(&stat)?,
                    argv: cmdline
                        .split(|&b| b == 0)
                        .filter(|arg| !arg.is_empty())
                        .map(|arg| String::from_utf8_lossy(arg).into_owned())
                        .collect(),
                },
            ))
        })
        .collect()
}

/// The parent's pid in a `/proc/<pid>/stat` line: its 4th field, the one after the state.
fn ppid_of(stat: &str) -> Option<u32> {
    super::cpu::stat_fields(stat)?.get(1)?.parse().ok()
}

/// The pids descending from `root` in `table` (children, theirs, …), not `root` itself.
fn descendants(root: u32, table: &HashMap<u32, Process>) -> BTreeSet<u32> {
    let mut found = BTreeSet::new();
    let mut frontier = vec![root];
    while let Some(parent) = frontier.pop() {
        for (&pid, process) in table {
            if process.ppid == parent && pid != root && found.insert(pid) {
                frontier.push(pid);
            }
        }
    }
    found
}

/// Whether `argv` is a tmux process on one of the sockets the bench running as `root` names:
/// `-L corral-bench-<root>` or `-L corral-bench-<root>-<name>`.
fn is_bench_tmux(argv: &[String], root: u32) -> bool {
    let is_tmux = argv
        .first()
        .is_some_and(|arg0| Path::new(arg0).file_name().is_some_and(|n| n == "tmux"));
    let own = format!("corral-bench-{root}");
    is_tmux
        && argv.windows(2).any(|pair| {
            pair[0] == "-L"
                && (pair[1] == own
                    || pair[1]
                        .strip_prefix(&own)
                        .is_some_and(|rest| rest.starts_with('-')))
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn argv(args: &[&str]) -> Vec<String> {
        args.iter().map(|&a| a.to_owned()).collect()
    }

    #[test]
    fn only_tmux_on_the_bench_s_own_sockets_is_the_bench_s() {
        let ours = [
            &["tmux", "-L", "corral-bench-42", "new-session", "-d"][..],
            &[
                "/usr/bin/tmux",
                "-L",
                "corral-bench-42-h1",
                "-f",
                "/dev/null",
            ],
            &["tmux", "-u", "-L", "corral-bench-42-follow", "list-panes"],
        ];
        for args in ours {
            assert!(is_bench_tmux(&argv(args), 42), "{args:?}");
        }
        let theirs = [
            // Another bench's, whose pid starts with ours.
            &["tmux", "-L", "corral-bench-421", "new-session"][..],
            &["tmux", "-L", "corral-bench-4", "new-session"],
            // The user's own server, and a socket path.
            &["tmux", "new-session"],
            &["tmux", "-S", "/tmp/corral-bench-42", "new-session"],
            // Not tmux, though it names the socket.
            &["corral-sim", "-L", "corral-bench-42"],
            // The name as an argument of something else.
            &["tmux", "new-session", "corral-bench-42"],
        ];
        for args in theirs {
            assert!(!is_bench_tmux(&argv(args), 42), "{args:?}");
        }
    }

    #[test]
    fn the_parent_pid_is_read_past_a_name_with_parentheses_and_spaces() {
        assert_eq!(ppid_of("12 (a) b (c) S 7 12 12 0 -1"), Some(7));
        assert_eq!(ppid_of("12 (tmux: server) S 1 12 12 0 -1"), Some(1));
        assert_eq!(ppid_of("12 (no closing"), None);
    }

    /// A process tree like a bench's (a child leading a group of its own, its own child) and a
    /// tmux server of the bench's socket name outside that tree: all of them end, the scratch
    /// dir goes, and nothing else is touched.
    #[test]
    fn a_signal_s_clean_up_ends_the_tree_and_the_servers_and_removes_the_scratch_dir() {
        let scratch = tempfile::tempdir().unwrap();
        let dir = scratch.path().join("corral-bench-x");
        std::fs::create_dir_all(dir.join("sim")).unwrap();
        std::fs::write(dir.join("sim/transcript.jsonl"), "{}\n").unwrap();
        // The bench: a shell whose child sleeps in a group of its own, as the bench's do.
        let mut bench = stdx::process::command("sh")
            .args(["-c", "setsid sleep 300 & sleep 300 & wait"])
            .spawn()
            .unwrap();
        let root = bench.id();
        // Someone else's process: a sibling the clean-up must leave alone.
        let mut bystander = stdx::process::command("sleep").arg("300").spawn().unwrap();
        // The bench's tmux server: it forks away from whoever started it.
        let socket = format!("corral-bench-{root}-t");
        let status = stdx::process::command("tmux")
            .env("TMUX_TMPDIR", &dir)
            .env_remove("TMUX")
            .args(["-L", &socket, "-f", "/dev/null", "new-session", "-d"])
            .args(["sleep", "300"])
            .status()
            .unwrap();
        assert!(status.success());
        let mut tree = BTreeSet::new();
        for _ in 0..200 {
            tree = descendants(root, &processes());
            if tree.len() == 2 {
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        assert_eq!(tree.len(), 2, "the shell's two sleeps: {tree:?}");
        let server = server_pid(root);

        let ended = clean_up(root, &dir);

        assert_eq!(ended.processes, 2);
        assert_eq!(ended.servers, 1);
        assert!(!dir.exists(), "the scratch dir is removed");
        // The shell's children are gone: it reaps them and returns.
        let status = stdx::process::wait_or_kill(&mut bench, std::time::Duration::from_secs(10));
        assert!(status.is_some(), "the bench's shell saw its children end");
        for pid in tree.iter().copied().chain([server]) {
            assert!(gone(pid), "process {pid} still runs");
        }
        assert!(
            bystander.try_wait().unwrap().is_none(),
            "a process outside the bench is left alone"
        );
        stdx::process::kill_group(&mut bystander);
    }

    /// The pid of the tmux server of `corral-bench-<root>-t`.
    fn server_pid(root: u32) -> u32 {
        let table = processes();
        let servers: Vec<u32> = table
            .iter()
            .filter(|(_, p)| is_bench_tmux(&p.argv, root))
            .map(|(&pid, _)| pid)
            .collect();
        assert_eq!(servers.len(), 1, "{servers:?}");
        servers[0]
    }

    /// Whether `pid` has ended (exited, or a zombie nobody reaped yet) within 10 s.
    fn gone(pid: u32) -> bool {
        for _ in 0..1000 {
            match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
                Err(_) => return true,
                Ok(stat) => {
                    let fields = super::super::cpu::stat_fields(&stat);
                    if fields.is_some_and(|fields| fields.first() == Some(&"Z")) {
                        return true;
                    }
                }
            }
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        false
    }
}
