//! What `/proc` says about the processes a test started: their threads, their file descriptors,
//! and which of them carry a test's mark (orphans included).

/// How many threads process `pid` runs now.
pub fn threads(pid: u32) -> usize {
    std::fs::read_dir(format!("/proc/{pid}/task")).map_or(0, Iterator::count)
}

/// How many file descriptors process `pid` holds now.
pub fn fds(pid: u32) -> usize {
    std::fs::read_dir(format!("/proc/{pid}/fd")).map_or(0, Iterator::count)
}

/// The live processes (zombies excluded) whose environment carries `CORRAL_IT_MARK=<mark>`: a
/// host started with the mark and everything it started, orphans included.
pub fn marked_processes(mark: &str) -> Vec<u32> {
    let needle = format!("CORRAL_IT_MARK={mark}");
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .filter_map(|entry| entry.ok()?.file_name().to_str()?.parse::<u32>().ok())
        .filter(|pid| {
            let environ = std::fs::read(format!("/proc/{pid}/environ")).unwrap_or_default();
            let live = std::fs::read_to_string(format!("/proc/{pid}/stat"))
                .ok()
                .and_then(|stat| Some(!stat.rsplit_once(") ")?.1.starts_with('Z')))
                .unwrap_or(false);
            live && environ
                .split(|b| *b == 0)
                .any(|var| var == needle.as_bytes())
        })
        .collect()
}
