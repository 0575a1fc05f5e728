// fastdds-ref: a minimal Fast DDS 2.9 latency/throughput program of ours,
// the reference that bench/fastdds_vs_ref.sh runs beside pubsubperf's
// fastdds binding. Written with Fast DDS's documented DDS API only (no
// pubsubperf code): a hand-written TopicDataType, DataReaderListener or
// WaitSet, take_next_sample, DataWriter::write.
//
// usage: fastdds-ref ping|pong|pub|sub [--size B] [--seconds S] [--domain D]
//                    [--waitset] [--warmup S] [--transport udp|udp+shm]
//                    [--best-effort]
//   ping  writes a sample on "ref_ping", waits for its echo on "ref_pong",
//         and prints "p50_us p99_us count" of one-way latency (round trip
//         / 2) over the samples after the warm-up (default 1 s).
//   pong  echoes every sample of "ref_ping" on "ref_pong"; ends when its
//         ping is gone (or after --seconds).
//   pub   writes samples on "ref_tp" as fast as DataWriter::write returns.
//   sub   counts them; prints "rate N lost L" every second.
// Default: samples are handled in a DataReaderListener (on_data_available,
// on Fast DDS's receive thread; the ping writes the next ping from there).
// --waitset: the main thread waits on a WaitSet (DATA_AVAILABLE) and takes.
//
// The configuration is that of pubsubperf's fastdds binding by default, so
// that the comparison is of the harness, not of the QoS: UDPv4 only,
// bound to 127.0.0.1, unicast discovery through the initial peer 127.0.0.1,
// reliable, KEEP_ALL on both ends, volatile, heartbeats every 5 ms,
// PREALLOCATED_WITH_REALLOC payloads, the same type and wire form as the
// binding's `bytes` type: { sequence<octet> data; }, XCDR1; and Fast DDS's
// two documented knobs that decide reliable throughput over loopback here:
// a 4 MiB UDP receive buffer (with the system's 208 KiB, an unpaced writer
// overflows it and every loss waits for a heartbeat/NACK repair: ~5 000
// samples/s at 1 KiB instead of ~60 000) and readers that answer a
// heartbeat at once (heartbeatResponseDelay 0 instead of 5 ms). The
// writer's max_samples is bounded by bytes, clamp(32 MiB / size, 2, 5000),
// as the binding's: with Fast DDS's 5000 whatever the size, an unpaced
// writer of 64 KiB samples fell to 5 000-8 000 samples/s after a few
// seconds, and one of 1 MiB samples stalled for seconds. Unlike the
// binding, which allocates up to 4 MiB of samples up front (a flat memory
// over long runs), this program allocates 16 and lets Fast DDS grow the
// rest: docs/bindings/fastdds.md, Heartbeats, has why the binding's
// allocation needs the short heartbeat period.
//
// --transport udp+shm --best-effort: the binding's defaults, which are Fast
// DDS LatencyTest's and ThroughputTest's: Fast DDS's shared-memory transport
// beside the UDPv4 one (its segment sized as the binding sizes it,
// 4 x the sample + 256 KiB within 1-64 MiB), best effort, KEEP_LAST with the
// binding's depths (writer clamp(256 MiB / size, 2, 64), reader
// clamp(1 GiB / size, 2 x the writer's, 5000)).

#include <fastcdr/Cdr.h>
#include <fastcdr/FastBuffer.h>
#include <fastcdr/exceptions/Exception.h>
#include <fastdds/dds/core/condition/WaitSet.hpp>
#include <fastdds/dds/domain/DomainParticipant.hpp>
#include <fastdds/dds/domain/DomainParticipantFactory.hpp>
#include <fastdds/dds/publisher/DataWriter.hpp>
#include <fastdds/dds/publisher/Publisher.hpp>
#include <fastdds/dds/subscriber/DataReader.hpp>
#include <fastdds/dds/subscriber/DataReaderListener.hpp>
#include <fastdds/dds/subscriber/SampleInfo.hpp>
#include <fastdds/dds/subscriber/Subscriber.hpp>
#include <fastdds/dds/topic/TopicDataType.hpp>
#include <fastdds/dds/topic/TypeSupport.hpp>
#include <fastdds/rtps/transport/UDPv4TransportDescriptor.h>
#include <fastdds/rtps/transport/shared_mem/SharedMemTransportDescriptor.h>
#include <fastrtps/utils/IPLocator.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

using namespace eprosima::fastdds::dds;
using eprosima::fastdds::rtps::UDPv4TransportDescriptor;
using eprosima::fastrtps::rtps::IPLocator;
using eprosima::fastrtps::rtps::Locator_t;
using eprosima::fastrtps::rtps::SerializedPayload_t;
using Clock = std::chrono::steady_clock;
namespace cdr = eprosima::fastcdr;

namespace {

std::atomic<bool> g_stop{false};

struct Sample {
    uint32_t len = 0;
    std::vector<uint8_t> buf;  // capacity = the largest sample
};

// { sequence<octet> data; } in XCDR1: encapsulation, length, octets.
class BytesType : public TopicDataType {
public:
    explicit BytesType(uint32_t max) : max_(max) {
        setName("fastdds_ref::Bytes");
        m_typeSize = 4 + 4 + max + 3;
        m_isGetKeyDefined = false;
        auto_fill_type_object(false);
        auto_fill_type_information(false);
    }
    bool serialize(void* data, SerializedPayload_t* payload) override {
        auto* s = static_cast<Sample*>(data);
        cdr::FastBuffer fb(reinterpret_cast<char*>(payload->data), payload->max_size);
        cdr::Cdr ser(fb, cdr::Cdr::DEFAULT_ENDIAN, cdr::Cdr::DDS_CDR);
        payload->encapsulation = ser.endianness() == cdr::Cdr::BIG_ENDIANNESS ? CDR_BE : CDR_LE;
        try {
            ser.serialize_encapsulation();
            ser << s->len;
            ser.serializeArray(s->buf.data(), s->len);
        } catch (cdr::exception::Exception&) {
            return false;
        }
        payload->length = static_cast<uint32_t>(ser.getSerializedDataLength());
        return true;
    }
    bool deserialize(SerializedPayload_t* payload, void* data) override {
        auto* s = static_cast<Sample*>(data);
        cdr::FastBuffer fb(reinterpret_cast<char*>(payload->data), payload->length);
        cdr::Cdr des(fb, cdr::Cdr::DEFAULT_ENDIAN, cdr::Cdr::DDS_CDR);
        try {
            des.read_encapsulation();
            uint32_t n = 0;
            des >> n;
            if (n > s->buf.size()) return false;
            des.deserializeArray(s->buf.data(), n);
            s->len = n;
        } catch (cdr::exception::Exception&) {
            return false;
        }
        return true;
    }
    std::function<uint32_t()> getSerializedSizeProvider(void* data) override {
        return [data]() -> uint32_t { return 8 + static_cast<Sample*>(data)->len; };
    }
    void* createData() override {
        auto* s = new Sample();
        s->buf.resize(max_ ? max_ : 1);
        return s;
    }
    void deleteData(void* data) override { delete static_cast<Sample*>(data); }
    bool getKey(void*, eprosima::fastrtps::rtps::InstanceHandle_t*, bool) override { return false; }

private:
    uint32_t max_;
};

struct Args {
    std::string mode;
    uint32_t size = 64;
    double seconds = 5;
    double warmup = 1;
    int domain = 0;
    bool waitset = false;
    bool shm = false;          // --transport udp+shm
    bool best_effort = false;  // --best-effort
};

[[noreturn]] void usage(const char* why) {
    std::fprintf(stderr, "fastdds-ref: %s\nusage: fastdds-ref ping|pong|pub|sub [--size B] [--seconds S] [--domain D] [--waitset] [--warmup S] [--transport udp|udp+shm] [--best-effort]\n", why);
    std::exit(2);
}

Args parse(int argc, char** argv) {
    Args a;
    if (argc < 2) usage("missing mode");
    a.mode = argv[1];
    if (a.mode != "ping" && a.mode != "pong" && a.mode != "pub" && a.mode != "sub") usage("mode must be ping, pong, pub or sub");
    for (int i = 2; i < argc; i++) {
        std::string k = argv[i];
        auto val = [&]() -> const char* {
            if (i + 1 >= argc) usage((k + " needs a value").c_str());
            return argv[++i];
        };
        if (k == "--size") a.size = static_cast<uint32_t>(std::strtoul(val(), nullptr, 10));
        else if (k == "--seconds") a.seconds = std::atof(val());
        else if (k == "--warmup") a.warmup = std::atof(val());
        else if (k == "--domain") a.domain = std::atoi(val());
        else if (k == "--waitset") a.waitset = true;
        else if (k == "--best-effort") a.best_effort = true;
        else if (k == "--transport") {
            std::string t = val();
            if (t != "udp" && t != "udp+shm") usage("--transport: udp or udp+shm");
            a.shm = t == "udp+shm";
        }
        else usage(("unknown flag " + k).c_str());
    }
    if (a.size < 16) usage("--size: at least 16 (a timestamp and a sequence number)");
    return a;
}

// The pubsubperf fastdds binding's endpoint QoS (see the header comment).
template <class Q>
void common_qos(Q& q, const Args& a) {
    q.reliability().kind = a.best_effort ? BEST_EFFORT_RELIABILITY_QOS : RELIABLE_RELIABILITY_QOS;
    q.durability().kind = VOLATILE_DURABILITY_QOS;
    q.history().kind = a.best_effort ? KEEP_LAST_HISTORY_QOS : KEEP_ALL_HISTORY_QOS;
    q.history().depth = 1;
    q.endpoint().history_memory_policy = eprosima::fastrtps::rtps::PREALLOCATED_WITH_REALLOC_MEMORY_MODE;
}

// KEEP_LAST `depth` (best effort) or KEEP_ALL of `max` samples (reliable).
template <class Q>
void history_limits(Q& q, const Args& a, int32_t depth, int32_t max) {
    if (a.best_effort) {
        q.history().depth = depth;
        if (depth > q.resource_limits().max_samples_per_instance) {
            q.resource_limits().max_samples_per_instance = depth;
            q.resource_limits().max_samples = std::max(q.resource_limits().max_samples, depth);
        }
    } else {
        q.resource_limits().max_samples = max;
        q.resource_limits().max_samples_per_instance = max;
    }
}

DataWriterQos writer_qos(const Args& a) {
    DataWriterQos q = DATAWRITER_QOS_DEFAULT;
    common_qos(q, a);
    uint32_t size = a.size;
    int32_t depth = static_cast<int32_t>(std::clamp<uint64_t>((256ull << 20) / size, 2, 64));
    int32_t max = static_cast<int32_t>(std::clamp<uint64_t>((32ull << 20) / size, 2, 5000));
    history_limits(q, a, depth, max);
    q.resource_limits().allocated_samples = std::min(depth, 16);
    q.reliability().max_blocking_time = eprosima::fastrtps::Duration_t(10, 0);
    q.reliable_writer_qos().times.heartbeatPeriod = eprosima::fastrtps::Duration_t(0, 5000000);
    q.data_sharing().off();
    return q;
}

DataReaderQos reader_qos(const Args& a) {
    DataReaderQos q = DATAREADER_QOS_DEFAULT;
    common_qos(q, a);
    uint32_t size = a.size;
    int32_t wdepth = static_cast<int32_t>(std::clamp<uint64_t>((256ull << 20) / size, 2, 64));
    int32_t depth = static_cast<int32_t>(std::clamp<uint64_t>((1ull << 30) / size, 2 * wdepth, 5000));
    history_limits(q, a, depth, depth);
    q.resource_limits().allocated_samples = std::min(depth, 16);
    q.data_sharing().off();
    // Acknowledge a heartbeat at once (Fast DDS waits 5 ms by default).
    q.reliable_reader_qos().times.heartbeatResponseDelay = eprosima::fastrtps::Duration_t(0, 0);
    return q;
}

DomainParticipant* open_participant(const Args& a) {
    int domain = a.domain;
    DomainParticipantQos pq = PARTICIPANT_QOS_DEFAULT;
    pq.name("fastdds-ref");
    pq.transport().use_builtin_transports = false;
    if (a.shm) {
        auto shm = std::make_shared<eprosima::fastdds::rtps::SharedMemTransportDescriptor>();
        uint64_t segment = std::clamp<uint64_t>(4ull * a.size + (256u << 10), 1u << 20, 64u << 20);
        shm->segment_size(static_cast<uint32_t>(segment));
        pq.transport().user_transports.push_back(shm);
    }
    auto udp = std::make_shared<UDPv4TransportDescriptor>();
    udp->interfaceWhiteList.push_back("127.0.0.1");
    // A 4 MiB receive buffer (the kernel caps it at net.core.rmem_max);
    // the send buffer stays the system's.
    udp->receiveBufferSize = 4u << 20;
    pq.transport().user_transports.push_back(udp);
    auto& b = pq.wire_protocol().builtin;
    b.avoid_builtin_multicast = true;
    Locator_t peer;
    peer.kind = LOCATOR_KIND_UDPv4;
    IPLocator::setIPv4(peer, "127.0.0.1");
    b.initialPeersList.push_back(peer);
    b.discovery_config.initial_announcements.count = 5;
    b.discovery_config.initial_announcements.period = eprosima::fastrtps::Duration_t(0, 50000000);
    auto* p = DomainParticipantFactory::get_instance()->create_participant(domain, pq);
    if (!p) {
        std::fprintf(stderr, "fastdds-ref: could not create a participant in domain %d\n", domain);
        std::exit(1);
    }
    return p;
}

uint64_t now_ns() {
    return static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now().time_since_epoch()).count());
}

bool wait_matched(DataWriter* w, DataReader* r, double seconds) {
    auto end = Clock::now() + std::chrono::duration<double>(seconds);
    while (Clock::now() < end && !g_stop) {
        PublicationMatchedStatus ps;
        SubscriptionMatchedStatus ss;
        bool ok = true;
        if (w) {
            w->get_publication_matched_status(ps);
            ok = ok && ps.current_count > 0;
        }
        if (r) {
            r->get_subscription_matched_status(ss);
            ok = ok && ss.current_count > 0;
        }
        if (ok) return true;
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    return false;
}

// ------------------------------------------------------------ latency

// Shared by ping and pong: the reader of the other side's topic, the
// writer of ours, and one sample to take into and write from.
struct Echo : public DataReaderListener {
    DataWriter* w = nullptr;
    Sample* s = nullptr;
    bool ping = false;
    uint64_t warm_until = 0;
    uint64_t end = 0;
    std::vector<uint32_t> half_rtt;  // ns, preallocated
    std::atomic<bool> done{false};

    // Takes every sample available; pong: echoes each, ping: records the
    // round trip and writes the next ping. Returns false once the ping is done.
    void handle(DataReader* r) {
        SampleInfo info;
        while (r->take_next_sample(s, &info) == ReturnCode_t::RETCODE_OK) {
            if (!info.valid_data) continue;
            if (!ping) {
                w->write(s);
                continue;
            }
            uint64_t t = now_ns();
            uint64_t sent;
            std::memcpy(&sent, s->buf.data(), 8);
            if (t >= warm_until && half_rtt.size() < half_rtt.capacity()) {
                half_rtt.push_back(static_cast<uint32_t>((t - sent) / 2));
            }
            if (t >= end || g_stop) {
                done = true;
                return;
            }
            t = now_ns();
            std::memcpy(s->buf.data(), &t, 8);
            w->write(s);
        }
    }
    void on_data_available(DataReader* r) override {
        if (!done) handle(r);
    }
};

void run_waitset(DataReader* r, Echo& e, double seconds) {
    WaitSet ws;
    StatusCondition& c = r->get_statuscondition();
    c.set_enabled_statuses(StatusMask::data_available());
    ws.attach_condition(c);
    ConditionSeq active;
    auto end = Clock::now() + std::chrono::duration<double>(seconds);
    while (!e.done && !g_stop && Clock::now() < end) {
        ws.wait(active, eprosima::fastrtps::Duration_t(0, 100000000));
        e.handle(r);
        if (!e.ping) {
            SubscriptionMatchedStatus ss;
            r->get_subscription_matched_status(ss);
            if (ss.total_count > 0 && ss.current_count == 0) break;
        }
    }
    ws.detach_condition(c);
}

int latency(const Args& a) {
    bool ping = a.mode == "ping";
    DomainParticipant* p = open_participant(a);
    TypeSupport type(new BytesType(a.size));
    type.register_type(p);
    Topic* tping = p->create_topic("ref_ping", type.get_type_name(), TOPIC_QOS_DEFAULT);
    Topic* tpong = p->create_topic("ref_pong", type.get_type_name(), TOPIC_QOS_DEFAULT);
    Publisher* pub = p->create_publisher(PUBLISHER_QOS_DEFAULT);
    Subscriber* sub = p->create_subscriber(SUBSCRIBER_QOS_DEFAULT);
    Echo e;
    e.ping = ping;
    e.s = static_cast<Sample*>(type.create_data());
    e.s->len = a.size;
    if (ping) e.half_rtt.reserve(static_cast<size_t>(a.seconds * 2e6) + 1024);
    e.w = pub->create_datawriter(ping ? tping : tpong, writer_qos(a));
    DataReader* r = sub->create_datareader(ping ? tpong : tping, reader_qos(a), a.waitset ? nullptr : &e,
                                           a.waitset ? StatusMask::none() : StatusMask::data_available());
    int rc = 0;
    if (ping) {
        if (!wait_matched(e.w, r, 30)) {
            std::fprintf(stderr, "fastdds-ref ping: no pong matched in 30 s (domain %d)\n", a.domain);
            rc = 1;
        } else {
            std::this_thread::sleep_for(std::chrono::milliseconds(200));  // the pong matches us too
            uint64_t t0 = now_ns();
            e.warm_until = t0 + static_cast<uint64_t>(a.warmup * 1e9);
            e.end = e.warm_until + static_cast<uint64_t>(a.seconds * 1e9);
            std::memcpy(e.s->buf.data(), &t0, 8);
            e.w->write(e.s);
            if (a.waitset) {
                run_waitset(r, e, a.warmup + a.seconds + 10);
            } else {
                while (!e.done && !g_stop && now_ns() < e.end + 10000000000ull) {
                    std::this_thread::sleep_for(std::chrono::milliseconds(20));
                }
            }
            r->set_listener(nullptr);
            auto& v = e.half_rtt;
            if (v.empty()) {
                std::fprintf(stderr, "fastdds-ref ping: no echo received\n");
                rc = 1;
            } else {
                std::sort(v.begin(), v.end());
                auto pct = [&](double q) { return v[std::min(v.size() - 1, static_cast<size_t>(q * v.size()))] / 1000.0; };
                std::printf("%.3f %.3f %zu\n", pct(0.50), pct(0.99), v.size());
            }
        }
    } else {
        if (a.waitset) {
            wait_matched(nullptr, r, 30);
            run_waitset(r, e, a.seconds);
        } else {
            auto end = Clock::now() + std::chrono::duration<double>(a.seconds);
            bool seen = false;
            while (!g_stop && Clock::now() < end) {
                SubscriptionMatchedStatus ss;
                r->get_subscription_matched_status(ss);
                if (ss.current_count > 0) seen = true;
                if (seen && ss.current_count == 0) break;
                std::this_thread::sleep_for(std::chrono::milliseconds(20));
            }
            r->set_listener(nullptr);
        }
    }
    type.delete_data(e.s);
    p->delete_contained_entities();
    DomainParticipantFactory::get_instance()->delete_participant(p);
    return rc;
}

// ------------------------------------------------------------ throughput

struct Counter : public DataReaderListener {
    Sample* s = nullptr;
    std::atomic<uint64_t> received{0};
    std::atomic<uint64_t> lost{0};
    uint64_t next_seq = 0;

    void handle(DataReader* r) {
        SampleInfo info;
        while (r->take_next_sample(s, &info) == ReturnCode_t::RETCODE_OK) {
            if (!info.valid_data) continue;
            uint64_t seq;
            std::memcpy(&seq, s->buf.data() + 8, 8);
            if (seq > next_seq) lost.fetch_add(seq - next_seq, std::memory_order_relaxed);
            next_seq = seq + 1;
            received.fetch_add(1, std::memory_order_relaxed);
        }
    }
    void on_data_available(DataReader* r) override { handle(r); }
};

int throughput(const Args& a) {
    DomainParticipant* p = open_participant(a);
    TypeSupport type(new BytesType(a.size));
    type.register_type(p);
    Topic* t = p->create_topic("ref_tp", type.get_type_name(), TOPIC_QOS_DEFAULT);
    int rc = 0;
    if (a.mode == "pub") {
        Publisher* pub = p->create_publisher(PUBLISHER_QOS_DEFAULT);
        DataWriter* w = pub->create_datawriter(t, writer_qos(a));
        auto* s = static_cast<Sample*>(type.create_data());
        s->len = a.size;
        if (!wait_matched(w, nullptr, 30)) {
            std::fprintf(stderr, "fastdds-ref pub: no sub matched in 30 s (domain %d)\n", a.domain);
            rc = 1;
        } else {
            std::this_thread::sleep_for(std::chrono::milliseconds(200));
            auto end = Clock::now() + std::chrono::duration<double>(a.seconds);
            uint64_t seq = 0, failed = 0;
            while (!g_stop) {
                // The clock is read every 64 writes.
                if ((seq & 63) == 0 && Clock::now() >= end) break;
                std::memcpy(s->buf.data() + 8, &seq, 8);
                if (w->write(s)) seq++;
                else failed++;
            }
            w->wait_for_acknowledgments(eprosima::fastrtps::Duration_t(5, 0));
            std::printf("sent %llu failed %llu\n", static_cast<unsigned long long>(seq), static_cast<unsigned long long>(failed));
        }
        type.delete_data(s);
    } else {
        Subscriber* sub = p->create_subscriber(SUBSCRIBER_QOS_DEFAULT);
        Counter c;
        c.s = static_cast<Sample*>(type.create_data());
        DataReader* r = sub->create_datareader(t, reader_qos(a), a.waitset ? nullptr : &c,
                                               a.waitset ? StatusMask::none() : StatusMask::data_available());
        std::thread ticker;
        std::atomic<bool> ticking{true};
        // Prints the samples received in each second, from the first sample
        // on, until the writer is gone (or --seconds).
        ticker = std::thread([&]() {
            auto end = Clock::now() + std::chrono::duration<double>(a.seconds);
            while (c.received.load() == 0 && ticking && Clock::now() < end) std::this_thread::sleep_for(std::chrono::microseconds(500));
            auto next = Clock::now() + std::chrono::seconds(1);
            uint64_t last = c.received.load(), last_lost = c.lost.load();
            bool seen = false;
            while (ticking && !g_stop && Clock::now() < end) {
                std::this_thread::sleep_until(next);
                next += std::chrono::seconds(1);
                uint64_t n = c.received.load(), l = c.lost.load();
                std::printf("rate %llu lost %llu\n", static_cast<unsigned long long>(n - last), static_cast<unsigned long long>(l - last_lost));
                std::fflush(stdout);
                last = n;
                last_lost = l;
                SubscriptionMatchedStatus ss;
                r->get_subscription_matched_status(ss);
                if (ss.current_count > 0) seen = true;
                if (seen && ss.current_count == 0) break;
            }
            ticking = false;
        });
        if (a.waitset) {
            WaitSet ws;
            StatusCondition& cond = r->get_statuscondition();
            cond.set_enabled_statuses(StatusMask::data_available());
            ws.attach_condition(cond);
            ConditionSeq active;
            while (ticking && !g_stop) {
                ws.wait(active, eprosima::fastrtps::Duration_t(0, 100000000));
                c.handle(r);
            }
            ws.detach_condition(cond);
        }
        ticker.join();
        r->set_listener(nullptr);
        std::printf("total %llu lost %llu\n", static_cast<unsigned long long>(c.received.load()), static_cast<unsigned long long>(c.lost.load()));
        type.delete_data(c.s);
    }
    p->delete_contained_entities();
    DomainParticipantFactory::get_instance()->delete_participant(p);
    return rc;
}

}  // namespace

int main(int argc, char** argv) {
    Args a = parse(argc, argv);
    std::signal(SIGTERM, [](int) { g_stop = true; });
    std::signal(SIGINT, [](int) { g_stop = true; });
    if (a.mode == "ping" || a.mode == "pong") return latency(a);
    return throughput(a);
}
