//! What a sample of a topology carries after the common 24-byte header
//! ([`pubsubperf_core::sample::Header`], whose timestamp is the send time
//! of the hop and whose publisher id is the stream that wrote it):
//!
//! | bytes  | field |
//! |--------|-------|
//! | 24..32 | origin timestamp: when the source wrote the sample |
//! | 32     | route length: how many streams it went through |
//! | 33..48 | route: their ids, the source's first |
//!
//! A relay keeps the origin, appends its own stream and stamps the header
//! anew; a sink reads the route to know its path. The smallest sample of a
//! topology is [`ROUTE_END`] bytes.

use crate::graph::MAX_HOPS;
use pubsubperf_core::sample::HEADER_LEN;

/// Where the route part ends: the smallest topology sample.
pub const ROUTE_END: usize = HEADER_LEN + 8 + 1 + MAX_HOPS;

/// The route part of a received sample, read without allocating.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Route {
    /// When the source wrote the sample.
    pub origin_ns: u64,
    len: u8,
    hops: [u8; MAX_HOPS],
}

impl Route {
    /// A new route, at the source: origin now, one stream.
    #[inline]
    pub fn start(origin_ns: u64, stream: u8) -> Route {
        let mut hops = [0; MAX_HOPS];
        hops[0] = stream;
        Route {
            origin_ns,
            len: 1,
            hops,
        }
    }

    /// Reads the route of `buf` (a whole sample's first [`ROUTE_END`]
    /// bytes or more); None when it is too short or its length is out of
    /// range.
    #[inline]
    pub fn read(buf: &[u8]) -> Option<Route> {
        let part = buf.get(HEADER_LEN..ROUTE_END)?;
        let origin_ns = u64::from_le_bytes(part[..8].try_into().ok()?);
        let len = part[8];
        if len == 0 || len as usize > MAX_HOPS {
            return None;
        }
        let mut hops = [0; MAX_HOPS];
        hops.copy_from_slice(&part[9..]);
        Some(Route {
            origin_ns,
            len,
            hops,
        })
    }

    /// Writes it into `buf[HEADER_LEN..ROUTE_END]`.
    #[inline]
    pub fn write(&self, buf: &mut [u8]) {
        buf[HEADER_LEN..HEADER_LEN + 8].copy_from_slice(&self.origin_ns.to_le_bytes());
        buf[HEADER_LEN + 8] = self.len;
        buf[HEADER_LEN + 9..ROUTE_END].copy_from_slice(&self.hops);
    }

    /// The route one relay further: `stream` appended (None when full).
    #[inline]
    pub fn then(&self, stream: u8) -> Option<Route> {
        let mut r = *self;
        *r.hops.get_mut(r.len as usize)? = stream;
        r.len += 1;
        Some(r)
    }

    /// The streams passed, the source's first.
    #[inline]
    pub fn streams(&self) -> &[u8] {
        &self.hops[..self.len as usize]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_route_survives_the_wire_and_grows_by_a_hop() {
        let mut buf = [0u8; 64];
        let r = Route::start(123_456_789, 3).then(7).unwrap();
        r.write(&mut buf);
        let back = Route::read(&buf).unwrap();
        assert_eq!(back, r);
        assert_eq!(back.streams(), &[3, 7]);
        assert_eq!(back.origin_ns, 123_456_789);
    }

    #[test]
    fn a_full_route_takes_no_more_and_bad_lengths_are_refused() {
        let mut r = Route::start(0, 0);
        for s in 1..MAX_HOPS as u8 {
            r = r.then(s).unwrap();
        }
        assert!(r.then(99).is_none());
        let mut buf = [0u8; ROUTE_END];
        r.write(&mut buf);
        buf[HEADER_LEN + 8] = 0;
        assert!(Route::read(&buf).is_none());
        buf[HEADER_LEN + 8] = MAX_HOPS as u8 + 1;
        assert!(Route::read(&buf).is_none());
        assert!(Route::read(&buf[..ROUTE_END - 1]).is_none());
    }
}
