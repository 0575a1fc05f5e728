//! The sample layout shared by every binding.
//!
//! Every sample starts with a 24-byte header, little endian:
//!
//! | bytes  | field |
//! |--------|-------|
//! | 0..6   | sequence number (48 bits, per publisher, starting at 0) |
//! | 6      | publisher id |
//! | 7      | flags ([`FLAG_ECHO`], [`FLAG_WARMUP`], [`FLAG_CHECK`]) |
//! | 8..16  | send timestamp, [`crate::clock::now_ns`] of the sender |
//! | 16..24 | the run's key: random, drawn by the publisher for each run |
//!
//! The key tells the run's own samples from anything else that reaches a
//! data port (a stray or injected datagram, another run's late sample): a
//! sample without it is counted as foreign, never as loss, reordering or a
//! round trip. It is not a secret from whoever can read the traffic.
//!
//! The rest is payload. With `--check` the payload carries [`fill_pattern`],
//! which the subscriber verifies with [`check_pattern`]. The smallest sample
//! is therefore [`HEADER_LEN`] bytes.

/// Size of the header at the start of every sample.
pub const HEADER_LEN: usize = 24;
/// The subscriber must echo this sample back (latency test, or every Nth
/// sample of a throughput test).
pub const FLAG_ECHO: u8 = 1;
/// Warm-up sample: echoed or counted like any other, but not recorded.
pub const FLAG_WARMUP: u8 = 2;
/// The payload carries the integrity pattern.
pub const FLAG_CHECK: u8 = 4;

use crate::Received;

const SEQ_MASK: u64 = (1 << 48) - 1;

/// A decoded sample header.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Header {
    /// Sequence number (48 bits).
    pub seq: u64,
    /// Publisher id, for several publishers on one topic.
    pub publisher: u8,
    /// Flag bits.
    pub flags: u8,
    /// Sender's timestamp in nanoseconds.
    pub timestamp: u64,
    /// The run's key.
    pub key: u64,
}

impl Header {
    /// Writes the header into the first [`HEADER_LEN`] bytes of `buf`.
    #[inline(always)]
    pub fn write(&self, buf: &mut [u8]) {
        let word0 = (self.seq & SEQ_MASK)
            | (u64::from(self.publisher) << 48)
            | (u64::from(self.flags) << 56);
        buf[0..8].copy_from_slice(&word0.to_le_bytes());
        buf[8..16].copy_from_slice(&self.timestamp.to_le_bytes());
        buf[16..24].copy_from_slice(&self.key.to_le_bytes());
    }

    /// Reads a header; `None` when `buf` is shorter than [`HEADER_LEN`].
    #[inline(always)]
    pub fn read(buf: &[u8]) -> Option<Header> {
        if buf.len() < HEADER_LEN {
            return None;
        }
        let word0 = u64::from_le_bytes(buf[0..8].try_into().ok()?);
        let timestamp = u64::from_le_bytes(buf[8..16].try_into().ok()?);
        let key = u64::from_le_bytes(buf[16..24].try_into().ok()?);
        Some(Header {
            seq: word0 & SEQ_MASK,
            publisher: (word0 >> 48) as u8,
            flags: (word0 >> 56) as u8,
            timestamp,
            key,
        })
    }
}

/// The integrity pattern byte at payload offset `i` of sample `seq`.
#[inline(always)]
fn pattern_byte(seq: u64, i: usize) -> u8 {
    (seq as u8)
        .wrapping_mul(31)
        .wrapping_add(i as u8)
        .wrapping_add((i >> 8) as u8)
}

/// Fills the payload (everything after the header) with the pattern of `seq`.
pub fn fill_pattern(buf: &mut [u8], seq: u64) {
    for (i, b) in buf.iter_mut().enumerate().skip(HEADER_LEN) {
        *b = pattern_byte(seq, i);
    }
}

/// True when the payload carries the pattern of `seq` (a sample in pieces
/// is checked piece by piece, without gathering it).
pub fn check_pattern<'a>(sample: impl Into<Received<'a>>, seq: u64) -> bool {
    let mut ok = true;
    sample.into().for_each_piece(|at, piece| {
        ok = ok
            && piece
                .iter()
                .enumerate()
                .skip(HEADER_LEN.saturating_sub(at))
                .all(|(i, b)| *b == pattern_byte(seq, at + i));
    });
    ok
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_round_trip() {
        let h = Header {
            seq: (1 << 48) - 2,
            publisher: 7,
            flags: FLAG_ECHO | FLAG_CHECK,
            timestamp: 123_456_789_012,
            key: 0x0123_4567_89ab_cdef,
        };
        let mut buf = [0u8; 32];
        h.write(&mut buf);
        assert_eq!(Header::read(&buf), Some(h));
        assert_eq!(Header::read(&buf[..HEADER_LEN - 1]), None);
    }

    #[test]
    fn pattern_detects_corruption() {
        let mut buf = vec![0u8; 1000];
        fill_pattern(&mut buf, 42);
        assert!(check_pattern(&buf[..], 42));
        assert!(!check_pattern(&buf[..], 43));
        buf[500] ^= 1;
        assert!(!check_pattern(&buf[..], 42));
    }

    /// `check_pattern` of `buf` handed over as 100 bytes, then 64-byte pieces.
    fn check_in_pieces(buf: &[u8], seq: u64) -> bool {
        let (first, rest) = buf.split_at(100);
        let pieces: Vec<&[u8]> = rest.chunks(64).collect();
        let rest = crate::received::Rest(&pieces);
        check_pattern(Received::in_pieces(first, buf.len(), &rest).unwrap(), seq)
    }

    #[test]
    fn pattern_is_checked_across_pieces() {
        let mut buf = vec![0u8; 1000];
        fill_pattern(&mut buf, 42);
        assert!(check_in_pieces(&buf, 42));
        assert!(!check_in_pieces(&buf, 43));
        buf[700] ^= 1;
        assert!(!check_in_pieces(&buf, 42));
    }
}
