//! [`Received`]: a sample as a reader hands it to the measurement.
//!
//! Most middleware delivers a sample's bytes in one piece. zenoh delivers a
//! sample larger than its batch (64 KiB) in the pieces it arrived in, and
//! joining them is a copy of the whole sample (at 1 MiB, twice per round
//! trip) that zenoh's own z_ping and z_pong never make. The measurement
//! reads only the start of a sample ([`HEAD_LEN`] bytes: the header and the
//! subscriber's receive time), so a binding may hand the pieces over as
//! they are; the whole sample is gathered only where it is read whole
//! (tests; `--check`'s pattern is checked piece by piece).
//!
//! [`HEAD_LEN`] is also where the subscriber writes its receive time into
//! an echo (`--one-way`), so the head and that offset are one constant.

use crate::sample::HEADER_LEN;

/// The bytes at the start of a sample that the measurement reads: the
/// header and the subscriber's receive time after it.
pub const HEAD_LEN: usize = HEADER_LEN + 8;

/// The pieces of a sample after its first, as the middleware holds them.
pub trait Pieces {
    /// Calls `f` with each piece after the first, in order.
    fn for_each_after_first(&self, f: &mut dyn FnMut(&[u8]));
}

/// A received sample's bytes, borrowed for the length of the call that
/// delivers it: in one piece, or in pieces whose first holds at least
/// [`HEAD_LEN`] bytes.
#[derive(Clone, Copy)]
pub struct Received<'a> {
    first: &'a [u8],
    len: usize,
    rest: Option<&'a dyn Pieces>,
}

impl<'a> Received<'a> {
    /// A sample in one piece.
    #[inline(always)]
    pub fn whole(bytes: &'a [u8]) -> Received<'a> {
        Received {
            first: bytes,
            len: bytes.len(),
            rest: None,
        }
    }

    /// A sample of `len` bytes in pieces: `first`, then what `rest` gives.
    /// `None` when `first` is shorter than [`HEAD_LEN`] (the caller then
    /// gathers the sample into one piece) or longer than `len`.
    #[inline]
    pub fn in_pieces(first: &'a [u8], len: usize, rest: &'a dyn Pieces) -> Option<Received<'a>> {
        (first.len() >= HEAD_LEN && first.len() <= len).then_some(Received {
            first,
            len,
            rest: Some(rest),
        })
    }

    /// The sample's length in bytes.
    #[inline(always)]
    pub fn len(&self) -> usize {
        self.len
    }

    #[inline(always)]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The sample's first bytes: all of it when it is in one piece, else at
    /// least [`HEAD_LEN`].
    #[inline(always)]
    pub fn head(&self) -> &'a [u8] {
        self.first
    }

    /// The whole sample, when it is in one piece.
    #[inline(always)]
    pub fn as_slice(&self) -> Option<&'a [u8]> {
        self.rest.is_none().then_some(self.first)
    }

    /// Calls `f` with each piece of the sample, in order, and the offset of
    /// the piece in the sample.
    pub fn for_each_piece(&self, mut f: impl FnMut(usize, &[u8])) {
        f(0, self.first);
        if let Some(rest) = self.rest {
            let mut at = self.first.len();
            rest.for_each_after_first(&mut |p| {
                f(at, p);
                at += p.len();
            });
        }
    }

    /// Copies the whole sample into the first [`Received::len`] bytes of
    /// `out` (which must be as long).
    pub fn copy_to(&self, out: &mut [u8]) {
        self.for_each_piece(|at, p| out[at..at + p.len()].copy_from_slice(p));
    }

    /// A copy of the whole sample.
    pub fn to_vec(&self) -> Vec<u8> {
        let mut v = Vec::with_capacity(self.len);
        self.for_each_piece(|_, p| v.extend_from_slice(p));
        v
    }
}

impl<'a> From<&'a [u8]> for Received<'a> {
    #[inline(always)]
    fn from(bytes: &'a [u8]) -> Received<'a> {
        Received::whole(bytes)
    }
}

impl std::fmt::Debug for Received<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Received")
            .field("len", &self.len)
            .field("in_one_piece", &self.rest.is_none())
            .finish()
    }
}

/// Pieces after the first, for tests: borrowed slices in order.
#[cfg(test)]
pub(crate) struct Rest<'a>(pub &'a [&'a [u8]]);

#[cfg(test)]
impl Pieces for Rest<'_> {
    fn for_each_after_first(&self, f: &mut dyn FnMut(&[u8])) {
        self.0.iter().for_each(|p| f(p));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pieces_join_in_order_with_their_offsets() {
        let first: Vec<u8> = (0..HEAD_LEN as u8).collect();
        let rest = Rest(&[b"ab", b"", b"cde"]);
        let r = Received::in_pieces(&first, HEAD_LEN + 5, &rest).expect("first is long enough");
        assert_eq!(
            (r.len(), r.head().len(), r.as_slice()),
            (HEAD_LEN + 5, HEAD_LEN, None)
        );
        let mut offsets = Vec::new();
        r.for_each_piece(|at, p| offsets.push((at, p.len())));
        let h = HEAD_LEN;
        assert_eq!(offsets, [(0, h), (h, 2), (h + 2, 0), (h + 2, 3)]);
        let mut want = first.clone();
        want.extend_from_slice(b"abcde");
        assert_eq!(r.to_vec(), want);
    }

    #[test]
    fn a_short_first_piece_is_refused() {
        let rest = Rest(&[b"xyz"]);
        assert!(Received::in_pieces(&[0; HEAD_LEN - 1], HEAD_LEN + 2, &rest).is_none());
        assert!(Received::in_pieces(&[0; HEAD_LEN], HEAD_LEN - 1, &rest).is_none());
    }

    #[test]
    fn one_piece_is_its_own_slice() {
        let r = Received::from(&b"hello"[..]);
        assert_eq!(
            (r.len(), r.head(), r.as_slice()),
            (5, &b"hello"[..], Some(&b"hello"[..]))
        );
        assert_eq!(r.to_vec(), b"hello");
    }
}
