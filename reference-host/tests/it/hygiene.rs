//! No test writes outside its temp dirs or leaves a process behind: a child given no temp dir
//! can write nowhere, a home's and a fleet's children find every location inside their temp
//! dirs, and a real fleet's server and socket file are gone once the fleet is dropped. (The run
//! as a whole is checked by `.ci/hygiene`: nothing in the fallback locations, nothing running.)

use std::path::Path;
use std::time::{Duration, Instant};

use crate::support::{Backend, Fleet, Home, LOCATIONS, NOWHERE, command, nowhere, unique};

/// Each variable of [`LOCATIONS`] as a child sees it, from `env`'s output.
fn locations(mut env: std::process::Command) -> Vec<(String, String)> {
    let out = env.output().unwrap();
    assert!(out.status.success());
    let mut seen: Vec<(String, String)> = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .filter_map(|line| line.split_once('='))
        .filter(|(name, _)| LOCATIONS.contains(name))
        .map(|(name, value)| (name.to_owned(), value.to_owned()))
        .collect();
    seen.sort();
    assert_eq!(seen.len(), LOCATIONS.len(), "{seen:?}");
    seen
}

#[test]
fn a_child_given_no_temp_dir_can_write_nowhere() {
    for (name, value) in locations(command("env")) {
        assert_eq!(Path::new(&value), nowhere(&name), "{name}");
    }
    // What `corral` would do with them: the runtime dir and tmux's socket dir cannot be made.
    let out = command(env!("CARGO_BIN_EXE_corral"))
        .args(["device", "add", "phone", "--id", "fp"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(
        String::from_utf8_lossy(&out.stderr).contains(NOWHERE),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let out = command("tmux")
        .args(["-L", &unique("corral-nowhere"), "-f", "/dev/null"])
        .args(["new-session", "-d"])
        .output()
        .unwrap();
    assert!(
        !out.status.success(),
        "a tmux server started in /tmp/tmux-<uid>"
    );
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("couldn't create directory /dev/null/"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn a_homes_children_find_every_location_inside_its_temp_dir() {
    let home = Home::new(&unique("corral-hygiene"));
    for (name, value) in locations(home.command("env")) {
        assert!(
            Path::new(&value).starts_with(home.dir.path()),
            "{name}={value} is outside {}",
            home.dir.path().display()
        );
    }
}

/// True once no live process (a zombie is not one) has this pid.
fn gone(pid: u32) -> bool {
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        let zombie = std::fs::read_to_string(format!("/proc/{pid}/stat"))
            .ok()
            .and_then(|stat| Some(stat.rsplit_once(") ")?.1.starts_with('Z')));
        if zombie.is_none_or(|zombie| zombie) {
            return true;
        }
        if Instant::now() > deadline {
            return false;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn a_dropped_real_fleet_leaves_no_server_and_no_socket() {
    let fleet = Fleet::up(Backend::Real);
    let home = fleet.home();
    for (name, value) in locations(home.command("env")) {
        let inside = [home.dir.path(), fleet.sim_dir.path()]
            .iter()
            .any(|dir| Path::new(&value).starts_with(dir));
        assert!(inside, "{name}={value} is outside the test's temp dirs");
    }
    let pid = fleet.server_pid();
    let socket = fleet.tmux(&["display-message", "-p", "#{socket_path}"]);
    let socket = Path::new(socket.trim_end()).to_owned();
    assert!(
        socket.starts_with(fleet.sim_dir.path()),
        "{}",
        socket.display()
    );
    assert!(socket.exists());
    drop(home);
    drop(fleet);
    assert!(gone(pid), "the fleet's tmux server {pid} still runs");
    assert!(!socket.exists(), "{} is left behind", socket.display());
}
