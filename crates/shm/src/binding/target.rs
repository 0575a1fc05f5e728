//! One reader's ring as the writer sees it, and the bookkeeping of the only
//! reader of a zero-copy pool.

use crate::layout::{CLOSED, ENTRY_HEAD, EntryHead, NONE, RingHeader};
use crate::sys::{self, Mapping};
use crate::wait::{self};
use pubsubperf_core::WaitMode;
use std::sync::atomic::Ordering;

pub(super) struct Target {
    pub(super) _map: Mapping,
    pub(super) hdr: *const RingHeader,
    pub(super) data: *mut u8,
    pub(super) capacity: u64,
    pub(super) stride: usize,
    pub(super) tail: u64,
    /// Last `consumer.pos` seen.
    pub(super) head: u64,
    pub(super) reader_pid: u32,
    /// The reader is gone: deliver nothing more.
    pub(super) closed: bool,
    /// The sample being sent goes to this reader (zero-copy).
    pub(super) deliver: bool,
    /// Copy into this ring with streaming stores (see [`sys::copy_to_ring`]).
    pub(super) stream: bool,
}

impl Target {
    #[inline(always)]
    pub(super) fn hdr(&self) -> &RingHeader {
        // SAFETY: `hdr` points at the head of the live mapping.
        unsafe { &*self.hdr }
    }

    /// The head of the entry the next sample goes into.
    #[inline(always)]
    pub(super) fn entry(&self) -> *mut EntryHead {
        self.data
            .wrapping_add((self.tail % self.capacity) as usize * self.stride)
            .cast()
    }

    /// Completes the next entry (its body, if any, is written) and hands it
    /// to the reader: the sequence number is stored last, with release.
    #[inline(always)]
    pub(super) fn publish(&mut self, len: usize, slot: usize, prefix: bool, mode: WaitMode) {
        let e = self.entry();
        // SAFETY: the entry is outside head..tail, so ours to write.
        unsafe {
            (*e).len = len as u64;
            (*e).slot = slot as u64;
            if prefix {
                // The serialized sequence's length, right before its bytes.
                (e.cast::<u8>().add(ENTRY_HEAD - 4) as *mut u32).write_unaligned(len as u32);
            }
            (*e).seq.store(self.tail + 1, Ordering::Release);
        }
        self.tail += 1;
        if mode == WaitMode::Block {
            wait::notify(&self.hdr().producer);
        }
    }

    pub(super) fn reader_gone(&self) -> bool {
        self.hdr().link.reader_state.load(Ordering::Acquire) == CLOSED
            || !sys::alive(self.reader_pid)
    }
}

/// Free slots of a pool with one reader, known to the writer alone.
///
/// The only reader reads its ring in order and consumes a position after it
/// used the sample, so every slot recorded under a consumed position is free
/// again. The writer records the slot of each position it delivers and
/// reclaims the slots of the positions consumed since it last looked, and
/// it looks (reads the reader's `consumer.pos`, a cache line the reader
/// writes) only when it has no free slot left, once in about a ring's worth
/// of samples. Reference counts would cost a cache line moving between the
/// cores on every sample, each way: the writer sets the count, the reader
/// clears it, the writer reads it (a busy ping-pong measured 5-6 ns faster
/// each way without them).
pub(super) struct Sole {
    /// The slot of the sample at ring position `p`, at `p % held.len()`.
    pub(super) held: Vec<u32>,
    /// Positions below this were consumed and their slots are in `free`.
    pub(super) reclaimed: u64,
    /// Free slots, the longest free first (a slot the reader let go of long
    /// ago is less likely still in its cache: best-effort throughput at
    /// 64 B measured ~10 % higher than reusing the latest one first).
    pub(super) free: std::collections::VecDeque<u32>,
}

impl Sole {
    pub(super) fn new(slots: usize, capacity: u64) -> Sole {
        Sole {
            held: vec![NONE; capacity as usize],
            reclaimed: 0,
            free: (0..slots as u32).collect(),
        }
    }

    /// Puts the slots of positions the reader consumed up to `head` back in
    /// `free`. No allocation: `free` has room for every slot. `head` comes
    /// from the reader's segment and is not trusted beyond `tail` (the
    /// writer's next position): a corrupt or foreign value must not make the
    /// writer hand out slots it never recorded.
    #[inline(always)]
    pub(super) fn reclaim(&mut self, head: u64, tail: u64) {
        let head = head.min(tail);
        let cap = self.held.len() as u64;
        while self.reclaimed < head {
            self.free
                .push_back(self.held[(self.reclaimed % cap) as usize]);
            self.reclaimed += 1;
        }
    }
}
