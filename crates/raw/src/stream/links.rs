//! One connection per round trip: an echo writer sends back over the
//! connection its samples arrive on instead of opening a second one.
//!
//! Two connections (data one way, echoes the other) cost each sample a pure
//! acknowledgement segment: the reader's kernel acknowledges the data at
//! once, since nothing goes back on that connection to carry it. On one
//! connection the echo carries it, as in sockperf's ping-pong: two segments
//! per round trip instead of four (counted with `nstat`, bench/results/sockets_vs_sockperf.md).
//!
//! The handshake, in frames that no sample frame can be mistaken for (a
//! sample's length prefix is at most 1 GiB):
//! - every connection a writer opens starts with a *hello*: the locators of
//!   the readers of the writer's binding (on a publisher, its echo readers);
//! - a reader reads the hello when it accepts, and records the connection
//!   with that list ([`Links::accepted`]);
//! - an echo writer ([`TopicSpec::is_echo`](pubsubperf_core::TopicSpec::is_echo))
//!   whose reader is on such a list takes that connection
//!   ([`Links::take_accepted`]) and opens with a *turn* frame naming the
//!   reader it feeds;
//! - that reader, on the publisher, finds the turn frame by peeking at the
//!   connections its binding's writers opened ([`Links::claim_turn`]) and
//!   reads its samples from there.
//!
//! When no connection lists the echo writer's reader (its data came from
//! another process), it connects as any writer does. All of this happens
//! while endpoints match; the measuring loop only reads and writes.

use super::StreamSocket;
use pubsubperf_core::{BindingError, Locator};
use std::sync::Mutex;

/// Marker of a hello frame (in place of a sample's length prefix).
const HELLO: u32 = u32::MAX;
/// Marker of a turn frame.
const TURN: u32 = u32::MAX - 1;
/// Marker and body length.
const HEAD: usize = 8;
/// Largest hello or turn body: a few locators.
pub(super) const MAX_BODY: usize = 64 << 10;

/// A control frame at the front of a connection.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Control {
    /// The writer's binding's reader locators.
    Hello(Vec<Locator>),
    /// The writer feeds this reader over the connection it was sent on.
    Turn(Locator),
}

/// Encodes a hello listing `readers`.
pub(super) fn hello(readers: &[Locator]) -> Vec<u8> {
    frame(HELLO, &readers.join("\n"))
}

/// Encodes a turn frame naming `reader`.
pub(super) fn turn(reader: &str) -> Vec<u8> {
    frame(TURN, reader)
}

fn frame(marker: u32, body: &str) -> Vec<u8> {
    let mut f = Vec::with_capacity(HEAD + body.len());
    f.extend_from_slice(&marker.to_le_bytes());
    f.extend_from_slice(&(body.len() as u32).to_le_bytes());
    f.extend_from_slice(body.as_bytes());
    f
}

/// Parses the control frame at the front of `buf`: `Ok(None)` while
/// incomplete, else the frame and its length in bytes.
pub(super) fn parse(buf: &[u8]) -> Result<Option<(Control, usize)>, BindingError> {
    if buf.len() < HEAD {
        return Ok(None);
    }
    let word = |at: usize| u32::from_le_bytes(buf[at..at + 4].try_into().expect("4 bytes"));
    let (marker, len) = (word(0), word(4) as usize);
    if marker != HELLO && marker != TURN {
        return Err(BindingError::Malformed(
            "the connection did not open with a pubsubperf hello (a writer of another version?)"
                .into(),
        ));
    }
    if len > MAX_BODY {
        return Err(BindingError::Malformed(format!(
            "hello of {len} bytes (at most {MAX_BODY})"
        )));
    }
    let Some(body) = buf.get(HEAD..HEAD + len) else {
        return Ok(None);
    };
    let body = std::str::from_utf8(body)
        .map_err(|_| BindingError::Malformed("hello is not UTF-8".into()))?;
    let control = if marker == HELLO {
        Control::Hello(
            body.split('\n')
                .filter(|l| !l.is_empty())
                .map(str::to_string)
                .collect(),
        )
    } else {
        Control::Turn(body.to_string())
    };
    Ok(Some((control, HEAD + len)))
}

/// What one binding knows of its connections, shared by its readers and
/// writers. Locked only while endpoints match.
pub(super) struct Links<S> {
    inner: Mutex<Inner<S>>,
}

struct Inner<S> {
    /// Locators of the binding's readers, for the hellos of its writers.
    readers: Vec<Locator>,
    /// Readers without a connection yet.
    unmatched: usize,
    /// Connections the readers accepted, with the hello's list, until an
    /// echo writer takes one.
    accepted: Vec<(Vec<Locator>, S)>,
    /// Connections the writers opened (second handles), until a reader
    /// claims one by its turn frame.
    opened: Vec<S>,
}

impl<S: StreamSocket> Links<S> {
    pub(super) fn new() -> Self {
        Links {
            inner: Mutex::new(Inner {
                readers: Vec::new(),
                unmatched: 0,
                accepted: Vec::new(),
                opened: Vec::new(),
            }),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Inner<S>> {
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// A reader was created at `locator`.
    pub(super) fn add_reader(&self, locator: &str) {
        let mut i = self.lock();
        i.readers.push(locator.to_string());
        i.unmatched += 1;
    }

    /// The hello a writer of this binding opens its connections with.
    pub(super) fn hello(&self) -> Vec<u8> {
        hello(&self.lock().readers)
    }

    /// Readers of this binding still without a connection.
    pub(super) fn unmatched(&self) -> usize {
        self.lock().unmatched
    }

    /// A reader accepted a connection whose hello listed `listed`; `second`
    /// (none when nothing was listed) is a second handle on it for an echo
    /// writer to take.
    pub(super) fn accepted(&self, listed: Vec<Locator>, second: Option<S>) {
        let mut i = self.lock();
        i.unmatched = i.unmatched.saturating_sub(1);
        if let Some(s) = second {
            i.accepted.push((listed, s));
        }
    }

    /// A writer of this binding opened `second` (a second handle), over
    /// which a peer's echo writer may turn to one of its readers.
    pub(super) fn opened(&self, second: S) {
        self.lock().opened.push(second);
    }

    /// The accepted connection whose hello listed `reader`, for an echo
    /// writer feeding that reader.
    pub(super) fn take_accepted(&self, reader: &str) -> Option<S> {
        let mut i = self.lock();
        let at = i
            .accepted
            .iter()
            .position(|(listed, _)| listed.iter().any(|l| l == reader))?;
        Some(i.accepted.swap_remove(at).1)
    }

    /// The connection one of this binding's writers opened on which the
    /// peer's echo writer turned to feed reader `me`, its turn frame read.
    pub(super) fn claim_turn(&self, me: &str) -> Result<Option<S>, BindingError> {
        let want = turn(me);
        let mut i = self.lock();
        let mut found = None;
        for (at, s) in i.opened.iter().enumerate() {
            let mut head = vec![0u8; want.len()];
            match crate::sys::recv(s, &mut head, libc::MSG_PEEK | libc::MSG_DONTWAIT) {
                Ok(n) if n == want.len() && head == want => {
                    found = Some(at);
                    break;
                }
                _ => {}
            }
        }
        let Some(at) = found else { return Ok(None) };
        let s = i.opened.swap_remove(at);
        i.unmatched = i.unmatched.saturating_sub(1);
        drop(i);
        // Peeked whole above, so this read returns it at once.
        let mut head = vec![0u8; want.len()];
        let n = crate::sys::recv(&s, &mut head, libc::MSG_DONTWAIT)
            .map_err(|e| BindingError::io("stream read of a turn frame", e))?;
        if n != want.len() {
            return Err(BindingError::Malformed("turn frame cut short".into()));
        }
        Ok(Some(s))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn control_frames_parse_back() {
        let h = hello(&["127.0.0.1:1".into(), "@a/b".into()]);
        assert_eq!(
            parse(&h).unwrap(),
            Some((
                Control::Hello(vec!["127.0.0.1:1".into(), "@a/b".into()]),
                h.len()
            ))
        );
        assert_eq!(parse(&h[..h.len() - 1]).unwrap(), None);
        let t = turn("@x");
        assert_eq!(
            parse(&t).unwrap(),
            Some((Control::Turn("@x".into()), t.len()))
        );
        assert_eq!(
            parse(&hello(&[])).unwrap(),
            Some((Control::Hello(vec![]), 8))
        );
    }

    #[test]
    fn a_sample_frame_is_not_a_hello() {
        let mut f = 64u32.to_le_bytes().to_vec();
        f.extend_from_slice(&[0; 68]);
        assert!(parse(&f).is_err());
    }
}
