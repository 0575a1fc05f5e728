//! `tcp` and `uds`: samples as length-prefixed frames (`u32` little endian,
//! then the sample) on a stream socket, one connection per reader. Reliable
//! only: a stream never drops, so a writer blocks while its reader falls
//! behind (bounded by `reliable_block_timeout_ms`). `--batch BYTES`
//! coalesces frames into one write of up to BYTES. Nagle's algorithm is off
//! on TCP (`TCP_NODELAY`) so that a single sample goes out at once;
//! `--opt nodelay=off` leaves it on, so that the kernel coalesces small
//! writes as iperf3 and sockperf's throughput mode let it (neither sets
//! `TCP_NODELAY` there).
//!
//! `uds` uses Linux abstract socket names (`@pubsubperf/<run>/<topic>/<n>`),
//! which vanish with the socket: nothing is left in the file system.

use crate::wait::{POLL, is_wait, retry};
use pubsubperf_core::binding::BindingInfo;
use pubsubperf_core::environment::kernel_release;
use pubsubperf_core::{
    Binding, BindingError, CancelToken, Capabilities, DataType, EndpointConfig, Locator, Reader,
    Reliability, TopicSpec, WaitMode, Writer,
};
use std::io::{ErrorKind, Read, Write};
use std::net::{IpAddr, Ipv6Addr, SocketAddr, TcpListener, TcpStream};
use std::os::linux::net::SocketAddrExt;
use std::os::unix::net::{SocketAddr as UnixAddr, UnixListener, UnixStream};
use std::time::{Duration, Instant};

/// Largest sample on a stream binding: 1 GiB (the frame prefix could carry 4 GiB).
pub const MAX_STREAM_SAMPLE: usize = 1 << 30;
const FRAME: usize = 4;

/// What the stream bindings need from a socket type.
pub trait StreamSocket: Read + Write + Send + Sized + 'static {
    /// Listener type.
    type Listener: Send + 'static;
    /// Accepts one connection if one is pending (the listener is non-blocking).
    fn try_accept(l: &Self::Listener) -> std::io::Result<Option<Self>>;
    /// Sets blocking mode.
    fn set_nonblocking(&self, on: bool) -> std::io::Result<()>;
    /// Sets read timeout.
    fn set_read_timeout(&self, t: Option<Duration>) -> std::io::Result<()>;
    /// Sets write timeout.
    fn set_write_timeout(&self, t: Option<Duration>) -> std::io::Result<()>;
}

impl StreamSocket for TcpStream {
    type Listener = TcpListener;
    fn try_accept(l: &TcpListener) -> std::io::Result<Option<Self>> {
        match l.accept() {
            Ok((s, _)) => Ok(Some(s)),
            Err(e) if is_wait(&e) => Ok(None),
            Err(e) => Err(e),
        }
    }
    fn set_nonblocking(&self, on: bool) -> std::io::Result<()> {
        TcpStream::set_nonblocking(self, on)
    }
    fn set_read_timeout(&self, t: Option<Duration>) -> std::io::Result<()> {
        TcpStream::set_read_timeout(self, t)
    }
    fn set_write_timeout(&self, t: Option<Duration>) -> std::io::Result<()> {
        TcpStream::set_write_timeout(self, t)
    }
}

impl StreamSocket for UnixStream {
    type Listener = UnixListener;
    fn try_accept(l: &UnixListener) -> std::io::Result<Option<Self>> {
        match l.accept() {
            Ok((s, _)) => Ok(Some(s)),
            Err(e) if is_wait(&e) => Ok(None),
            Err(e) => Err(e),
        }
    }
    fn set_nonblocking(&self, on: bool) -> std::io::Result<()> {
        UnixStream::set_nonblocking(self, on)
    }
    fn set_read_timeout(&self, t: Option<Duration>) -> std::io::Result<()> {
        UnixStream::set_read_timeout(self, t)
    }
    fn set_write_timeout(&self, t: Option<Duration>) -> std::io::Result<()> {
        UnixStream::set_write_timeout(self, t)
    }
}

fn caps(transport: &'static [&'static str], remote: bool) -> Capabilities {
    Capabilities {
        reliable: true,
        best_effort: false,
        default_reliability: Reliability::Reliable,
        multicast: false,
        max_sample_size: MAX_STREAM_SAMPLE,
        zero_copy: false,
        batching: true,
        multiple_subscribers: true,
        transports: transport,
        data_types: &[DataType::Bytes],
        in_process: false,
        remote,
        receive: &[pubsubperf_core::ReceiveMode::Thread],
    }
}

/// The `tcp` binding.
pub struct Tcp {
    cfg: EndpointConfig,
}

/// The `uds` binding (Unix domain stream sockets).
pub struct Uds {
    cfg: EndpointConfig,
}

/// `--opt nodelay=on|off` (default on): whether the tcp writer sets
/// `TCP_NODELAY`.
fn nodelay(cfg: &EndpointConfig) -> Result<bool, BindingError> {
    match cfg.options.get("nodelay").map(String::as_str) {
        None | Some("on") => Ok(true),
        Some("off") => Ok(false),
        Some(v) => Err(BindingError::Unsupported(format!(
            "--opt nodelay={v}: expected on or off"
        ))),
    }
}

fn io(ctx: &str) -> impl FnOnce(std::io::Error) -> BindingError + '_ {
    move |e| BindingError::io(ctx, e)
}

impl Binding for Tcp {
    type Writer = StreamWriter<TcpStream>;
    type Reader = StreamReader<TcpStream>;

    fn info() -> BindingInfo {
        BindingInfo {
            name: "tcp",
            description: "raw TCP, length-prefixed frames, TCP_NODELAY (baseline)",
            version: kernel_release(),
            capabilities: caps(&["tcp"], true),
            available: Ok(()),
        }
    }

    fn validate(cfg: &EndpointConfig) -> Result<(), BindingError> {
        crate::refuse_options("tcp", cfg, &["nodelay"])?;
        nodelay(cfg)?;
        crate::refuse_queues(
            "tcp",
            cfg,
            true,
            "the socket buffers hold them: --socket-buffer",
        )
    }

    fn open(cfg: &EndpointConfig) -> Result<Self, BindingError> {
        Self::validate(cfg)?;
        Ok(Tcp { cfg: cfg.clone() })
    }

    fn create_reader(
        &mut self,
        _topic: &TopicSpec,
    ) -> Result<(Self::Reader, Locator), BindingError> {
        let mut ip: IpAddr = self.cfg.bind_ip.parse().map_err(|_| {
            BindingError::Unsupported(format!(
                "bind address '{}' is not an IP address",
                self.cfg.bind_ip
            ))
        })?;
        if self.cfg.ipv6 && ip.is_ipv4() {
            ip = if ip.is_loopback() {
                Ipv6Addr::LOCALHOST.into()
            } else {
                Ipv6Addr::UNSPECIFIED.into()
            };
        }
        let l = TcpListener::bind(SocketAddr::new(ip, 0)).map_err(io("tcp listen"))?;
        l.set_nonblocking(true).map_err(io("tcp listener mode"))?;
        let locator = l.local_addr().map_err(io("tcp local address"))?.to_string();
        Ok((StreamReader::new(Accept::Pending(l), &self.cfg), locator))
    }

    fn create_writer(
        &mut self,
        _topic: &TopicSpec,
        readers: &[Locator],
    ) -> Result<Self::Writer, BindingError> {
        let mut conns = Vec::new();
        for l in readers {
            let addr: SocketAddr = l
                .parse()
                .map_err(|_| BindingError::Middleware(format!("bad tcp locator '{l}'")))?;
            let s = TcpStream::connect_timeout(&addr, Duration::from_secs(5)).map_err(|e| {
                if e.kind() == std::io::ErrorKind::TimedOut {
                    // A SYN a local firewall drops is retried, not refused:
                    // the kernel reports nothing but the silence.
                    BindingError::Middleware(format!(
                        "tcp connect to the reader at {addr}: no answer within 5 s; check that no firewall rule drops the packets (`nft list ruleset` on both hosts) and that the address is reachable"
                    ))
                } else {
                    BindingError::io("tcp connect", e)
                }
            })?;
            s.set_nodelay(nodelay(&self.cfg)?)
                .map_err(io("TCP_NODELAY"))?;
            if self.cfg.socket_buffer > 0 {
                let sock = socket2::SockRef::from(&s);
                let _ = sock.set_send_buffer_size(self.cfg.socket_buffer);
            }
            conns.push(s);
        }
        StreamWriter::new(conns, &self.cfg)
    }
}

impl Binding for Uds {
    type Writer = StreamWriter<UnixStream>;
    type Reader = StreamReader<UnixStream>;

    fn info() -> BindingInfo {
        BindingInfo {
            name: "uds",
            description: "Unix domain stream sockets, length-prefixed frames (baseline, one host)",
            version: kernel_release(),
            capabilities: caps(&["uds"], false),
            available: Ok(()),
        }
    }

    fn validate(cfg: &EndpointConfig) -> Result<(), BindingError> {
        if cfg.ipv6 {
            return Err(BindingError::Unsupported(
                "--ipv6 does not apply to uds (local sockets)".into(),
            ));
        }
        crate::refuse_options("uds", cfg, &[])?;
        crate::refuse_queues(
            "uds",
            cfg,
            true,
            "the socket buffers hold them: --socket-buffer",
        )
    }

    fn open(cfg: &EndpointConfig) -> Result<Self, BindingError> {
        Self::validate(cfg)?;
        Ok(Uds { cfg: cfg.clone() })
    }

    fn create_reader(
        &mut self,
        topic: &TopicSpec,
    ) -> Result<(Self::Reader, Locator), BindingError> {
        let name = format!(
            "pubsubperf/{}/{}/{}",
            self.cfg.run_id, topic.name, topic.index
        );
        let addr = UnixAddr::from_abstract_name(name.as_bytes()).map_err(io("uds name"))?;
        let l = UnixListener::bind_addr(&addr).map_err(io("uds listen"))?;
        l.set_nonblocking(true).map_err(io("uds listener mode"))?;
        Ok((
            StreamReader::new(Accept::Pending(l), &self.cfg),
            format!("@{name}"),
        ))
    }

    fn create_writer(
        &mut self,
        _topic: &TopicSpec,
        readers: &[Locator],
    ) -> Result<Self::Writer, BindingError> {
        let mut conns = Vec::new();
        for l in readers {
            let name = l
                .strip_prefix('@')
                .ok_or_else(|| BindingError::Middleware(format!("bad uds locator '{l}'")))?;
            let addr = UnixAddr::from_abstract_name(name.as_bytes()).map_err(io("uds name"))?;
            conns.push(UnixStream::connect_addr(&addr).map_err(io("uds connect"))?);
        }
        StreamWriter::new(conns, &self.cfg)
    }
}

/// A reader's connection: listening until its writer connects.
enum Accept<S: StreamSocket> {
    Pending(S::Listener),
    Connected(S),
}

/// Reader of the stream bindings.
pub struct StreamReader<S: StreamSocket> {
    conn: Accept<S>,
    buf: Vec<u8>,
    /// Bytes of `buf` holding data not yet delivered start here...
    start: usize,
    /// ...and end here.
    end: usize,
    wait: WaitMode,
    cancel: CancelToken,
}

impl<S: StreamSocket> StreamReader<S> {
    fn new(conn: Accept<S>, cfg: &EndpointConfig) -> Self {
        StreamReader {
            conn,
            // Room for the largest frame plus a read-ahead of 256 KiB.
            buf: vec![0; cfg.max_sample_size + FRAME + (256 << 10)],
            start: 0,
            end: 0,
            wait: cfg.wait,
            cancel: cfg.cancel.clone(),
        }
    }

    fn accept(&mut self, timeout: Duration) -> Result<bool, BindingError> {
        if let Accept::Pending(l) = &self.conn {
            let got = retry(timeout, &self.cancel, || {
                let r = S::try_accept(l).map_err(io("accept"))?;
                if r.is_none() {
                    std::thread::sleep(Duration::from_millis(1));
                }
                Ok(r)
            })?;
            let Some(s) = got else { return Ok(false) };
            match self.wait {
                WaitMode::Busy => s.set_nonblocking(true),
                WaitMode::Block => s
                    .set_nonblocking(false)
                    .and_then(|_| s.set_read_timeout(Some(POLL))),
            }
            .map_err(io("reader mode"))?;
            self.conn = Accept::Connected(s);
        }
        Ok(true)
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
    fn recv<F: FnMut(&[u8])>(
        &mut self,
        timeout: Duration,
        on_sample: &mut F,
    ) -> Result<usize, BindingError> {
        let deadline = Instant::now() + timeout;
        if !self.accept(timeout)? {
            return Ok(0);
        }
        loop {
            // Deliver every complete buffered frame.
            let mut count = 0;
            while let Some((at, len)) = self.frame()? {
                on_sample(&self.buf[at..at + len]);
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
            let Accept::Connected(s) = &mut self.conn else {
                unreachable!("accepted above")
            };
            let left = deadline.saturating_duration_since(Instant::now());
            let end = self.end;
            let buf = &mut self.buf[end..];
            let n = retry(left, &self.cancel, || match s.read(buf) {
                Ok(0) => Err(BindingError::Disconnected),
                Ok(n) => Ok(Some(n)),
                Err(e) if is_wait(&e) => Ok(None),
                Err(e) if e.kind() == ErrorKind::ConnectionReset => Err(BindingError::Disconnected),
                Err(e) => Err(BindingError::io("stream read", e)),
            })?;
            match n {
                Some(n) => self.end += n,
                None => return Ok(0),
            }
        }
    }
}

/// Writer of the stream bindings; fans out to every connected reader.
pub struct StreamWriter<S: StreamSocket> {
    conns: Vec<S>,
    buf: Vec<u8>,
    max: usize,
    pending: usize,
    batch: usize,
    block_timeout: Duration,
    cancel: CancelToken,
}

impl<S: StreamSocket> StreamWriter<S> {
    fn new(conns: Vec<S>, cfg: &EndpointConfig) -> Result<Self, BindingError> {
        for c in &conns {
            c.set_write_timeout(Some(POLL)).map_err(io("writer mode"))?;
        }
        Ok(StreamWriter {
            conns,
            buf: vec![0; (cfg.max_sample_size + FRAME).max(cfg.batch_bytes)],
            max: cfg.max_sample_size,
            pending: 0,
            batch: cfg.batch_bytes,
            block_timeout: Duration::from_millis(cfg.reliable_block_timeout_ms),
            cancel: cfg.cancel.clone(),
        })
    }

    fn write_pending(&mut self) -> Result<(), BindingError> {
        let n = std::mem::take(&mut self.pending);
        for c in &mut self.conns {
            let mut data = &self.buf[..n];
            let start = Instant::now();
            while !data.is_empty() {
                match c.write(data) {
                    Ok(0) => return Err(BindingError::Disconnected),
                    Ok(k) => data = &data[k..],
                    Err(e) if is_wait(&e) => {
                        if self.cancel.is_cancelled() {
                            return Err(BindingError::Cancelled);
                        }
                        if start.elapsed() > self.block_timeout {
                            return Err(BindingError::WriteTimeout(self.block_timeout));
                        }
                    }
                    Err(e)
                        if matches!(
                            e.kind(),
                            ErrorKind::BrokenPipe | ErrorKind::ConnectionReset
                        ) =>
                    {
                        return Err(BindingError::Disconnected);
                    }
                    Err(e) => return Err(BindingError::io("stream write", e)),
                }
            }
        }
        Ok(())
    }
}

impl<S: StreamSocket> Writer for StreamWriter<S> {
    fn wait_matched(&mut self, readers: usize, timeout: Duration) -> Result<(), BindingError> {
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

    fn flush(&mut self) -> Result<(), BindingError> {
        if self.pending > 0 {
            self.write_pending()?;
        }
        Ok(())
    }
}
