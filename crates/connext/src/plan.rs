//! [`Plan`]: what a run's configuration makes of Connext's QoS, as RTI
//! Perftest 4.1 sets them for Connext by default (its
//! `perftest_qos_profiles.xml` and what its `RTIDDSImpl` sets in code),
//! where pubsubperf's options do not say otherwise. docs/bindings/connext.md
//! lists each value and where Perftest sets it.
//!
//! Perftest's topics map onto the harness's: its *Throughput* topic (the
//! publisher's data, and its pings in a latency test) is the harness's
//! `data` and `ping`; its *Latency* topic (the subscriber's echoes) is the
//! harness's `echo<N>`.

use pubsubperf_core::binding::CANCEL_POLL;
use pubsubperf_core::{BindingError, Durability, EndpointConfig, History, Reliability, TopicSpec};
use std::time::Duration;

/// Perftest's `-sendQueueSize` default: samples (or batches) in a writer's
/// queue, and its send window.
pub const SEND_QUEUE: usize = 50;
/// Perftest's data reader (ThroughputQos): max_samples.
pub const DATA_READER_SAMPLES: i32 = 10_000;
/// Perftest's data reader: initial_samples (`-receiveQueueSize` sets it).
pub const DATA_READER_INITIAL: i32 = 128;
/// Perftest's echo reader (LatencyQos): every limit.
pub const ECHO_READER_SAMPLES: i32 = 100;
/// Perftest's heartbeat periods: 10 ms, and 1 ms while a reader is behind.
pub const HEARTBEAT: Duration = Duration::from_millis(10);
pub const FAST_HEARTBEAT: Duration = Duration::from_millis(1);
/// Perftest's `-noPositiveAcks` keep duration (BaseProfileQos): 100 µs.
pub const KEEP_DURATION: Duration = Duration::from_micros(100);
/// The largest sample Perftest writes synchronously: the transports'
/// message_size_max (65536) less its 567 bytes of RTPS overhead.
pub const MAX_SYNCHRONOUS: usize = 65_536 - 567;
/// Perftest's MAX_BOUNDED_SEQ_SIZE: the pool buffers of its unbounded type.
pub const POOL_BUFFER_MAX: usize = 65_470;
/// Perftest's UDPv4 message_size_max and socket buffers.
pub const UDP_MESSAGE_MAX: usize = 65_536;
pub const UDP_SEND_BUFFER: usize = 1 << 20;
pub const UDP_RECEIVE_BUFFER: usize = 2 << 20;
/// The largest shared-memory segment Perftest asks for (116 MiB).
pub const SHMEM_SEGMENT_MAX: usize = 121_634_816;
/// Perftest's default domain (ours is derived per run, see [`domain_id`]).
pub const MAX_DOMAIN: u32 = 230;
/// A new participant's announcements: at random intervals between these
/// (Connext's defaults: 1 s each), while it starts.
pub const ANNOUNCE_MIN: Duration = Duration::from_millis(10);
pub const ANNOUNCE_MAX: Duration = Duration::from_millis(100);
/// Participant deletion waits for this period a few times (Connext's
/// default is 1 s: 5 s to delete two participants).
pub const SHUTDOWN_CLEANUP: Duration = Duration::from_millis(10);
/// Largest sample (the header included), as the other DDS bindings.
pub const MAX_SAMPLE: usize = 256 << 20;
/// Smallest and largest `--bandwidth-limit`, bytes/s (a token of 1 KiB
/// every 10 ms at least; tokens per period fit an int32).
pub const BANDWIDTH_MIN: u64 = 100 * 1024;
pub const BANDWIDTH_MAX: u64 = 100 * 1024 * i32::MAX as u64;
/// The flow controller `--bandwidth-limit` defines.
pub const FLOW_CONTROLLER: &str = "dds.flow_controller.token_bucket.pubsubperf";
/// Participant indices a participant on loopback announces itself to
/// (Connext's default peers reach 0-4; a run has a participant per
/// endpoint, and the other vendors' participants of the host).
pub const LOOPBACK_PEERS: u32 = 32;
/// Perftest's multicast groups: its Throughput and Latency topics.
pub const DATA_GROUP: &str = "239.255.1.1";
pub const ECHO_GROUP: &str = "239.255.1.2";

/// Perftest's topic a harness topic stands for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    /// Throughput: the publisher's data and pings.
    Data,
    /// Latency: the subscriber's echoes.
    Echo,
}

impl Role {
    pub fn of(topic: &TopicSpec) -> Role {
        if topic.is_echo() {
            Role::Echo
        } else {
            Role::Data
        }
    }
}

/// The one entity of a Connector.
#[derive(Debug, Clone, Copy)]
pub enum Endpoint {
    Writer(Role),
    Reader(Role),
}

/// The QoS of a run's endpoints.
#[derive(Debug, Clone)]
pub struct Plan {
    pub domain: u32,
    /// `transport_builtin/mask`.
    pub transport_mask: &'static str,
    pub initial_peers: Vec<String>,
    /// No multicast at all, discovery's included (a run on loopback
    /// without `--multicast`: see [`unicast_discovery`]).
    pub no_multicast: bool,
    pub participant_properties: Vec<(String, String)>,
    pub reliability: Reliability,
    pub durability: Durability,
    /// `--history`, else Perftest's per endpoint.
    pub history: Option<History>,
    pub keyed: bool,
    pub instances: u32,
    pub send_queue: i32,
    /// `--receive-queue`: the data reader's initial_samples.
    pub receive_queue: Option<i32>,
    /// The data writer batches up to this many bytes (0: not at all).
    pub batch_bytes: usize,
    /// Asynchronous publishing on every writer.
    pub asynchronous: bool,
    /// The flow controller of asynchronous writers.
    pub flow_controller: String,
    pub pool_buffer_max: usize,
    /// Connext's max_blocking_time: `--max-blocking-time`, or a slice of it.
    pub max_blocking: Duration,
    /// `--max-blocking-time` in all.
    pub block: Duration,
    pub no_positive_acks: bool,
    pub no_push_on_write: bool,
    /// Samples larger than one RTPS message.
    pub large: bool,
    /// The readers' multicast groups, data and echo (`--multicast`).
    pub multicast: Option<(String, String)>,
}

/// The domain of a run: `--domain`, else derived from the run id as the
/// `cyclonedds` and `fastdds` bindings derive theirs (1..=230), so that
/// concurrent runs stay apart and cross-vendor runs meet.
pub fn domain_id(cfg: &EndpointConfig) -> u32 {
    cfg.domain
        .unwrap_or_else(|| pubsubperf_core::dds::domain(&cfg.run_id, MAX_DOMAIN))
}

fn unsupported(msg: String) -> BindingError {
    BindingError::Unsupported(msg)
}

impl Plan {
    pub fn of(cfg: &EndpointConfig) -> Result<Plan, BindingError> {
        let transport_mask = match cfg.transport.as_str() {
            "" | "udp+shm" => "UDPv4|SHMEM",
            "udp" => "UDPv4",
            "shm" => "SHMEM",
            t => {
                return Err(unsupported(format!(
                    "--transport {t}: connext offers udp+shm (Connext's default: shared memory within a host, UDPv4 across), udp, shm"
                )));
            }
        };
        if cfg.ipv6 {
            return Err(unsupported(
                "--ipv6: the connext binding uses Connext's UDPv4 and shared-memory transports"
                    .into(),
            ));
        }
        if cfg.zero_copy {
            return Err(unsupported(
                "--zero-copy: Connext's zero copy needs types generated by rtiddsgen (FlatData and @transfer_mode(SHMEM_REF)); RTI Connector's libraries have dynamic types only".into(),
            ));
        }
        if cfg.data_type != pubsubperf_core::DataType::Bytes {
            return Err(unsupported(
                "--data-type flat: Connext's FlatData needs types generated by rtiddsgen; RTI Connector's libraries have dynamic types only (use --data-type bytes)".into(),
            ));
        }
        if cfg.max_sample_size > MAX_SAMPLE {
            return Err(BindingError::TooLarge {
                size: cfg.max_sample_size,
                limit: MAX_SAMPLE,
            });
        }
        if let Some(d) = cfg.domain
            && d > MAX_DOMAIN
        {
            return Err(unsupported(format!(
                "--domain {d}: connext domain ids are 0-{MAX_DOMAIN} here"
            )));
        }
        if cfg.qos_file.is_some() {
            return Err(unsupported(
                "--qos-file: the connext binding writes its whole XML application itself (RTI Connector takes one); use the QoS flags".into(),
            ));
        }
        if cfg.multicast && transport_mask == "SHMEM" {
            return Err(unsupported(
                "--multicast: needs UDPv4 (--transport udp or udp+shm)".into(),
            ));
        }
        let group = |given: &Option<String>, default: &str| -> Result<String, BindingError> {
            match given {
                None => Ok(default.to_string()),
                Some(a)
                    if a.parse::<std::net::Ipv4Addr>()
                        .is_ok_and(|ip| ip.is_multicast()) =>
                {
                    Ok(a.clone())
                }
                Some(a) => Err(unsupported(format!(
                    "--multicast-address {a}: expected an IPv4 multicast group (224.0.0.0/4)"
                ))),
            }
        };
        if (cfg.multicast_address.is_some() || cfg.multicast_ttl.is_some()) && !cfg.multicast {
            return Err(unsupported(
                "--multicast-address, --multicast-ttl: need --multicast".into(),
            ));
        }
        let multicast = if cfg.multicast {
            Some((
                group(&cfg.multicast_address, DATA_GROUP)?,
                group(&cfg.multicast_address, ECHO_GROUP)?,
            ))
        } else {
            None
        };
        let reliable = cfg.reliability == Reliability::Reliable;
        if (cfg.no_positive_acks || cfg.no_push_on_write) && !reliable {
            return Err(unsupported(
                "--no-positive-acks, --no-push-on-write: apply to reliable writers and readers; drop --best-effort".into(),
            ));
        }
        if cfg.bandwidth_limit > 0
            && !(BANDWIDTH_MIN..=BANDWIDTH_MAX).contains(&cfg.bandwidth_limit)
        {
            return Err(unsupported(format!(
                "--bandwidth-limit {}: connext's token bucket takes {BANDWIDTH_MIN}-{BANDWIDTH_MAX} bytes/s (1 KiB tokens every 10 ms)",
                cfg.bandwidth_limit
            )));
        }
        let size = cfg.max_sample_size;
        let large = size > MAX_SYNCHRONOUS;
        let asynchronous = cfg.async_publish || large || cfg.bandwidth_limit > 0;
        if cfg.batch_bytes > 0 && asynchronous {
            return Err(unsupported(format!(
                "--batch {}: Perftest batches only synchronous writers (samples up to {MAX_SYNCHRONOUS} B, without --async or --bandwidth-limit)",
                cfg.batch_bytes
            )));
        }
        let send_queue = if cfg.send_queue > 0 {
            cfg.send_queue.min(1_000_000) as i32
        } else {
            SEND_QUEUE as i32
        };
        let block = Duration::from_millis(cfg.reliable_block_timeout_ms);
        let mut participant_properties = vec![
            prop(
                "dds.transport.UDPv4.builtin.parent.message_size_max",
                UDP_MESSAGE_MAX,
            ),
            prop(
                "dds.transport.UDPv4.builtin.send_socket_buffer_size",
                if cfg.socket_buffer > 0 {
                    cfg.socket_buffer
                } else {
                    UDP_SEND_BUFFER
                },
            ),
            prop(
                "dds.transport.UDPv4.builtin.recv_socket_buffer_size",
                if cfg.socket_buffer > 0 {
                    cfg.socket_buffer
                } else {
                    UDP_RECEIVE_BUFFER
                },
            ),
        ];
        participant_properties.extend(shmem_properties(transport_mask, size, send_queue));
        if let Some(ttl) = cfg.multicast_ttl {
            participant_properties.push(prop("dds.transport.UDPv4.builtin.multicast_ttl", ttl));
        }
        let mut flow_controller = "DDS_DEFAULT_FLOW_CONTROLLER_NAME".to_string();
        if cfg.bandwidth_limit > 0 {
            flow_controller = FLOW_CONTROLLER.to_string();
            participant_properties.extend(token_bucket(cfg.bandwidth_limit));
        }
        let loopback = on_loopback(cfg);
        // UDPv4 on the run's interface only, as the other DDS bindings
        // bind theirs. On loopback, Connext would otherwise leave the
        // loopback interface out and announce only the host's other
        // addresses, which a CycloneDDS or Fast DDS participant bound to
        // 127.0.0.1 never reaches; discovery is then unicast to the
        // participants of this host (loopback has no multicast). A
        // multicast run on one host keeps Connext's interfaces.
        let no_multicast = unicast_discovery(cfg);
        let mut initial_peers = Vec::new();
        if !loopback {
            let ip: std::net::Ipv4Addr = cfg.bind_ip.parse().map_err(|_| {
                unsupported(format!(
                    "connext: the run's address {} is not an IPv4 address",
                    cfg.bind_ip.escape_debug()
                ))
            })?;
            participant_properties.push(prop(
                "dds.transport.UDPv4.builtin.parent.allow_interfaces",
                ip,
            ));
        } else if no_multicast {
            participant_properties.push(prop(
                "dds.transport.UDPv4.builtin.parent.allow_interfaces",
                std::net::Ipv4Addr::LOCALHOST,
            ));
            participant_properties.push(prop(
                "dds.transport.UDPv4.builtin.ignore_loopback_interface",
                0,
            ));
            initial_peers = vec![
                "builtin.shmem://".to_string(),
                format!("{LOOPBACK_PEERS}@builtin.udpv4://127.0.0.1"),
            ];
            // Loopback has no multicast: none is used, so none is set up
            // (under qemu-user, Connext's multicast socket options fail and
            // the participant with them).
            participant_properties.push(prop("dds.transport.UDPv4.builtin.multicast_enabled", 0));
        }
        Ok(Plan {
            domain: domain_id(cfg),
            transport_mask,
            no_multicast,
            initial_peers,
            participant_properties,
            reliability: cfg.reliability,
            durability: cfg.durability.unwrap_or(Durability::Volatile),
            history: cfg.history,
            keyed: cfg.instances > 0,
            instances: cfg.instances,
            send_queue,
            receive_queue: (cfg.receive_queue > 0).then(|| cfg.receive_queue.min(1_000_000) as i32),
            batch_bytes: cfg.batch_bytes,
            asynchronous,
            flow_controller,
            pool_buffer_max: POOL_BUFFER_MAX,
            max_blocking: if block > CANCEL_POLL {
                CANCEL_POLL
            } else {
                block
            },
            block,
            no_positive_acks: cfg.no_positive_acks,
            no_push_on_write: cfg.no_push_on_write,
            large: size > UDP_MESSAGE_MAX,
            multicast,
        })
    }

    /// True when a reliable write that timed out is tried again (see
    /// [`crate::writer::ConnextWriter`]).
    pub fn sliced(&self) -> bool {
        self.block > CANCEL_POLL
    }

    /// The data writer's heartbeats per max samples and watermarks
    /// (Perftest: a tenth of the send queue, nine tenths; the whole queue
    /// for samples larger than a message).
    pub fn heartbeats_per_max_samples(&self) -> i32 {
        if self.large {
            self.send_queue
        } else {
            (self.send_queue / 10).max(1)
        }
    }
}

/// True when the run's address is loopback (or none).
fn on_loopback(cfg: &EndpointConfig) -> bool {
    cfg.bind_ip.is_empty()
        || cfg
            .bind_ip
            .parse::<std::net::IpAddr>()
            .is_ok_and(|a| a.is_loopback())
}

/// True when discovery is unicast to this host's participants: a run on
/// loopback without multicast (see [`Plan::of`]).
pub fn unicast_discovery(cfg: &EndpointConfig) -> bool {
    on_loopback(cfg) && !cfg.multicast
}

fn prop(name: &str, value: impl std::fmt::Display) -> (String, String) {
    (name.to_string(), value.to_string())
}

/// Perftest's shared-memory settings (`configureShmemTransport`): room for
/// two send queues of messages in the receive buffer, and messages as
/// large as a sample when shared memory is the only transport.
fn shmem_properties(mask: &str, size: usize, send_queue: i32) -> Vec<(String, String)> {
    if !mask.contains("SHMEM") {
        return Vec::new();
    }
    let fragment = UDP_MESSAGE_MAX - 512;
    let per_sample = (size / fragment + 1).max(1);
    let count = 2 * (send_queue as usize + 1) * per_sample;
    let message_max = if mask == "SHMEM" {
        (size + 567).max(UDP_MESSAGE_MAX)
    } else {
        UDP_MESSAGE_MAX
    };
    let buffer = (count * (512 + fragment)).min(SHMEM_SEGMENT_MAX);
    vec![
        prop(
            "dds.transport.shmem.builtin.parent.message_size_max",
            message_max,
        ),
        prop(
            "dds.transport.shmem.builtin.received_message_count_max",
            count,
        ),
        prop("dds.transport.shmem.builtin.receive_buffer_size", buffer),
    ]
}

/// `--bandwidth-limit`: a token bucket of 1 KiB tokens refilled every
/// 10 ms with a hundredth of the limit.
fn token_bucket(bytes_per_s: u64) -> Vec<(String, String)> {
    let token = 1024u64;
    let per_period = (bytes_per_s / 100 / token).max(1);
    let p = |k: &str, v: u64| prop(&format!("{FLOW_CONTROLLER}.{k}"), v);
    vec![
        p("token_bucket.max_tokens", per_period),
        p("token_bucket.tokens_added_per_period", per_period),
        p("token_bucket.bytes_per_token", token),
        p("token_bucket.period.sec", 0),
        p("token_bucket.period.nanosec", 10_000_000),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cfg() -> EndpointConfig {
        let mut c = EndpointConfig::for_test("plan");
        c.transport = "udp+shm".into();
        c.max_sample_size = 100;
        c
    }

    #[test]
    fn perftests_shared_memory_settings_at_its_default_size() {
        let p = Plan::of(&cfg()).unwrap();
        let get = |k: &str| {
            p.participant_properties
                .iter()
                .find(|(n, _)| n.ends_with(k))
                .map(|(_, v)| v.as_str())
        };
        assert_eq!(get("shmem.builtin.received_message_count_max"), Some("102"));
        assert_eq!(get("shmem.builtin.receive_buffer_size"), Some("6684672"));
        assert_eq!(get("shmem.builtin.parent.message_size_max"), Some("65536"));
        assert_eq!(p.heartbeats_per_max_samples(), 5);
        assert!(!p.asynchronous);
    }

    #[test]
    fn large_samples_publish_asynchronously_and_refuse_batches() {
        let mut c = cfg();
        c.max_sample_size = 1 << 20;
        let p = Plan::of(&c).unwrap();
        assert!(p.asynchronous && p.large);
        assert_eq!(p.heartbeats_per_max_samples(), 50);
        c.batch_bytes = 8192;
        let e = Plan::of(&c).unwrap_err().to_string();
        assert!(e.starts_with("--batch 8192: "), "{e}");
    }

    #[test]
    fn what_connector_cannot_do_is_refused_naming_the_flag() {
        let mut c = cfg();
        c.zero_copy = true;
        assert!(
            Plan::of(&c)
                .unwrap_err()
                .to_string()
                .starts_with("--zero-copy: ")
        );
        let mut c = cfg();
        c.transport = "tcp".into();
        assert!(
            Plan::of(&c)
                .unwrap_err()
                .to_string()
                .starts_with("--transport tcp: ")
        );
        let mut c = cfg();
        c.multicast_address = Some("10.0.0.1".into());
        c.multicast = true;
        assert!(
            Plan::of(&c)
                .unwrap_err()
                .to_string()
                .starts_with("--multicast-address 10.0.0.1: ")
        );
    }

    #[test]
    fn domains_stay_in_range() {
        for i in 0..500 {
            let mut c = cfg();
            c.run_id = format!("r{i}");
            assert!((1..=MAX_DOMAIN).contains(&domain_id(&c)));
        }
    }
}
