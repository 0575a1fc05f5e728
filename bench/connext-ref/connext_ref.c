/* connext_ref: a minimal program of ours on RTI Connector's native path, the
 * reference bench/connext_vs_ref.sh compares pubsubperf's connext binding
 * with. RTI Connector creates each endpoint (one Connector, so one
 * participant, per endpoint) from an XML application; the program takes
 * the native DDS_DataWriter / DDS_DataReader and Connector's DynamicData
 * sample, and Connext's public C API does the rest: set_octet_array and
 * write, take, get_octet_array (a copy out, as Perftest's dynamic-data
 * reader does) and return_loan, with a waitset on a read condition or a
 * data-available listener. No RTI header: the few functions are declared
 * below from RTI's C API reference, RTI's objects as opaque pointers.
 *
 * usage: connext_ref ping|pong|pub|sub SIZE SECS WARMUP CPU listener|waitset WRITER_XML READER_XML
 *   WRITER_XML / READER_XML: the XML applications of the endpoints (the
 *     script takes those the binding wrote for the same test, so both run
 *     Connext with the same QoS); "-" for none (pub has no reader, sub no
 *     writer).
 *   ping/pong: ping writes SIZE-byte samples, pong writes each back; ping
 *     times round trips for SECS after WARMUP and prints "p50_ns=N
 *     p99_ns=N" (one-way = RTT/2), then writes a stop sample.
 *   pub/sub: pub writes as fast as Connext takes them (reliable: the
 *     writer blocks when its queue is full) until the reader is gone or
 *     WARMUP + SECS + 60 s; sub counts from its first sample and prints
 *     "per_s=N" over SECS after WARMUP, then leaves.
 *   listener: Connext's receive thread takes the sample in on_data_available
 *     (pong and ping write the next sample there, as the binding does);
 *   waitset: this thread waits in a DDS_WaitSet (100 ms slices) and takes.
 * The calling thread is pinned to CPU before the participants are made, so
 * Connext's threads run there too (as in the binding, pinned by --cpu). */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* ---- RTI's public C API, as its reference documents it. ---- */
typedef struct {
  int enable_on_data_event;
  int one_based_sequence_indexing;
} RTI_Connector_Options;
typedef struct {
  int32_t sec;
  uint32_t nanosec;
} DDS_Duration_t;
typedef void (*on_status_fn)(void *, void *, const void *);
typedef struct {
  void *listener_data;
  on_status_fn on_requested_deadline_missed;
  on_status_fn on_requested_incompatible_qos;
  on_status_fn on_sample_rejected;
  on_status_fn on_liveliness_changed;
  void (*on_data_available)(void *, void *);
  on_status_fn on_subscription_matched;
  on_status_fn on_sample_lost;
} DDS_DataReaderListener;

void *RTI_Connector_new(const char *config, const char *url, const RTI_Connector_Options *options);
void RTI_Connector_delete(void *connector);
void *RTI_Connector_get_datawriter(void *connector, const char *name);
void *RTI_Connector_get_datareader(void *connector, const char *name);
int RTI_Connector_get_native_instance(void *connector, const char *name, void **instance);
void *DDS_DynamicDataWriter_narrow(void *writer);
void *DDS_DynamicDataReader_narrow(void *reader);
int DDS_DynamicData_set_octet_array(void *data, const char *name, int32_t id, uint32_t len, const uint8_t *v);
int DDS_DynamicData_get_octet_array(void *data, uint8_t *v, uint32_t *len, const char *name, int32_t id);
int DDS_DynamicDataWriter_write(void *writer, void *data, const void *handle);
int DDS_DynamicDataReader_take(void *reader, void *samples, void *infos, int32_t max, uint32_t s, uint32_t v,
                               uint32_t i);
int DDS_DynamicDataReader_return_loan(void *reader, void *samples, void *infos);
unsigned char DDS_DynamicDataSeq_initialize(void *seq);
unsigned char DDS_DynamicDataSeq_finalize(void *seq);
int32_t DDS_DynamicDataSeq_get_length(void *seq);
void *DDS_DynamicDataSeq_get_reference(void *seq, int32_t i);
unsigned char DDS_SampleInfoSeq_initialize(void *seq);
unsigned char DDS_SampleInfoSeq_finalize(void *seq);
unsigned char DDS_ConditionSeq_initialize(void *seq);
unsigned char DDS_ConditionSeq_finalize(void *seq);
unsigned char DDS_ConditionSeq_set_maximum(void *seq, int32_t max);
void *DDS_WaitSet_new(void);
int DDS_WaitSet_delete(void *ws);
int DDS_WaitSet_attach_condition(void *ws, void *cond);
int DDS_WaitSet_detach_condition(void *ws, void *cond);
int DDS_WaitSet_wait(void *ws, void *active, const DDS_Duration_t *timeout);
void *DDS_DataReader_create_readcondition(void *reader, uint32_t s, uint32_t v, uint32_t i);
int DDS_DataReader_delete_readcondition(void *reader, void *cond);
int DDS_DataReader_set_listener(void *reader, const DDS_DataReaderListener *l, uint32_t mask);
int DDS_DataReader_get_subscription_matched_status(void *reader, int32_t *status);
int DDS_DataWriter_get_publication_matched_status(void *writer, int32_t *status);
/* A DDS_InstanceHandle_t, whose layout is not needed: only its address. */
struct DDS_InstanceHandle_t;
extern const struct DDS_InstanceHandle_t DDS_HANDLE_NIL;

#define ANY_STATE 0xffffu
#define DATA_AVAILABLE_STATUS (1u << 10)
#define RETCODE_OK 0
#define RETCODE_NO_DATA 11
/* Room for one of RTI's sequence structs, initialised by RTI's functions. */
#define SEQ_BYTES 256
/* The names in the binding's XML (crates/connext/src/xml.rs). */
#define PARTICIPANT "pubsubperf::endpoint"
#define WRITER "publisher::writer"
#define READER "subscriber::reader"
#define STOP UINT64_MAX

/* ---- The endpoints. ---- */
static void *w_connector, *r_connector;
static void *writer, *w_native, *w_sample;
static void *reader, *r_native, *waitset, *condition;
static _Alignas(16) unsigned char samples[SEQ_BYTES], infos[SEQ_BYTES], active[SEQ_BYTES];
static uint8_t *buf, *scratch;
static uint32_t size;
static int listening;

static uint64_t now_ns(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

static void die(const char *what) {
  fprintf(stderr, "connext_ref: %s\n", what);
  exit(1);
}

static void *connector(const char *xml) {
  RTI_Connector_Options o = {0, 0};
  void *c = RTI_Connector_new(PARTICIPANT, xml, &o);
  if (c == NULL) die("RTI Connector could not create a participant from the XML (see Connext's log)");
  return c;
}

static void open_writer(const char *xml) {
  w_connector = connector(xml);
  w_native = RTI_Connector_get_datawriter(w_connector, WRITER);
  writer = w_native ? DDS_DynamicDataWriter_narrow(w_native) : NULL;
  if (writer == NULL || RTI_Connector_get_native_instance(w_connector, WRITER, &w_sample) != 0 || !w_sample)
    die("no writer or sample in the writer's XML");
}

static void open_reader(const char *xml) {
  r_connector = connector(xml);
  r_native = RTI_Connector_get_datareader(r_connector, READER);
  reader = r_native ? DDS_DynamicDataReader_narrow(r_native) : NULL;
  if (reader == NULL) die("no reader in the reader's XML");
  DDS_DynamicDataSeq_initialize(samples);
  DDS_SampleInfoSeq_initialize(infos);
  DDS_ConditionSeq_initialize(active);
  DDS_ConditionSeq_set_maximum(active, 1);
  waitset = DDS_WaitSet_new();
  condition = DDS_DataReader_create_readcondition(r_native, ANY_STATE, ANY_STATE, ANY_STATE);
  if (!waitset || !condition || DDS_WaitSet_attach_condition(waitset, condition) != RETCODE_OK)
    die("waitset");
}

static void close_endpoints(void) {
  if (r_connector) {
    if (listening) DDS_DataReader_set_listener(r_native, NULL, 0);
    DDS_WaitSet_detach_condition(waitset, condition);
    DDS_WaitSet_delete(waitset);
    DDS_DataReader_delete_readcondition(r_native, condition);
    DDS_DynamicDataSeq_finalize(samples);
    DDS_SampleInfoSeq_finalize(infos);
    DDS_ConditionSeq_finalize(active);
    RTI_Connector_delete(r_connector);
  }
  if (w_connector) RTI_Connector_delete(w_connector);
}

/* The current count of matched peers of the writer or the reader (the third
 * 32-bit word of the matched status: after total_count and its change). */
static int32_t matched(int of_writer) {
  int32_t status[32] = {0};
  int rc = of_writer ? DDS_DataWriter_get_publication_matched_status(w_native, status)
                     : DDS_DataReader_get_subscription_matched_status(r_native, status);
  return rc == RETCODE_OK ? status[2] : 0;
}

static void wait_matched(void) {
  uint64_t t0 = now_ns();
  while ((w_native && matched(1) < 1) || (r_native && matched(0) < 1)) {
    if (now_ns() - t0 > 30000000000u) die("no peer matched within 30 s");
    usleep(1000);
  }
}

/* Writes a sample of SIZE bytes beginning with `seq`; Connext's return
 * code. */
static int write_seq(uint64_t seq) {
  memcpy(buf, &seq, sizeof seq);
  if (DDS_DynamicData_set_octet_array(w_sample, "data", 0, size, buf) != RETCODE_OK) die("set_octet_array");
  return DDS_DynamicDataWriter_write(writer, w_sample, &DDS_HANDLE_NIL);
}

/* write_seq, which must succeed. */
static void send_seq(uint64_t seq) {
  int rc = write_seq(seq);
  if (rc != RETCODE_OK) {
    fprintf(stderr, "connext_ref: write returned %d\n", rc);
    exit(1);
  }
}

/* Takes every sample there is, calling `on_seq` with each one's number;
 * returns how many. */
static int take(void (*on_seq)(uint64_t)) {
  int rc = DDS_DynamicDataReader_take(reader, samples, infos, -1, ANY_STATE, ANY_STATE, ANY_STATE);
  if (rc == RETCODE_NO_DATA) return 0;
  if (rc != RETCODE_OK) die("take");
  int n = 0, count = DDS_DynamicDataSeq_get_length(samples);
  for (int i = 0; i < count; i++) {
    uint32_t len = size;
    void *s = DDS_DynamicDataSeq_get_reference(samples, i);
    if (DDS_DynamicData_get_octet_array(s, scratch, &len, "data", 0) != RETCODE_OK || len < 8) continue;
    uint64_t seq;
    memcpy(&seq, scratch, sizeof seq);
    on_seq(seq);
    n++;
  }
  DDS_DynamicDataReader_return_loan(reader, samples, infos);
  return n;
}

/* ---- What each role does with a sample, and the end of the run. ---- */
static double secs, warmup;
static uint64_t start_ns, measure_ns, end_ns, sent_ns, next_seq;
static uint64_t *rtt;
static size_t rtt_n, rtt_cap;
static uint64_t win_n, first_ns;
static atomic_int done;
static _Atomic uint64_t last_ns;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t finished = PTHREAD_COND_INITIALIZER;

static void finish(void) {
  pthread_mutex_lock(&lock);
  atomic_store(&done, 1);
  pthread_cond_signal(&finished);
  pthread_mutex_unlock(&lock);
}

/* ping: an echo came back; the next ping goes out at once. */
static void on_echo(uint64_t seq) {
  if (seq != next_seq || atomic_load(&done)) return;
  uint64_t t = now_ns();
  if (t >= measure_ns && rtt_n < rtt_cap) rtt[rtt_n++] = t - sent_ns;
  if (t >= end_ns) {
    finish();
    return;
  }
  sent_ns = now_ns();
  send_seq(++next_seq);
}

/* pong: each sample goes back; the stop sample ends it. */
static void on_ping(uint64_t seq) {
  if (seq == STOP) {
    finish();
    return;
  }
  send_seq(seq);
}

/* sub: counts the samples of its window. */
static void on_data(uint64_t seq) {
  uint64_t t = now_ns();
  if (seq == STOP || atomic_load(&done)) return;
  if (first_ns == 0) {
    first_ns = t;
    measure_ns = t + (uint64_t)(warmup * 1e9);
    end_ns = measure_ns + (uint64_t)(secs * 1e9);
  }
  if (t >= end_ns) {
    finish();
    return;
  }
  if (t >= measure_ns) win_n++;
}

static void (*handle)(uint64_t);

/* One take at a time: the listener's, or this thread's first one (the
 * loaned sequences are one pair). Uncontended but for that first take. */
static pthread_mutex_t taking = PTHREAD_MUTEX_INITIALIZER;

static void on_data_available(void *data, void *r) {
  (void)data;
  (void)r;
  pthread_mutex_lock(&taking);
  int n = take(handle);
  pthread_mutex_unlock(&taking);
  if (n > 0) atomic_store(&last_ns, now_ns());
}

/* Delivers samples to `handle` until it says the run is over, or nothing
 * came for 30 s: on Connext's receive thread (listener) or this one. */
static void receive(const char *mode) {
  uint64_t quiet_since = now_ns();
  atomic_store(&last_ns, quiet_since);
  if (strcmp(mode, "listener") == 0) {
    DDS_DataReaderListener l = {0};
    l.on_data_available = on_data_available;
    if (DDS_DataReader_set_listener(r_native, &l, DATA_AVAILABLE_STATUS) != RETCODE_OK) die("set_listener");
    listening = 1;
    /* Samples that came before the listener was set. */
    pthread_mutex_lock(&taking);
    take(handle);
    pthread_mutex_unlock(&taking);
    pthread_mutex_lock(&lock);
    while (!atomic_load(&done)) {
      struct timespec t;
      clock_gettime(CLOCK_REALTIME, &t);
      t.tv_sec += 1;
      pthread_cond_timedwait(&finished, &lock, &t);
      if (!atomic_load(&done) && now_ns() - atomic_load(&last_ns) > 30000000000u)
        die("nothing received within 30 s");
    }
    pthread_mutex_unlock(&lock);
    return;
  }
  DDS_Duration_t slice = {0, 100000000};
  while (!atomic_load(&done)) {
    if (take(handle) > 0) {
      quiet_since = now_ns();
      continue;
    }
    if (now_ns() - quiet_since > 30000000000u) die("nothing received within 30 s");
    DDS_WaitSet_wait(waitset, active, &slice);
  }
}

static int cmp(const void *a, const void *b) {
  uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
  return x < y ? -1 : x > y;
}

static void ping(const char *mode) {
  rtt_cap = 20000000;
  rtt = malloc(rtt_cap * sizeof *rtt);
  if (rtt == NULL) die("out of memory");
  memset(rtt, 0, rtt_cap * sizeof *rtt);
  start_ns = now_ns();
  measure_ns = start_ns + (uint64_t)(warmup * 1e9);
  end_ns = measure_ns + (uint64_t)(secs * 1e9);
  handle = on_echo;
  sent_ns = now_ns();
  send_seq(next_seq = 0);
  receive(mode);
  if (rtt_n == 0) die("no round trip measured");
  qsort(rtt, rtt_n, sizeof *rtt, cmp);
  /* nearest rank, one-way = RTT / 2 */
  printf("p50_ns=%llu p90_ns=%llu p99_ns=%llu samples=%zu size=%u mode=%s\n",
         (unsigned long long)(rtt[(rtt_n - 1) * 50 / 100] / 2), (unsigned long long)(rtt[(rtt_n - 1) * 90 / 100] / 2),
         (unsigned long long)(rtt[(rtt_n - 1) * 99 / 100] / 2), rtt_n, size, mode);
  fflush(stdout);
  send_seq(STOP);
}

static void publish(void) {
  uint64_t deadline = now_ns() + (uint64_t)((warmup + secs + 60) * 1e9);
  for (uint64_t seq = 0;; seq++) {
    /* A write that timed out (the queue stayed full: the reader is
     * leaving) is tried again while the reader is there. */
    int rc;
    while ((rc = write_seq(seq)) != RETCODE_OK && matched(1) > 0 && now_ns() < deadline) {
    }
    if (rc != RETCODE_OK || ((seq & 1023) == 0 && (matched(1) < 1 || now_ns() > deadline))) break;
  }
}

static void subscribe(const char *mode) {
  handle = on_data;
  receive(mode);
  printf("per_s=%.0f samples=%llu secs=%.3f size=%u mode=%s\n", win_n / secs, (unsigned long long)win_n, secs,
         size, mode);
  fflush(stdout);
}

int main(int argc, char **argv) {
  if (argc != 9) {
    fprintf(stderr, "usage: connext_ref ping|pong|pub|sub SIZE SECS WARMUP CPU listener|waitset WRITER_XML READER_XML\n");
    return 2;
  }
  const char *role = argv[1], *mode = argv[6], *wxml = argv[7], *rxml = argv[8];
  size = (uint32_t)strtoul(argv[2], NULL, 10);
  secs = atof(argv[3]);
  warmup = atof(argv[4]);
  if (size < 8) die("SIZE: at least 8 bytes (the sequence number)");
  if (strcmp(mode, "listener") != 0 && strcmp(mode, "waitset") != 0) die("mode must be listener or waitset");
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(atoi(argv[5]), &set);
  if (sched_setaffinity(0, sizeof set, &set) != 0) die("sched_setaffinity");
  buf = calloc(size, 1);
  scratch = calloc(size, 1);
  if (!buf || !scratch) die("out of memory");
  if (strcmp(wxml, "-") != 0) open_writer(wxml);
  if (strcmp(rxml, "-") != 0) open_reader(rxml);
  wait_matched();
  if (strcmp(role, "ping") == 0 && writer && reader) {
    ping(mode);
  } else if (strcmp(role, "pong") == 0 && writer && reader) {
    handle = on_ping;
    receive(mode);
  } else if (strcmp(role, "pub") == 0 && writer) {
    publish();
  } else if (strcmp(role, "sub") == 0 && reader) {
    subscribe(mode);
  } else {
    die("role must be ping or pong (a writer and a reader), pub (a writer) or sub (a reader)");
  }
  close_endpoints();
  return 0;
}
