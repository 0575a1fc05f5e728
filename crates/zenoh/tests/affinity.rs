//! zenoh's threads are not tied to the core of a pinned caller (its own test
//! binary: the conformance suite counts the threads of its process).

use pubsubperf_core::{Binding, EndpointConfig, TopicSpec};
use pubsubperf_zenoh::Zenoh;

/// Every thread zenoh creates while a pinned caller opens a session can run
/// on every CPU.
#[test]
fn zenoh_threads_are_not_pinned() {
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
    assert!(
        cpus >= 2,
        "prerequisite missing: two CPUs (zenoh's threads floating off a pinned caller's core needs another core); this process may use {cpus}"
    );
    let mut c = EndpointConfig::for_test(&format!("aff{}", std::process::id()));
    c.transport = "tcp".into();
    std::thread::spawn(move || {
        // SAFETY: pins this test thread to CPU 0.
        unsafe {
            let mut set: libc::cpu_set_t = std::mem::zeroed();
            libc::CPU_SET(0, &mut set);
            libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set);
        }
        let mut z = Zenoh::open(&c).expect("open");
        let (_r, _l) = z
            .create_reader(&TopicSpec {
                name: "data".into(),
                index: 0,
            })
            .expect("reader");
        for t in std::fs::read_dir("/proc/self/task")
            .expect("tasks")
            .flatten()
        {
            let status = std::fs::read_to_string(t.path().join("status")).unwrap_or_default();
            let name = std::fs::read_to_string(t.path().join("comm")).unwrap_or_default();
            let allowed = status
                .lines()
                .find(|l| l.starts_with("Cpus_allowed_list:"))
                .unwrap_or_default()
                .to_string();
            let tid: i32 = t.file_name().to_string_lossy().parse().unwrap_or(0);
            // SAFETY: gettid has no preconditions.
            let me = unsafe { libc::gettid() };
            if tid != me && name.trim() != "main" {
                assert!(
                    !allowed.trim().ends_with("\t0") && !allowed.trim().ends_with(" 0"),
                    "thread {} pinned: {allowed}",
                    name.trim()
                );
            }
        }
    })
    .join()
    .expect("affinity thread");
}
