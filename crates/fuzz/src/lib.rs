//! Fuzz targets for every parser of untrusted input in pubsubperf, and a
//! deterministic input generator so that the same targets also run on
//! stable Rust as a bounded "fuzz smoke" test (`cargo test -p
//! pubsubperf-fuzz`).
//!
//! Untrusted input is anything that comes from outside the process:
//! - control-channel frames from a peer ([`control_decode`]:
//!   `pubsubperf_harness::protocol::decode`), and whole handshakes
//!   ([`handshake`]: the bytes a stranger sends an agent, or a fake agent a
//!   publisher, through `pubsubperf_harness::auth`);
//! - results files read back by `merge`, `compare`, `report` and users'
//!   tools ([`results_file`]: `ResultsFile` JSON, and each run's histogram
//!   through `LatencyRecorder::from_summary`; [`histogram`] aims at the
//!   HdrHistogram V2 + deflate decoder below base64 directly);
//! - sizes typed by users or read from sweep files ([`size`]);
//! - sweep TOML files ([`sweep`]: `pubsubperf_report::sweep::parse`).
//!
//! Each target must return normally for every input: an error is fine, a
//! panic, an abort or a runaway allocation is a bug. The nightly fuzzer
//! (crates/fuzz/fuzz, `scripts/fuzz.sh SECONDS`) runs the same functions.

use base64::Engine;
use pubsubperf_core::result::ResultsFile;
use pubsubperf_core::stats::{LatencyRecorder, LatencySummary};

/// Control channel: a frame body from a peer.
pub fn control_decode(data: &[u8]) {
    if let Ok(m) = pubsubperf_harness::protocol::decode(data) {
        // What decodes must encode and decode again.
        let f = pubsubperf_harness::protocol::encode(&m);
        let again = pubsubperf_harness::protocol::decode(&f[4..]);
        assert!(
            again.is_ok(),
            "re-encoded message does not decode: {again:?}"
        );
    }
}

/// The token of the [`handshake`] target's agent and publisher.
const TOKEN: &str = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";

/// A handshake with a stranger: `data`'s first byte picks the side under
/// test (even: an agent holding [`TOKEN`] reads the rest as what a
/// publisher sent it; odd: a publisher holding it reads the rest as what an
/// agent sent), the rest arrives over a loopback connection, which then
/// ends. Neither side may panic, and neither may accept: without the token
/// no input can prove it over the other side's fresh nonce.
pub fn handshake(data: &[u8]) {
    use pubsubperf_harness::channel::Ctl;
    use std::io::Write;
    use std::time::{Duration, Instant};
    let Some((&side, bytes)) = data.split_first() else {
        return;
    };
    let Ok(l) = std::net::TcpListener::bind("127.0.0.1:0") else {
        return;
    };
    let Ok(stranger) = l.local_addr().and_then(std::net::TcpStream::connect) else {
        return;
    };
    let Ok((ours, _)) = l.accept() else { return };
    // The stranger's bytes, then its end: the side under test reads them
    // all and then sees the connection close (never waits out its deadline).
    let mut w = &stranger;
    let _ = w.write_all(bytes);
    let _ = stranger.shutdown(std::net::Shutdown::Write);
    let deadline = Instant::now() + Duration::from_secs(2);
    let ctl = Ctl::stranger(ours);
    if side % 2 == 0 {
        let r = pubsubperf_harness::auth::admit(&ctl, Some(TOKEN), deadline);
        assert!(r.is_err(), "a stranger was admitted: {r:?}");
    } else {
        let r = pubsubperf_harness::auth::greet(&ctl, "fuzz", Some(TOKEN), deadline);
        assert!(r.is_err(), "a fake agent passed the publisher's check");
    }
}

/// A results file, and the histogram of each of its runs.
pub fn results_file(data: &[u8]) {
    let Ok(file) = serde_json::from_slice::<ResultsFile>(data) else {
        return;
    };
    for run in &file.runs {
        if let Some(s) = &run.latency_ns {
            summary(s);
        }
    }
    let _ = serde_json::to_vec(&file);
}

fn summary(s: &LatencySummary) {
    if let Ok(mut rec) = LatencyRecorder::from_summary(s) {
        let _ = rec.summary();
        let other = rec.clone();
        rec.merge(&other);
        let _ = rec.quantile(0.99);
    }
}

/// The histogram decoder alone: `data` is the decoded (binary) histogram,
/// as if a results file carried its base64.
pub fn histogram(data: &[u8]) {
    let mut s = seed_summary();
    s.histogram = base64::engine::general_purpose::STANDARD.encode(data);
    summary(&s);
    // And as text, straight into the base64 layer.
    if let Ok(t) = std::str::from_utf8(data) {
        s.histogram = t.to_string();
        summary(&s);
    }
}

/// Sizes and lists of sizes.
pub fn size(data: &[u8]) {
    let Ok(t) = std::str::from_utf8(data) else {
        return;
    };
    if let Ok(n) = pubsubperf_core::size::parse_size(t) {
        let _ = pubsubperf_core::size::format_size(n);
    }
    let _ = pubsubperf_core::size::parse_size_list(t);
}

/// Sweep files. The input is bounded (4 KiB) like the other text targets'
/// useful inputs; the expansion of a valid sweep is bounded by the parser.
pub fn sweep(data: &[u8]) {
    let Ok(t) = std::str::from_utf8(data) else {
        return;
    };
    let _ = pubsubperf_report::sweep::parse(t, "fuzz");
}

fn seed_summary() -> LatencySummary {
    let mut r = LatencyRecorder::new();
    for v in [900u64, 1_000, 1_500, 20_000, 3_000_000] {
        r.record(v);
    }
    r.summary()
}

/// Valid (or nearly valid) inputs to start mutating from, per target.
pub fn seeds(target: &str) -> Vec<Vec<u8>> {
    let s = |x: &str| x.as_bytes().to_vec();
    match target {
        "control_decode" => {
            let env = serde_json::to_string(&pubsubperf_core::environment::Environment::detect())
                .unwrap_or_else(|_| "{}".into());
            vec![
                s(r#"{"type":"hello","version":"0.1.0","protocol":1}"#),
                s(
                    r#"{"type":"hello","version":"0.1.0","protocol":3,"nonce":"0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"}"#,
                ),
                s(
                    r#"{"type":"challenge","nonce":"0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef","proof":"00"}"#,
                ),
                s(r#"{"type":"proof","proof":"0123"}"#),
                s(&format!(
                    r#"{{"type":"welcome","version":"0.1.0","environment":{env}}}"#
                )),
                s(&format!(
                    r#"{{"type":"welcome","version":"0.1.0","environment":{env},"seen_from":"198.18.0.1"}}"#
                )),
                s(
                    r#"{"type":"error","message":"busy, running session 3 from 198.18.0.1:41234 (for 12 s)"}"#,
                ),
                s(r#"{"type":"error","message":"version mismatch"}"#),
                s(r#"{"type":"locators","data":"198.18.0.2:40000"}"#),
                s(r#"{"type":"peer","echo":"198.18.0.1:40001"}"#),
                s(r#"{"type":"ready"}"#),
                s(r#"{"type":"start"}"#),
                s(r#"{"type":"heartbeat"}"#),
                s(r#"{"type":"stop","sent":18446744073709551615}"#),
                s(r#"{"type":"bye"}"#),
                s(
                    r#"{"type":"interval","interval":{"t_s":1.0,"subscriber":0,"received":10,"lost":1,"samples_per_s":10.0,"mbps":0.1,"cpu_percent":3.0}}"#,
                ),
                s(
                    r#"{"type":"result","throughput":{"sent":5,"received":4,"bytes":256,"samples_per_s":4.0,"mbps":0.1,"lost":1,"lost_percent":20.0,"duplicates":0,"out_of_order":0},"echoed":0,"bad_samples":0,"resources":{"cpu_percent":1.0,"max_rss_kib":1000,"voluntary_cs":1,"involuntary_cs":2}}"#,
                ),
                s(r#"{"type":"setup","spec":{"binding":"udp","test":"latency","size":64}}"#),
            ]
        }
        "handshake" => {
            let frame = |side: u8, msgs: &[&str]| {
                let mut v = vec![side];
                for m in msgs {
                    v.extend_from_slice(&(m.len() as u32).to_le_bytes());
                    v.extend_from_slice(m.as_bytes());
                }
                v
            };
            let nonce = "00".repeat(32);
            let proof = "11".repeat(32);
            let hello = format!(
                r#"{{"type":"hello","version":"{}","protocol":{},"nonce":"{nonce}"}}"#,
                pubsubperf_harness::VERSION,
                pubsubperf_harness::protocol::PROTOCOL
            );
            let p = format!(r#"{{"type":"proof","proof":"{proof}"}}"#);
            let c = format!(r#"{{"type":"challenge","nonce":"{nonce}","proof":"{proof}"}}"#);
            vec![
                frame(0, &[&hello, &p]),
                frame(0, &[&hello, r#"{"type":"error","message":"x"}"#]),
                frame(0, &[r#"{"type":"hello","version":"0.1.0","protocol":3}"#]),
                frame(
                    1,
                    &[
                        &c,
                        r#"{"type":"welcome","version":"0.1.0","environment":{}}"#,
                    ],
                ),
                frame(1, &[r#"{"type":"error","message":"busy"}"#]),
            ]
        }
        "results_file" => {
            let sum = serde_json::to_value(seed_summary()).unwrap_or_default();
            let env = serde_json::to_value(pubsubperf_core::environment::Environment::detect())
                .unwrap_or_default();
            let file = serde_json::json!({
                "tool": {"name": "pubsubperf", "version": "0.1.0", "schema": 1},
                "environment": env,
                "runs": [{
                    "binding": "udp", "transport": "udp", "test": "latency", "size": 64,
                    "zero_copy": false, "data_type": "bytes", "reliable": false,
                    "config": {"rate": 0},
                    "latency_ns": sum,
                    "latency_method": "one-way = round trip / 2",
                    "throughput": {"sent": 5, "received": 4, "bytes": 256, "samples_per_s": 4.0,
                                   "mbps": 0.1, "lost": 1, "lost_percent": 20.0,
                                   "duplicates": 0, "out_of_order": 0},
                    "intervals": [{"t_s": 1.0, "received": 4, "lost": 1,
                                   "samples_per_s": 4.0, "mbps": 0.1}],
                    "resources": {"publisher": {"cpu_percent": 1.0, "max_rss_kib": 100,
                                                "voluntary_cs": 1, "involuntary_cs": 1},
                                  "subscriber": {"cpu_percent": 1.0, "max_rss_kib": 100,
                                                 "voluntary_cs": 1, "involuntary_cs": 1}},
                    "complete": true, "started_at": "2026-01-01T00:00:00Z", "duration_s": 1.0
                }]
            });
            vec![serde_json::to_vec(&file).unwrap_or_default()]
        }
        "histogram" => {
            let h = seed_summary().histogram;
            let bin = base64::engine::general_purpose::STANDARD
                .decode(&h)
                .unwrap_or_default();
            vec![bin, h.into_bytes()]
        }
        "size" => [
            "64",
            "1KiB",
            "1.5MB",
            "32,64,1KiB,64KiB,1MiB",
            "256MiB",
            "16 k",
            "1GB",
        ]
        .iter()
        .map(|x| s(x))
        .collect(),
        "sweep" => vec![
            s(
                "name = \"quick\"\nrepetitions = 2\n\n[matrix]\nbindings = [\"udp\", \"tcp\"]\ntests = [\"latency\", \"throughput\"]\nsizes = [64, \"1KiB\"]\ntransports = { udp = [\"udp\"] }\nreliability = [\"default\"]\nzero_copy = [false]\nwait = [\"block\", \"busy\"]\nrate = [\"default\", 1000]\nsubscribers = [1, 2]\n\n[settings]\nduration = \"2s\"\n\n[settings.throughput]\nlatency_every = 100\n\n[binding.udp]\nsocket_buffer = \"4MiB\"\n",
            ),
            s(
                "[hosts.b1]\nconnect = \"ssh://pi@b1:22\"\ndata_address = \"eth1\"\nremote_path = \"/opt/pubsubperf\"\n\n[hosts.b2]\nconnect = \"198.18.0.2:7400\"\ntoken_file = \"lab.token\"\n\n[matrix]\nbindings = [\"udp\"]\nsizes = [64]\nhosts = [\"local\", \"b1\", \"b2\"]\n",
            ),
        ],
        _ => Vec::new(),
    }
}

/// A fuzz target: must return normally for every input.
pub type Target = fn(&[u8]);

/// Every target by name.
pub const TARGETS: &[(&str, Target)] = &[
    ("control_decode", control_decode),
    ("handshake", handshake),
    ("results_file", results_file),
    ("histogram", histogram),
    ("size", size),
    ("sweep", sweep),
];

/// A deterministic input generator (xorshift64*): random bytes, seeds, and
/// seeds mutated the way a fuzzer mutates them (flips, inserts of bytes and
/// syntax tokens, deletions, duplications, truncation, splicing).
pub struct Gen {
    state: u64,
    seeds: Vec<Vec<u8>>,
}

/// Tokens that tend to reach deeper into JSON and TOML parsers.
const TOKENS: &[&str] = &[
    "\"",
    "{",
    "}",
    "[",
    "]",
    ":",
    ",",
    "=",
    "\n",
    "null",
    "true",
    "-1",
    "0",
    "1e400",
    "18446744073709551616",
    "-9223372036854775809",
    "\"\\u0000\"",
    "\"\\ud800\"",
    "NaN",
    "[[matrix]]",
    "[settings]",
    "KiB",
    "GiB",
    ".",
    "e",
    "\"type\":\"setup\"",
    "\"histogram\":",
    "\"count\":",
    "\"runs\":[",
    "HISTFAAAA",
    "=",
];

impl Gen {
    /// A generator for `target`, seeded with `seed`.
    pub fn new(target: &str, seed: u64) -> Gen {
        Gen {
            state: seed | 1,
            seeds: seeds(target),
        }
    }

    fn next(&mut self) -> u64 {
        let mut x = self.state;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.state = x;
        x.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }

    /// The next input.
    pub fn input(&mut self) -> Vec<u8> {
        let mut v = match self.below(8) {
            0 => (0..self.below(256)).map(|_| self.next() as u8).collect(),
            _ if self.seeds.is_empty() => Vec::new(),
            _ => {
                let i = self.below(self.seeds.len());
                self.seeds[i].clone()
            }
        };
        let rounds = 1 + self.below(8);
        for _ in 0..rounds {
            let len = v.len();
            match self.below(8) {
                0 if len > 0 => {
                    let i = self.below(len);
                    v[i] ^= 1 << self.below(8);
                }
                1 => {
                    let i = self.below(len + 1);
                    let b = self.next() as u8;
                    v.insert(i, b);
                }
                2 if len > 0 => {
                    let i = self.below(len);
                    let n = self.below(len - i + 1).min(16);
                    v.drain(i..i + n);
                }
                3 if len > 0 => {
                    let i = self.below(len);
                    let n = self.below(len - i + 1).min(64);
                    let piece: Vec<u8> = v[i..i + n].to_vec();
                    let at = self.below(v.len() + 1);
                    v.splice(at..at, piece);
                }
                4 => {
                    let t = TOKENS[self.below(TOKENS.len())].as_bytes();
                    let at = self.below(len + 1);
                    v.splice(at..at, t.iter().copied());
                }
                5 if len > 0 => v.truncate(self.below(len)),
                6 if !self.seeds.is_empty() => {
                    let k = self.below(self.seeds.len());
                    let other = self.seeds[k].clone();
                    let at = self.below(len + 1);
                    let from = self.below(other.len() + 1);
                    v.truncate(at);
                    v.extend_from_slice(&other[from..]);
                }
                _ if len > 0 => {
                    // A digit changed into another: numbers at their limits.
                    let i = self.below(len);
                    if v[i].is_ascii_digit() {
                        v[i] = b'0' + self.below(10) as u8;
                    } else {
                        v[i] = self.next() as u8;
                    }
                }
                _ => {}
            }
        }
        v
    }
}

/// Runs `target` on up to `iterations` generated inputs (at most `budget`
/// of wall time); returns how many ran.
pub fn smoke(name: &str, target: fn(&[u8]), iterations: u64, budget: std::time::Duration) -> u64 {
    let start = std::time::Instant::now();
    let mut g = Gen::new(name, 0x5eed_0000 ^ name.len() as u64);
    for s in seeds(name) {
        target(&s);
    }
    let mut n = 0;
    while n < iterations && start.elapsed() < budget {
        target(&g.input());
        n += 1;
    }
    n
}
