/* A thin C layer between pubsubperf's Rust binding and iceoryx's C binding:
 * it owns the storage of publishers, subscribers and waitsets (whose layout
 * stays on the C side) and passes plain integers and pointers. */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "iceoryx_binding_c/chunk.h"
#include "iceoryx_binding_c/enums.h"
#include "iceoryx_binding_c/log.h"
#include "iceoryx_binding_c/notification_info.h"
#include "iceoryx_binding_c/publisher.h"
#include "iceoryx_binding_c/runtime.h"
#include "iceoryx_binding_c/subscriber.h"
#include "iceoryx_binding_c/types.h"
#include "iceoryx_binding_c/wait_set.h"

/* Fatal errors only: iceoryx's runtime otherwise logs every segment it
 * maps, every client RouDi cleans up and, at error level, every loan that
 * finds the chunk pool empty, which in a reliable run is back-pressure
 * the writer waits through (about 27 000 lines a second at 16 MiB, each a
 * write to standard error). Failures reach pubsubperf as return codes and
 * are reported by it. */
void ppx_runtime_init(const char *name) {
  iox_set_loglevel(Iceoryx_LogLevel_Fatal);
  iox_runtime_init(name);
}

struct ppx_pub {
  iox_pub_storage_t storage;
  iox_pub_t pub;
};

/* reliable: the publisher waits for a full subscriber queue (paired with
 * BLOCK_PRODUCER subscribers); otherwise the oldest queued sample is dropped. */
void *ppx_pub_new(const char *service, const char *instance, const char *event, int reliable) {
  struct ppx_pub *p = calloc(1, sizeof *p);
  if (p == NULL) return NULL;
  iox_pub_options_t o;
  iox_pub_options_init(&o);
  o.historyCapacity = 0;
  o.subscriberTooSlowPolicy =
      reliable ? ConsumerTooSlowPolicy_WAIT_FOR_CONSUMER : ConsumerTooSlowPolicy_DISCARD_OLDEST_DATA;
  p->pub = iox_pub_init(&p->storage, service, instance, event, &o);
  if (p->pub == NULL) {
    free(p);
    return NULL;
  }
  return p;
}

void ppx_pub_free(void *h) {
  struct ppx_pub *p = h;
  iox_pub_deinit(p->pub);
  free(p);
}

int ppx_pub_has_subscribers(void *h) { return iox_pub_has_subscribers(((struct ppx_pub *)h)->pub) ? 1 : 0; }

/* 0 on success, else the iox_AllocationResult. */
int ppx_pub_loan(void *h, void **chunk, uint32_t size) {
  enum iox_AllocationResult r = iox_pub_loan_aligned_chunk(((struct ppx_pub *)h)->pub, chunk, size, 8);
  return r == AllocationResult_SUCCESS ? 0 : (int)r + 1;
}

void ppx_pub_publish(void *h, void *chunk) { iox_pub_publish_chunk(((struct ppx_pub *)h)->pub, chunk); }

struct ppx_sub {
  iox_sub_storage_t storage;
  iox_sub_t sub;
  iox_ws_storage_t ws_storage;
  iox_ws_t ws;
};

void *ppx_sub_new(const char *service, const char *instance, const char *event, uint64_t queue, int reliable) {
  struct ppx_sub *s = calloc(1, sizeof *s);
  if (s == NULL) return NULL;
  iox_sub_options_t o;
  iox_sub_options_init(&o);
  o.queueCapacity = queue;
  o.historyRequest = 0;
  o.queueFullPolicy = reliable ? QueueFullPolicy_BLOCK_PRODUCER : QueueFullPolicy_DISCARD_OLDEST_DATA;
  s->sub = iox_sub_init(&s->storage, service, instance, event, &o);
  if (s->sub == NULL) {
    free(s);
    return NULL;
  }
  s->ws = iox_ws_init(&s->ws_storage);
  if (iox_ws_attach_subscriber_state(s->ws, s->sub, SubscriberState_HAS_DATA, 0, NULL) != WaitSetResult_SUCCESS) {
    iox_ws_deinit(s->ws);
    iox_sub_deinit(s->sub);
    free(s);
    return NULL;
  }
  return s;
}

void ppx_sub_free(void *h) {
  struct ppx_sub *s = h;
  iox_ws_detach_subscriber_state(s->ws, s->sub, SubscriberState_HAS_DATA);
  iox_ws_deinit(s->ws);
  iox_sub_deinit(s->sub);
  free(s);
}

int ppx_sub_subscribed(void *h) {
  return iox_sub_get_subscription_state(((struct ppx_sub *)h)->sub) == SubscribeState_SUBSCRIBED ? 1 : 0;
}

/* 1: a chunk was taken, 0: none, < 0: -(iox_ChunkReceiveResult + 1). */
int ppx_sub_take(void *h, const void **chunk) {
  enum iox_ChunkReceiveResult r = iox_sub_take_chunk(((struct ppx_sub *)h)->sub, chunk);
  if (r == ChunkReceiveResult_SUCCESS) return 1;
  if (r == ChunkReceiveResult_NO_CHUNK_AVAILABLE) return 0;
  return -((int)r + 1);
}

void ppx_sub_release(void *h, const void *chunk) { iox_sub_release_chunk(((struct ppx_sub *)h)->sub, chunk); }

/* Waits for data at most timeout_ns; returns the number of notifications. */
uint64_t ppx_sub_wait(void *h, int64_t timeout_ns) {
  struct timespec t = {.tv_sec = timeout_ns / 1000000000, .tv_nsec = timeout_ns % 1000000000};
  iox_notification_info_t ev[1];
  uint64_t missed = 0;
  return iox_ws_timed_wait(((struct ppx_sub *)h)->ws, t, ev, 1, &missed);
}
