//! Multicast from a session from the network: a group is a destination
//! like any address ([`crate::destinations`]), so a run sends to a
//! multicast group only when the agent allows that group
//! (`--allow-destination GROUP`, or the agent's own `--multicast-address`),
//! and its datagrams leave with a TTL of 1 (this link) unless the agent
//! allows more (`--allow-multicast-ttl N`). Without this, a token holder's
//! PubSetup to 224.0.0.1 with TTL 255 at 10^9 samples/s of 65 000 B was
//! accepted and sent.
//!
//! What a run may name: `--multicast-address` (the group of its data), the
//! locators its writers send to, `--opt` values (checked as addresses by
//! [`crate::serve`]) and `--multicast-ttl`. A multicast run that names no
//! group would send to one derived from its run id (udp) or the vendor's,
//! which the agent cannot list in advance: it is refused, naming
//! `--multicast-address`.

use crate::Fault;
use crate::destinations::Destinations;
use crate::spec::RunSpec;

/// The TTL (IPv6: hop limit) of a network session's multicast unless the
/// agent allows more: this link only.
pub const DEFAULT_TTL: u8 = 1;

/// Checks the multicast of a run from the network against `destinations`
/// and the agent's TTL (`max_ttl`, `--allow-multicast-ttl`; None:
/// [`DEFAULT_TTL`]); a multicast run that asks no TTL gets
/// [`DEFAULT_TTL`] from the bindings that set one.
pub fn hold(
    spec: &mut RunSpec,
    destinations: &Destinations,
    max_ttl: Option<u8>,
) -> Result<(), Fault> {
    let refuse = |m: String| Err(Fault::Config(format!("refused by the agent: {m}")));
    let max = max_ttl.unwrap_or(DEFAULT_TTL);
    let ep = &mut spec.endpoint;
    match ep.multicast_ttl {
        Some(t) if t > max => {
            return refuse(format!(
                "--multicast-ttl {t} exceeds this agent's multicast TTL {max} (start the agent with --allow-multicast-ttl {t})"
            ));
        }
        Some(_) => {}
        None if ep.multicast
            && [&spec.binding, &spec.peer_binding]
                .iter()
                .all(|b| crate::registry::qos_flags(b).contains(&"--multicast-ttl")) =>
        {
            ep.multicast_ttl = Some(DEFAULT_TTL);
        }
        None => {}
    }
    match &ep.multicast_address {
        Some(g) => destinations.check("--multicast-address", g)?,
        None if ep.multicast => {
            return refuse(
                "--multicast without --multicast-address: a session from the network sends multicast only to a group this agent allows; give --multicast-address GROUP on the publisher and start the agent with --allow-destination GROUP (or --multicast-address GROUP)".into(),
            );
        }
        None => {}
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use pubsubperf_core::result::TestKind;
    use std::net::IpAddr;

    fn udp() -> RunSpec {
        let mut s = RunSpec::for_test("m1", TestKind::Throughput);
        (s.binding, s.peer_binding) = ("udp".into(), "udp".into());
        s.endpoint.multicast = true;
        s.endpoint.multicast_address = Some("239.255.65.1".into());
        s
    }

    fn allowing(groups: &[&str]) -> Destinations {
        let mut ips: Vec<IpAddr> = vec!["127.0.0.1".parse().unwrap()];
        ips.extend(groups.iter().map(|g| g.parse::<IpAddr>().unwrap()));
        Destinations::only(ips)
    }

    /// Why `s` is refused with 239.255.65.1 allowed and `max_ttl`.
    fn refused(s: &mut RunSpec, max_ttl: Option<u8>) -> String {
        hold(s, &allowing(&["239.255.65.1"]), max_ttl)
            .unwrap_err()
            .to_string()
    }

    #[test]
    fn a_group_the_agent_does_not_allow_is_refused() {
        let mut s = udp();
        s.endpoint.multicast_address = Some("224.0.0.1".into());
        let e = refused(&mut s, None);
        assert!(
            e.contains("--multicast-address 224.0.0.1")
                && e.contains("--allow-destination 224.0.0.1"),
            "{e}"
        );
        let mut s = udp();
        s.endpoint.multicast_address = None;
        let e = hold(&mut s, &allowing(&[]), None).unwrap_err().to_string();
        assert!(e.contains("--multicast without --multicast-address"), "{e}");
        let mut s = udp();
        hold(&mut s, &allowing(&["239.255.65.1"]), None).unwrap();
    }

    #[test]
    fn the_ttl_is_one_unless_the_agent_allows_more() {
        let mut s = udp();
        s.endpoint.multicast_ttl = Some(255);
        let e = refused(&mut s, None);
        assert!(
            e.contains("--multicast-ttl 255 exceeds this agent's multicast TTL 1")
                && e.contains("--allow-multicast-ttl 255"),
            "{e}"
        );
        let e = refused(&mut s, Some(4));
        assert!(e.contains("multicast TTL 4"), "{e}");
        s.endpoint.multicast_ttl = Some(4);
        hold(&mut s, &allowing(&["239.255.65.1"]), Some(4)).unwrap();
        // A run that asks none gets 1, not the middleware's default.
        let mut s = udp();
        hold(&mut s, &allowing(&["239.255.65.1"]), Some(4)).unwrap();
        assert_eq!(s.endpoint.multicast_ttl, Some(DEFAULT_TTL));
        // The subscribers a publisher starts itself are not held.
        let mut s = udp();
        s.endpoint.multicast_address = Some("224.0.0.1".into());
        s.endpoint.multicast_ttl = Some(255);
        hold(&mut s, &Destinations::anywhere(), Some(255)).unwrap();
    }
}
