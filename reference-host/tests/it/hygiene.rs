//! No test writes outside its temp dirs or leaves a process behind: a child given no temp dir
//! can write nowhere, a home's and a fleet's children find every location inside their temp
//! dirs, and a real fleet's server and socket file are gone once the fleet is dropped. (The run
//! as a whole is checked by `.ci/hygiene`: nothing in the fallback locations, nothing running.)

use std::path::Path;
use std::time::{Duration, Instant};

use test_support::{NOWHERE, command, seen_locations, unique};

use crate::support::{Backend, Fleet, Home};

/// What `corral` would do with the locations a child given no temp dir gets: the runtime dir
/// cannot be made. (`test-support` checks that a child sees them, and what tmux does.)
#[test]
fn a_child_given_no_temp_dir_can_write_nowhere() {
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
}

#[test]
fn a_homes_children_find_every_location_inside_its_temp_dir() {
    let home = Home::new(&unique("corral-hygiene"));
    for (name, value) in seen_locations(home.command("env")) {
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
    for (name, value) in seen_locations(home.command("env")) {
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
