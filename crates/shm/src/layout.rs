//! What lives in the shared segments, byte for byte. Every field that both
//! processes touch is an atomic; fields written by one side sit on their own
//! cache line so the two cores do not fight over a line they do not share.
//!
//! A reader's segment (`...-<topic>-<index>`), created by the reader:
//!
//! | offset | what |
//! |--------|------|
//! | 0      | [`RingHeader`]: static facts, the link (writer attached, pool name), producer line, consumer line |
//! | 4096   | `capacity` entries of `stride` bytes |
//!
//! Every entry starts with a 64-byte [`EntryHead`]: the writer fills the
//! entry, then stores its sequence number (position + 1) with release
//! ordering; the reader polls that number in the entry it expects next, so
//! a sample costs the reader one cache line to notice, not a tail line and
//! then the entry. Copy mode: the sample follows the head. Zero-copy mode:
//! the entry is the head alone, a reference (slot index and length).
//!
//! The pool (`...-<topic>-pool`, zero-copy only), created by the writer:
//!
//! | offset | what |
//! |--------|------|
//! | 0      | [`PoolHeader`] |
//! | 4096   | `slots` reference counts, one cache line each |
//! | page-aligned | `slots` slots of `stride` bytes: a 40-byte [`SlotHead`], then the sample |
//!
//! A slot's head and the first 24 bytes of its sample share one cache line
//! (slots are 64-byte aligned): a reader that knows which slot comes next
//! polls that line alone, so a small sample costs one cache-line transfer
//! (see [`SlotHead`]).

use std::sync::atomic::{AtomicU32, AtomicU64};

/// Marks a segment of this binding, version 3 (version 2 readers consumed
/// a zero-copy position before their callback, and `posted` held
/// position + 1).
pub const MAGIC: u64 = 0x7073_7073_686d_0003;
/// Bytes before the first entry or slot of a segment (one page).
pub const HEAD_BYTES: usize = 4096;
/// Bytes before the sample in a copy-mode entry.
pub const ENTRY_HEAD: usize = 64;
/// Bytes before the sample in a pool slot ([`SlotHead`]).
pub const SLOT_HEAD: usize = 40;
/// Readers of a writer that get the one-line fast path (a word each in
/// [`SlotHead::posted`]); further readers use their ring only.
pub const FAST_READERS: usize = 7;
/// [`SlotHead::next`] and [`Link::fast_index`] when there is none.
pub const NONE: u32 = u32::MAX;
/// Longest pool name a reader's segment can carry.
pub const NAME_CAP: usize = 248;

/// Round `n` up to a multiple of `to` (a power of two).
pub const fn round_up(n: usize, to: usize) -> usize {
    (n + to - 1) & !(to - 1)
}

/// Facts the reader writes once, before anyone else maps the segment.
#[repr(C, align(64))]
pub struct Meta {
    /// [`MAGIC`].
    pub magic: u64,
    /// Number of entries.
    pub capacity: u64,
    /// Bytes per entry.
    pub stride: u64,
    /// Largest sample the reader accepts (header included).
    pub max_sample: u64,
    /// Process id of the reader.
    pub reader_pid: u32,
    /// 1 when entries are pool references (zero-copy).
    pub zero_copy: u32,
}

/// Link states.
pub const OPEN: u32 = 1;
/// The side closed its endpoint.
pub const CLOSED: u32 = 2;

/// Who is attached, and where the pool is.
#[repr(C, align(64))]
pub struct Link {
    /// 0 until a writer attached ([`OPEN`]), [`CLOSED`] after it dropped.
    pub writer_state: AtomicU32,
    /// Process id of the writer.
    pub writer_pid: AtomicU32,
    /// [`OPEN`] while the reader lives, [`CLOSED`] after it dropped.
    pub reader_state: AtomicU32,
    /// Length of `pool_name` (zero-copy), set before `writer_state`.
    pub pool_len: AtomicU32,
    /// This reader's word in [`SlotHead::posted`] ([`NONE`]: ring only),
    /// set before `writer_state`.
    pub fast_index: AtomicU32,
    /// Name of the writer's pool segment (zero-copy).
    pub pool_name: [u8; NAME_CAP],
}

/// A cursor and the wake-up word of the side waiting for it to move: the
/// producer line holds the word the reader sleeps on (readers poll entries,
/// so its `pos` is unused); the consumer line holds the head (written by
/// the reader) and the word a blocked reliable writer sleeps on.
#[repr(C, align(64))]
pub struct Cursor {
    /// Monotonic count of entries published (tail) or consumed (head).
    pub pos: AtomicU64,
    /// Futex word: bumped by the mover when someone sleeps.
    pub wake: AtomicU32,
    /// Number of threads about to sleep or sleeping on `wake`.
    pub sleepers: AtomicU32,
}

/// The head of a reader's segment.
#[repr(C)]
pub struct RingHeader {
    /// Static facts.
    pub meta: Meta,
    /// Attachment.
    pub link: Link,
    /// Written by the writer.
    pub producer: Cursor,
    /// Written by the reader.
    pub consumer: Cursor,
}

/// The head of an entry. With `--data-type bytes`, its last 4 bytes hold the
/// sample's length prefix (right before the sample in copy mode).
#[repr(C, align(64))]
pub struct EntryHead {
    /// Position + 1 once the entry is complete (written last, release).
    pub seq: AtomicU64,
    /// Sample length (the descriptor of the entry).
    pub len: u64,
    /// Pool slot of the sample (zero-copy).
    pub slot: u64,
}

const _: () = assert!(std::mem::size_of::<EntryHead>() == ENTRY_HEAD);

/// The head of a pool slot, in the slot's first cache line with the first
/// 24 bytes of the sample (which follows it directly).
///
/// The ring entry stays the authoritative reference; the head is a second,
/// faster way to the same sample. When the writer publishes a sample, it
/// already knows the slot of its next one (it keeps two free slots in hand)
/// and writes it into `next`; for each reader it delivers to (the first
/// [`FAST_READERS`]) it stores a mark of that reader's ring position (its
/// low 31 bits with the top bit set, never 0) into `posted[reader]` with
/// release ordering, and then fills the ring entry. A reader that read a
/// sample from slot `s` knows the next one will be in `s.next`, and polls
/// `posted[self]` there (and, now and then, its ring entry): the mark of
/// its position means the slot holds the sample of that position,
/// referenced for this reader. A sample then moves from core to core in one
/// cache line (index, length and the sample's header together) instead of
/// two (ring entry, then slot). With several readers the writer zeroes
/// `posted` when it takes a free slot in hand (a slot a slow reader holds
/// may stay unused for long); with one reader it does not need to: every
/// slot is used again within a few pool-fulls of positions, far from the
/// 2^31 positions after which a mark repeats.
#[repr(C)]
pub struct SlotHead {
    /// Sample length.
    pub len: AtomicU32,
    /// Slot of the writer's next sample, or [`NONE`].
    pub next: AtomicU32,
    /// Per reader: the mark of this sample's ring position (low 31 bits,
    /// top bit set), 0 or an older mark if not delivered to that reader.
    pub posted: [AtomicU32; FAST_READERS],
    /// With `--data-type bytes`: the length prefix, right before the sample.
    pub prefix: u32,
}

const _: () = assert!(std::mem::size_of::<SlotHead>() == SLOT_HEAD);

/// Static facts of the pool, written by the writer before anyone maps it.
#[repr(C, align(64))]
pub struct PoolMeta {
    /// [`MAGIC`].
    pub magic: u64,
    /// Number of slots.
    pub slots: u64,
    /// Bytes per slot.
    pub stride: u64,
    /// Byte offset of slot 0.
    pub data_offset: u64,
    /// Number of readers that will map the pool.
    pub readers: u32,
    /// Process id of the writer.
    pub writer_pid: u32,
}

/// The head of the pool segment.
#[repr(C)]
pub struct PoolHeader {
    /// Static facts.
    pub meta: PoolMeta,
    /// Readers that mapped the pool; the one that completes the count
    /// removes its name.
    pub mapped: Cursor,
    /// A reliable writer waiting for a free slot sleeps on `free.wake`.
    pub free: Cursor,
}

/// One slot's reference count, alone on its cache line.
#[repr(C, align(64))]
pub struct RefCount(pub AtomicU32);

const _: () = assert!(std::mem::size_of::<RingHeader>() <= HEAD_BYTES);
const _: () = assert!(std::mem::size_of::<PoolHeader>() <= HEAD_BYTES);
