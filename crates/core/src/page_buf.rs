//! [`PageBuf`]: a zeroed byte buffer that starts on a 4 KiB boundary.
//!
//! Where a large buffer sits decides how fast it is copied: a copy whose
//! source and destination are a few bytes off a whole number of 4 KiB apart
//! aliases its stores with its next loads, and the kernel copies a socket's
//! data slower to and from an unaligned user buffer. `calibrate`'s memcpy
//! copies between two of these (64 KiB at ~2 GB/s from heap buffers 16 bytes
//! off, ~49 GB/s aligned), and the tcp and uds bindings keep their frames in
//! them (a 64 KiB busy round trip over loopback 15.0-17.1 us p50 aligned,
//! 17.5-20.3 us where the allocator put them; docs/bindings/sockets.md).

use std::ops::{Deref, DerefMut};

const BOUNDARY: usize = 4096;

/// `len` zeroed bytes, the first on a 4 KiB boundary.
pub struct PageBuf {
    /// Holds `start` bytes of padding, then exactly the buffer.
    mem: Vec<u8>,
    start: usize,
}

impl PageBuf {
    pub fn new(len: usize) -> Self {
        let mut mem = vec![0u8; len + BOUNDARY];
        let start = mem.as_ptr().align_offset(BOUNDARY);
        mem.truncate(start + len);
        PageBuf { mem, start }
    }
}

impl Deref for PageBuf {
    type Target = [u8];
    #[inline]
    fn deref(&self) -> &[u8] {
        &self.mem[self.start..]
    }
}

impl DerefMut for PageBuf {
    #[inline]
    fn deref_mut(&mut self) -> &mut [u8] {
        &mut self.mem[self.start..]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn starts_on_a_boundary_and_holds_len_zeroed_bytes() {
        for len in [1, 100, BOUNDARY, 65_540, 1 << 20] {
            let mut b = PageBuf::new(len);
            assert_eq!(b.as_ptr() as usize % BOUNDARY, 0, "len {len}");
            assert_eq!(b.len(), len);
            assert!(b.iter().all(|&x| x == 0));
            b[len - 1] = 7;
            assert_eq!(b[len - 1], 7);
        }
    }
}
