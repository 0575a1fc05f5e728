//! Ctrl-C, SIGTERM and SIGHUP: the first sets [`INTERRUPTED`] (the run then
//! ends and writes what it measured), a second exits at once with 130.
//!
//! The handler runs in the signal's own context, not on a thread: a thread
//! would share the process's file table, and while it is shared each socket
//! call of the measuring thread takes and drops a reference on its file, a
//! cost per sample that a single-threaded peer tool does not pay (see
//! `pubsubperf_core::helper`). The second signal leaves with `_exit(2)`:
//! what is buffered for standard output is not written then.

use pubsubperf_harness::INTERRUPTED;
use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};
use std::sync::Once;
use std::sync::atomic::Ordering;

/// What the first signal prints on standard error.
pub enum Notice {
    /// "interrupted; writing what was measured" (a run in the foreground).
    Say,
    /// Nothing (a peer's process: its publisher reports for it).
    Quiet,
}

const SAID: &str =
    "pubsubperf: interrupted; writing what was measured (Ctrl-C again to quit at once)\n";

/// Installs the handler for SIGINT, SIGTERM and SIGHUP, once: a later call
/// changes nothing (a second action per signal would make the first signal
/// also the second).
pub fn install(notice: Notice) {
    static INSTALLED: Once = Once::new();
    INSTALLED.call_once(|| register(matches!(notice, Notice::Say)));
}

fn register(say: bool) {
    for signal in [SIGINT, SIGTERM, SIGHUP] {
        // SAFETY: the action is async-signal-safe: an atomic swap, write(2)
        // of a static string and _exit(2) (signal_hook's `exit`).
        let _ = unsafe { signal_hook::low_level::register(signal, move || on_signal(say)) };
    }
}

fn on_signal(say: bool) {
    if INTERRUPTED.swap(true, Ordering::SeqCst) {
        signal_hook::low_level::exit(130);
    }
    if say {
        // SAFETY: a static buffer of SAID.len() bytes.
        let _ = unsafe { libc::write(2, SAID.as_ptr().cast(), SAID.len()) };
    }
}
