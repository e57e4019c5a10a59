//! `corral-sim demo` left running with an app connected, played fast: every hook it starts is
//! reaped (no zombie child of the demo outlives a moment), and once warmed up it stays the same
//! size: its dir's bytes and files, and its memory. The default run plays 15 s at `--speed 200`
//! (up to 50 minutes of story, as fast as the machine plays it); `CORRAL_IT_LONG=1` plays 90 s
//! (up to 5 hours).

use std::collections::BTreeMap;
use std::path::Path;
use std::time::{Duration, Instant};

use serde_json::json;

use super::{Client, DEVICE, Demo, walk};

/// Bounds for the default fleet of 6 panes, a few times what it takes: transcripts are rotated
/// past 512 KiB (3 of them), the fake tmux's call log past 1 MiB (the last one kept), a hook's 4
/// files go once it is reaped; its memory is some 15 MiB.
const DIR_BYTES: u64 = 8 << 20;
const DIR_FILES: usize = 200;
const RSS: u64 = 64 << 20;
/// How much the memory may move once warmed up.
const RSS_GROWTH: u64 = 4 << 20;
/// The warm-up, not held to the growth bound.
const WARM_UP: Duration = Duration::from_secs(5);
/// The longest a finished hook may stay a zombie (a tick is 2.5 ms; this is a loaded machine).
const ZOMBIE_FOR: Duration = Duration::from_secs(5);

/// One look at the demo.
#[derive(Debug, Clone, Copy)]
struct Sample {
    at: Duration,
    bytes: u64,
    files: usize,
    rss: u64,
    zombies: usize,
}

/// The bytes and files under `dir`, as they are now (a file that goes meanwhile counts nothing).
fn size(dir: &Path) -> (u64, usize) {
    let files = walk(dir);
    let bytes = files
        .iter()
        .filter_map(|path| std::fs::symlink_metadata(path).ok())
        .filter(|metadata| metadata.is_file())
        .map(|metadata| metadata.len())
        .sum();
    (bytes, files.len())
}

/// A process's resident memory, bytes.
fn rss(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    let kib: u64 = status
        .lines()
        .find_map(|line| line.strip_prefix("VmRSS:"))
        .and_then(|rest| rest.split_whitespace().next())
        .and_then(|kib| kib.parse().ok())
        .unwrap();
    kib << 10
}

/// The zombie children of `parent`, by pid.
fn zombies(parent: u32) -> Vec<u32> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(entry.path().join("stat")) else {
            continue;
        };
        // `pid (comm) state ppid ...`; the command may hold spaces and parentheses.
        let Some((_, rest)) = stat.rsplit_once(')') else {
            continue;
        };
        let mut fields = rest.split_whitespace();
        let (state, ppid) = (fields.next(), fields.next().and_then(|p| p.parse().ok()));
        if state == Some("Z") && ppid == Some(parent) {
            found.push(pid);
        }
    }
    found
}

#[test]
fn a_demo_played_for_hours_reaps_its_hooks_and_stays_the_same_size() {
    let long = std::env::var_os("CORRAL_IT_LONG").is_some();
    let play = Duration::from_secs(if long { 90 } else { 15 });
    let tmp = tempfile::tempdir().unwrap();
    let mut demo = Demo::start(tmp.path(), &["--seed", "5", "--speed", "200"]);
    let banner = demo.banner();
    // An app stays connected, as it would all day: the host reads the fleet every cycle.
    let mut client = Client::connect(banner.script.to_str().unwrap());
    let id =
        client.send(json!({"t":"hello","app":"demo-test","app_version":"1.0.0","device":DEVICE}));
    let (hello, _) = client.answer(&id);
    assert_eq!(hello["t"], "hello", "{hello}");

    let pid = demo.pid();
    let started = Instant::now();
    let mut samples: Vec<Sample> = Vec::new();
    // Zombie pid → when it was first seen a zombie.
    let mut seen: BTreeMap<u32, Instant> = BTreeMap::new();
    while started.elapsed() < play {
        std::thread::sleep(Duration::from_millis(250));
        let now = Instant::now();
        let dead = zombies(pid);
        seen.retain(|zombie, _| dead.contains(zombie));
        for zombie in &dead {
            let since = *seen.entry(*zombie).or_insert(now);
            assert!(
                now - since < ZOMBIE_FOR,
                "pid {zombie}, a child of the demo, has been a zombie for {:?}",
                now - since
            );
        }
        let (bytes, files) = size(&banner.dir);
        samples.push(Sample {
            at: started.elapsed(),
            bytes,
            files,
            rss: rss(pid),
            zombies: dead.len(),
        });
    }
    // Drain what the client was sent while nobody read it.
    while client.frame(Duration::from_millis(10)).is_some() {}
    assert_eq!(client.close(), 0);

    // A row every 5 s: the first sample past each mark.
    let mut mark = Duration::ZERO;
    let table: Vec<String> = samples
        .iter()
        .filter(|s| {
            let due = s.at >= mark;
            if due {
                mark += Duration::from_secs(5);
            }
            due
        })
        .map(|s| {
            format!(
                "{:5.1}s  dir {:6} KiB, {:4} files  rss {:6} KiB  zombies {}",
                s.at.as_secs_f64(),
                s.bytes >> 10,
                s.files,
                s.rss >> 10,
                s.zombies
            )
        })
        .collect();
    let table = table.join("\n");
    eprintln!("the demo over {play:?} at --speed 200:\n{table}");
    for sample in &samples {
        assert!(sample.bytes <= DIR_BYTES, "{sample:?}\n{table}");
        assert!(sample.files <= DIR_FILES, "{sample:?}\n{table}");
        assert!(sample.rss <= RSS, "{sample:?}\n{table}");
    }
    let warm = samples
        .iter()
        .find(|s| s.at >= WARM_UP)
        .expect("a sample after the warm-up");
    let peak = samples
        .iter()
        .filter(|s| s.at >= WARM_UP)
        .map(|s| s.rss)
        .max()
        .unwrap();
    assert!(
        peak <= warm.rss + RSS_GROWTH,
        "the demo's memory grew from {} to {} KiB\n{table}",
        warm.rss >> 10,
        peak >> 10
    );

    demo.signal(rustix::process::Signal::INT);
    let (code, rest, stderr) = demo.end();
    assert_eq!(code, 0, "{stderr}");
    assert!(
        !stderr.contains("keeping the fleet's size"),
        "the demo could not keep its size:\n{stderr}"
    );
    // The hooks were there to reap: the claude panes blocked on their hook time and again.
    let played_hooks = rest
        .iter()
        .filter(|l| l.ends_with("(hook lane: its hook waits)"))
        .count();
    let moves = rest.iter().filter(|l| l.contains("s  %")).count();
    let rotations = rest.iter().filter(|l| l.contains(": rotated")).count();
    eprintln!(
        "{moves} moves played, {played_hooks} of them a permission on the hook lane; \
         {rotations} transcripts rotated"
    );
    assert!(played_hooks >= 10, "only {played_hooks} hooks ran\n{table}");
    // The long form plays long enough for the transcripts to reach their cap.
    assert!(
        !long || rotations > 0,
        "no transcript reached its cap\n{table}"
    );
    assert!(!banner.dir.exists());
    assert_eq!(walk(tmp.path()), Vec::<std::path::PathBuf>::new());
}
