//! A connection's push socket (`crate::push`): bound when its stream's first read names the tmux
//! server (the rows' `server`), before that read's frames are written, so a client that has seen
//! them knows later hooks reach this connection; bound again should the server's socket path
//! change; removed when the session ends.

use crate::notify::server::Server;
use crate::push::{Listener, Pushed};
use crate::runtime::RuntimeDir;

/// The push dir of the tmux server whose socket path is `server`, in `runtime`: where its
/// `serve` processes and its daemon listen, named by the server's key as the daemon's files are.
pub fn push_dir(runtime: &RuntimeDir, server: &str) -> std::path::PathBuf {
    runtime.push_dir(&Server::at(server.to_owned()).key)
}

/// The push socket of one connection, once it has one.
#[derive(Debug)]
pub struct Pushes {
    runtime: RuntimeDir,
    listener: Option<Listener>,
    /// The server a bind failed for, so it is not tried again every cycle.
    failed: Option<String>,
}

impl Pushes {
    /// No socket yet; they go in `runtime`'s push dirs.
    pub fn new(runtime: RuntimeDir) -> Pushes {
        Pushes {
            runtime,
            listener: None,
            failed: None,
        }
    }

    /// Listens for the pushes of the tmux server whose socket path is `server`, unless it does
    /// already (or could not, for that server).
    pub fn follow(&mut self, server: &str) {
        if self.listener.as_ref().is_some_and(|l| l.server() == server)
            || self.failed.as_deref() == Some(server)
        {
            return;
        }
        self.listener = None;
        let dir = push_dir(&self.runtime, server);
        match Listener::bind(&dir, server, "serve") {
            Ok(listener) => {
                tracing::info!(socket = %listener.path().display(), "listening for pushes");
                self.listener = Some(listener);
            }
            Err(err) => {
                tracing::warn!(dir = %dir.display(), %err, "no push socket: edges wait for the cycle");
                self.failed = Some(server.to_owned());
            }
        }
    }

    /// The socket path of the server it listens for, if it listens.
    #[cfg(test)]
    pub fn server(&self) -> Option<&str> {
        self.listener.as_ref().map(Listener::server)
    }

    /// The next push, whenever it comes; never, without a socket.
    pub async fn next(&self) -> Pushed {
        match &self.listener {
            Some(listener) => listener.inbox().next().await,
            None => std::future::pending().await,
        }
    }
}
