//! The bindings compiled into this build, by name.
//!
//! To add a binding: implement [`pubsubperf_core::Binding`] in its own crate,
//! add the crate as an optional dependency behind a cargo feature of this
//! crate, and add one line to [`with_binding!`] and one to [`infos`]. Nothing
//! else in the harness changes.

use crate::spec::RunSpec;
use pubsubperf_core::binding::BindingInfo;
use pubsubperf_core::sample::HEADER_LEN;
use pubsubperf_core::size::format_size;
use pubsubperf_core::{Binding, Reliability};

/// Runs `$body` with `$B` bound to the binding type named `$name`, or
/// evaluates `$unknown` when no such binding is compiled in.
#[macro_export]
macro_rules! with_binding {
    ($name:expr, $B:ident => $body:expr, unknown => $unknown:expr) => {
        match $name {
            #[cfg(feature = "raw")]
            "udp" => {
                type $B = pubsubperf_raw::Udp;
                $body
            }
            #[cfg(feature = "raw")]
            "tcp" => {
                type $B = pubsubperf_raw::Tcp;
                $body
            }
            #[cfg(feature = "raw")]
            "uds" => {
                type $B = pubsubperf_raw::Uds;
                $body
            }
            #[cfg(feature = "raw")]
            "intra" => {
                type $B = pubsubperf_raw::Intra;
                $body
            }
            #[cfg(feature = "shm")]
            "shm" => {
                type $B = pubsubperf_shm::Shm;
                $body
            }
            #[cfg(feature = "cyclonedds")]
            "cyclonedds" => {
                type $B = pubsubperf_cyclonedds::CycloneDds;
                $body
            }
            #[cfg(feature = "iceoryx")]
            "iceoryx" => {
                type $B = pubsubperf_iceoryx::Iceoryx;
                $body
            }
            #[cfg(feature = "fastdds")]
            "fastdds" => {
                type $B = pubsubperf_fastdds::FastDds;
                $body
            }
            #[cfg(feature = "zenoh")]
            "zenoh" => {
                type $B = pubsubperf_zenoh::Zenoh;
                $body
            }
            #[cfg(feature = "iceoryx2")]
            "iceoryx2" => {
                type $B = pubsubperf_iceoryx2::Iceoryx2;
                $body
            }
            #[cfg(feature = "mock")]
            "mock" => {
                type $B = pubsubperf_mock::Mock;
                $body
            }
            _ => $unknown,
        }
    };
}

/// Every binding compiled in, in the order `pubsubperf bindings` lists them.
pub fn infos() -> Vec<BindingInfo> {
    #[allow(unused_mut)]
    let mut v: Vec<BindingInfo> = Vec::new();
    #[cfg(feature = "raw")]
    {
        v.push(pubsubperf_raw::Udp::info());
        v.push(pubsubperf_raw::Tcp::info());
        v.push(pubsubperf_raw::Uds::info());
        v.push(pubsubperf_raw::Intra::info());
    }
    #[cfg(feature = "shm")]
    v.push(pubsubperf_shm::Shm::info());
    #[cfg(feature = "iceoryx2")]
    v.push(pubsubperf_iceoryx2::Iceoryx2::info());
    #[cfg(feature = "cyclonedds")]
    v.push(pubsubperf_cyclonedds::CycloneDds::info());
    #[cfg(feature = "iceoryx")]
    v.push(pubsubperf_iceoryx::Iceoryx::info());
    #[cfg(feature = "fastdds")]
    v.push(pubsubperf_fastdds::FastDds::info());
    #[cfg(feature = "zenoh")]
    v.push(pubsubperf_zenoh::Zenoh::info());
    #[cfg(feature = "mock")]
    v.push(pubsubperf_mock::Mock::info());
    v
}

/// True when the binding's clock is virtual ([`Binding::VIRTUAL_CLOCK`],
/// the `mock` binding): its figures are synthetic, so the main job's
/// comparison leaves it out.
pub fn synthetic(name: &str) -> bool {
    with_binding!(name, B => B::VIRTUAL_CLOCK, unknown => false)
}

/// The names of the bindings compiled in.
pub fn names() -> Vec<&'static str> {
    infos().iter().map(|i| i.name).collect()
}

/// True when the binding's readers take samples from writers in several
/// processes (`--publishers`).
pub fn multiple_publishers(name: &str) -> bool {
    with_binding!(name, B => B::multiple_publishers(), unknown => false)
}

/// The DDS QoS flags (`--history`, `--durability`, `--async`, `--domain`,
/// `--qos-file`, `--instances`) the binding maps.
pub fn qos_flags(name: &str) -> &'static [&'static str] {
    with_binding!(name, B => B::qos_flags(), unknown => &[])
}

/// Facts about one binding.
pub fn info(name: &str) -> Option<BindingInfo> {
    infos().into_iter().find(|i| i.name == name)
}

/// The error for an unknown binding name, listing the known ones.
pub fn unknown_binding(flag: &str, name: &str) -> String {
    format!(
        "{flag}: unknown binding '{name}' (known: {})",
        names().join(", ")
    )
}

/// Checks a run against the capabilities of its bindings before anything
/// runs. Each error names the option and what to do instead.
pub fn validate(spec: &RunSpec, remote: bool) -> Result<(), String> {
    for (flag, name) in [
        ("--binding", &spec.binding),
        ("--peer-binding", &spec.peer_binding),
    ] {
        let info = info(name).ok_or_else(|| unknown_binding(flag, name))?;
        if let Err(why) = &info.available {
            return Err(format!(
                "{flag} {name}: not available on this machine: {why}"
            ));
        }
        let c = &info.capabilities;
        let ep = &spec.endpoint;
        if !c.transports.contains(&ep.transport.as_str()) {
            return Err(format!(
                "--transport {}: {name} offers {}",
                ep.transport,
                c.transports.join(", ")
            ));
        }
        if ep.reliability == Reliability::Reliable && !c.reliable {
            return Err(format!(
                "--reliable: {name} is best effort only (use --best-effort, or tcp for a reliable baseline)"
            ));
        }
        if ep.reliability == Reliability::BestEffort && !c.best_effort {
            return Err(format!(
                "--best-effort: {name} is reliable only (use --reliable, or udp for a best-effort baseline)"
            ));
        }
        if ep.multicast && !c.multicast {
            return Err(format!(
                "--multicast: {name} has no multicast (bindings with it: udp)"
            ));
        }
        if ep.zero_copy && !c.zero_copy {
            return Err(format!("--zero-copy: {name} has no zero-copy path"));
        }
        if ep.batch_bytes > 0 && !c.batching {
            return Err(format!("--batch: {name} does not batch"));
        }
        if !c.data_types.contains(&ep.data_type) {
            return Err(format!(
                "--data-type {}: {name} offers {}",
                serde_json::to_value(ep.data_type)
                    .ok()
                    .and_then(|v| v.as_str().map(String::from))
                    .unwrap_or_default(),
                c.data_types
                    .iter()
                    .map(|d| serde_json::to_value(d)
                        .ok()
                        .and_then(|v| v.as_str().map(String::from))
                        .unwrap_or_default())
                    .collect::<Vec<_>>()
                    .join(", ")
            ));
        }
        if spec.subscribers > 1 && !c.multiple_subscribers {
            return Err(format!(
                "--subscribers {}: {name} supports one subscriber",
                spec.subscribers
            ));
        }
        if let Some(flag) = ep
            .qos_flags_set()
            .into_iter()
            .find(|f| !qos_flags(name).contains(f))
        {
            let with: Vec<&str> = names()
                .into_iter()
                .filter(|n| qos_flags(n).contains(&flag))
                .collect();
            return Err(format!(
                "{flag}: a DDS QoS, which {name} does not have (bindings with it: {})",
                if with.is_empty() {
                    "none in this build".to_string()
                } else {
                    with.join(", ")
                }
            ));
        }
        if remote && !c.remote {
            return Err(format!("--connect: {name} works within one host only"));
        }
        if remote && c.in_process {
            return Err(format!("--connect: {name} runs both sides in one process"));
        }
        if spec.size > c.max_sample_size {
            return Err(format!(
                "--size {}: exceeds {name}'s limit of {} bytes ({}); use a smaller size or a binding with a larger limit (see 'pubsubperf bindings')",
                spec.size,
                c.max_sample_size,
                format_size(c.max_sample_size)
            ));
        }
    }
    if spec.size < HEADER_LEN {
        return Err(format!(
            "--size {}: the smallest sample is {HEADER_LEN} bytes (sequence number and timestamp)",
            spec.size
        ));
    }
    if spec.one_way && spec.size < HEADER_LEN + 8 {
        return Err(format!(
            "--one-way: needs --size of at least {} bytes",
            HEADER_LEN + 8
        ));
    }
    let name = spec.binding.as_str();
    with_binding!(name, B => B::validate(&spec.endpoint).map_err(|e| e.to_string())?, unknown => ());
    let peer = spec.peer_binding.as_str();
    with_binding!(peer, B => B::validate(&spec.endpoint).map_err(|e| e.to_string())?, unknown => ());
    Ok(())
}
