//! Where a session from the network may make this host send data: to the
//! publisher it came from (the control connection's peer, or over SSH the
//! publisher's address the SSH connection names) and to the addresses the
//! agent lists (`--allow-destination`), never to an address the publisher
//! merely names. Otherwise a publisher holding the token could turn the
//! agent into a flood or a reflector aimed at a third host.
//!
//! A locator is checked by the addresses written in it (`198.18.0.1:40001`,
//! `tcp/198.18.0.1:7447`, `[fd00::1]:7400`); a locator naming none (a DDS
//! topic, found by discovery) names no destination. A multicast group is
//! a destination too: allowed only when listed ([`crate::multicast`]).

use crate::Fault;
use std::net::{IpAddr, SocketAddr};

/// The addresses a session's data may go to.
#[derive(Debug, Clone, Default)]
pub struct Destinations {
    /// None: anywhere (the subscribers a publisher starts on its own host).
    allowed: Option<Vec<IpAddr>>,
}

impl Destinations {
    /// No restriction.
    pub fn anywhere() -> Destinations {
        Destinations { allowed: None }
    }

    /// Only `ips` (multicast groups included).
    pub fn only(ips: Vec<IpAddr>) -> Destinations {
        Destinations { allowed: Some(ips) }
    }

    /// These destinations and `ip` (the agent's own multicast group).
    pub fn also(mut self, ip: Option<IpAddr>) -> Destinations {
        if let (Some(allowed), Some(ip)) = (&mut self.allowed, ip) {
            allowed.push(ip);
        }
        self
    }

    /// The unicast addresses allowed (None: anywhere): where a session's
    /// middleware may send discovery ([`EndpointConfig::held_discovery`]).
    ///
    /// [`EndpointConfig::held_discovery`]: pubsubperf_core::EndpointConfig::held_discovery
    pub fn unicast(&self) -> Option<Vec<IpAddr>> {
        self.allowed.as_ref().map(|a| {
            let mut u: Vec<IpAddr> = a.iter().filter(|ip| !ip.is_multicast()).copied().collect();
            u.dedup();
            u
        })
    }

    /// Refuses `locator` when it names an address not allowed; `what` says
    /// whose locator it is.
    pub fn check(&self, what: &str, locator: &str) -> Result<(), Fault> {
        let Some(allowed) = &self.allowed else {
            return Ok(());
        };
        for ip in ips_in(locator) {
            if allowed.contains(&ip) {
                continue;
            }
            if ip.is_multicast() {
                return Err(Fault::Config(format!(
                    "refused by the agent: {what} {} is a multicast group this agent does not allow; start the agent with --allow-destination {ip} to allow it",
                    crate::escape::printable(locator, 100)
                )));
            }
            return Err(Fault::Config(format!(
                "refused by the agent: {what} {} is not the publisher's address ({}); it sends data only to the publisher, and to the addresses of its --allow-destination",
                crate::escape::printable(locator, 100),
                allowed
                    .iter()
                    .filter(|a| !a.is_multicast())
                    .map(|a| a.to_string())
                    .collect::<Vec<_>>()
                    .join(", ")
            )));
        }
        Ok(())
    }
}

impl Destinations {
    /// Refuses a list of discovery peers (`--opt peers=`) naming an
    /// address not allowed; loopback and this host's own addresses (`own`)
    /// pass: a middleware's discovery to itself goes nowhere else.
    pub fn check_peers(&self, what: &str, list: &str, own: &[IpAddr]) -> Result<(), Fault> {
        for ip in ips_in(list) {
            if !ip.is_loopback() && !own.contains(&ip) {
                self.check(what, &ip.to_string())?;
            }
        }
        Ok(())
    }
}

/// The IP addresses written in `locator`.
fn ips_in(locator: &str) -> Vec<IpAddr> {
    locator
        .split(|c: char| c == '/' || c == ',' || c == '@' || c == '=' || c.is_whitespace())
        .filter_map(|t| {
            t.parse::<SocketAddr>()
                .map(|a| a.ip())
                .or_else(|_| t.parse::<IpAddr>())
                .ok()
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_publisher_and_listed_addresses_pass() {
        let d = Destinations::only(vec!["198.18.0.1".parse().unwrap()]);
        for ok in [
            "198.18.0.1:40001",
            "tcp/198.18.0.1:7447",
            "pubsubperf_echo0_r1",
        ] {
            assert!(d.check("the echo locator", ok).is_ok(), "{ok}");
        }
        // A multicast group only when listed (a PubSetup to 224.0.0.1
        // was sent before).
        for group in ["224.0.0.1:40001", "239.255.0.1:7400", "[ff02::1]:7400"] {
            let e = d
                .check("a subscriber's data locator", group)
                .unwrap_err()
                .to_string();
            assert!(e.contains("is a multicast group this agent does not allow; start the agent with --allow-destination"), "{e}");
        }
        let g = d.clone().also(Some("239.255.0.1".parse().unwrap()));
        assert!(g.check("x", "239.255.0.1:7400").is_ok());
        // Discovery goes to the unicast ones only.
        assert_eq!(g.unicast(), Some(vec!["198.18.0.1".parse().unwrap()]));
        assert_eq!(Destinations::anywhere().unicast(), None);
        for bad in [
            "198.18.0.9:40001",
            "udp/10.0.0.1:53",
            "[fd00::1]:7400",
            "10.0.0.1",
        ] {
            let e = d.check("the echo locator", bad).unwrap_err().to_string();
            assert!(e.contains("--allow-destination"), "{e}");
        }
        assert!(Destinations::anywhere().check("x", "10.0.0.1:1").is_ok());
    }

    /// Discovery peers are destinations (a token holder sent 357
    /// datagrams in 7 s to a third address through `--opt peers=`), but
    /// this host's own addresses and loopback are not.
    #[test]
    fn discovery_peers_are_held_to_the_destinations() {
        let d = Destinations::only(vec!["198.18.0.1".parse().unwrap()]);
        let own: Vec<IpAddr> = vec!["198.18.0.2".parse().unwrap()];
        assert!(
            d.check_peers("--opt peers=", "198.18.0.1, 198.18.0.2, 127.0.0.1", &own)
                .is_ok()
        );
        let e = d
            .check_peers("--opt peers=", "198.18.0.1, 203.0.113.9", &own)
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("203.0.113.9") && e.contains("--allow-destination"),
            "{e}"
        );
    }
}
