//! Raw transport bindings: the physical baseline that middleware is measured
//! against (like Perftest's raw transport).
//!
//! - [`udp::Udp`]: one datagram per sample (or per batch), IPv4/IPv6,
//!   unicast or multicast; best effort only.
//! - [`stream::Tcp`] and [`stream::Uds`]: length-prefixed frames on a
//!   stream socket; reliable only.
//! - [`intra::Intra`]: a lock-free single-producer ring between threads of
//!   one process.

pub mod intra;
pub mod stream;
mod sys;
pub mod udp;
mod wait;

pub use intra::Intra;
pub use stream::{Tcp, Uds};
pub use udp::Udp;

use pubsubperf_core::{BindingError, EndpointConfig};

/// Refuses `--send-queue` (and `--receive-queue` unless the binding sizes
/// its reader with it): `why` says what holds the samples instead. A queue
/// asked for and not applied would make runs look equivalent when they
/// are not.
fn refuse_queues(
    name: &str,
    cfg: &EndpointConfig,
    receive_too: bool,
    why: &str,
) -> Result<(), BindingError> {
    let refused = [
        ("--send-queue", cfg.send_queue),
        (
            "--receive-queue",
            if receive_too { cfg.receive_queue } else { 0 },
        ),
    ];
    match refused.iter().find(|(_, n)| *n > 0) {
        Some((flag, n)) => Err(BindingError::Unsupported(format!(
            "{flag} {n}: {name} has no queue in samples to size ({why})"
        ))),
        None => Ok(()),
    }
}

/// Refuses every `--opt KEY=VALUE` whose key is not in `known` (the
/// binding would ignore it), naming the key and the ones it takes.
fn refuse_options(name: &str, cfg: &EndpointConfig, known: &[&str]) -> Result<(), BindingError> {
    match cfg.options.keys().find(|k| !known.contains(&k.as_str())) {
        Some(k) if known.is_empty() => Err(BindingError::Unsupported(format!(
            "--opt {k}: {name} takes no --opt options"
        ))),
        Some(k) => Err(BindingError::Unsupported(format!(
            "--opt {k}: {name} has no such option (known: {})",
            known.join(", ")
        ))),
        None => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pubsubperf_core::Binding;

    fn with(send: usize, receive: usize) -> EndpointConfig {
        EndpointConfig {
            send_queue: send,
            receive_queue: receive,
            ..EndpointConfig::for_test("queues")
        }
    }

    /// The queue options are refused where nothing would apply them,
    /// naming the option; intra sizes its ring with --receive-queue.
    type Validate = fn(&EndpointConfig) -> Result<(), BindingError>;

    #[test]
    fn unhonoured_queues_are_refused() {
        let refused: [(&str, Validate); 3] = [
            ("udp", Udp::validate),
            ("tcp", Tcp::validate),
            ("uds", Uds::validate),
        ];
        for (name, validate) in refused {
            let e = validate(&with(5, 0)).unwrap_err().to_string();
            assert!(e.contains("--send-queue 5: ") && e.contains(name), "{e}");
            let e = validate(&with(0, 5)).unwrap_err().to_string();
            assert!(e.contains("--receive-queue 5: "), "{e}");
            assert!(validate(&with(0, 0)).is_ok(), "{name}");
        }
        let e = Intra::validate(&with(5, 0)).unwrap_err().to_string();
        assert!(e.contains("--send-queue 5: intra"), "{e}");
        assert!(Intra::validate(&with(0, 5)).is_ok());
    }

    /// An `--opt` the binding would ignore is refused, naming it; tcp
    /// takes `nodelay=on|off` and refuses other values.
    #[test]
    fn unknown_options_are_refused() {
        let with = |k: &str, v: &str| {
            let mut c = EndpointConfig::for_test("opts");
            c.options.insert(k.into(), v.into());
            c
        };
        let e = Udp::validate(&with("nodelay", "off"))
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("--opt nodelay: udp takes no --opt options"),
            "{e}"
        );
        let e = Uds::validate(&with("x", "1")).unwrap_err().to_string();
        assert!(e.contains("--opt x: uds takes no --opt options"), "{e}");
        let e = Tcp::validate(&with("x", "1")).unwrap_err().to_string();
        assert!(
            e.contains("--opt x: tcp has no such option (known: nodelay)"),
            "{e}"
        );
        let e = Tcp::validate(&with("nodelay", "maybe"))
            .unwrap_err()
            .to_string();
        assert!(e.contains("--opt nodelay=maybe: expected on or off"), "{e}");
        assert!(Tcp::validate(&with("nodelay", "off")).is_ok());
        assert!(Tcp::validate(&with("nodelay", "on")).is_ok());
    }

    /// `--multicast-ttl`: the udp writer's socket holds it (the kernel's
    /// default is 1).
    #[test]
    fn udp_multicast_ttl_reaches_the_socket() {
        let mut cfg = EndpointConfig::for_test("ttl");
        cfg.reliability = pubsubperf_core::Reliability::BestEffort;
        cfg.multicast = true;
        let topic = pubsubperf_core::TopicSpec {
            name: "data".into(),
            index: 0,
        };
        for (ttl, want) in [(Some(4), 4), (None, 1)] {
            cfg.multicast_ttl = ttl;
            let mut b = Udp::open(&cfg).expect("open");
            let (_r, loc) = b.create_reader(&topic).expect("reader");
            let w = b.create_writer(&topic, &[loc]).expect("writer");
            assert_eq!(w.multicast_ttl().expect("getsockopt"), want);
        }
    }

    /// `--multicast-address`: the kernel has the readers' sockets in that
    /// group (IPv4 and IPv6), and no longer once they are closed; the data
    /// sent to it arrives.
    #[test]
    fn udp_multicast_address_is_the_group_joined() {
        use pubsubperf_testkit::groups::{delivers, is_joined};
        for (ipv6, group) in [(false, "239.255.77.41"), (true, "ff15::7070:4177")] {
            let mut cfg = EndpointConfig::for_test(&format!("mcaddr{ipv6}"));
            cfg.reliability = pubsubperf_core::Reliability::BestEffort;
            cfg.multicast = true;
            cfg.ipv6 = ipv6;
            if ipv6 {
                cfg.bind_ip = "::1".into();
            }
            cfg.multicast_address = Some(group.into());
            let ip: std::net::IpAddr = group.parse().unwrap();
            assert!(!is_joined(ip), "{group} joined before the test");
            let topic = pubsubperf_core::TopicSpec {
                name: "data".into(),
                index: 0,
            };
            let mut b = Udp::open(&cfg).expect("open");
            let (mut r, loc) = b.create_reader(&topic).expect("reader");
            assert!(loc.contains(group), "{loc}");
            assert!(is_joined(ip), "{group} not among the kernel's groups");
            let mut w = b.create_writer(&topic, &[loc]).expect("writer");
            assert!(delivers(&mut w, &mut r), "nothing arrived through {group}");
            drop((r, w, b));
            assert!(!is_joined(ip), "{group} still joined after close");
        }
    }
}
