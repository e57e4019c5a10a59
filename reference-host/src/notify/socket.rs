//! The daemon's unix socket, `<runtime>/notify/daemon-<key>.sock` (0600, in the 0700 runtime
//! dir). One request per connection: the client writes one line, the daemon answers one line
//! and closes.
//!
//! | request | answer |
//! |---|---|
//! | `ring` | the transition ring, one JSON line (`TransitionRing`) |
//! | `ping` | `pong` |
//! | `transition <Transition JSON>` | `ok` once recorded (a move someone observed, as an agent's hook; corral's own hooks push instead, `crate::push`) |
//! | anything else | `error <why>` |

use std::io::{self, BufRead, BufReader, Write};
use std::os::unix::fs::PermissionsExt;
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::Path;
use std::time::Duration;

use schema::TransitionRing;
use schema::notify::Transition;

use crate::files::SocketDir;

/// How long either side waits for the other's line.
pub const PATIENCE: Duration = Duration::from_secs(5);
/// The longest request line.
const LINE_CAP: u64 = 64 * 1024;

/// What the socket asks of the daemon's event loop.
#[derive(Debug)]
pub enum Request {
    /// The ring, as one JSON line, on the channel.
    Ring(std::sync::mpsc::Sender<String>),
    /// Record a hook's transition.
    Hook(Transition),
}

/// Binds the socket at `path` (a stale one is replaced: the caller holds the daemon lock) and
/// makes it 0600.
pub fn bind(path: &Path) -> io::Result<UnixListener> {
    match std::fs::remove_file(path) {
        Ok(()) => {}
        Err(err) if err.kind() == io::ErrorKind::NotFound => {}
        Err(err) => return Err(err),
    }
    let (dir, name) = SocketDir::of(path)?;
    let listener = UnixListener::bind(dir.address(&name)?)?;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600))?;
    Ok(listener)
}

/// Answers connections on a thread of its own until the process exits; what needs the daemon's
/// state goes to `ask` and waits for the loop's answer.
pub fn serve(listener: UnixListener, ask: tokio::sync::mpsc::Sender<Request>) {
    crate::threads::spawn(move || {
        for stream in listener.incoming() {
            let Ok(stream) = stream else { continue };
            let ask = ask.clone();
            crate::threads::spawn(move || {
                if let Err(err) = answer(stream, &ask) {
                    tracing::debug!(%err, "a socket client went away");
                }
            });
        }
    });
}

fn answer(stream: UnixStream, ask: &tokio::sync::mpsc::Sender<Request>) -> io::Result<()> {
    stream.set_read_timeout(Some(PATIENCE))?;
    stream.set_write_timeout(Some(PATIENCE))?;
    let mut line = String::new();
    BufReader::new(io::Read::take(&stream, LINE_CAP)).read_line(&mut line)?;
    let line = line.trim_end_matches('\n');
    let (word, rest) = line.split_once(' ').unwrap_or((line, ""));
    let reply = match word {
        "ping" => "pong".to_owned(),
        "ring" => {
            let (tx, rx) = std::sync::mpsc::channel();
            if ask.blocking_send(Request::Ring(tx)).is_err() {
                return Ok(());
            }
            match rx.recv_timeout(PATIENCE) {
                Ok(ring) => ring,
                Err(_) => "error the daemon did not answer".to_owned(),
            }
        }
        "transition" => match serde_json::from_str::<Transition>(rest) {
            Ok(transition) => match ask.blocking_send(Request::Hook(transition)) {
                Ok(()) => "ok".to_owned(),
                Err(_) => return Ok(()),
            },
            Err(err) => format!("error bad transition: {err}"),
        },
        other => format!("error unknown request `{other}`"),
    };
    let mut stream = stream;
    stream.write_all(format!("{reply}\n").as_bytes())
}

/// Sends one request line to the daemon at `path`; its one-line answer.
fn request(path: &Path, line: &str) -> io::Result<String> {
    let (dir, name) = SocketDir::of(path)?;
    let mut stream = UnixStream::connect(dir.address(&name)?)?;
    stream.set_read_timeout(Some(PATIENCE))?;
    stream.set_write_timeout(Some(PATIENCE))?;
    stream.write_all(format!("{line}\n").as_bytes())?;
    let mut answer = String::new();
    BufReader::new(stream).read_line(&mut answer)?;
    if let Some(why) = answer.strip_prefix("error ") {
        return Err(io::Error::other(why.trim_end().to_owned()));
    }
    Ok(answer.trim_end_matches('\n').to_owned())
}

/// True when a daemon answers at `path`.
pub fn ping(path: &Path) -> bool {
    request(path, "ping").is_ok_and(|answer| answer == "pong")
}

/// The running daemon's ring.
pub fn ring(path: &Path) -> io::Result<TransitionRing> {
    let answer = request(path, "ring")?;
    serde_json::from_str(&answer).map_err(io::Error::other)
}

#[cfg(test)]
mod tests {
    use super::*;
    use schema::notify::{RING_CAP, RING_SCHEMA_VERSION};
    use schema::{State, TransitionSource};

    /// A socket served like the daemon's, with a loop on a thread that records hook
    /// transitions and answers the ring with them.
    #[test]
    fn ring_ping_and_hook_transitions_over_the_socket() {
        let tmp = tempfile::tempdir().unwrap();
        answers_at(&tmp.path().join("d.sock"));
        // A runtime dir too deep for a socket address: the same, through the dir's handle.
        let deep = tmp.path().join("r".repeat(70)).join("notify");
        crate::files::create_private_dir(&deep).unwrap();
        let path = deep.join("daemon-0123456789abcdef.sock");
        assert!(path.as_os_str().len() > crate::files::SOCKET_PATH_MAX);
        answers_at(&path);
    }

    fn answers_at(path: &Path) {
        let tmp = tempfile::tempdir().unwrap();
        let path = path.to_owned();
        std::fs::write(&path, b"stale").unwrap();
        let listener = bind(&path).unwrap();
        let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600);
        let (tx, mut rx) = tokio::sync::mpsc::channel(4);
        serve(listener, tx);
        crate::threads::spawn(move || {
            let mut kept = Vec::new();
            while let Some(request) = rx.blocking_recv() {
                match request {
                    Request::Hook(t) => kept.push(t),
                    Request::Ring(reply) => {
                        let ring = TransitionRing {
                            schema: RING_SCHEMA_VERSION,
                            cap: RING_CAP,
                            recorded: kept.len() as u64,
                            transitions: kept.clone(),
                        };
                        let _ = reply.send(serde_json::to_string(&ring).unwrap());
                    }
                }
            }
        });
        assert!(ping(&path));
        let transition = Transition {
            pane: "%4".into(),
            from: Some(State::Working),
            to: Some(State::Blocked),
            at: 7,
            source: TransitionSource::Hook,
        };
        let line = serde_json::to_string(&transition).unwrap();
        assert_eq!(request(&path, &format!("transition {line}")).unwrap(), "ok");
        let ring = ring(&path).unwrap();
        assert_eq!(ring.transitions, [transition]);
        let err = request(&path, "teleport").unwrap_err();
        assert!(err.to_string().contains("teleport"), "{err}");
        assert!(request(&path, "transition {").is_err());
        assert!(!ping(&tmp.path().join("none.sock")), "no daemon, no pong");
    }
}
