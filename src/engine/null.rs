//! The null engine: no I/O at all, every I/O completes at once with its full length.
//!
//! It measures iogauge's own cost per I/O and gives exact counts for tests.

use super::{Completion, Engine, Io};

/// Completes every queued I/O at the next submit, without a system call.
#[derive(Default)]
pub struct NullEngine {
    queued: Vec<Completion>,
}

impl Engine for NullEngine {
    fn max_in_flight(&self) -> usize {
        usize::MAX
    }

    /// # Safety
    /// Nothing to uphold: the null engine never touches `io.buf`.
    #[inline]
    unsafe fn queue(&mut self, io: &Io) {
        self.queued.push(Completion { slot: io.slot, result: io.len as i32 });
    }

    #[inline]
    fn submit_and_wait(
        &mut self,
        _min_complete: usize,
        _timeout: Option<std::time::Duration>,
        out: &mut Vec<Completion>,
    ) -> std::io::Result<()> {
        out.append(&mut self.queued);
        Ok(())
    }

    fn describe(&self) -> String {
        "null".into()
    }
}
