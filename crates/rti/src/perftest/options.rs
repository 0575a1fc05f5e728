//! RTI Perftest 4.x's command line: the one table of its options, each
//! mapped to a pubsubperf setting, accepted as a no-op (only where it is
//! meaningless here, with the reason) or refused with the reason. The
//! parser reads a Perftest command line through this table into an
//! [`Invocation`]; docs/perftest.md's option table is generated from it (a
//! test keeps them equal).

use crate::plan::{TestRequest, UsageError};
use pubsubperf_core::size::parse_size;

pub use super::table::{Arg, EXPLAIN_FLAG, How, OPTIONS, Opt, PROFILE_FLAG, markdown_table};

/// `-pub` or `-sub` (Perftest's default).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    Pub,
    Sub,
}

/// `-outputFormat`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum Format {
    Csv,
    Json,
    Legacy,
}

/// Perftest's `-latencyCount` in a throughput test when none is given.
pub const DEFAULT_LATENCY_COUNT: u64 = 10_000;

/// Perftest 2.x's `-scan` sizes, used when `-scan` has no list.
pub const SCAN_SIZES: &[usize] = &[
    32, 64, 128, 256, 512, 1024, 2048, 4096, 8192, 16384, 32768, 63000,
];

/// A Perftest command line, read: the test as a [`TestRequest`] plus what
/// only the front end uses (role, output, peers).
#[derive(Debug, Clone)]
pub struct Invocation {
    pub role: Role,
    pub latency_test: bool,
    pub request: TestRequest,
    /// `-middleware` as given (None: the default, or `udp`/`shm` for `-raw`).
    pub middleware: Option<String>,
    /// The middleware without `-middleware` ([`crate::rti_default`]), and
    /// why it is not Connext when it is not.
    pub default_middleware: crate::rti_default::RtiDefault,
    /// `-transport` as given (Perftest's name).
    pub transport: Option<String>,
    pub raw: bool,
    pub format: Format,
    /// Which Perftest build's number formats (`-latencyHighResolution`).
    pub clock: super::formats::Clock,
    /// `-pubsubperfVersion 4.0|4.1`: Perftest 4.0/4.1's behaviour where
    /// 4.2 changed it (`-scan`).
    pub before_4_2: bool,
    pub headers: bool,
    pub intervals: bool,
    pub cpu: bool,
    pub output_file: Option<std::path::PathBuf>,
    /// `-peer` addresses, as given.
    pub peers: Vec<String>,
    /// `-dataLen` (bytes).
    pub data_len: Option<usize>,
    /// `-scan` sizes.
    pub scan: Option<Vec<usize>>,
    pub latency_count: Option<u64>,
    /// `-sendBufferSize` / `-receiveBufferSize` (bytes).
    pub buffers: (Option<usize>, Option<usize>),
    /// Perftest flags applied, with the pubsubperf flag each set: an error
    /// of the plan naming our flag is reported under the Perftest one.
    pub applied: Vec<(&'static str, &'static str)>,
    /// `-help`: print the option table instead of running.
    pub help: bool,
}

impl Default for Invocation {
    fn default() -> Self {
        Invocation {
            role: Role::Sub,
            latency_test: false,
            request: TestRequest::default(),
            middleware: None,
            default_middleware: crate::rti_default::RtiDefault::of(crate::rti_default::FALLBACK),
            transport: None,
            raw: false,
            format: Format::Csv,
            clock: super::formats::Clock::Micro,
            before_4_2: false,
            headers: true,
            intervals: true,
            cpu: false,
            output_file: None,
            peers: Vec::new(),
            data_len: None,
            scan: None,
            latency_count: None,
            buffers: (None, None),
            applied: Vec::new(),
            help: false,
        }
    }
}

/// The option a word names: an exact name, else the one option it is a
/// prefix of, case-insensitively (as Perftest matches). A prefix of several
/// is refused, naming them.
pub fn lookup(word: &str) -> Result<&'static Opt, UsageError> {
    let w = word.to_ascii_lowercase();
    let w = w
        .strip_prefix('-')
        .map(|r| format!("-{}", r.trim_start_matches('-')))
        .unwrap_or(w);
    if let Some(o) = OPTIONS.iter().find(|o| o.name.eq_ignore_ascii_case(&w)) {
        return Ok(o);
    }
    let hits: Vec<&Opt> = OPTIONS
        .iter()
        .filter(|o| w.len() > 1 && o.name.to_ascii_lowercase().starts_with(&w))
        .collect();
    match hits.as_slice() {
        [o] => Ok(o),
        [] if crate::throughput_example::options::lookup(word).is_some() => {
            Err(UsageError(format!(
                "{word}: not an RTI Perftest option but a flag of RTI's Throughput example: run the line as 'pubsubperf throughput-example ...' (docs/throughput-example.md)"
            )))
        }
        [] => Err(UsageError(format!(
            "{word}: not an RTI Perftest option (docs/perftest.md lists them)"
        ))),
        many => Err(UsageError(format!(
            "{word}: ambiguous, could be {}; write more of it",
            many.iter().map(|o| o.name).collect::<Vec<_>>().join(", ")
        ))),
    }
}

/// Reads a Perftest command line (the words after `perftest`).
pub fn parse(args: &[String]) -> Result<Invocation, UsageError> {
    let mut inv = Invocation::default();
    let mut i = 0;
    while i < args.len() {
        let word = &args[i];
        if !word.starts_with('-') {
            return Err(UsageError(format!(
                "'{word}': expected an option (Perftest's start with '-')"
            )));
        }
        let opt = lookup(word)?;
        let next = args
            .get(i + 1)
            .filter(|n| !is_option(n))
            .map(String::as_str);
        let value = match opt.arg {
            Arg::None => None,
            Arg::Value(what) => {
                Some(next.ok_or_else(|| UsageError(format!("{}: needs a value {what}", opt.name)))?)
            }
            Arg::Optional(_) => next,
        };
        i += 1 + usize::from(value.is_some());
        match opt.how {
            How::Map { apply, .. } => apply(&mut inv, value)?,
            How::NoOp(_) => {}
            How::Refuse(why) => {
                return Err(UsageError(format!("{}: not supported: {why}", opt.name)));
            }
        }
    }
    Ok(inv)
}

/// A word that is an option, not a value (a negative number is a value).
fn is_option(w: &str) -> bool {
    w.starts_with('-') && !w[1..].starts_with(|c: char| c.is_ascii_digit())
}

/// Sets a pubsubperf setting for a Perftest flag, remembering which.
pub(super) fn set(
    inv: &mut Invocation,
    pf: &'static str,
    ours: &'static str,
    v: Option<&str>,
) -> Result<(), UsageError> {
    inv.request.set_for(pf, ours, v, &mut inv.applied)
}

fn number<T: std::str::FromStr>(pf: &str, v: Option<&str>) -> Result<T, UsageError> {
    let v = v.unwrap_or_default();
    v.parse()
        .map_err(|_| UsageError(format!("{pf} '{v}': not a valid number")))
}

pub(super) fn set_middleware(inv: &mut Invocation, v: Option<&str>) -> Result<(), UsageError> {
    inv.middleware = v.map(String::from);
    Ok(())
}

pub(super) fn set_data_len(inv: &mut Invocation, v: Option<&str>) -> Result<(), UsageError> {
    let s = v.unwrap_or_default();
    inv.data_len = Some(parse_size(s).map_err(|e| UsageError(format!("-dataLen: {e}")))?);
    Ok(())
}

pub(super) fn set_scan(inv: &mut Invocation, v: Option<&str>) -> Result<(), UsageError> {
    inv.scan = Some(match v {
        None => SCAN_SIZES.to_vec(),
        Some(list) => list
            .split(':')
            .map(|s| parse_size(s).map_err(|e| UsageError(format!("-scan '{list}': {e}"))))
            .collect::<Result<_, _>>()?,
    });
    Ok(())
}

pub(super) fn set_duration(inv: &mut Invocation, v: Option<&str>) -> Result<(), UsageError> {
    let secs: u64 = number("-executionTime", v)?;
    set(inv, "-executionTime", "duration", Some(&format!("{secs}s")))
}

pub(super) fn set_latency_count(inv: &mut Invocation, v: Option<&str>) -> Result<(), UsageError> {
    let n: u64 = number("-latencyCount", v)?;
    if n == 0 {
        return Err(UsageError("-latencyCount 0: must be at least 1".into()));
    }
    inv.latency_count = Some(n);
    Ok(())
}

pub(super) fn set_pub_rate(inv: &mut Invocation, v: Option<&str>) -> Result<(), UsageError> {
    let s = v.unwrap_or_default();
    let (rate, method) = s.split_once(':').unwrap_or((s, "spin"));
    if !method.eq_ignore_ascii_case("spin") {
        return Err(UsageError(format!(
            "-pubRate {s}: method '{method}' not supported: pubsubperf's pacing spins (use {rate}:spin)"
        )));
    }
    let n: u64 = number("-pubRate", Some(rate))?;
    set(inv, "-pubRate", "rate", Some(&n.to_string()))
}

pub(super) fn set_format(inv: &mut Invocation, v: Option<&str>) -> Result<(), UsageError> {
    inv.format = match v.unwrap_or_default().to_ascii_lowercase().as_str() {
        "csv" => Format::Csv,
        "json" => Format::Json,
        "legacy" => Format::Legacy,
        other => {
            return Err(UsageError(format!(
                "-outputFormat '{other}': expected csv, json or legacy"
            )));
        }
    };
    Ok(())
}

pub(super) fn set_version(inv: &mut Invocation, v: Option<&str>) -> Result<(), UsageError> {
    inv.before_4_2 = match v.unwrap_or_default() {
        "4.0" | "4.1" | "4.1.1" => true,
        "4.2" | "4.3" => false,
        other => {
            return Err(UsageError(format!(
                "-pubsubperfVersion '{other}': expected 4.0, 4.1, 4.2 or 4.3"
            )));
        }
    };
    Ok(())
}

pub(super) fn set_batch(inv: &mut Invocation, v: Option<&str>) -> Result<(), UsageError> {
    let n: i64 = number("-batchSize", v)?;
    match n {
        // No batching, also where Perftest's default would batch.
        0 => {
            inv.request.batch = Some("0".into());
            Ok(())
        }
        n if n < 0 => Err(UsageError(format!(
            "-batchSize {n}: must be 0 or more bytes"
        ))),
        n => set(inv, "-batchSize", "batch", Some(&n.to_string())),
    }
}

pub(super) fn set_buffer(
    inv: &mut Invocation,
    v: Option<&str>,
    which: usize,
) -> Result<(), UsageError> {
    let (pf, other) = if which == 0 {
        ("-sendBufferSize", inv.buffers.1)
    } else {
        ("-receiveBufferSize", inv.buffers.0)
    };
    let n: usize = number(pf, v)?;
    if other.is_some_and(|o| o != n) {
        return Err(UsageError(format!(
            "{pf} {n}: pubsubperf sets both socket buffers to one size; give -sendBufferSize and -receiveBufferSize the same value"
        )));
    }
    if which == 0 {
        inv.buffers.0 = Some(n);
    } else {
        inv.buffers.1 = Some(n);
    }
    set(inv, pf, "socket-buffer", Some(&n.to_string()))
}

pub(super) fn set_durability(inv: &mut Invocation, v: Option<&str>) -> Result<(), UsageError> {
    let kind = match v.unwrap_or_default() {
        "0" => "volatile",
        "1" => "transient-local",
        d @ ("2" | "3") => {
            return Err(UsageError(format!(
                "-durability {d}: not supported: transient and persistent durability need a persistence service; use 0 or 1"
            )));
        }
        d => {
            return Err(UsageError(format!(
                "-durability '{d}': expected 0, 1, 2 or 3"
            )));
        }
    };
    set(inv, "-durability", "durability", Some(kind))
}

/// Connext's built-in flow controllers: `default` (none) and two rates.
pub(super) fn set_flow_controller(inv: &mut Invocation, v: Option<&str>) -> Result<(), UsageError> {
    let bytes_per_s = match v.unwrap_or_default() {
        f if f.eq_ignore_ascii_case("default") => return Ok(()),
        f if f.eq_ignore_ascii_case("1Gbps") => "125000000",
        f if f.eq_ignore_ascii_case("10Gbps") => "1250000000",
        f => {
            return Err(UsageError(format!(
                "-flowController {f}: not supported: expected default, 1Gbps or 10Gbps"
            )));
        }
    };
    set(inv, "-flowController", "bandwidth-limit", Some(bytes_per_s))
}

/// `-sleep <millisec>`: `--sleep` in milliseconds (0: no sleep).
pub(super) fn set_sleep(inv: &mut Invocation, v: Option<&str>) -> Result<(), UsageError> {
    match number::<u64>("-sleep", v)? {
        0 => Ok(()),
        ms => set(inv, "-sleep", "sleep", Some(&format!("{ms}ms"))),
    }
}

pub(super) fn set_keyed(inv: &mut Invocation, _: Option<&str>) -> Result<(), UsageError> {
    if inv.request.instances.is_none() {
        set(inv, "-keyed", "instances", Some("1"))?;
    }
    Ok(())
}

pub(super) fn set_transport(inv: &mut Invocation, v: Option<&str>) -> Result<(), UsageError> {
    let t = v.unwrap_or_default();
    match t.to_ascii_uppercase().as_str() {
        "UDPV4" | "UDPV6" | "SHMEM" | "TCP" => {
            inv.transport = Some(t.to_string());
            Ok(())
        }
        "TLS" | "DTLS" | "WAN" | "UDPV4_WAN" => Err(UsageError(format!(
            "-transport {t}: not supported: secure and WAN transports are not measured"
        ))),
        _ => Err(UsageError(format!(
            "-transport '{t}': expected UDPv4, UDPv6, SHMEM or TCP"
        ))),
    }
}

pub(super) fn set_peer(inv: &mut Invocation, v: Option<&str>) -> Result<(), UsageError> {
    let p = v.unwrap_or_default();
    host_only(p, "a -sub listens on port")?;
    inv.peers.push(p.to_string());
    Ok(())
}

/// A `-peer` must be a host without a port: the port is the subscriber's
/// (`listens`, e.g. "a -sub listens on port", is followed by the port).
pub(crate) fn host_only(p: &str, listens: &str) -> Result<(), UsageError> {
    if p.parse::<std::net::SocketAddr>().is_ok()
        || p.rsplit_once(':')
            .is_some_and(|(h, _)| !h.contains(':') && !h.is_empty())
    {
        return Err(UsageError(format!(
            "-peer {p}: give the host only ({listens} {})",
            super::sub_port()
        )));
    }
    Ok(())
}

/// `host:port`, with an IPv6 address in brackets.
pub(crate) fn host_port(host: &str, port: u32) -> String {
    if host.contains(':') {
        format!("[{host}]:{port}")
    } else {
        format!("{host}:{port}")
    }
}

/// Perftest's batch for a throughput test without `-batchSize`
/// (DEFAULT_THROUGHPUT_BATCH_SIZE, 8 kB) and the largest sample it batches
/// ("Disabled for LatencyTest mode or if dataLen > 4kB").
pub const PERFTEST_BATCH: usize = 8192;
/// See [`PERFTEST_BATCH`].
pub const PERFTEST_BATCH_MAX_DATA: usize = 4096;

impl Invocation {
    /// `-batchSize` when not given, as Perftest's default build sets it:
    /// [`PERFTEST_BATCH`] for a throughput test whose samples are all at
    /// most [`PERFTEST_BATCH_MAX_DATA`], where the middleware batches (its
    /// binding batches a throughput test by default: cyclonedds over udp);
    /// none otherwise (a latency test, larger samples, a middleware or raw
    /// transport that does not batch), also where the binding's own default
    /// would.
    fn batch_as_perftest(
        &mut self,
        sizes: &[usize],
        caps: Option<&pubsubperf_core::binding::Capabilities>,
    ) {
        if self.request.batch.is_some() {
            return;
        }
        let mut cfg = pubsubperf_core::EndpointConfig::for_test("perftest");
        let peer = self
            .request
            .peer_binding
            .as_deref()
            .unwrap_or(&self.request.binding);
        cfg.transport = match (&self.request.transport, caps) {
            (Some(t), _) => t.clone(),
            (None, Some(_)) => pubsubperf_harness::registry::default_transport(
                &self.request.binding,
                peer,
                self.request.multicast,
            ),
            (None, None) => String::new(),
        };
        let middleware_batches = pubsubperf_harness::registry::default_batch(
            &self.request.binding,
            peer,
            pubsubperf_core::result::TestKind::Throughput,
            &cfg,
        ) > 0;
        let batches = !self.latency_test
            && middleware_batches
            && sizes.iter().all(|&s| s <= PERFTEST_BATCH_MAX_DATA);
        self.request.batch = Some(if batches { PERFTEST_BATCH } else { 0 }.to_string());
    }

    /// The finished request: middleware, transport, reliability and sizes
    /// settled once every flag is read (Perftest's flags come in any order).
    pub fn finish(&mut self) -> Result<(), UsageError> {
        let binding = self.binding()?;
        self.request.binding = binding.clone();
        if let Some(t) = &self.transport {
            let (name, ipv6) = match t.to_ascii_uppercase().as_str() {
                "UDPV4" => ("udp", false),
                "UDPV6" => ("udp", true),
                "SHMEM" => ("shm", false),
                _ => ("tcp", false),
            };
            // A raw binding is its transport already.
            if !self.raw {
                self.request.transport = Some(name.into());
                self.applied.push(("-transport", "transport"));
            }
            if ipv6 {
                self.request.ipv6 = true;
                self.applied.push(("-transport", "ipv6"));
            }
        }
        // Zero copy works on FlatData samples: Perftest turns it on too.
        if self.request.zero_copy == Some(true) && self.request.data_type.is_none() {
            self.request.data_type = Some(pubsubperf_core::DataType::Flat);
            self.applied.push(("-zeroCopy", "data-type"));
        }
        let caps = pubsubperf_harness::registry::info(&binding).map(|i| i.capabilities);
        // Perftest is reliable unless -bestEffort.
        if !self.request.best_effort && caps.as_ref().is_some_and(|c| c.reliable) {
            self.request.reliable = true;
        }
        if self.scan.is_some() && !self.before_4_2 {
            return Err(UsageError(
                "-scan: removed in Perftest 4.2; give one size per run (-dataLen N), or add -pubsubperfVersion 4.1 for Perftest 4.0/4.1's -scan".into(),
            ));
        }
        let sizes: Vec<usize> = match (&self.scan, self.data_len) {
            (Some(_), Some(_)) => {
                return Err(UsageError(
                    "-scan: not with -dataLen (-scan gives the sizes)".into(),
                ));
            }
            (Some(s), None) => s.clone(),
            (None, Some(n)) => vec![n],
            (None, None) => vec![100],
        };
        self.request.size = sizes
            .iter()
            .map(usize::to_string)
            .collect::<Vec<_>>()
            .join(",");
        self.applied.push(("-dataLen", "size"));
        self.batch_as_perftest(&sizes, caps.as_ref());
        match (self.latency_test, self.latency_count) {
            (true, Some(n)) if n != 1 => {
                return Err(UsageError(format!(
                    "-latencyCount {n}: a latency test pings with every sample (1); drop -latencyTest for latency under load"
                )));
            }
            (false, Some(n)) => self.set_latency_every(n)?,
            // Perftest's throughput test echoes one sample in 10000 by
            // default, and its publisher prints that latency; not across
            // several -peer hosts, whose echoes would each need the
            // publisher's address on its own link (one echo address is
            // offered to all: an agent refuses it where it is not the
            // address it sees the publisher at).
            (false, None) if self.peers.len() <= 1 => {
                self.set_latency_every(DEFAULT_LATENCY_COUNT)?
            }
            _ => {}
        }
        if !self.peers.is_empty() && self.role == Role::Pub {
            let port = super::sub_port();
            let connect = self
                .peers
                .iter()
                .map(|p| host_port(p, u32::from(port)))
                .collect::<Vec<_>>()
                .join(",");
            self.request.connect = Some(connect);
            self.applied.push(("-peer", "connect"));
        }
        self.request.quiet = !self.intervals;
        Ok(())
    }

    fn set_latency_every(&mut self, n: u64) -> Result<(), UsageError> {
        self.request.latency_every = Some(n);
        self.applied.push(("-latencyCount", "latency-every"));
        Ok(())
    }

    /// The binding measured: `-middleware`, else udp or shm for `-raw`,
    /// else the default.
    fn binding(&self) -> Result<String, UsageError> {
        // What Perftest's -rawTransport maps to (this front end's data).
        const RAW: [&str; 4] = ["udp", "tcp", "uds", "shm"];
        let shm = self
            .transport
            .as_deref()
            .is_some_and(|t| t.eq_ignore_ascii_case("SHMEM"));
        match (&self.middleware, self.raw) {
            (Some(m), true) if !RAW.contains(&m.as_str()) => Err(UsageError(format!(
                "-rawTransport: not with -middleware {m} (raw transports are udp, tcp, uds and shm)"
            ))),
            (Some(m), _) => Ok(m.clone()),
            (None, true) if shm => Ok("shm".into()),
            (None, true) => Ok(
                match self
                    .transport
                    .as_deref()
                    .map(str::to_ascii_uppercase)
                    .as_deref()
                {
                    Some("TCP") => "tcp".into(),
                    _ => "udp".into(),
                },
            ),
            (None, false) => Ok(self.default_middleware.middleware.into()),
        }
    }

    /// The output options.
    pub fn style(&self) -> super::printer::Style {
        super::printer::Style {
            format: self.format,
            clock: self.clock,
            headers: self.headers,
            intervals: self.intervals,
            cpu: self.cpu,
        }
    }

    /// A plan error reported under the Perftest flag that set its setting.
    pub fn explain(&self, e: UsageError) -> UsageError {
        crate::plan::explain_under(&self.applied, e)
    }
}
