//! The variables that say where a process writes ([`LOCATIONS`]): a test, the kit, the demo and
//! the bench point them into a temp dir of their own, so that nothing they start lands in
//! `/tmp/tmux-<uid>`, the user's runtime dir or their home.

/// The variables that say where a process writes: tmux's socket dir, the host's config, device
/// store and runtime dir (and its fallback under `TMPDIR`), and whatever else follows HOME.
pub const LOCATIONS: &[&str] = &[
    "HOME",
    "XDG_CONFIG_HOME",
    "XDG_RUNTIME_DIR",
    "XDG_STATE_HOME",
    "XDG_DATA_HOME",
    "XDG_CACHE_HOME",
    "TMUX_TMPDIR",
    "TMPDIR",
];
