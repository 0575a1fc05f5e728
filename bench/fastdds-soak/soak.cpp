// A minimal Fast DDS 2.9 publisher or subscriber for bench/fastdds_soak.sh:
// reliable, 64-byte samples at a fixed rate, nothing of pubsubperf in it, so
// that its memory over an hour tells whether a growth seen through
// `pubsubperf -b fastdds` is Fast DDS's own.
//
//   fastdds-soak pub SECONDS RATE QOS    (writes, paced by absolute sleeps)
//   fastdds-soak sub SECONDS QOS         (takes in a data-available listener,
//                                         Fast DDS's documented way)
//
// QOS: `default`: Fast DDS's default endpoint QoS but reliable (KEEP_LAST 1
// history); `ours`: what the pubsubperf binding sets for such a run
// (KEEP_ALL on both ends, max_samples 5000 on both, 16 samples
// preallocated and PREALLOCATED_WITH_REALLOC, 5 ms heartbeats (50 ms in
// the runs of 2026-11-25 in docs/bindings/fastdds.md), writes
// blocking up to 10 s); `prealloc`: `ours` with all 5000 samples of each
// end allocated at the start (allocated_samples = max_samples). All: UDPv4
// only on 127.0.0.1 with unicast discovery (loopback has no multicast), no
// data sharing, domain 77 (FASTDDS_SOAK_DOMAIN to change). Each prints one
// line at the end with the samples it wrote or received.

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
#include <fastrtps/utils/IPLocator.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <string>
#include <thread>

using namespace eprosima::fastdds::dds;
using eprosima::fastdds::rtps::UDPv4TransportDescriptor;
using eprosima::fastrtps::rtps::IPLocator;
using eprosima::fastrtps::rtps::Locator_t;
using eprosima::fastrtps::rtps::SerializedPayload_t;

namespace {

constexpr uint32_t kSize = 64;

// 64 octets, plain: the wire form is the encapsulation and the octets.
class Sample64 : public TopicDataType {
public:
    Sample64() {
        setName("soak::Sample64");
        m_typeSize = 4 + kSize;
        auto_fill_type_object(false);
        auto_fill_type_information(false);
    }
    bool serialize(void* data, SerializedPayload_t* p) override {
        p->encapsulation = CDR_LE;
        const uint8_t head[4] = {0, 1, 0, 0};
        std::memcpy(p->data, head, 4);
        std::memcpy(p->data + 4, data, kSize);
        p->length = m_typeSize;
        return true;
    }
    bool deserialize(SerializedPayload_t* p, void* data) override {
        if (p->length < m_typeSize) return false;
        std::memcpy(data, p->data + 4, kSize);
        return true;
    }
    std::function<uint32_t()> getSerializedSizeProvider(void*) override {
        return [] { return 4 + kSize; };
    }
    void* createData() override { return new uint8_t[kSize](); }
    void deleteData(void* d) override { delete[] static_cast<uint8_t*>(d); }
    bool getKey(void*, eprosima::fastrtps::rtps::InstanceHandle_t*, bool) override { return false; }
};

DomainParticipant* open_participant(int domain) {
    DomainParticipantQos pq;
    pq.transport().use_builtin_transports = false;
    auto udp = std::make_shared<UDPv4TransportDescriptor>();
    udp->interfaceWhiteList.push_back("127.0.0.1");
    pq.transport().user_transports.push_back(udp);
    auto& b = pq.wire_protocol().builtin;
    b.avoid_builtin_multicast = true;
    Locator_t peer;
    peer.kind = LOCATOR_KIND_UDPv4;
    IPLocator::setIPv4(peer, 127, 0, 0, 1);
    b.initialPeersList.push_back(peer);
    return DomainParticipantFactory::get_instance()->create_participant(domain, pq);
}

template <class Q>
void endpoint_qos(Q& q, bool ours, int32_t max_samples, bool prealloc) {
    q.reliability().kind = RELIABLE_RELIABILITY_QOS;
    q.durability().kind = VOLATILE_DURABILITY_QOS;
    q.data_sharing().off();
    if (!ours) return;
    q.history().kind = KEEP_ALL_HISTORY_QOS;
    q.resource_limits().max_samples = max_samples;
    q.resource_limits().max_samples_per_instance = max_samples;
    q.resource_limits().allocated_samples = prealloc ? max_samples : 16;
    q.endpoint().history_memory_policy = eprosima::fastrtps::rtps::PREALLOCATED_WITH_REALLOC_MEMORY_MODE;
}

class Counter : public DataReaderListener {
public:
    std::atomic<uint64_t> received{0};
    void on_data_available(DataReader* r) override {
        uint8_t buf[kSize];
        SampleInfo info;
        while (r->take_next_sample(buf, &info) == ReturnCode_t::RETCODE_OK) {
            if (info.valid_data) received.fetch_add(1, std::memory_order_relaxed);
        }
    }
};

int usage() {
    std::fprintf(stderr, "usage: fastdds-soak pub SECONDS RATE default|ours|prealloc | sub SECONDS default|ours|prealloc\n");
    return 2;
}

}  // namespace

int main(int argc, char** argv) {
    if (argc < 4) return usage();
    std::string mode = argv[1];
    long secs = std::atol(argv[2]);
    bool pub = mode == "pub";
    if ((pub && argc != 5) || (!pub && (mode != "sub" || argc != 4)) || secs <= 0) return usage();
    std::string qos = argv[argc - 1];
    if (qos != "default" && qos != "ours" && qos != "prealloc") return usage();
    bool prealloc = qos == "prealloc";
    bool ours = qos == "ours" || prealloc;
    const char* d = std::getenv("FASTDDS_SOAK_DOMAIN");
    DomainParticipant* pp = open_participant(d ? std::atoi(d) : 77);
    if (!pp) {
        std::fprintf(stderr, "fastdds-soak: no participant\n");
        return 1;
    }
    TypeSupport type(new Sample64());
    type.register_type(pp);
    Topic* topic = pp->create_topic("soak", type.get_type_name(), TOPIC_QOS_DEFAULT);
    uint64_t count = 0;
    int rc = 0;
    if (pub) {
        double rate = std::atof(argv[3]);
        Publisher* p = pp->create_publisher(PUBLISHER_QOS_DEFAULT);
        DataWriterQos q = DATAWRITER_QOS_DEFAULT;
        endpoint_qos(q, ours, 5000, prealloc);
        if (ours) {
            q.reliable_writer_qos().times.heartbeatPeriod = eprosima::fastrtps::Duration_t(0, 5000000);
            q.reliability().max_blocking_time = eprosima::fastrtps::Duration_t(10, 0);
        }
        DataWriter* w = p->create_datawriter(topic, q);
        while (true) {
            PublicationMatchedStatus st;
            w->get_publication_matched_status(st);
            if (st.current_count > 0) break;
            std::this_thread::sleep_for(std::chrono::milliseconds(10));
        }
        uint8_t buf[kSize] = {};
        timespec start;
        clock_gettime(CLOCK_MONOTONIC, &start);
        const uint64_t t0 = start.tv_sec * 1000000000ull + start.tv_nsec;
        const uint64_t period = static_cast<uint64_t>(1e9 / rate);
        const uint64_t end = t0 + secs * 1000000000ull;
        for (uint64_t due = t0; due < end; due += period) {
            timespec ts{static_cast<time_t>(due / 1000000000), static_cast<long>(due % 1000000000)};
            clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, nullptr);
            std::memcpy(buf, &count, sizeof count);
            ReturnCode_t r = w->write(buf, eprosima::fastrtps::rtps::c_InstanceHandle_Unknown);
            // Fast DDS 2.9 can time a KEEP_ALL write out at once when an
            // acknowledgement emptied the full history meanwhile (the
            // binding's shim says how); then nothing is unacknowledged and
            // the write is tried again, as the binding does.
            for (int tries = 0; r == ReturnCode_t::RETCODE_TIMEOUT && tries < 3 &&
                                w->wait_for_acknowledgments(eprosima::fastrtps::Duration_t(0, 0)) ==
                                    ReturnCode_t::RETCODE_OK;
                 tries++) {
                r = w->write(buf, eprosima::fastrtps::rtps::c_InstanceHandle_Unknown);
            }
            if (r != ReturnCode_t::RETCODE_OK) {
                std::fprintf(stderr, "fastdds-soak: write %llu failed (return code %d)\n",
                             static_cast<unsigned long long>(count), static_cast<int>(r()));
                rc = 1;
                break;
            }
            count++;
        }
        w->wait_for_acknowledgments(eprosima::fastrtps::Duration_t(10, 0));
        std::printf("fastdds-soak pub: wrote %llu\n", static_cast<unsigned long long>(count));
    } else {
        Subscriber* s = pp->create_subscriber(SUBSCRIBER_QOS_DEFAULT);
        DataReaderQos q = DATAREADER_QOS_DEFAULT;
        endpoint_qos(q, ours, 5000, prealloc);
        Counter counter;
        s->create_datareader(topic, q, &counter);
        std::this_thread::sleep_for(std::chrono::seconds(secs));
        count = counter.received.load();
        std::printf("fastdds-soak sub: received %llu\n", static_cast<unsigned long long>(count));
    }
    std::fflush(stdout);
    // Fast DDS hangs at exit while a participant lives: always close it.
    pp->delete_contained_entities();
    DomainParticipantFactory::get_instance()->delete_participant(pp);
    return rc;
}
