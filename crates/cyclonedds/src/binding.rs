//! The [`CycloneDds`] binding: capabilities, validation, topics, readers and
//! writers.

use crate::*;
use pubsubperf_core::binding::BindingInfo;
use pubsubperf_core::binding::CANCEL_POLL;
use pubsubperf_core::handoff::Handoff;
use pubsubperf_core::result::TestKind;
use pubsubperf_core::{
    Binding, BindingError, DataType, EndpointConfig, Locator, ReceiveMode, Reliability, TopicSpec,
    WaitMode,
};
use std::ffi::CString;
use std::sync::Arc;
use std::time::Duration;

/// The `cyclonedds` binding: one participant per side.
pub struct CycloneDds {
    pub(crate) cfg: EndpointConfig,
    pub(crate) opts: Opts,
    pub(crate) part: Arc<Participant>,
    /// Flat: the data array length N (the run's largest sample).
    pub(crate) flat_len: usize,
    /// shm: RouDi's largest chunk payload, minus CycloneDDS's header.
    pub(crate) shm_limit: Option<usize>,
    /// A latency test's `ping` topic was opened here: this side's echo
    /// writer answers one ping at a time (the subscriber opens its ping
    /// reader before its echo writer). The echoes of a throughput test's
    /// `--latency-every` may be many in flight.
    pub(crate) pinged: bool,
}

/// Why a shm run cannot use RouDi's chunks for this size, if so.
pub(crate) fn shm_fits(cfg: &EndpointConfig, max_payload: usize) -> Result<usize, BindingError> {
    let limit = max_payload.saturating_sub(SHM_OVERHEAD + 8);
    if cfg.max_sample_size > limit {
        return Err(BindingError::TooLarge {
            size: cfg.max_sample_size,
            limit,
        });
    }
    Ok(limit)
}

impl CycloneDds {
    pub(crate) fn topic_name(&self, topic: &str) -> String {
        pubsubperf_core::dds::topic(&self.cfg.run_id, topic)
    }

    pub(crate) fn topic(&self, name: &str) -> Result<i32, BindingError> {
        let c = CString::new(name).map_err(|_| BindingError::Unsupported("topic name".into()))?;
        // SAFETY: valid participant and C string; the flat descriptor lives
        // as long as the participant.
        let tp = unsafe {
            match self.cfg.data_type {
                DataType::Bytes if self.cfg.instances > 0 => {
                    sys::pp_topic_keyed_bytes(self.part.pp, c.as_ptr())
                }
                DataType::Bytes => sys::pp_topic_bytes(self.part.pp, c.as_ptr()),
                DataType::Flat => sys::pp_topic_flat(self.part.pp, c.as_ptr(), self.part.flat),
            }
        };
        if tp < 0 {
            return Err(mw(&format!("creating topic {name}"), tp));
        }
        Ok(tp)
    }

    /// `--async`: a non-zero LATENCY_BUDGET, which is what makes a
    /// CycloneDDS 0.10 writer hand its packets to the domain's send thread
    /// (`sendq`) instead of sending on the writing thread; readers request
    /// the same budget so that they match such writers.
    pub(crate) fn latency_budget_ns(&self) -> i64 {
        if self.cfg.async_publish {
            ASYNC_LATENCY_BUDGET_NS
        } else {
            0
        }
    }

    /// Bytes before the data of a flat sample: `len`, and the key `id`
    /// first with `--instances`.
    pub(crate) fn flat_header(&self) -> usize {
        if self.cfg.instances > 0 { 8 } else { 4 }
    }

    /// History and resource limits: the user's choice, else KEEP_ALL for
    /// reliable UDP (no sample is overwritten) and KEEP_LAST otherwise
    /// (KEEP_ALL turns CycloneDDS's shared memory off), with a depth that
    /// keeps about 64 MiB queued.
    pub(crate) fn history(&self, queue: usize) -> (i32, i32, i32) {
        let size = self.cfg.max_sample_size.max(1);
        let shm = self.cfg.transport == "shm";
        let default_depth = if shm {
            (64 * 1024 * 1024 / size).clamp(1, 16)
        } else {
            (64 * 1024 * 1024 / size).clamp(4, 1024)
        };
        let depth = if queue > 0 { queue } else { default_depth }.min(i32::MAX as usize) as i32;
        let h =
            self.opts
                .history
                .unwrap_or(if self.cfg.reliability == Reliability::Reliable && !shm {
                    History::KeepAll
                } else {
                    History::KeepLast(depth as u32)
                });
        match h {
            History::KeepAll => (1, 0, depth),
            History::KeepLast(d) => (0, d.min(i32::MAX as u32) as i32, 0),
        }
    }
}

impl Binding for CycloneDds {
    type Writer = CycloneWriter;
    type Reader = CycloneReader;

    fn info() -> BindingInfo {
        BindingInfo {
            name: "cyclonedds",
            description: "Eclipse CycloneDDS (C API): RTPS over UDP, or shared memory via iceoryx (RouDi)",
            version: format!("CycloneDDS {}", env!("PUBSUBPERF_DDSC_VERSION")),
            capabilities: caps(),
            available: availability(),
        }
    }

    fn qos_flags() -> &'static [&'static str] {
        config::QOS_FLAGS
    }

    fn wire_protocol() -> Option<pubsubperf_core::WireProtocol> {
        Some(pubsubperf_core::WireProtocol::Rtps)
    }

    /// Over udp: its sockets are unconnected, each send names its
    /// destination, and such sends to an address on `lo` cost 6-8 µs more
    /// a round trip; it binds its receive sockets to every address anyway,
    /// so a loopback address closes nothing.
    fn prefers_host_address(transport: &str) -> bool {
        transport == "udp"
    }

    fn why_not(flag: &str) -> Option<&'static str> {
        config::why_not(flag)
    }

    /// `ddsperf pub` writes with write batching on (Internal/WriteBatch) in
    /// packets of CycloneDDS's default General/MaxMessageSize; its ping
    /// and pong do not batch. Over shm each sample has its own chunk.
    fn default_batch(test: TestKind, cfg: &EndpointConfig) -> usize {
        if test == TestKind::Throughput && cfg.transport == "udp" {
            config::DEFAULT_MAX_MESSAGE
        } else {
            0
        }
    }

    fn deviations(_test: TestKind, cfg: &EndpointConfig) -> Vec<String> {
        crate::deviations::of(cfg)
    }

    fn validate(cfg: &EndpointConfig) -> Result<(), BindingError> {
        availability().map_err(BindingError::Unavailable)?;
        let o = Opts::parse(cfg)?;
        match cfg.transport.as_str() {
            "udp" | "shm" => {}
            t => {
                return Err(BindingError::Unsupported(format!(
                    "--transport {t}: cyclonedds offers udp, shm"
                )));
            }
        }
        if cfg.zero_copy && (cfg.transport != "shm" || cfg.data_type != DataType::Flat) {
            return Err(BindingError::Unsupported(
                "--zero-copy: cyclonedds loans need --transport shm and --data-type flat".into(),
            ));
        }
        if cfg.ipv6 {
            return Err(BindingError::Unsupported(
                "--ipv6: the cyclonedds binding runs over IPv4".into(),
            ));
        }
        config::check_batch(cfg)?;
        if let Some(flag) = cfg
            .qos_flags_set()
            .into_iter()
            .find(|f| !Self::qos_flags().contains(f))
        {
            return Err(BindingError::Unsupported(format!(
                "{flag}: {}",
                config::why_not(flag).unwrap_or("not mapped by cyclonedds")
            )));
        }
        if cfg.multicast_ttl.is_some() && !cfg.multicast {
            return Err(BindingError::Unsupported(
                "--multicast-ttl: needs --multicast (the TTL is that of multicast datagrams)"
                    .into(),
            ));
        }
        if let Some(a) = &cfg.multicast_address
            && !(cfg.multicast
                && a.parse::<std::net::Ipv4Addr>()
                    .is_ok_and(|ip| ip.is_multicast()))
        {
            return Err(BindingError::Unsupported(format!(
                "--multicast-address {a}: needs --multicast and an IPv4 multicast group"
            )));
        }
        if cfg.transport == "shm" {
            if cfg.multicast {
                return Err(BindingError::Unsupported(
                    "--multicast: applies to --transport udp (shm delivers through shared memory)"
                        .into(),
                ));
            }
            if o.history == Some(History::KeepAll) {
                return Err(BindingError::Unsupported(
                    "--history keep-all: CycloneDDS 0.10 turns shared memory off for KEEP_ALL; use keep-last:N with --transport shm".into(),
                ));
            }
            if pubsubperf_roudi::find_binary().is_none() {
                return Err(BindingError::Unavailable(
                    "--transport shm: iox-roudi not found in PATH (Debian: apt install iceoryx)"
                        .into(),
                ));
            }
            let r = pubsubperf_roudi::running();
            if let Some(r) = r.first() {
                // Someone else's RouDi: its chunks bound the size.
                let max = r
                    .config
                    .as_ref()
                    .and_then(|c| std::fs::read_to_string(c).ok())
                    .and_then(|t| pubsubperf_roudi::max_payload_of_config(&t))
                    .unwrap_or(pubsubperf_roudi::ICEORYX_DEFAULT_MAX_PAYLOAD);
                shm_fits(cfg, max).map_err(|e| {
                    BindingError::Unsupported(format!(
                        "--size: {e} (the running RouDi, pid {}, has no larger chunks)",
                        r.pid
                    ))
                })?;
            }
        }
        if cfg.max_sample_size > MAX_SAMPLE {
            return Err(BindingError::TooLarge {
                size: cfg.max_sample_size,
                limit: MAX_SAMPLE,
            });
        }
        if cfg.transport == "udp" && cfg.max_sample_size > MAX_UDP_SAMPLE {
            return Err(BindingError::Unsupported(format!(
                "--size {}: cyclonedds over udp is verified up to 64 MiB (256 MiB stalls its reliable fragment flow on loopback, in ddsperf too); use --transport shm for larger ones",
                cfg.max_sample_size
            )));
        }
        Ok(())
    }

    fn host_services(cfg: &EndpointConfig) -> Result<(), BindingError> {
        if cfg.transport != "shm" {
            return Ok(());
        }
        pubsubperf_roudi::hold_until_exit(&pubsubperf_roudi::Options::new(&cfg.run_id))
            .map(|_| ())
            .map_err(|e| BindingError::Unavailable(format!("--transport shm: {e}")))
    }

    fn open(cfg: &EndpointConfig) -> Result<Self, BindingError> {
        Self::validate(cfg)?;
        let opts = Opts::parse(cfg)?;
        let shm_limit = if cfg.transport == "shm" {
            // Before the participant: CycloneDDS waits for ever for a RouDi.
            let held =
                pubsubperf_roudi::hold_until_exit(&pubsubperf_roudi::Options::new(&cfg.run_id))
                    .map_err(|e| BindingError::Unavailable(format!("--transport shm: {e}")))?;
            Some(shm_fits(cfg, held.max_payload)?)
        } else {
            None
        };
        crate::malloc::apply(opts.malloc);
        let domain = opts.domain_id(&cfg.run_id);
        let xml = config::domain_xml(cfg, &opts)?;
        acquire_domain(domain, &xml)?;
        // SAFETY: creating a participant in a domain we hold.
        let pp = unsafe { sys::pp_create_participant(domain) };
        if pp < 0 {
            release_domain(domain);
            return Err(mw(
                &format!("creating a participant in domain {domain}"),
                pp,
            ));
        }
        let flat_len = cfg.max_sample_size;
        let flat = if cfg.data_type == DataType::Flat {
            // SAFETY: allocates a descriptor owned by the participant guard.
            let f = unsafe { sys::pp_flat_new(flat_len as u32, (cfg.instances > 0) as i32) };
            if f.is_null() {
                // SAFETY: our participant.
                unsafe { sys::pp_delete(pp) };
                release_domain(domain);
                return Err(BindingError::Middleware(
                    "allocating a type descriptor".into(),
                ));
            }
            f
        } else {
            std::ptr::null_mut()
        };
        Ok(CycloneDds {
            cfg: cfg.clone(),
            opts,
            part: Arc::new(Participant { pp, domain, flat }),
            flat_len,
            shm_limit,
            pinged: false,
        })
    }

    fn create_reader(
        &mut self,
        topic: &TopicSpec,
    ) -> Result<(Self::Reader, Locator), BindingError> {
        self.pinged |= topic.is_ping();
        let name = self.topic_name(&topic.name);
        let tp = self.topic(&name)?;
        let (history, depth, max_samples) = self.history(self.cfg.receive_queue);
        let reliable = (self.cfg.reliability == Reliability::Reliable) as i32;
        // SAFETY: valid participant and topic.
        let rd = unsafe {
            sys::pp_create_reader(
                self.part.pp,
                tp,
                reliable,
                history,
                depth,
                max_samples,
                self.opts.transient_local as i32,
                self.latency_budget_ns(),
            )
        };
        if rd < 0 {
            return Err(mw(&format!("creating a reader of {name}"), rd));
        }
        // SAFETY: valid participant and reader.
        let ws = unsafe { sys::pp_create_waitset(self.part.pp, rd) };
        if ws < 0 {
            return Err(mw("creating a waitset", ws));
        }
        let reader = CycloneReader {
            rd,
            ws,
            flat: self.cfg.data_type == DataType::Flat,
            keyed: self.cfg.instances > 0,
            hdr: self.flat_header(),
            flat_len: self.flat_len,
            in_place: self.cfg.data_type == DataType::Flat && self.shm_limit.is_some(),
            raw: [std::ptr::null(); TAKE_MAX],
            scratch: if self.cfg.data_type == DataType::Flat && self.shm_limit.is_some() {
                vec![0u32; (self.flat_header() + self.flat_len).div_ceil(4)]
            } else {
                Vec::new()
            },
            busy: self.cfg.wait == WaitMode::Busy,
            handoff: (self.cfg.receive == ReceiveMode::Listener).then(Handoff::new),
            listening: false,
            cancel: self.cfg.cancel.clone(),
            full: false,
            ptrs: [std::ptr::null_mut(); TAKE_MAX],
            valid: [0; TAKE_MAX],
            topic: name.clone(),
            _part: self.part.clone(),
        };
        Ok((reader, name))
    }

    fn create_writer(
        &mut self,
        topic: &TopicSpec,
        readers: &[Locator],
    ) -> Result<Self::Writer, BindingError> {
        let name = self.topic_name(&topic.name);
        if let Some(l) = readers.iter().find(|l| !l.is_empty() && **l != name) {
            return Err(BindingError::Unsupported(format!(
                "reader locator '{l}' is not topic '{name}': both sides must use the cyclonedds binding with the same run"
            )));
        }
        let tp = self.topic(&name)?;
        self.pinged |= topic.is_ping();
        let listener = self.cfg.receive == ReceiveMode::Listener;
        let one_in_flight = topic.is_ping() || (topic.is_echo() && self.pinged);
        let (history, depth, max_samples) = if (listener && (topic.is_echo() || topic.is_ping()))
            || (one_in_flight && self.opts.history.is_none())
        {
            // Like ddsperf's ping and pong writers, a latency test's
            // writers keep the last sample only: with one ping in flight,
            // each is written after the previous one's echo came back, so
            // nothing unacknowledged is ever replaced. With KEEP_ALL a
            // waitset round trip took longer (64 KiB p99 85-86 us, 59-62
            // us this way; 1 MiB p50 688-729 us, 623-641 us). Under
            // a listener it is the only choice: written from CycloneDDS's
            // receive thread, which also takes in the acknowledgements,
            // a writer that waited for them there would wait for itself
            // (until --reliable-block-timeout), so a listener's echo
            // writer of a throughput test's --latency-every keeps the
            // last echo only too.
            (0, 1, 0)
        } else {
            self.history(self.cfg.send_queue)
        };
        let reliable = self.cfg.reliability == Reliability::Reliable;
        let block = Duration::from_millis(self.cfg.reliable_block_timeout_ms);
        // A write blocked on a full history waits inside CycloneDDS, deaf to
        // the run's cancel (deleting the writer does not wake it in 0.10):
        // copies wait in slices of CANCEL_POLL and are written again until
        // `block` has passed (CycloneDDS drops a sample whose write timed
        // out), so a run whose subscriber fell silent ends in the 5 s of
        // silence. A loaned chunk is consumed by its write: loans wait all
        // of `block` at once.
        let loans = self.cfg.data_type == DataType::Flat && self.cfg.zero_copy;
        let sliced = !loans && block > CANCEL_POLL;
        let wait = if sliced { CANCEL_POLL } else { block };
        // SAFETY: valid participant and topic.
        let wr = unsafe {
            sys::pp_create_writer(
                self.part.pp,
                tp,
                reliable as i32,
                wait.as_nanos().min(i64::MAX as u128) as i64,
                history,
                depth,
                max_samples,
                self.opts.transient_local as i32,
                self.latency_budget_ns(),
            )
        };
        if wr < 0 {
            return Err(mw(&format!("creating a writer of {name}"), wr));
        }
        let shm = self.shm_limit.is_some();
        if shm {
            // SAFETY: valid writer.
            if unsafe { sys::pp_shm_available(wr) } == 0 {
                return Err(BindingError::Middleware(format!(
                    "CycloneDDS did not enable shared memory for the writer of {name} (history {}, durability {})",
                    if history == 1 {
                        "keep-all"
                    } else {
                        "keep-last"
                    },
                    if self.opts.transient_local {
                        "transient-local"
                    } else {
                        "volatile"
                    }
                )));
            }
        }
        let mode = match (self.cfg.data_type, self.cfg.zero_copy) {
            (DataType::Flat, true) => {
                // SAFETY: valid writer.
                if unsafe { sys::pp_loan_available(wr) } == 0 {
                    return Err(BindingError::Middleware(format!(
                        "--zero-copy: CycloneDDS offers no loans for the writer of {name}"
                    )));
                }
                Mode::Loan
            }
            (DataType::Flat, false) => {
                Mode::FlatCopy(vec![0u32; (self.flat_header() + self.flat_len).div_ceil(4)])
            }
            (DataType::Bytes, _) => Mode::Bytes(vec![0u8; self.cfg.max_sample_size]),
        };
        Ok(CycloneWriter {
            wr,
            mode,
            keyed: self.cfg.instances > 0,
            keys: pubsubperf_core::binding::InstanceKeys::new(self.cfg.instances),
            hdr: self.flat_header(),
            flush: self.cfg.async_publish,
            batched: self.cfg.batch_bytes > 0,
            max_len: self.cfg.max_sample_size,
            block,
            sliced,
            reliable,
            shm,
            cancel: self.cfg.cancel.clone(),
            topic: name,
            _part: self.part.clone(),
        })
    }
}
