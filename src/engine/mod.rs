//! I/O engines: one file each, behind one interface (fio's `engines/`).
//!
//! A worker queues I/Os, then asks the engine to submit them and wait for some completions. Engines never allocate or lock per I/O.

pub mod io_uring;
pub mod io_wq;
pub mod null;
pub mod psync;

use std::alloc::{Layout, alloc_zeroed, dealloc};

/// One I/O for an engine to do.
#[derive(Debug, Clone, Copy)]
pub struct Io {
    /// The worker's slot that owns this I/O; returned with the completion.
    pub slot: u32,
    /// Index of the target in the worker's list.
    pub target: u32,
    /// Write (else read).
    pub write: bool,
    /// Byte offset on the target.
    pub offset: u64,
    /// Bytes to transfer.
    pub len: u32,
    /// Memory to transfer from or to; inside buffer region `region`.
    pub buf: *mut u8,
    /// Which registered buffer region `buf` lies in (0: read slots, 1: write data).
    pub region: u16,
}

/// A finished I/O: the slot and the kernel's result (bytes, or a negative errno).
#[derive(Debug, Clone, Copy)]
pub struct Completion {
    /// The slot given in [`Io::slot`].
    pub slot: u32,
    /// Bytes transferred, or -errno.
    pub result: i32,
}

/// What every engine does.
pub trait Engine {
    /// Most I/Os it can have in flight at once (psync: 1).
    fn max_in_flight(&self) -> usize;
    /// Queues an I/O for the next [`Engine::submit_and_wait`].
    fn queue(&mut self, io: &Io);
    /// Submits everything queued and waits until at least `min_complete` I/Os (at least one,
    /// at most the number in flight) have completed, `timeout` has passed, or a signal
    /// interrupted the wait ([`crate::worker::wake`]); appends the completions to `out`. Engines that complete at once (null, psync) may return more.
    /// Called only with I/Os in flight.
    fn submit_and_wait(
        &mut self,
        min_complete: usize,
        timeout: Option<std::time::Duration>,
        out: &mut Vec<Completion>,
    ) -> std::io::Result<()>;
    /// The engine and the kernel features it uses, for the result document.
    fn describe(&self) -> String;
}

/// A zeroed, page-aligned allocation (O_DIRECT needs aligned memory), freed on drop.
pub struct AlignedBuf {
    ptr: *mut u8,
    layout: Layout,
}

impl AlignedBuf {
    /// Allocates `len` bytes (at least one page), aligned to 4096.
    pub fn new(len: usize) -> Self {
        let layout = Layout::from_size_align(len.max(4096), 4096).expect("valid layout");
        // SAFETY: the layout has a non-zero size.
        let ptr = unsafe { alloc_zeroed(layout) };
        if ptr.is_null() {
            std::alloc::handle_alloc_error(layout);
        }
        AlignedBuf { ptr, layout }
    }

    /// Start of the buffer.
    pub fn as_ptr(&self) -> *mut u8 {
        self.ptr
    }

    /// Length in bytes.
    pub fn len(&self) -> usize {
        self.layout.size()
    }

    /// Always false (kept for clippy's len-without-is-empty).
    pub fn is_empty(&self) -> bool {
        false
    }

    /// The bytes, for filling write data before the run.
    pub fn as_mut_slice(&mut self) -> &mut [u8] {
        // SAFETY: ptr is valid for len bytes and uniquely borrowed through &mut self.
        unsafe { std::slice::from_raw_parts_mut(self.ptr, self.len()) }
    }
}

impl Drop for AlignedBuf {
    fn drop(&mut self) {
        // SAFETY: allocated in `new` with this layout.
        unsafe { dealloc(self.ptr, self.layout) }
    }
}

// SAFETY: AlignedBuf owns its memory exclusively; moving it to another thread is sound.
unsafe impl Send for AlignedBuf {}
