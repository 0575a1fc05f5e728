//! The DDS QoS flags (`--history`, `--durability`, `--async`, `--domain`,
//! `--qos-file`, `--instances`) on both DDS bindings, each binding with
//! itself and the two with each other (Fast DDS and CycloneDDS in one
//! process, over UDP). Every check counts samples; none measures time.

use pubsubperf_core::Received;
use pubsubperf_core::sample::{Header, check_pattern, fill_pattern};
use pubsubperf_core::{
    Binding, BindingError, DataType, Durability, EndpointConfig, History, Reader, Reliability,
    TopicSpec, WaitMode, Writer,
};
use pubsubperf_cyclonedds::CycloneDds;
use pubsubperf_fastdds::FastDds;
use std::sync::Mutex;
use std::time::{Duration, Instant};

const WAIT: Duration = Duration::from_secs(15);
/// One exchange at a time: the checks share the host's DDS ports.
static SERIAL: Mutex<()> = Mutex::new(());

fn cfg(id: &str, data_type: DataType, size: usize) -> EndpointConfig {
    let mut c = EndpointConfig::for_test(&format!("qos{}{id}", std::process::id()));
    c.transport = "udp".into();
    c.reliability = Reliability::Reliable;
    c.wait = WaitMode::Block;
    c.data_type = data_type;
    c.max_sample_size = size;
    c
}

fn topic(name: &str) -> TopicSpec {
    TopicSpec {
        name: name.into(),
        index: 0,
    }
}

fn send_seq<W: Writer>(w: &mut W, len: usize, seq: u64) {
    w.send(len, |b| {
        Header {
            seq,
            publisher: 0,
            flags: 0,
            timestamp: 0,
            key: 0,
        }
        .write(b);
        fill_pattern(b, seq);
    })
    .expect("send");
}

/// Reads until `n` distinct samples arrived (or `WAIT`); returns how many
/// distinct ones came and how many twice. Samples are checked intact.
fn receive<R: Reader>(r: &mut R, first: u64, n: u64) -> (u64, u64) {
    let mut seen = vec![false; n as usize];
    let (mut distinct, mut dup) = (0, 0);
    let start = Instant::now();
    while distinct < n && start.elapsed() < WAIT {
        r.recv(Duration::from_millis(50), &mut |s: Received| {
            let s = s.as_slice().expect("one piece");
            let h = Header::read(s).expect("header");
            assert!(check_pattern(s, h.seq), "sample {} corrupted", h.seq);
            let i = (h.seq - first) as usize;
            if seen[i] {
                dup += 1;
            } else {
                seen[i] = true;
                distinct += 1;
            }
        })
        .expect("recv");
    }
    (distinct, dup)
}

/// Writer on `P`, reader on `S`: a few lock-step samples, then (reliable) a
/// burst of `burst`, every one of which must arrive exactly once.
fn exchange<P: Binding, S: Binding>(cfg: &EndpointConfig, lockstep: u64, burst: u64) {
    let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let len = cfg.max_sample_size;
    let mut sub = S::open(cfg).expect("subscriber side open");
    let (mut r, loc) = sub.create_reader(&topic("data")).expect("reader");
    let mut publ = P::open(cfg).expect("publisher side open");
    let mut w = publ.create_writer(&topic("data"), &[loc]).expect("writer");
    w.wait_matched(1, WAIT).expect("writer matched");
    r.wait_matched(WAIT).expect("reader matched");
    for seq in 0..lockstep {
        send_seq(&mut w, len, seq);
        assert_eq!(receive(&mut r, seq, 1), (1, 0), "lock-step sample {seq}");
    }
    std::thread::scope(|s| {
        let reader = s.spawn(|| receive(&mut r, lockstep, burst));
        for seq in lockstep..lockstep + burst {
            send_seq(&mut w, len, seq);
        }
        assert_eq!(
            reader.join().expect("reader thread"),
            (burst, 0),
            "every burst sample exactly once"
        );
    });
}

macro_rules! all_pairs {
    ($cfg:expr, $lockstep:expr, $burst:expr) => {{
        let c: &EndpointConfig = $cfg;
        let mut c = c.clone();
        let base = c.run_id.clone();
        c.run_id = format!("{base}cc");
        exchange::<CycloneDds, CycloneDds>(&c, $lockstep, $burst);
        c.run_id = format!("{base}ff");
        exchange::<FastDds, FastDds>(&c, $lockstep, $burst);
        c.run_id = format!("{base}cf");
        exchange::<CycloneDds, FastDds>(&c, $lockstep, $burst);
        c.run_id = format!("{base}fc");
        exchange::<FastDds, CycloneDds>(&c, $lockstep, $burst);
    }};
}

#[test]
fn instances_deliver_every_sample_of_every_instance() {
    let mut c = cfg("inst", DataType::Bytes, 256);
    c.instances = 4;
    all_pairs!(&c, 8, 2000);
    let mut c = cfg("instflat", DataType::Flat, 1024);
    c.instances = 7;
    all_pairs!(&c, 8, 1000);
}

#[test]
fn history_keep_all_and_keep_last() {
    let mut c = cfg("ka", DataType::Bytes, 512);
    c.history = Some(History::KeepAll);
    all_pairs!(&c, 4, 2000);
    // Keep-last under best effort, lock step only (a burst may overwrite).
    let mut c = cfg("kl", DataType::Bytes, 512);
    c.reliability = Reliability::BestEffort;
    c.history = Some(History::KeepLast(8));
    all_pairs!(&c, 20, 0);
}

#[test]
fn async_publishing_delivers_lone_samples_and_bursts() {
    // Lock step matters here: CycloneDDS's send thread must not wait for
    // a second sample before sending the first.
    let mut c = cfg("async", DataType::Bytes, 1024);
    c.async_publish = true;
    all_pairs!(&c, 50, 2000);
}

#[test]
fn domain_id_is_used_by_both() {
    let mut c = cfg("dom", DataType::Bytes, 128);
    c.domain = Some(7);
    all_pairs!(&c, 10, 500);
    // Different domains never meet.
    let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let mut a = cfg("domapart", DataType::Bytes, 128);
    a.domain = Some(7);
    let mut b = a.clone();
    b.domain = Some(8);
    let mut sub = FastDds::open(&b).expect("open");
    let (_r, loc) = sub.create_reader(&topic("data")).expect("reader");
    let mut publ = CycloneDds::open(&a).expect("open");
    let mut w = publ.create_writer(&topic("data"), &[loc]).expect("writer");
    let e = w.wait_matched(1, Duration::from_millis(1500)).unwrap_err();
    assert!(matches!(e, BindingError::MatchTimeout(..)), "{e}");
}

/// A writer writes `n` samples before any reader exists; a reader created
/// afterwards gets them with transient-local durability, none with volatile.
fn late_reader<P: Binding, S: Binding>(cfg: &EndpointConfig, n: u64) -> u64 {
    let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let len = cfg.max_sample_size;
    let mut publ = P::open(cfg).expect("publisher side open");
    let mut w = publ.create_writer(&topic("data"), &[]).expect("writer");
    for seq in 0..n {
        send_seq(&mut w, len, seq);
    }
    let mut sub = S::open(cfg).expect("subscriber side open");
    let (mut r, _) = sub.create_reader(&topic("data")).expect("reader");
    w.wait_matched(1, WAIT).expect("writer matched");
    r.wait_matched(WAIT).expect("reader matched");
    let mut got = 0;
    let start = Instant::now();
    while got < n && start.elapsed() < Duration::from_secs(3) {
        got += r
            .recv(Duration::from_millis(50), &mut |s: Received| {
                let s = s.as_slice().expect("one piece");
                assert!(check_pattern(s, Header::read(s).expect("header").seq));
            })
            .expect("recv") as u64;
    }
    got
}

#[test]
fn transient_local_reaches_late_readers() {
    let mut c = cfg("tl", DataType::Bytes, 256);
    c.durability = Some(Durability::TransientLocal);
    c.history = Some(History::KeepLast(16));
    let base = c.run_id.clone();
    for (pair, got) in [
        ("cc", {
            c.run_id = format!("{base}cc");
            late_reader::<CycloneDds, CycloneDds>(&c, 10)
        }),
        ("ff", {
            c.run_id = format!("{base}ff");
            late_reader::<FastDds, FastDds>(&c, 10)
        }),
        ("cf", {
            c.run_id = format!("{base}cf");
            late_reader::<CycloneDds, FastDds>(&c, 10)
        }),
        ("fc", {
            c.run_id = format!("{base}fc");
            late_reader::<FastDds, CycloneDds>(&c, 10)
        }),
    ] {
        assert_eq!(got, 10, "{pair}: late reader with transient-local");
    }
    // The control: volatile, the late reader gets nothing.
    let mut v = cfg("vol", DataType::Bytes, 256);
    v.durability = Some(Durability::Volatile);
    v.history = Some(History::KeepLast(16));
    assert_eq!(late_reader::<CycloneDds, CycloneDds>(&v, 10), 0);
    v.run_id.push('f');
    assert_eq!(late_reader::<FastDds, FastDds>(&v, 10), 0);
}

/// A file under the temporary directory, removed on drop (also when the
/// test fails).
struct TempFile(std::path::PathBuf);

impl TempFile {
    fn path(name: &str) -> TempFile {
        TempFile(std::env::temp_dir().join(format!("pubsubperf-qos-{}-{name}", std::process::id())))
    }
    fn as_string(&self) -> String {
        self.0.to_string_lossy().into_owned()
    }
}

impl Drop for TempFile {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

fn temp_file(name: &str, text: &str) -> TempFile {
    let f = TempFile::path(name);
    std::fs::write(&f.0, text).expect("write temp file");
    f
}

/// A CycloneDDS configuration whose effect shows: a trace of the
/// configuration into a file. Returns (trace, configuration file).
fn cyclone_config_trace(name: &str) -> (TempFile, TempFile) {
    let trace = TempFile::path(&format!("{name}-trace.log"));
    let xml = temp_file(
        &format!("{name}.xml"),
        &format!(
            "<CycloneDDS><Domain id=\"any\"><Tracing><Verbosity>config</Verbosity>\
             <OutputFile>{}</OutputFile></Tracing></Domain></CycloneDDS>",
            trace.0.display()
        ),
    );
    (trace, xml)
}

#[test]
fn cyclonedds_qos_file_is_applied() {
    let (trace, xml) = cyclone_config_trace("cyclone");
    let mut c = cfg("cyfile", DataType::Bytes, 128);
    c.qos_file = Some(xml.as_string());
    c.domain = Some(11); // a domain of its own: its configuration differs
    exchange::<CycloneDds, CycloneDds>(&c, 10, 200);
    let traced = std::fs::metadata(&trace.0).map(|m| m.len()).unwrap_or(0);
    assert!(traced > 0, "the --qos-file's tracing was not applied");
}

/// Profile names are unique per file: Fast DDS keeps every file it loaded
/// in the process and refuses a profile name twice.
fn fastdds_profiles(publisher_partition: &str, subscriber_partition: &str) -> String {
    format!(
        r#"<?xml version="1.0" encoding="UTF-8" ?>
<profiles xmlns="http://www.eprosima.com/XMLSchemas/fastRTPS_Profiles">
  <publisher profile_name="pub_{publisher_partition}_{subscriber_partition}" is_default_profile="true">
    <qos><partition><names><name>{publisher_partition}</name></names></partition></qos>
  </publisher>
  <subscriber profile_name="sub_{publisher_partition}_{subscriber_partition}" is_default_profile="true">
    <qos><partition><names><name>{subscriber_partition}</name></names></partition></qos>
  </subscriber>
</profiles>
"#
    )
}

#[test]
fn fastdds_qos_file_is_applied() {
    // Matching partitions from the file: the run works.
    let same = temp_file("same.xml", &fastdds_profiles("pp_a", "pp_a"));
    let mut c = cfg("fdfile", DataType::Bytes, 128);
    c.qos_file = Some(same.as_string());
    exchange::<FastDds, FastDds>(&c, 10, 200);
    // Different partitions from the file: they never match, so the file is
    // what the endpoints were made from.
    let apart = temp_file("apart.xml", &fastdds_profiles("pp_a", "pp_b"));
    let mut c = cfg("fdapart", DataType::Bytes, 128);
    c.qos_file = Some(apart.as_string());
    {
        let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
        let mut sub = FastDds::open(&c).expect("open");
        let (_r, loc) = sub.create_reader(&topic("data")).expect("reader");
        let mut publ = FastDds::open(&c).expect("open");
        let mut w = publ.create_writer(&topic("data"), &[loc]).expect("writer");
        let e = w.wait_matched(1, Duration::from_millis(1500)).unwrap_err();
        assert!(matches!(e, BindingError::MatchTimeout(..)), "{e}");
    }
    // A file Fast DDS cannot parse: a clear error naming the flag.
    let bad = temp_file("bad.xml", "<profiles><oops");
    let mut c = cfg("fdbad", DataType::Bytes, 128);
    c.qos_file = Some(bad.as_string());
    let e = FastDds::open(&c).err().expect("refused").to_string();
    assert!(e.contains("--qos-file"), "{e}");
}

#[test]
fn keyed_zero_copy_is_refused_by_fastdds() {
    let mut c = cfg("kzc", DataType::Flat, 1024);
    c.transport = "shm".into();
    c.zero_copy = true;
    c.instances = 2;
    let e = FastDds::validate(&c).unwrap_err().to_string();
    assert!(e.starts_with("--instances"), "{e}");
}

/// `--max-blocking-time`: each stack's writer holds it (read back with
/// get_qos; CycloneDDS's writer in 100 ms slices, written again until the
/// whole time has passed), and a best-effort CycloneDDS writer has none.
#[test]
fn max_blocking_time_reaches_both_stacks() {
    let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let mut c = cfg("mbt", DataType::Bytes, 128);
    c.reliable_block_timeout_ms = 2500;
    let mut cy = CycloneDds::open(&c).expect("open");
    let w = cy.create_writer(&topic("data"), &[]).expect("writer");
    assert_eq!(w.max_blocking_time(), Some(Duration::from_millis(100)));
    assert_eq!(w.block_timeout(), Duration::from_millis(2500));
    c.run_id.push('f');
    let mut fa = FastDds::open(&c).expect("open");
    let w = fa.create_writer(&topic("data"), &[]).expect("writer");
    assert_eq!(w.max_blocking_time(), Duration::from_millis(2500));
    let mut be = cfg("mbtbe", DataType::Bytes, 128);
    be.reliability = Reliability::BestEffort;
    let mut cy = CycloneDds::open(&be).expect("open");
    let w = cy.create_writer(&topic("data"), &[]).expect("writer");
    assert_eq!(w.max_blocking_time(), None);
}

/// `--no-positive-acks`: Fast DDS's writer and reader hold it, with our
/// keep duration, and lock-step samples arrive; without it, neither has
/// it. (An unpaced burst may lose samples: a sample is repaired only while
/// the writer keeps it; with 1 ms, 107 of 2000 were lost here on loopback.)
#[test]
fn fastdds_no_positive_acks_is_applied() {
    let mut c = cfg("npa", DataType::Bytes, 512);
    c.no_positive_acks = true;
    {
        let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
        let mut p = FastDds::open(&c).expect("open");
        let (r, _) = p.create_reader(&topic("data")).expect("reader");
        let w = p.create_writer(&topic("data"), &[]).expect("writer");
        assert_eq!(
            w.positive_acks_off(),
            Some(pubsubperf_fastdds::KEEP_DURATION)
        );
        assert!(r.positive_acks_off());
    }
    exchange::<FastDds, FastDds>(&c, 50, 0);
    let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let plain = cfg("npaoff", DataType::Bytes, 512);
    let mut p = FastDds::open(&plain).expect("open");
    let (r, _) = p.create_reader(&topic("data")).expect("reader");
    let w = p.create_writer(&topic("data"), &[]).expect("writer");
    assert_eq!(w.positive_acks_off(), None);
    assert!(!r.positive_acks_off());
}

/// `--bandwidth-limit`: the Fast DDS writer publishes through a flow
/// controller of that many bytes per second, and delivers everything.
#[test]
fn fastdds_bandwidth_limit_is_a_flow_controller() {
    let mut c = cfg("bw", DataType::Bytes, 1024);
    c.bandwidth_limit = 20_000_000;
    {
        let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
        let mut p = FastDds::open(&c).expect("open");
        let w = p.create_writer(&topic("data"), &[]).expect("writer");
        assert_eq!(w.bandwidth_limit(), Some(20_000_000));
    }
    exchange::<FastDds, FastDds>(&c, 10, 2000);
    let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let mut p = FastDds::open(&cfg("bwoff", DataType::Bytes, 1024)).expect("open");
    let w = p.create_writer(&topic("data"), &[]).expect("writer");
    assert_eq!(w.bandwidth_limit(), None);
}

/// `--multicast-ttl`: Fast DDS's UDP transport holds it (its default is 1).
#[test]
fn fastdds_multicast_ttl_is_the_transports() {
    let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let mut c = cfg("ttl", DataType::Bytes, 128);
    c.multicast = true;
    c.multicast_ttl = Some(3);
    assert_eq!(FastDds::open(&c).expect("open").multicast_ttl(), Some(3));
    let d = cfg("ttloff", DataType::Bytes, 128);
    assert_eq!(FastDds::open(&d).expect("open").multicast_ttl(), Some(1));
}

/// `--multicast-address`: the reader's QoS holds it as its multicast
/// locator, the kernel has Fast DDS's socket in that group, and samples
/// arrive; without `--multicast` it is refused.
#[test]
fn fastdds_multicast_address_is_the_readers_locator() {
    use pubsubperf_testkit::groups::is_joined;
    let group = "239.255.77.44";
    let ip: std::net::IpAddr = group.parse().unwrap();
    let mut c = cfg("mcaddr", DataType::Bytes, 128);
    c.multicast_address = Some(group.into());
    let e = FastDds::validate(&c).unwrap_err().to_string();
    assert!(
        e.starts_with("--multicast-address 239.255.77.44: needs --multicast"),
        "{e}"
    );
    c.multicast = true;
    {
        let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
        assert!(!is_joined(ip), "{group} joined before the test");
        let mut p = FastDds::open(&c).expect("open");
        let (r, _) = p.create_reader(&topic("data")).expect("reader");
        assert_eq!(r.multicast_address().as_deref(), Some(group));
        assert!(is_joined(ip), "{group} not among the kernel's groups");
        let mut d = cfg("mcaddroff", DataType::Bytes, 128);
        d.multicast = true;
        let mut p = FastDds::open(&d).expect("open");
        let (r, _) = p.create_reader(&topic("data")).expect("reader");
        assert!(r.multicast_address().is_some_and(|a| a != group));
    }
    exchange::<FastDds, FastDds>(&c, 10, 100);
}

/// `--batch`, `--multicast-ttl` and `--multicast-address` on CycloneDDS:
/// its configuration trace shows what the domain got (WriteBatch, the
/// batch's packet size, the TTL, the data's multicast group), and samples
/// flow. Whether batched samples wait for the flush
/// cannot be seen in one process (CycloneDDS hands them to local readers
/// directly); the binary's batched runs cover delivery across processes.
#[test]
fn cyclonedds_batch_ttl_and_multicast_address_are_applied() {
    let (trace, xml) = cyclone_config_trace("knobs");
    let mut c = cfg("cybatch", DataType::Bytes, 256);
    c.batch_bytes = 8192;
    c.multicast = true;
    c.multicast_ttl = Some(3);
    c.multicast_address = Some("239.255.77.45".into());
    c.qos_file = Some(xml.as_string());
    c.domain = Some(12); // a domain of its own: its configuration differs
    exchange::<CycloneDds, CycloneDds>(&c, 10, 0);
    let text = std::fs::read_to_string(&trace.0).expect("trace written");
    let line = |key: &str| {
        text.lines()
            .find(|l| l.contains(key))
            .unwrap_or_else(|| panic!("{key} not in the configuration trace"))
            .to_string()
    };
    assert!(
        line("WriteBatch").contains("true"),
        "{}",
        line("WriteBatch")
    );
    assert!(
        line("MaxMessageSize").contains(": 8 KiB"),
        "{}",
        line("MaxMessageSize")
    );
    assert!(
        line("MulticastTimeToLive").contains(": 3"),
        "{}",
        line("MulticastTimeToLive")
    );
    assert!(
        line("DefaultMulticastAddress").contains(": 239.255.77.45"),
        "{}",
        line("DefaultMulticastAddress")
    );
}

/// The UDP transport asks for a 4 MiB receive buffer without
/// `--socket-buffer` (the buffer size given with it otherwise), and reliable
/// readers answer heartbeats at once: what keeps an unpaced reliable writer
/// from stalling on losses in the reader's socket. Writers send heartbeats
/// every `HEARTBEAT_PERIOD` (Fast DDS's default is 3 s), asynchronous ones
/// every `ASYNC_HEARTBEAT_PERIOD`.
#[test]
fn fastdds_udp_receive_buffer_and_heartbeats() {
    let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let c = cfg("rcvbuf", DataType::Bytes, 128);
    let mut p = FastDds::open(&c).expect("open");
    assert_eq!(
        p.udp_receive_buffer(),
        Some(pubsubperf_fastdds::UDP_RECEIVE_BUFFER as u32)
    );
    let (r, _) = p.create_reader(&topic("data")).expect("reader");
    assert_eq!(
        r.heartbeat_response_delay(),
        pubsubperf_fastdds::HEARTBEAT_RESPONSE
    );
    let w = p.create_writer(&topic("data"), &[]).expect("writer");
    assert_eq!(w.heartbeat_period(), pubsubperf_fastdds::HEARTBEAT_PERIOD);
    drop(w);
    drop(r);
    drop(p);
    let mut a = cfg("hbasync", DataType::Bytes, 128);
    a.async_publish = true;
    let mut p = FastDds::open(&a).expect("open");
    let w = p.create_writer(&topic("data"), &[]).expect("writer");
    assert_eq!(
        w.heartbeat_period(),
        pubsubperf_fastdds::ASYNC_HEARTBEAT_PERIOD
    );
    drop(w);
    drop(p);
    let mut d = cfg("rcvbuf1m", DataType::Bytes, 128);
    d.socket_buffer = 1 << 20;
    assert_eq!(
        FastDds::open(&d).expect("open").udp_receive_buffer(),
        Some(1 << 20)
    );
}

/// A writer deleted while samples wait unacknowledged in its history ends:
/// Fast DDS 2.9's destructor releases them one by one before it stops the
/// periodic heartbeat, and a heartbeat in between used to loop for ever
/// holding the writer's lock (`ppf_delete_writer` empties the history
/// first). A deletion that hangs aborts the test process after 60 s.
#[test]
fn a_writer_deleted_with_unacknowledged_samples_ends() {
    let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let c = cfg("teardown", DataType::Bytes, 1024);
    let mut sub = FastDds::open(&c).expect("open");
    let (mut r, loc) = sub.create_reader(&topic("data")).expect("reader");
    let mut publ = FastDds::open(&c).expect("open");
    let (done, finished) = std::sync::mpsc::channel::<()>();
    let watchdog = std::thread::spawn(move || {
        if finished.recv_timeout(Duration::from_secs(60)).is_err() {
            // Straight to stderr: the test harness's capture of eprintln
            // would be lost with the process.
            let _ = std::io::Write::write_all(
                &mut std::io::stderr(),
                b"a fastdds writer's deletion hung for 60 s\n",
            );
            std::process::abort();
        }
    });
    // Each writer writes for 20 ms (several heartbeat periods, so that a
    // heartbeat may come at any point of the deletion) and is deleted at once.
    let mut seq = 0;
    for _ in 0..40 {
        let mut w = publ
            .create_writer(&topic("data"), std::slice::from_ref(&loc))
            .expect("writer");
        w.wait_matched(1, WAIT).expect("writer matched");
        let start = Instant::now();
        while start.elapsed() < Duration::from_millis(20) {
            send_seq(&mut w, 1024, seq);
            seq += 1;
        }
        drop(w);
        while r.recv(Duration::ZERO, &mut |_: Received| {}).expect("recv") > 0 {}
    }
    done.send(()).expect("watchdog waits");
    watchdog.join().expect("watchdog");
}

/// The data topic's endpoints allocate every sample their history may hold
/// within 4 MiB (a flat memory over long runs); a latency test's ping and
/// echo topics, one sample in flight, allocate a few and let Fast DDS grow
/// the rest (their pools' free lists are searched on every release).
#[test]
fn only_the_data_topic_preallocates_its_history() {
    let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let c = cfg("prealloc", DataType::Bytes, 1024);
    let mut p = FastDds::open(&c).expect("open");
    let per_sample = 1024 + 520;
    for (name, up_front) in [
        ("data", (4 << 20) / per_sample),
        ("ping", 16),
        ("echo0", 16),
    ] {
        let (r, _) = p.create_reader(&topic(name)).expect("reader");
        let w = p.create_writer(&topic(name), &[]).expect("writer");
        assert_eq!(
            (w.allocated_samples(), r.allocated_samples()),
            (up_front, up_front),
            "{name}: samples allocated up front by the writer and the reader"
        );
    }
}
