//! [`Payloads`]: the buffers a copy-mode writer fills and hands to zenoh,
//! reused once zenoh has let go of them. zenoh takes a payload by
//! ownership (`ZBytes`); building one from a slice allocates a buffer of
//! the sample's size and copies into it on every put (at 1 MiB, a fresh
//! mapping, its page faults and the copy, twice per round trip). Here each
//! buffer is an `Arc` that zenoh holds as the buffer of its payload's
//! slice (`ZSliceBuffer`) while it needs it: handing one over is a
//! reference count, no allocation. A buffer whose only holder is the pool
//! again is filled in place for the next sample, as z_ping and z_pub_thr
//! put one prebuilt payload again and again.

use std::any::Any;
use std::sync::Arc;
use zenoh::bytes::ZBytes;
use zenoh_buffers::{ZBuf, ZSliceBuffer};

/// One buffer lent to zenoh: the first `len` bytes are the payload.
#[derive(Debug)]
struct Lent {
    buf: Vec<u8>,
    len: usize,
}

impl ZSliceBuffer for Lent {
    fn as_slice(&self) -> &[u8] {
        &self.buf[..self.len]
    }

    fn as_any(&self) -> &dyn Any {
        self
    }

    fn as_any_mut(&mut self) -> &mut dyn Any {
        self
    }
}

/// The writer's buffers, each of the run's largest sample size.
pub(crate) struct Payloads {
    bufs: Vec<Arc<Lent>>,
    size: usize,
}

impl Payloads {
    pub(crate) fn new(size: usize) -> Payloads {
        Payloads {
            bufs: vec![Payloads::buffer(size)],
            size,
        }
    }

    fn buffer(size: usize) -> Arc<Lent> {
        Arc::new(Lent {
            buf: vec![0; size],
            len: 0,
        })
    }

    /// A payload of `len` bytes (at most the size given to `new`), filled
    /// by `fill` in a buffer zenoh no longer holds; a new buffer when it
    /// holds them all (samples still queued for sending).
    pub(crate) fn fill<F: FnOnce(&mut [u8])>(&mut self, len: usize, fill: F) -> ZBytes {
        // zenoh's threads only drop their handles, never take new ones: a
        // buffer seen free here stays free.
        let i = match self.bufs.iter().position(|b| Arc::strong_count(b) == 1) {
            Some(i) => i,
            None => {
                self.bufs.push(Payloads::buffer(self.size));
                self.bufs.len() - 1
            }
        };
        let lent = Arc::get_mut(&mut self.bufs[i]).expect("a free buffer has no other holder");
        lent.len = len;
        fill(&mut lent.buf[..len]);
        ZBytes::from(ZBuf::from(Arc::clone(&self.bufs[i])))
    }

    /// How many buffers there are (the most zenoh held at once, plus one).
    #[cfg(test)]
    pub(crate) fn count(&self) -> usize {
        self.bufs.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_buffer_is_reused_once_its_payload_is_dropped() {
        let mut p = Payloads::new(16);
        let a = p.fill(4, |b| b.copy_from_slice(b"abcd"));
        assert_eq!(a.to_bytes().as_ref(), b"abcd");
        // Still held: the next payload gets a second buffer.
        let b = p.fill(3, |b| b.copy_from_slice(b"xyz"));
        assert_eq!(p.count(), 2);
        assert_eq!(
            a.to_bytes().as_ref(),
            b"abcd",
            "a held payload was overwritten"
        );
        assert_eq!(b.to_bytes().as_ref(), b"xyz");
        drop(a);
        drop(b);
        for _ in 0..10 {
            let c = p.fill(16, |b| b[0] = 7);
            assert_eq!(c.to_bytes()[0], 7);
        }
        assert_eq!(p.count(), 2, "freed buffers were not reused");
    }
}
