//! Ending a session without waiting on a dead link.
//!
//! zenoh closes a session when its last handle goes, and then waits up to
//! its close timeout (10 s in zenoh 1.10, settable only through its
//! unstable internal API) for each transport to say goodbye. Over a blocked
//! link that wait held the end of a run for 10 s after the harness had
//! already found the fault. So the last handle is let go on a thread of its
//! own, which the caller waits for at most [`CLOSE_WAIT`]: a healthy close
//! takes milliseconds and is waited for; a close stuck on a dead link goes
//! on in the background until zenoh's own timeout or the process's exit.

use std::ops::Deref;
use std::time::Duration;
use zenoh::Session;

/// The longest a run waits for a session to close.
pub(crate) const CLOSE_WAIT: Duration = Duration::from_secs(1);

/// Lets `session` go (closing it if this is its last handle), then runs
/// `after`; waits for both at most [`CLOSE_WAIT`].
pub(crate) fn let_go(session: Session, after: impl FnOnce() + Send + 'static) {
    let (done, finished) = std::sync::mpsc::channel();
    let spawned = std::thread::Builder::new()
        .name("zenoh-close".into())
        .spawn(move || {
            crate::unpin_current_thread();
            drop(session);
            after();
            let _ = done.send(());
        });
    if spawned.is_ok() {
        let _ = finished.recv_timeout(CLOSE_WAIT);
    }
}

/// A session handle that is let go through [`let_go`] when dropped.
pub(crate) struct Held(Option<Session>);

impl Held {
    pub(crate) fn new(session: Session) -> Held {
        Held(Some(session))
    }
}

impl Deref for Held {
    type Target = Session;
    fn deref(&self) -> &Session {
        self.0.as_ref().expect("a held session until dropped")
    }
}

impl Drop for Held {
    fn drop(&mut self) {
        if let Some(s) = self.0.take() {
            let_go(s, || {});
        }
    }
}
