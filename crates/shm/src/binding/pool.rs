//! A reader's mapping of a writer's slot pool (zero copy).

use super::*;
use crate::layout::{HEAD_BYTES, MAGIC, PoolHeader, RefCount, SLOT_HEAD, SlotHead, round_up};
use crate::sys::Mapping;
use crate::wait::{self};
use pubsubperf_core::{BindingError, WaitMode};
use std::sync::atomic::{AtomicU32, Ordering};

pub(super) struct PoolMap {
    pub(super) map: Mapping,
    pub(super) counts: *const RefCount,
    pub(super) data: *mut u8,
    pub(super) slots: usize,
    pub(super) stride: usize,
    pub(super) max: usize,
    /// The pool has one reader, which releases a slot by consuming its
    /// position (see `Sole`); reference counts are used with several.
    pub(super) sole: bool,
}

// SAFETY: pointers into the owned mapping.
unsafe impl Send for PoolMap {}

impl PoolMap {
    pub(super) fn layout(slots: usize, max: usize) -> (usize, usize, usize) {
        let stride = slot_stride(SLOT_HEAD, max);
        let data_offset = round_up(HEAD_BYTES + slots * 64, 4096);
        (stride, data_offset, data_offset + slots * stride)
    }

    pub(super) fn create(
        name: &str,
        slots: usize,
        max: usize,
        readers: u32,
    ) -> Result<PoolMap, BindingError> {
        let (stride, data_offset, len) = Self::layout(slots, max);
        let map = Mapping::create(name, len)?;
        let h = map.ptr() as *mut PoolHeader;
        // SAFETY: fresh zeroed mapping; nobody else knows its name yet.
        unsafe {
            (*h).meta.magic = MAGIC;
            (*h).meta.slots = slots as u64;
            (*h).meta.stride = stride as u64;
            (*h).meta.data_offset = data_offset as u64;
            (*h).meta.readers = readers;
            (*h).meta.writer_pid = std::process::id();
        }
        Ok(PoolMap {
            counts: map.ptr().wrapping_add(HEAD_BYTES) as *const RefCount,
            data: map.ptr().wrapping_add(data_offset),
            map,
            slots,
            stride,
            max,
            sole: readers == 1,
        })
    }

    pub(super) fn open(name: &str) -> Result<PoolMap, BindingError> {
        let map = Mapping::open(name)?;
        if map.len() < HEAD_BYTES {
            return Err(BindingError::Malformed(format!(
                "pool /dev/shm/{name} is too short"
            )));
        }
        // SAFETY: at least HEAD_BYTES are mapped; the writer wrote the
        // header before publishing the name.
        let m = unsafe { &(*(map.ptr() as *const PoolHeader)).meta };
        let (slots, stride, off) = (m.slots as usize, m.stride as usize, m.data_offset as usize);
        let sole = m.readers == 1;
        if m.magic != MAGIC || slots == 0 || off + slots * stride > map.len() {
            return Err(BindingError::Malformed(format!(
                "/dev/shm/{name} is not a pool of this version"
            )));
        }
        Ok(PoolMap {
            counts: map.ptr().wrapping_add(HEAD_BYTES) as *const RefCount,
            data: map.ptr().wrapping_add(off),
            map,
            slots,
            stride,
            max: stride - SLOT_HEAD,
            sole,
        })
    }

    #[inline(always)]
    pub(super) fn hdr(&self) -> &PoolHeader {
        // SAFETY: the head of the live mapping.
        unsafe { &*(self.map.ptr() as *const PoolHeader) }
    }

    #[inline(always)]
    pub(super) fn count(&self, slot: usize) -> &AtomicU32 {
        // SAFETY: slot < slots, within the mapped count array.
        unsafe { &(*self.counts.add(slot)).0 }
    }

    /// Start of the sample in `slot`.
    #[inline(always)]
    pub(super) fn slot(&self, slot: usize) -> *mut u8 {
        self.data.wrapping_add(slot * self.stride + SLOT_HEAD)
    }

    /// The head of `slot`.
    #[inline(always)]
    pub(super) fn head(&self, slot: usize) -> &SlotHead {
        // SAFETY: slot < slots; every slot starts with its head.
        unsafe { &*(self.data.wrapping_add(slot * self.stride) as *const SlotHead) }
    }

    /// Drops one reference to `slot`; the last one frees it. Pools with
    /// several readers only (the only reader releases by consuming, see
    /// `Sole`).
    #[inline(always)]
    pub(super) fn release(&self, slot: usize, mode: WaitMode) {
        let freed = self.count(slot).fetch_sub(1, Ordering::Release) == 1;
        if freed && mode == WaitMode::Block {
            wait::notify(&self.hdr().free);
        }
    }
}
