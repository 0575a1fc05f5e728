/* A thin C layer between pubsubperf's Rust binding and the CycloneDDS C API:
 * it keeps CycloneDDS's structs (QoS, sample infos, topic descriptors,
 * idlc's generated type) on the C side, so the Rust side only passes
 * entity handles, pointers and integers. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dds/dds.h"
#include "dds/ddsc/dds_loan_api.h"
#include "dds/ddsi/ddsi_serdata.h"
#include "dds/ddsi/ddsi_shm_transport.h"
#include "pubsubperf.h"

/* Largest number of samples taken per call. */
#define PP_TAKE_MAX 32

const char *pp_strretcode(int32_t rc) { return dds_strretcode(rc); }

int32_t pp_create_domain(uint32_t id, const char *config) { return dds_create_domain(id, config); }

int32_t pp_create_participant(uint32_t id) { return dds_create_participant(id, NULL, NULL); }

int32_t pp_delete(int32_t entity) { return dds_delete(entity); }

int32_t pp_topic_bytes(int32_t pp, const char *name) {
  return dds_create_topic(pp, &pubsubperf_Bytes_desc, name, NULL, NULL);
}

/* A fixed-size type built for the run's size:
 *   struct pubsubperf::Flat<N> { uint32 len; octet data[N]; }
 * or, keyed (--instances):
 *   struct pubsubperf::KeyedFlat<N> { @key uint32 id; uint32 len; octet data[N]; }
 * `len` says how much of `data` the sample uses. The descriptor must live
 * as long as the topic: the caller frees it with pp_flat_free after deleting
 * the participant. */
struct pp_flat_desc {
  dds_topic_descriptor_t desc;
  dds_key_descriptor_t key;
  uint32_t ops[12];
  char name[48];
};

void *pp_flat_new(uint32_t n, int keyed) {
  struct pp_flat_desc *f = calloc(1, sizeof *f);
  if (f == NULL) return NULL;
  uint32_t i = 0, nops = 0, off = 0;
  if (keyed) {
    f->ops[i++] = DDS_OP_ADR | DDS_OP_FLAG_KEY | DDS_OP_FLAG_MU | DDS_OP_TYPE_4BY;
    f->ops[i++] = off;
    off += 4;
    nops++;
  }
  f->ops[i++] = DDS_OP_ADR | DDS_OP_TYPE_4BY;
  f->ops[i++] = off;
  off += 4;
  f->ops[i++] = DDS_OP_ADR | DDS_OP_TYPE_ARR | DDS_OP_SUBTYPE_1BY;
  f->ops[i++] = off;
  f->ops[i++] = n;
  nops += 2;
  f->ops[i++] = DDS_OP_RTS;
  if (keyed) {
    /* The key list: one key, described by the op at index 0. */
    f->key.m_name = "id";
    f->key.m_offset = i;
    f->key.m_idx = 0;
    f->ops[i++] = DDS_OP_KOF | 1;
    f->ops[i++] = 0;
    nops++;
  }
  snprintf(f->name, sizeof f->name, keyed ? "pubsubperf::KeyedFlat%u" : "pubsubperf::Flat%u", n);
  /* The descriptor's members are const: initialise a copy, then move it in. */
  dds_topic_descriptor_t d = {.m_size = off + n,
                              .m_align = 4,
                              .m_flagset = DDS_TOPIC_FIXED_SIZE |
                                           (keyed ? DDS_TOPIC_FIXED_KEY | DDS_TOPIC_FIXED_KEY_XCDR2 : 0),
                              .m_nkeys = keyed ? 1 : 0,
                              .m_typename = f->name,
                              .m_keys = keyed ? &f->key : NULL,
                              .m_nops = nops,
                              .m_ops = f->ops,
                              .m_meta = ""};
  memcpy(&f->desc, &d, sizeof d);
  return f;
}

void pp_flat_free(void *f) { free(f); }

int32_t pp_topic_keyed_bytes(int32_t pp, const char *name) {
  return dds_create_topic(pp, &pubsubperf_KeyedBytes_desc, name, NULL, NULL);
}

int32_t pp_topic_flat(int32_t pp, const char *name, void *flat) {
  return dds_create_topic(pp, &((struct pp_flat_desc *)flat)->desc, name, NULL, NULL);
}

/* history: 0 keep-last, 1 keep-all. durability: 0 volatile, 1 transient-local.
 * latency_budget_ns > 0 makes a writer asynchronous (--async): CycloneDDS
 * then hands its packets to the domain's "sendq" thread instead of sending
 * them on the writing thread. Readers get the same budget, so that the
 * writer's offer matches their request. */
static dds_qos_t *make_qos(int reliable, int64_t max_blocking_ns, int history, int32_t depth,
                           int32_t max_samples, int durability, int64_t latency_budget_ns) {
  dds_qos_t *q = dds_create_qos();
  if (latency_budget_ns > 0) dds_qset_latency_budget(q, latency_budget_ns);
  if (reliable)
    dds_qset_reliability(q, DDS_RELIABILITY_RELIABLE, max_blocking_ns);
  else
    dds_qset_reliability(q, DDS_RELIABILITY_BEST_EFFORT, 0);
  if (history == 1)
    dds_qset_history(q, DDS_HISTORY_KEEP_ALL, 0);
  else
    dds_qset_history(q, DDS_HISTORY_KEEP_LAST, depth);
  if (max_samples > 0) dds_qset_resource_limits(q, max_samples, DDS_LENGTH_UNLIMITED, DDS_LENGTH_UNLIMITED);
  dds_qset_durability(q, durability == 1 ? DDS_DURABILITY_TRANSIENT_LOCAL : DDS_DURABILITY_VOLATILE);
  /* What a transient-local writer keeps for late readers is its
   * DURABILITY_SERVICE history (KEEP_LAST 1 by default): the writer's own. */
  if (durability == 1)
    dds_qset_durability_service(q, 0, history == 1 ? DDS_HISTORY_KEEP_ALL : DDS_HISTORY_KEEP_LAST,
                                history == 1 ? 1 : depth, max_samples > 0 ? max_samples : DDS_LENGTH_UNLIMITED,
                                DDS_LENGTH_UNLIMITED, DDS_LENGTH_UNLIMITED);
  return q;
}

int32_t pp_create_writer(int32_t pp, int32_t tp, int reliable, int64_t max_blocking_ns, int history,
                         int32_t depth, int32_t max_samples, int durability, int64_t latency_budget_ns) {
  dds_qos_t *q = make_qos(reliable, max_blocking_ns, history, depth, max_samples, durability, latency_budget_ns);
  int32_t wr = dds_create_writer(pp, tp, q, NULL);
  dds_delete_qos(q);
  return wr;
}

int32_t pp_create_reader(int32_t pp, int32_t tp, int reliable, int history, int32_t depth,
                         int32_t max_samples, int durability, int64_t latency_budget_ns) {
  dds_qos_t *q = make_qos(reliable, DDS_SECS(1), history, depth, max_samples, durability, latency_budget_ns);
  int32_t rd = dds_create_reader(pp, tp, q, NULL);
  dds_delete_qos(q);
  return rd;
}

/* A waitset triggered by the reader's DATA_AVAILABLE status, as ddsperf
 * waits, not by a read condition: measured with both threads of a side on
 * one core, a waiter woken through a read condition ran into a lock the
 * receive thread still held about twice as often (an extra pair of context
 * switches). A take resets the status, so after a take that may have left
 * samples behind the caller takes again before it waits. */
int32_t pp_create_waitset(int32_t pp, int32_t rd) {
  int32_t ws = dds_create_waitset(pp);
  if (ws < 0) return ws;
  int32_t r = dds_set_status_mask(rd, DDS_DATA_AVAILABLE_STATUS);
  if (r >= 0) r = dds_waitset_attach(ws, rd, rd);
  if (r < 0) {
    dds_delete(ws);
    return r;
  }
  return ws;
}

int32_t pp_wait(int32_t ws, int64_t timeout_ns) { return dds_waitset_wait(ws, NULL, 0, timeout_ns); }

/* dds_write only reads the sample: the buffer may be the caller's const bytes. */
int32_t pp_write_bytes(int32_t wr, const uint8_t *buf, uint32_t len) {
  pubsubperf_Bytes s;
  s.data._maximum = len;
  s.data._length = len;
  s.data._buffer = (uint8_t *)buf;
  s.data._release = false;
  return dds_write(wr, &s);
}

int32_t pp_write_keyed_bytes(int32_t wr, uint32_t id, const uint8_t *buf, uint32_t len) {
  pubsubperf_KeyedBytes s;
  s.id = id;
  s.data._maximum = len;
  s.data._length = len;
  s.data._buffer = (uint8_t *)buf;
  s.data._release = false;
  return dds_write(wr, &s);
}

int32_t pp_write(int32_t wr, void *sample) { return dds_write(wr, sample); }

/* --async: CycloneDDS 0.10 queues an asynchronous writer's packet for its
 * send thread but wakes that thread only when the queue already holds one
 * (or on a flush), so a lone sample (a ping) would wait for the next write.
 * The binding flushes after every asynchronous write. */
void pp_write_flush(int32_t wr) { dds_write_flush(wr); }

int32_t pp_loan(int32_t wr, void **sample) { return dds_loan_sample(wr, sample); }

int pp_loan_available(int32_t wr) { return dds_is_loan_available(wr) ? 1 : 0; }

int pp_shm_available(int32_t e) { return dds_is_shared_memory_available(e) ? 1 : 0; }

/* Takes up to `max` samples into the reader's loan; valid[i] says whether
 * ptrs[i] holds data (not just an instance state change). The caller keeps
 * the loan between takes (ptrs as the last take left them; all NULL before
 * the first) and returns it once, with pp_return_loan, when it is done:
 * CycloneDDS then deserializes into the same samples and reuses their
 * sequence buffers. Returning the loan after every take would free each
 * sample's buffer, zero the loan and allocate again on the next take
 * (ddsperf keeps its loan the same way). `max` must be the same each time. */
int32_t pp_take(int32_t rd, void **ptrs, uint8_t *valid, uint32_t max) {
  dds_sample_info_t infos[PP_TAKE_MAX];
  if (max > PP_TAKE_MAX) max = PP_TAKE_MAX;
  int32_t n = dds_take(rd, ptrs, infos, max, max);
  for (int32_t i = 0; i < n; i++) valid[i] = infos[i].valid_data ? 1 : 0;
  return n;
}

/* --receive listener: `cb(reader, arg)` runs on CycloneDDS's receive
 * thread when data arrives (NULL: none). dds_set_listener waits for a
 * callback in progress to return, so after clearing, none runs. */
int32_t pp_set_data_listener(int32_t rd, void (*cb)(int32_t, void *), void *arg) {
  if (cb == NULL) return dds_set_listener(rd, NULL);
  dds_listener_t *l = dds_create_listener(arg);
  if (l == NULL) return DDS_RETCODE_OUT_OF_RESOURCES;
  dds_lset_data_available(l, cb);
  int32_t r = dds_set_listener(rd, l);
  dds_delete_listener(l);
  return r;
}

int32_t pp_return_loan(int32_t rd, void **ptrs, int32_t n) { return dds_return_loan(rd, ptrs, n); }

void pp_bytes_view(const void *sample, const uint8_t **data, uint32_t *len) {
  const pubsubperf_Bytes *s = sample;
  *data = s->data._buffer;
  *len = s->data._length;
}

void pp_keyed_bytes_view(const void *sample, const uint8_t **data, uint32_t *len) {
  const pubsubperf_KeyedBytes *s = sample;
  *data = s->data._buffer;
  *len = s->data._length;
}

int32_t pp_publication_matched(int32_t wr, uint32_t *count) {
  dds_publication_matched_status_t st;
  int32_t r = dds_get_publication_matched_status(wr, &st);
  *count = r < 0 ? 0 : st.current_count;
  return r;
}

int32_t pp_subscription_matched(int32_t rd, uint32_t *count) {
  dds_subscription_matched_status_t st;
  int32_t r = dds_get_subscription_matched_status(rd, &st);
  *count = r < 0 ? 0 : st.current_count;
  return r;
}

/* Flat samples over shared memory, read in place: CycloneDDS 0.10's dds_take
 * copies a sample out of its iceoryx chunk into a reader buffer (and zeroes
 * that buffer when the loan is returned), so the reader takes the samples'
 * serdata instead and reads the chunk itself when it holds the raw sample.
 * raw[i] is that chunk, or NULL when the sample came another way (then
 * pp_serdata_to_sample copies it out). pp_serdata_unref releases the n
 * serdata (and with them the chunks). */
int32_t pp_take_serdata(int32_t rd, void **sd, const void **raw, uint8_t *valid, uint32_t max) {
  dds_sample_info_t infos[PP_TAKE_MAX];
  if (max > PP_TAKE_MAX) max = PP_TAKE_MAX;
  int32_t n = dds_takecdr(rd, (struct ddsi_serdata **)sd, max, infos, DDS_ANY_STATE);
  for (int32_t i = 0; i < n; i++) {
    struct ddsi_serdata *d = sd[i];
    valid[i] = infos[i].valid_data ? 1 : 0;
    raw[i] = NULL;
    if (valid[i] && d->iox_chunk != NULL && shm_get_data_state(d->iox_chunk) == IOX_CHUNK_CONTAINS_RAW_DATA)
      raw[i] = d->iox_chunk;
  }
  return n;
}

int pp_serdata_to_sample(void *sd, void *sample) {
  return ddsi_serdata_to_sample((struct ddsi_serdata *)sd, sample, NULL, NULL) ? 0 : -1;
}

void pp_serdata_unref(void **sd, int32_t n) {
  for (int32_t i = 0; i < n; i++) ddsi_serdata_unref((struct ddsi_serdata *)sd[i]);
}

/* The HISTORY a writer was created with, read back from CycloneDDS: the
 * depth of KEEP_LAST, 0 for KEEP_ALL, -1 when the QoS is unreadable. */
int32_t pp_writer_history_depth(int32_t wr) {
  dds_qos_t *q = dds_create_qos();
  dds_history_kind_t kind;
  int32_t depth = -1;
  if (dds_get_qos(wr, q) < 0 || !dds_qget_history(q, &kind, &depth))
    depth = -1;
  else if (kind == DDS_HISTORY_KEEP_ALL)
    depth = 0;
  dds_delete_qos(q);
  return depth;
}

/* The RELIABILITY max_blocking_time a writer was created with, read back
 * from CycloneDDS (-1 when it is best effort or the QoS is unreadable). */
int64_t pp_writer_max_blocking(int32_t wr) {
  dds_qos_t *q = dds_create_qos();
  dds_reliability_kind_t kind;
  dds_duration_t max_blocking = -1;
  if (dds_get_qos(wr, q) < 0 || !dds_qget_reliability(q, &kind, &max_blocking) ||
      kind != DDS_RELIABILITY_RELIABLE)
    max_blocking = -1;
  dds_delete_qos(q);
  return max_blocking;
}
