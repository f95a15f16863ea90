//! Ctrl-C, SIGTERM and SIGHUP during a test: the first asks it to stop and keep what it
//! measured, a second ends the process at once.

use std::sync::atomic::{AtomicBool, Ordering::Relaxed};

use crate::error::Error;

/// Set by the first Ctrl-C (or SIGTERM): a run stops at once and keeps what it measured; a
/// study finishes its current point and keeps the points done.
static STOP: AtomicBool = AtomicBool::new(false);

extern "C" fn on_interrupt(_: libc::c_int) {
    if STOP.swap(true, Relaxed) {
        // SAFETY: _exit is async-signal-safe. A second Ctrl-C leaves at once.
        unsafe { libc::_exit(Error::Stopped.exit_code()) };
    }
    let msg = b"\niogauge: stopping; what is measured is kept (Ctrl-C again to stop at once)\n";
    // SAFETY: write(2) is async-signal-safe; msg outlives the call.
    unsafe { libc::write(2, msg.as_ptr().cast(), msg.len()) };
}

/// Whether the user asked to stop.
pub(super) fn requested() -> bool {
    STOP.load(Relaxed)
}

/// From now on Ctrl-C, SIGTERM and SIGHUP stop the test (before: they end the process, which has
/// measured nothing).
pub(super) fn stop_on_interrupt() {
    // SIGHUP: the ssh session dropped; the results are as worth keeping as after SIGTERM.
    for sig in [libc::SIGINT, libc::SIGTERM, libc::SIGHUP] {
        // SAFETY: the handler touches only an atomic and async-signal-safe calls.
        unsafe { libc::signal(sig, on_interrupt as *const () as libc::sighandler_t) };
    }
}
