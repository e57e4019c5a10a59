//! Where a session's frames go on their way to stdout: a bounded queue that a thread of its own
//! writes out, so a client that stops reading never blocks the event loop (requests, ticks and
//! SIGTERM keep being handled), and a check the loop runs every cycle, so a client that left is
//! noticed even when there is nothing to send.
//!
//! The slow-reader policy (docs/protocol.md, "Slow readers"): at most [`BUDGET`] bytes of frames
//! wait unread, and they wait at most [`STALL`] without the client reading any of them. Past either,
//! the connection ends: the next write or check fails and the session exits 0. A frame is never
//! cut: it is queued whole or not at all, and a frame bigger than the budget alone still goes.

use std::collections::VecDeque;
use std::fs::File;
use std::io::{self, Write};
use std::os::fd::OwnedFd;
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use rustix::event::{PollFd, PollFlags, Timespec, poll};
use tokio::sync::Notify;

use crate::serve::transport::Sink;

/// The most bytes of frames that may wait unread.
pub const BUDGET: usize = 8 * 1024 * 1024;

/// The longest the client may leave waiting frames unread.
pub const STALL: Duration = Duration::from_secs(30);

/// The output of a session: frames queue here and a writer thread writes them to `fd`.
#[derive(Debug)]
pub struct Outbox {
    shared: Arc<Shared>,
    /// The output, for the check that its reader is still there.
    fd: OwnedFd,
    budget: usize,
    stall: Duration,
}

#[derive(Debug)]
struct Shared {
    state: Mutex<State>,
    /// The writer waits here for frames.
    queued: Condvar,
    /// A drain waits here for the queue to empty.
    written: Condvar,
    /// Wakes the event loop when the writer fails.
    failed: Arc<Notify>,
}

#[derive(Debug, Default)]
struct State {
    frames: VecDeque<Vec<u8>>,
    /// Bytes queued and not yet written, the frame being written included.
    waiting: usize,
    /// When the client last read something while bytes were waiting (or when bytes began to
    /// wait).
    progress: Option<Instant>,
    /// Why the output is unusable; every later write fails with it.
    broken: Option<(io::ErrorKind, String)>,
}

impl State {
    fn fail(&self) -> io::Result<()> {
        match &self.broken {
            Some((kind, why)) => Err(io::Error::new(*kind, why.clone())),
            None => Ok(()),
        }
    }
}

impl Outbox {
    /// An outbox writing to `fd` (stdout in production), with the protocol's budget and stall.
    pub fn new(fd: OwnedFd) -> io::Result<Outbox> {
        Outbox::with_limits(fd, BUDGET, STALL)
    }

    fn with_limits(fd: OwnedFd, budget: usize, stall: Duration) -> io::Result<Outbox> {
        let shared = Arc::new(Shared {
            state: Mutex::new(State::default()),
            queued: Condvar::new(),
            written: Condvar::new(),
            failed: Arc::new(Notify::new()),
        });
        let output = File::from(fd.try_clone()?);
        let writer = Arc::clone(&shared);
        crate::threads::spawn_named("stdout", move || write_out(&writer, output))?;
        Ok(Outbox {
            shared,
            fd,
            budget,
            stall,
        })
    }

    /// Notified when the writer fails, so the loop can check the outbox at once.
    pub fn failure(&self) -> Arc<Notify> {
        Arc::clone(&self.shared.failed)
    }

    fn state(&self) -> MutexGuard<'_, State> {
        lock(&self.shared.state)
    }

    /// Breaks the outbox for good with `why`, and says so.
    fn give_up(&self, state: &mut State, why: String) -> io::Error {
        tracing::warn!(unread_bytes = state.waiting, "{why}; ending the connection");
        state.broken = Some((io::ErrorKind::BrokenPipe, why));
        self.shared.written.notify_all();
        state.fail().unwrap_err()
    }
}

impl Write for Outbox {
    /// Queues all of `buf` (one whole frame) or none of it.
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let mut state = self.state();
        state.fail()?;
        if state.waiting > 0 && state.waiting + buf.len() > self.budget {
            let why = format!(
                "the client stopped reading: {} bytes of frames wait unread, more than {}",
                state.waiting + buf.len(),
                self.budget
            );
            return Err(self.give_up(&mut state, why));
        }
        if state.waiting == 0 {
            state.progress = Some(Instant::now());
        }
        state.waiting += buf.len();
        state.frames.push_back(buf.to_vec());
        self.shared.queued.notify_one();
        Ok(buf.len())
    }

    /// Nothing to do: the writer thread writes each frame as soon as the pipe takes it.
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

impl Sink for Outbox {
    fn check(&mut self) -> io::Result<()> {
        let mut state = self.state();
        state.fail()?;
        if state.waiting > 0 && state.progress.is_some_and(|at| at.elapsed() >= self.stall) {
            let why = format!(
                "the client stopped reading: nothing read for {:?} with {} bytes waiting",
                self.stall, state.waiting
            );
            return Err(self.give_up(&mut state, why));
        }
        drop(state);
        if reader_gone(&self.fd)? {
            let mut state = self.state();
            tracing::info!("the client closed its end of stdout");
            state.broken = Some((
                io::ErrorKind::BrokenPipe,
                "the client closed its end of the output".into(),
            ));
            self.shared.written.notify_all();
            return state.fail();
        }
        Ok(())
    }

    fn drain(&mut self, within: Duration) -> bool {
        let deadline = Instant::now() + within;
        let mut state = self.state();
        while state.waiting > 0 && state.broken.is_none() {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                tracing::info!(
                    unread_bytes = state.waiting,
                    "the client did not read the last frames in time"
                );
                return false;
            }
            state = self
                .shared
                .written
                .wait_timeout(state, left)
                .unwrap_or_else(std::sync::PoisonError::into_inner)
                .0;
        }
        state.waiting == 0
    }
}

/// Whether the other end of `fd` is gone: a pipe whose reader closed reports `POLLERR`, a socket
/// or terminal that hung up `POLLHUP`, even with nothing to write.
fn reader_gone(fd: &OwnedFd) -> io::Result<bool> {
    let mut fds = [PollFd::new(fd, PollFlags::empty())];
    let now = Timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    match poll(&mut fds, Some(&now)) {
        Ok(_) => Ok(fds[0].revents().intersects(PollFlags::ERR | PollFlags::HUP)),
        Err(rustix::io::Errno::INTR) => Ok(false),
        Err(errno) => Err(errno.into()),
    }
}

fn lock(state: &Mutex<State>) -> MutexGuard<'_, State> {
    state
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// The writer thread: writes frames in order until a write fails. Blocking in a write is its
/// job; nothing waits on it but [`Outbox::drain`], which is bounded.
fn write_out(shared: &Shared, mut output: File) {
    loop {
        let frame = {
            let mut state = lock(&shared.state);
            loop {
                if state.broken.is_some() {
                    return;
                }
                if let Some(frame) = state.frames.pop_front() {
                    break frame;
                }
                state = shared
                    .queued
                    .wait(state)
                    .unwrap_or_else(std::sync::PoisonError::into_inner);
            }
        };
        let mut rest = &frame[..];
        while !rest.is_empty() {
            match output.write(rest) {
                Ok(0) => {
                    fail(shared, io::ErrorKind::WriteZero, "the output took no bytes");
                    return;
                }
                Ok(n) => {
                    rest = &rest[n..];
                    let mut state = lock(&shared.state);
                    state.waiting -= n;
                    state.progress = Some(Instant::now());
                    if state.waiting == 0 {
                        shared.written.notify_all();
                    }
                }
                Err(err) if err.kind() == io::ErrorKind::Interrupted => {}
                Err(err) => {
                    fail(shared, err.kind(), &format!("writing to the client: {err}"));
                    return;
                }
            }
        }
    }
}

fn fail(shared: &Shared, kind: io::ErrorKind, why: &str) {
    let mut state = lock(&shared.state);
    if state.broken.is_none() {
        tracing::info!("{why}");
        state.broken = Some((kind, why.to_owned()));
    }
    shared.written.notify_all();
    shared.failed.notify_one();
}

#[cfg(test)]
mod tests {
    use std::io::Read;

    use super::*;

    /// An outbox on a fresh pipe, and the pipe's read end.
    fn outbox(budget: usize, stall: Duration) -> (Outbox, io::PipeReader) {
        let (reader, writer) = io::pipe().unwrap();
        let outbox = Outbox::with_limits(OwnedFd::from(writer), budget, stall).unwrap();
        (outbox, reader)
    }

    /// More than the pipe holds: the pipe's buffer is at most 1 MiB, unless raised.
    const PIPE_FULL: usize = 2 * 1024 * 1024;

    #[test]
    fn frames_reach_the_reader_whole_and_in_order_and_a_drain_sees_them_read() {
        let (mut out, mut reader) = outbox(BUDGET, STALL);
        out.write_all(b"one\n").unwrap();
        out.write_all(b"two\n").unwrap();
        let mut buf = [0u8; 8];
        reader.read_exact(&mut buf).unwrap();
        assert_eq!(&buf, b"one\ntwo\n");
        assert!(out.drain(Duration::from_secs(5)));
        out.check().unwrap();
    }

    #[test]
    fn writes_never_block_and_past_the_budget_the_connection_ends() {
        let (mut out, _reader) = outbox(PIPE_FULL + 4096, STALL);
        let frame = vec![b'x'; 4096];
        // The pipe fills, then the queue: every write returns at once.
        let mut queued = 0;
        let err = loop {
            match out.write(&frame) {
                Ok(n) => queued += n,
                Err(err) => break err,
            }
            assert!(queued <= 2 * PIPE_FULL + 8192, "the budget holds");
        };
        assert_eq!(err.kind(), io::ErrorKind::BrokenPipe);
        assert!(err.to_string().contains("stopped reading"), "{err}");
        assert!(out.write(b"more").is_err(), "it stays broken");
        assert!(out.check().is_err());
        assert!(
            !out.drain(Duration::from_secs(5)),
            "nothing more is drained"
        );
    }

    #[test]
    fn a_frame_bigger_than_the_budget_still_goes_when_nothing_waits() {
        let (mut out, mut reader) = outbox(16, STALL);
        out.write_all(&[b'y'; 100]).unwrap();
        let mut buf = vec![0u8; 100];
        reader.read_exact(&mut buf).unwrap();
        assert!(out.drain(Duration::from_secs(5)));
    }

    #[test]
    fn frames_left_unread_past_the_stall_end_the_connection() {
        let (mut out, _reader) = outbox(BUDGET, Duration::from_millis(100));
        // Enough to fill the pipe, so something waits.
        for _ in 0..(PIPE_FULL / 4096 + 2) {
            out.write_all(&[b'z'; 4096]).unwrap();
        }
        out.check().unwrap();
        std::thread::sleep(Duration::from_millis(150));
        let err = out.check().unwrap_err();
        assert!(err.to_string().contains("nothing read for"), "{err}");
    }

    #[test]
    fn a_reader_that_left_is_seen_with_nothing_to_write() {
        let (mut out, reader) = outbox(BUDGET, STALL);
        out.check().unwrap();
        drop(reader);
        let err = out.check().unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::BrokenPipe);
        assert!(out.write(b"late\n").is_err());
    }

    #[test]
    fn a_drain_gives_up_after_its_time() {
        let (mut out, _reader) = outbox(BUDGET, STALL);
        for _ in 0..(PIPE_FULL / 4096 + 2) {
            out.write_all(&[b'w'; 4096]).unwrap();
        }
        let started = Instant::now();
        assert!(!out.drain(Duration::from_millis(100)));
        assert!(started.elapsed() >= Duration::from_millis(100));
    }
}
