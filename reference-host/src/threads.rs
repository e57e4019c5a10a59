//! The host's threads, each started with the signals its loops wait for blocked.
//!
//! A signal sent to the process (SIGHUP from `kill -HUP`, SIGTERM from sshd or systemd) is taken
//! by one thread that does not block it. Usually that is the main thread, but after a stop
//! (SIGSTOP, a debugger, a frozen cgroup) it is whichever thread runs first once the process is
//! continued. tokio hears a signal on any thread (its handler writes a pipe that its driver
//! reads), but a handler on a helper thread may run only after the main thread's loop has looked:
//! the daemon could then start a cycle that is due on the old config while a SIGHUP is already
//! pending. Every helper thread (pipes of a tmux call, the push listener, the daemon's socket,
//! the stdout writer, a notification command's wait) is therefore started here, with SIGHUP,
//! SIGINT and SIGTERM blocked, so that the kernel has one thread to give them to: the one
//! running the loop. `cargo xtask tidy` refuses a thread started anywhere else in this crate's
//! sources. The one exception is the hook's signal watcher (`hook::interrupted`), which is the
//! thread that must take them.

use nix::sys::signal::{SigSet, SigmaskHow, Signal, pthread_sigmask};
use std::io;
use std::thread::{Builder, JoinHandle};

/// The signals the host's loops wait for.
const WAITED_FOR: [Signal; 3] = [Signal::SIGHUP, Signal::SIGINT, Signal::SIGTERM];

/// Starts `f` on a thread of its own that never takes SIGHUP, SIGINT or SIGTERM.
pub fn spawn<F, T>(f: F) -> JoinHandle<T>
where
    F: FnOnce() -> T + Send + 'static,
    T: Send + 'static,
{
    start(Builder::new(), f).expect("failed to spawn thread")
}

/// [`spawn`] with a name, and the error of a thread the system would not start.
pub fn spawn_named<F, T>(name: &str, f: F) -> io::Result<JoinHandle<T>>
where
    F: FnOnce() -> T + Send + 'static,
    T: Send + 'static,
{
    start(Builder::new().name(name.to_owned()), f)
}

/// A new thread inherits its creator's mask: the signals are blocked in the calling thread for
/// the moment of the spawn, then its own mask is put back. A signal that comes in that moment
/// waits, pending, and is taken when the mask is put back; nothing is lost.
fn start<F, T>(builder: Builder, f: F) -> io::Result<JoinHandle<T>>
where
    F: FnOnce() -> T + Send + 'static,
    T: Send + 'static,
{
    let mut blocked = SigSet::empty();
    for signal in WAITED_FOR {
        blocked.add(signal);
    }
    let mut before = SigSet::empty();
    // pthread_sigmask fails only for an invalid `how`; without a mask the thread still runs.
    let masked = pthread_sigmask(SigmaskHow::SIG_BLOCK, Some(&blocked), Some(&mut before)).is_ok();
    let spawned = builder.spawn(f);
    if masked {
        let _ = pthread_sigmask(SigmaskHow::SIG_SETMASK, Some(&before), None);
    }
    spawned
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mask() -> SigSet {
        SigSet::thread_get_mask().unwrap()
    }

    #[test]
    fn a_thread_started_here_blocks_the_waited_for_signals_and_its_creator_keeps_its_mask() {
        let before = mask();
        let inside = spawn(mask).join().unwrap();
        for signal in WAITED_FOR {
            assert!(inside.contains(signal), "{signal} reaches the thread");
        }
        let after = mask();
        for signal in WAITED_FOR {
            assert_eq!(after.contains(signal), before.contains(signal), "{signal}");
        }
        // A plain thread would take them: the test's own threads do not block them.
        assert!(
            !std::thread::spawn(mask)
                .join()
                .unwrap()
                .contains(Signal::SIGHUP)
        );
        let named = spawn_named("probe", || {
            (std::thread::current().name().map(str::to_owned), mask())
        });
        let (name, inside) = named.unwrap().join().unwrap();
        assert_eq!(name.as_deref(), Some("probe"));
        assert!(inside.contains(Signal::SIGTERM));
    }
}
