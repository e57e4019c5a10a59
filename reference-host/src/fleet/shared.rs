//! One fleet read per cycle for every `serve` of the host (docs/protocol.md "Shared cycle
//! reads"): the streams of every connection to one tmux server cycle on one schedule, and at each
//! of its instants the first process to wake reads tmux and leaves the answer in the runtime dir
//! (`<runtime>/fleet/<key>-<fields>-<interval>.read`, under its `.lock`); the others, woken at the
//! same instant, parse that answer instead of asking tmux again. So an idle host pays tmux one
//! read per interval whatever the number of connections, and each connection after the first
//! only its own parse.
//!
//! A read is left only while another `serve` of the server listens for its pushes (`Others`):
//! a lone connection writes nothing.
//!
//! The file is a cache: written whole (temp and rename, no sync: after a crash it is merely old),
//! it holds a header line and tmux's answer as tmux gave it (with the nonce that frames it). A
//! read is taken from it only when it started at most [`tolerance`] before the process woke,
//! which on a shared schedule is this very instant's read, and not before the process's own last
//! read (its subscription, a push) began; anything else (an old file, another
//! interval, another format, a file that does not parse) is no cache, and the process reads tmux
//! itself and writes its answer for the others. A failed read is not written: each process meets
//! tmux's failure itself, as it would alone.
//!
//! The schedule: the header carries `origin_ms`, the instant the schedule started, and every
//! cycle of every process is due at `origin_ms + k × interval`. The first process to read finds
//! no schedule and starts one at its read; later ones adopt it while it is alive (a read in the
//! last two intervals, at the same interval).

use std::io::{self, BufRead, Read};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::clock::now_ms;
use crate::files;
use crate::runtime::RuntimeDir;
use crate::tmux::read::{Fields, Listing, RawListing};
use crate::tmux::{Answer, TmuxError};

/// The first line of a shared read's file, before its header. Its number moves with the formats'
/// columns: a process of another version (an upgrade under way) finds no read it could take.
const MAGIC: &str = "corral-fleet-read 2";

/// How long before a process woke a shared read may have started and still be this cycle's:
/// a quarter of the interval, at most 100 ms (processes on one schedule wake within a few ms of
/// each other; a read that old is no older than the one a process that overslept would make).
pub fn tolerance(interval: Duration) -> u64 {
    u64::try_from((interval / 4).as_millis())
        .unwrap_or(u64::MAX)
        .min(100)
}

/// A read of the whole fleet for one cycle, shared or not.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Shared {
    /// tmux's answer.
    pub raw: RawListing,
    /// Its panes.
    pub listing: Listing,
    /// When the read that made it started and answered, epoch ms.
    pub started_ms: u64,
    pub answered_ms: u64,
    /// The instant the schedule started (`origin_ms + k × interval` are its cycles).
    pub origin_ms: u64,
}

/// The header line of a shared read's file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
struct Header {
    /// How many reads were written to this file.
    generation: u64,
    interval_ms: u64,
    origin_ms: u64,
    started_ms: u64,
    answered_ms: u64,
    /// The format's name ([`field_name`]).
    fields: String,
    nonce: String,
    /// The socket no server listened on, when none did; the output follows otherwise.
    no_server: Option<String>,
}

/// The name a format goes by in a file name and header; `None` for one that is never shared.
fn field_name(fields: Fields) -> Option<&'static str> {
    match fields {
        Fields::Edge => Some("edge"),
        Fields::Row => Some("row"),
        Fields::Host | Fields::Notify { .. } | Fields::Place => None,
    }
}

/// The shared reads of one tmux server.
#[derive(Debug, Clone)]
pub struct SharedReads {
    dir: PathBuf,
    key: String,
    others: Others,
}

/// The push dir of the tmux server at a socket path: where its `serve` processes listen
/// (`crate::serve::pushes::push_dir`, which names it as a `serve` does).
pub type PushDirs = Arc<dyn Fn(&str) -> PathBuf + Send + Sync>;

/// Who else could take a read this process leaves in the file.
#[derive(Clone)]
enum Others {
    /// The other `serve` processes of the server: those listening in its push dir, found by the
    /// socket path the read shows (`me` is this process's pid).
    Listening { push_dirs: PushDirs, me: u32 },
    /// Always someone (tests that play several processes in one).
    #[cfg(test)]
    Assumed,
}

impl std::fmt::Debug for Others {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Others::Listening { me, .. } => f.debug_struct("Listening").field("me", me).finish(),
            #[cfg(test)]
            Others::Assumed => f.write_str("Assumed"),
        }
    }
}

impl Others {
    /// Whether a read left now could be taken by another process. A `serve` alone leaves
    /// nothing: writing the fleet's read every cycle for nobody, and reading the file back,
    /// were about a quarter of its own work per cycle at 100 panes, and the data reached the
    /// disk where the runtime dir is on one ([`files::replace`]). A `serve` that connects
    /// meanwhile finds no schedule and starts one; the first, seeing its socket, leaves its
    /// next read and adopts that schedule from the file.
    fn any(&self, read: &Listing) -> bool {
        match self {
            Others::Listening { push_dirs, me } => {
                // No pane (or no server), no row: no `serve` listens for this server's pushes.
                let Some(pane) = read.panes().first() else {
                    return false;
                };
                crate::push::listening(&push_dirs(&pane.socket_path), "serve", *me)
            }
            #[cfg(test)]
            Others::Assumed => true,
        }
    }
}

impl SharedReads {
    /// The shared reads of the tmux server `key` names, in `runtime`'s `fleet/`. `serve` names
    /// it by the socket path tmux would use for its selection (no tmux call; processes that
    /// name one server differently merely do not share). A read is left for the others only
    /// while one listens in the push dir `push_dirs` names for the server the read shows.
    pub fn new(runtime: &RuntimeDir, key: String, push_dirs: PushDirs) -> SharedReads {
        SharedReads {
            dir: runtime.fleet_dir(),
            others: Others::Listening {
                push_dirs,
                me: std::process::id(),
            },
            key,
        }
    }

    /// Shared reads in `dir`, under `key`, always left for another process (tests).
    #[cfg(test)]
    pub fn at(dir: &std::path::Path, key: &str) -> SharedReads {
        SharedReads {
            dir: dir.to_owned(),
            key: key.to_owned(),
            others: Others::Assumed,
        }
    }

    /// Shared reads in `dir`, under `key`, left only while another process than `me` listens
    /// as a `serve` in `push_dir`, the push dir of every server (tests).
    #[cfg(test)]
    pub fn listening_at(
        dir: &std::path::Path,
        key: &str,
        push_dir: PathBuf,
        me: u32,
    ) -> SharedReads {
        SharedReads {
            dir: dir.to_owned(),
            key: key.to_owned(),
            others: Others::Listening {
                push_dirs: Arc::new(move |_| push_dir.clone()),
                me,
            },
        }
    }

    /// `<key>-<fields>-<interval ms>.<ext>`: processes on different intervals never share.
    fn path(&self, fields: &str, interval_ms: u64, ext: &str) -> PathBuf {
        self.dir
            .join(format!("{}-{fields}-{interval_ms}.{ext}", self.key))
    }

    /// This cycle's read of `fields` at `interval`, for a process that woke at `woke_ms` and
    /// whose last read of any kind started at `floor_ms` (a stream never takes a read older than
    /// what it has seen: its memory of the fleet would go back in time): the one in the file when
    /// it is this cycle's and started at or after the floor, else one made now with `read` (tmux)
    /// and left in the file. A format that is never shared is read directly.
    pub fn read(
        &self,
        fields: Fields,
        interval: Duration,
        (woke_ms, floor_ms): (u64, u64),
        read: impl FnOnce(Fields) -> Result<(RawListing, Listing), TmuxError>,
    ) -> Result<Shared, TmuxError> {
        let interval_ms = u64::try_from(interval.as_millis()).unwrap_or(u64::MAX);
        let Some(name) = field_name(fields) else {
            let started_ms = now_ms();
            let (raw, listing) = read(fields)?;
            return Ok(Shared {
                raw,
                listing,
                started_ms,
                answered_ms: now_ms(),
                origin_ms: started_ms,
            });
        };
        let since = woke_ms.saturating_sub(tolerance(interval)).max(floor_ms);
        let this_cycle =
            |h: &Header| h.interval_ms == interval_ms && h.fields == name && h.started_ms >= since;
        if let Some(shared) = self.load(name, interval_ms, fields, &this_cycle) {
            return Ok(shared);
        }
        // Whoever holds the lock is reading this cycle: waiting for it costs less than asking
        // tmux again. A lock that cannot be had (the dir unusable) leaves this process on its own.
        let lock = files::create_private_dir(&self.dir)
            .and_then(|()| files::lock(&self.path(name, interval_ms, "lock")));
        if let Err(err) = &lock {
            tracing::debug!(%err, "reading the fleet without sharing it");
        }
        if let Some(shared) = self.load(name, interval_ms, fields, &this_cycle) {
            return Ok(shared);
        }
        let last = self.header(name, interval_ms).map(|(header, _)| header);
        let started_ms = now_ms();
        let (raw, listing) = read(fields)?;
        let answered_ms = now_ms();
        let alive = |h: &Header| {
            h.interval_ms == interval_ms && h.answered_ms + 2 * interval_ms >= started_ms
        };
        let origin_ms = last
            .as_ref()
            .filter(|h| alive(h))
            .map_or(started_ms, |h| h.origin_ms);
        let generation = last.map_or(1, |h| h.generation + 1);
        let shared = Shared {
            raw,
            listing,
            started_ms,
            answered_ms,
            origin_ms,
        };
        if lock.is_ok()
            && self.others.any(&shared.listing)
            && let Err(err) = self.store(name, generation, interval_ms, &shared)
        {
            tracing::debug!(%err, "the fleet read was not left for the other processes");
        }
        Ok(shared)
    }

    /// The file's header, when it has one, and the file after it. Only the header is read: a
    /// file that is not this cycle's (the usual case for a process that reads tmux) costs a few
    /// hundred bytes, not the fleet's read (about 280 KB at 1000 panes).
    fn header(&self, name: &str, interval_ms: u64) -> Option<(Header, impl BufRead)> {
        let file = std::fs::File::open(self.path(name, interval_ms, "read")).ok()?;
        let mut file = io::BufReader::new(file);
        let mut line = Vec::new();
        file.read_until(b'\n', &mut line).ok()?;
        if line != format!("{MAGIC}\n").as_bytes() {
            return None;
        }
        line.clear();
        file.read_until(b'\n', &mut line).ok()?;
        let header = serde_json::from_slice(line.strip_suffix(b"\n")?).ok()?;
        Some((header, file))
    }

    /// The file's read of `fields`, when its header is one `wanted` takes and its output parses.
    fn load(
        &self,
        name: &str,
        interval_ms: u64,
        fields: Fields,
        wanted: &dyn Fn(&Header) -> bool,
    ) -> Option<Shared> {
        let (header, mut rest) = self.header(name, interval_ms)?;
        if !wanted(&header) {
            return None;
        }
        let mut output = Vec::new();
        rest.read_to_end(&mut output).ok()?;
        decode(header, &output, fields)
    }

    fn store(
        &self,
        name: &str,
        generation: u64,
        interval_ms: u64,
        shared: &Shared,
    ) -> io::Result<()> {
        let bytes = encode(name, generation, interval_ms, shared);
        files::replace(&self.path(name, interval_ms, "read"), &bytes, 0o600)
    }
}

/// The file's bytes: [`MAGIC`], the header, then tmux's output.
fn encode(name: &str, generation: u64, interval_ms: u64, shared: &Shared) -> Vec<u8> {
    let (no_server, output): (Option<String>, &[u8]) = match &shared.raw.answer {
        Answer::Output(out) => (None, out),
        Answer::NoServer { socket } => (Some(socket.clone()), &[]),
    };
    let header = Header {
        generation,
        interval_ms,
        origin_ms: shared.origin_ms,
        started_ms: shared.started_ms,
        answered_ms: shared.answered_ms,
        fields: name.to_owned(),
        nonce: shared.raw.nonce.clone(),
        no_server,
    };
    let mut bytes = format!(
        "{MAGIC}\n{}\n",
        serde_json::to_string(&header).expect("a header always encodes")
    )
    .into_bytes();
    bytes.extend_from_slice(output);
    bytes
}

/// The read a file's `header` and `output` hold, when its output parses as `fields`.
fn decode(header: Header, output: &[u8], fields: Fields) -> Option<Shared> {
    let answer = match header.no_server {
        Some(socket) => Answer::NoServer { socket },
        None => Answer::Output(output.to_vec()),
    };
    let raw = RawListing {
        fields,
        nonce: header.nonce,
        answer,
    };
    let listing = raw.listing().ok()?;
    Some(Shared {
        raw,
        listing,
        started_ms: header.started_ms,
        answered_ms: header.answered_ms,
        origin_ms: header.origin_ms,
    })
}

/// The wall-clock instant, epoch ms, of the first cycle of a schedule started at `origin_ms`
/// with `interval_ms` that comes at least half an interval after `after_ms`: when a stream that
/// cycled at `after_ms` cycles next.
pub fn next_instant(origin_ms: u64, interval_ms: u64, after_ms: u64) -> u64 {
    let interval_ms = interval_ms.max(1);
    let earliest = after_ms + interval_ms / 2;
    if earliest <= origin_ms {
        return origin_ms;
    }
    let k = (earliest - origin_ms).div_ceil(interval_ms);
    origin_ms + k * interval_ms
}

#[cfg(test)]
mod tests;
