// pubsubperf's C shim over the Fast DDS 2.9 C++ API (Fast DDS has no C API).
//
// The Rust side (src/ffi.rs) sees opaque handles and a handful of extern "C"
// functions. Everything that shapes QoS is decided in Rust and passed in
// PpfConfig; this file only translates it into Fast DDS objects.
//
// Types are hand-written TopicDataTypes (no fastddsgen), wire-compatible
// with the CycloneDDS binding (idlc / runtime descriptors, XCDR1, no
// TypeObject):
//   module pubsubperf {
//     struct Bytes { sequence<octet> data; };          // data type "bytes"
//     struct Flat<N> { uint32 len; octet data[N]; };   // data type "flat", N = run's sample size
//     // --instances: the keyed variants, key `id` (instances written round-robin)
//     struct KeyedBytes { @key uint32 id; sequence<octet> data; };
//     struct KeyedFlat<N> { @key uint32 id; uint32 len; octet data[N]; };
//   };

#include <fastcdr/Cdr.h>
#include <fastcdr/FastBuffer.h>
#include <fastcdr/exceptions/Exception.h>
#include <fastdds/dds/core/LoanableSequence.hpp>
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
#include <fastdds/rtps/flowcontrol/FlowControllerDescriptor.hpp>
#include <fastdds/rtps/transport/TCPv4TransportDescriptor.h>
#include <fastdds/rtps/transport/UDPv4TransportDescriptor.h>
#include <fastdds/rtps/transport/shared_mem/SharedMemTransportDescriptor.h>
#include <fastrtps/config.h>
#include <fastrtps/xmlparser/XMLProfileManager.h>
#include <fastrtps/utils/IPLocator.h>

#include <cstdint>
#include <cstdlib>
#include <cstdio>
#include <cstring>
#include <new>
#include <string>

using namespace eprosima::fastdds::dds;
using eprosima::fastdds::rtps::SharedMemTransportDescriptor;
using eprosima::fastdds::rtps::TCPv4TransportDescriptor;
using eprosima::fastdds::rtps::UDPv4TransportDescriptor;
using eprosima::fastrtps::rtps::InstanceHandle_t;
using eprosima::fastrtps::rtps::IPLocator;
using eprosima::fastrtps::rtps::Locator_t;
using eprosima::fastrtps::rtps::SerializedPayload_t;
namespace cdr = eprosima::fastcdr;

extern "C" {

// Mirrors `ffi::Config` in src/ffi.rs (repr(C)); keep both in sync.
struct PpfConfig {
    int32_t domain;
    int32_t transport;         // 0 udp, 1 tcp, 2 shm
    int32_t reliable;          // 1 reliable, 0 best effort
    int32_t flat;              // 1 flat type, 0 bytes
    int32_t zero_copy;         // data sharing + loans (flat only)
    uint32_t max_size;         // largest sample (bytes handed to send)
    int32_t keep_all;          // history kind
    int32_t writer_depth;      // keep-last depth / keep-all max_samples of writers
    int32_t writer_limits;     // 1: writers' max_samples is writer_depth; 0: Fast DDS's default
    int32_t reader_depth;      // same for readers
    int32_t transient_local;   // durability
    int32_t async_publish;     // asynchronous publish mode
    int64_t latency_budget_ns; // LATENCY_BUDGET of writers and readers (0: default)
    int32_t instances;         // keyed type with this many instances (0: unkeyed)
    int32_t multicast;         // readers listen on a multicast locator
    uint32_t socket_buffer;    // 0: system default
    uint32_t shm_segment;      // SHM transport segment size
    int64_t block_timeout_ns;  // reliable max_blocking_time
    int32_t tcp_port;          // our TCP listening port (tcp); the initial peers are the slots above it
    int32_t tcp_peer_first;    // TCP: the run's slots, ports [first, first+count);
    int32_t tcp_peer_count;    //   a slot's participant id is its offset
    int32_t peer_range;        // initial peers: participant ids probed
    int32_t participant_id;    // chosen by the Rust side (free ports), -1 auto
    const char* bind_ip;       // interface to use (whitelist), e.g. 127.0.0.1
    const char* peers;         // extra initial peers, comma separated IPv4 (may be empty)
    const char* qos_file;      // Fast DDS XML profiles file (may be empty)
    int32_t no_positive_acks;  // DisablePositiveACKs on writers and readers
    int64_t keep_duration_ns;  //   and how long writers keep unacknowledged samples
    int64_t bandwidth_limit;   // bytes/s through a flow controller (0: none)
    int32_t multicast_ttl;     // UDP multicast TTL (-1: Fast DDS's default)
    uint32_t receive_buffer;   // UDP receive buffer when socket_buffer is 0 (0: system default)
    int64_t heartbeat_response_ns;  // reliable readers' heartbeatResponseDelay
    int64_t heartbeat_period_ns;    // reliable writers' heartbeatPeriod
    const char* multicast_address; // readers' multicast group (empty: one derived per topic)
};
}

namespace {

void set_err(char* err, size_t len, const std::string& msg) {
    if (err && len) {
        std::snprintf(err, len, "%s", msg.c_str());
    }
}

// ---------------------------------------------------------------- types

struct BytesSample {
    uint32_t len;
    uint32_t cap;
    uint8_t* buf;
    uint32_t id;  // the key (keyed type only)
};

// The key hash of a key that is one uint32: its big-endian serialized form,
// zero-padded to 16 bytes (no MD5: the key is shorter than 16 bytes).
bool key_hash(uint32_t id, InstanceHandle_t* handle) {
    for (int i = 0; i < 16; i++) handle->value[i] = 0;
    handle->value[0] = static_cast<uint8_t>(id >> 24);
    handle->value[1] = static_cast<uint8_t>(id >> 16);
    handle->value[2] = static_cast<uint8_t>(id >> 8);
    handle->value[3] = static_cast<uint8_t>(id);
    return true;
}

class BytesType : public TopicDataType {
public:
    BytesType(uint32_t max, bool keyed) : max_(max), keyed_(keyed) {
        // = idlc's m_typename on the CycloneDDS side
        setName(keyed ? "pubsubperf::KeyedBytes" : "pubsubperf::Bytes");
        // encapsulation + [key] + length + octets (+ padding)
        m_typeSize = 4 + (keyed ? 4 : 0) + 4 + max + 3;
        m_isGetKeyDefined = keyed;
        auto_fill_type_object(false);   // no XTypes: CycloneDDS matches on the name
        auto_fill_type_information(false);
    }
    bool serialize(void* data, SerializedPayload_t* payload) override {
        auto* s = static_cast<BytesSample*>(data);
        cdr::FastBuffer fb(reinterpret_cast<char*>(payload->data), payload->max_size);
        cdr::Cdr ser(fb, cdr::Cdr::DEFAULT_ENDIAN, cdr::Cdr::DDS_CDR);
        payload->encapsulation = ser.endianness() == cdr::Cdr::BIG_ENDIANNESS ? CDR_BE : CDR_LE;
        try {
            ser.serialize_encapsulation();
            if (keyed_) ser << s->id;
            ser << s->len;
            ser.serializeArray(s->buf, s->len);
        } catch (cdr::exception::Exception&) {
            return false;
        }
        payload->length = static_cast<uint32_t>(ser.getSerializedDataLength());
        return true;
    }
    bool deserialize(SerializedPayload_t* payload, void* data) override {
        auto* s = static_cast<BytesSample*>(data);
        cdr::FastBuffer fb(reinterpret_cast<char*>(payload->data), payload->length);
        cdr::Cdr des(fb, cdr::Cdr::DEFAULT_ENDIAN, cdr::Cdr::DDS_CDR);
        try {
            des.read_encapsulation();
            if (keyed_) des >> s->id;
            uint32_t n = 0;
            des >> n;
            if (n > s->cap) {
                return false;
            }
            des.deserializeArray(s->buf, n);
            s->len = n;
        } catch (cdr::exception::Exception&) {
            return false;
        }
        return true;
    }
    std::function<uint32_t()> getSerializedSizeProvider(void* data) override {
        uint32_t head = keyed_ ? 12 : 8;
        return [data, head]() -> uint32_t { return head + static_cast<BytesSample*>(data)->len; };
    }
    void* createData() override {
        auto* s = new BytesSample{0, max_, new uint8_t[max_ ? max_ : 1](), 0};
        return s;
    }
    void deleteData(void* data) override {
        auto* s = static_cast<BytesSample*>(data);
        delete[] s->buf;
        delete s;
    }
    bool getKey(void* data, InstanceHandle_t* handle, bool) override {
        return keyed_ && key_hash(static_cast<BytesSample*>(data)->id, handle);
    }

private:
    uint32_t max_;
    bool keyed_;
};

// Flat<N>: { uint32 len; octet data[N]; } (keyed: KeyedFlat<N> { uint32 id;
// uint32 len; octet data[N]; }) laid out in memory exactly as XCDR1 little
// endian puts it on the wire, so a plain type: no serialization, loans,
// data sharing.
class FlatType : public TopicDataType {
public:
    FlatType(uint32_t n, bool keyed) : n_(n), hdr_(keyed ? 8 : 4), keyed_(keyed) {
        setName(((keyed ? "pubsubperf::KeyedFlat" : "pubsubperf::Flat") + std::to_string(n)).c_str());
        m_typeSize = 4 + hdr_ + n;  // encapsulation + struct
        m_isGetKeyDefined = keyed;
        auto_fill_type_object(false);
        auto_fill_type_information(false);
    }
    bool serialize(void* data, SerializedPayload_t* payload) override {
        if (payload->max_size < m_typeSize) {
            return false;
        }
        payload->encapsulation = CDR_LE;
        payload->data[0] = 0;
        payload->data[1] = 1;  // CDR_LE
        payload->data[2] = 0;
        payload->data[3] = 0;
        std::memcpy(payload->data + 4, data, hdr_ + n_);
        payload->length = m_typeSize;
        return true;
    }
    bool deserialize(SerializedPayload_t* payload, void* data) override {
        if (payload->length < m_typeSize) {
            return false;
        }
        std::memcpy(data, payload->data + 4, hdr_ + n_);
        return true;
    }
    std::function<uint32_t()> getSerializedSizeProvider(void*) override {
        uint32_t n = m_typeSize;
        return [n]() -> uint32_t { return n; };
    }
    void* createData() override { return new (std::nothrow) uint8_t[hdr_ + n_](); }
    void deleteData(void* data) override { delete[] static_cast<uint8_t*>(data); }
    bool getKey(void* data, InstanceHandle_t* handle, bool) override {
        if (!keyed_) return false;
        uint32_t id;
        std::memcpy(&id, data, 4);
        return key_hash(id, handle);
    }
    bool is_bounded() const override { return true; }
    bool is_plain() const override { return true; }
    bool construct_sample(void*) const override { return true; }  // raw octets: nothing to construct

private:
    uint32_t n_;
    uint32_t hdr_;
    bool keyed_;
};

struct Opaque {};

}  // namespace

extern "C" {

struct PpfParticipant {
    DomainParticipant* pp = nullptr;
    TypeSupport type;
    PpfConfig cfg{};
    std::string bind_ip;
    std::string multicast_address;  // copied: cfg's pointers die with ppf_open's call
    bool flat = false;
    uint32_t hdr = 4;  // flat: bytes before the data (len, and id when keyed)
    bool from_xml = false;
    // TCP: our metatraffic unicast locator, also the unicast locator of
    // every writer and reader (see ppf_open).
    Locator_t tcp_meta;
    bool tcp() const { return cfg.transport == 1; }
};

struct PpfWriter {
    PpfParticipant* p = nullptr;
    Publisher* pub = nullptr;
    DataWriter* w = nullptr;
    void* scratch = nullptr;  // BytesSample* or Flat struct
    void* loan = nullptr;
    bool flat = false;
};

// --receive listener: calls `cb(arg)` on Fast DDS's receive thread when
// data arrives (the Rust side takes and delivers there).
typedef void (*PpfDataCb)(void*);
struct PpfListener : public DataReaderListener {
    PpfDataCb cb = nullptr;
    void* arg = nullptr;
    void on_data_available(DataReader*) override { cb(arg); }
};

struct PpfReader {
    PpfListener* listener = nullptr;
    PpfParticipant* p = nullptr;
    Subscriber* sub = nullptr;
    DataReader* r = nullptr;
    void* scratch = nullptr;
    LoanableSequence<Opaque> loans;
    SampleInfoSeq infos;
    SampleInfo info;
    bool flat = false;
    bool loaned = false;
    bool holding = false;
};

const char* ppf_version() { return FASTRTPS_VERSION_STR; }

// The name of the --bandwidth-limit flow controller (Fast DDS keeps the pointer).
static const char* const kFlowController = "pubsubperf_bandwidth";

static eprosima::fastrtps::Duration_t duration_of(int64_t ns) {
    return eprosima::fastrtps::Duration_t(static_cast<int32_t>(ns / 1000000000),
                                          static_cast<uint32_t>(ns % 1000000000));
}

// The other way: a QoS duration in ns, for the read-backs.
static int64_t ns_of(const eprosima::fastrtps::Duration_t& d) {
    return static_cast<int64_t>(d.seconds) * 1000000000 + d.nanosec;
}

static Locator_t ipv4_locator(const std::string& ip, uint32_t port, int32_t kind) {
    Locator_t l;
    l.kind = kind;
    IPLocator::setIPv4(l, ip);
    l.port = port;
    return l;
}

PpfParticipant* ppf_open(const PpfConfig* cfg, char* err, size_t errlen) {
    auto* f = DomainParticipantFactory::get_instance();
    // Endpoints of one process must talk through the transport being
    // measured, not Fast DDS's in-process shortcut.
    {
        eprosima::fastrtps::LibrarySettingsAttributes ls;
        ls.intraprocess_delivery = eprosima::fastrtps::INTRAPROCESS_OFF;
        eprosima::fastrtps::xmlparser::XMLProfileManager::library_settings(ls);
    }
    auto* p = new PpfParticipant();
    p->cfg = *cfg;
    p->bind_ip = cfg->bind_ip ? cfg->bind_ip : "127.0.0.1";
    p->multicast_address = cfg->multicast_address ? cfg->multicast_address : "";
    p->flat = cfg->flat != 0;
    p->hdr = cfg->instances > 0 ? 8 : 4;
    DomainParticipantQos pq = PARTICIPANT_QOS_DEFAULT;
    if (cfg->qos_file && cfg->qos_file[0]) {
        if (f->load_XML_profiles_file(cfg->qos_file) != ReturnCode_t::RETCODE_OK) {
            set_err(err, errlen, std::string("--qos-file ") + cfg->qos_file + ": Fast DDS could not load it");
            delete p;
            return nullptr;
        }
        f->get_default_participant_qos(pq);
        p->from_xml = true;
    }
    pq.name("pubsubperf");
    pq.transport().use_builtin_transports = false;
    pq.transport().user_transports.clear();
    auto& b = pq.wire_protocol().builtin;
    b.avoid_builtin_multicast = true;
    pq.wire_protocol().participant_id = cfg->participant_id;
    b.initialPeersList.clear();
    // Fast announcements so that matching takes milliseconds, not seconds.
    b.discovery_config.initial_announcements.count = 5;
    b.discovery_config.initial_announcements.period = eprosima::fastrtps::Duration_t(0, 50000000);

    if (cfg->transport == 2) {
        auto shm = std::make_shared<SharedMemTransportDescriptor>();
        shm->segment_size(cfg->shm_segment);
        pq.transport().user_transports.push_back(shm);
    }
    if (cfg->transport == 1) {
        auto tcp = std::make_shared<TCPv4TransportDescriptor>();
        tcp->add_listener_port(static_cast<uint16_t>(cfg->tcp_port));
        tcp->interfaceWhiteList.push_back(p->bind_ip);
        // No Nagle: with several subscribers, small messages (acknacks,
        // echoes) waited for delayed ACKs: 3 subscribers, 64 B, latency
        // median 3.9 ms without TCP_NODELAY, 0.14-0.17 ms with it (udp:
        // 0.15 ms); one subscriber unchanged (~80 us).
        tcp->enable_tcp_nodelay = true;
        tcp->maxInitialPeersRange = static_cast<uint32_t>(cfg->peer_range);
        if (cfg->socket_buffer) {
            tcp->sendBufferSize = tcp->receiveBufferSize = cfg->socket_buffer;
        }
        pq.transport().user_transports.push_back(tcp);
        // Initial peers: the run's slots ABOVE ours (see tcp_ports in
        // src/lib.rs), each named by its physical port (the slot's listening
        // port) and exact metatraffic logical port (its participant id is
        // the slot's offset from the base).
        //
        // Why above, i.e. slots not listening yet when we start: Fast DDS
        // 2.9 (TCPTransportInterface::OpenOutputChannel) starts connecting a
        // new channel before it adds the channel's first logical port, and
        // RTCPMessageManager::processRTCPMessage ignores a
        // BIND_CONNECTION_RESPONSE that arrives while the channel has no
        // pending logical port: when the peer already listens and answers
        // fast (loopback, a busy CPU), the channel stays unbound for good and
        // nothing is ever sent on it. A connection to a slot that is not
        // listening yet fails at once; Fast DDS reconnects on a later send,
        // when the logical port is pending, so the bind goes through. The
        // later participant answers over the connection it accepted.
        const auto& pp = pq.wire_protocol().port;
        uint32_t d = static_cast<uint32_t>(cfg->domain);
        for (int32_t i = 0; i < cfg->tcp_peer_count; i++) {
            int32_t port = cfg->tcp_peer_first + i;
            if (port <= cfg->tcp_port) continue;
            Locator_t peer = ipv4_locator(p->bind_ip, static_cast<uint32_t>(port), LOCATOR_KIND_TCPv4);
            IPLocator::setLogicalPort(peer, static_cast<uint16_t>(pp.getUnicastPort(d, static_cast<uint32_t>(i))));
            b.initialPeersList.push_back(peer);
        }
        // Writers and readers listen on the participant's metatraffic
        // logical port (not on a user one of their own): a logical port is
        // opened on a connection by a request/response exchange, and Fast
        // DDS 2.9 drops what is sent to a port before that ends (a best
        // effort sample right after matching), and can lose the response
        // for good when the port is added from another thread than the
        // connection's reader (TCPChannelResource::add_logical_port sends
        // the request outside its lock). The metatraffic port is opened
        // while the participants discover each other, before any endpoint
        // matches.
        // A participant that starts after the earlier one's first
        // announcements (5 x 50 ms) is reached on the earlier one's periodic
        // announcements: the first reconnects (and is lost), the second gets
        // through. 1 s instead of Fast DDS's 3 s bounds that at ~2 s
        // (measured 6.3 s with 3 s).
        b.discovery_config.leaseDuration_announcementperiod = eprosima::fastrtps::Duration_t(1, 0);
        p->tcp_meta = ipv4_locator(p->bind_ip, static_cast<uint32_t>(cfg->tcp_port), LOCATOR_KIND_TCPv4);
        IPLocator::setLogicalPort(p->tcp_meta,
                                  static_cast<uint16_t>(pp.getUnicastPort(d, static_cast<uint32_t>(cfg->participant_id))));
    } else {
        auto udp = std::make_shared<UDPv4TransportDescriptor>();
        udp->interfaceWhiteList.push_back(p->bind_ip);
        udp->maxInitialPeersRange = static_cast<uint32_t>(cfg->peer_range);
        if (cfg->socket_buffer) {
            udp->sendBufferSize = udp->receiveBufferSize = cfg->socket_buffer;
        } else {
            udp->receiveBufferSize = cfg->receive_buffer;
        }
        if (cfg->multicast_ttl >= 0) udp->TTL = static_cast<uint8_t>(cfg->multicast_ttl);
        pq.transport().user_transports.push_back(udp);
        // On loopback (one host), or with peers given: unicast discovery
        // through initial peers, our own address included (participants of
        // this host). On another interface without peers (a remote run):
        // no initial peers, so Fast DDS announces itself by SPDP multicast
        // on that interface; unicast to our own address would never reach
        // the other host.
        bool loopback = p->bind_ip.compare(0, 4, "127.") == 0;
        bool has_peers = cfg->peers && cfg->peers[0];
        if (loopback || has_peers) {
            b.initialPeersList.push_back(ipv4_locator(p->bind_ip, 0, LOCATOR_KIND_UDPv4));
        }
    }
    if (cfg->peers && cfg->peers[0]) {
        std::string all(cfg->peers);
        size_t at = 0;
        while (at <= all.size()) {
            size_t comma = all.find(',', at);
            std::string ip = all.substr(at, comma == std::string::npos ? std::string::npos : comma - at);
            if (!ip.empty()) {
                b.initialPeersList.push_back(
                    ipv4_locator(ip, 0, cfg->transport == 1 ? LOCATOR_KIND_TCPv4 : LOCATOR_KIND_UDPv4));
            }
            if (comma == std::string::npos) break;
            at = comma + 1;
        }
    }
    if (cfg->bandwidth_limit > 0) {
        // --bandwidth-limit: a FIFO flow controller letting a tenth of the
        // bytes per second through every 100 ms (the Rust side keeps it in
        // int32 range).
        auto fc = std::make_shared<eprosima::fastdds::rtps::FlowControllerDescriptor>();
        fc->name = kFlowController;
        fc->max_bytes_per_period = static_cast<int32_t>(cfg->bandwidth_limit / 10);
        fc->period_ms = 100;
        pq.flow_controllers().push_back(fc);
    }
    p->pp = f->create_participant(static_cast<DomainId_t>(cfg->domain), pq);
    if (!p->pp) {
        set_err(err, errlen, "Fast DDS could not create a participant in domain " + std::to_string(cfg->domain));
        delete p;
        return nullptr;
    }
    if (p->flat) {
        p->type = TypeSupport(new FlatType(cfg->max_size, cfg->instances > 0));
    } else {
        p->type = TypeSupport(new BytesType(cfg->max_size, cfg->instances > 0));
    }
    if (p->type.register_type(p->pp) != ReturnCode_t::RETCODE_OK) {
        set_err(err, errlen, "Fast DDS could not register type " + p->type.get_type_name());
        f->delete_participant(p->pp);
        delete p;
        return nullptr;
    }
    return p;
}

void ppf_close(PpfParticipant* p) {
    if (!p) return;
    if (p->pp) {
        p->pp->delete_contained_entities();
        DomainParticipantFactory::get_instance()->delete_participant(p->pp);
    }
    delete p;
}

const char* ppf_type_name(PpfParticipant* p) { return p->type.get_type_name().c_str(); }

static Topic* topic_for(PpfParticipant* p, const char* name) {
    if (auto* td = p->pp->lookup_topicdescription(name)) {
        return dynamic_cast<Topic*>(td);
    }
    return p->pp->create_topic(name, p->type.get_type_name(), TOPIC_QOS_DEFAULT);
}

}  // extern "C"

template <class Q>
static void endpoint_qos(const PpfConfig& c, Q& q, int32_t depth, bool limits, bool one_in_flight) {
    q.reliability().kind = c.reliable ? RELIABLE_RELIABILITY_QOS : BEST_EFFORT_RELIABILITY_QOS;
    q.durability().kind = c.transient_local ? TRANSIENT_LOCAL_DURABILITY_QOS : VOLATILE_DURABILITY_QOS;
    auto& rl = q.resource_limits();
    if (c.instances > 0) {
        // Keyed (--instances): `depth` per instance, but Fast DDS wants
        // max_samples >= max_instances * max_samples_per_instance, and the
        // total stays bounded (a zero-copy writer's data-sharing pool keeps
        // its size: the instances share it).
        int64_t cap = (limits && c.zero_copy) ? depth : 1000000;
        if (static_cast<int64_t>(depth) * c.instances > cap) {
            depth = static_cast<int32_t>(cap / c.instances);
            if (depth < 1) depth = 1;
        }
    }
    if (c.keep_all) {
        q.history().kind = KEEP_ALL_HISTORY_QOS;
        q.history().depth = 1;
    } else {
        q.history().kind = KEEP_LAST_HISTORY_QOS;
        q.history().depth = depth;
    }
    if (limits) {
        rl.max_samples = depth;
        rl.max_samples_per_instance = depth;
    } else if (depth > rl.max_samples_per_instance) {
        rl.max_samples_per_instance = depth;
        if (depth > rl.max_samples) rl.max_samples = depth;
    }
    if (c.instances > 0) {
        // Fast DDS allows 10 instances by default.
        rl.max_instances = c.instances;
        rl.max_samples_per_instance = depth;
        int32_t total = depth * c.instances;
        if (limits || total > rl.max_samples) rl.max_samples = total;
    }
    if (c.latency_budget_ns > 0) {
        q.latency_budget().duration = duration_of(c.latency_budget_ns);
    }
    // Samples allocated up front; Fast DDS grows its pools on demand up to
    // max_samples and never shrinks them. Once a stall (a loaded machine, a
    // slow reader) filled a history, its memory stayed for the rest of the
    // run: an hour at 10 000 samples/s grew by ~2 MiB per side, in steps
    // (heaptrack: CacheChangePool::allocateGroup and TopicPayloadPool under
    // DataWriter::write; a minimal Fast DDS program with this QoS grew alike;
    // docs/bindings/fastdds.md, Memory). So every sample the history may hold
    // is allocated at the start when they fit in kPreallocBytes (about 520
    // bytes of Fast DDS's own per sample besides the payload): the run's
    // memory then stays flat and writes and takes do not allocate. Larger
    // histories get as many as fit (at least the few below) and grow beyond
    // them on demand. Zero copy keeps the few: its data-sharing pool is sized
    // by max_samples itself. So do the topics of a latency test's pings and
    // echoes (`one_in_flight`), whose histories hold what a heartbeat period
    // leaves unacknowledged, not a stream's backlog: every sample allocated
    // is on the pool's free list, which Debian's Fast DDS (assertions on)
    // searches linearly on every release, on the round trip's path
    // (docs/bindings/fastdds.md, Heartbeats).
    constexpr int64_t kPreallocBytes = 4 << 20;
    int64_t size = c.max_size ? c.max_size : 1;
    int64_t few = (256 << 20) / size;  // up to 16 samples, ~256 MiB at most
    if (few > 16) few = 16;
    if (few > depth) few = depth;
    int64_t want = few;
    if (!c.zero_copy && !one_in_flight) {
        int64_t bound = rl.max_samples > 0 ? rl.max_samples : depth;
        int64_t fit = kPreallocBytes / (size + 520);
        if (fit > bound) fit = bound;
        if (fit > want) want = fit;
    }
    int32_t prealloc = want < 1 ? 1 : static_cast<int32_t>(want);
    q.resource_limits().allocated_samples = prealloc;
    q.endpoint().history_memory_policy = eprosima::fastrtps::rtps::PREALLOCATED_WITH_REALLOC_MEMORY_MODE;
    if (c.zero_copy) {
        q.data_sharing().on("");
    } else {
        q.data_sharing().off();
    }
}

extern "C" {

static Locator_t multicast_locator(const char* topic, int32_t domain, const char* group) {
    // One group per topic (and run: topic names carry the run id), or the
    // one given (--multicast-address); the port is the topic's either way.
    uint32_t h = 2166136261u;
    for (const char* c = topic; *c; c++) {
        h = (h ^ static_cast<uint8_t>(*c)) * 16777619u;
    }
    Locator_t l;
    l.kind = LOCATOR_KIND_UDPv4;
    if (group && group[0]) {
        IPLocator::setIPv4(l, std::string(group));
    } else {
        IPLocator::setIPv4(l, 239, 255, static_cast<uint8_t>(1 + (h >> 8) % 250), static_cast<uint8_t>(1 + h % 250));
    }
    l.port = 7400 + 250 * static_cast<uint32_t>(domain) + 200 + (h >> 16) % 40;
    return l;
}

PpfWriter* ppf_create_writer(PpfParticipant* p, const char* topic, int32_t one_in_flight, char* err, size_t errlen) {
    Topic* t = topic_for(p, topic);
    if (!t) {
        set_err(err, errlen, std::string("Fast DDS could not create topic ") + topic);
        return nullptr;
    }
    auto* w = new PpfWriter();
    w->p = p;
    w->flat = p->flat;
    PublisherQos pubq = PUBLISHER_QOS_DEFAULT;
    if (p->from_xml) p->pp->get_default_publisher_qos(pubq);
    w->pub = p->pp->create_publisher(pubq);
    DataWriterQos q = DATAWRITER_QOS_DEFAULT;
    if (p->from_xml) w->pub->get_default_datawriter_qos(q);
    // Whether max_samples is the depth is decided on the Rust side (`plan`).
    endpoint_qos(p->cfg, q, p->cfg.writer_depth, p->cfg.writer_limits != 0, one_in_flight != 0);
    if (p->cfg.zero_copy) {
        // The data-sharing pool (max_samples + extra_samples payloads)
        // holds twice the history. With Fast DDS's default of one extra
        // payload, an unpaced reliable burst (2000 samples, history 64) had
        // its first samples read after the writer had reused their payloads
        // for samples 65-67 (10 of 10 runs); with twice the history it was
        // delivered intact (15 of 15 runs, and the zero-copy suites 3 times).
        q.resource_limits().extra_samples = q.resource_limits().max_samples;
    }
    q.reliability().max_blocking_time = duration_of(p->cfg.block_timeout_ns);
    // Readers acknowledge on heartbeats: the period decides how long a full
    // queue waits and how many samples one acknowledgement frees (the Rust
    // side's HEARTBEAT_PERIOD says why it is what it is).
    q.reliable_writer_qos().times.heartbeatPeriod = duration_of(p->cfg.heartbeat_period_ns);
    q.publish_mode().kind = p->cfg.async_publish ? ASYNCHRONOUS_PUBLISH_MODE : SYNCHRONOUS_PUBLISH_MODE;
    if (p->cfg.bandwidth_limit > 0) {
        // A flow controller paces the asynchronous publish thread only.
        q.publish_mode().kind = ASYNCHRONOUS_PUBLISH_MODE;
        q.publish_mode().flow_controller_name = kFlowController;
    }
    if (p->cfg.no_positive_acks) {
        q.reliable_writer_qos().disable_positive_acks.enabled = true;
        q.reliable_writer_qos().disable_positive_acks.duration = duration_of(p->cfg.keep_duration_ns);
        // A KEEP_ALL writer without positive acks stalled with a full
        // history (write blocked until max_blocking_time, 1 run in 5 of
        // 20000 samples here): the writer keeps the last samples instead,
        // for repairs within the keep duration. The Rust side refuses
        // --history keep-all with --no-positive-acks.
        q.history().kind = KEEP_LAST_HISTORY_QOS;
        q.history().depth = p->cfg.writer_depth;
    }
    if (p->tcp()) q.endpoint().unicast_locator_list.push_back(p->tcp_meta);
    w->w = w->pub ? w->pub->create_datawriter(t, q) : nullptr;
    if (!w->w) {
        set_err(err, errlen, std::string("Fast DDS could not create a writer on ") + topic);
        if (w->pub) p->pp->delete_publisher(w->pub);
        delete w;
        return nullptr;
    }
    w->scratch = p->type->createData();
    return w;
}

void ppf_delete_writer(PpfWriter* w) {
    if (!w) return;
    if (w->loan) w->w->discard_loan(w->loan);
    // Empties the history first, under the writer's lock. Fast DDS 2.9's
    // StatefulWriter destructor releases the changes still in the history
    // one by one (RTPSWriter::deinit, which resets each one's sequence
    // number) before it stops the periodic heartbeat; a heartbeat that runs
    // in between walks a history whose numbers went back to 0
    // (add_gaps_for_holes_in_history_) and never ends, holding the lock the
    // destructor waits for: a test process hung at 100 % CPU in it (5 ms
    // heartbeats, a writer deleted right after its last sample).
    w->w->clear_history(nullptr);
    w->pub->delete_datawriter(w->w);
    w->p->pp->delete_publisher(w->pub);
    w->p->type->deleteData(w->scratch);
    delete w;
}

int32_t ppf_writer_matched(PpfWriter* w) {
    PublicationMatchedStatus st;
    w->w->get_publication_matched_status(st);
    return st.current_count;
}

// The buffer `send` fills: the octets of the scratch sample.
uint8_t* ppf_writer_buffer(PpfWriter* w) {
    if (w->flat) return static_cast<uint8_t*>(w->scratch) + w->p->hdr;
    return static_cast<BytesSample*>(w->scratch)->buf;
}

static int32_t rc_of(ReturnCode_t rc) {
    if (rc == ReturnCode_t::RETCODE_OK) return 0;
    if (rc == ReturnCode_t::RETCODE_TIMEOUT) return 1;
    if (rc == ReturnCode_t::RETCODE_OUT_OF_RESOURCES) return 2;
    return 3;
}

// Sets `[id,] len` of a flat sample.
static void flat_head(uint8_t* s, uint32_t hdr, uint32_t id, uint32_t len) {
    if (hdr == 8) std::memcpy(s, &id, 4);
    std::memcpy(s + hdr - 4, &len, 4);
}

// DataWriter::write of `sample`, without Fast DDS 2.9's early timeouts.
//
// A reliable KEEP_ALL writer whose history is full waits in
// StatefulWriter::try_remove_change for an acknowledgement. When one
// acknowledgement covers the whole history (a data-sharing reader
// acknowledges everything once it has taken the last sample), the writer's
// listener removes every change (VOLATILE), check_acked_status then sets
// may_remove_change_ = 1 because get_seq_num_min() of the now empty history
// is "unknown", and the woken writer's remove_min_change() fails on the empty
// history: write returns RETCODE_TIMEOUT at once, long before
// max_blocking_time. So a timeout while every sample written is acknowledged
// (nothing to wait for: the history has room) is tried again; a timeout with
// samples unacknowledged is a real one (max_blocking_time has passed). No
// clock is read on the way.
static ReturnCode_t write_retrying(PpfWriter* w, void* sample) {
    ReturnCode_t r = w->w->write(sample, eprosima::fastrtps::rtps::c_InstanceHandle_Unknown);
    for (int tries = 0; r == ReturnCode_t::RETCODE_TIMEOUT && tries < 3; tries++) {
        if (w->w->wait_for_acknowledgments(eprosima::fastrtps::Duration_t(0, 0)) != ReturnCode_t::RETCODE_OK) {
            break;
        }
        r = w->w->write(sample, eprosima::fastrtps::rtps::c_InstanceHandle_Unknown);
    }
    return r;
}

// Writes the scratch sample with `len` octets and key `id` (keyed types).
// 0 ok, 1 timeout, 2 out of resources, 3 error.
int32_t ppf_write(PpfWriter* w, uint32_t len, uint32_t id) {
    if (w->flat) {
        flat_head(static_cast<uint8_t*>(w->scratch), w->p->hdr, id, len);
    } else {
        static_cast<BytesSample*>(w->scratch)->len = len;
        static_cast<BytesSample*>(w->scratch)->id = id;
    }
    return rc_of(write_retrying(w, w->scratch));
}

// Writes the `len` octets at `bytes` (the caller's; only read) as a bytes
// sample with key `id`: write() serializes them where they are. The bytes
// type only (3, an error, for a flat writer).
int32_t ppf_write_from(PpfWriter* w, const uint8_t* bytes, uint32_t len, uint32_t id) {
    if (w->flat) return 3;
    BytesSample s{len, len, const_cast<uint8_t*>(bytes), id};
    return rc_of(write_retrying(w, &s));
}

// Loans a sample from the writer's pool (data-sharing segment with zero copy).
// Returns the octets to fill, or null (then *rc says why).
uint8_t* ppf_loan(PpfWriter* w, int32_t* rc) {
    void* s = nullptr;
    ReturnCode_t r = w->w->loan_sample(s, DataWriter::LoanInitializationKind::NO_LOAN_INITIALIZATION);
    *rc = rc_of(r);
    if (r != ReturnCode_t::RETCODE_OK) return nullptr;
    w->loan = s;
    return static_cast<uint8_t*>(s) + w->p->hdr;
}

// Publishes the loaned sample (the middleware takes it back).
int32_t ppf_write_loan(PpfWriter* w, uint32_t len, uint32_t id) {
    flat_head(static_cast<uint8_t*>(w->loan), w->p->hdr, id, len);
    // A failed write hands the loan back (DataWriterImpl::perform_create_new_change),
    // so write_retrying may write it again.
    ReturnCode_t r = write_retrying(w, w->loan);
    if (r != ReturnCode_t::RETCODE_OK) {
        w->w->discard_loan(w->loan);
    }
    w->loan = nullptr;
    return rc_of(r);
}

void ppf_discard_loan(PpfWriter* w) {
    if (w->loan) w->w->discard_loan(w->loan);
    w->loan = nullptr;
}

PpfReader* ppf_create_reader(PpfParticipant* p, const char* topic, int32_t one_in_flight, char* err, size_t errlen) {
    Topic* t = topic_for(p, topic);
    if (!t) {
        set_err(err, errlen, std::string("Fast DDS could not create topic ") + topic);
        return nullptr;
    }
    auto* r = new PpfReader();
    r->p = p;
    r->flat = p->flat;
    r->loaned = p->cfg.zero_copy != 0;
    SubscriberQos subq = SUBSCRIBER_QOS_DEFAULT;
    if (p->from_xml) p->pp->get_default_subscriber_qos(subq);
    r->sub = p->pp->create_subscriber(subq);
    DataReaderQos q = DATAREADER_QOS_DEFAULT;
    if (p->from_xml) r->sub->get_default_datareader_qos(q);
    endpoint_qos(p->cfg, q, p->cfg.reader_depth, true, one_in_flight != 0);
    if (p->cfg.no_positive_acks) q.reliable_reader_qos().disable_positive_ACKs.enabled = true;
    q.reliable_reader_qos().times.heartbeatResponseDelay = duration_of(p->cfg.heartbeat_response_ns);
    if (p->cfg.multicast) {
        q.endpoint().multicast_locator_list.push_back(
            multicast_locator(topic, p->cfg.domain, p->multicast_address.c_str()));
    }
    if (p->tcp()) q.endpoint().unicast_locator_list.push_back(p->tcp_meta);
    r->r = r->sub ? r->sub->create_datareader(t, q) : nullptr;
    if (!r->r) {
        set_err(err, errlen, std::string("Fast DDS could not create a reader on ") + topic);
        if (r->sub) p->pp->delete_subscriber(r->sub);
        delete r;
        return nullptr;
    }
    r->scratch = p->type->createData();
    return r;
}

void ppf_delete_reader(PpfReader* r) {
    if (!r) return;
    if (r->listener) r->r->set_listener(nullptr);
    if (r->holding) r->r->return_loan(r->loans, r->infos);
    // Deleting the reader waits for a listener call in progress (it holds
    // the RTPS reader's lock); only then do the listener and its argument go.
    r->sub->delete_datareader(r->r);
    delete r->listener;
    r->p->pp->delete_subscriber(r->sub);
    r->p->type->deleteData(r->scratch);
    delete r;
}

int32_t ppf_reader_matched(PpfReader* r) {
    SubscriptionMatchedStatus st;
    r->r->get_subscription_matched_status(st);
    return st.current_count;
}

// Sets the data-available listener: `cb(arg)` runs on Fast DDS's receive
// thread for every arrival. Once per reader; 0 ok, -1 error.
int32_t ppf_set_data_listener(PpfReader* r, PpfDataCb cb, void* arg) {
    if (r->listener) return -1;
    auto* l = new PpfListener();
    l->cb = cb;
    l->arg = arg;
    if (r->r->set_listener(l, StatusMask::data_available()) != ReturnCode_t::RETCODE_OK) {
        delete l;
        return -1;
    }
    r->listener = l;
    return 0;
}

// Blocks up to timeout_ns for unread data: 1 data, 0 timeout.
int32_t ppf_wait(PpfReader* r, int64_t timeout_ns) {
    eprosima::fastrtps::Duration_t d(static_cast<int32_t>(timeout_ns / 1000000000),
                                     static_cast<uint32_t>(timeout_ns % 1000000000));
    return r->r->wait_for_unread_message(d) ? 1 : 0;
}

// Takes one sample: 1 and (*data, *len) = its octets, valid until ppf_release;
// 0 none available; -1 error; -2 malformed (length field beyond the type).
int32_t ppf_take(PpfReader* r, const uint8_t** data, uint32_t* len) {
    for (;;) {
        if (r->loaned) {
            ReturnCode_t rc = r->r->take(r->loans, r->infos, 1);
            if (rc == ReturnCode_t::RETCODE_NO_DATA) return 0;
            if (rc != ReturnCode_t::RETCODE_OK) return -1;
            if (r->loans.length() == 0 || !r->infos[0].valid_data) {
                r->r->return_loan(r->loans, r->infos);
                continue;
            }
            r->holding = true;
            const uint8_t* s = static_cast<const uint8_t*>(r->loans.buffer()[0]);
            uint32_t hdr = r->p->hdr;
            uint32_t n;
            std::memcpy(&n, s + hdr - 4, 4);
            if (n > r->p->cfg.max_size) return -2;
            *data = s + hdr;
            *len = n;
            return 1;
        }
        ReturnCode_t rc = r->r->take_next_sample(r->scratch, &r->info);
        if (rc == ReturnCode_t::RETCODE_NO_DATA) return 0;
        if (rc != ReturnCode_t::RETCODE_OK) return -1;
        if (!r->info.valid_data) continue;
        if (r->flat) {
            const uint8_t* s = static_cast<const uint8_t*>(r->scratch);
            uint32_t hdr = r->p->hdr;
            uint32_t n;
            std::memcpy(&n, s + hdr - 4, 4);
            if (n > r->p->cfg.max_size) return -2;
            *data = s + hdr;
            *len = n;
        } else {
            auto* s = static_cast<BytesSample*>(r->scratch);
            *data = s->buf;
            *len = s->len;
        }
        return 1;
    }
}

// Gives back what ppf_take lent (a loan with zero copy; nothing otherwise).
void ppf_release(PpfReader* r) {
    if (r->holding) {
        r->r->return_loan(r->loans, r->infos);
        r->holding = false;
    }
}

// Read-backs of what Fast DDS holds (get_qos), for the tests of the
// settings above.

// RELIABILITY max_blocking_time of a writer, ns.
int64_t ppf_writer_max_blocking_ns(PpfWriter* w) {
    return ns_of(w->w->get_qos().reliability().max_blocking_time);
}

// 1 when positive acks are disabled on the writer (its keep duration in
// *keep_ns), 0 otherwise.
int32_t ppf_writer_positive_acks_off(PpfWriter* w, int64_t* keep_ns) {
    const auto& p = w->w->get_qos().reliable_writer_qos().disable_positive_acks;
    *keep_ns = ns_of(p.duration);
    return p.enabled ? 1 : 0;
}

// 1 when positive acks are disabled on the reader.
int32_t ppf_reader_positive_acks_off(PpfReader* r) {
    return r->r->get_qos().reliable_reader_qos().disable_positive_ACKs.enabled ? 1 : 0;
}

// Bytes per second of the flow controller the writer publishes through
// (asynchronously), found by name among the participant's; -1 when none.
int64_t ppf_writer_bandwidth(PpfWriter* w) {
    const auto& pm = w->w->get_qos().publish_mode();
    if (pm.kind != ASYNCHRONOUS_PUBLISH_MODE || !pm.flow_controller_name) return -1;
    for (const auto& fc : w->p->pp->get_qos().flow_controllers()) {
        if (fc->name && std::strcmp(fc->name, pm.flow_controller_name) == 0 && fc->period_ms > 0) {
            return static_cast<int64_t>(fc->max_bytes_per_period) * 1000 / static_cast<int64_t>(fc->period_ms);
        }
    }
    return -1;
}

// How many samples the writer / reader allocates up front.
int32_t ppf_writer_allocated_samples(PpfWriter* w) {
    return w->w->get_qos().resource_limits().allocated_samples;
}
int32_t ppf_reader_allocated_samples(PpfReader* r) {
    return r->r->get_qos().resource_limits().allocated_samples;
}

// A reliable writer's heartbeatPeriod, ns.
int64_t ppf_writer_heartbeat_period_ns(PpfWriter* w) {
    return ns_of(w->w->get_qos().reliable_writer_qos().times.heartbeatPeriod);
}

// A reliable reader's heartbeatResponseDelay, ns.
int64_t ppf_reader_heartbeat_response_ns(PpfReader* r) {
    return ns_of(r->r->get_qos().reliable_reader_qos().times.heartbeatResponseDelay);
}

// The receive buffer size of the participant's UDPv4 transport (0: the
// system default); -1 without one.
int64_t ppf_participant_receive_buffer(PpfParticipant* p) {
    for (const auto& t : p->pp->get_qos().transport().user_transports) {
        if (auto u = std::dynamic_pointer_cast<UDPv4TransportDescriptor>(t)) return u->receiveBufferSize;
    }
    return -1;
}

// The address of the reader's first multicast locator, as its QoS holds
// it, into buf (empty without one); its length.
int32_t ppf_reader_multicast(PpfReader* r, char* buf, size_t len) {
    std::string a;
    for (const auto& l : r->r->get_qos().endpoint().multicast_locator_list) {
        a = IPLocator::ip_to_string(l);
        break;
    }
    if (len) {
        std::snprintf(buf, len, "%s", a.c_str());
    }
    return static_cast<int32_t>(a.size());
}

// The TTL of the participant's UDPv4 transport; -1 without one.
int32_t ppf_participant_ttl(PpfParticipant* p) {
    for (const auto& t : p->pp->get_qos().transport().user_transports) {
        if (auto u = std::dynamic_pointer_cast<UDPv4TransportDescriptor>(t)) return u->TTL;
    }
    return -1;
}

}  // extern "C"
