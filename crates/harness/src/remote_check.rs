//! What a publisher's setup may ask of the host that serves it: every text
//! field of a [`RunSpec`] that arrives in a [`Msg::Setup`] or
//! [`Msg::PubSetup`] checked against a strict grammar before anything of the
//! run is built from it. Names of shared-memory segments, topics, services
//! and ports come from the run id; configuration files and strings from the
//! addresses, options and the vendor file (docs/protocol.md, "What a
//! remote publisher can ask", has the whole table). Numbers are typed by
//! the message's decoding; their bounds are the agent's limits
//! ([`crate::serve::Limits`]) and each binding's own checks.
//!
//! [`Msg::Setup`]: crate::protocol::Msg::Setup
//! [`Msg::PubSetup`]: crate::protocol::Msg::PubSetup

use crate::Fault;
use crate::serve::SessionSettings;
use crate::spec::RunSpec;
use std::net::IpAddr;

/// The longest run id: the planner's are `pp<pid>x<hex>x<n>s<i>` and a
/// `u` for a profile's reference run, under 50 characters.
pub const MAX_RUN_ID: usize = 64;
/// Most `--opt` entries a run may carry.
pub const MAX_OPTIONS: usize = 64;
/// The longest `--opt` value.
pub const MAX_OPTION_VALUE: usize = 1024;

/// `[A-Za-z0-9]{1,64}`: what the planner's run ids are made of.
fn run_id_ok(id: &str) -> bool {
    (1..=MAX_RUN_ID).contains(&id.len()) && id.bytes().all(|c| c.is_ascii_alphanumeric())
}

/// `[a-z][a-z0-9._-]{0,63}`: every binding's `--opt` keys (`peers`,
/// `fastdds.peers`, `delay-ns`).
fn option_key_ok(k: &str) -> bool {
    let b = k.as_bytes();
    (1..=64).contains(&b.len())
        && b[0].is_ascii_lowercase()
        && b.iter().all(|c| {
            c.is_ascii_lowercase() || c.is_ascii_digit() || matches!(c, b'.' | b'_' | b'-')
        })
}

/// `[A-Za-z0-9 .,:_-]{0,1024}`: every binding's `--opt` values (addresses
/// and lists of them, `peers=10.0.0.1, 10.0.0.2` with its space, numbers,
/// names).
fn option_value_ok(v: &str) -> bool {
    v.len() <= MAX_OPTION_VALUE
        && v.bytes().all(|c| {
            c.is_ascii_alphanumeric() || matches!(c, b' ' | b'.' | b',' | b':' | b'_' | b'-')
        })
}

/// Every transport a binding of this build offers.
fn known_transport(t: &str) -> bool {
    crate::registry::infos()
        .iter()
        .any(|i| i.capabilities.transports.contains(&t))
}

impl RunSpec {
    /// Checks every text field of a run that came over the network (see
    /// the module's documentation); the error names the publisher's flag.
    /// The vendor file is [`crate::qos_dir::resolve`]'s.
    pub fn validate_remote(&self) -> Result<(), String> {
        let ep = &self.endpoint;
        for (flag, name) in [
            ("--binding", &self.binding),
            ("--peer-binding", &self.peer_binding),
        ] {
            if !crate::registry::ALL.contains(&name.as_str()) {
                return Err(crate::registry::unknown_binding(
                    flag,
                    &name.escape_debug().to_string(),
                ));
            }
        }
        if !run_id_ok(&ep.run_id) {
            return Err(format!(
                "run id {}: expected 1 to {MAX_RUN_ID} letters and digits, as pubsubperf's planner makes them; run the same pubsubperf on both hosts",
                ep.run_id.escape_debug()
            ));
        }
        if !known_transport(&ep.transport) {
            return Err(format!(
                "--transport {}: no binding of this host offers it",
                ep.transport.escape_debug()
            ));
        }
        if let Some(a) = &ep.multicast_address
            && !a.parse::<IpAddr>().is_ok_and(|ip| ip.is_multicast())
        {
            return Err(format!(
                "--multicast-address {}: not a multicast address; give one in 224.0.0.0/4 or ff00::/8",
                a.escape_debug()
            ));
        }
        for (flag, a) in [
            ("--data-address", self.data_address.as_ref()),
            ("the data address", Some(&ep.bind_ip)),
        ] {
            if let Some(a) = a
                && a.parse::<IpAddr>().is_err()
            {
                return Err(format!("{flag} {}: not an IP address", a.escape_debug()));
            }
        }
        if ep.options.len() > MAX_OPTIONS {
            return Err(format!(
                "--opt: {} options, at most {MAX_OPTIONS}",
                ep.options.len()
            ));
        }
        for (k, v) in &ep.options {
            if !option_key_ok(k) {
                return Err(format!(
                    "--opt {}: not an option name (lowercase letters, digits, '.', '_', '-')",
                    k.escape_debug()
                ));
            }
            if !option_value_ok(v) {
                return Err(format!(
                    "--opt {k}={}: values are letters, digits, spaces and '.,:_-', at most {MAX_OPTION_VALUE} characters",
                    v.escape_debug()
                ));
            }
        }
        Ok(())
    }
}

/// What the session process of `settings` runs on every run a publisher
/// sets up, before anything else: [`RunSpec::validate_remote`]; for an
/// agent at HOST:PORT, bindings that work across hosts (one within a host
/// exchanges socket paths or in-process names, not addresses) and
/// transports that reach them ([`crate::one_host`]); and the
/// vendor file resolved ([`crate::qos_dir::resolve`]), whose result
/// replaces `--qos-file` in `spec`. Refusals read `refused by the agent:`
/// and name the flag.
pub fn check_setup(spec: &mut RunSpec, settings: &SessionSettings) -> Result<(), Fault> {
    let refuse = |m: String| Fault::Config(format!("refused by the agent: {m}"));
    spec.validate_remote().map_err(refuse)?;
    for (flag, name) in [
        ("--binding", &spec.binding),
        ("--peer-binding", &spec.peer_binding),
    ] {
        if !settings.trusted()
            && let Some(i) = crate::registry::info(name)
            && (!i.capabilities.remote || i.capabilities.in_process)
        {
            return Err(refuse(format!(
                "{flag} {name}: it works within one host only; use a binding that reaches other hosts (see 'pubsubperf bindings')"
            )));
        }
    }
    if !settings.trusted()
        && !settings.publisher_here
        && let Some(note) =
            crate::one_host::network_transport(&spec.binding, &mut spec.endpoint).map_err(refuse)?
    {
        eprintln!("pubsubperf session: {note}");
    }
    if let Some(asked) = &spec.endpoint.qos_file {
        let file = crate::qos_dir::resolve(asked, settings.qos_dir.as_deref(), settings.trusted())
            .map_err(refuse)?;
        spec.endpoint.qos_file = Some(file);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use pubsubperf_core::result::TestKind;

    fn spec() -> RunSpec {
        RunSpec::for_test("pp1234x5f3ax0s0", TestKind::Latency)
    }

    fn refused(f: impl FnOnce(&mut RunSpec)) -> String {
        let mut s = spec();
        f(&mut s);
        s.validate_remote().unwrap_err()
    }

    #[test]
    fn a_planned_run_passes() {
        spec().validate_remote().unwrap();
        let mut s = spec();
        s.endpoint
            .options
            .insert("peers".into(), "10.0.0.1, 10.0.0.2".into());
        s.endpoint
            .options
            .insert("fastdds.peers".into(), "10.0.0.3".into());
        s.endpoint
            .options
            .insert("priority".into(), "real-time".into());
        s.endpoint.options.insert("delay-ns".into(), "1000".into());
        s.endpoint.multicast_address = Some("239.255.0.2".into());
        s.data_address = Some("192.168.1.2".into());
        s.endpoint.run_id = format!("pp{}x{:x}x{}s{}u", 4194304, 0xffff_fffeu32, u64::MAX, 99);
        s.validate_remote().unwrap();
    }

    #[test]
    fn every_text_field_has_a_grammar() {
        let e = refused(|s| s.endpoint.run_id = "../../etc".into());
        assert!(e.starts_with("run id ../../etc: "), "{e}");
        assert!(refused(|s| s.endpoint.run_id = String::new()).starts_with("run id"));
        assert!(refused(|s| s.endpoint.run_id = "a".repeat(65)).starts_with("run id"));
        let e = refused(|s| s.peer_binding = "evil".into());
        assert!(e.starts_with("--peer-binding: unknown binding"), "{e}");
        let e = refused(|s| s.endpoint.transport = "udp\"/>".into());
        assert!(e.starts_with("--transport udp\\\"/>: "), "{e}");
        for bad in ["239.1.1.1</x>", "10.0.0.1", ""] {
            let e = refused(|s| s.endpoint.multicast_address = Some(bad.into()));
            assert!(e.starts_with("--multicast-address "), "{e}");
        }
        let e = refused(|s| s.data_address = Some("eth0".into()));
        assert!(e.starts_with("--data-address eth0: "), "{e}");
        let e = refused(|s| s.endpoint.bind_ip = "1.2.3.4\"/><x".into());
        assert!(e.starts_with("the data address "), "{e}");
        let e = refused(|s| {
            s.endpoint
                .options
                .insert("peers".into(), "10.0.0.1\"/><Tracing>".into());
        });
        assert!(e.starts_with("--opt peers=10.0.0.1\\\"/>"), "{e}");
        let e = refused(|s| {
            s.endpoint.options.insert("Peers<x>".into(), "1".into());
        });
        assert!(e.starts_with("--opt Peers<x>: "), "{e}");
        let e = refused(|s| {
            for i in 0..=MAX_OPTIONS {
                s.endpoint.options.insert(format!("k{i}"), "1".into());
            }
        });
        assert!(e.starts_with("--opt: 65 options"), "{e}");
        // One line, whatever the value holds.
        let e = refused(|s| s.endpoint.run_id = "a\nb".into());
        assert!(!e.contains('\n'), "{e}");
    }

    fn remote() -> SessionSettings {
        let mut s = SessionSettings::local();
        s.limits.network = true;
        s.same_host = false;
        s.publisher_here = false;
        s
    }

    #[test]
    fn an_agent_takes_a_name_from_its_dir_and_no_path() {
        let attack = crate::qos_dir::tests::ATTACK;
        let mut s = spec();
        s.endpoint.qos_file = Some(attack.into());
        let e = check_setup(&mut s, &remote()).unwrap_err().to_string();
        assert!(
            e.starts_with("refused by the agent: --qos-file /dev/null,<Tracing>")
                && e.ends_with("put the file in the agent's --qos-dir and pass its name"),
            "{e}"
        );
        let d = tempfile::tempdir().unwrap();
        std::fs::write(d.path().join("cyclone.xml"), "<x/>").unwrap();
        let with_dir = SessionSettings {
            qos_dir: Some(d.path().to_path_buf()),
            ..remote()
        };
        let mut s = spec();
        s.endpoint.qos_file = Some("cyclone.xml".into());
        check_setup(&mut s, &with_dir).unwrap();
        let file = std::fs::canonicalize(d.path().join("cyclone.xml")).unwrap();
        assert_eq!(s.endpoint.qos_file.as_deref(), Some(file.to_str().unwrap()));
        let mut s = spec();
        s.endpoint.qos_file = Some("cyclone.xml".into());
        let e = check_setup(&mut s, &remote()).unwrap_err().to_string();
        assert!(e.contains("start it with --qos-dir DIR"), "{e}");
        // The publisher's own subscribers keep its absolute path.
        let mut s = spec();
        s.endpoint.qos_file = Some("/home/me/cyclone.xml".into());
        check_setup(&mut s, &SessionSettings::local()).unwrap();
        assert_eq!(s.endpoint.qos_file.as_deref(), Some("/home/me/cyclone.xml"));
    }

    #[test]
    fn an_agent_refuses_bindings_of_one_host() {
        let mut s = spec();
        s.binding = "intra".into();
        s.peer_binding = "intra".into();
        let e = check_setup(&mut s, &remote()).unwrap_err().to_string();
        assert!(
            e.starts_with("refused by the agent: --binding intra: "),
            "{e}"
        );
        check_setup(&mut s, &SessionSettings::local()).unwrap();
    }

    /// cyclonedds `shm` from a remote client started iox-roudi as root
    /// with a 1.3 GB file in /dev/shm; fastdds and zenoh `shm` created
    /// files there.
    #[test]
    fn an_agent_refuses_transports_of_one_host() {
        for b in ["cyclonedds", "fastdds", "zenoh"] {
            let mut s = spec();
            (s.binding, s.peer_binding) = (b.into(), b.into());
            s.endpoint.transport = "shm".into();
            let e = check_setup(&mut s, &remote()).unwrap_err().to_string();
            assert!(
                e.starts_with(&format!("refused by the agent: --transport shm ({b}): shared memory works within one host only")),
                "{e}"
            );
            check_setup(&mut s, &SessionSettings::local()).unwrap();
        }
        let mut s = spec();
        (s.binding, s.peer_binding) = ("fastdds".into(), "fastdds".into());
        s.endpoint.transport = "udp+shm".into();
        check_setup(&mut s, &remote()).unwrap();
        assert_eq!(s.endpoint.transport, "udp");
        // A publisher on this host (a Perftest pair, an agent on loopback)
        // keeps shared memory.
        let here = SessionSettings {
            publisher_here: true,
            ..remote()
        };
        let mut s = spec();
        (s.binding, s.peer_binding) = ("cyclonedds".into(), "cyclonedds".into());
        s.endpoint.transport = "shm".into();
        check_setup(&mut s, &here).unwrap();
        let mut s = spec();
        (s.binding, s.peer_binding) = ("fastdds".into(), "fastdds".into());
        s.endpoint.transport = "udp+shm".into();
        check_setup(&mut s, &here).unwrap();
        assert_eq!(s.endpoint.transport, "udp+shm");
    }
}
