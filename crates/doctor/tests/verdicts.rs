//! The checks on fake `/proc` and `/sys` trees: a host tuned for
//! measuring, and a busy virtual machine in a container, each verdict and
//! value exactly.

use pubsubperf_doctor::{
    ClockState, Ethtool, Host, LinkReadings, Options, Verdict, examine, worst,
};
use std::path::Path;

fn write(root: &Path, files: &[(&str, &str)]) {
    for (path, text) in files {
        let p = root.join(path);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    }
}

/// (check, verdict, value) of every finding.
fn verdicts(root: &Path, opts: &Options) -> Vec<(String, Verdict, String)> {
    examine(&Host::at(root), opts)
        .into_iter()
        .map(|f| {
            if f.verdict != Verdict::Ok {
                assert!(!f.why.is_empty() && !f.fix.is_empty(), "{f:?}");
            }
            (f.check, f.verdict, f.value)
        })
        .collect()
}

fn row(check: &str, verdict: Verdict, value: &str) -> (String, Verdict, String) {
    (check.into(), verdict, value.into())
}

const STAT: &str = "42 (sleeper) S 1 42 42 0 -1 4194560 100 0 0 0 5 3 0 0 20 0 1 0 100 1000 10 18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0 17 1 0 0 0 0 0";

#[test]
fn a_host_tuned_for_measuring_is_ok_throughout() {
    let dir = tempfile::tempdir().unwrap();
    let r = dir.path();
    write(
        r,
        &[
            ("sys/kernel/mm/damon/admin/kdamonds/nr_kdamonds", "1\n"),
            ("sys/kernel/mm/damon/admin/kdamonds/0/state", "on\n"),
            ("sys/kernel/mm/damon/admin/kdamonds/0/pid", "107\n"),
            (
                "proc/107/status",
                "Name:\tkdamond.0\nCpus_allowed_list:\t0-1\n",
            ),
            (
                "proc/cpuinfo",
                "processor\t: 0\nflags\t\t: fpu tsc constant_tsc nonstop_tsc\n\nprocessor\t: 1\nflags\t\t: fpu tsc constant_tsc nonstop_tsc\n",
            ),
            (
                "sys/devices/system/clocksource/clocksource0/current_clocksource",
                "tsc\n",
            ),
            (
                "sys/devices/system/clocksource/clocksource0/available_clocksource",
                "tsc hpet acpi_pm\n",
            ),
            ("sys/devices/system/cpu/online", "0-3\n"),
            (
                "sys/devices/system/cpu/cpu2/cpufreq/scaling_governor",
                "performance\n",
            ),
            (
                "sys/devices/system/cpu/cpu3/cpufreq/scaling_governor",
                "performance\n",
            ),
            ("sys/devices/system/cpu/intel_pstate/no_turbo", "1\n"),
            (
                "sys/devices/system/cpu/cpu2/topology/thread_siblings_list",
                "2\n",
            ),
            (
                "sys/devices/system/cpu/cpu3/topology/thread_siblings_list",
                "3\n",
            ),
            ("sys/devices/system/cpu/isolated", "2-3\n"),
            ("sys/devices/system/cpu/nohz_full", "2-3\n"),
            (
                "proc/cmdline",
                "BOOT_IMAGE=/vmlinuz isolcpus=2-3 nohz_full=2-3 rcu_nocbs=2-3\n",
            ),
            (
                "proc/interrupts",
                "           CPU0       CPU1       CPU2       CPU3\n  24:       500        10          0          0   PCI-MSI eth0\n LOC:      100        100        100        100   Local timer interrupts\n",
            ),
            ("proc/irq/24/smp_affinity_list", "0-1\n"),
            ("proc/sys/kernel/sched_rt_runtime_us", "-1\n"),
            (
                "sys/kernel/mm/transparent_hugepage/enabled",
                "always [madvise] never\n",
            ),
            (
                "proc/swaps",
                "Filename\t\t\t\tType\t\tSize\t\tUsed\t\tPriority\n",
            ),
            (
                "proc/self/limits",
                "Limit                     Soft Limit           Hard Limit           Units\nMax locked memory         unlimited            unlimited            bytes\nMax realtime priority     99                   99\n",
            ),
            (
                "proc/self/status",
                "Name:\tpubsubperf\nUid:\t1000\t1000\t1000\t1000\nSeccomp:\t0\n",
            ),
            ("proc/self/cgroup", "0::/\n"),
            ("sys/fs/cgroup/cpu.max", "max 100000\n"),
            ("sys/fs/cgroup/cpuset.cpus.effective", "0-3\n"),
            ("proc/self/attr/current", "unconfined\n"),
            ("proc/stat", "cpu  1000 0 500 100000 10 0 5 0 0 0\n"),
            ("sys/class/net/eth1/speed", "10000\n"),
            ("sys/class/net/eth1/operstate", "up\n"),
            ("proc/42/stat", STAT),
            ("proc/77/comm", "chronyd\n"),
        ],
    );
    let opts = Options {
        cores: vec![2, 3],
        link: Some(LinkReadings {
            first_ns: 64.0,
            second_ns: 70.0,
        }),
        interface: Some("eth1".into()),
        clock: Some(ClockState {
            synchronised: true,
            est_error_us: 12,
        }),
        ethtool: Some(Ethtool {
            features: Some("Features for eth1:\ngeneric-receive-offload: off\nlarge-receive-offload: off [fixed]\n".into()),
            coalesce: Some("Coalesce parameters for eth1:\nAdaptive RX: off  TX: n/a\nrx-usecs: 0\nrx-frames: 1\n".into()),
        }),
    };
    let got = verdicts(r, &opts);
    assert_eq!(
        got,
        vec![
            row("clocksource", Verdict::Ok, "tsc"),
            row("tsc", Verdict::Ok, "constant_tsc nonstop_tsc"),
            row("governor", Verdict::Ok, "performance"),
            row("boost", Verdict::Ok, "intel_pstate turbo off"),
            row("smt", Verdict::Ok, "no SMT sibling on the measuring cores"),
            row(
                "isolation",
                Verdict::Ok,
                "cpu 2-3 isolated, tickless, no RCU callbacks"
            ),
            row("irq", Verdict::Ok, "no device interrupt on cpu 2-3"),
            row("rt-throttling", Verdict::Ok, "off"),
            row("thp", Verdict::Ok, "madvise"),
            row("swap", Verdict::Ok, "none"),
            row(
                "damon",
                Verdict::Ok,
                "kdamond.0 (pid 107, cpu 0-1) on, off the run's cores"
            ),
            row("rtprio", Verdict::Ok, "99"),
            row("memlock", Verdict::Ok, "unlimited"),
            row("cgroup-quota", Verdict::Ok, "none"),
            row("cpuset", Verdict::Ok, "0-3"),
            row("confinement", Verdict::Ok, "none"),
            row("virtualization", Verdict::Ok, "bare metal"),
            row("steal", Verdict::Ok, "0.00 % since boot"),
            row("core-link", Verdict::Ok, "round trip 64 ns, then 70 ns"),
            row("nic", Verdict::Ok, "eth1 up, 10000 Mbit/s"),
            row("nic-offloads", Verdict::Ok, "receive offloads off"),
            row(
                "nic-coalescing",
                Verdict::Ok,
                "eth1: adaptive rx off, rx-usecs 0"
            ),
            row(
                "clock-sync",
                Verdict::Ok,
                "synchronised, estimated error 12 µs (chronyd)"
            ),
        ]
    );
    assert_eq!(worst(&examine(&Host::at(r), &opts)), Verdict::Ok);
}

#[test]
fn a_busy_vm_in_a_container_is_told_what_to_fix() {
    let dir = tempfile::tempdir().unwrap();
    let r = dir.path();
    // cpu1's sibling cpu3 runs a busy task (state R, last on processor 3).
    let busy = "99 (stress-ng) R 1 99 99 0 -1 4194560 100 0 0 0 500 3 0 0 20 0 1 0 100 1000 10 18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0 17 3 0 0 0 0 0";
    write(
        r,
        &[
            ("sys/kernel/mm/damon/admin/kdamonds/nr_kdamonds", "1\n"),
            ("sys/kernel/mm/damon/admin/kdamonds/0/state", "on\n"),
            ("sys/kernel/mm/damon/admin/kdamonds/0/pid", "107\n"),
            (
                "proc/107/status",
                "Name:\tkdamond.0\nCpus_allowed_list:\t0-1\n",
            ),
            (
                "proc/cpuinfo",
                "processor\t: 0\nflags\t\t: fpu tsc hypervisor\n",
            ),
            (
                "sys/devices/system/clocksource/clocksource0/current_clocksource",
                "hpet\n",
            ),
            (
                "sys/devices/system/clocksource/clocksource0/available_clocksource",
                "hpet acpi_pm\n",
            ),
            ("sys/devices/system/cpu/online", "0-3\n"),
            (
                "sys/devices/system/cpu/cpu0/cpufreq/scaling_governor",
                "powersave\n",
            ),
            (
                "sys/devices/system/cpu/cpu1/cpufreq/scaling_governor",
                "performance\n",
            ),
            ("sys/devices/system/cpu/cpufreq/boost", "1\n"),
            (
                "sys/devices/system/cpu/cpu0/topology/thread_siblings_list",
                "0-1\n",
            ),
            (
                "sys/devices/system/cpu/cpu1/topology/thread_siblings_list",
                "1,3\n",
            ),
            ("proc/cmdline", "BOOT_IMAGE=/vmlinuz quiet\n"),
            (
                "proc/interrupts",
                "           CPU0       CPU1       CPU2       CPU3\n  24:       500        10          0          0   PCI-MSI eth0\n  25:         0         0          0          0   PCI-MSI idle\n  30:         0      9000          0          0   PCI-MSI nvme\n",
            ),
            ("proc/irq/24/smp_affinity_list", "0-3\n"),
            ("proc/irq/25/smp_affinity_list", "0\n"),
            ("proc/irq/30/effective_affinity_list", "1\n"),
            ("proc/sys/kernel/sched_rt_runtime_us", "950000\n"),
            ("proc/sys/kernel/sched_rt_period_us", "1000000\n"),
            (
                "sys/kernel/mm/transparent_hugepage/enabled",
                "[always] madvise never\n",
            ),
            (
                "proc/swaps",
                "Filename\t\t\t\tType\t\tSize\t\tUsed\t\tPriority\n/dev/vda2                               partition\t1048572\t\t0\t\t-2\n",
            ),
            ("proc/sys/vm/swappiness", "60\n"),
            (
                "proc/self/limits",
                "Limit                     Soft Limit           Hard Limit           Units\nMax locked memory         8388608              8388608              bytes\nMax realtime priority     0                    0\n",
            ),
            (
                "proc/self/status",
                "Name:\tpubsubperf\nUid:\t1000\t1000\t1000\t1000\nSeccomp:\t2\n",
            ),
            ("proc/self/cgroup", "0::/docker/abc\n"),
            ("sys/fs/cgroup/docker/abc/cpu.max", "150000 100000\n"),
            ("sys/fs/cgroup/docker/abc/cpuset.cpus.effective", "0-1\n"),
            ("proc/self/attr/current", "docker-default (enforce)\n"),
            ("proc/stat", "cpu  1000 0 500 8000 10 0 5 500 0 0\n"),
            ("sys/class/dmi/id/sys_vendor", "QEMU\n"),
            (
                "sys/class/dmi/id/product_name",
                "Standard PC (Q35 + ICH9, 2009)\n",
            ),
            ("sys/class/net/eth1/operstate", "down\n"),
            ("proc/99/stat", busy),
        ],
    );
    let opts = Options {
        cores: vec![0, 1, 2],
        link: Some(LinkReadings {
            first_ns: 31.0,
            second_ns: 307.0,
        }),
        interface: Some("eth1".into()),
        clock: Some(ClockState {
            synchronised: false,
            est_error_us: 16_000_000,
        }),
        ethtool: Some(Ethtool {
            features: Some("Features for eth1:\ngeneric-receive-offload: on\nlarge-receive-offload: off [fixed]\n".into()),
            coalesce: Some("Coalesce parameters for eth1:\nAdaptive RX: on  TX: on\nrx-usecs: 64\n".into()),
        }),
    };
    let got = verdicts(r, &opts);
    assert_eq!(
        got,
        vec![
            row(
                "clocksource",
                Verdict::Fail,
                "hpet (available: hpet acpi_pm)"
            ),
            row("tsc", Verdict::Warn, "missing constant_tsc nonstop_tsc"),
            row("governor", Verdict::Warn, "cpu0 powersave"),
            row("boost", Verdict::Warn, "cpufreq boost on"),
            row(
                "smt",
                Verdict::Warn,
                "cpu0 shares its core with cpu1 (also measuring); cpu1 shares its core with cpu3 (running stress-ng (99))"
            ),
            row(
                "isolation",
                Verdict::Warn,
                "cpu 0-2 not in isolcpus, nohz_full, rcu_nocbs"
            ),
            row(
                "irq",
                Verdict::Warn,
                "2 interrupts on cpu 0-2: 30 (9000), 24 (510)"
            ),
            row("rt-throttling", Verdict::Warn, "950000 of every 1000000 µs"),
            row("thp", Verdict::Warn, "always"),
            row("swap", Verdict::Warn, "/dev/vda2 (swappiness 60)"),
            row(
                "damon",
                Verdict::Warn,
                "kdamond.0 (pid 107, cpu 0-1) on, may run on the run's cores"
            ),
            row("rtprio", Verdict::Warn, "0"),
            row("memlock", Verdict::Warn, "8388608 bytes"),
            row(
                "cgroup-quota",
                Verdict::Warn,
                "150000 of every 100000 µs (1.50 cores) in /sys/fs/cgroup/docker/abc"
            ),
            row("cpuset", Verdict::Fail, "cpu 2 outside the cpuset 0-1"),
            row(
                "confinement",
                Verdict::Warn,
                "a seccomp filter, AppArmor profile docker-default (enforce)"
            ),
            row(
                "virtualization",
                Verdict::Warn,
                "virtual machine (QEMU Standard PC (Q35 + ICH9, 2009))"
            ),
            row("steal", Verdict::Warn, "4.99 % since boot"),
            row("core-link", Verdict::Warn, "round trip 31 ns, then 307 ns"),
            row("nic", Verdict::Fail, "eth1 down"),
            row(
                "nic-offloads",
                Verdict::Warn,
                "eth1: generic-receive-offload on"
            ),
            row(
                "nic-coalescing",
                Verdict::Warn,
                "eth1: adaptive rx on, rx-usecs 64"
            ),
            row(
                "clock-sync",
                Verdict::Warn,
                "not synchronised (no synchronisation daemon)"
            ),
        ]
    );
    assert_eq!(worst(&examine(&Host::at(r), &opts)), Verdict::Fail);
}

#[test]
fn an_empty_tree_warns_only_where_it_cannot_tell() {
    let dir = tempfile::tempdir().unwrap();
    let got = verdicts(dir.path(), &Options::default());
    let bad: Vec<&str> = got
        .iter()
        .filter(|(_, v, _)| *v != Verdict::Ok)
        .map(|(c, _, _)| c.as_str())
        .collect();
    assert_eq!(
        bad,
        ["clocksource", "isolation", "rtprio", "memlock"],
        "{got:?}"
    );
}

/// An interface the host does not have fails the nic check, and its
/// offloads and coalescing are not checkable: ethtool's "No such device"
/// is no answer (they said ok, "not reported by the driver").
#[test]
fn a_missing_interface_is_not_ok_in_any_nic_check() {
    let dir = tempfile::tempdir().unwrap();
    let r = dir.path();
    write(
        r,
        &[
            ("sys/class/net/eth0/speed", "1000\n"),
            ("sys/class/net/eth0/operstate", "up\n"),
        ],
    );
    let opts = Options {
        interface: Some("eth1".into()),
        ethtool: Some(Ethtool {
            features: Some("netlink error: no device matches name (offset 24)\nnetlink error: No such device\n".into()),
            coalesce: Some("Cannot get device coalesce settings: No such device\n".into()),
        }),
        ..Options::default()
    };
    let nic: Vec<(String, Verdict, String)> = verdicts(r, &opts)
        .into_iter()
        .filter(|(c, _, _)| c.starts_with("nic"))
        .collect();
    assert_eq!(
        nic,
        vec![
            row("nic", Verdict::Fail, "eth1: no such interface"),
            row(
                "nic-offloads",
                Verdict::Warn,
                "eth1: not checkable (no such interface)"
            ),
            row(
                "nic-coalescing",
                Verdict::Warn,
                "eth1: not checkable (no such interface)"
            ),
        ]
    );
}
