//! Writer of the stream bindings: frames to every connected reader, one
//! connection each; an echo writer turns the connection its samples come on
//! (see [`super::links`]).

use super::links::{self, Links};
use super::{FRAME, StreamSocket, io};
use crate::wait::{POLL, is_wait};
use pubsubperf_core::page_buf::PageBuf;
use pubsubperf_core::{BindingError, CancelToken, EndpointConfig, Locator, TopicSpec, Writer};
use std::io::{ErrorKind, IoSlice};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Writer of the stream bindings; fans out to every connected reader.
pub struct StreamWriter<S: StreamSocket> {
    pub(super) conns: Vec<S>,
    /// Readers an echo writer connects to once endpoints match, when it
    /// knows whether their samples' connection can carry its echoes.
    unresolved: Vec<Locator>,
    links: Arc<Links<S>>,
    cfg: EndpointConfig,
    /// Frames built by `send` start at its start, on a 4 KiB boundary (see
    /// [`PageBuf`]); `send_from` writes from the caller's memory.
    buf: PageBuf,
    max: usize,
    pending: usize,
    batch: usize,
    block_timeout: Duration,
    cancel: CancelToken,
}

impl<S: StreamSocket> StreamWriter<S> {
    pub(super) fn open(
        topic: &TopicSpec,
        readers: &[Locator],
        links: &Arc<Links<S>>,
        cfg: &EndpointConfig,
    ) -> Result<Self, BindingError> {
        let mut w = StreamWriter {
            conns: Vec::with_capacity(readers.len()),
            unresolved: Vec::new(),
            links: links.clone(),
            cfg: cfg.clone(),
            buf: PageBuf::new((cfg.max_sample_size + FRAME).max(cfg.batch_bytes)),
            max: cfg.max_sample_size,
            pending: 0,
            batch: cfg.batch_bytes,
            block_timeout: Duration::from_millis(cfg.reliable_block_timeout_ms),
            cancel: cfg.cancel.clone(),
        };
        if topic.is_echo() {
            w.unresolved = readers.to_vec();
        } else {
            for r in readers {
                w.connect(r)?;
            }
        }
        Ok(w)
    }

    /// A connection of its own to the reader at `locator`, opened with the
    /// run's key frame, when it has a key ([`super::key_proof`]), and the
    /// binding's hello.
    fn connect(&mut self, locator: &str) -> Result<(), BindingError> {
        let s = S::connect(locator, &self.cfg)?;
        let mut opening = Vec::new();
        if let Some(key) = self.cfg.sample_key {
            opening.extend_from_slice(&super::key_proof::key_frame(key));
        }
        opening.extend_from_slice(&self.links.hello());
        self.add(s, &opening)?;
        // Only a binding with readers waiting may be fed over it.
        if self.links.unmatched() > 0
            && let Ok(second) = self.conns.last().expect("just added").second()
        {
            self.links.opened(second);
        }
        Ok(())
    }

    /// Adds connection `s`, its first bytes `opening`.
    fn add(&mut self, s: S, opening: &[u8]) -> Result<(), BindingError> {
        s.set_write_timeout(Some(POLL)).map_err(io("writer mode"))?;
        self.conns.push(s);
        let c = self.conns.last_mut().expect("just added");
        write_all(
            c,
            &mut [IoSlice::new(opening)],
            self.block_timeout,
            &self.cancel,
        )
    }

    /// Connects to the readers left unresolved: over the connection whose
    /// hello listed the reader, if one was accepted, else (once every reader
    /// of the binding has its connection, so that none can come) directly.
    fn resolve(&mut self, timeout: Duration) -> Result<(), BindingError> {
        let start = Instant::now();
        while let Some(r) = self.unresolved.last().cloned() {
            if let Some(s) = self.links.take_accepted(&r) {
                s.writer_options(&self.cfg)?;
                self.add(s, &links::turn(&r))?;
            } else if self.links.unmatched() == 0 || start.elapsed() >= timeout {
                self.connect(&r)?;
            } else {
                if self.cancel.is_cancelled() {
                    return Err(BindingError::Cancelled);
                }
                std::thread::sleep(Duration::from_millis(1));
                continue;
            }
            self.unresolved.pop();
        }
        Ok(())
    }

    fn write_pending(&mut self) -> Result<(), BindingError> {
        if !self.unresolved.is_empty() {
            return Err(BindingError::Middleware(
                "stream writer used before its readers matched (wait_matched)".into(),
            ));
        }
        let n = std::mem::take(&mut self.pending);
        for c in &mut self.conns {
            write_all(
                c,
                &mut [IoSlice::new(&self.buf[..n])],
                self.block_timeout,
                &self.cancel,
            )?;
        }
        Ok(())
    }
}

/// Writes all of `parts` in order, waiting at most `block_timeout` for
/// room (counted from the first write that found none, one [`POLL`] in).
#[inline]
fn write_all<S: StreamSocket>(
    c: &mut S,
    mut parts: &mut [IoSlice<'_>],
    block_timeout: Duration,
    cancel: &CancelToken,
) -> Result<(), BindingError> {
    // Read the clock only once the writer has to wait: not per sample.
    let mut waiting_since = None;
    IoSlice::advance_slices(&mut parts, 0);
    while !parts.is_empty() {
        let r = match parts {
            [one] => crate::sys::send(c, one),
            _ => crate::sys::send_parts(c, parts),
        };
        match r {
            Ok(0) => return Err(BindingError::Disconnected),
            Ok(k) => IoSlice::advance_slices(&mut parts, k),
            Err(e) if is_wait(&e) => {
                if cancel.is_cancelled() {
                    return Err(BindingError::Cancelled);
                }
                if waiting_since.get_or_insert_with(Instant::now).elapsed() > block_timeout {
                    return Err(BindingError::WriteTimeout(block_timeout));
                }
            }
            Err(e) if matches!(e.kind(), ErrorKind::BrokenPipe | ErrorKind::ConnectionReset) => {
                return Err(BindingError::Disconnected);
            }
            Err(e) => return Err(BindingError::io("stream write", e)),
        }
    }
    Ok(())
}

impl<S: StreamSocket> Drop for StreamWriter<S> {
    /// Ends the writing side of each connection, so that its reader reads
    /// the end even while the connection stays open for echoes coming back.
    fn drop(&mut self) {
        for c in &self.conns {
            c.shutdown_write();
        }
    }
}

impl<S: StreamSocket> Writer for StreamWriter<S> {
    fn wait_matched(&mut self, readers: usize, timeout: Duration) -> Result<(), BindingError> {
        self.resolve(timeout)?;
        if self.conns.len() < readers {
            return Err(BindingError::MatchTimeout(
                timeout,
                format!("{} of {readers} readers connected", self.conns.len()),
            ));
        }
        Ok(())
    }

    #[inline]
    fn send<F: FnOnce(&mut [u8])>(&mut self, len: usize, fill: F) -> Result<(), BindingError> {
        if len > self.max {
            return Err(BindingError::TooLarge {
                size: len,
                limit: self.max,
            });
        }
        if self.pending + FRAME + len > self.buf.len() {
            self.write_pending()?;
        }
        let at = self.pending;
        self.buf[at..at + FRAME].copy_from_slice(&(len as u32).to_le_bytes());
        fill(&mut self.buf[at + FRAME..at + FRAME + len]);
        self.pending += FRAME + len;
        if self.pending >= self.batch {
            self.write_pending()?;
        }
        Ok(())
    }

    /// An unbatched writer with nothing pending writes the frame's length
    /// and `bytes` in one `sendmsg`, from the caller's memory.
    #[inline]
    fn send_from(&mut self, bytes: &[u8]) -> Option<Result<(), BindingError>> {
        if self.batch > 0 || self.pending > 0 || !self.unresolved.is_empty() {
            return None;
        }
        if bytes.len() > self.max {
            return Some(Err(BindingError::TooLarge {
                size: bytes.len(),
                limit: self.max,
            }));
        }
        let len = (bytes.len() as u32).to_le_bytes();
        for c in &mut self.conns {
            let mut parts = [IoSlice::new(&len), IoSlice::new(bytes)];
            if let Err(e) = write_all(c, &mut parts, self.block_timeout, &self.cancel) {
                return Some(Err(e));
            }
        }
        Some(Ok(()))
    }

    fn flush(&mut self) -> Result<(), BindingError> {
        if self.pending > 0 {
            self.write_pending()?;
        }
        Ok(())
    }
}
