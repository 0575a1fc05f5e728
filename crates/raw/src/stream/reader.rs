//! Reader of the stream bindings: frames off one connection, accepted on its
//! listener or, for an echo reader, the connection its binding's data writer
//! opened (see [`super::links`]).

use super::key_proof::Screen;
use super::links::{self, Control, Links};
use super::{FRAME, StreamSocket, io};
use crate::wait::{Deadline, POLL, is_wait, retry};
use pubsubperf_core::Received;
use pubsubperf_core::page_buf::PageBuf;
use pubsubperf_core::{BindingError, CancelToken, EndpointConfig, Reader, WaitMode};
use std::io::ErrorKind;
use std::sync::Arc;
use std::time::Duration;

/// A reader's connection: listening until its writer connects.
enum Accept<S: StreamSocket> {
    Pending(S::Listener),
    Connected(S),
}

/// Reader of the stream bindings.
pub struct StreamReader<S: StreamSocket> {
    conn: Accept<S>,
    /// Where this reader listens (what a turn frame names).
    locator: String,
    links: Arc<Links<S>>,
    /// In a run with a key, the accepted connections not yet proven
    /// ([`super::key_proof`]); None: the first connection is served.
    screen: Option<Screen<S>>,
    /// A read into an empty buffer lands at its start, on a 4 KiB boundary
    /// (see [`PageBuf`]): every read of a ping-pong.
    buf: PageBuf,
    /// Bytes of `buf` holding data not yet delivered start here...
    start: usize,
    /// ...and end here.
    end: usize,
    /// How `recv` waits: busy, with `MSG_DONTWAIT` (the connection itself
    /// stays blocking, since an echo writer may write on it) and a deadline
    /// whose clock starts at the first check; block, in `recv(2)`.
    wait: WaitMode,
    cancel: CancelToken,
}

impl<S: StreamSocket> StreamReader<S> {
    pub(super) fn new(
        l: S::Listener,
        locator: &str,
        links: &Arc<Links<S>>,
        cfg: &EndpointConfig,
    ) -> Self {
        links.add_reader(locator);
        StreamReader {
            conn: Accept::Pending(l),
            locator: locator.to_string(),
            links: links.clone(),
            screen: cfg.sample_key.map(Screen::new),
            // Room for the largest frame (or hello) plus a read-ahead of 256 KiB.
            buf: PageBuf::new(cfg.max_sample_size.max(links::MAX_BODY) + FRAME + (256 << 10)),
            start: 0,
            end: 0,
            wait: cfg.wait,
            cancel: cfg.cancel.clone(),
        }
    }

    /// Waits up to `timeout` for a connection: accepted on the listener
    /// (in a run with a key, once it proved the key; then its hello is
    /// read), or turned to this reader by an echo writer.
    fn accept(&mut self, timeout: Duration) -> Result<bool, BindingError> {
        let Accept::Pending(l) = &self.conn else {
            return Ok(true);
        };
        let got = retry(
            &mut Deadline::new(timeout, WaitMode::Block),
            &self.cancel,
            || {
                if let Some(s) = S::try_accept(l).map_err(io("accept"))? {
                    match &mut self.screen {
                        Some(screen) => screen.admit(s),
                        None => return Ok(Some((s, true))),
                    }
                }
                if let Some(s) = self.screen.as_mut().and_then(Screen::proven) {
                    return Ok(Some((s, true)));
                }
                if let Some(s) = self.links.claim_turn(&self.locator)? {
                    return Ok(Some((s, false)));
                }
                std::thread::sleep(Duration::from_millis(1));
                Ok(None)
            },
        )?;
        let Some((s, accepted)) = got else {
            return Ok(false);
        };
        // The strangers still waiting are closed with it.
        if let Some(screen) = &mut self.screen {
            screen.close_waiting();
        }
        // Blocking reads wake every POLL to check for cancellation.
        s.set_read_timeout(Some(POLL)).map_err(io("reader mode"))?;
        if accepted {
            let listed = self.read_hello(&s, timeout)?;
            let second = if listed.is_empty() {
                None
            } else {
                s.second().ok()
            };
            self.links.accepted(listed, second);
        }
        self.conn = Accept::Connected(s);
        Ok(true)
    }

    /// Reads the hello an accepted connection opens with; what follows it
    /// stays buffered for [`Reader::recv`].
    fn read_hello(&mut self, s: &S, timeout: Duration) -> Result<Vec<String>, BindingError> {
        let mut deadline = Deadline::new(timeout, WaitMode::Block);
        loop {
            if let Some((control, len)) = links::parse(&self.buf[self.start..self.end])? {
                self.start += len;
                return match control {
                    Control::Hello(listed) => Ok(listed),
                    Control::Turn(_) => Err(BindingError::Malformed(
                        "a turn frame on a new connection".into(),
                    )),
                };
            }
            let end = self.end;
            let got = retry(&mut deadline, &self.cancel, || {
                read(s, &mut self.buf[end..], 0)
            })?;
            match got {
                Some(n) => self.end += n,
                None => {
                    return Err(BindingError::MatchTimeout(
                        timeout,
                        "a writer connected but sent no hello".into(),
                    ));
                }
            }
        }
    }

    /// The complete frame at `start`, if buffered: (offset, length).
    #[inline]
    fn frame(&self) -> Result<Option<(usize, usize)>, BindingError> {
        let avail = self.end - self.start;
        if avail < FRAME {
            return Ok(None);
        }
        let len = u32::from_le_bytes(
            self.buf[self.start..self.start + FRAME]
                .try_into()
                .expect("4 bytes"),
        ) as usize;
        if len + FRAME > self.buf.len() {
            return Err(BindingError::Malformed(format!(
                "frame of {len} bytes exceeds the run's largest sample"
            )));
        }
        Ok((avail >= FRAME + len).then_some((self.start + FRAME, len)))
    }
}

/// One `recv(2)` into `buf`: `Ok(None)` when nothing came yet (a timeout,
/// or nothing buffered under `MSG_DONTWAIT`).
#[inline]
fn read<S: StreamSocket>(s: &S, buf: &mut [u8], flags: i32) -> Result<Option<usize>, BindingError> {
    match crate::sys::recv(s, buf, flags) {
        Ok(0) => Err(BindingError::Disconnected),
        Ok(n) => Ok(Some(n)),
        Err(e) if is_wait(&e) => Ok(None),
        Err(e) if e.kind() == ErrorKind::ConnectionReset => Err(BindingError::Disconnected),
        Err(e) => Err(BindingError::io("stream read", e)),
    }
}

impl<S: StreamSocket> Reader for StreamReader<S> {
    fn wait_matched(&mut self, timeout: Duration) -> Result<(), BindingError> {
        if self.accept(timeout)? {
            Ok(())
        } else {
            Err(BindingError::MatchTimeout(
                timeout,
                "no writer connected".into(),
            ))
        }
    }

    #[inline]
    fn recv<F: FnMut(Received<'_>)>(
        &mut self,
        timeout: Duration,
        on_sample: &mut F,
    ) -> Result<usize, BindingError> {
        let mut deadline = Deadline::new(timeout, self.wait);
        if matches!(self.conn, Accept::Pending(_)) && !self.accept(deadline.left())? {
            return Ok(0);
        }
        loop {
            // Deliver every complete buffered frame.
            let mut count = 0;
            while let Some((at, len)) = self.frame()? {
                on_sample(Received::whole(&self.buf[at..at + len]));
                self.start = at + len;
                count += 1;
            }
            if count > 0 {
                return Ok(count);
            }
            // Make room: move the partial frame to the front.
            if self.start > 0 {
                self.buf.copy_within(self.start..self.end, 0);
                self.end -= self.start;
                self.start = 0;
            }
            let Accept::Connected(s) = &self.conn else {
                unreachable!("accepted above")
            };
            let end = self.end;
            let flags = match self.wait {
                WaitMode::Busy => libc::MSG_DONTWAIT,
                WaitMode::Block => 0,
            };
            let buf = &mut self.buf[end..];
            match retry(&mut deadline, &self.cancel, || read(s, buf, flags))? {
                Some(n) => self.end += n,
                None => return Ok(0),
            }
        }
    }
}
