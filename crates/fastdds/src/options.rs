//! The settings of the `fastdds` binding: the DDS QoS flags of
//! [`EndpointConfig`] (`--history`, `--durability`, `--async`, `--domain`,
//! `--qos-file`, `--instances`) and its `--opt KEY=VALUE` options, parsed
//! once at `validate`/`open` into [`Options`].
//!
//! Keys (also accepted with a `fastdds.` prefix; keys with another binding's
//! prefix, such as `cyclonedds.x`, are left to that binding so that
//! cross-vendor runs can carry options for both sides):
//! - `peers=IP[,IP...]`: extra initial peers (other hosts).
//!
//! The former keys `history`, `durability`, `domain`, `qos-file` and `async`
//! are flags now; given as `--opt`, they are refused with the flag's name.

use pubsubperf_core::{BindingError, Durability, EndpointConfig};

pub use pubsubperf_core::History;

/// The parsed settings.
#[derive(Debug, Clone, Default)]
pub struct Options {
    /// `--history` (None: keep-all if reliable, else keep-last).
    pub history: Option<History>,
    /// `--durability transient-local`.
    pub transient_local: bool,
    /// `--domain` (None: derived from the run id).
    pub domain: Option<u32>,
    /// `--qos-file`: a Fast DDS XML profiles file, its path checked
    /// ([`pubsubperf_core::binding::check_vendor_path`]).
    pub qos_file: Option<String>,
    /// `--async`: ASYNCHRONOUS_PUBLISH_MODE.
    pub async_publish: bool,
    /// `peers=`: extra initial peers.
    pub peers: Vec<String>,
}

/// The keys this binding knows, for error messages.
pub const KEYS: &str = "peers";

/// `--opt` keys that became flags, with the flag.
const MOVED: [(&str, &str); 5] = [
    ("history", "--history"),
    ("durability", "--durability"),
    ("domain", "--domain"),
    ("qos-file", "--qos-file"),
    ("async", "--async"),
];

fn bad(key: &str, value: &str, why: &str) -> BindingError {
    BindingError::Unsupported(format!("--opt {key}={value}: {why}"))
}

/// Largest domain id (ports 7400 + 250 × domain + ... stay below 65536).
pub const MAX_DOMAIN: u32 = 230;

impl Options {
    /// The domain id: `--domain`, or 1-230 derived from the run id (FNV-1a,
    /// as the `cyclonedds` binding does).
    pub fn domain_id(&self, run_id: &str) -> u32 {
        self.domain
            .unwrap_or_else(|| pubsubperf_core::dds::domain(run_id, MAX_DOMAIN))
    }

    /// Reads the QoS flags of `cfg` and parses the binding's keys out of
    /// its `--opt` options.
    pub fn parse(cfg: &EndpointConfig) -> Result<Options, BindingError> {
        if let Some(d) = cfg.domain
            && d > MAX_DOMAIN
        {
            return Err(BindingError::Unsupported(format!(
                "--domain {d}: fastdds domain ids are 0-{MAX_DOMAIN}"
            )));
        }
        let mut o = Options {
            history: cfg.history,
            transient_local: cfg.durability == Some(Durability::TransientLocal),
            domain: cfg.domain,
            qos_file: cfg.vendor_file()?.map(String::from),
            async_publish: cfg.async_publish,
            peers: Vec::new(),
        };
        for (raw_key, v) in &cfg.options {
            let key = match raw_key.split_once('.') {
                Some(("fastdds", k)) => k,
                Some(_) => continue, // another binding's option
                None => raw_key.as_str(),
            };
            match key {
                "peers" => {
                    for p in v.split(',').map(str::trim).filter(|p| !p.is_empty()) {
                        if p.parse::<std::net::Ipv4Addr>().is_err() {
                            return Err(bad(
                                raw_key,
                                v,
                                "expected IPv4 addresses, comma separated",
                            ));
                        }
                        o.peers.push(p.to_string());
                    }
                }
                _ => {
                    if let Some((_, flag)) = MOVED.iter().find(|(k, _)| *k == key) {
                        return Err(BindingError::Unsupported(format!(
                            "--opt {raw_key}: now a flag, use {flag}"
                        )));
                    }
                    return Err(BindingError::Unsupported(format!(
                        "--opt {raw_key}: unknown option of fastdds (known: {KEYS})"
                    )));
                }
            }
        }
        // A session from the network discovers by unicast to the
        // addresses it is held to: initial peers, so that Fast DDS sends no
        // SPDP to its metatraffic multicast group (239.255.0.1).
        for ip in held_peers(cfg) {
            if !o.peers.contains(&ip) {
                o.peers.push(ip);
            }
        }
        Ok(o)
    }
}

/// The IPv4 addresses of [`EndpointConfig::held_discovery`] (this
/// binding's transports are IPv4 only).
pub(crate) fn held_peers(cfg: &EndpointConfig) -> Vec<String> {
    cfg.held_discovery
        .iter()
        .flatten()
        .filter(|ip| ip.is_ipv4())
        .map(|ip| ip.to_string())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(kv: &[(&str, &str)]) -> Result<Options, BindingError> {
        let mut c = EndpointConfig::for_test("opts");
        c.options = kv
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        Options::parse(&c)
    }

    #[test]
    fn flags_and_keys() {
        let mut c = EndpointConfig::for_test("opts");
        c.history = Some(History::KeepLast(8));
        c.durability = Some(Durability::TransientLocal);
        c.domain = Some(7);
        c.async_publish = true;
        c.options.insert("peers".into(), "10.0.0.1,10.0.0.2".into());
        let o = Options::parse(&c).unwrap();
        assert_eq!(o.history, Some(History::KeepLast(8)));
        assert!(o.transient_local && o.async_publish);
        assert_eq!(o.domain_id("x"), 7);
        assert!((1..=230).contains(&Options::default().domain_id("run")));
        assert_eq!(o.peers.len(), 2);
        c.domain = Some(400);
        let e = Options::parse(&c).unwrap_err().to_string();
        assert!(e.starts_with("--domain 400"), "{e}");
    }

    #[test]
    fn errors_name_the_option() {
        for (k, v) in [("colour", "red"), ("peers", "x.y")] {
            let e = parse(&[(k, v)]).unwrap_err().to_string();
            assert!(e.starts_with(&format!("--opt {k}")), "{e}");
        }
        let e = parse(&[("fastdds.async", "true")]).unwrap_err().to_string();
        assert_eq!(e, "--opt fastdds.async: now a flag, use --async");
    }

    #[test]
    fn the_qos_file_is_an_absolute_plain_path() {
        let mut c = EndpointConfig::for_test("opts");
        c.qos_file = Some("/etc/fastdds/profiles.xml".into());
        assert_eq!(
            Options::parse(&c).unwrap().qos_file.as_deref(),
            Some("/etc/fastdds/profiles.xml")
        );
        for bad in ["profiles.xml", "/a/../b.xml", "/dev/null,<x/>"] {
            c.qos_file = Some(bad.into());
            let e = Options::parse(&c).unwrap_err().to_string();
            assert!(e.starts_with("--qos-file "), "{e}");
        }
    }

    /// A session from the network's held addresses become initial peers
    /// (Fast DDS sent SPDP to 239.255.0.1 without them).
    #[test]
    fn held_discovery_becomes_the_initial_peers() {
        let mut c = EndpointConfig::for_test("opts");
        c.options.insert("peers".into(), "10.0.0.1".into());
        c.held_discovery = Some(vec![
            "10.0.0.1".parse().unwrap(),
            "198.18.0.1".parse().unwrap(),
            "fd00::1".parse().unwrap(),
        ]);
        assert_eq!(
            Options::parse(&c).unwrap().peers,
            ["10.0.0.1", "198.18.0.1"]
        );
    }

    #[test]
    fn other_bindings_keys_are_left_alone() {
        assert!(parse(&[("cyclonedds.whatever", "1")]).is_ok());
    }
}
