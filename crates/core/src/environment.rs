//! The environment that travels with every result, so that a result can be
//! reproduced and compared: CPU, cores, kernel, host, tool and binding
//! versions, and machine floors measured by `calibrate` when available.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// The `environment` object of a result.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Environment {
    /// CPU model name from /proc/cpuinfo.
    pub cpu_model: String,
    /// Cores available to the process.
    pub cores: usize,
    /// Kernel release and version (uname).
    pub kernel: String,
    /// Host name.
    #[serde(default)]
    pub hostname: String,
    /// Operating system (PRETTY_NAME of /etc/os-release).
    #[serde(default)]
    pub os: String,
    /// Version of every binding used, by name.
    pub bindings: BTreeMap<String, String>,
    /// The pubsubperf version that measured.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub pubsubperf: String,
    /// The architecture the pubsubperf binary was built for (x86_64,
    /// aarch64, arm).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub arch: String,
    /// Set when the binary ran under a user-mode emulator (qemu-user), with
    /// how that was seen: its figures are the emulator's, not the
    /// architecture's (see [`emulation`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub emulated: Option<String>,
    /// The kernel's clock source (`current_clocksource`: tsc, arch_sys_counter, ...).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub clocksource: String,
    /// The network interfaces other than loopback, with their addresses,
    /// speed and driver (where the kernel tells).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub interfaces: Vec<Interface>,
    /// The address this host's endpoints used for data (`--data-address`,
    /// else the address towards the other host), in runs across hosts.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data_address: Option<String>,
    /// Environment of the subscriber's host, when it is another host.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub subscriber_host: Option<Box<Environment>>,
    /// Machine floors from `pubsubperf calibrate`, if measured.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub calibration: Option<serde_json::Value>,
    /// `pubsubperf doctor`'s file checks of this host, run before the
    /// measurement (what can skew the figures, and the fix).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub doctor: Vec<pubsubperf_doctor::Finding>,
}

/// A network interface of a host.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Interface {
    /// Its name (eth0).
    pub name: String,
    /// Its addresses.
    pub addresses: Vec<String>,
    /// Link speed in Mbit/s (`/sys/class/net/NAME/speed`), when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub speed_mbps: Option<u64>,
    /// Its driver (virtio_net, igb, veth, ...), when known.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub driver: String,
}

/// The interface of this host holding `address` (an IP address), other
/// than the loopback: a run on one host has no NIC under it.
pub fn interface_holding(address: &str) -> Option<String> {
    let ip = address.parse::<std::net::IpAddr>().ok()?;
    crate::sys::interface_addresses()
        .into_iter()
        .find(|(_, a)| *a == ip && !a.is_loopback())
        .map(|(name, _)| name)
}

/// This host's interfaces other than loopback.
pub fn interfaces() -> Vec<Interface> {
    let mut out: Vec<Interface> = Vec::new();
    for (name, ip) in crate::sys::interface_addresses() {
        if ip.is_loopback() {
            continue;
        }
        match out.iter_mut().find(|i| i.name == name) {
            Some(i) => i.addresses.push(ip.to_string()),
            None => {
                let sys = std::path::Path::new("/sys/class/net").join(&name);
                let speed_mbps = std::fs::read_to_string(sys.join("speed"))
                    .ok()
                    .and_then(|s| s.trim().parse::<i64>().ok())
                    .and_then(|s| u64::try_from(s).ok());
                let driver = std::fs::read_link(sys.join("device/driver"))
                    .ok()
                    .and_then(|p| p.file_name().map(|f| f.to_string_lossy().into_owned()))
                    .unwrap_or_default();
                out.push(Interface {
                    name,
                    addresses: vec![ip.to_string()],
                    speed_mbps,
                    driver,
                });
            }
        }
    }
    out
}

impl Environment {
    /// Reads this machine's environment.
    pub fn detect() -> Environment {
        let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
        let cpu_model = cpuinfo
            .lines()
            .find(|l| {
                l.starts_with("model name") || l.starts_with("Model") || l.starts_with("Hardware")
            })
            .and_then(|l| l.split(':').nth(1))
            .map(|s| s.trim().to_string())
            .unwrap_or_else(|| "unknown".into());
        let os = std::fs::read_to_string("/etc/os-release")
            .unwrap_or_default()
            .lines()
            .find_map(|l| l.strip_prefix("PRETTY_NAME="))
            .map(|s| s.trim_matches('"').to_string())
            .unwrap_or_default();
        Environment {
            cpu_model,
            cores: crate::sys::cores(),
            kernel: kernel(),
            hostname: uname_field(|u| &u.nodename),
            os,
            bindings: BTreeMap::new(),
            pubsubperf: env!("CARGO_PKG_VERSION").to_string(),
            arch: std::env::consts::ARCH.to_string(),
            emulated: emulation(&cpuinfo, &process_name()),
            clocksource: std::fs::read_to_string(
                "/sys/devices/system/clocksource/clocksource0/current_clocksource",
            )
            .map(|s| s.trim().to_string())
            .unwrap_or_default(),
            interfaces: interfaces(),
            data_address: None,
            subscriber_host: None,
            calibration: None,
            doctor: Vec::new(),
        }
    }
}

/// How a user-mode emulator shows itself, if this process runs under one.
///
/// qemu-user answers `uname` with the guest's architecture but passes the
/// host's `/proc/cpuinfo` through, and the process's own name (`comm`) is
/// the emulator's when it was started as `qemu-aarch64 BINARY`. So: a
/// `comm` of `qemu-*`, or a cpuinfo that describes another architecture's
/// CPU than the one this binary was built for (x86's `vendor_id` under an
/// ARM binary; ARM's `CPU implementer` under an x86 binary).
pub fn emulation(cpuinfo: &str, process_name: &str) -> Option<String> {
    let arch = std::env::consts::ARCH;
    if process_name.starts_with("qemu-") {
        return Some(format!(
            "{arch} binary run by {process_name} (user-mode emulation)"
        ));
    }
    let has = |key: &str| cpuinfo.lines().any(|l| l.starts_with(key));
    let host = if has("vendor_id") {
        "x86"
    } else if has("CPU implementer") {
        "ARM"
    } else {
        return None;
    };
    let same = match host {
        "x86" => matches!(arch, "x86_64" | "x86"),
        _ => matches!(arch, "aarch64" | "arm"),
    };
    (!same).then(|| {
        format!("{arch} binary on a CPU /proc/cpuinfo describes as {host} (user-mode emulation)")
    })
}

/// True when this process runs under a user-mode emulator ([`emulation`]),
/// read once per process.
pub fn emulated() -> bool {
    static EMULATED: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *EMULATED.get_or_init(|| {
        let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
        emulation(&cpuinfo, &process_name()).is_some()
    })
}

/// This process's name as the kernel knows it (`/proc/self/comm`).
fn process_name() -> String {
    std::fs::read_to_string("/proc/self/comm")
        .map(|s| s.trim().to_string())
        .unwrap_or_default()
}

fn uname_field(f: impl Fn(&libc::utsname) -> &[libc::c_char; 65]) -> String {
    // SAFETY: utsname is plain data filled by uname().
    unsafe {
        let mut u: libc::utsname = std::mem::zeroed();
        if libc::uname(&mut u) != 0 {
            return String::new();
        }
        std::ffi::CStr::from_ptr(f(&u).as_ptr())
            .to_string_lossy()
            .into_owned()
    }
}

/// Kernel name, release and version, e.g. `Linux 6.1.0-18-amd64 #1 SMP ...`.
pub fn kernel() -> String {
    format!(
        "{} {} {}",
        uname_field(|u| &u.sysname),
        uname_field(|u| &u.release),
        uname_field(|u| &u.version)
    )
}

/// Kernel release only (`6.1.0-18-amd64`), used as the version of the raw bindings.
pub fn kernel_release() -> String {
    format!("Linux {}", uname_field(|u| &u.release))
}

#[cfg(test)]
mod tests {
    #[test]
    fn detects() {
        let e = super::Environment::detect();
        assert!(e.cores >= 1);
        assert!(e.kernel.starts_with("Linux"));
        assert!(!e.cpu_model.is_empty());
        assert_eq!(e.arch, std::env::consts::ARCH);
    }

    /// The two signs of qemu-user: its own process name, and a cpuinfo of
    /// another architecture than the binary's.
    #[test]
    fn sees_emulation() {
        use super::emulation;
        let x86 = "processor\t: 0\nvendor_id\t: AuthenticAMD\nmodel name\t: AMD EPYC\n";
        let arm = "processor\t: 0\nBogoMIPS\t: 108.00\nCPU implementer\t: 0x41\n";
        let native = if cfg!(target_arch = "x86_64") {
            x86
        } else {
            arm
        };
        let foreign = if cfg!(target_arch = "x86_64") {
            arm
        } else {
            x86
        };
        assert_eq!(emulation(native, "pubsubperf"), None);
        assert_eq!(
            emulation("", "pubsubperf"),
            None,
            "an unknown cpuinfo proves nothing"
        );
        assert!(emulation(foreign, "pubsubperf").is_some());
        let by_name = emulation(native, "qemu-aarch64").expect("qemu's name");
        assert!(by_name.contains("qemu-aarch64"), "{by_name}");
    }
}
