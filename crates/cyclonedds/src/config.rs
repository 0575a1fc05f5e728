//! The binding's settings (the DDS QoS flags of [`EndpointConfig`] and the
//! `--opt KEY=VALUE` options) and the CycloneDDS domain configuration (XML)
//! generated from them and from the run's settings.

use crate::malloc::Malloc;
use pubsubperf_core::{BindingError, Durability, EndpointConfig};
use quick_xml::Writer;
use quick_xml::events::{BytesEnd, BytesStart, BytesText, Event};
use std::net::{IpAddr, Ipv4Addr};

pub use pubsubperf_core::History;

/// The option keys, as listed in errors and docs.
pub const KEYS: &str = "peers, malloc";

/// The flags of [`pubsubperf_core::binding::QOS_FLAGS`] this binding maps:
/// the six QoS flags, `--multicast-ttl` and `--multicast-address`.
pub const QOS_FLAGS: &[&str] = pubsubperf_core::binding::QOS_FLAGS.split_at(8).0;

/// Why CycloneDDS 0.10 (the OSS release) lacks one of the other flags.
pub fn why_not(flag: &str) -> Option<&'static str> {
    Some(match flag {
        "--no-positive-acks" => {
            "CycloneDDS 0.10 has no QoS to turn positive acknowledgements off (a Fast DDS and Connext feature; use -b fastdds)"
        }
        "--bandwidth-limit" => {
            "CycloneDDS 0.10 (OSS) has no flow controller or bandwidth limit (use -b fastdds, or --rate)"
        }
        "--no-push-on-write" => {
            "CycloneDDS 0.10 always pushes samples on write (pull-mode reliability is a Connext feature)"
        }
        _ => return None,
    })
}

/// CycloneDDS 0.10's default General/MaxMessageSize: the packet a batched
/// writer fills when `--batch` is not given (`ddsperf pub`'s batches).
pub const DEFAULT_MAX_MESSAGE: usize = 14_720;

/// Smallest and largest `--batch BYTES`: the batch is a packet of at most
/// BYTES (General/MaxMessageSize), so it must hold a fragment (1344 B by
/// default, plus headers) and fit a UDP datagram.
pub const BATCH_MIN: usize = 2048;
/// See [`BATCH_MIN`].
pub const BATCH_MAX: usize = 65_000;

/// `--batch BYTES`: UDP only, within [`BATCH_MIN`]..=[`BATCH_MAX`].
pub fn check_batch(cfg: &EndpointConfig) -> Result<(), BindingError> {
    let b = cfg.batch_bytes;
    if b == 0 {
        return Ok(());
    }
    if cfg.transport != "udp" {
        return Err(BindingError::Unsupported(format!(
            "--batch {b}: cyclonedds batches over --transport udp only (shm hands each sample over in its own chunk)"
        )));
    }
    if !(BATCH_MIN..=BATCH_MAX).contains(&b) {
        return Err(BindingError::Unsupported(format!(
            "--batch {b}: cyclonedds batches into one UDP packet of {BATCH_MIN}-{BATCH_MAX} bytes (its General/MaxMessageSize)"
        )));
    }
    Ok(())
}

/// The binding's settings, parsed and checked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Opts {
    /// `--history` (None: the binding's default).
    pub history: Option<History>,
    /// `--durability transient-local` (default volatile).
    pub transient_local: bool,
    /// `--domain ID` (default: derived from the run id).
    pub domain: Option<u32>,
    /// `--qos-file PATH`: a CycloneDDS XML config applied over ours, its
    /// path checked ([`pubsubperf_core::binding::check_vendor_path`]).
    pub config_file: Option<String>,
    /// `--multicast-address`: the data's multicast group.
    pub multicast_address: Option<IpAddr>,
    /// `peers=IP[,IP...]`: unicast discovery peers (default: loopback, or
    /// multicast discovery on a non-loopback interface).
    pub peers: Vec<IpAddr>,
    /// `malloc=keep|default`: see [`crate::malloc`].
    pub malloc: Malloc,
    /// [`EndpointConfig::held_discovery`]: a session from the network
    /// discovers by unicast to these (and `peers`) only, with no SPDP
    /// multicast.
    pub held: Option<Vec<IpAddr>>,
}

fn bad(key: &str, value: &str, what: &str) -> BindingError {
    BindingError::Unsupported(format!("--opt {key}={value}: {what}"))
}

/// Largest domain id: CycloneDDS's ports are 7400 + 250 × domain + ..., below 65536.
pub const MAX_DOMAIN: u32 = 230;

/// `--opt` keys that became flags, with the flag.
const MOVED: [(&str, &str); 4] = [
    ("history", "--history"),
    ("durability", "--durability"),
    ("domain", "--domain"),
    ("config-file", "--qos-file"),
];

impl Opts {
    /// Reads the QoS flags of `cfg` and parses `cfg.options`; an unknown
    /// key or bad value names the flag or `--opt KEY`.
    pub fn parse(cfg: &EndpointConfig) -> Result<Opts, BindingError> {
        if let Some(d) = cfg.domain
            && d > MAX_DOMAIN
        {
            return Err(BindingError::Unsupported(format!(
                "--domain {d}: cyclonedds domain ids are 0-{MAX_DOMAIN}"
            )));
        }
        let mut o = Opts {
            history: cfg.history,
            transient_local: cfg.durability == Some(Durability::TransientLocal),
            domain: cfg.domain,
            config_file: cfg.vendor_file()?.map(String::from),
            multicast_address: cfg
                .multicast_address
                .as_deref()
                .map(|a| match a.parse::<IpAddr>() {
                    Ok(ip) if ip.is_multicast() => Ok(ip),
                    _ => Err(BindingError::Unsupported(format!(
                        "--multicast-address {}: not a multicast address (224.0.0.0/4)",
                        a.escape_debug()
                    ))),
                })
                .transpose()?,
            peers: Vec::new(),
            malloc: Malloc::default(),
            held: cfg.held_discovery.clone(),
        };
        for (k, v) in &cfg.options {
            match k.as_str() {
                "peers" => {
                    for p in v.split(',').filter(|p| !p.is_empty()) {
                        o.peers.push(
                            p.trim().parse().map_err(|_| {
                                bad(k, v, "expected IP addresses separated by commas")
                            })?,
                        );
                    }
                }
                "malloc" => {
                    o.malloc = Malloc::parse(v).ok_or_else(|| {
                        bad(k, v, "use keep (freed blocks of up to 32 MiB stay for reuse) or default (glibc's allocator as it is)")
                    })?;
                    if o.malloc == Malloc::Keep && !cfg!(target_env = "gnu") {
                        return Err(bad(
                            k,
                            v,
                            "this build's C library is not glibc, whose thresholds keep sets; use default",
                        ));
                    }
                }
                _ => {
                    if let Some((_, flag)) = MOVED.iter().find(|(key, _)| key == k) {
                        return Err(BindingError::Unsupported(format!(
                            "--opt {k}: now a flag, use {flag}"
                        )));
                    }
                    return Err(BindingError::Unsupported(format!(
                        "--opt {k}: unknown cyclonedds option (known: {KEYS})"
                    )));
                }
            }
        }
        Ok(o)
    }

    /// The domain id: `domain=ID`, or one derived from the run id so that
    /// concurrent runs on a host do not meet.
    pub fn domain_id(&self, run_id: &str) -> u32 {
        self.domain
            .unwrap_or_else(|| pubsubperf_core::dds::domain(run_id, MAX_DOMAIN))
    }
}

/// The address readers bind to: `cfg.bind_ip`, loopback when empty.
fn bind_address(cfg: &EndpointConfig) -> Result<IpAddr, BindingError> {
    if cfg.bind_ip.is_empty() {
        return Ok(Ipv4Addr::LOCALHOST.into());
    }
    cfg.bind_ip.parse().map_err(|_| {
        BindingError::Unsupported(format!(
            "--data-address {}: not an IP address",
            cfg.bind_ip.escape_debug()
        ))
    })
}

impl Opts {
    /// Discovery's unicast peers over `bind`: `--opt peers=` and, in a
    /// session from the network, the addresses it is held to; else
    /// loopback on loopback; on another interface without peers, none
    /// (SPDP multicast finds the remote host).
    pub fn peers_on(&self, bind: IpAddr) -> Vec<IpAddr> {
        if let Some(held) = &self.held {
            let mut p = self.peers.clone();
            p.extend(held.iter().filter(|ip| !self.peers.contains(ip)));
            p
        } else if !self.peers.is_empty() {
            self.peers.clone()
        } else if bind.is_loopback() {
            vec![Ipv4Addr::LOCALHOST.into()]
        } else {
            Vec::new()
        }
    }

    /// [`Opts::peers_on`] the run's bind address (none when it is not one).
    pub fn discovery_peers(&self, cfg: &EndpointConfig) -> Vec<IpAddr> {
        bind_address(cfg).map_or_else(|_| Vec::new(), |b| self.peers_on(b))
    }
}

/// The domain configuration for `dds_create_domain`: a list of entries
/// separated by commas, each an XML fragment or a file. Ours is one XML
/// fragment, written with an XML writer from typed values (addresses parsed
/// as IP addresses, numbers as numbers: nothing of the run's text goes into
/// it as text), followed by `file://` and the user's `--qos-file` when set
/// (later entries override earlier ones), a path [`Opts::parse`] checked
/// ([`pubsubperf_core::binding::check_vendor_path`]: no comma, no `<`).
pub fn domain_xml(cfg: &EndpointConfig, o: &Opts) -> Result<String, BindingError> {
    let shm = cfg.transport == "shm";
    let bind = bind_address(cfg)?;
    let peers = o.peers_on(bind);
    // A session from the network sends no SPDP multicast (CycloneDDS's
    // 239.255.0.1 with TTL 32): unicast discovery to its peers, and
    // multicast (to the run's group, held by the agent) for data only.
    let allow_multicast = match (cfg.multicast, peers.is_empty(), o.held.is_some()) {
        (true, _, true) => "asm",
        (true, _, false) => "true",
        (false, true, false) => "spdp",
        (false, _, _) => "false",
    };
    let mut x = Xml::new();
    x.open("General");
    x.open("Interfaces");
    // lo has no MULTICAST flag; --multicast forces multicast on it. With
    // --multicast-address the data goes to that group: CycloneDDS sends to
    // a single matched reader by unicast unless the interface prefers
    // multicast (0.10's General/PreferMulticast is deprecated and refused
    // beside Interfaces).
    let address = bind.to_string();
    let mut nic = vec![("address", address.as_str())];
    if cfg.multicast {
        nic.push(("multicast", "true"));
        if o.multicast_address.is_some() {
            nic.push(("prefer_multicast", "true"));
        }
    }
    x.empty("NetworkInterface", &nic);
    x.close("Interfaces");
    x.leaf("AllowMulticast", allow_multicast);
    if let Some(ttl) = cfg.multicast_ttl {
        x.leaf("MulticastTimeToLive", &ttl.to_string());
    }
    // --batch: writes collect in a packet of at most BYTES, sent when full
    // or on dds_write_flush (the writer's flush).
    if cfg.batch_bytes > 0 {
        x.leaf("MaxMessageSize", &format!("{}B", cfg.batch_bytes));
    }
    x.close("General");
    x.open("Discovery");
    x.leaf("ParticipantIndex", "auto");
    // Up to 64 subscribers and 64 publishers, each a participant, on one
    // host: 120 is the most the standard port mapping holds within a
    // domain's 250 ports (7400 + 250 d + 10 + 2 i, i < 120).
    x.leaf("MaxAutoParticipantIndex", "119");
    // The group of every traffic but participant discovery (SPDP keeps
    // CycloneDDS's 239.255.0.1, so discovery works as without it).
    if let Some(a) = o.multicast_address {
        x.leaf("DefaultMulticastAddress", &a.to_string());
    }
    if !peers.is_empty() {
        x.open("Peers");
        for p in &peers {
            x.empty("Peer", &[("address", p.to_string().as_str())]);
        }
        x.close("Peers");
    }
    x.close("Discovery");
    if cfg.socket_buffer > 0 || cfg.batch_bytes > 0 {
        x.open("Internal");
        if cfg.socket_buffer > 0 {
            let min = format!("{}B", cfg.socket_buffer);
            x.empty("SocketReceiveBufferSize", &[("min", min.as_str())]);
            x.empty("SocketSendBufferSize", &[("min", min.as_str())]);
        }
        if cfg.batch_bytes > 0 {
            x.leaf("WriteBatch", "true");
        }
        x.close("Internal");
    }
    x.open("SharedMemory");
    x.leaf("Enable", if shm { "true" } else { "false" });
    if shm {
        x.leaf("LogLevel", "warn");
    }
    x.close("SharedMemory");
    let mut list = vec![x.finish()];
    if let Some(f) = &o.config_file {
        list.push(format!("file://{f}"));
    }
    Ok(list.join(","))
}

/// An XML fragment (elements side by side, no root: CycloneDDS puts them
/// under its own) written by quick-xml, which escapes every text and
/// attribute value.
struct Xml(Writer<Vec<u8>>);

impl Xml {
    fn new() -> Xml {
        Xml(Writer::new(Vec::new()))
    }

    fn write(&mut self, e: Event<'_>) {
        // Writing to memory cannot fail.
        self.0.write_event(e).expect("writing XML to memory");
    }

    fn open(&mut self, name: &str) {
        self.write(Event::Start(BytesStart::new(name)));
    }

    fn close(&mut self, name: &str) {
        self.write(Event::End(BytesEnd::new(name)));
    }

    /// `<name>text</name>`.
    fn leaf(&mut self, name: &str, text: &str) {
        self.open(name);
        self.write(Event::Text(BytesText::new(text)));
        self.close(name);
    }

    /// `<name a="v" .../>`.
    fn empty(&mut self, name: &str, attrs: &[(&str, &str)]) {
        let mut e = BytesStart::new(name);
        for &a in attrs {
            e.push_attribute(a);
        }
        self.write(Event::Empty(e));
    }

    fn finish(self) -> String {
        String::from_utf8(self.0.into_inner()).expect("quick-xml writes UTF-8")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cfg() -> EndpointConfig {
        let mut c = EndpointConfig::for_test("t");
        c.transport = "udp".into();
        c
    }

    #[test]
    fn unknown_key_names_the_flag() {
        let mut c = cfg();
        c.options.insert("colour".into(), "blue".into());
        let e = Opts::parse(&c).unwrap_err().to_string();
        assert!(e.starts_with("--opt colour:"), "{e}");
    }

    #[test]
    fn parses_flags_and_keys() {
        let mut c = cfg();
        c.history = Some(History::KeepLast(8));
        c.durability = Some(Durability::TransientLocal);
        c.domain = Some(42);
        c.options.insert("peers".into(), "10.0.0.1,10.0.0.2".into());
        let o = Opts::parse(&c).unwrap();
        assert_eq!(o.history, Some(History::KeepLast(8)));
        assert!(o.transient_local);
        assert_eq!(o.domain_id("x"), 42);
        assert_eq!(o.peers.len(), 2);
        c.domain = Some(231);
        assert!(
            Opts::parse(&c)
                .unwrap_err()
                .to_string()
                .starts_with("--domain 231")
        );
    }

    #[test]
    fn malloc_takes_keep_or_default_and_refuses_others() {
        let mut c = cfg();
        assert_eq!(Opts::parse(&c).unwrap().malloc, Malloc::Keep);
        c.options.insert("malloc".into(), "default".into());
        assert_eq!(Opts::parse(&c).unwrap().malloc, Malloc::Default);
        c.options.insert("malloc".into(), "jemalloc".into());
        let e = Opts::parse(&c).unwrap_err().to_string();
        assert!(e.starts_with("--opt malloc=jemalloc: use keep"), "{e}");
    }

    #[test]
    fn moved_keys_name_their_flag() {
        let mut c = cfg();
        c.options.insert("config-file".into(), "/x.xml".into());
        let e = Opts::parse(&c).unwrap_err().to_string();
        assert_eq!(e, "--opt config-file: now a flag, use --qos-file");
    }

    #[test]
    fn loopback_config_has_no_multicast_and_a_peer() {
        let x = domain_xml(&cfg(), &Opts::parse(&cfg()).unwrap()).unwrap();
        assert!(x.contains("<AllowMulticast>false</AllowMulticast>"));
        assert!(x.contains("<Peer address=\"127.0.0.1\"/>"));
        assert!(x.contains("<Enable>false</Enable>"));
    }

    #[test]
    fn remote_interface_discovers_by_multicast() {
        let mut c = cfg();
        c.bind_ip = "192.168.1.5".into();
        let x = domain_xml(&c, &Opts::parse(&c).unwrap()).unwrap();
        assert!(x.contains("address=\"192.168.1.5\""));
        assert!(x.contains("<AllowMulticast>spdp</AllowMulticast>"));
    }

    /// A session from the network discovers by unicast to the addresses
    /// it is held to and sends no SPDP multicast, with `--multicast` too
    /// (SPDP went to 239.255.0.1 with TTL 32 whatever the agent allowed).
    #[test]
    fn held_discovery_is_unicast_to_the_held_addresses_only() {
        let mut c = cfg();
        c.bind_ip = "198.18.0.2".into();
        c.held_discovery = Some(vec!["198.18.0.1".parse().unwrap()]);
        let x = domain_xml(&c, &Opts::parse(&c).unwrap()).unwrap();
        assert!(x.contains("<AllowMulticast>false</AllowMulticast>"), "{x}");
        assert!(
            x.contains("<Peers><Peer address=\"198.18.0.1\"/></Peers>"),
            "{x}"
        );
        c.multicast = true;
        c.multicast_address = Some("239.255.65.1".into());
        c.multicast_ttl = Some(1);
        let x = domain_xml(&c, &Opts::parse(&c).unwrap()).unwrap();
        assert!(x.contains("<AllowMulticast>asm</AllowMulticast>"), "{x}");
        assert!(
            x.contains("<MulticastTimeToLive>1</MulticastTimeToLive>"),
            "{x}"
        );
        assert!(x.contains("<Peer address=\"198.18.0.1\"/>"), "{x}");
        // Without it (a local run), the vendor's SPDP multicast as before.
        c.held_discovery = None;
        let x = domain_xml(&c, &Opts::parse(&c).unwrap()).unwrap();
        assert!(
            x.contains("<AllowMulticast>true</AllowMulticast>") && !x.contains("<Peers>"),
            "{x}"
        );
    }

    #[test]
    fn batch_and_ttl_reach_the_domain_config() {
        let mut c = cfg();
        c.batch_bytes = 8192;
        c.multicast = true;
        c.multicast_ttl = Some(3);
        c.socket_buffer = 1 << 20;
        let x = domain_xml(&c, &Opts::parse(&c).unwrap()).unwrap();
        assert!(x.contains("<MaxMessageSize>8192B</MaxMessageSize>"), "{x}");
        assert!(x.contains("<WriteBatch>true</WriteBatch>"), "{x}");
        assert!(
            x.contains("<MulticastTimeToLive>3</MulticastTimeToLive>"),
            "{x}"
        );
        assert_eq!(x.matches("<Internal>").count(), 1, "{x}");
        let plain = domain_xml(&cfg(), &Opts::parse(&cfg()).unwrap()).unwrap();
        assert!(!plain.contains("WriteBatch") && !plain.contains("TimeToLive"));
        assert!(!plain.contains("DefaultMulticastAddress") && !plain.contains("prefer_multicast"));
    }

    #[test]
    fn multicast_address_is_the_data_group() {
        let mut c = cfg();
        c.multicast = true;
        c.multicast_address = Some("239.255.12.34".into());
        let x = domain_xml(&c, &Opts::parse(&c).unwrap()).unwrap();
        assert!(
            x.contains("<Discovery><ParticipantIndex>auto</ParticipantIndex><MaxAutoParticipantIndex>119</MaxAutoParticipantIndex><DefaultMulticastAddress>239.255.12.34</DefaultMulticastAddress>"),
            "{x}"
        );
        assert!(x.contains(" prefer_multicast=\"true\"/>"), "{x}");
        assert!(!x.contains("SPDPMulticastAddress"), "{x}");
    }

    /// The configuration is a list of entries separated by commas, each an
    /// XML fragment or a file: what reaches it from a run (its text, the
    /// publisher's, or a remote one's) is parsed or checked, never pasted.
    #[test]
    fn nothing_of_the_run_is_pasted_into_the_config() {
        let attack = "/dev/null,<Tracing><OutputFile>/some/file</OutputFile><Category>config</Category></Tracing><Discovery><Tag>x&#10;LINE&#10;y</Tag></Discovery>";
        let mut c = cfg();
        c.qos_file = Some(attack.into());
        let e = Opts::parse(&c).unwrap_err().to_string();
        assert!(e.starts_with("--qos-file /dev/null,<Tracing>"), "{e}");
        for bad in ["x.xml", "/a/../b.xml", "/a\nb.xml"] {
            c.qos_file = Some(bad.into());
            assert!(Opts::parse(&c).is_err(), "{bad}");
        }
        c.qos_file = Some("/etc/cyclone dds/x.xml".into());
        let x = domain_xml(&c, &Opts::parse(&c).unwrap()).unwrap();
        let entries: Vec<&str> = x.split(',').collect();
        assert_eq!(entries.len(), 2, "{x}");
        assert_eq!(entries[1], "file:///etc/cyclone dds/x.xml");
        assert!(entries[0].starts_with("<General>") && !entries[0].contains("file:"));

        let mut c = cfg();
        c.bind_ip = "127.0.0.1\"/><Tracing><OutputFile>/x</OutputFile></Tracing><x a=\"".into();
        let e = domain_xml(&c, &Opts::parse(&c).unwrap())
            .unwrap_err()
            .to_string();
        assert!(e.starts_with("--data-address 127.0.0.1\\\"/>"), "{e}");
        let mut c = cfg();
        c.multicast = true;
        for bad in [
            "239.1.1.1</DefaultMulticastAddress><Tracing>",
            "10.0.0.1",
            "x",
        ] {
            c.multicast_address = Some(bad.into());
            let e = Opts::parse(&c).unwrap_err().to_string();
            assert!(e.starts_with("--multicast-address "), "{e}");
        }
        c.options
            .insert("peers".into(), "10.0.0.1\"/><Tracing>".into());
        c.multicast_address = None;
        assert!(Opts::parse(&c).is_err());
    }

    #[test]
    fn the_fragment_is_well_formed_xml() {
        let mut c = cfg();
        c.multicast = true;
        c.multicast_address = Some("239.255.0.9".into());
        c.socket_buffer = 4096;
        c.batch_bytes = 4096;
        c.multicast_ttl = Some(2);
        let x = domain_xml(&c, &Opts::parse(&c).unwrap()).unwrap();
        let wrapped = format!("<Domain>{x}</Domain>");
        let mut r = quick_xml::Reader::from_str(&wrapped);
        let mut depth = 0i32;
        loop {
            match r.read_event().unwrap() {
                quick_xml::events::Event::Start(_) => depth += 1,
                quick_xml::events::Event::End(_) => depth -= 1,
                quick_xml::events::Event::Eof => break,
                _ => {}
            }
        }
        assert_eq!(depth, 0, "{x}");
        assert!(
            x.contains("<SocketReceiveBufferSize min=\"4096B\"/>"),
            "{x}"
        );
    }

    #[test]
    fn mapped_flags_and_refusals() {
        assert!(QOS_FLAGS.contains(&"--instances") && QOS_FLAGS.contains(&"--multicast-ttl"));
        for f in [
            "--no-positive-acks",
            "--bandwidth-limit",
            "--no-push-on-write",
        ] {
            assert!(!QOS_FLAGS.contains(&f), "{f}");
            assert!(
                why_not(f).is_some_and(|w| w.contains("CycloneDDS 0.10")),
                "{f}"
            );
        }
    }

    #[test]
    fn batch_is_udp_only_and_one_packet() {
        let mut c = cfg();
        c.batch_bytes = 1000;
        let e = check_batch(&c).unwrap_err().to_string();
        assert!(e.starts_with("--batch 1000: "), "{e}");
        c.batch_bytes = 8192;
        assert!(check_batch(&c).is_ok());
        c.transport = "shm".into();
        let e = check_batch(&c).unwrap_err().to_string();
        assert!(
            e.starts_with("--batch 8192: ") && e.contains("udp only"),
            "{e}"
        );
    }

    #[test]
    fn domain_ids_stay_in_range() {
        let o = Opts::parse(&cfg()).unwrap();
        for i in 0..1000 {
            let d = o.domain_id(&format!("run{i}"));
            assert!((1..=MAX_DOMAIN).contains(&d));
        }
    }
}
