//! [`PageBuf`]: a zeroed byte buffer that starts on a page boundary.
//!
//! The stream bindings read and write their frames from the start of such a
//! buffer: where a large frame sits decides how fast the kernel copies it
//! into and out of the socket. On this project's test machine (AMD EPYC) a
//! tcp `--wait busy` round trip of 64 KiB over loopback was 1-3 us faster
//! with both buffers page-aligned than where the allocator put them, and
//! twice as slow with frames 4 bytes past a page (docs/sockets.md has the
//! rounds).

use std::ops::{Deref, DerefMut};

const PAGE: usize = 4096;

/// `len` zeroed bytes, the first on a page boundary.
pub struct PageBuf {
    mem: Vec<u8>,
    start: usize,
    len: usize,
}

impl PageBuf {
    pub fn new(len: usize) -> PageBuf {
        let mem = vec![0u8; len + PAGE];
        let start = (PAGE - mem.as_ptr() as usize % PAGE) % PAGE;
        PageBuf { mem, start, len }
    }
}

impl Deref for PageBuf {
    type Target = [u8];
    #[inline]
    fn deref(&self) -> &[u8] {
        &self.mem[self.start..self.start + self.len]
    }
}

impl DerefMut for PageBuf {
    #[inline]
    fn deref_mut(&mut self) -> &mut [u8] {
        &mut self.mem[self.start..self.start + self.len]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn starts_on_a_page_and_holds_len_zeroed_bytes() {
        for len in [1, 100, PAGE, 65_540, 1 << 20] {
            let mut b = PageBuf::new(len);
            assert_eq!(b.as_ptr() as usize % PAGE, 0, "len {len}");
            assert_eq!(b.len(), len);
            assert!(b.iter().all(|&x| x == 0));
            b[len - 1] = 7;
            assert_eq!(b[len - 1], 7);
        }
    }
}
