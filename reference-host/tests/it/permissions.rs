//! The modes of what the host makes, whatever the umask, and the files it refuses to trust: a
//! device store or runtime dir that another user could change.

use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use serde_json::json;

use crate::support::{Backend, Fleet, Home, Host, is_error};

fn mode(path: &Path) -> u32 {
    std::fs::symlink_metadata(path)
        .unwrap()
        .permissions()
        .mode()
        & 0o7777
}

fn chmod(path: &Path, mode: u32) {
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
}

/// Every directory under `root` (itself included) and every file in them, with its mode.
fn tree(root: &Path) -> Vec<(String, bool, u32)> {
    let mut found = vec![(root.display().to_string(), true, mode(root))];
    for entry in std::fs::read_dir(root).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            found.extend(tree(&path));
        } else {
            found.push((path.display().to_string(), false, mode(&path)));
        }
    }
    found
}

/// Under a umask that would open everything (000) and one that would take the owner's own bits
/// (277), the config dir, the device store, the runtime dir and everything a session puts in it
/// are exactly 0700 (dirs) and 0600 (files).
#[test]
fn what_the_host_makes_is_private_whatever_the_umask() {
    for umask in ["000", "277"] {
        let fleet = Fleet::up(Backend::Real);
        let mut home = fleet.home();
        // The host's own runtime dir (the fleet's is the simulator's to make), and no config
        // dir yet: the device command makes both it and its parent.
        home.runtime_dir = home.dir.path().join("runtime");
        std::fs::remove_dir_all(home.dir.path().join("config")).unwrap();
        let out = home
            .corral_under_umask(umask)
            .args(["device", "add", "phone", "--id", "fp-phone"])
            .args(["--scope", "read", "--scope", "act:answer"])
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        home.write_config("[serve]\nreconcile_interval_ms = 100\n");
        chmod(&home.config_file(), 0o600);
        fleet.small_transcript("idle");

        let mut serve = home.corral_under_umask(umask);
        serve
            .args(["serve", "--stdio", "--device", "fp-phone"])
            .env("RUST_LOG", "debug");
        let mut host = Host::start(serve);
        host.hello();
        let blocked = fleet.pane("blocked");
        for request in [
            json!({"schema":1,"id":"r","t":"receipts"}),
            json!({"schema":1,"id":"d","t":"dispatch","slot":format!("{blocked}:0:approve"),"host":"","pane":blocked,"action":"approve","binder":{"expect_episode_ms":0}}),
            json!({"schema":1,"id":"w","t":"window","pane":fleet.pane("idle")}),
        ] {
            host.send(&request.to_string());
            host.recv();
        }
        host.close();
        assert_eq!(host.exit_code(), 0);

        let mut made = tree(&home.dir.path().join("config"));
        made.retain(|(path, _, _)| !path.ends_with("config.toml"));
        made.extend(tree(&home.runtime_dir));
        let names: Vec<&str> = made.iter().map(|(path, _, _)| path.as_str()).collect();
        for needle in ["devices.toml", "serve/slot-0.lock", "cursor.key"] {
            assert!(
                names.iter().any(|name| name.ends_with(needle)),
                "umask {umask}: no {needle} in {names:#?}"
            );
        }
        for (path, dir, found) in &made {
            let want = if *dir { 0o700 } else { 0o600 };
            assert_eq!(*found, want, "umask {umask}: {path} is {found:04o}");
        }
    }
}

/// A store that another user could change is refused, naming the path and the fix: by every
/// device command, and by serve (internal, exit 1). A store others can only read is used, with a
/// warning.
#[test]
fn a_store_another_user_could_change_is_refused() {
    let home = Home::new("unused");
    home.enrol("phone", "fp-phone", &["read"]);
    let dir = home.dir.path().join("config/corral");
    let store = dir.join("devices.toml");

    for (open, fix) in [
        (&store, format!("chmod go-w {}", store.display())),
        (&dir, format!("chmod go-w {}", dir.display())),
    ] {
        let was = mode(open);
        chmod(open, if open == &store { 0o666 } else { 0o777 });
        for args in [
            &["device", "list"][..],
            &["device", "add", "tablet", "--id", "fp-tablet"],
            &["device", "revoke", "phone"],
        ] {
            let out = home.corral().args(args).output().unwrap();
            let stderr = String::from_utf8_lossy(&out.stderr);
            assert_eq!(out.status.code(), Some(1), "{args:?}: {stderr}");
            assert!(stderr.contains(&fix), "{args:?}: {stderr}");
        }
        let mut host = home.serve("fp-phone");
        let frame = host.recv();
        assert!(is_error(&frame, "0", "internal"), "{frame}");
        assert_eq!(host.exit_code(), 1);
        let stderr = host.stderr();
        assert!(stderr.contains(&fix), "{stderr}");
        chmod(open, was);
    }

    chmod(&store, 0o644);
    let out = home.corral().args(["device", "list"]).output().unwrap();
    assert!(out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("WARN") && stderr.contains(&format!("chmod 600 {}", store.display())),
        "{stderr}"
    );
    let mut host = home.serve("fp-phone");
    host.hello();
    host.close();
    assert_eq!(host.exit_code(), 0);
    assert!(host.stderr().contains("readable by other users"));
}

/// A runtime dir that another user could write is refused (it may hold their files already),
/// not made private; one they could only read is made 0700.
#[test]
fn a_runtime_dir_another_user_could_write_is_refused() {
    let home = Home::new(&test_support::unique("corral-absent"));
    home.enrol("phone", "fp-phone", &["read"]);
    let runtime = home.runtime().join("corral");
    std::fs::create_dir_all(&runtime).unwrap();
    chmod(&runtime, 0o777);
    let mut host = home.serve("fp-phone");
    let frame = host.recv();
    assert!(is_error(&frame, "0", "internal"), "{frame}");
    assert_eq!(host.exit_code(), 1);
    let stderr = host.stderr();
    assert!(
        stderr.contains(&format!("chmod go-w {}", runtime.display())),
        "{stderr}"
    );
    assert_eq!(mode(&runtime), 0o777, "left as it was");

    chmod(&runtime, 0o755);
    let mut host = home.serve("fp-phone");
    host.hello();
    assert_eq!(mode(&runtime), 0o700);
}

/// The rest of what makes a runtime dir untrustworthy: another user owns it, or it sits in a
/// parent another user may write without the sticky bit (who could replace it). Each is refused,
/// by `serve` (`internal`, exit 1) and by `corral act`, naming the path and the fix, and nothing
/// is changed; a sticky parent others may write (`/tmp`) is fine.
#[test]
fn a_runtime_dir_another_user_owns_or_could_replace_is_refused() {
    let home = Home::new(&test_support::unique("corral-absent"));
    home.enrol("phone", "fp-phone", &["read"]);
    let parent = home.runtime();
    let runtime = parent.join("corral");
    std::fs::create_dir_all(&runtime).unwrap();
    chmod(&runtime, 0o700);
    let refused = |needle: &str| {
        let mut host = home.serve("fp-phone");
        let frame = host.recv();
        assert!(is_error(&frame, "0", "internal"), "{frame}");
        assert_eq!(host.exit_code(), 1);
        let stderr = host.stderr();
        assert!(stderr.contains(needle), "{stderr}");
        let out = home
            .corral()
            .args(["act", "%1", "approve", "--slot", "s"])
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{stderr}");
        assert!(stderr.contains(needle), "{stderr}");
    };

    // Owned by nobody (only root can give a file away; a user's test cannot make this case).
    match std::os::unix::fs::chown(&runtime, Some(65534), Some(65534)) {
        Ok(()) => {
            refused(&format!("{} belongs to uid 65534", runtime.display()));
            let meta = std::fs::metadata(&runtime).unwrap();
            assert_eq!(
                std::os::unix::fs::MetadataExt::uid(&meta),
                65534,
                "left as it was"
            );
            let me = my_uid();
            std::os::unix::fs::chown(&runtime, Some(me), Some(me)).unwrap();
        }
        Err(err) => test_support::skipped(format!(
            "the runtime dir another user owns: chown to nobody was refused ({err})"
        )),
    }

    // In a parent others may write, and not sticky.
    chmod(&parent, 0o777);
    refused(&format!("chmod go-w {}", parent.display()));
    assert_eq!(mode(&parent), 0o777, "left as it was");
    chmod(&parent, 0o1777);
    let mut host = home.serve("fp-phone");
    host.hello();
    host.close();
    assert_eq!(host.exit_code(), 0);
}

/// This process's uid: the owner of what it creates.
fn my_uid() -> u32 {
    let probe = tempfile::tempfile().unwrap();
    std::os::unix::fs::MetadataExt::uid(&probe.metadata().unwrap())
}
