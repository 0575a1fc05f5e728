//! Shared memory for a session from the network: what works within one
//! host only (shared-memory transports, zero-copy loans) would make the
//! agent's host create segments in /dev/shm, and cyclonedds's `shm` start
//! an iceoryx RouDi, for a peer on another host, which cannot use them. A
//! session from the network is refused them as it is refused a binding of
//! one host ([`crate::remote_check`]), with the transport named and why,
//! unless its publisher is on this host (a loopback address or one of this
//! host's: a Perftest or Throughput-example pair, an agent on loopback).
//!
//! A middleware's default of shared memory beside the network (`udp+shm`:
//! Fast DDS's builtin transports, Connext's default) runs over UDP only
//! there: across hosts its shared memory carries nothing, and on the
//! agent's host it would still allocate segments. The session prints that
//! deviation in the agent's log ([`network_transport`] returns it).

use pubsubperf_core::EndpointConfig;

/// What a middleware's `udp+shm` becomes in a session from the network.
const UDP_ONLY: &str = "udp";

/// Holds the transport of a run from the network to the network: refuses
/// a shared-memory transport, `--zero-copy` and any `--opt` naming shared
/// memory; turns `udp+shm` into `udp` and returns the line saying so.
/// `binding` is the binding that serves the run on this host.
pub fn network_transport(binding: &str, ep: &mut EndpointConfig) -> Result<Option<String>, String> {
    const WHY: &str = "shared memory works within one host only, and a session from the network would make this host create shared-memory segments (and cyclonedds start an iceoryx RouDi) for a peer that cannot use them";
    if ep.transport == "shm" {
        return Err(format!(
            "--transport shm ({binding}): {WHY}; use --transport udp (or tcp), or run both sides on one host"
        ));
    }
    if ep.zero_copy {
        return Err(format!(
            "--zero-copy ({binding}): loaned samples live in shared memory; {WHY}; drop --zero-copy"
        ));
    }
    if let Some((k, _)) = ep.options.iter().find(|(k, v)| names_shared_memory(k, v)) {
        return Err(format!("--opt {k}: {WHY}"));
    }
    if ep.transport == "udp+shm" {
        ep.transport = UDP_ONLY.into();
        return Ok(Some(format!(
            "--transport udp+shm ({binding}): this session from the network runs over udp only (shared memory works within one host; across hosts it carries nothing)"
        )));
    }
    Ok(None)
}

/// An `--opt` that asks for shared memory: its name or value says so
/// (no binding has one today; one added later is refused until it is
/// looked at).
fn names_shared_memory(key: &str, value: &str) -> bool {
    let said = |t: &str| {
        let t = t.to_ascii_lowercase();
        ["shm", "shared", "zero-copy", "zero_copy", "loan", "iceoryx"]
            .iter()
            .any(|w| t.contains(w))
    };
    said(key) || said(value)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ep(transport: &str) -> EndpointConfig {
        let mut e = EndpointConfig::for_test("t");
        e.transport = transport.into();
        e
    }

    #[test]
    fn shared_memory_is_refused_naming_the_transport_and_why() {
        for b in ["cyclonedds", "fastdds", "zenoh", "connext"] {
            let e = network_transport(b, &mut ep("shm")).unwrap_err();
            assert!(
                e.starts_with(&format!(
                    "--transport shm ({b}): shared memory works within one host only"
                )),
                "{e}"
            );
        }
        let mut z = ep("shm");
        z.transport = "tcp".into();
        z.zero_copy = true;
        let e = network_transport("zenoh", &mut z).unwrap_err();
        assert!(e.starts_with("--zero-copy (zenoh): "), "{e}");
        let mut o = ep("udp");
        o.options.insert("transport".into(), "shm".into());
        let e = network_transport("fastdds", &mut o).unwrap_err();
        assert!(e.starts_with("--opt transport: shared memory"), "{e}");
    }

    #[test]
    fn udp_and_shm_runs_over_udp_and_says_so() {
        let mut e = ep("udp+shm");
        let note = network_transport("fastdds", &mut e).unwrap().unwrap();
        assert_eq!(e.transport, "udp");
        assert!(note.contains("runs over udp only"), "{note}");
        for t in ["udp", "tcp"] {
            let mut e = ep(t);
            assert_eq!(network_transport("zenoh", &mut e), Ok(None));
            assert_eq!(e.transport, t);
        }
    }
}
