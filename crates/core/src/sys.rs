//! Operating-system knobs: CPU affinity, real-time priority, memory locking
//! and resource usage.

use serde::{Deserialize, Serialize};

/// Pins the calling thread to `cpu`.
pub fn pin_to_cpu(cpu: usize) -> Result<(), String> {
    // SAFETY: cpu_set_t is plain data; CPU_SET writes within it for cpu < CPU_SETSIZE.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        if cpu >= libc::CPU_SETSIZE as usize {
            return Err(format!("--cpu: core {cpu} does not exist"));
        }
        libc::CPU_SET(cpu, &mut set);
        if libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set) != 0 {
            return Err(format!(
                "--cpu: cannot pin to core {cpu}: {} (this process may use cores {}; use --cpu PUB,SUB among them)",
                std::io::Error::last_os_error(),
                crate::cpus::cpus_text()
            ));
        }
    }
    Ok(())
}

pub use crate::cpus::{ThreadState, cores, cpus};

/// Sets the calling thread's scheduling policy; 0 or the error number.
/// Through pthread_setschedparam, not sched_setscheduler: musl's
/// sched_setscheduler always fails (ENOSYS) by design.
fn set_policy(policy: i32, priority: i32) -> i32 {
    // SAFETY: sched_param is plain data; all-zero is valid (musl's has more fields).
    let mut param: libc::sched_param = unsafe { std::mem::zeroed() };
    param.sched_priority = priority;
    // SAFETY: our own thread, a valid sched_param.
    unsafe { libc::pthread_setschedparam(libc::pthread_self(), policy, &param) }
}

/// Switches the calling thread back to the normal policy (SCHED_OTHER).
pub fn set_normal_priority() {
    set_policy(libc::SCHED_OTHER, 0);
}

/// Switches the calling thread to SCHED_FIFO at `priority` (1..=99).
pub fn set_rt_priority(priority: i32) -> Result<(), String> {
    let rc = set_policy(libc::SCHED_FIFO, priority);
    if rc != 0 {
        let e = std::io::Error::from_raw_os_error(rc);
        if e.raw_os_error() == Some(libc::EPERM) {
            return Err(format!(
                "--rt-priority {priority}: permission denied for SCHED_FIFO (run as root, grant CAP_SYS_NICE, or raise RLIMIT_RTPRIO)"
            ));
        }
        return Err(format!("--rt-priority {priority}: {e}"));
    }
    Ok(())
}

/// Locks all current and future pages in memory.
pub fn mlock_all() -> Result<(), String> {
    // SAFETY: plain system call.
    if unsafe { libc::mlockall(libc::MCL_CURRENT | libc::MCL_FUTURE) } != 0 {
        return Err(format!(
            "--mlock: {} (raise RLIMIT_MEMLOCK with ulimit -l, or run as root)",
            std::io::Error::last_os_error()
        ));
    }
    Ok(())
}

/// A snapshot of the process's resource usage (all threads).
#[derive(Debug, Clone, Copy)]
pub struct Usage {
    wall_ns: u64,
    user_us: u64,
    sys_us: u64,
    max_rss_kib: u64,
    voluntary_cs: u64,
    involuntary_cs: u64,
}

impl Usage {
    /// Reads `getrusage(RUSAGE_SELF)` now.
    pub fn now() -> Usage {
        // SAFETY: ru is a valid, writable rusage.
        let ru = unsafe {
            let mut ru: libc::rusage = std::mem::zeroed();
            libc::getrusage(libc::RUSAGE_SELF, &mut ru);
            ru
        };
        let us = |t: libc::timeval| t.tv_sec as u64 * 1_000_000 + t.tv_usec as u64;
        Usage {
            wall_ns: crate::clock::now_ns(),
            user_us: us(ru.ru_utime),
            sys_us: us(ru.ru_stime),
            max_rss_kib: ru.ru_maxrss as u64,
            voluntary_cs: ru.ru_nvcsw as u64,
            involuntary_cs: ru.ru_nivcsw as u64,
        }
    }

    /// Resources used between `start` and `self`. CPU percentages are CPU
    /// time over wall time of the interval, so a process that keeps one core
    /// busy shows 100 % and two busy threads 200 %.
    pub fn since(&self, start: &Usage) -> Resources {
        let wall_us = (self.wall_ns.saturating_sub(start.wall_ns)) as f64 / 1000.0;
        let pct = |d: u64| {
            if wall_us > 0.0 {
                d as f64 * 100.0 / wall_us
            } else {
                0.0
            }
        };
        let user = pct(self.user_us.saturating_sub(start.user_us));
        let sys = pct(self.sys_us.saturating_sub(start.sys_us));
        Resources {
            cpu_percent: user + sys,
            cpu_user_percent: user,
            cpu_system_percent: sys,
            max_rss_kib: self.max_rss_kib,
            voluntary_cs: self.voluntary_cs.saturating_sub(start.voluntary_cs),
            involuntary_cs: self.involuntary_cs.saturating_sub(start.involuntary_cs),
        }
    }
}

/// Resource usage of one side during the measured part of a run
/// (`resources.publisher` / `resources.subscriber` in results).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Resources {
    /// User + system CPU time over wall time, in % of one core.
    pub cpu_percent: f64,
    /// User CPU time over wall time, in % of one core.
    #[serde(default)]
    pub cpu_user_percent: f64,
    /// System CPU time over wall time, in % of one core.
    #[serde(default)]
    pub cpu_system_percent: f64,
    /// Peak resident set size of the process so far, KiB.
    pub max_rss_kib: u64,
    /// Voluntary context switches during the run.
    pub voluntary_cs: u64,
    /// Involuntary context switches during the run.
    pub involuntary_cs: u64,
}

/// The addresses of this host's interfaces: (interface name, address).
pub fn interface_addresses() -> Vec<(String, std::net::IpAddr)> {
    use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};
    let mut out = Vec::new();
    let mut list: *mut libc::ifaddrs = std::ptr::null_mut();
    // SAFETY: getifaddrs fills `list` with a linked list we free below; every
    // pointer read is checked for null and each sockaddr is read as the
    // family it names.
    unsafe {
        if libc::getifaddrs(&mut list) != 0 {
            return out;
        }
        let mut p = list;
        while !p.is_null() {
            let ifa = &*p;
            p = ifa.ifa_next;
            if ifa.ifa_addr.is_null() || ifa.ifa_name.is_null() {
                continue;
            }
            let name = std::ffi::CStr::from_ptr(ifa.ifa_name)
                .to_string_lossy()
                .into_owned();
            let ip = match (*ifa.ifa_addr).sa_family as i32 {
                libc::AF_INET => {
                    let a = &*(ifa.ifa_addr as *const libc::sockaddr_in);
                    IpAddr::V4(Ipv4Addr::from(u32::from_be(a.sin_addr.s_addr)))
                }
                libc::AF_INET6 => {
                    let a = &*(ifa.ifa_addr as *const libc::sockaddr_in6);
                    IpAddr::V6(Ipv6Addr::from(a.sin6_addr.s6_addr))
                }
                _ => continue,
            };
            out.push((name, ip));
        }
        libc::freeifaddrs(list);
    }
    out
}

/// This host's first IPv4 address on an interface that is up, other than
/// loopback (None: it has none, as in a container with only `lo`).
pub fn host_address() -> Option<std::net::IpAddr> {
    interface_addresses()
        .into_iter()
        .find(|(name, a)| {
            a.is_ipv4()
                && !a.is_loopback()
                && std::fs::read_to_string(format!("/sys/class/net/{name}/operstate"))
                    .is_ok_and(|s| s.trim() == "up")
        })
        .map(|(_, a)| a)
}

/// The address a data interface option names (Perftest's `-nic`): an
/// address of this host as it is, or an interface's name as its first
/// IPv4 address (else its first IPv6 one). The error says what exists.
pub fn data_address(s: &str) -> Result<String, String> {
    let addrs = interface_addresses();
    let known = || {
        addrs
            .iter()
            .map(|(n, a)| format!("{n} {a}"))
            .collect::<Vec<_>>()
            .join(", ")
    };
    if let Ok(ip) = s.parse::<std::net::IpAddr>() {
        return if addrs.iter().any(|(_, a)| *a == ip) {
            Ok(ip.to_string())
        } else {
            Err(format!("not an address of this host (it has: {})", known()))
        };
    }
    let of = |v4: bool| {
        addrs
            .iter()
            .find(|(n, a)| n == s && a.is_ipv4() == v4)
            .map(|(_, a)| a.to_string())
    };
    of(true).or_else(|| of(false)).ok_or_else(|| {
        format!(
            "no interface or address of this host by that name (it has: {})",
            known()
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn usage_counts_cpu() {
        let a = Usage::now();
        let t = crate::clock::now_ns() + 50_000_000;
        crate::clock::spin_until(t);
        let r = Usage::now().since(&a);
        assert!(r.cpu_percent > 0.0);
        assert!(r.max_rss_kib > 0);
    }

    #[test]
    fn pin_rejects_missing_core() {
        assert!(pin_to_cpu(100_000).is_err());
        assert!(pin_to_cpu(0).is_ok());
    }
}
