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
        c.args(),
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
            .map(|c| format!("{}  {}", c.key, c.args().join(" ")))
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
            .all(|c| c.args().contains(&"--zero-copy".to_string())
                && c.args().windows(2).any(|w| w == ["--receive-queue", "5"]))
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
        let sq = c.args().windows(2).any(|w| w == ["--send-queue", "5"]);
        assert_eq!(sq, dds, "{}", c.key);
    }
    assert!(
        s.cells
            .iter()
            .any(|c| c.args().windows(2).any(|w| w == ["--transport", "shm"]))
    );
    for t in ["latency", "throughput"] {
        assert!(s.cells.iter().any(|c| c.test == t));
    }
}

#[test]
fn hosts_put_each_cell_on_a_host_of_the_inventory() {
    let text = r#"
[hosts.board1]
connect = "ssh://pi@board1"
data_address = "eth1"
remote_path = "/opt/pubsubperf"

[hosts.lab]
connect = "198.18.0.2:7400"
token_file = "lab.token"

[matrix]
bindings = ["udp"]
sizes = [64]
hosts = ["local", "board1", "lab"]
"#;
    let s = sweep::parse(text, "h").unwrap();
    let got: Vec<(String, String)> = s
        .cells
        .iter()
        .map(|c| (c.key.clone(), c.args().join(" ")))
        .collect();
    assert_eq!(
        got,
        [
            (
                "latency/udp/transport=default/size=64/host=local".to_string(),
                "latency --binding udp --size 64".to_string()
            ),
            (
                "latency/udp/transport=default/size=64/host=board1".to_string(),
                "latency --binding udp --size 64 --connect ssh://pi@board1?data=eth1&path=/opt/pubsubperf".to_string()
            ),
            (
                "latency/udp/transport=default/size=64/host=lab".to_string(),
                "latency --binding udp --size 64 --connect 198.18.0.2:7400 --token-file lab.token".to_string()
            ),
        ]
    );
    // The publisher on another host: in the key, the digest and the cell.
    let text2 = format!("{text}publisher_hosts = [\"local\", \"board1\"]\n");
    let s = sweep::parse(&text2, "h").unwrap();
    assert_eq!(s.cells.len(), 6);
    let remote: Vec<_> = s.cells.iter().filter(|c| c.publisher.is_some()).collect();
    assert_eq!(remote.len(), 3);
    assert!(
        remote[0].key.ends_with("/host=local/pub=board1"),
        "{}",
        remote[0].key
    );
    assert_eq!(
        remote[0].publisher.as_ref().unwrap().connect,
        "ssh://pi@board1"
    );
    assert_ne!(remote[0].digest, s.cells[0].digest);
    let e = sweep::parse(
        &text.replace("hosts = [", "publisher_hosts = [\"lab\"]\nhosts = ["),
        "h",
    )
    .unwrap_err();
    assert!(e.contains("'lab' is reached by address"), "{e}");
    // Without a hosts axis, keys stay as they were (resume of older sweeps).
    let s = sweep::parse("[matrix]\nbindings = [\"udp\"]\nsizes = [64]\n", "h").unwrap();
    assert_eq!(s.cells[0].key, "latency/udp/transport=default/size=64");
}

#[test]
fn host_mistakes_name_the_key() {
    for (text, needle) in [
        (
            "[matrix]\nbindings = [\"udp\"]\nsizes = [64]\nhosts = [\"nope\"]\n",
            "matrix.hosts: 'nope' is not in the inventory",
        ),
        (
            "[hosts.a]\nconnect = \"h:1\"\ndata_address = \"eth0\"\n[matrix]\nbindings = [\"udp\"]\nsizes = [64]\nhosts = [\"a\"]\n",
            "hosts.a: data_address and remote_path are for ssh:// hosts",
        ),
        (
            "[hosts.a]\nconnect = \"ssh://h\"\ntoken_file = \"t\"\n[matrix]\nbindings = [\"udp\"]\nsizes = [64]\nhosts = [\"a\"]\n",
            "hosts.a.token_file: an ssh:// host needs no token",
        ),
        (
            "[matrix]\nbindings = [\"udp\"]\nsizes = [64]\n[settings]\nconnect = \"h:1\"\n",
            "settings.connect: set by the matrix",
        ),
        (
            "[hosts.a]\nconnect = \"h:1\"\nnic = \"x\"\n[matrix]\nbindings = [\"udp\"]\nsizes = [64]\n",
            "nic",
        ),
    ] {
        let e = sweep::parse(text, "h").unwrap_err();
        assert!(e.contains(needle), "{e}");
    }
}
