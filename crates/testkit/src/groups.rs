//! The multicast groups this network namespace has joined, read from the
//! kernel (`/proc/net/igmp`, `/proc/net/igmp6`): what a binding's sockets
//! really joined, whatever its configuration says.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

/// Every group joined on any interface, with the interface's name.
pub fn joined() -> Vec<(String, IpAddr)> {
    let mut out = Vec::new();
    // igmp: a device line `Idx Device : Count ...`, then one line per group
    // with the address as the kernel's 32-bit word in hex.
    let mut dev = String::new();
    for l in std::fs::read_to_string("/proc/net/igmp")
        .unwrap_or_default()
        .lines()
        .skip(1)
    {
        if !l.starts_with('\t') {
            if let Some(d) = l.split_whitespace().nth(1) {
                dev = d.to_string();
            }
        } else if let Some(g) = l
            .split_whitespace()
            .next()
            .and_then(|h| u32::from_str_radix(h, 16).ok())
        {
            out.push((dev.clone(), IpAddr::V4(Ipv4Addr::from(g.to_ne_bytes()))));
        }
    }
    // igmp6: `idx device address users ...`, the address as 32 hex digits.
    for l in std::fs::read_to_string("/proc/net/igmp6")
        .unwrap_or_default()
        .lines()
    {
        let t: Vec<&str> = l.split_whitespace().collect();
        if t.len() > 2
            && let Ok(a) = u128::from_str_radix(t[2], 16)
        {
            out.push((t[1].to_string(), IpAddr::V6(Ipv6Addr::from(a))));
        }
    }
    out
}

/// True when a 64-byte sample written by `w` reaches `r` within 50 tries
/// of 20 ms (a multicast path works end to end).
pub fn delivers<W: pubsubperf_core::Writer, R: pubsubperf_core::Reader>(
    w: &mut W,
    r: &mut R,
) -> bool {
    let mut got = 0;
    for _ in 0..50 {
        w.send(64, |b| b.fill(7)).expect("send");
        r.recv(std::time::Duration::from_millis(20), &mut |_| got += 1)
            .expect("recv");
        if got > 0 {
            return true;
        }
    }
    false
}

/// True when some socket of this namespace has joined `group`.
pub fn is_joined(group: IpAddr) -> bool {
    joined().iter().any(|(_, g)| *g == group)
}

#[cfg(test)]
mod tests {
    /// Every host joins all-hosts (224.0.0.1) on its multicast interfaces.
    #[test]
    fn all_hosts_is_joined() {
        assert!(super::is_joined("224.0.0.1".parse().unwrap()));
    }
}
