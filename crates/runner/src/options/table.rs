//! Every option of `latency` and `throughput`, in the order of their help.

use super::{Choices, Grammar, Kind, TestOption};
use pubsubperf_core::{DataType, Durability, ReceiveMode, WaitMode};
use pubsubperf_harness::spec::RoundTripClock;

use Grammar::{Choice, Flag, Path, Repeated, Switch, Value};
use Kind::{Delivery, Hosts, Measurement, Output, Placement, Qos, Test};

const DATA_TYPES: Choices<DataType> = Choices(&[
    (
        "bytes",
        DataType::Bytes,
        "Length-prefixed byte sequence, serialized at each end",
    ),
    (
        "flat",
        DataType::Flat,
        "Fixed-size layout used in place (FlatData)",
    ),
]);

const WAITS: Choices<WaitMode> = Choices(&[
    (
        "busy",
        WaitMode::Busy,
        "Spin on a non-blocking poll (lowest latency, burns a core)",
    ),
    (
        "block",
        WaitMode::Block,
        "Block in the kernel until data arrives",
    ),
]);

const RECEIVES: Choices<ReceiveMode> = Choices(&[
    (
        "listener",
        ReceiveMode::Listener,
        "The middleware's own receive thread, in a data-available listener",
    ),
    (
        "thread",
        ReceiveMode::Thread,
        "pubsubperf's receive thread, waiting as --wait says",
    ),
]);

const CLOCKS: Choices<RoundTripClock> = Choices(&[
    (
        "auto",
        RoundTripClock::Auto,
        "The TSC with busy waits where usable, else CLOCK_MONOTONIC",
    ),
    (
        "monotonic",
        RoundTripClock::Monotonic,
        "CLOCK_MONOTONIC (what most peer tools use)",
    ),
    (
        "tsc",
        RoundTripClock::Tsc,
        "The TSC (needs --wait busy, no --one-way, a kernel keeping time with it)",
    ),
]);

const DURABILITIES: Choices<Durability> = Choices(&[
    (
        "volatile",
        Durability::Volatile,
        "Late-joining readers get nothing written before",
    ),
    (
        "transient-local",
        Durability::TransientLocal,
        "Writers keep their history for late-joining readers",
    ),
]);

/// The table. A setter stores the value where the planner reads it; it
/// checks only the value's form (a number, one of a list): what a value
/// means for the run is checked when the request is planned.
pub static OPTIONS: &[TestOption] = &[
    TestOption::new(
        "binding",
        Value("NAME"),
        Test,
        "Binding of the publisher (see 'pubsubperf bindings')",
        |r, v| v.text().map(|x| r.binding = x),
    )
    .short('b')
    .default("udp"),
    TestOption::new(
        "peer-binding",
        Value("NAME"),
        Test,
        "Binding of the subscribers, for cross-vendor runs (default: --binding)",
        |r, v| v.text().map(|x| r.peer_binding = Some(x)),
    ),
    TestOption::new(
        "transport",
        Value("NAME"),
        Test,
        "Transport within the binding (default: the binding's first)",
        |r, v| v.text().map(|x| r.transport = Some(x)),
    )
    .short('t')
    .details(
        "The first is the one its vendor's own tool runs over (the first `pubsubperf bindings` lists; fastdds and connext `udp+shm`, fastdds `udp` with `--multicast`); between two vendors' bindings (`--peer-binding`) and in a topology mixing them, `udp`, the one both speak",
    ),
    TestOption::new(
        "size",
        Value("SIZES"),
        Test,
        "Sample sizes in bytes, a list: 32,64,1KiB,64KiB,1MiB. Each size is one run",
        |r, v| v.text().map(|x| r.size = x),
    )
    .short('s')
    .default("64"),
    TestOption::new(
        "duration",
        Value("TIME"),
        Test,
        "Measurement length per size (e.g. 10, 10s, 500ms, 2m)",
        |r, v| v.text().map(|x| r.duration = Some(x)),
    )
    .short('d')
    .details(
        "Default: 5 s a size (each `--find-max` trial: 2 s); `--count` measures a number of samples instead",
    ),
    TestOption::new(
        "count",
        Value("N"),
        Test,
        "Measured samples per size (latency: pings; throughput: samples sent)",
        |r, v| v.parse().map(|x| r.count = Some(x)),
    )
    .short('n'),
    TestOption::new(
        "warmup",
        Value("TIME"),
        Test,
        "Warm-up before measuring, excluded from results",
        |r, v| v.text().map(|x| r.warmup = x),
    )
    .default("1s"),
    TestOption::new(
        "rate",
        Value("RATES"),
        Test,
        "Samples per second (latency: pings/s, with coordinated-omission correction; \
         throughput: sending rate), a list: 1,10,100,1k,10k,max (k: ×1000, M: ×10⁶; max: no \
         limit). Each rate is one run. Default: max, as fast as possible",
        |r, v| v.text().map(|x| r.rate = Some(x)),
    )
    .details(
        "A latency run at a rate uses the coordinated-omission correction (docs/method.md), `max` does not; `max` is recorded as `config.rate: 0`",
    ),
    TestOption::new(
        "demand",
        Value("START:STEP:END"),
        Test,
        "Throughput: a demand ramp as RTI's Throughput example runs it: for each N from START \
         to END by STEP, write N samples back to back, pause 10 ms, and again for --duration; \
         one run (table row) per demand",
        |r, v| v.text().map(|x| r.demand = Some(x)),
    )
    .details(
        "See docs/throughput-example.md",
    ),
    TestOption::new(
        "recovery-time",
        Value("MS"),
        Test,
        "Throughput with --demand: pause after each demand before the next, ms (or a time like \
         1s; default 0)",
        |r, v| v.text().map(|x| r.recovery_time = Some(x)),
    ),
    TestOption::new(
        "batch",
        Value("BYTES"),
        Delivery,
        "Batch samples into writes of up to BYTES where the binding can",
        |r, v| v.text().map(|x| r.batch = Some(x)),
    )
    .details(
        "udp, tcp, uds; cyclonedds over udp, 2048-65000: WriteBatch with packets of BYTES, 14720 when not given, as `ddsperf pub`, `--batch 0` for none; refused by fastdds, which has no write batching, and the others. A batched run's banner says `batched N B`; the JSON has `config.endpoint.batch_bytes`",
    ),
    TestOption::new(
        "latency-every",
        Value("N"),
        Measurement,
        "Throughput test: echo every Nth sample to measure latency under load",
        |r, v| v.parse().map(|x| r.latency_every = Some(x)),
    ),
    TestOption::new("reliable", Flag, Delivery, "Reliable delivery", |r, v| {
        v.flag().map(|x| r.reliable = x)
    })
    .conflicts(&["best-effort"])
    .details(
        "Default: the binding's",
    ),
    TestOption::new("best-effort", Flag, Delivery, "Best-effort delivery", |r, v| {
        v.flag().map(|x| r.best_effort = x)
    }),
    TestOption::new(
        "multicast",
        Flag,
        Delivery,
        "Multicast delivery (udp, cyclonedds, fastdds)",
        |r, v| v.flag().map(|x| r.multicast = x),
    ),
    TestOption::new("ipv6", Flag, Delivery, "IPv6 instead of IPv4", |r, v| {
        v.flag().map(|x| r.ipv6 = x)
    }),
    TestOption::new(
        "zero-copy",
        Switch,
        Delivery,
        "Loaned shared-memory buffers (bindings with a zero-copy path); `--zero-copy false` \
         copies. Default: as the middleware's own benchmark (iceoryx2 and iceoryx loan, the \
         others copy)",
        |r, v| v.switch().map(|x| r.zero_copy = Some(x)),
    )
    .details(
        "The benchmarks that loan are iceoryx2's publish-subscribe benchmark and iceoryx's iceperf; `--zero-copy false` copies in and out",
    ),
    TestOption::new(
        "data-type",
        Choice("TYPE", &DATA_TYPES),
        Delivery,
        "Sample representation",
        |r, v| v.choose(&DATA_TYPES).map(|x| r.data_type = Some(x)),
    ),
    TestOption::new(
        "subscribers",
        Value("N"),
        Test,
        "Number of subscribers (data fans out to all; echoes round-robin), a list: 1,2,4,8 \
         (each 1-64). Each count is one run",
        |r, v| v.text().map(|x| r.subscribers = x),
    )
    .default("1"),
    TestOption::new(
        "publishers",
        Value("M"),
        Test,
        "Throughput: number of publishers, each a process writing its own numbered stream to \
         every subscriber (loss is counted per publisher), a list: 1,2,4 (each 1-64). Each \
         count is one run",
        |r, v| v.text().map(|x| r.publishers = x),
    )
    .default("1")
    .details(
        "See docs/method.md, more than one endpoint",
    ),
    TestOption::new(
        "topics",
        Value("T"),
        Test,
        "Topics side by side, each with its own publisher and subscribers (a run of this test \
         per topic, all at once), a list: 1,2,4 (each 1-64). Each count is one run; its \
         figures are all topics' together",
        |r, v| v.text().map(|x| r.topics = x),
    )
    .default("1"),
    TestOption::new(
        "connect-publishers",
        Value("ADDR"),
        Hosts,
        "Extra publishers on other hosts ('pubsubperf sub --listen ADDR' there), \
         comma-separated, instead of local publisher processes",
        |r, v| v.text().map(|x| r.connect_publishers = Some(x)),
    ),
    TestOption::new(
        "cpu",
        Value("PUB,SUB"),
        Placement,
        "Cores for publisher and subscriber, PUB,SUB (default 0,1 when there are two or more \
         cores; 'none' to leave scheduling to the kernel)",
        |r, v| v.text().map(|x| r.cpu = Some(x)),
    ),
    TestOption::new(
        "rt-priority",
        Value("N"),
        Placement,
        "SCHED_FIFO real-time priority (1-99) for both sides",
        |r, v| v.parse().map(|x| r.rt_priority = Some(x)),
    )
    .details(
        "Refused with a clear error without the permission",
    ),
    TestOption::new(
        "mlock",
        Flag,
        Placement,
        "Lock all memory of both sides (mlockall)",
        |r, v| v.flag().map(|x| r.mlock = x),
    ),
    TestOption::new(
        "wait",
        Choice("WAIT", &WAITS),
        Delivery,
        "How readers wait: busy-poll or block. Default: as the middleware's own benchmark \
         (iceoryx2 and iceoryx busy-poll, the others block)",
        |r, v| v.choose(&WAITS).map(|x| r.wait = Some(x)),
    )
    .details(
        "A busy poll never sleeps; where the middleware's own threads deliver the samples (cyclonedds, fastdds, zenoh) it yields the core (`sched_yield`) after each empty poll, so that those threads are not stuck behind it until its time slice ends (on 2 cores, 1 KiB round trips: a p99 of 0.2-2 ms beside 36-76 µs, for a p50 a few µs higher with cyclonedds, 21-22 → 26-27 µs, and fastdds, 36-38 → 38-42 µs); shm, iceoryx, iceoryx2 and the sockets spin",
    ),
    TestOption::new(
        "receive",
        Choice("MODE", &RECEIVES),
        Delivery,
        "Which thread runs the subscriber's per-sample code: the middleware's (a listener, \
         ddsperf's and Perftest's default) or our own receive thread (Perftest's \
         -useReadThread). Default: the binding's fastest (`pubsubperf bindings` lists them, \
         the default first)",
        |r, v| v.choose(&RECEIVES).map(|x| r.receive = Some(x)),
    )
    .details(
        "The listener is the middleware's own receive thread, in a data-available listener or subscriber callback (ddsperf's, Perftest's, z_pong's default; cyclonedds, fastdds, zenoh); the thread is pubsubperf's, waiting as `--wait` says (Perftest's `-useReadThread`, ddsperf's `waitset`). The default is listed first under RECEIVE by `pubsubperf bindings` (cyclonedds, fastdds and zenoh: listener; with `--wait busy`: thread); refused where the binding has no listener. A listener run's results say `endpoint.receive: listener` and its table header `receive listener`. In a latency run the publisher's echo reader listens too: the listener reads the round-trip clock as the echo arrives and writes the next ping from there, as ddsperf's ping and the vendors' latency programs do (without `--rate`; the publisher's thread sleeps through 10 ms windows, then records the round trips and keeps the books; the run's data topic is then `ping`, whose cyclonedds writer keeps the last sample only, like ddsperf's, as a writer on the receive thread must never wait for acknowledgements that same thread takes in); with `--receive listener --wait busy` the subscriber stays in the listener and the publisher polls for its echo on its own thread instead (z_ping's busy mode beside z_pong's callback)",
    ),
    TestOption::new(
        "check",
        Flag,
        Measurement,
        "Fill payloads with a pattern the subscriber verifies; bad samples are counted",
        |r, v| v.flag().map(|x| r.check = x),
    ),
    TestOption::new(
        "one-way",
        Flag,
        Measurement,
        "Latency: record each direction's one-way latency from the two sides' clocks (across \
         hosts, with their offset estimated before and after)",
        |r, v| v.flag().map(|x| r.one_way = x),
    ),
    TestOption::new(
        "profile",
        Flag,
        Measurement,
        "Trace each side's system calls over the run (strace, else perf trace) and print them \
         per sample with context switches and CPU time; see docs/profiling.md",
        |r, v| v.flag().map(|x| r.profile = x),
    ),
    TestOption::new(
        "explain",
        Flag,
        Measurement,
        "The kernel's account of the slow samples: scheduler, interrupt and idle events on both \
         sides' cores, recorded with eBPF (root), shared out by percentile band; see \
         docs/explain.md",
        |r, v| v.flag().map(|x| r.explain = x),
    ),
    TestOption::new(
        "clock",
        Choice("CLOCK", &CLOCKS),
        Measurement,
        "Latency: the clock that times round trips: auto (the TSC with --wait busy where the \
         kernel keeps time with it, else CLOCK_MONOTONIC), monotonic, or tsc",
        |r, v| v.choose(&CLOCKS).map(|x| r.clock = x),
    )
    .default("auto"),
    TestOption::new(
        "echo-timeout",
        Value("TIME"),
        Measurement,
        "A ping without echo after this long counts as lost (latency test)",
        |r, v| v.text().map(|x| r.echo_timeout = x),
    )
    .default("1s"),
    TestOption::new(
        "socket-buffer",
        Value("BYTES"),
        Delivery,
        "Kernel socket buffer size for socket bindings",
        |r, v| v.text().map(|x| r.socket_buffer = Some(x)),
    ),
    TestOption::new(
        "send-queue",
        Value("N"),
        Delivery,
        "Writer queue size in samples (Perftest -sendQueueSize)",
        |r, v| v.parse().map(|x| r.send_queue = Some(x)),
    )
    .details(
        "Refused where there is none to size (udp, tcp, uds, shm and intra)",
    ),
    TestOption::new(
        "receive-queue",
        Value("N"),
        Delivery,
        "Reader queue size in samples (Perftest -receiveQueueSize)",
        |r, v| v.parse().map(|x| r.receive_queue = Some(x)),
    )
    .details(
        "Refused where there is none to size (udp, tcp and uds)",
    ),
    TestOption::new(
        "history",
        Value("KIND"),
        Qos,
        "DDS history of writers and readers: keep-last:N or keep-all (default: the binding's, \
         see README)",
        |r, v| v.text().map(|x| r.history = Some(x)),
    ),
    TestOption::new(
        "durability",
        Choice("KIND", &DURABILITIES),
        Qos,
        "DDS durability of writers and readers (default volatile)",
        |r, v| v.choose(&DURABILITIES).map(|x| r.durability = Some(x)),
    ),
    TestOption::new(
        "async",
        Flag,
        Qos,
        "Asynchronous publishing (DDS: Fast DDS's asynchronous publish mode, CycloneDDS's send \
         thread)",
        |r, v| v.flag().map(|x| r.async_publish = x),
    ),
    TestOption::new(
        "domain",
        Value("ID"),
        Qos,
        "DDS domain id (default: one derived from the run id, 1-230)",
        |r, v| v.parse().map(|x| r.domain = Some(x)),
    )
    .details(
        "0-230",
    ),
    TestOption::new(
        "qos-file",
        Path("PATH"),
        Qos,
        "Vendor QoS file passed through: CycloneDDS XML configuration, Fast DDS XML profiles. \
         An agent at HOST:PORT (--connect) is sent only the file's name, and applies the file \
         of that name in its --qos-dir",
        |r, v| v.text().map(|x| r.qos_file = Some(x.into())),
    )
    .details(
        "A name is letters, digits, `.`, `_`, `-`, ending in `.xml` (docs/two-hosts.md, vendor files); over `ssh://` the same absolute path must exist on the subscriber's host. The path may not hold `,<>&\"'` or a `.`/`..` component",
    ),
    TestOption::new(
        "instances",
        Value("N"),
        Qos,
        "Keyed type with N instances written round-robin (DDS)",
        |r, v| v.parse().map(|x| r.instances = Some(x)),
    )
    .details(
        "Readers count every instance's samples",
    ),
    TestOption::new(
        "max-blocking-time",
        Value("TIME"),
        Delivery,
        "How long a reliable writer may block on a full queue before the write fails (DDS: \
         RELIABILITY max_blocking_time; default 10s)",
        |r, v| v.text().map(|x| r.max_blocking_time = Some(x)),
    )
    .details(
        "Default: the middleware's own, zenoh's `wait_before_close` of 5s; 10s, ddsperf's, for the others. The DDS bindings' RELIABILITY max_blocking_time, zenoh's `wait_before_close`, the block timeout of every other binding with reliable delivery; refused for best-effort runs. Recorded as `config.endpoint.reliable_block_timeout_ms`",
    ),
    TestOption::new(
        "no-positive-acks",
        Flag,
        Qos,
        "Readers send no positive acknowledgements; writers keep samples 1 ms instead (Fast \
         DDS's DisablePositiveACKs)",
        |r, v| v.flag().map(|x| r.no_positive_acks = x),
    )
    .details(
        "fastdds: DisablePositiveACKs (writers keep samples 100 ms; loss is possible under reliable, see docs/bindings/fastdds.md); connext: disable_positive_acks (samples kept 100 µs, Perftest's)",
    ),
    TestOption::new(
        "bandwidth-limit",
        Value("BYTES"),
        Qos,
        "A flow controller limits each writer to BYTES per second (Fast DDS)",
        |r, v| v.text().map(|x| r.bandwidth_limit = Some(x)),
    )
    .details(
        "fastdds, connext; the writers become asynchronous",
    ),
    TestOption::new(
        "no-push-on-write",
        Flag,
        Qos,
        "Pull-mode reliability (Connext's push_on_write = false; connext only)",
        |r, v| v.flag().map(|x| r.no_push_on_write = x),
    )
    .details(
        "Reliable writers announce samples and send them when readers ask; neither CycloneDDS 0.10 nor Fast DDS 2.9 has it, so the other bindings refuse it",
    ),
    TestOption::new(
        "multicast-ttl",
        Value("N"),
        Qos,
        "Time to live of multicast datagrams, 0-255 (with --multicast; DDS)",
        |r, v| v.parse().map(|x| r.multicast_ttl = Some(x)),
    )
    .details(
        "udp: the writer socket's IP_MULTICAST_TTL / IPV6_MULTICAST_HOPS; cyclonedds `General/MulticastTimeToLive`; fastdds the UDP transport's TTL",
    ),
    TestOption::new(
        "multicast-address",
        Value("ADDR"),
        Qos,
        "The multicast group the data goes to (with --multicast; udp, cyclonedds, fastdds); \
         default: a group derived per run",
        |r, v| v.text().map(|x| r.multicast_address = Some(x)),
    )
    .details(
        "Perftest's `-multicastAddr`, the Throughput example's `-mcast_recv_addr`. udp: the group its readers' sockets join (the ports stay derived per topic); cyclonedds: `Discovery/DefaultMulticastAddress` (every traffic but participant discovery, which keeps 239.255.0.1) with `prefer_multicast` on the interface, so that even one reader is sent to by multicast; fastdds: the readers' multicast locator (`multicast_locator_list`). IPv4 or IPv6 as the run (`--ipv6`); a unicast address is refused",
    ),
    TestOption::new(
        "sleep",
        Value("TIME"),
        Test,
        "Throughput: the publisher sleeps TIME after each write (Perftest's -sleep; batches are \
         flushed first)",
        |r, v| v.text().map(|x| r.sleep = Some(x)),
    )
    .details(
        "Every binding; not with `--rate` or `--find-max`. `--rate` paces by a schedule and spins; `--sleep` frees the CPU and adds the write's own time to each period",
    ),
    TestOption::new(
        "pace",
        Value("spin|sleep"),
        Test,
        "Throughput with --rate: how the publisher waits for each sample's slot: spin (exact \
         spacing, burns its core; the default) or sleep (little CPU; a late wake-up sends the \
         overdue samples back to back, the rate holds on average). For long runs on a shared \
         machine",
        |r, v| v.text().map(|x| r.pace = Some(x)),
    )
    .details(
        "`spin` sleeps while the slot is more than 200 µs away and spins the rest, so samples leave on schedule and the publisher's core is busy at high rates (at 10 000/s, 100 µs apart, it spins all the time). `sleep` only sleeps: the rate holds on average with a few % of a core (bench/soak.sh). Refused without `--rate` and for latency tests. Recorded as `config.pace_sleep` when `sleep`",
    ),
    TestOption::new(
        "opt",
        Repeated("KEY=VALUE"),
        Delivery,
        "Binding-specific option, KEY=VALUE (repeatable)",
        |r, v| v.text().map(|x| r.opts.push(x)),
    )
    .details(
        "tcp takes `--opt nodelay=off` (Nagle's algorithm on, as iperf3 and sockperf's throughput mode leave it; default `on`: `TCP_NODELAY`); cyclonedds and fastdds take `peers=ADDR`; udp and uds take no `--opt` and refuse one",
    ),
    TestOption::new(
        "connect",
        Value("ADDR"),
        Hosts,
        "Subscriber(s) on other hosts (comma-separated for several), instead of local \
         subscriber processes: HOST:PORT of a 'pubsubperf agent --listen', or \
         ssh://[user@]host[:port] to start one there over SSH",
        |r, v| v.text().map(|x| r.connect = Some(x)),
    ),
    TestOption::new(
        "token-file",
        Path("PATH"),
        Hosts,
        "The agents' token file (default: $PUBSUBPERF_TOKEN_FILE, else \
         ~/.config/pubsubperf/agent.token), with --connect",
        |r, v| v.text().map(|x| r.token_file = Some(x.into())),
    )
    .details(
        "See docs/agent-security.md, the token",
    ),
    TestOption::new(
        "insecure",
        Flag,
        Hosts,
        "Present no token to the agents of --connect, and take one that has none (an `agent \
         --insecure`): neither side is proven, anyone on the path can read and change the \
         session",
        |r, v| v.flag().map(|x| r.insecure = x),
    )
    .conflicts(&["token-file"]),
    TestOption::new(
        "remote-path",
        Value("PATH"),
        Hosts,
        "The pubsubperf binary on ssh:// hosts (default: pubsubperf on the remote user's PATH)",
        |r, v| v.text().map(|x| r.remote_path = Some(x)),
    ),
    TestOption::new(
        "data-address",
        Value("ADDR|NIC"),
        Hosts,
        "The address or interface name (eth1) this side's endpoints use for data (Perftest's \
         -nic; default: the address towards the subscriber)",
        |r, v| v.text().map(|x| r.data_address = Some(x)),
    )
    .alias(&["nic"]),
    TestOption::new(
        "connect-timeout",
        Value("TIME"),
        Hosts,
        "How long to wait for subscribers to connect and match",
        |r, v| v.text().map(|x| r.connect_timeout = x),
    )
    .default("10s"),
    TestOption::new(
        "json",
        Path("FILE"),
        Output,
        "Write results as JSON (rewritten after each run)",
        |r, v| v.text().map(|x| r.json = Some(x.into())),
    ),
    TestOption::new(
        "csv",
        Path("FILE"),
        Output,
        "Write results as CSV, one row per run (rewritten after each run)",
        |r, v| v.text().map(|x| r.csv = Some(x.into())),
    ),
    TestOption::new(
        "quiet",
        Flag,
        Output,
        "No per-interval lines on stderr",
        |r, v| v.flag().map(|x| r.quiet = x),
    )
    .short('q'),
    TestOption::new(
        "find-max",
        Flag,
        Test,
        "Throughput: search the highest sending rate whose loss is at most --max-loss (RFC 2544 \
         style); each trial lasts --duration (default 2s here)",
        |r, v| v.flag().map(|x| r.find_max = x),
    ),
    TestOption::new(
        "max-loss",
        Value("PCT"),
        Test,
        "Throughput with --find-max: acceptable loss in percent",
        |r, v| v.parse().map(|x| r.max_loss = Some(x)),
    )
    .requires("find-max"),
    TestOption::new(
        "load",
        Value("PROFILE"),
        Placement,
        "Run under a standard load: stress-ng's stressors of PROFILE (cpu, memory, cache, irq, \
         network, io, all) on --load-cpu for the whole command, recorded in each run \
         (docs/machine.md)",
        |r, v| v.text().map(|x| r.load = Some(x)),
    )
    .details(
        "One worker each per core of `--load-cpu`; each run records it in `config.load` and its banner says `under load: ...`",
    ),
    TestOption::new(
        "load-cpu",
        Value("LIST"),
        Placement,
        "The cores the load runs on (a CPU list: 0-1, 0,2); default every core",
        |r, v| v.text().map(|x| r.load_cpu = Some(x)),
    )
    .requires("load"),
];
