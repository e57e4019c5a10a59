//! Which tmux server a daemon serves: one daemon per server, so its lock and its socket in the
//! runtime dir are named by a key derived from the server's socket path. The path is the one
//! tmux reports (`#{socket_path}`); with no server running yet, it is computed as tmux would
//! (`-S path`; `-L name` or the default under `$TMUX_TMPDIR/tmux-<uid>/`; `$TMUX` when inside
//! tmux with no selection), so a daemon started before its server is found by later commands.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

use crate::tmux::{Socket, Tmux, TmuxError};

/// A tmux server, named.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Server {
    /// Its socket path.
    pub socket_path: String,
    /// 16 hex digits of the path's SHA-256: the daemon's lock and socket name.
    pub key: String,
}

impl Server {
    /// The server at `socket_path`.
    pub fn at(socket_path: String) -> Server {
        let digest = Sha256::digest(socket_path.as_bytes());
        let key = digest[..8].iter().map(|b| format!("{b:02x}")).collect();
        Server { socket_path, key }
    }
}

/// The server `tmux` talks to.
pub fn identify(tmux: &Tmux) -> Server {
    identify_answered(tmux, tmux.socket_path())
}

/// [`identify`], given what `tmux.socket_path()` already answered (a caller that needs the
/// answer itself asks once).
pub fn identify_answered(tmux: &Tmux, asked: Result<Option<String>, TmuxError>) -> Server {
    match asked {
        Ok(Some(path)) => return Server::at(path),
        Ok(None) => {}
        Err(err) => tracing::warn!(%err, "asking tmux for its socket path failed"),
    }
    let uid = rustix::process::getuid().as_raw();
    let path = computed(tmux.socket(), |name| std::env::var_os(name), uid);
    Server::at(path.to_string_lossy().into_owned())
}

/// The socket path tmux itself would use for `socket`.
fn computed(socket: Option<&Socket>, var: impl Fn(&str) -> Option<OsString>, uid: u32) -> PathBuf {
    let named = |name: &str| {
        let base = var("TMUX_TMPDIR")
            .filter(|v| !v.is_empty())
            .map_or_else(|| PathBuf::from("/tmp"), PathBuf::from);
        let dir = base.join(format!("tmux-{uid}"));
        // tmux resolves its socket dir; so must a path computed to match it.
        std::fs::canonicalize(&dir).unwrap_or(dir).join(name)
    };
    match socket {
        Some(Socket::Path(path)) => absolute(path),
        Some(Socket::Name(name)) => named(name),
        None => {
            let inside = var("TMUX").and_then(|value| {
                let value = value.to_string_lossy().into_owned();
                let path = value.split(',').next().unwrap_or("").to_owned();
                (!path.is_empty()).then(|| PathBuf::from(path))
            });
            inside.unwrap_or_else(|| named("default"))
        }
    }
}

fn absolute(path: &Path) -> PathBuf {
    if path.is_absolute() {
        return path.to_owned();
    }
    std::env::current_dir().map_or_else(|_| path.to_owned(), |dir| dir.join(path))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vars(pairs: &[(&str, &str)]) -> impl Fn(&str) -> Option<OsString> {
        let map: Vec<(String, OsString)> = pairs
            .iter()
            .map(|(k, v)| ((*k).to_owned(), OsString::from(v)))
            .collect();
        move |name| map.iter().find(|(k, _)| k == name).map(|(_, v)| v.clone())
    }

    #[test]
    fn the_path_is_computed_as_tmux_computes_it() {
        let none = vars(&[]);
        assert_eq!(
            computed(Some(&Socket::Path("/s/x".into())), &none, 7),
            PathBuf::from("/s/x")
        );
        assert_eq!(
            computed(
                Some(&Socket::Name("w".into())),
                vars(&[("TMUX_TMPDIR", "/nonexistent-t")]),
                7
            ),
            PathBuf::from("/nonexistent-t/tmux-7/w")
        );
        assert_eq!(
            computed(None, vars(&[("TMUX", "/run/tmux-7/work,123,0")]), 7),
            PathBuf::from("/run/tmux-7/work")
        );
        assert_eq!(
            computed(None, vars(&[("TMUX_TMPDIR", "/nonexistent-t")]), 7),
            PathBuf::from("/nonexistent-t/tmux-7/default")
        );
    }

    #[test]
    fn a_server_s_key_is_stable_and_short() {
        let a = Server::at("/tmp/tmux-0/default".into());
        assert_eq!(a, Server::at("/tmp/tmux-0/default".into()));
        assert_ne!(a.key, Server::at("/tmp/tmux-0/other".into()).key);
        assert_eq!(a.key.len(), 16);
        assert!(a.key.bytes().all(|b| b.is_ascii_hexdigit()));
    }
}
