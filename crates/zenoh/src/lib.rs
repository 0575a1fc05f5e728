//! `zenoh`: the Zenoh binding, over the `zenoh` crate (1.10, sync API).
//!
//! ## Sessions and links
//! Zenoh runs peer to peer here (`mode: peer`), with multicast scouting and
//! gossip off, so that no packet leaves the host for discovery and each
//! session only talks to the sessions this run names:
//!
//! - the first [`Binding::create_reader`] of a side opens a *listening*
//!   session on `<transport>/<bind_ip>:0` (an ephemeral port); the locator
//!   handed to the other side is the address zenoh actually bound;
//! - each [`Binding::create_writer`] opens its own session that *connects* to
//!   the readers' locators. Writers own their links because the harness opens
//!   a side before it knows the other side's locators, and zenoh has no public
//!   API to connect an already open session to a new endpoint. So the data
//!   topic flows over the link the publisher opened to the subscriber, and
//!   the echo topic over the link the subscriber opened to the publisher.
//!
//! Key expressions are `pubsubperf/<run id>/<topic>`, unique per run.
//! Matching uses liveliness tokens: each reader declares
//! `pubsubperf/<run>/<topic>/r/<index>` after its subscriber, each writer
//! `.../w/<n>`; `wait_matched` counts the tokens it sees through its links.
//!
//! ## Quality of service
//! Reliable maps to `CongestionControl::Block` (a full transmit queue blocks
//! `put`) and a FIFO channel on the reader (a full channel holds the zenoh
//! receive task, so back-pressure reaches the writer); best effort maps to
//! `CongestionControl::Drop` and a ring channel that drops the oldest sample.
//! zenoh's udp links do not retransmit, so `--transport udp` is best effort
//! only. As zenoh's own tools run: a throughput test's data is batched
//! (`z_pub_thr`), pings and echoes go out in express mode (`z_ping`,
//! `z_pong`); `--opt express=true|false` sets it for every writer.
//! `--opt priority=NAME` sets the publisher's priority.
//!
//! ## Shared memory
//! The crate is built with zenoh's `shared-memory` feature, which turns on
//! SHM (and the implicit copy of payloads of at least 3 KiB into a zenoh-owned
//! SHM pool) by default once compiled in. The tcp and udp transports switch it
//! off (`transport/shared_memory/enabled=false`), so they measure the network
//! path. `--transport shm` keeps a tcp link for control and sends every
//! payload in a buffer of a writer-owned SHM provider (POSIX shared memory):
//! filled in place with `--zero-copy`, copied into it otherwise. Segments are
//! removed when the writer ends (`cleanup_orphaned_shm_segments`).
//!
//! ## Threads and pinning
//! zenoh runs its own global tokio runtimes (created once per process, on
//! first use, kept until the process exits). Their threads inherit the CPU
//! affinity of the thread that creates them, and the harness pins its
//! measuring thread before [`Binding::open`]; so sessions are opened and
//! entities declared from a short-lived helper thread whose affinity is reset
//! to every CPU. The measuring thread stays pinned; zenoh's threads float.

mod closing;
mod options;

use closing::Held;
use options::Options;
use pubsubperf_core::binding::BindingInfo;
use pubsubperf_core::result::TestKind;
use pubsubperf_core::{
    Binding, BindingError, Capabilities, DataType, EndpointConfig, Locator, Reliability, TopicSpec,
    WaitMode,
};
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};
use std::sync::Arc;
use std::time::{Duration, Instant};
use zenoh::handlers::{FifoChannel, RingChannel};
use zenoh::qos::{CongestionControl, Reliability as ZReliability};
use zenoh::shm::ShmClientStorage;
use zenoh::{Config, Session, Wait};

mod payloads;
mod reader;
mod writer;

use payloads::Payloads;
use pubsubperf_core::ReceiveMode;
use pubsubperf_core::handoff::Handoff;
pub use reader::ZenohReader;
use reader::{Channel, Hold, Listening, Queue};
use std::sync::atomic::AtomicUsize;
pub use writer::ZenohWriter;
use zenoh::handlers::{Callback, IntoHandler};
use zenoh::sample::Sample;

/// Largest sample over tcp and shm that the binding accepts. 64 MiB was
/// checked end to end (see the README, section "zenoh"); zenoh's own default limit is the
/// 1 GiB defragmentation buffer.
pub const MAX_TCP: usize = 64 << 20;
/// Largest sample over udp: zenoh fragments bigger messages into many
/// datagrams without retransmission, and one lost fragment loses the sample
/// (1 MiB samples stalled in our runs); 64 KiB is what we checked.
pub const MAX_UDP: usize = 64 << 10;

/// The version of the zenoh crate this binding is built with.
pub const ZENOH_VERSION: &str = "1.10.2";

pub(crate) fn caps() -> Capabilities {
    Capabilities {
        reliable: true,
        best_effort: true,
        default_reliability: Reliability::Reliable,
        multicast: false,
        max_sample_size: MAX_TCP,
        zero_copy: true,
        batching: false,
        multiple_subscribers: true,
        transports: &["tcp", "udp", "shm"],
        data_types: &[DataType::Bytes],
        in_process: false,
        remote: true,
        receive: &[ReceiveMode::Listener, ReceiveMode::Thread],
    }
}

/// The `zenoh` binding: one side of a run.
pub struct Zenoh {
    pub(crate) cfg: EndpointConfig,
    pub(crate) opts: Options,
    /// The listening session, opened by the first reader.
    pub(crate) listener: Option<Held>,
    /// Locator of the listening session.
    pub(crate) locator: String,
    pub(crate) writers: usize,
}

pub(crate) fn mw(what: &str) -> impl FnOnce(zenoh::Error) -> BindingError + '_ {
    move |e| BindingError::Middleware(format!("zenoh {what}: {e}"))
}

/// Runs `f` on a helper thread whose CPU affinity is every CPU of the
/// machine, so zenoh threads created meanwhile are not tied to the caller's
/// pinned core.
pub(crate) fn unpinned<T: Send>(f: impl FnOnce() -> T + Send) -> T {
    std::thread::scope(|s| {
        s.spawn(|| {
            unpin_current_thread();
            f()
        })
        .join()
        .unwrap_or_else(|p| std::panic::resume_unwind(p))
    })
}

pub(crate) fn unpin_current_thread() {
    // SAFETY: cpu_set_t is plain data; CPU_SET writes within it for indices
    // below CPU_SETSIZE; sched_setaffinity(0, ..) acts on this thread. The
    // kernel intersects the mask with the allowed CPUs (cgroup cpuset).
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        let n =
            libc::sysconf(libc::_SC_NPROCESSORS_CONF).clamp(1, libc::CPU_SETSIZE as libc::c_long);
        for cpu in 0..n as usize {
            libc::CPU_SET(cpu, &mut set);
        }
        libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set);
    }
}

/// A subscriber's queue of `cap` items of `T` and the callback that fills
/// it: a ring for best effort (a full one drops the oldest), else a FIFO
/// (a full one holds zenoh's receive task).
fn channel<T: Send + 'static>(cap: usize, best_effort: bool) -> (Callback<T>, Channel<T>) {
    if best_effort {
        let (cb, q) = RingChannel::new(cap).into_handler();
        (cb, Channel::Ring(q))
    } else {
        let (cb, q) = FifoChannel::new(cap).into_handler();
        (cb, Channel::Fifo(q))
    }
}

/// The address to listen on: the control channel's local address, mapped to
/// the right family for `--ipv6`.
pub(crate) fn listen_ip(cfg: &EndpointConfig) -> Result<IpAddr, BindingError> {
    let ip: IpAddr = cfg.bind_ip.parse().map_err(|_| {
        BindingError::Unsupported(format!(
            "bind address '{}' is not an IP address",
            cfg.bind_ip
        ))
    })?;
    Ok(match (cfg.ipv6, ip) {
        (true, IpAddr::V4(v4)) if v4.is_loopback() => IpAddr::V6(Ipv6Addr::LOCALHOST),
        (true, IpAddr::V4(_)) => IpAddr::V6(Ipv6Addr::UNSPECIFIED),
        (false, IpAddr::V6(v6)) if v6.is_loopback() => IpAddr::V4(Ipv4Addr::LOCALHOST),
        (_, ip) => ip,
    })
}

/// zenoh's link protocol for a transport (shm runs its control over tcp).
pub(crate) fn link_protocol(transport: &str) -> &'static str {
    match transport {
        "udp" => "udp",
        _ => "tcp",
    }
}

/// A reader's locator, as this binding's readers give it (`tcp/IP:PORT`,
/// `udp/IP:PORT` for the run's transport): it arrives over the control
/// channel, and zenoh would connect to any endpoint it names (a Unix
/// socket, another protocol).
pub(crate) fn check_locator(cfg: &EndpointConfig, l: &str) -> Result<(), BindingError> {
    let proto = link_protocol(&cfg.transport);
    match l.split_once('/') {
        Some((p, addr)) if p == proto && addr.parse::<std::net::SocketAddr>().is_ok() => Ok(()),
        _ => Err(BindingError::Unsupported(format!(
            "zenoh locator {}: expected {proto}/IP:PORT, as a zenoh reader of this run gives",
            l.escape_debug()
        ))),
    }
}

/// A key expression chunk from a run id or topic: only characters that are
/// plain in key expressions.
pub(crate) fn chunk(s: &str) -> String {
    s.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' || c == '.' {
                c
            } else {
                '_'
            }
        })
        .collect()
}

pub(crate) fn key(cfg: &EndpointConfig, topic: &str) -> String {
    format!("pubsubperf/{}/{}", chunk(&cfg.run_id), chunk(topic))
}

pub(crate) fn json_str(s: &str) -> String {
    format!("\"{}\"", s.replace('\\', "\\\\").replace('"', "\\\""))
}

/// The session configuration of this binding: peer mode, no scouting, SHM
/// only for the shm transport, endpoints as given.
/// How long a `put` blocked by a full queue waits before zenoh closes the
/// transport: `--max-blocking-time`.
const WAIT_BEFORE_CLOSE: &str =
    "transport/link/tx/queue/congestion_control/block/wait_before_close";

pub(crate) fn session_config(
    cfg: &EndpointConfig,
    listen: &[String],
    connect: &[String],
) -> Result<Config, BindingError> {
    let mut c = Config::default();
    let mut set = |k: &str, v: String| {
        c.insert_json5(k, &v)
            .map_err(|e| BindingError::Middleware(format!("zenoh config {k}={v}: {e}")))
    };
    let list = |v: &[String]| {
        format!(
            "[{}]",
            v.iter().map(|s| json_str(s)).collect::<Vec<_>>().join(",")
        )
    };
    set("mode", "\"peer\"".into())?;
    set("scouting/multicast/enabled", "false".into())?;
    set("scouting/gossip/enabled", "false".into())?;
    set("listen/endpoints", list(listen))?;
    set("connect/endpoints", list(connect))?;
    // `open` returns once its connect endpoints are connected, without
    // waiting (up to `scouting/delay`, 500 ms) for the peers' declarations:
    // zenoh 1.10's peer start waits on a notification that may already have
    // fired, and then waits the whole delay (about one session in three
    // here: a 500 ms discovery). The binding waits for the peers' tokens
    // itself (`wait_tokens`); set-up only, nothing on the measured path.
    set("open/return_conditions/connect_scouted", "false".into())?;
    let shm = cfg.transport == "shm";
    set("transport/shared_memory/enabled", shm.to_string())?;
    if shm {
        // Payloads are put in the writer's own provider; no implicit pool.
        set(
            "transport/shared_memory/transport_optimization/enabled",
            "false".into(),
        )?;
    }
    if cfg.socket_buffer > 0 {
        let b = cfg.socket_buffer.min(u32::MAX as usize);
        set("transport/link/tcp/so_sndbuf", b.to_string())?;
        set("transport/link/tcp/so_rcvbuf", b.to_string())?;
    }
    // A reliable writer blocked by a full queue gives up (zenoh closes the
    // link) after `--max-blocking-time`, zenoh's own default when not given.
    let block_us = cfg.reliable_block_timeout_ms.saturating_mul(1000);
    set(WAIT_BEFORE_CLOSE, block_us.min(i64::MAX as u64).to_string())?;
    Ok(c)
}

pub(crate) fn open_session(
    cfg: &EndpointConfig,
    listen: &[String],
    connect: &[String],
) -> Result<Session, BindingError> {
    let c = session_config(cfg, listen, connect)?;
    if cfg.transport == "shm" {
        // zenoh maps every SHM segment a session receives from into a
        // client storage and never unmaps it; the default storage is global
        // to the process, so each run's segments (a new provider per writer)
        // would stay mapped until exit. A storage per session goes with it.
        let clients = Arc::new(
            ShmClientStorage::builder()
                .with_default_client_set()
                .build(),
        );
        return unpinned(|| zenoh::open(c).with_shm_clients(clients).wait())
            .map_err(mw("open session"));
    }
    unpinned(|| zenoh::open(c).wait()).map_err(mw("open session"))
}

impl Binding for Zenoh {
    type Writer = ZenohWriter;
    type Reader = ZenohReader;

    fn info() -> BindingInfo {
        BindingInfo {
            name: "zenoh",
            description: "Zenoh peer to peer (tcp, udp) and zenoh shared memory (shm, zero copy)",
            version: format!("zenoh {ZENOH_VERSION}"),
            capabilities: caps(),
            available: Ok(()),
        }
    }

    /// zenoh's own `wait_before_close`, read from its default configuration
    /// (5 s in zenoh 1.10), as `z_pub_thr` runs with it.
    fn default_block_timeout() -> Duration {
        Config::default()
            .get_json(WAIT_BEFORE_CLOSE)
            .ok()
            .and_then(|us| us.trim().parse::<u64>().ok())
            .map_or(
                pubsubperf_core::binding::DEFAULT_BLOCK_TIMEOUT,
                Duration::from_micros,
            )
    }

    fn deviations(test: TestKind, cfg: &EndpointConfig) -> Vec<String> {
        let block = Self::default_block_timeout().as_millis() as u64;
        Options::parse(cfg).map_or_else(|_| Vec::new(), |o| o.deviations(test, cfg, block))
    }

    fn validate(cfg: &EndpointConfig) -> Result<(), BindingError> {
        Options::parse(cfg)?;
        let t = cfg.transport.as_str();
        if !caps().transports.contains(&t) {
            return Err(BindingError::Unsupported(format!(
                "--transport {t}: zenoh offers tcp, udp, shm"
            )));
        }
        if t == "udp" && cfg.reliability == Reliability::Reliable {
            return Err(BindingError::Unsupported(
                "--transport udp: zenoh's udp links do not retransmit, so they are best effort only; add --best-effort (or use --transport tcp)".into(),
            ));
        }
        if cfg.zero_copy && t != "shm" {
            return Err(BindingError::Unsupported(format!(
                "--zero-copy: zenoh has zero copy with --transport shm only, not {t}"
            )));
        }
        let limit = if t == "udp" { MAX_UDP } else { MAX_TCP };
        if cfg.max_sample_size > limit {
            return Err(BindingError::Unsupported(format!(
                "--size {}: zenoh over {t} carries at most {limit} bytes ({}){}",
                cfg.max_sample_size,
                pubsubperf_core::size::format_size(limit),
                if t == "udp" {
                    "; larger samples are fragmented into unacknowledged datagrams and one lost fragment stalls the run; use --transport tcp"
                } else {
                    ""
                }
            )));
        }
        if cfg.multicast {
            return Err(BindingError::Unsupported(
                "--multicast: zenoh runs peer to peer over unicast links here".into(),
            ));
        }
        if cfg.batch_bytes > 0 {
            return Err(BindingError::Unsupported(
                "--batch: zenoh batches by itself; use --opt express=false instead".into(),
            ));
        }
        if cfg.data_type != DataType::Bytes {
            return Err(BindingError::Unsupported(
                "--data-type flat: zenoh carries byte payloads only".into(),
            ));
        }
        if cfg.socket_buffer > 0 && t == "udp" {
            return Err(BindingError::Unsupported(
                "--socket-buffer: zenoh sets socket buffers of tcp links only".into(),
            ));
        }
        if cfg.send_queue > 0 {
            return Err(BindingError::Unsupported(
                "--send-queue: zenoh's transmit queues count batches, not samples; not mapped"
                    .into(),
            ));
        }
        Ok(())
    }

    fn multiple_publishers() -> bool {
        // A subscriber receives from every session connected to it.
        true
    }

    fn open(cfg: &EndpointConfig) -> Result<Self, BindingError> {
        Self::validate(cfg)?;
        let opts = Options::parse(cfg)?;
        if cfg.transport == "shm" {
            // Segments of crashed runs (their owners no longer hold the lock).
            zenoh::shm::cleanup_orphaned_shm_segments();
            static AT_EXIT: std::sync::Once = std::sync::Once::new();
            // SAFETY: registers a plain extern "C" function without captures.
            AT_EXIT.call_once(|| unsafe {
                libc::atexit(unlink_own_segments_at_exit);
            });
        }
        Ok(Zenoh {
            cfg: cfg.clone(),
            opts,
            listener: None,
            locator: String::new(),
            writers: 0,
        })
    }

    fn create_reader(&mut self, topic: &TopicSpec) -> Result<(ZenohReader, Locator), BindingError> {
        if self.listener.is_none() {
            let ip = listen_ip(&self.cfg)?;
            let host = match ip {
                IpAddr::V4(v4) => v4.to_string(),
                IpAddr::V6(v6) => format!("[{v6}]"),
            };
            let proto = link_protocol(&self.cfg.transport);
            let s = open_session(&self.cfg, &[format!("{proto}/{host}:0")], &[])?;
            let locs = s.info().locators().wait();
            let loc = locs
                .iter()
                .map(|l| l.to_string())
                .find(|l| l.starts_with(proto))
                .ok_or_else(|| {
                    BindingError::Middleware(format!(
                        "zenoh session listens on no {proto} locator ({locs:?})"
                    ))
                })?;
            self.locator = loc;
            self.listener = Some(Held::new(s));
        }
        let session = Session::clone(self.listener.as_ref().expect("listener opened above"));
        let k = key(&self.cfg, &topic.name);
        let token_key = format!("{k}/r/{}", topic.index);
        let cap = if self.cfg.receive_queue > 0 {
            self.cfg.receive_queue
        } else {
            256
        };
        let best_effort = self.cfg.reliability == Reliability::BestEffort;
        let (callback, queue, listening) = if self.cfg.receive == ReceiveMode::Listener {
            let l = Arc::new(Listening {
                handoff: Handoff::new(),
                held: AtomicUsize::new(0),
            });
            let (hold, queue) = if self.cfg.wait == WaitMode::Busy {
                let (cb, q) = channel::<Sample>(cap, best_effort);
                (Hold::Samples(cb), Queue::Samples(q))
            } else {
                let (cb, q) = channel::<Vec<u8>>(cap, best_effort);
                (Hold::Copies(cb), Queue::Copies(q))
            };
            let shared = Arc::clone(&l);
            let callback = Callback::from(move |s| shared.on_sample(s, &hold));
            (callback, queue, Some(l))
        } else {
            let (hold, samples) = channel::<Sample>(cap, best_effort);
            (hold, Queue::Samples(samples), None)
        };
        let (sub, token) = unpinned(|| -> zenoh::Result<_> {
            let sub = session
                .declare_subscriber(&k)
                .with((callback, queue))
                .wait()?;
            let token = session.liveliness().declare_token(&token_key).wait()?;
            Ok((sub, token))
        })
        .map_err(mw("declare subscriber"))?;
        let reader = ZenohReader {
            sub,
            listening,
            _token: token,
            writers_key: format!("{k}/w/*"),
            session: Held::new(session),
            wait: self.cfg.wait,
            cancel: self.cfg.cancel.clone(),
        };
        Ok((reader, self.locator.clone()))
    }

    fn create_writer(
        &mut self,
        topic: &TopicSpec,
        readers: &[Locator],
    ) -> Result<ZenohWriter, BindingError> {
        let mut connect: Vec<String> = Vec::new();
        for l in readers {
            check_locator(&self.cfg, l)?;
            if !connect.contains(l) {
                connect.push(l.clone());
            }
        }
        if connect.is_empty() {
            return Err(BindingError::Middleware(
                "zenoh writer without readers".into(),
            ));
        }
        let session = open_session(&self.cfg, &[], &connect)?;
        let k = key(&self.cfg, &topic.name);
        let token_key = format!("{k}/w/{}-{}", std::process::id(), self.writers);
        self.writers += 1;
        let (cc, rel) = match self.cfg.reliability {
            Reliability::Reliable => (CongestionControl::Block, ZReliability::Reliable),
            Reliability::BestEffort => (CongestionControl::Drop, ZReliability::BestEffort),
        };
        let express = self.opts.express_for(topic);
        let priority = self.opts.priority;
        let (publisher, token) = unpinned(|| -> zenoh::Result<_> {
            let p = session
                .declare_publisher(k.clone())
                .congestion_control(cc)
                .reliability(rel)
                .express(express)
                .priority(priority)
                .wait()?;
            let token = session.liveliness().declare_token(&token_key).wait()?;
            Ok((p, token))
        })
        .map_err(mw("declare publisher"))?;
        let provider = if self.cfg.transport == "shm" {
            let pool = (4 * self.cfg.max_sample_size).max(8 << 20);
            Some(
                unpinned(|| zenoh::shm::ShmProviderBuilder::default_backend(pool).wait())
                    .map_err(mw("shared-memory provider"))?,
            )
        } else {
            None
        };
        Ok(ZenohWriter {
            publisher: Some(publisher),
            _token: Some(token),
            session: Some(session),
            provider,
            readers_key: format!("{k}/r/*"),
            scratch: if self.cfg.transport == "shm" && !self.cfg.zero_copy {
                vec![0; self.cfg.max_sample_size.max(64)]
            } else {
                Vec::new()
            },
            payloads: Payloads::new(if self.cfg.transport == "shm" {
                0
            } else {
                self.cfg.max_sample_size.max(64)
            }),
            max: self.cfg.max_sample_size,
            zero_copy: self.cfg.zero_copy,
            reliable: self.cfg.reliability == Reliability::Reliable,
            block_timeout: Duration::from_millis(self.cfg.reliable_block_timeout_ms),
            cancel: self.cfg.cancel.clone(),
        })
    }
}

/// At exit, removes the `/dev/shm/*.zenoh` segments this process holds the
/// lock of. zenoh keeps some SHM segments (metadata, watchdog) in process-wide
/// statics that live until exit, and its own exit-time cleanup skips them
/// because this very process still holds their locks; so without this every
/// process that used `--transport shm` would leave two or three segments
/// behind (until the next shm run's cleanup). Peers that mapped them keep
/// their mappings; nobody opens them after this process is gone.
extern "C" fn unlink_own_segments_at_exit() {
    use std::os::unix::fs::MetadataExt;
    let pid = std::process::id().to_string();
    let Ok(locks) = std::fs::read_to_string("/proc/locks") else {
        return;
    };
    // "1: FLOCK  ADVISORY  WRITE 1234 00:19:5678 0 EOF" (blocked waiters
    // have "->" in the second field and are skipped).
    let inodes: Vec<u64> = locks
        .lines()
        .filter_map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            (f.len() >= 6 && matches!(f[1], "FLOCK" | "POSIX") && f[4] == pid)
                .then(|| f[5].rsplit(':').next()?.parse().ok())
                .flatten()
        })
        .collect();
    if inodes.is_empty() {
        return;
    }
    if let Ok(dir) = std::fs::read_dir("/dev/shm") {
        for e in dir.flatten() {
            let path = e.path();
            if path.extension().is_some_and(|x| x == "zenoh")
                && e.metadata().is_ok_and(|m| inodes.contains(&m.ino()))
            {
                let _ = std::fs::remove_file(&path);
            }
        }
    }
}

pub(crate) fn wait_tokens(
    session: &Session,
    key_expr: &str,
    n: usize,
    timeout: Duration,
    cancel: &pubsubperf_core::CancelToken,
    extra: impl Fn() -> bool,
) -> Result<(), BindingError> {
    // A liveliness subscriber with history: the tokens alive now, then
    // each one as it appears or goes, the moment zenoh learns of it (a
    // liveliness query per poll waited out its 500 ms whenever a token was
    // still missing, which put half a second into every run's set-up and
    // its discovery time).
    let tokens = session
        .liveliness()
        .declare_subscriber(key_expr)
        .history(true)
        .wait()
        .map_err(mw("liveliness subscriber"))?;
    let start = Instant::now();
    let mut alive: Vec<String> = Vec::new();
    let note = |alive: &mut Vec<String>, s: zenoh::sample::Sample| {
        let k = s.key_expr().to_string();
        match s.kind() {
            zenoh::sample::SampleKind::Put if !alive.contains(&k) => alive.push(k),
            zenoh::sample::SampleKind::Delete => alive.retain(|a| *a != k),
            _ => {}
        }
    };
    loop {
        while let Ok(Some(s)) = tokens.try_recv() {
            note(&mut alive, s);
        }
        if alive.len() >= n && extra() {
            return Ok(());
        }
        if cancel.is_cancelled() {
            return Err(BindingError::Cancelled);
        }
        if start.elapsed() >= timeout {
            return Err(BindingError::MatchTimeout(
                timeout,
                format!("zenoh saw {} of {n} peers on {key_expr}", alive.len()),
            ));
        }
        // Woken by the next token, else looks again (cancel, `extra`).
        if let Ok(Some(s)) = tokens.recv_timeout(Duration::from_millis(10)) {
            note(&mut alive, s);
        }
    }
}

#[cfg(test)]
mod tests;
