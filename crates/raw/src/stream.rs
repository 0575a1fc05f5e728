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
//! A latency run's echoes come back on the connection their samples came
//! on (see [`links`]), as in sockperf's ping-pong. In a run with a key a
//! reader serves only the connection that proves it ([`key_proof`]).
//!
//! `uds` uses Linux abstract socket names (`@pubsubperf/<run>/<topic>/<n>`),
//! which vanish with the socket: nothing is left in the file system.

mod key_proof;
mod links;
mod reader;
mod writer;

use crate::wait::is_wait;
pub use key_proof::{PROOF_TIME, WAITING_MAX};
use links::Links;
use pubsubperf_core::binding::BindingInfo;
use pubsubperf_core::environment::kernel_release;
use pubsubperf_core::{
    Binding, BindingError, Capabilities, DataType, EndpointConfig, Locator, Reliability, TopicSpec,
};
pub use reader::StreamReader;
use std::io::{Read, Write};
use std::net::{IpAddr, Ipv6Addr, Shutdown, SocketAddr, TcpListener, TcpStream};
use std::os::fd::AsRawFd;
use std::os::linux::net::SocketAddrExt;
use std::os::unix::net::{SocketAddr as UnixAddr, UnixListener, UnixStream};
use std::sync::Arc;
use std::time::Duration;
pub use writer::StreamWriter;

/// Largest sample on a stream binding: 1 GiB (the frame prefix could carry 4 GiB).
pub const MAX_STREAM_SAMPLE: usize = 1 << 30;
const FRAME: usize = 4;

/// What the stream bindings need from a socket type.
pub trait StreamSocket: Read + Write + AsRawFd + Send + Sized + 'static {
    /// Listener type.
    type Listener: Send + 'static;
    /// Accepts one connection if one is pending (the listener is non-blocking).
    fn try_accept(l: &Self::Listener) -> std::io::Result<Option<Self>>;
    /// Sets the read timeout.
    fn set_read_timeout(&self, t: Option<Duration>) -> std::io::Result<()>;
    /// Sets the write timeout.
    fn set_write_timeout(&self, t: Option<Duration>) -> std::io::Result<()>;
    /// A second handle on the same connection.
    fn second(&self) -> std::io::Result<Self>;
    /// Ends this side's writing (the peer reads the end), whatever other
    /// handles on the connection still read.
    fn shutdown_write(&self);
    /// Connects to the reader at `locator`, set up as [`Self::writer_options`].
    fn connect(locator: &str, cfg: &EndpointConfig) -> Result<Self, BindingError>;
    /// Sets what a writer's connection needs (tcp: `TCP_NODELAY`, the
    /// send buffer).
    fn writer_options(&self, cfg: &EndpointConfig) -> Result<(), BindingError>;
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
    fn set_read_timeout(&self, t: Option<Duration>) -> std::io::Result<()> {
        TcpStream::set_read_timeout(self, t)
    }
    fn set_write_timeout(&self, t: Option<Duration>) -> std::io::Result<()> {
        TcpStream::set_write_timeout(self, t)
    }
    fn second(&self) -> std::io::Result<Self> {
        self.try_clone()
    }
    fn shutdown_write(&self) {
        let _ = self.shutdown(Shutdown::Write);
    }
    fn connect(locator: &str, cfg: &EndpointConfig) -> Result<Self, BindingError> {
        let addr: SocketAddr = locator
            .parse()
            .map_err(|_| BindingError::Middleware(format!("bad tcp locator '{locator}'")))?;
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
        s.writer_options(cfg)?;
        Ok(s)
    }
    fn writer_options(&self, cfg: &EndpointConfig) -> Result<(), BindingError> {
        self.set_nodelay(nodelay(cfg)?).map_err(io("TCP_NODELAY"))?;
        if cfg.socket_buffer > 0 {
            let _ = socket2::SockRef::from(self).set_send_buffer_size(cfg.socket_buffer);
        }
        Ok(())
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
    fn set_read_timeout(&self, t: Option<Duration>) -> std::io::Result<()> {
        UnixStream::set_read_timeout(self, t)
    }
    fn set_write_timeout(&self, t: Option<Duration>) -> std::io::Result<()> {
        UnixStream::set_write_timeout(self, t)
    }
    fn second(&self) -> std::io::Result<Self> {
        self.try_clone()
    }
    fn shutdown_write(&self) {
        let _ = self.shutdown(Shutdown::Write);
    }
    fn connect(locator: &str, _cfg: &EndpointConfig) -> Result<Self, BindingError> {
        let name = locator
            .strip_prefix('@')
            .ok_or_else(|| BindingError::Middleware(format!("bad uds locator '{locator}'")))?;
        let addr = UnixAddr::from_abstract_name(name.as_bytes()).map_err(io("uds name"))?;
        UnixStream::connect_addr(&addr).map_err(io("uds connect"))
    }
    fn writer_options(&self, _cfg: &EndpointConfig) -> Result<(), BindingError> {
        Ok(())
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
    links: Arc<Links<TcpStream>>,
}

/// The `uds` binding (Unix domain stream sockets).
pub struct Uds {
    cfg: EndpointConfig,
    links: Arc<Links<UnixStream>>,
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
        Ok(Tcp {
            cfg: cfg.clone(),
            links: Arc::new(Links::new()),
        })
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
        let reader = StreamReader::new(l, &locator, &self.links, &self.cfg);
        Ok((reader, locator))
    }

    fn create_writer(
        &mut self,
        topic: &TopicSpec,
        readers: &[Locator],
    ) -> Result<Self::Writer, BindingError> {
        StreamWriter::open(topic, readers, &self.links, &self.cfg)
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
        Ok(Uds {
            cfg: cfg.clone(),
            links: Arc::new(Links::new()),
        })
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
        let locator = format!("@{name}");
        let reader = StreamReader::new(l, &locator, &self.links, &self.cfg);
        Ok((reader, locator))
    }

    fn create_writer(
        &mut self,
        topic: &TopicSpec,
        readers: &[Locator],
    ) -> Result<Self::Writer, BindingError> {
        StreamWriter::open(topic, readers, &self.links, &self.cfg)
    }
}

#[cfg(test)]
mod tests;
