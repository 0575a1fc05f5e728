//! The binding table: every binding of the project, one row each.
//!
//! The [`bindings!`] invocation below is the only list of bindings. It
//! generates the dispatch ([`with_binding!`]: a name to a type), the list of
//! every binding's name ([`ALL`]) and the capability list of the bindings
//! compiled in ([`infos`]). Each row is gated by the cargo feature of the
//! same name, so adding a middleware is:
//!
//! 1. one crate implementing [`pubsubperf_core::Binding`] (`crates/NAME`);
//! 2. one feature in this crate's `Cargo.toml` (`NAME = ["dep:CRATE"]`, the
//!    optional dependency, and the name in `default`);
//! 3. one row here.
//!
//! `docs/architecture.md` walks through it; the test `the_table_agrees` in
//! `crates/harness/tests/registry.rs` checks that the rows, the features and
//! `pubsubperf bindings` agree.

use crate::spec::RunSpec;
use pubsubperf_core::binding::BindingInfo;
use pubsubperf_core::received::HEAD_LEN;
use pubsubperf_core::sample::HEADER_LEN;
use pubsubperf_core::size::format_size;
use pubsubperf_core::{Binding, Reliability, WireProtocol};
use std::time::Duration;

/// Generates the dispatch macro, [`ALL`] and [`infos`] from rows of
/// `"name" => Type`, each gated by the cargo feature `"name"`. The leading
/// `$` is passed in so that the generated macro can have variables of its
/// own.
macro_rules! bindings {
    ($d:tt $( $name:literal => $ty:ty ),+ $(,)?) => {
        /// Runs `$body` with `$B` bound to the binding type named `$name`,
        /// or evaluates `$unknown` when no such binding is compiled in.
        macro_rules! with_binding {
            ($d n:expr, $d B:ident => $d body:expr, unknown => $d unknown:expr) => {
                match $d n {
                    $(
                        #[cfg(feature = $name)]
                        $name => {
                            type $d B = $ty;
                            $d body
                        }
                    )+
                    _ => $d unknown,
                }
            };
        }
        pub(crate) use with_binding;

        /// Every binding of the project, compiled into this build or not,
        /// in the order `pubsubperf bindings` lists them.
        pub const ALL: &[&str] = &[$($name),+];

        /// Every binding compiled in, in the order of [`ALL`].
        pub fn infos() -> Vec<BindingInfo> {
            vec![$(
                #[cfg(feature = $name)]
                <$ty>::info(),
            )+]
        }
    };
}

bindings! {$
    "udp" => pubsubperf_raw::Udp,
    "tcp" => pubsubperf_raw::Tcp,
    "uds" => pubsubperf_raw::Uds,
    "intra" => pubsubperf_raw::Intra,
    "shm" => pubsubperf_shm::Shm,
    "iceoryx2" => pubsubperf_iceoryx2::Iceoryx2,
    "cyclonedds" => pubsubperf_cyclonedds::CycloneDds,
    "iceoryx" => pubsubperf_iceoryx::Iceoryx,
    "fastdds" => pubsubperf_fastdds::FastDds,
    "zenoh" => pubsubperf_zenoh::Zenoh,
    "connext" => pubsubperf_connext::Connext,
    "mock" => pubsubperf_mock::Mock,
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

/// The standard wire protocol binding `name` speaks with other vendors'
/// bindings ([`Binding::wire_protocol`]); None for an unknown binding.
pub fn wire_protocol(name: &str) -> Option<WireProtocol> {
    with_binding!(name, B => B::wire_protocol(), unknown => None)
}

/// True when bindings `a` and `b` meet on the wire: both speak one
/// standard wire protocol (the DDS bindings' RTPS).
pub fn meet_on_the_wire(a: &str, b: &str) -> bool {
    wire_protocol(a).is_some_and(|p| wire_protocol(b) == Some(p))
}

/// The bindings compiled in that speak `protocol`, in the order of [`ALL`].
pub fn speaking(protocol: WireProtocol) -> Vec<&'static str> {
    names()
        .into_iter()
        .filter(|n| wire_protocol(n) == Some(protocol))
        .collect()
}

/// True when binding `name`, both sides on one host over `transport`,
/// runs on this host's own address rather than a loopback one
/// ([`Binding::prefers_host_address`]).
pub fn prefers_host_address(name: &str, transport: &str) -> bool {
    with_binding!(name, B => B::prefers_host_address(transport), unknown => false)
}

/// The DDS QoS flags (`--history`, `--durability`, `--async`, `--domain`,
/// `--qos-file`, `--instances`) the binding maps.
pub fn qos_flags(name: &str) -> &'static [&'static str] {
    with_binding!(name, B => B::qos_flags(), unknown => &[])
}

/// How long a reliable writer of binding `name` blocks without
/// `--max-blocking-time` ([`Binding::default_block_timeout`]).
pub fn default_block_timeout(name: &str) -> Duration {
    with_binding!(name, B => B::default_block_timeout(), unknown => pubsubperf_core::binding::DEFAULT_BLOCK_TIMEOUT)
}

/// `--transport` when not given, for binding `name` (publisher) and `peer`
/// (subscribers): [`Binding::default_transport`] of `name`; between two
/// different bindings (a cross-vendor run, RTPS on the wire) `udp` where
/// both offer it (their shared-memory transports do not meet), else the
/// first of `name`'s transports that `peer` offers.
pub fn default_transport(name: &str, peer: &str, multicast: bool) -> String {
    let own = with_binding!(name, B => B::default_transport(multicast), unknown => "");
    if peer == name {
        return own.to_string();
    }
    let offers = |n: &str| info(n).map_or(&[][..], |i| i.capabilities.transports);
    let (ours, theirs) = (offers(name), offers(peer));
    if ours.contains(&"udp") && theirs.contains(&"udp") {
        return "udp".into();
    }
    ours.iter()
        .find(|t| theirs.contains(t))
        .unwrap_or(&own)
        .to_string()
}

/// `of(name)` when `of(peer)` is the same, else `otherwise`: the defaults
/// of a vendor's tool hold for a pair of bindings only where both sides
/// have them (a mixed pair is no vendor tool's run).
fn alike<T: PartialEq>(name: &str, peer: &str, of: impl Fn(&str) -> T, otherwise: T) -> T {
    let ours = of(name);
    if of(peer) == ours { ours } else { otherwise }
}

/// `--batch` when not given, for binding `name` (publisher) and `peer`
/// (subscribers): [`Binding::default_batch`] when both sides batch alike,
/// else none.
pub fn default_batch(
    name: &str,
    peer: &str,
    test: pubsubperf_core::result::TestKind,
    cfg: &pubsubperf_core::EndpointConfig,
) -> usize {
    let of = |n: &str| with_binding!(n, B => B::default_batch(test, cfg), unknown => 0);
    alike(name, peer, of, 0)
}

/// `--wait` when not given: [`Binding::default_wait`] of `name` when
/// `peer` waits alike, else blocking.
pub fn default_wait(
    name: &str,
    peer: &str,
    test: pubsubperf_core::result::TestKind,
) -> pubsubperf_core::WaitMode {
    use pubsubperf_core::WaitMode;
    let of = |n: &str| with_binding!(n, B => B::default_wait(test), unknown => WaitMode::Block);
    alike(name, peer, of, WaitMode::Block)
}

/// `--zero-copy` when not given: [`Binding::default_zero_copy`] of `name`
/// when `peer` loans alike, else false.
pub fn default_zero_copy(name: &str, peer: &str, test: pubsubperf_core::result::TestKind) -> bool {
    let of = |n: &str| with_binding!(n, B => B::default_zero_copy(test), unknown => false);
    alike(name, peer, of, false)
}

/// [`Binding::deviations`] of binding `name` (publisher) for a run of
/// `test` over `cfg`, and those of `peer` (subscribers) marked `sub:` where
/// they differ.
pub fn deviations(
    name: &str,
    peer: &str,
    test: pubsubperf_core::result::TestKind,
    cfg: &pubsubperf_core::EndpointConfig,
) -> Vec<String> {
    let of = |n: &str| with_binding!(n, B => B::deviations(test, cfg), unknown => Vec::new());
    let mut d = of(name);
    if peer != name {
        d.extend(
            of(peer)
                .into_iter()
                .filter(|x| !d.contains(x))
                .map(|x| format!("sub: {x}"))
                .collect::<Vec<_>>(),
        );
    }
    d
}

/// The lines [`Binding::deviations`] of binding `name` adds for a run over
/// `cfg` because a session from the network holds its discovery
/// ([`pubsubperf_core::EndpointConfig::held_discovery`]); none otherwise.
pub fn held_deviations(
    name: &str,
    test: pubsubperf_core::result::TestKind,
    cfg: &pubsubperf_core::EndpointConfig,
) -> Vec<String> {
    if cfg.held_discovery.is_none() {
        return Vec::new();
    }
    let of = |c: &pubsubperf_core::EndpointConfig| with_binding!(name, B => B::deviations(test, c), unknown => Vec::new());
    let plain = pubsubperf_core::EndpointConfig {
        held_discovery: None,
        ..cfg.clone()
    };
    let before = of(&plain);
    of(cfg)
        .into_iter()
        .filter(|d| !before.contains(d))
        .collect()
}

/// Facts about one binding.
pub fn info(name: &str) -> Option<BindingInfo> {
    with_binding!(name, B => Some(B::info()), unknown => None)
}

/// The error for a binding name that is not in this build: one the table
/// has but this build left out (its cargo feature), or an unknown one.
pub fn unknown_binding(flag: &str, name: &str) -> String {
    if ALL.contains(&name) {
        format!(
            "{flag}: binding '{name}' is not compiled into this build (rebuild with the cargo feature pubsubperf-harness/{name}; in this build: {})",
            names().join(", ")
        )
    } else {
        format!(
            "{flag}: unknown binding '{name}' (known: {})",
            names().join(", ")
        )
    }
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
            let with: Vec<&str> = names()
                .into_iter()
                .filter(|n| self::info(n).is_some_and(|i| i.capabilities.multicast))
                .collect();
            return Err(format!(
                "--multicast: {name} has no multicast (bindings with it: {})",
                with.join(", ")
            ));
        }
        let why_not = |flag| with_binding!(name.as_str(), B => B::why_not(flag), unknown => None);
        if ep.zero_copy && !c.zero_copy {
            return Err(match why_not("--zero-copy") {
                Some(why) => format!("--zero-copy: {why}"),
                None => format!("--zero-copy: {name} has no zero-copy path"),
            });
        }
        if ep.batch_bytes > 0 && !c.batching {
            return Err(match why_not("--batch") {
                Some(why) => format!("--batch {}: {why}", ep.batch_bytes),
                None => format!("--batch: {name} does not batch"),
            });
        }
        if !c.data_types.contains(&ep.data_type) {
            if let Some(why) = why_not("--data-type") {
                return Err(format!("--data-type: {why}"));
            }
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
            if let Some(why) = with_binding!(name.as_str(), B => B::why_not(flag), unknown => None)
            {
                return Err(format!("{flag}: {why}"));
            }
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
            "--size {}: the smallest sample is {HEADER_LEN} bytes (its header: sequence number, timestamp, the run's key)",
            spec.size
        ));
    }
    if spec.one_way && spec.size < HEAD_LEN {
        return Err(format!(
            "--one-way: needs --size of at least {HEAD_LEN} bytes"
        ));
    }
    let name = spec.binding.as_str();
    with_binding!(name, B => B::validate(&spec.endpoint).map_err(|e| e.to_string())?, unknown => ());
    let peer = spec.peer_binding.as_str();
    with_binding!(peer, B => B::validate(&spec.endpoint).map_err(|e| e.to_string())?, unknown => ());
    Ok(())
}
