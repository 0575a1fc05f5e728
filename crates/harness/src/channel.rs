//! One end of a control connection: length-prefixed frames over TCP, each
//! [`Msg`] as JSON, and once the handshake ([`crate::auth`]) has given the
//! two ends their session keys, every frame authenticated.
//!
//! A keyed frame is `u32` length (little-endian), the JSON body, then a
//! 32-byte HMAC-SHA256 tag over the frame's sequence number in its
//! direction (`u64`, little-endian, from 0 after the handshake) and the
//! body, with that direction's key. A frame changed, dropped, replayed,
//! reordered or sent from the other direction fails its tag, and the
//! connection is given up ([`ControlError::Forged`]).
//!
//! Reads keep what has arrived across timeouts: a message that comes in
//! pieces, slowly, is read whole when its last piece comes (a timeout
//! returns [`ControlError::Timeout`] and loses nothing). A frame longer than
//! the connection's limit is refused from its length, before anything is
//! allocated for it: [`PREAUTH_MESSAGE`] until the peer has proven itself
//! (or the connection is a trusted one), [`MAX_MESSAGE`] after. The buffer
//! grows only with bytes that actually arrive.
//!
//! The threads of one side share a connection through
//! [`Ctl::try_clone`]: each clone has a descriptor of its own (a helper
//! thread with a file table of its own keeps its copy,
//! [`pubsubperf_core::helper`]), the two directions' state is shared, so
//! one thread may send while another waits to receive. The control channel
//! is never on the measured path; its locks are not either.

use crate::protocol::{ControlError, Msg, decode, encode_body};
use hmac::{Hmac, Mac};
use sha2::Sha256;
use std::io::{Read, Write};
use std::net::TcpStream;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

/// Largest control message accepted from an authenticated or trusted peer.
pub const MAX_MESSAGE: usize = 16 << 20;
/// Largest message accepted before the peer has proven it holds the token
/// (a Hello or a proof is a few hundred bytes).
pub const PREAUTH_MESSAGE: usize = 4 << 10;
/// Bytes of a frame's tag.
pub const TAG: usize = 32;

type HmacSha256 = Hmac<Sha256>;

/// The two keys of an authenticated session, one per direction, from the
/// handshake ([`crate::auth`]).
#[derive(Clone, PartialEq, Eq)]
pub struct SessionKeys {
    /// Key of the frames this end sends.
    pub send: [u8; 32],
    /// Key of the frames this end receives.
    pub recv: [u8; 32],
}

impl std::fmt::Debug for SessionKeys {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("SessionKeys(..)")
    }
}

impl SessionKeys {
    /// As hex, to hand a session to the process that serves it (on a
    /// pipe, [`crate::key_pipe`]).
    pub fn to_hex(&self) -> String {
        let mut s = crate::auth::hex(&self.send);
        s.push_str(&crate::auth::hex(&self.recv));
        s
    }

    /// From [`SessionKeys::to_hex`].
    pub fn from_hex(s: &str) -> Option<SessionKeys> {
        let b = crate::auth::unhex(s)?;
        if b.len() != 64 {
            return None;
        }
        let mut k = SessionKeys {
            send: [0; 32],
            recv: [0; 32],
        };
        k.send.copy_from_slice(&b[..32]);
        k.recv.copy_from_slice(&b[32..]);
        Some(k)
    }
}

/// One direction's state.
struct Half {
    key: Option<[u8; 32]>,
    seq: u64,
}

/// The receiving direction: its key and sequence, the bytes read so far
/// and the largest frame it takes.
struct RxHalf {
    half: Half,
    buf: Vec<u8>,
    limit: usize,
}

/// One end of a control connection (see the module's documentation).
pub struct Ctl {
    stream: TcpStream,
    tx: Arc<Mutex<Half>>,
    rx: Arc<Mutex<RxHalf>>,
}

impl std::os::fd::AsRawFd for Ctl {
    fn as_raw_fd(&self) -> std::os::fd::RawFd {
        self.stream.as_raw_fd()
    }
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

fn tag(key: &[u8; 32], seq: u64, body: &[u8]) -> HmacSha256 {
    let mut m = HmacSha256::new_from_slice(key).expect("HMAC takes any key length");
    m.update(&seq.to_le_bytes());
    m.update(body);
    m
}

impl Ctl {
    /// A connection to a peer not yet proven (an agent's stranger): frames
    /// up to [`PREAUTH_MESSAGE`] until [`Ctl::authenticated`] or
    /// [`Ctl::trusted`].
    pub fn stranger(stream: TcpStream) -> Ctl {
        Ctl::with_limit(stream, PREAUTH_MESSAGE)
    }

    /// A connection to a trusted peer, unauthenticated frames up to
    /// [`MAX_MESSAGE`]: a process this one started, a thread of its own,
    /// an agent over SSH, an `--insecure` agent.
    pub fn plain(stream: TcpStream) -> Ctl {
        Ctl::with_limit(stream, MAX_MESSAGE)
    }

    /// A connection whose handshake is done: every frame keyed, sequence
    /// numbers from 0.
    pub fn keyed(stream: TcpStream, keys: &SessionKeys) -> Ctl {
        let c = Ctl::plain(stream);
        c.authenticated(keys);
        c
    }

    fn with_limit(stream: TcpStream, limit: usize) -> Ctl {
        let _ = stream.set_nodelay(true);
        Ctl {
            stream,
            tx: Arc::new(Mutex::new(Half { key: None, seq: 0 })),
            rx: Arc::new(Mutex::new(RxHalf {
                half: Half { key: None, seq: 0 },
                buf: Vec::new(),
                limit,
            })),
        }
    }

    /// Another handle on the same connection, with a descriptor of its own
    /// (a helper thread's), sharing both directions' state.
    pub fn try_clone(&self) -> std::io::Result<Ctl> {
        Ok(Ctl {
            stream: self.stream.try_clone()?,
            tx: self.tx.clone(),
            rx: self.rx.clone(),
        })
    }

    /// From now on every frame is keyed with `keys`, sequence numbers from
    /// 0 in both directions, up to [`MAX_MESSAGE`].
    pub fn authenticated(&self, keys: &SessionKeys) {
        *lock(&self.tx) = Half {
            key: Some(keys.send),
            seq: 0,
        };
        let mut rx = lock(&self.rx);
        rx.half = Half {
            key: Some(keys.recv),
            seq: 0,
        };
        rx.limit = MAX_MESSAGE;
    }

    /// The peer is trusted without keys (see [`Ctl::plain`]).
    pub fn trusted(&self) {
        lock(&self.rx).limit = MAX_MESSAGE;
    }

    /// True once frames are keyed.
    pub fn is_keyed(&self) -> bool {
        lock(&self.tx).key.is_some()
    }

    /// The connection (addresses, shutdown, handing it to a process).
    pub fn stream(&self) -> &TcpStream {
        &self.stream
    }

    /// Bytes received and not yet taken as a message (an agent hands a
    /// connection on only when this is empty).
    pub fn pending(&self) -> usize {
        lock(&self.rx).buf.len()
    }

    /// Sends one message.
    pub fn send(&self, msg: &Msg) -> Result<(), ControlError> {
        self.send_body(&encode_body(msg))
    }

    /// Sends one frame whose body is `body` as it is, keyed as every frame
    /// (what a peer of another version, or a hostile one, could send).
    pub fn send_body(&self, body: &[u8]) -> Result<(), ControlError> {
        let mut tx = lock(&self.tx);
        let tag_len = if tx.key.is_some() { TAG } else { 0 };
        let mut frame = Vec::with_capacity(4 + body.len() + tag_len);
        frame.extend_from_slice(&((body.len() + tag_len) as u32).to_le_bytes());
        frame.extend_from_slice(body);
        if let Some(key) = &tx.key {
            frame.extend_from_slice(&tag(key, tx.seq, body).finalize().into_bytes());
        }
        (&self.stream).write_all(&frame)?;
        tx.seq += 1;
        Ok(())
    }

    /// Receives one message, waiting at most `timeout` (None: until one
    /// comes or the connection ends). A timeout keeps what has arrived.
    pub fn recv(&self, timeout: Option<Duration>) -> Result<Msg, ControlError> {
        let deadline = timeout.map(|t| Instant::now() + t);
        let mut rx = lock(&self.rx);
        loop {
            if let Some(msg) = take_frame(&mut rx)? {
                return Ok(msg);
            }
            let left = match deadline {
                None => None,
                Some(d) => {
                    let left = d.saturating_duration_since(Instant::now());
                    if left.is_zero() {
                        return Err(ControlError::Timeout(timeout.unwrap_or_default()));
                    }
                    Some(left)
                }
            };
            self.stream.set_read_timeout(left)?;
            let mut chunk = [0u8; 16 << 10];
            match (&self.stream).read(&mut chunk) {
                Ok(0) => return Err(ControlError::Closed),
                Ok(n) => rx.buf.extend_from_slice(&chunk[..n]),
                Err(e)
                    if matches!(
                        e.kind(),
                        std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                    ) =>
                {
                    return Err(ControlError::Timeout(timeout.unwrap_or_default()));
                }
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) if e.kind() == std::io::ErrorKind::ConnectionReset => {
                    return Err(ControlError::Closed);
                }
                Err(e) => return Err(e.into()),
            }
        }
    }
}

/// The next whole frame of `rx`'s buffer as a message, if one is there;
/// its length is checked against the limit as soon as its 4 bytes are.
fn take_frame(rx: &mut RxHalf) -> Result<Option<Msg>, ControlError> {
    if rx.buf.len() < 4 {
        return Ok(None);
    }
    let n = u32::from_le_bytes(rx.buf[..4].try_into().expect("4 bytes")) as usize;
    let tag_len = if rx.half.key.is_some() { TAG } else { 0 };
    if n > rx.limit + tag_len {
        return Err(ControlError::Bad(format!(
            "message of {n} bytes exceeds {} (refused before reading it)",
            rx.limit
        )));
    }
    if n < tag_len {
        return Err(ControlError::Forged);
    }
    if rx.buf.len() < 4 + n {
        return Ok(None);
    }
    let frame: Vec<u8> = rx.buf.drain(..4 + n).skip(4).collect();
    let (body, t) = frame.split_at(n - tag_len);
    if let Some(key) = &rx.half.key {
        tag(key, rx.half.seq, body)
            .verify_slice(t)
            .map_err(|_| ControlError::Forged)?;
    }
    rx.half.seq += 1;
    decode(body).map(Some)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::encode;

    fn pair() -> (TcpStream, TcpStream) {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let a = TcpStream::connect(l.local_addr().unwrap()).unwrap();
        let (b, _) = l.accept().unwrap();
        (a, b)
    }

    fn keys() -> (SessionKeys, SessionKeys) {
        let k = SessionKeys {
            send: [1; 32],
            recv: [2; 32],
        };
        let other = SessionKeys {
            send: k.recv,
            recv: k.send,
        };
        (k, other)
    }

    fn stop(sent: u64) -> Msg {
        Msg::Stop {
            sent,
            sent_by: vec![],
            rejected: 0,
        }
    }

    fn sent_of(m: Msg) -> u64 {
        match m {
            Msg::Stop { sent, .. } => sent,
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn keyed_messages_go_through_in_order() {
        let (a, b) = pair();
        let (ka, kb) = keys();
        let (a, b) = (Ctl::keyed(a, &ka), Ctl::keyed(b, &kb));
        for i in 0..5 {
            a.send(&stop(i)).unwrap();
        }
        for i in 0..5 {
            assert_eq!(sent_of(b.recv(Some(Duration::from_secs(5))).unwrap()), i);
        }
        b.send(&stop(9)).unwrap();
        assert_eq!(sent_of(a.recv(Some(Duration::from_secs(5))).unwrap()), 9);
    }

    /// Records the frames `a` sends, to replay or change them.
    fn captured(a: &Ctl, b: TcpStream, msgs: &[Msg]) -> Vec<Vec<u8>> {
        for m in msgs {
            a.send(m).unwrap();
        }
        b.set_read_timeout(Some(Duration::from_millis(300)))
            .unwrap();
        let mut buf = Vec::new();
        let mut chunk = [0u8; 4096];
        while let Ok(n @ 1..) = (&b).read(&mut chunk) {
            buf.extend_from_slice(&chunk[..n]);
        }
        let mut frames = Vec::new();
        while buf.len() >= 4 {
            let n = u32::from_le_bytes(buf[..4].try_into().unwrap()) as usize;
            frames.push(buf.drain(..4 + n).collect());
        }
        frames
    }

    #[test]
    fn a_replayed_reordered_or_changed_frame_is_refused() {
        let (ka, kb) = keys();
        let (a, b) = pair();
        let a = Ctl::keyed(a, &ka);
        let frames = captured(&a, b, &[stop(1), stop(2)]);
        assert_eq!(frames.len(), 2);
        let deliver = |bytes: &[Vec<u8>]| {
            let (x, y) = pair();
            let y = Ctl::keyed(y, &kb);
            for f in bytes {
                (&x).write_all(f).unwrap();
            }
            let mut got = Vec::new();
            loop {
                match y.recv(Some(Duration::from_millis(300))) {
                    Ok(m) => got.push(sent_of(m)),
                    Err(e) => return (got, e),
                }
            }
        };
        // As sent: both, then nothing more.
        let (got, e) = deliver(&frames);
        assert_eq!(got, [1, 2]);
        assert!(matches!(e, ControlError::Timeout(_)), "{e:?}");
        // Replayed: the second copy of the first frame fails.
        let (got, e) = deliver(&[frames[0].clone(), frames[0].clone()]);
        assert_eq!(got, [1]);
        assert!(matches!(e, ControlError::Forged), "{e:?}");
        // Reordered, or the first one dropped.
        let (got, e) = deliver(&[frames[1].clone()]);
        assert!(got.is_empty() && matches!(e, ControlError::Forged), "{e:?}");
        // One bit of the body changed.
        let mut changed = frames[0].clone();
        let i = changed.iter().position(|&c| c == b'1').unwrap();
        changed[i] = b'7';
        let (got, e) = deliver(&[changed]);
        assert!(got.is_empty() && matches!(e, ControlError::Forged), "{e:?}");
        // An unkeyed frame to a keyed end.
        let (got, e) = deliver(&[encode(&stop(1))]);
        assert!(got.is_empty() && matches!(e, ControlError::Forged), "{e:?}");
    }

    #[test]
    fn a_frame_sent_in_slow_pieces_is_read_whole() {
        let (a, b) = pair();
        let b = Ctl::plain(b);
        let frame = encode(&stop(77));
        let (first, rest) = frame.split_at(frame.len() / 2);
        (&a).write_all(first).unwrap();
        assert!(matches!(
            b.recv(Some(Duration::from_millis(100))),
            Err(ControlError::Timeout(_))
        ));
        (&a).write_all(rest).unwrap();
        assert_eq!(sent_of(b.recv(Some(Duration::from_secs(5))).unwrap()), 77);
    }

    #[test]
    fn a_stranger_cannot_announce_a_large_message() {
        let (a, b) = pair();
        let b = Ctl::stranger(b);
        (&a).write_all(&(1u32 << 30).to_le_bytes()).unwrap();
        match b.recv(Some(Duration::from_secs(5))) {
            Err(ControlError::Bad(m)) => assert!(m.contains("exceeds 4096"), "{m}"),
            other => panic!("{other:?}"),
        }
        // Nothing was reserved for it.
        assert!(lock(&b.rx).buf.capacity() < 64 << 10);
    }

    #[test]
    fn keys_survive_hex() {
        let (k, _) = keys();
        assert_eq!(SessionKeys::from_hex(&k.to_hex()), Some(k));
        assert_eq!(SessionKeys::from_hex("00"), None);
        assert_eq!(SessionKeys::from_hex(&"zz".repeat(64)), None);
    }
}
