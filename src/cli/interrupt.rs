//! Ctrl-C, SIGTERM and SIGHUP during a test: the first asks it to stop and keep what it
//! measured (a study finishes its point), the second to stop now, giving up the I/Os still in
//! flight, and still keep what was measured; a third ends the process at once.

use std::sync::atomic::{AtomicU8, Ordering::Relaxed};

use crate::error::Error;

/// How many times the user asked to stop.
static STOPS: AtomicU8 = AtomicU8::new(0);

extern "C" fn on_interrupt(_: libc::c_int) {
    let msg: &[u8] = match STOPS.fetch_add(1, Relaxed) {
        0 => b"\niogauge: stopping; what is measured is kept (again: stop now, giving up the I/Os in flight)\n",
        1 => b"\niogauge: stopping now: the I/Os in flight are given up; what is measured is kept (again: exit without saving)\n",
        _ => {
            // SAFETY: _exit is async-signal-safe.
            unsafe { libc::_exit(Error::Stopped.exit_code()) }
        }
    };
    // SAFETY: write(2) is async-signal-safe; msg outlives the call.
    unsafe { libc::write(2, msg.as_ptr().cast(), msg.len()) };
}

/// Whether the user asked to stop.
pub(super) fn requested() -> bool {
    STOPS.load(Relaxed) >= 1
}

/// Whether the user asked a second time: stop now, whatever is in flight.
pub(super) fn now() -> bool {
    STOPS.load(Relaxed) >= 2
}

/// Asks the test going to stop, as a first Ctrl-C does (the workbench's Stop under MPI, where
/// its runs are in this process).
pub(super) fn request() {
    STOPS.fetch_max(1, Relaxed);
}

/// Forgets the stops asked: the in-process run they were for has ended.
pub(super) fn reset() {
    STOPS.store(0, Relaxed);
}

/// From now on Ctrl-C, SIGTERM and SIGHUP stop the test (before: they end the process, which has
/// measured nothing), and a reader that goes away (SIGPIPE: `--live-json - | head`, a
/// workbench that ended) ends nothing: the write fails with EPIPE, which the output says once,
/// and the test goes on to save its results.
pub(super) fn stop_on_interrupt() {
    // SAFETY: sets one signal's disposition; the handler is the kernel's own.
    unsafe { libc::signal(libc::SIGPIPE, libc::SIG_IGN) };
    // SIGHUP: the ssh session dropped; the results are as worth keeping as after SIGTERM.
    for sig in [libc::SIGINT, libc::SIGTERM, libc::SIGHUP] {
        // SAFETY: the handler touches only an atomic and async-signal-safe calls.
        unsafe { libc::signal(sig, on_interrupt as *const () as libc::sighandler_t) };
    }
    // A stop (Ctrl-Z) is timed, for the result to say (here for a test in the caller's session
    // or under MPI; one in a session of its own times them from its start, session.rs).
    crate::stops::time_stops();
}
