/* iox_ref: a minimal classic-iceoryx (2.0, C binding) program, the
 * reference bench/iceoryx_vs_ref.sh compares pubsubperf's iceoryx binding
 * with. Written for this project after iceoryx's iceperf: publishers loan a
 * chunk, write in place and publish; subscribers take the chunk, read it in
 * place and release it (zero copy both sides). A RouDi must run (the script
 * starts and stops one).
 *
 * usage: iox_ref ping|pong|pub|sub TAG SIZE SECS WARMUP CPU block|busy
 *   ping/pong: ping publishes on "ping", pong echoes each sample on "pong"
 *     in a new loan (only the 8-byte sequence number written); ping times
 *     round trips for SECS after WARMUP and prints "p50_ns=N p99_ns=N"
 *     (one-way = RTT/2), then sends a stop sample.
 *   pub/sub: pub publishes as fast as sub keeps up (publisher
 *     WAIT_FOR_CONSUMER, subscriber BLOCK_PRODUCER: nothing lost) until sub
 *     says (on "ack") that its window is over, at most WARMUP + SECS + 60 s,
 *     then a stop sample; sub counts from its first sample and prints
 *     "per_s=N" over SECS after WARMUP.
 *   block: the subscriber waits on a waitset attached to its HAS_DATA state
 *   (100 ms slices); busy: it polls iox_sub_take_chunk.
 * Both ends are reliable with queue capacity 256 and history 0, as the
 * binding's defaults. The calling thread is pinned to CPU. */
#define _GNU_SOURCE
#include <sched.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "iceoryx_binding_c/enums.h"
#include "iceoryx_binding_c/log.h"
#include "iceoryx_binding_c/notification_info.h"
#include "iceoryx_binding_c/publisher.h"
#include "iceoryx_binding_c/runtime.h"
#include "iceoryx_binding_c/subscriber.h"
#include "iceoryx_binding_c/types.h"
#include "iceoryx_binding_c/wait_set.h"

#define STOP UINT64_MAX

static iox_pub_storage_t pub_storage;
static iox_sub_storage_t sub_storage;
static iox_ws_storage_t ws_storage;
static iox_pub_t pub;
static iox_sub_t sub;
static iox_ws_t ws;
static bool busy;
static uint32_t size;

static uint64_t now_ns(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

static void die(const char *what) {
  fprintf(stderr, "iox_ref: %s\n", what);
  exit(1);
}

static void ports(const char *tag, const char *send, const char *recv) {
  iox_pub_options_t po;
  iox_pub_options_init(&po);
  po.historyCapacity = 0;
  po.subscriberTooSlowPolicy = ConsumerTooSlowPolicy_WAIT_FOR_CONSUMER;
  pub = iox_pub_init(&pub_storage, "iox_ref", tag, send, &po);
  iox_sub_options_t so;
  iox_sub_options_init(&so);
  so.queueCapacity = 256;
  so.historyRequest = 0;
  so.queueFullPolicy = QueueFullPolicy_BLOCK_PRODUCER;
  sub = iox_sub_init(&sub_storage, "iox_ref", tag, recv, &so);
  if (pub == NULL || sub == NULL) die("publisher or subscriber refused");
  ws = iox_ws_init(&ws_storage);
  if (iox_ws_attach_subscriber_state(ws, sub, SubscriberState_HAS_DATA, 0, NULL) != WaitSetResult_SUCCESS)
    die("waitset attach");
  /* Both directions connected before anything is measured. */
  uint64_t t0 = now_ns();
  while (!iox_pub_has_subscribers(pub) || iox_sub_get_subscription_state(sub) != SubscribeState_SUBSCRIBED) {
    if (now_ns() - t0 > 30000000000u) die("no peer within 30 s");
    usleep(1000);
  }
}

static void close_ports(void) {
  iox_ws_detach_subscriber_state(ws, sub, SubscriberState_HAS_DATA);
  iox_ws_deinit(ws);
  iox_sub_deinit(sub);
  iox_pub_deinit(pub);
}

/* Publishes `seq` in a chunk of `len` bytes; exits when no chunk is free
 * for 30 s. */
static void send_len(uint64_t seq, uint32_t len) {
  void *chunk = NULL;
  uint64_t t0 = 0;
  while (iox_pub_loan_aligned_chunk(pub, &chunk, len, 8) != AllocationResult_SUCCESS) {
    /* every chunk of the pool in flight: the subscriber releases soon */
    if (t0 == 0) t0 = now_ns();
    if (now_ns() - t0 > 30000000000u) die("no free chunk within 30 s");
    sched_yield();
  }
  memcpy(chunk, &seq, sizeof seq);
  iox_pub_publish_chunk(pub, chunk);
}

static void send_seq(uint64_t seq) { send_len(seq, size); }

/* The next sample's sequence number; exits when nothing came in 30 s. */
static uint64_t take_seq(void) {
  const void *chunk = NULL;
  uint64_t t0 = 0;
  for (;;) {
    if (iox_sub_take_chunk(sub, &chunk) == ChunkReceiveResult_SUCCESS) {
      uint64_t seq;
      memcpy(&seq, chunk, sizeof seq);
      iox_sub_release_chunk(sub, chunk);
      return seq;
    }
    if (t0 == 0) t0 = now_ns();
    if (now_ns() - t0 > 30000000000u) die("nothing received within 30 s");
    if (!busy) {
      struct timespec t = {.tv_sec = 0, .tv_nsec = 100000000};
      iox_notification_info_t ev[1];
      uint64_t missed = 0;
      iox_ws_timed_wait(ws, t, ev, 1, &missed);
    }
  }
}

static int cmp(const void *a, const void *b) {
  uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
  return x < y ? -1 : x > y;
}

static void ping(double secs, double warmup) {
  size_t cap = 4000000, n = 0;
  uint64_t *rtt = malloc(cap * sizeof *rtt);
  if (rtt == NULL) die("out of memory");
  uint64_t warm_end = now_ns() + (uint64_t)(warmup * 1e9), end = 0;
  for (uint64_t seq = 0;; seq++) {
    uint64_t t0 = now_ns();
    send_seq(seq);
    uint64_t got = take_seq();
    uint64_t t1 = now_ns();
    if (got != seq) die("echo out of order");
    if (end) {
      rtt[n++] = t1 - t0;
      if (t1 >= end || n == cap) break;
    } else if (t1 >= warm_end) {
      end = t1 + (uint64_t)(secs * 1e9);
    }
  }
  send_seq(STOP);
  if (take_seq() != STOP) die("no stop echo");
  qsort(rtt, n, sizeof *rtt, cmp);
  printf("p50_ns=%llu p90_ns=%llu p99_ns=%llu samples=%zu size=%u wait=%s\n",
         (unsigned long long)rtt[(size_t)((n - 1) * 0.5 + 0.5)] / 2,
         (unsigned long long)rtt[(size_t)((n - 1) * 0.9 + 0.5)] / 2,
         (unsigned long long)rtt[(size_t)((n - 1) * 0.99 + 0.5)] / 2, n, size, busy ? "busy" : "block");
  free(rtt);
}

static void pong(void) {
  for (;;) {
    uint64_t seq = take_seq();
    send_seq(seq);
    if (seq == STOP) break;
  }
  /* Stay until ping has taken the stop echo (it unsubscribes at exit). */
  uint64_t t0 = now_ns();
  while (iox_pub_has_subscribers(pub) && now_ns() - t0 < 10000000000u) usleep(1000);
}

/* True when a sample is waiting (taken and released), without waiting. */
static bool poll_any(void) {
  const void *chunk = NULL;
  if (iox_sub_take_chunk(sub, &chunk) != ChunkReceiveResult_SUCCESS) return false;
  iox_sub_release_chunk(sub, chunk);
  return true;
}

static void publisher(double secs, double warmup) {
  uint64_t end = now_ns() + (uint64_t)((warmup + secs + 60.0) * 1e9);
  for (uint64_t seq = 0;; seq++) {
    send_seq(seq);
    if ((seq & 255) == 255 && (poll_any() || now_ns() >= end)) break;
  }
  send_seq(STOP);
  uint64_t t0 = now_ns();
  while (iox_pub_has_subscribers(pub) && now_ns() - t0 < 10000000000u) usleep(1000);
}

static void subscriber(double secs, double warmup) {
  uint64_t n = 0, expect = 0, start = 0, from = 0, from_n = 0, win_ns = 0, win_n = 0;
  for (;;) {
    uint64_t seq = take_seq();
    if (seq == STOP) break;
    if (seq != expect) die("sample lost or out of order");
    expect++;
    n++;
    if ((n & 63) != 1) continue;
    uint64_t t = now_ns();
    if (start == 0) start = t;
    if (from == 0 && t - start >= (uint64_t)(warmup * 1e9)) {
      from = t;
      from_n = n;
    } else if (from && win_ns == 0 && t - from >= (uint64_t)(secs * 1e9)) {
      win_ns = t - from;
      win_n = n - from_n;
      /* The publisher may stop now: a small chunk, as every chunk of the
       * sample size may be in flight towards us. */
      send_len(1, sizeof(uint64_t));
    }
  }
  if (win_ns == 0) die("the publisher stopped before the window ended");
  printf("per_s=%.0f samples=%llu secs=%.3f size=%u wait=%s\n", win_n / (win_ns / 1e9),
         (unsigned long long)win_n, win_ns / 1e9, size, busy ? "busy" : "block");
}

int main(int argc, char **argv) {
  if (argc != 8) {
    fprintf(stderr, "usage: iox_ref ping|pong|pub|sub TAG SIZE SECS WARMUP CPU block|busy\n");
    return 2;
  }
  const char *role = argv[1], *tag = argv[2];
  long sz = atol(argv[3]);
  double secs = atof(argv[4]), warmup = atof(argv[5]);
  int cpu = atoi(argv[6]);
  busy = strcmp(argv[7], "busy") == 0;
  if (sz < 8) {
    fprintf(stderr, "iox_ref: SIZE: at least 8 bytes (the sequence number)\n");
    return 2;
  }
  size = (uint32_t)sz;
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  if (sched_setaffinity(0, sizeof set, &set) != 0) die("sched_setaffinity");
  char name[64];
  snprintf(name, sizeof name, "iox_ref_%s_%d", role, (int)getpid());
  /* As the binding's shim: iceoryx logs every loan that finds the pool
   * empty (back-pressure here), one write each. */
  iox_set_loglevel(Iceoryx_LogLevel_Fatal);
  iox_runtime_init(name);
  if (strcmp(role, "ping") == 0) {
    ports(tag, "ping", "pong");
    ping(secs, warmup);
  } else if (strcmp(role, "pong") == 0) {
    ports(tag, "pong", "ping");
    pong();
  } else if (strcmp(role, "pub") == 0) {
    ports(tag, "data", "ack");
    publisher(secs, warmup);
  } else if (strcmp(role, "sub") == 0) {
    ports(tag, "ack", "data");
    subscriber(secs, warmup);
  } else {
    fprintf(stderr, "iox_ref: role must be ping, pong, pub or sub, not %s\n", role);
    return 2;
  }
  fflush(stdout);
  close_ports();
  /* The runtime unregisters at exit, as pubsubperf's binding leaves it
   * (iox_runtime_shutdown here hung now and then in its keep-alive thread). */
  return 0;
}
