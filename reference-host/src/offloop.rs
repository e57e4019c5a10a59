//! One read at a time off an event loop (docs/protocol.md "Pushed reads"): a `serve`'s stream
//! and the notification daemon read the whole fleet on a thread of their own, so a push that
//! comes while tmux answers a read of 1000 panes is handled at once instead of after it.
//!
//! [`OffLoop`] runs one job at a time and keeps what the loop knows of it (`M`: when its tick
//! woke, say) until its answer is taken. A tick that comes while a job is under way is the
//! caller's to skip ([`OffLoop::under_way`]); a read wanted meanwhile (a push of many panes, which
//! the read under way may have begun before) is asked for with [`OffLoop::again`] and started by
//! the caller once the answer is taken. A job's panic is caught on its thread and resumed on the
//! loop when its answer is taken, so the process dies loudly, as it would had the read run on
//! the loop, instead of waiting for an answer that never comes. At exit, [`OffLoop::end`] waits
//! for the job under way: its tmux client is bounded by the tmux time-out, and would otherwise
//! outlive the process.

use std::sync::{Arc, mpsc};
use std::thread::JoinHandle;

/// A read to run off the loop.
pub type Job<A> = Box<dyn FnOnce() -> A + Send>;

/// Where the jobs run.
enum Runner {
    /// On the loop, as they are started (a loop that does not wait for [`OffLoop::answered`]).
    Inline,
    /// On a thread each.
    Thread,
    /// Kept until the test runs them ([`OffLoop::run_held`]).
    #[cfg(test)]
    Held(Vec<Box<dyn FnOnce() + Send>>),
}

/// One job at a time, off the loop; `M` is what the loop keeps of the job under way.
pub struct OffLoop<M, A> {
    runner: Runner,
    under_way: Option<M>,
    /// Another job is wanted as soon as the one under way is answered.
    again: bool,
    /// A job's answer, or its panic.
    answers: mpsc::Sender<std::thread::Result<A>>,
    answered: mpsc::Receiver<std::thread::Result<A>>,
    /// Woken when an answer was sent.
    ready: Arc<tokio::sync::Notify>,
    /// The thread of the job under way, or of the last one.
    thread: Option<JoinHandle<()>>,
}

impl<M, A> std::fmt::Debug for OffLoop<M, A> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OffLoop")
            .field("under_way", &self.under_way.is_some())
            .field("again", &self.again)
            .finish_non_exhaustive()
    }
}

impl<M, A: Send + 'static> OffLoop<M, A> {
    /// Jobs that run on the loop as they are started, until [`OffLoop::on_threads`].
    pub fn inline() -> OffLoop<M, A> {
        let (answers, answered) = mpsc::channel();
        OffLoop {
            runner: Runner::Inline,
            under_way: None,
            again: false,
            answers,
            answered,
            ready: Arc::new(tokio::sync::Notify::new()),
            thread: None,
        }
    }

    /// Runs the jobs on threads from now on; the loop waits for their answers with
    /// [`OffLoop::answered`].
    pub fn on_threads(&mut self) {
        self.runner = Runner::Thread;
    }

    /// Whether a job started now is answered before [`OffLoop::start`] returns.
    pub fn inline_now(&self) -> bool {
        matches!(self.runner, Runner::Inline)
    }

    /// What the loop keeps of the job under way, if one is.
    pub fn under_way(&self) -> Option<&M> {
        self.under_way.as_ref()
    }

    /// Starts `job`, keeping `meta` until its answer is taken. The caller starts none while one
    /// is under way.
    pub fn start(&mut self, meta: M, job: Job<A>) {
        debug_assert!(self.under_way.is_none(), "one job at a time");
        self.under_way = Some(meta);
        let (answers, ready) = (self.answers.clone(), Arc::clone(&self.ready));
        let run = move || {
            // The receiver lives as long as the loop: a send fails only as it ends.
            let _ = answers.send(std::panic::catch_unwind(std::panic::AssertUnwindSafe(job)));
            ready.notify_one();
        };
        match &mut self.runner {
            Runner::Inline => run(),
            Runner::Thread => self.thread = Some(crate::threads::spawn(run)),
            #[cfg(test)]
            Runner::Held(jobs) => jobs.push(Box::new(run)),
        }
    }

    /// Waits until a job has answered (never, while none is under way).
    pub async fn answered(&self) {
        self.ready.notified().await;
    }

    /// The answer of the job under way, with what the loop kept of it; `None` while it has not
    /// answered. A job that panicked panics here.
    pub fn take(&mut self) -> Option<(M, A)> {
        let answer = self.answered.try_recv().ok()?;
        let meta = self.under_way.take()?;
        Some((
            meta,
            answer.unwrap_or_else(|panic| std::panic::resume_unwind(panic)),
        ))
    }

    /// Asks for another job as soon as the one under way is answered.
    pub fn again(&mut self) {
        self.again = true;
    }

    /// Whether another job was asked for; the ask is forgotten.
    pub fn take_again(&mut self) -> bool {
        std::mem::take(&mut self.again)
    }

    /// Waits for the job under way, if any, to end: before the process exits.
    pub fn end(&mut self) {
        let Some(thread) = self.thread.take() else {
            return;
        };
        if self.under_way.is_some() && !thread.is_finished() {
            tracing::debug!("waiting for the read under way");
        }
        // The thread never panics: a job's panic is caught and handed to the loop.
        let _ = thread.join();
        tracing::debug!("no read is under way");
    }

    /// Keeps the jobs until [`OffLoop::run_held`] runs them (tests).
    #[cfg(test)]
    pub fn hold(&mut self) {
        self.runner = Runner::Held(Vec::new());
    }

    /// Runs the jobs held so far; their answers wait for [`OffLoop::take`] (tests).
    #[cfg(test)]
    pub fn run_held(&mut self) -> usize {
        let Runner::Held(jobs) = &mut self.runner else {
            return 0;
        };
        let jobs = std::mem::take(jobs);
        let count = jobs.len();
        for job in jobs {
            job();
        }
        count
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    fn block_on<F: Future>(future: F) -> F::Output {
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap()
            .block_on(future)
    }

    #[test]
    fn an_inline_job_is_answered_before_start_returns() {
        let mut reads: OffLoop<&str, u32> = OffLoop::inline();
        assert!(reads.inline_now());
        assert!(reads.take().is_none(), "nothing under way");
        reads.start("tick", Box::new(|| 7));
        assert_eq!(reads.under_way(), Some(&"tick"));
        assert_eq!(reads.take(), Some(("tick", 7)));
        assert_eq!(reads.under_way(), None);
        assert!(reads.take().is_none(), "one answer per job");
    }

    #[test]
    fn a_job_on_a_thread_wakes_the_loop_and_is_taken_once() {
        let mut reads: OffLoop<u8, &str> = OffLoop::inline();
        reads.on_threads();
        let (release, held) = mpsc::channel::<()>();
        reads.start(
            1,
            Box::new(move || {
                held.recv().unwrap();
                "answer"
            }),
        );
        assert!(!reads.inline_now());
        assert!(reads.take().is_none(), "not answered yet");
        assert_eq!(reads.under_way(), Some(&1));
        release.send(()).unwrap();
        block_on(async {
            tokio::time::timeout(Duration::from_secs(30), reads.answered())
                .await
                .expect("the answer wakes the loop");
        });
        assert_eq!(reads.take(), Some((1, "answer")));
        reads.end();
        assert!(reads.thread.is_none(), "joined");
    }

    #[test]
    fn a_job_s_panic_is_resumed_where_its_answer_is_taken() {
        let mut reads: OffLoop<(), u8> = OffLoop::inline();
        reads.on_threads();
        reads.start((), Box::new(|| panic!("tmux answered nonsense")));
        reads.end();
        let taken = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| reads.take()));
        let panic = taken.expect_err("the panic reaches the loop");
        assert_eq!(
            panic.downcast_ref::<&str>(),
            Some(&"tmux answered nonsense")
        );
    }

    #[test]
    fn a_job_asked_for_again_is_asked_once() {
        let mut reads: OffLoop<(), ()> = OffLoop::inline();
        assert!(!reads.take_again());
        reads.again();
        reads.again();
        assert!(reads.take_again());
        assert!(!reads.take_again());
    }

    #[test]
    fn held_jobs_run_when_the_test_says() {
        let mut reads: OffLoop<(), u8> = OffLoop::inline();
        reads.hold();
        reads.start((), Box::new(|| 3));
        assert!(reads.take().is_none());
        assert_eq!(reads.run_held(), 1);
        assert_eq!(reads.take(), Some(((), 3)));
    }
}
