//! The `shm` binding: [`Shm`], [`ShmWriter`], [`ShmReader`].

use crate::layout::round_up;
use crate::sys::{self};
use pubsubperf_core::binding::BindingInfo;
use pubsubperf_core::{
    Binding, BindingError, Capabilities, DataType, EndpointConfig, Locator, Reliability, TopicSpec,
};

mod pool;
mod reader;
mod target;
mod writer;

use pool::PoolMap;
pub use reader::ShmReader;
use target::{Sole, Target};
pub use writer::ShmWriter;

/// Largest sample (header included): 1 GiB.
pub const MAX_SHM_SAMPLE: usize = 1 << 30;
/// Entries per reader ring unless `--receive-queue` says otherwise.
pub const DEFAULT_QUEUE: usize = 256;
/// A copy-mode ring holds at most this many bytes of entries (fewer
/// entries for big samples, but never fewer than [`MIN_QUEUE`]). Small
/// enough that a ring and both sides' private buffers stay in the last-level
/// cache (for 1 MiB samples, 4 MiB measured faster than 2, 8 or 16 MiB).
pub const RING_BYTES: usize = 4 << 20;
/// A zero-copy ring's depth is chosen as if its entries were slots of this
/// many bytes in total, which bounds the pool's size.
pub const POOL_BYTES: usize = 64 << 20;
/// Fewest entries in a ring.
pub const MIN_QUEUE: usize = 2;

/// The `shm` binding: one value per side per run.
pub struct Shm {
    cfg: EndpointConfig,
}

impl Binding for Shm {
    type Writer = ShmWriter;
    type Reader = ShmReader;

    fn info() -> BindingInfo {
        BindingInfo {
            name: "shm",
            description: "POSIX shared memory between processes, copy or zero-copy (loaned slots), futex wake-ups",
            version: env!("CARGO_PKG_VERSION").to_string(),
            capabilities: Capabilities {
                reliable: true,
                best_effort: true,
                default_reliability: Reliability::Reliable,
                multicast: false,
                max_sample_size: MAX_SHM_SAMPLE,
                zero_copy: true,
                batching: false,
                multiple_subscribers: true,
                transports: &["shm"],
                data_types: &[DataType::Bytes, DataType::Flat],
                in_process: false,
                remote: false,
                receive: &[pubsubperf_core::ReceiveMode::Thread],
            },
            available: available(),
        }
    }

    fn validate(cfg: &EndpointConfig) -> Result<(), BindingError> {
        if !cfg.transport.is_empty() && cfg.transport != "shm" {
            return Err(BindingError::Unsupported(format!(
                "--transport {}: shm offers shm",
                cfg.transport
            )));
        }
        if cfg.multicast {
            return Err(BindingError::Unsupported(
                "--multicast: shm has no multicast".into(),
            ));
        }
        if cfg.batch_bytes > 0 {
            return Err(BindingError::Unsupported(
                "--batch: shm does not batch".into(),
            ));
        }
        if cfg.send_queue > 0 {
            return Err(BindingError::Unsupported(format!(
                "--send-queue {}: shm has no queue in samples to size (the writer puts each sample in the reader's ring: --receive-queue)",
                cfg.send_queue
            )));
        }
        if let Some(k) = cfg.options.keys().next() {
            return Err(BindingError::Unsupported(format!(
                "--opt {k}: shm takes no binding options"
            )));
        }
        if cfg.max_sample_size > MAX_SHM_SAMPLE {
            return Err(BindingError::TooLarge {
                size: cfg.max_sample_size,
                limit: MAX_SHM_SAMPLE,
            });
        }
        Ok(())
    }

    fn open(cfg: &EndpointConfig) -> Result<Self, BindingError> {
        Self::validate(cfg)?;
        // Segments of runs killed before their peer mapped them carry the
        // pid of a process that is gone: remove them.
        sys::sweep_stale();
        Ok(Shm { cfg: cfg.clone() })
    }

    fn create_reader(&mut self, topic: &TopicSpec) -> Result<(ShmReader, Locator), BindingError> {
        ShmReader::create(&self.cfg, topic)
    }

    fn create_writer(
        &mut self,
        topic: &TopicSpec,
        readers: &[Locator],
    ) -> Result<ShmWriter, BindingError> {
        ShmWriter::create(&self.cfg, topic, readers)
    }
}

pub(super) fn available() -> Result<(), String> {
    match std::fs::metadata("/dev/shm") {
        Ok(m) if m.is_dir() => Ok(()),
        _ => Err("/dev/shm is missing (POSIX shared memory needs a tmpfs there)".into()),
    }
}

/// Ring depth for samples of up to `max` bytes within `budget` bytes of
/// samples (entry heads and padding not counted).
pub(super) fn queue_len(cfg: &EndpointConfig, max: usize, budget: usize) -> usize {
    let wanted = if cfg.receive_queue > 0 {
        cfg.receive_queue
    } else {
        DEFAULT_QUEUE
    };
    wanted.min(budget / max.max(1)).max(MIN_QUEUE)
}

/// Bytes per entry or slot with a `head`-byte head for samples up to `max`:
/// whole cache lines, whole pages from one page on.
pub(super) fn slot_stride(head: usize, max: usize) -> usize {
    let s = round_up(head + max.max(1), 64);
    if s >= 4096 { round_up(s, 4096) } else { s }
}

/// The word a writer stores in a slot head's `posted` for the sample at
/// ring position `pos`: its low 31 bits with the top bit set. Never 0, the
/// value of a word nobody stored to yet (or that the writer cleared), so a
/// slot announced but not yet filled never looks posted, not even at
/// position 2^32 - 1 (an earlier `pos + 1` did, there); and two positions
/// have the same mark only 2^31 apart, far more than any slot stays unused.
#[inline(always)]
pub(super) const fn posted_mark(pos: u64) -> u32 {
    (pos as u32) | 0x8000_0000
}

#[cfg(test)]
mod tests;
