//! `shm`: pubsubperf's own shared-memory transport, the physical baseline
//! that DDS and iceoryx are measured against.
//!
//! Publisher and subscribers are separate processes that share POSIX
//! shared-memory segments (`shm_open`, in `/dev/shm`):
//!
//! - every reader creates a single-producer single-consumer **ring** and
//!   returns its name as the locator; the writer maps every reader's ring;
//! - **copy mode**: the writer copies each sample into every reader's ring,
//!   the reader copies it out into a private buffer, frees the entry, and
//!   only then hands the private copy to the application;
//! - **zero-copy mode** (`--zero-copy`): the writer also creates a **pool**
//!   of slots; it loans a free slot, the application fills it in place, and
//!   the writer puts only a reference (slot index and length) into each
//!   ring. Each reader gets a borrowed view of the slot and drops its
//!   reference afterwards; the slot is free again when every reader did
//!   (a reference count in shared memory);
//! - waiting: `--wait busy` spins on the ring; `--wait block` sleeps on a
//!   futex word in the shared segment that the other side bumps and wakes
//!   (no sleeping and polling), waking at least every 100 ms to check
//!   cancellation;
//! - no residue: a segment's name is removed as soon as both sides mapped
//!   it, every endpoint removes the names it still knows when dropped, and
//!   [`Binding::open`](pubsubperf_core::Binding::open) removes the segments
//!   of dead processes (names carry the creator's pid).
//!
//! The machine's floors that the binding is compared with (clock cost,
//! cross-core cache-line latency, memcpy bandwidth) are measured by
//! `pubsubperf_core::calibrate`.

pub mod binding;
pub mod layout;
pub mod sys;
mod wait;

pub use binding::{MAX_SHM_SAMPLE, Shm, ShmReader, ShmWriter};
