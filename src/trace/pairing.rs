//! Issues matched to their completions and let go in issue order: what a capture's rows and a
//! blktrace's events both need, since the kernel reports a request's issue and its completion
//! as two events with only the request's place and size in common.
//!
//! Requests are matched by (sector, size), first issued first completed; a requeued request is
//! forgotten until it is issued again. An issue is let go once it and every earlier one have
//! completed, so memory holds only what is in flight, however long the trace.

use std::collections::{HashMap, VecDeque};

/// Issues held waiting for an earlier one's completion before the oldest is let go as never
/// completed (a completion the kernel lost, a request that never ends).
const MAX_PENDING: usize = 1 << 20;

/// Where a request is and how big: (sector, size in the unit its events give).
pub(crate) type Key = (u64, u32);

/// How a request ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Completion {
    /// When (ns, on the issues' clock).
    pub at_ns: u64,
    /// The kernel's error number, 0 for success.
    pub error: i32,
}

/// Issues of type `R` in issue order, each with its completion once it came.
pub(crate) struct Pairing<R> {
    /// None: requeued (issued again later).
    rows: VecDeque<Option<(R, Option<Completion>)>>,
    /// The sequence number of `rows[0]`.
    first: u64,
    waiting: HashMap<Key, VecDeque<u64>>,
    /// Completions that matched no issue (the trace began after their issue).
    pub orphans: u64,
}

impl<R> Default for Pairing<R> {
    fn default() -> Self {
        Pairing { rows: VecDeque::new(), first: 0, waiting: HashMap::new(), orphans: 0 }
    }
}

impl<R> Pairing<R> {
    /// `r` was issued at `key`.
    pub(crate) fn issue(&mut self, key: Key, r: R) {
        self.waiting.entry(key).or_default().push_back(self.first + self.rows.len() as u64);
        self.rows.push_back(Some((r, None)));
    }

    /// The oldest request at `key` ended.
    pub(crate) fn complete(&mut self, key: Key, c: Completion) {
        let Some(seq) = self.waiting.get_mut(&key).and_then(VecDeque::pop_front) else {
            self.orphans += 1;
            return;
        };
        if let Some(Some((_, done))) = self.row(seq) {
            *done = Some(c);
        }
    }

    /// The latest request at `key` went back to the queue: it is issued again later, and its
    /// first issue is forgotten.
    pub(crate) fn requeue(&mut self, key: Key) {
        if let Some(seq) = self.waiting.get_mut(&key).and_then(VecDeque::pop_back)
            && let Some(row) = self.row(seq)
        {
            *row = None;
        }
    }

    /// The row of issue `seq`, unless it was let go already (unfinished, with too many behind
    /// it).
    fn row(&mut self, seq: u64) -> Option<&mut Option<(R, Option<Completion>)>> {
        let at = seq.checked_sub(self.first)?;
        self.rows.get_mut(usize::try_from(at).ok()?)
    }

    /// The oldest issue, once it has completed (or, with `all`, at the end of the trace,
    /// whether it has or not).
    pub(crate) fn pop(&mut self, all: bool) -> Option<(R, Option<Completion>)> {
        loop {
            let front = self.rows.front()?;
            let done = front.as_ref().is_none_or(|(_, c)| c.is_some());
            if !(done || all || self.rows.len() > MAX_PENDING) {
                return None;
            }
            let row = self.rows.pop_front().flatten();
            self.first += 1;
            if self.rows.is_empty() {
                self.waiting.clear();
            }
            if row.is_some() {
                return row;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn issues_leave_in_order_once_earlier_ones_complete() {
        let mut p = Pairing::default();
        p.issue((1, 1), 10);
        p.issue((2, 1), 20);
        p.issue((1, 1), 30);
        p.issue((3, 1), 40);
        p.requeue((3, 1));
        p.complete((2, 1), Completion { at_ns: 25, error: 0 });
        assert_eq!(p.pop(false), None, "the first request has not completed");
        p.complete((1, 1), Completion { at_ns: 40, error: -5 });
        assert_eq!(p.pop(false), Some((10, Some(Completion { at_ns: 40, error: -5 }))));
        assert_eq!(p.pop(false), Some((20, Some(Completion { at_ns: 25, error: 0 }))));
        assert_eq!(p.pop(false), None, "the second request at (1, 1) is still in flight");
        p.complete((9, 9), Completion { at_ns: 50, error: 0 });
        assert_eq!(p.orphans, 1);
        assert_eq!(p.pop(true), Some((30, None)));
        assert_eq!(p.pop(true), None, "the requeued issue is forgotten");
    }

    #[test]
    fn an_issue_let_go_unfinished_takes_no_late_completion_or_requeue() {
        let mut p = Pairing::default();
        p.issue((1, 1), 10);
        p.issue((2, 1), 20);
        assert_eq!(p.pop(true), Some((10, None)));
        // Its completion (or requeue) comes after it was let go: nothing left to mark.
        p.complete((1, 1), Completion { at_ns: 30, error: 0 });
        p.issue((1, 1), 40);
        p.requeue((1, 1));
        p.complete((2, 1), Completion { at_ns: 50, error: 0 });
        assert_eq!(p.pop(false), Some((20, Some(Completion { at_ns: 50, error: 0 }))));
        assert_eq!(p.pop(true), None);
    }
}
