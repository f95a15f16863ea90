//! Where a worker's I/Os come from: drawn by the generator from the access specification, or
//! read from a trace being replayed. The loop asks one [`Source`] for each slot's next I/O and
//! is built once per kind of source, so neither costs the other anything.

use super::generator::Generator;
use crate::stats::Op;
use crate::trace::replay::Replayer;

/// An I/O to issue: its specification line (whose pacing and sync follow it), operation,
/// offset, length and FUA.
#[derive(Clone, Copy)]
pub(super) struct Drawn {
    pub(super) line: usize,
    pub(super) op: Op,
    pub(super) offset: u64,
    pub(super) len: u32,
    pub(super) fua: bool,
}

/// What a source has next.
pub(super) enum Next {
    Io(Drawn),
    /// Nothing before this instant (ns from the worker's epoch).
    At(u64),
    /// Nothing ever again.
    End,
}

pub(super) trait Source {
    /// The next I/O of a slot of target `target` (the plan's order) at `now` (ns from the
    /// epoch); an I/O given counts as issued.
    fn next_io(&mut self, target: usize, now: u64) -> Next;
}

impl Generator {
    /// The specification's next I/O on `target`.
    #[inline(always)]
    pub(super) fn draw(&mut self, target: usize) -> Drawn {
        let (line, op, offset) = self.next(target);
        // A line's size is that of its last draw (a line of sizes in a range).
        let l = &self.lines[line];
        Drawn { line, op, offset, len: if op == Op::Flush { 0 } else { l.size }, fua: l.fua }
    }
}

impl Source for Generator {
    /// Always an I/O: the specification's next draw.
    #[inline(always)]
    fn next_io(&mut self, target: usize, _now: u64) -> Next {
        Next::Io(self.draw(target))
    }
}

impl Source for Replayer {
    /// The trace's next I/O once it is due (its lateness counted), on the specification's
    /// one line.
    #[inline(always)]
    fn next_io(&mut self, _target: usize, now: u64) -> Next {
        match self.peek() {
            None => Next::End,
            Some(d) if d.due_ns > now => Next::At(d.due_ns),
            Some(d) => {
                self.advance(&d, now);
                Next::Io(Drawn { line: 0, op: d.io.op, offset: d.io.offset, len: d.io.len, fua: d.io.fua })
            }
        }
    }
}
