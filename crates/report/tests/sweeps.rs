//! The sweep files shipped in sweeps/ parse and expand as documented.

use pubsubperf_report::sweep;
use std::path::Path;

fn load(name: &str) -> sweep::Sweep {
    let p = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../sweeps")
        .join(name);
    sweep::load(&p).unwrap_or_else(|e| panic!("{e}"))
}

#[test]
fn quick_sweep() {
    let s = load("quick.toml");
    assert_eq!(s.name, "quick");
    assert_eq!(s.repetitions, 3);
    assert_eq!(s.cells.len(), 5 * 2 * 3 * 3);
    let c = &s.cells[0];
    assert_eq!(
        c.args,
        [
            "latency",
            "--binding",
            "udp",
            "--size",
            "64",
            "--duration",
            "2s",
            "--warmup",
            "500ms"
        ]
    );
    insta::assert_snapshot!(
        "quick_keys",
        s.cells
            .iter()
            .filter(|c| c.repetition == 1)
            .map(|c| format!("{}  {}", c.key, c.args.join(" ")))
            .collect::<Vec<_>>()
            .join("\n")
    );
}

#[test]
fn perftest_seed_sizes() {
    let s = load("perftest-seeds.toml");
    let sizes = |prefix: &str| {
        let mut v: Vec<usize> = s
            .cells
            .iter()
            .filter(|c| c.key.starts_with(prefix))
            .map(|c| c.size)
            .collect();
        v.sort_unstable();
        v.dedup();
        v
    };
    // Seed 001's DATALEN loop, and seed 000's.
    assert_eq!(
        sizes("seed001/"),
        [32, 64, 128, 256, 512, 1024, 2048, 8192, 16384, 32768, 63000]
    );
    assert_eq!(
        sizes("seed000/"),
        [
            63001, 512000, 1048576, 5242880, 10485760, 26214400, 52428800
        ]
    );
    let zc: Vec<_> = s
        .cells
        .iter()
        .filter(|c| c.key.starts_with("seed000-zero-copy/"))
        .collect();
    assert!(
        zc.iter()
            .all(|c| c.args.contains(&"--zero-copy".to_string())
                && c.args.windows(2).any(|w| w == ["--receive-queue", "5"]))
    );
    // Every binding measures the large sizes it can carry; udp carries the
    // smallest only.
    let large = [
        63001, 512000, 1048576, 5242880, 10485760, 26214400, 52428800,
    ];
    let of = |prefix: &str, binding: &str| {
        let mut v: Vec<usize> = s
            .cells
            .iter()
            .filter(|c| c.key.starts_with(prefix) && c.binding == binding)
            .map(|c| c.size)
            .collect();
        v.sort_unstable();
        v.dedup();
        v
    };
    for b in [
        "tcp",
        "uds",
        "shm",
        "intra",
        "cyclonedds",
        "fastdds",
        "iceoryx",
        "iceoryx2",
        "zenoh",
    ] {
        assert_eq!(of("seed000/", b), large, "{b}");
    }
    assert_eq!(of("seed000/", "udp"), [63001]);
    for b in [
        "shm",
        "cyclonedds",
        "fastdds",
        "iceoryx",
        "iceoryx2",
        "zenoh",
    ] {
        assert_eq!(of("seed000-zero-copy/", b), large, "{b}");
    }
    // The send queue (Perftest's -sendqueuesize) where a binding has one:
    // the DDS writers; every large-data DDS cell has it.
    for c in s.cells.iter().filter(|c| c.key.starts_with("seed000")) {
        let dds = c.binding == "cyclonedds" || c.binding == "fastdds";
        let sq = c.args.windows(2).any(|w| w == ["--send-queue", "5"]);
        assert_eq!(sq, dds, "{}", c.key);
    }
    assert!(
        s.cells
            .iter()
            .any(|c| c.args.windows(2).any(|w| w == ["--transport", "shm"]))
    );
    for t in ["latency", "throughput"] {
        assert!(s.cells.iter().any(|c| c.test == t));
    }
}
