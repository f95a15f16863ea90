//! Signals during a test. The first Ctrl-C asks it to stop and keep what it measured (a study
//! finishes its point); SIGTERM and SIGHUP ask the same of a study's point too, which stops
//! as a run does (whoever sends them, a service manager, a batch system's time limit, the
//! workbench ending, wants the process gone soon, not after a point of minutes). A second
//! signal of any kind stops now, giving up the I/Os still in flight, and still keeps what was
//! measured; a third ends the process at once.

use std::sync::atomic::{AtomicBool, AtomicU8, Ordering::Relaxed};

use crate::error::Error;

/// How many times the user asked to stop.
static STOPS: AtomicU8 = AtomicU8::new(0);
/// A SIGTERM or SIGHUP came: a study's point stops too.
static POINT: AtomicBool = AtomicBool::new(false);

extern "C" fn on_interrupt(sig: libc::c_int) {
    if sig != libc::SIGINT {
        POINT.store(true, Relaxed);
    }
    let msg: &[u8] = match (STOPS.fetch_add(1, Relaxed), sig) {
        (0, libc::SIGINT) => {
            b"\niogauge: stopping; what is measured is kept (again: stop now, giving up the I/Os in flight)\n"
        }
        (0, _) => b"\niogauge: stopping (a study's point too); what is measured is kept (again: stop now, giving up the I/Os in flight)\n",
        (1, _) => b"\niogauge: stopping now: the I/Os in flight are given up; what is measured is kept (again: exit without saving)\n",
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

/// Whether a study's point is to stop too, as a run does (SIGTERM, SIGHUP, or a second stop).
pub(super) fn point() -> bool {
    POINT.load(Relaxed) || now()
}

/// Whether the user asked a second time: stop now, whatever is in flight.
pub(super) fn now() -> bool {
    STOPS.load(Relaxed) >= 2
}

/// Asks the test going to stop (the workbench's Stop under MPI, where its runs are in this
/// process): `times` 1 as a SIGTERM does (a study's point too), 2 at once.
pub(super) fn request(times: u8) {
    POINT.store(true, Relaxed);
    STOPS.fetch_max(times.min(2), Relaxed);
}

/// Forgets the stops asked: the in-process run they were for has ended.
pub(super) fn reset() {
    STOPS.store(0, Relaxed);
    POINT.store(false, Relaxed);
}

/// From now on Ctrl-C, SIGTERM and SIGHUP stop the test (before: they end the process, which has
/// measured nothing), and a reader that goes away (SIGPIPE: `--live-json - | head`, a
/// workbench that ended) ends nothing: the write fails with EPIPE, which the output says once,
/// and the test goes on to save its results; nor do SIGUSR1, SIGUSR2 or SIGALRM.
pub(super) fn stop_on_interrupt() {
    // SIGUSR1, SIGUSR2 and SIGALRM mean nothing to iogauge: one sent by hand (a script's stray
    // `kill -USR1`, as dd and fio are asked for progress) ends nothing, where by default it
    // would end the process unsaved.
    for sig in [libc::SIGPIPE, libc::SIGUSR1, libc::SIGUSR2, libc::SIGALRM] {
        // SAFETY: sets one signal's disposition; the handler is the kernel's own.
        unsafe { libc::signal(sig, libc::SIG_IGN) };
    }
    // SIGHUP: the ssh session dropped; the results are as worth keeping as after SIGTERM.
    for sig in [libc::SIGINT, libc::SIGTERM, libc::SIGHUP] {
        // SAFETY: the handler touches only atomics and async-signal-safe calls.
        unsafe { libc::signal(sig, on_interrupt as *const () as libc::sighandler_t) };
    }
    // A stop (Ctrl-Z) is timed, for the result to say (here for a test in the caller's session
    // or under MPI; one in a session of its own times them from its start, session.rs).
    crate::host::stops::time_stops();
}
