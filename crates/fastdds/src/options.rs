//! `--opt KEY=VALUE` options of the `fastdds` binding, parsed once at
//! `validate`/`open` into [`Options`].
//!
//! Keys (also accepted with a `fastdds.` prefix; keys with another binding's
//! prefix, such as `cyclonedds.x`, are left to that binding so that
//! cross-vendor runs can carry options for both sides):
//! - `history=keep-last:N|keep-all`: history of writers and readers
//!   (default: keep-all under reliable, keep-last under best effort; depth
//!   from `--send-queue`/`--receive-queue`).
//! - `durability=volatile|transient-local` (default volatile).
//! - `domain=ID`: DDS domain id, 0-230 (default: derived from the run id,
//!   1-230, the same as the `cyclonedds` binding derives, so that concurrent
//!   runs do not meet and cross-vendor runs do).
//! - `qos-file=PATH`: Fast DDS XML profiles file; its default profiles are
//!   the starting point, the run's settings are applied over them.
//! - `async=true|false`: asynchronous publish mode (default false).
//! - `peers=IP[,IP...]`: extra initial peers (other hosts).

use pubsubperf_core::BindingError;
use std::collections::BTreeMap;

/// History kind requested with `history=`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum History {
    KeepLast(u32),
    KeepAll,
}

/// The parsed binding options.
#[derive(Debug, Clone, Default)]
pub struct Options {
    pub history: Option<History>,
    pub transient_local: bool,
    pub domain: Option<u32>,
    pub qos_file: Option<String>,
    pub async_publish: bool,
    pub peers: Vec<String>,
}

/// The keys this binding knows, for error messages.
pub const KEYS: &str = "history, durability, domain, qos-file, async, peers";

fn bad(key: &str, value: &str, why: &str) -> BindingError {
    BindingError::Unsupported(format!("--opt {key}={value}: {why}"))
}

fn parse_bool(key: &str, v: &str) -> Result<bool, BindingError> {
    match v {
        "true" | "1" | "yes" | "on" => Ok(true),
        "false" | "0" | "no" | "off" => Ok(false),
        _ => Err(bad(key, v, "expected true or false")),
    }
}

/// Largest domain id (ports 7400 + 250 × domain + ... stay below 65536).
pub const MAX_DOMAIN: u32 = 230;

impl Options {
    /// The domain id: `domain=ID`, or 1-230 derived from the run id (FNV-1a,
    /// as the `cyclonedds` binding does).
    pub fn domain_id(&self, run_id: &str) -> u32 {
        self.domain.unwrap_or_else(|| {
            let mut h: u32 = 2166136261;
            for b in run_id.bytes() {
                h = (h ^ u32::from(b)).wrapping_mul(16777619);
            }
            1 + h % MAX_DOMAIN
        })
    }

    /// Parses the binding's keys out of `--opt` options.
    pub fn parse(opts: &BTreeMap<String, String>) -> Result<Options, BindingError> {
        let mut o = Options::default();
        for (raw_key, v) in opts {
            let key = match raw_key.split_once('.') {
                Some(("fastdds", k)) => k,
                Some(_) => continue, // another binding's option
                None => raw_key.as_str(),
            };
            match key {
                "history" => {
                    o.history = Some(if v == "keep-all" {
                        History::KeepAll
                    } else if let Some(n) = v.strip_prefix("keep-last:") {
                        let n: u32 = n
                            .parse()
                            .ok()
                            .filter(|n| *n >= 1 && *n <= 1_000_000)
                            .ok_or_else(|| bad(raw_key, v, "depth must be 1-1000000"))?;
                        History::KeepLast(n)
                    } else {
                        return Err(bad(raw_key, v, "expected keep-last:N or keep-all"));
                    });
                }
                "durability" => {
                    o.transient_local = match v.as_str() {
                        "volatile" => false,
                        "transient-local" => true,
                        _ => return Err(bad(raw_key, v, "expected volatile or transient-local")),
                    }
                }
                "domain" => {
                    o.domain = Some(
                        v.parse()
                            .ok()
                            .filter(|d| *d <= MAX_DOMAIN)
                            .ok_or_else(|| bad(raw_key, v, "expected a domain id 0-230"))?,
                    );
                }
                "qos-file" => {
                    if !std::path::Path::new(v).is_file() {
                        return Err(bad(raw_key, v, "no such file"));
                    }
                    o.qos_file = Some(v.clone());
                }
                "async" => o.async_publish = parse_bool(raw_key, v)?,
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
                    return Err(BindingError::Unsupported(format!(
                        "--opt {raw_key}: unknown option of fastdds (known: {KEYS})"
                    )));
                }
            }
        }
        Ok(o)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(kv: &[(&str, &str)]) -> Result<Options, BindingError> {
        Options::parse(
            &kv.iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
        )
    }

    #[test]
    fn known_keys() {
        let o = parse(&[
            ("history", "keep-last:8"),
            ("durability", "transient-local"),
            ("fastdds.domain", "7"),
            ("async", "true"),
            ("peers", "10.0.0.1,10.0.0.2"),
        ])
        .unwrap();
        assert_eq!(o.history, Some(History::KeepLast(8)));
        assert!(o.transient_local && o.async_publish);
        assert_eq!(o.domain_id("x"), 7);
        assert!((1..=230).contains(&Options::default().domain_id("run")));
        assert_eq!(o.peers.len(), 2);
        assert_eq!(
            parse(&[("history", "keep-all")]).unwrap().history,
            Some(History::KeepAll)
        );
    }

    #[test]
    fn errors_name_the_option() {
        for (k, v) in [
            ("colour", "red"),
            ("history", "keep-some"),
            ("domain", "400"),
            ("qos-file", "/nonexistent.xml"),
            ("async", "maybe"),
        ] {
            let e = parse(&[(k, v)]).unwrap_err().to_string();
            assert!(e.starts_with(&format!("--opt {k}")), "{e}");
        }
    }

    #[test]
    fn other_bindings_keys_are_left_alone() {
        assert!(parse(&[("cyclonedds.whatever", "1")]).is_ok());
    }
}
