//! The push path (docs/protocol.md "Push"): right after `corral event` stamps its pane, it tells
//! every running `serve` and the notification daemon of that tmux server which pane moved, so
//! they read that pane at once instead of waiting for their next cycle. The cycle stays what it
//! was: the push only brings a read forward.
//!
//! Each listener binds a unix datagram socket `<runtime>/push/<key>/<role>-<pid>-<nonce>.sock`
//! (0600, in private dirs; `<key>` names the tmux server as the daemon's files do,
//! `notify::server`). It binds under a staging name that starts with `.` and renames the socket
//! to its name, so a socket under a name always answers while its process lives; a name is never
//! used twice.
//!
//! A datagram names the pane, `%<digits>`, and may carry the hook's own read of it: the hook
//! stamps and reads its pane in one tmux invocation (`Tmux::stamp_and_read`), and hands that
//! read on ([`Carried`]), so a listener that can take it asks tmux nothing. On a line after the
//! pane id come the read's start and answer times (epoch ms) and the nonce that frames it, then
//! tmux's output as it was ([`encode`], [`decode`]). A read too big for [`DATAGRAM_CAP`] is left
//! out: the listener reads the pane itself.
//!
//! The hook's side ([`announce`]) never waits: one non-blocking `sendto` per socket of its
//! server's dir. A listener whose queue is full (it stopped reading) is skipped; a socket that
//! refuses (its process died without removing it) is removed, so a killed listener costs the next
//! hook one refused send and then nothing.
//!
//! The listener's side ([`Listener`]) reads datagrams on a thread of its own into an [`Inbox`]
//! that coalesces them: the event loop takes what is pending as one [`Pushed`], the distinct panes
//! in the order they came, each with the last read a datagram carried for it, or, past
//! [`PANE_CAP`] of them, the whole fleet.

use std::collections::HashMap;
use std::io::{self, ErrorKind};
use std::os::unix::fs::PermissionsExt;
use std::os::unix::net::UnixDatagram;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;

use crate::files::{self, SocketDir};

/// More distinct panes than this pending at once, and one read of the whole fleet costs less
/// than reading each: the listener is handed [`Pushed::Fleet`].
pub const PANE_CAP: usize = 8;

/// The longest datagram: a pane id and a carried read of its window (a few KiB, unless an agent
/// stamped a huge option, in which case the read stays behind).
pub const DATAGRAM_CAP: usize = 64 * 1024;

/// Whether `text` is a pane id as tmux writes it: `%` and digits.
pub fn is_pane_id(text: &str) -> bool {
    text.strip_prefix('%')
        .is_some_and(|digits| !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()))
}

/// What one [`announce`] did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Announced {
    /// Listeners the datagram was handed to.
    pub sent: usize,
    /// Listeners skipped because their queue was full (they are not reading).
    pub busy: usize,
    /// Sockets removed because nothing listened on them any more.
    pub removed: usize,
}

/// A pane read the hook made with its stamp, handed on with its push: tmux's output as it was.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Carried {
    /// When the read started and answered, epoch ms.
    pub started_ms: u64,
    pub answered_ms: u64,
    /// The nonce that frames the output.
    pub nonce: String,
    /// tmux's output: the pane's window (`list-panes -t`, the host's fields, no title), then the
    /// attached clients.
    pub output: Vec<u8>,
}

/// How old a carried read may be when a listener takes it: past this, the listener fell behind
/// (its queue may have dropped later pushes of the pane), and it reads the pane itself.
pub const CARRIED_FRESH_MS: u64 = 100;

impl Carried {
    /// Whether it answered less than [`CARRIED_FRESH_MS`] before `now_ms`: a listener that takes
    /// it later fell behind (its queue may have dropped later pushes of the pane), and reads the
    /// pane itself.
    pub fn fresh(&self, now_ms: u64) -> bool {
        now_ms.saturating_sub(self.answered_ms) < CARRIED_FRESH_MS
    }

    /// Whether a listener whose last read started at `floor_ms` takes this (fresh) read, given
    /// `stamps`: the pushed pane's `@agent_stamped_at` as this read shows it and as the
    /// listener remembers it. It does when the read started no earlier than the listener's last
    /// (the listener's memory never goes back in time), and also when it started earlier but
    /// shows a later stamp: every stamp writes `@agent_stamped_at`, so the read the listener
    /// remembers, which shows an earlier one, was answered by tmux before this stamp, and for
    /// that pane this read is the newer. That is the usual race at a short interval: a cycle's
    /// read starts while the hook's stamp waits for tmux, and is answered first. A missing stamp
    /// on either side proves nothing.
    pub fn takeable(&self, floor_ms: u64, stamps: Stamps) -> bool {
        self.started_ms >= floor_ms
            || matches!(stamps, Stamps { carried: Some(c), remembered: Some(r) } if c > r)
    }
}

/// What a listener whose last read started at `floor_ms` takes, at `now_ms`, of the read a push
/// carried: the pushed pane as `parse` finds it there (`Some(None)`: no agent pane), when the
/// read is fresh and [`Carried::takeable`] given the pane's stamp there (`stamp`) and the one the
/// listener remembers; `None` when the listener must read the pane itself.
pub fn take<P>(
    read: Option<&Carried>,
    (floor_ms, now_ms): (u64, u64),
    remembered: Option<u64>,
    parse: impl FnOnce(&Carried) -> Option<Option<P>>,
    stamp: impl Fn(&P) -> Option<u64>,
) -> Option<(Option<P>, &Carried)> {
    let read = read.filter(|read| read.fresh(now_ms))?;
    let found = parse(read)?;
    let stamps = Stamps {
        carried: found.as_ref().and_then(&stamp),
        remembered,
    };
    read.takeable(floor_ms, stamps).then_some((found, read))
}

/// Whether a read that shows a pane stamped at `read` (`@agent_stamped_at`) is older, for that
/// pane, than the reading a listener remembers, stamped at `remembered`: a push read the pane
/// after this read began (a listener reads the fleet off its loop and takes pushes meanwhile).
/// Every stamp writes a later `@agent_stamped_at`, so the remembered reading is the newer; a
/// missing stamp on either side proves nothing, and the read is taken.
pub fn overtaken(remembered: Option<u64>, read: Option<u64>) -> bool {
    matches!((remembered, read), (Some(remembered), Some(read)) if remembered > read)
}

/// A listener's memory of the fleet (each pane as its last read showed it), looked up as a read
/// of the whole fleet is applied: [`Later::of`] is the remembered row of a pane that the read
/// shows [`overtaken`]. One map, built once per read (the fleet may be 1000 panes every cycle),
/// of the rows that were ever stamped: no other can be overtaken.
#[derive(Debug)]
pub struct Later<'a>(HashMap<&'a str, &'a schema::FleetRow>);

impl<'a> Later<'a> {
    pub fn new(remembered: &'a [schema::FleetRow]) -> Later<'a> {
        Later(
            remembered
                .iter()
                .filter(|r| r.stamped_at_ms.is_some())
                .map(|r| (r.pane.as_str(), r))
                .collect(),
        )
    }

    /// The remembered row of `read`'s pane when `read` is older than it ([`overtaken`]).
    pub fn of(&self, read: &schema::FleetRow) -> Option<&'a schema::FleetRow> {
        self.0
            .get(read.pane.as_str())
            .copied()
            .filter(|r| overtaken(r.stamped_at_ms, read.stamped_at_ms))
    }
}

/// Pane `pane`'s `@agent_stamped_at` in `rows`, a listener's memory of the fleet (each pane as
/// its last read showed it): the `remembered` side of [`Stamps`]. `None` before any read, for a
/// pane the memory does not have, and for one never stamped.
pub fn remembered_stamp(rows: Option<&[schema::FleetRow]>, pane: &str) -> Option<u64> {
    rows?.iter().find(|r| r.pane == pane)?.stamped_at_ms
}

/// A pushed pane's `@agent_stamped_at` (epoch ms) as a carried read shows it and as a listener
/// remembers it ([`Carried::takeable`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Stamps {
    pub carried: Option<u64>,
    pub remembered: Option<u64>,
}

/// One pushed pane, and the read its last datagram carried, if any.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PushedPane {
    pub pane: String,
    pub read: Option<Carried>,
}

/// The datagram of a push of `pane`, with `read` when it fits [`DATAGRAM_CAP`].
pub fn encode(pane: &str, read: Option<&Carried>) -> Vec<u8> {
    let mut bytes = pane.as_bytes().to_vec();
    if let Some(read) = read {
        let head = format!(
            "\n{} {} {}\n",
            read.started_ms, read.answered_ms, read.nonce
        );
        if bytes.len() + head.len() + read.output.len() <= DATAGRAM_CAP {
            bytes.extend_from_slice(head.as_bytes());
            bytes.extend_from_slice(&read.output);
        }
    }
    bytes
}

/// The pushed pane a datagram names, with the read it carries; `None` for a datagram that names
/// no pane. A carried read that does not read as one is dropped: the pane is still pushed.
pub fn decode(bytes: &[u8]) -> Option<PushedPane> {
    let (id, rest) = match memchr::memchr(b'\n', bytes) {
        Some(at) => (&bytes[..at], Some(&bytes[at + 1..])),
        None => (bytes, None),
    };
    let pane = std::str::from_utf8(id).ok().filter(|p| is_pane_id(p))?;
    let read = rest.and_then(|rest| {
        let at = memchr::memchr(b'\n', rest)?;
        let head = std::str::from_utf8(&rest[..at]).ok()?;
        let mut words = head.split(' ');
        let started_ms = words.next()?.parse().ok()?;
        let answered_ms = words.next()?.parse().ok()?;
        let nonce = words.next().filter(|n| !n.is_empty())?.to_owned();
        if words.next().is_some() {
            return None;
        }
        Some(Carried {
            started_ms,
            answered_ms,
            nonce,
            output: rest[at + 1..].to_vec(),
        })
    });
    Some(PushedPane {
        pane: pane.to_owned(),
        read,
    })
}

/// Whether a process other than `me` listens in `dir` (a server's push dir) as `role`: a socket
/// named `<role>-<pid>-<nonce>.sock` (a staging name, `.`-led, does not count) whose pid is not
/// `me` and runs. A socket whose process died stays until a hook's push removes it, so its pid
/// is asked (signal 0: a process of another user still runs). A dir that cannot be read has no
/// listener.
pub fn listening(dir: &Path, role: &str, me: u32) -> bool {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return false;
    };
    entries.flatten().any(|entry| {
        let name = entry.file_name();
        let Some(pid) = name
            .to_str()
            .and_then(|name| {
                name.strip_suffix(".sock")?
                    .strip_prefix(role)?
                    .strip_prefix('-')
            })
            .and_then(|rest| rest.split_once('-'))
            .and_then(|(pid, _nonce)| pid.parse::<u32>().ok())
        else {
            return false;
        };
        pid != me && runs(pid)
    })
}

/// Whether process `pid` runs (signal 0 reaches it, or would were it ours).
fn runs(pid: u32) -> bool {
    let Some(pid) = i32::try_from(pid)
        .ok()
        .and_then(rustix::process::Pid::from_raw)
    else {
        return false;
    };
    match rustix::process::test_kill_process(pid) {
        Ok(()) => true,
        Err(err) => err == rustix::io::Errno::PERM,
    }
}

/// Tells every listener in `dir` (a server's push dir) that `pane` moved, handing on `read`, the
/// hook's own read of it, when it has one; without waiting for any of them. A dir that does not
/// exist has no listener. Never fails: what could not be sent is skipped, and logged at debug
/// level.
pub fn announce(dir: &Path, pane: &str, read: Option<&Carried>) -> Announced {
    let mut done = Announced::default();
    let entries = match std::fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(err) => {
            if err.kind() != ErrorKind::NotFound {
                tracing::debug!(dir = %dir.display(), %err, "no push: the listeners' dir is unreadable");
            }
            return done;
        }
    };
    let addresses = SocketDir::new(dir);
    let datagram = encode(pane, read);
    let socket = match UnixDatagram::unbound().and_then(|s| s.set_nonblocking(true).map(|()| s)) {
        Ok(socket) => socket,
        Err(err) => {
            tracing::debug!(%err, "no push: no datagram socket");
            return done;
        }
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let name = name.to_string_lossy();
        if name.starts_with('.') || !name.ends_with(".sock") {
            continue;
        }
        let path = entry.path();
        let sent = addresses
            .address(&name)
            .and_then(|address| socket.send_to(&datagram, address));
        match sent {
            Ok(_) => done.sent += 1,
            // A datagram socket nobody has open any more: its listener died without removing
            // it. Names are never reused, so the file is that dead listener's.
            Err(err) if err.kind() == ErrorKind::ConnectionRefused => {
                if std::fs::remove_file(&path).is_ok() {
                    done.removed += 1;
                }
            }
            Err(err) if err.kind() == ErrorKind::WouldBlock => done.busy += 1,
            Err(err) if err.kind() == ErrorKind::NotFound => {}
            Err(err) => tracing::debug!(path = %path.display(), %err, "a push was not sent"),
        }
    }
    done
}

/// What a listener was told since it last looked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Pushed {
    /// These panes moved, each once, in the order their first datagram came, each with the read
    /// its last datagram carried.
    Panes(Vec<PushedPane>),
    /// More than [`PANE_CAP`] panes moved: read the whole fleet.
    Fleet,
}

/// Datagrams read and not taken yet, coalesced.
#[derive(Debug, Default)]
struct Pending {
    panes: Vec<PushedPane>,
    overflow: bool,
}

impl Pending {
    fn add(&mut self, pushed: PushedPane) {
        if self.overflow {
            return;
        }
        if let Some(known) = self.panes.iter_mut().find(|p| p.pane == pushed.pane) {
            known.read = pushed.read;
            return;
        }
        if self.panes.len() == PANE_CAP {
            self.overflow = true;
            self.panes.clear();
            return;
        }
        self.panes.push(pushed);
    }

    fn take(&mut self) -> Option<Pushed> {
        let pending = std::mem::take(self);
        if pending.overflow {
            Some(Pushed::Fleet)
        } else if pending.panes.is_empty() {
            None
        } else {
            Some(Pushed::Panes(pending.panes))
        }
    }
}

/// What a listener's thread has read, for its event loop to take.
#[derive(Debug, Default)]
pub struct Inbox {
    pending: Mutex<Pending>,
    ready: tokio::sync::Notify,
}

impl Inbox {
    /// Adds one datagram's pane and wakes the loop.
    fn add(&self, pushed: PushedPane) {
        self.pending
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .add(pushed);
        self.ready.notify_one();
    }

    /// What is pending, if anything, and nothing after.
    pub fn take(&self) -> Option<Pushed> {
        self.pending
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .take()
    }

    /// Waits until something is pending, and takes it.
    pub async fn next(&self) -> Pushed {
        loop {
            if let Some(pushed) = self.take() {
                return pushed;
            }
            self.ready.notified().await;
        }
    }
}

/// One process's push socket, read on a thread of its own; removed when dropped.
#[derive(Debug)]
pub struct Listener {
    path: PathBuf,
    server: String,
    socket: UnixDatagram,
    inbox: Arc<Inbox>,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl Listener {
    /// Binds `<dir>/<role>-<pid>-<nonce>.sock` in `dir`, the push dir of the tmux server whose
    /// socket path is `server` (made private if missing), and starts reading it.
    pub fn bind(dir: &Path, server: &str, role: &str) -> io::Result<Listener> {
        files::create_private_dir(dir)?;
        let mut nonce = [0u8; 6];
        getrandom::fill(&mut nonce).map_err(|err| io::Error::other(err.to_string()))?;
        let nonce: String = nonce.iter().map(|b| format!("{b:02x}")).collect();
        let name = format!("{role}-{}-{nonce}.sock", std::process::id());
        let path = dir.join(&name);
        let staging = dir.join(format!(".{name}"));
        let socket = UnixDatagram::bind(SocketDir::new(dir).address(&format!(".{name}"))?)?;
        let named = std::fs::set_permissions(&staging, std::fs::Permissions::from_mode(0o600))
            .and_then(|()| std::fs::rename(&staging, &path));
        if let Err(err) = named {
            let _ = std::fs::remove_file(&staging);
            return Err(err);
        }
        let inbox = Arc::new(Inbox::default());
        let stop = Arc::new(AtomicBool::new(false));
        let thread = {
            let socket = socket.try_clone()?;
            let (inbox, stop) = (Arc::clone(&inbox), Arc::clone(&stop));
            crate::threads::spawn(move || read_datagrams(&socket, &inbox, &stop))
        };
        tracing::debug!(path = %path.display(), "listening for pushes");
        Ok(Listener {
            path,
            server: server.to_owned(),
            socket,
            inbox,
            stop,
            thread: Some(thread),
        })
    }

    /// The socket path of the tmux server this listener hears about.
    pub fn server(&self) -> &str {
        &self.server
    }

    /// Its socket's path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// What it was told, coalesced.
    pub fn inbox(&self) -> &Inbox {
        &self.inbox
    }
}

impl Drop for Listener {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.path);
        self.stop.store(true, Ordering::Relaxed);
        // Wakes the thread's blocked read: it returns at once once the socket is shut down.
        let _ = self.socket.shutdown(std::net::Shutdown::Both);
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// The listener's thread: every datagram that is a pane id goes into `inbox`; anything else is
/// dropped. Ends when the listener is dropped.
fn read_datagrams(socket: &UnixDatagram, inbox: &Inbox, stop: &AtomicBool) {
    // One byte more than the cap: a longer datagram shows as one, and is dropped.
    let mut buf = vec![0u8; DATAGRAM_CAP + 1];
    loop {
        let read = socket.recv(&mut buf);
        if stop.load(Ordering::Relaxed) {
            return;
        }
        match read {
            Ok(n) => match decode(&buf[..n]).filter(|_| n <= DATAGRAM_CAP) {
                Some(pushed) => inbox.add(pushed),
                None => tracing::debug!(bytes = n, "ignoring a push that names no pane"),
            },
            Err(err) if err.kind() == ErrorKind::Interrupted => {}
            Err(err) => {
                tracing::warn!(%err, "reading pushes failed; the cycle goes on without them");
                return;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::{Duration, Instant};

    /// Waits up to a second for the inbox to hold something.
    fn wait(inbox: &Inbox) -> Option<Pushed> {
        let deadline = Instant::now() + Duration::from_secs(1);
        loop {
            if let Some(pushed) = inbox.take() {
                return Some(pushed);
            }
            if Instant::now() > deadline {
                return None;
            }
            std::thread::sleep(Duration::from_millis(2));
        }
    }

    #[test]
    fn only_a_percent_and_digits_is_a_pane_id() {
        for good in ["%0", "%12", "%4294967295"] {
            assert!(is_pane_id(good), "{good}");
        }
        for bad in ["", "%", "12", "%1a", "% 1", "%-1", "work:0.1", "%1\n"] {
            assert!(!is_pane_id(bad), "{bad:?}");
        }
    }

    /// A push of `pane` with no read.
    fn bare(pane: &str) -> PushedPane {
        PushedPane {
            pane: pane.into(),
            read: None,
        }
    }

    fn carried(started_ms: u64, output: &[u8]) -> Carried {
        Carried {
            started_ms,
            answered_ms: started_ms + 3,
            nonce: "0123abcd".into(),
            output: output.to_vec(),
        }
    }

    #[test]
    fn pending_panes_coalesce_in_order_keep_the_last_read_and_overflow_to_the_fleet() {
        let mut pending = Pending::default();
        assert_eq!(pending.take(), None);
        let read = |n| PushedPane {
            read: Some(carried(n, b"x")),
            ..bare("%3")
        };
        for pushed in [read(1), bare("%1"), read(2), bare("%2")] {
            pending.add(pushed);
        }
        assert_eq!(
            pending.take(),
            Some(Pushed::Panes(vec![read(2), bare("%1"), bare("%2")])),
            "in the order they came, each with its last datagram's read"
        );
        assert_eq!(pending.take(), None, "taken once");
        for n in 0..PANE_CAP {
            pending.add(bare(&format!("%{n}")));
        }
        assert!(matches!(pending.take(), Some(Pushed::Panes(p)) if p.len() == PANE_CAP));
        for n in 0..=PANE_CAP {
            pending.add(bare(&format!("%{n}")));
        }
        pending.add(bare("%99"));
        assert_eq!(pending.take(), Some(Pushed::Fleet));
        assert_eq!(pending.take(), None);
    }

    #[test]
    fn a_listener_takes_the_pane_a_fresh_takeable_read_shows_and_parses_nothing_stale() {
        let read = carried(1000, b"");
        // The pane is its stamp here.
        let take_at = |floor, now, remembered, found: Option<Option<u64>>| {
            take(
                Some(&read),
                (floor, now),
                remembered,
                |_| found,
                |p| Some(*p),
            )
            .map(|(pane, _)| pane)
        };
        assert_eq!(take_at(1000, 1003, None, Some(Some(7))), Some(Some(7)));
        assert_eq!(
            take_at(1000, 1003, None, Some(None)),
            Some(None),
            "no agent pane"
        );
        assert_eq!(take_at(1000, 1003, None, None), None, "unparsed: read it");
        assert_eq!(take_at(1001, 1003, Some(6), Some(Some(7))), Some(Some(7)));
        assert_eq!(take_at(1001, 1003, Some(7), Some(Some(7))), None);
        assert_eq!(take_at(1001, 1003, Some(6), Some(None)), None);
        let parsed = std::cell::Cell::new(false);
        let stale = take(
            Some(&read),
            (0, 1003 + CARRIED_FRESH_MS),
            None,
            |_| {
                parsed.set(true);
                Some(Some(7u64))
            },
            |p| Some(*p),
        );
        assert!(
            stale.is_none() && !parsed.get(),
            "a stale read is not even parsed"
        );
        assert!(take(None, (0, 0), None, |_| Some(Some(7u64)), |p| Some(*p)).is_none());
    }

    #[test]
    fn a_carried_read_is_taken_only_fresh_and_no_older_than_the_last_or_with_a_later_stamp() {
        let read = carried(1000, b"");
        assert!(read.fresh(1003) && read.fresh(1003 + CARRIED_FRESH_MS - 1));
        assert!(
            !read.fresh(1003 + CARRIED_FRESH_MS),
            "the listener fell behind"
        );
        let none = Stamps::default();
        assert!(read.takeable(1000, none));
        assert!(
            !read.takeable(1001, none),
            "older than the listener's last read, and nothing says otherwise"
        );
        let stamps = |carried, remembered| Stamps {
            carried,
            remembered,
        };
        assert!(
            read.takeable(1001, stamps(Some(999), Some(998))),
            "started earlier, but the listener's last read was answered before its stamp"
        );
        for (carried, remembered) in [
            (Some(999), Some(999)),
            (Some(998), Some(999)),
            (None, Some(1)),
            (Some(999), None),
        ] {
            assert!(
                !read.takeable(1001, stamps(carried, remembered)),
                "{carried:?} {remembered:?}: the listener's read may have seen this stamp or a later one"
            );
        }
    }

    #[test]
    fn only_a_later_stamp_on_both_sides_overtakes_a_read() {
        assert!(overtaken(Some(2), Some(1)));
        for (remembered, read) in [
            (Some(1), Some(1)),
            (Some(1), Some(2)),
            (Some(2), None),
            (None, Some(1)),
            (None, None),
        ] {
            assert!(!overtaken(remembered, read), "{remembered:?} {read:?}");
        }
    }

    #[test]
    fn a_datagram_carries_the_pane_and_its_read_and_reads_back() {
        assert_eq!(encode("%4", None), b"%4");
        assert_eq!(decode(b"%4"), Some(bare("%4")));
        let read = carried(1_700_000_000_000, b"\x1e0123abcd\x1f%4\nclient\n\xff");
        let bytes = encode("%4", Some(&read));
        assert_eq!(
            decode(&bytes),
            Some(PushedPane {
                pane: "%4".into(),
                read: Some(read.clone())
            })
        );
        // Too big a read stays behind; the pane is pushed all the same.
        let huge = carried(1, &vec![b'x'; DATAGRAM_CAP]);
        assert_eq!(encode("%4", Some(&huge)), b"%4");
        // A datagram naming no pane is nothing; a read that does not read as one is dropped.
        for junk in [&b""[..], b"hello", b"%4x\n1 2 n\nout", b"\n1 2 n\n"] {
            assert_eq!(decode(junk), None, "{junk:?}");
        }
        for broken in [
            &b"%4\n"[..],
            b"%4\n1 2\nout",
            b"%4\nx 2 n\nout",
            b"%4\n1 2 n m\nout",
            b"%4\n1 2 n",
        ] {
            assert_eq!(decode(broken), Some(bare("%4")), "{broken:?}");
        }
    }

    #[test]
    fn only_another_running_process_of_the_role_listens() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path();
        let me = std::process::id();
        assert!(!listening(&dir.join("missing"), "serve", me));
        // A process that ran and was waited for: its pid runs no more.
        let mut child = stdx::process::command("true").spawn().unwrap();
        let dead = child.id();
        child.wait().unwrap();
        for name in [
            format!("serve-{me}-aa.sock"),
            format!("serve-{dead}-bb.sock"),
            "daemon-1-cc.sock".to_owned(),
            ".serve-1-dd.sock".to_owned(),
            "serve-1-ee.tmp".to_owned(),
            "serve-x-ff.sock".to_owned(),
        ] {
            std::fs::write(dir.join(name), b"").unwrap();
        }
        assert!(
            !listening(dir, "serve", me),
            "only me, the dead, another role, a staging name"
        );
        assert!(listening(dir, "daemon", me), "pid 1 always runs");
        // A listener bound by this process, seen from another's side, is a listener.
        std::fs::remove_file(dir.join(format!("serve-{me}-aa.sock"))).unwrap();
        assert!(!listening(dir, "serve", me + 1));
        let listener = Listener::bind(dir, "s", "serve").unwrap();
        assert!(listening(dir, "serve", me + 1));
        assert!(!listening(dir, "serve", me));
        drop(listener);
        assert!(!listening(dir, "serve", me + 1), "its socket goes with it");
    }

    #[test]
    fn a_runtime_dir_too_deep_for_a_socket_address_still_hears_its_pushes() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp
            .path()
            .join("x".repeat(60))
            .join("y".repeat(60))
            .join("push/k");
        assert!(dir.as_os_str().len() > files::SOCKET_PATH_MAX);
        let listener = Listener::bind(&dir, "/tmp/tmux-0/default", "daemon").unwrap();
        assert!(
            listener.path().starts_with(&dir),
            "named where it is listed"
        );
        assert_eq!(announce(&dir, "%7", None).sent, 1);
        assert_eq!(
            wait(listener.inbox()),
            Some(Pushed::Panes(vec![bare("%7")]))
        );
        // A listener that died is still found refused, and removed, through the handle.
        let dead = dir.join("serve-1-000000000000.sock");
        let sockets = SocketDir::new(&dir);
        let address = sockets.address("serve-1-000000000000.sock").unwrap();
        drop(UnixDatagram::bind(address).unwrap());
        assert!(dead.exists());
        assert_eq!(announce(&dir, "%8", None).removed, 1);
        assert!(!dead.exists());
    }

    #[test]
    fn a_listener_hears_an_announce_and_leaves_nothing_behind() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("push/k");
        let listener = Listener::bind(&dir, "/tmp/tmux-0/default", "serve").unwrap();
        let mode = std::fs::metadata(listener.path())
            .unwrap()
            .permissions()
            .mode()
            & 0o777;
        assert_eq!(mode, 0o600);
        let dir_mode = std::fs::metadata(&dir).unwrap().permissions().mode() & 0o777;
        assert_eq!(dir_mode, 0o700);
        let name = listener.path().file_name().unwrap().to_string_lossy();
        assert!(
            name.starts_with(&format!("serve-{}-", std::process::id())) && name.ends_with(".sock"),
            "{name}"
        );
        assert_eq!(
            announce(&dir, "%7", None),
            Announced {
                sent: 1,
                ..Announced::default()
            }
        );
        assert_eq!(
            wait(listener.inbox()),
            Some(Pushed::Panes(vec![bare("%7")]))
        );
        let read = carried(5, b"rows");
        announce(&dir, "%7", Some(&read));
        assert_eq!(
            wait(listener.inbox()),
            Some(Pushed::Panes(vec![PushedPane {
                pane: "%7".into(),
                read: Some(read)
            }]))
        );
        let path = listener.path().to_owned();
        drop(listener);
        assert!(!path.exists(), "a listener removes its socket");
        assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 0);
        assert_eq!(announce(&dir, "%7", None), Announced::default());
    }

    #[test]
    fn what_is_no_pane_id_is_dropped_by_the_listener() {
        let tmp = tempfile::tempdir().unwrap();
        let listener = Listener::bind(tmp.path(), "s", "serve").unwrap();
        let socket = UnixDatagram::unbound().unwrap();
        let too_long = [b"%1\n1 2 n\n".as_slice(), &vec![b'x'; DATAGRAM_CAP]].concat();
        for junk in [
            &b""[..],
            b"hello",
            b"%1;rm",
            b"\xff\xfe",
            &[b'%'; 200],
            &too_long,
        ] {
            socket.send_to(junk, listener.path()).unwrap();
        }
        socket.send_to(b"%5", listener.path()).unwrap();
        assert_eq!(
            wait(listener.inbox()),
            Some(Pushed::Panes(vec![bare("%5")]))
        );
    }

    #[test]
    fn a_missing_dir_and_a_dead_socket_cost_nothing_and_the_dead_one_is_removed() {
        let tmp = tempfile::tempdir().unwrap();
        assert_eq!(
            announce(&tmp.path().join("none"), "%1", None),
            Announced::default()
        );
        // A socket whose process is gone: bound, then closed without removing its file.
        let dead = tmp.path().join("serve-1-dead.sock");
        drop(UnixDatagram::bind(&dead).unwrap());
        // Files that are no listener's: a staging name, and something else.
        std::fs::write(tmp.path().join("notes.txt"), "x").unwrap();
        let staging = tmp.path().join(".serve-2-x.sock");
        let _binding = UnixDatagram::bind(&staging).unwrap();
        assert_eq!(
            announce(tmp.path(), "%1", None),
            Announced {
                removed: 1,
                ..Announced::default()
            }
        );
        assert!(!dead.exists(), "the dead socket was removed");
        assert!(staging.exists() && tmp.path().join("notes.txt").exists());
    }

    /// A listener that never reads: its queue fills, and every later announce skips it, never
    /// waiting for room (a send that waited would wait for ever: the announces run on a thread,
    /// and the test fails when they have not all returned long after they should have).
    #[test]
    fn a_listener_that_never_reads_is_skipped_without_waiting() {
        let tmp = tempfile::tempdir().unwrap();
        let stuck = tmp.path().join("serve-3-stuck.sock");
        let _stuck = UnixDatagram::bind(&stuck).unwrap();
        let dir = tmp.path().to_owned();
        let (done, answers) = std::sync::mpsc::channel();
        crate::threads::spawn(move || {
            let all: Vec<Announced> = (0..200).map(|_| announce(&dir, "%1", None)).collect();
            let _ = done.send(all);
        });
        let all = answers
            .recv_timeout(Duration::from_secs(60))
            .expect("an announce waited on a listener that never reads");
        assert!(all.iter().all(|a| a.removed == 0 && a.sent + a.busy == 1));
        assert!(all[0].sent == 1, "the first datagrams were queued");
        assert!(
            all.iter().any(|a| a.busy == 1),
            "the queue filled and later sends were skipped"
        );
        assert!(stuck.exists(), "a listener that is alive is never removed");
    }
}
