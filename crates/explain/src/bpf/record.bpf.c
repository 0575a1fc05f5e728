// SPDX-License-Identifier: GPL-2.0-only OR MIT
//
// The kernel's account of a run, recorded in the kernel and handed over in
// one ring buffer: for each measuring thread, each time it was off its CPU
// (when it left, why, who got the CPU, when it was woken, who ran just
// before it came back); and on the measuring CPUs, each hard interrupt,
// inter-processor interrupt, softirq and idle period, entry and exit merged
// into one record, and each task's time on them. Page faults and
// migrations of the measuring threads.
// Timestamps are bpf_ktime_get_ns(): CLOCK_MONOTONIC, the clock the harness
// timestamps samples with.

// Only the kernel types this program reads, laid out by the kernel's BTF
// at load time (CO-RE: preserve_access_index), not copied from a header.
#include <linux/types.h>
#include <linux/bpf.h>
typedef _Bool bool;

#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>

// A CPU's run queue keeps the steal time (the host ran something else
// instead of this virtual CPU) as of its last clock update, which
// __schedule makes just before every switch (CONFIG_PARAVIRT_TIME_ACCOUNTING;
// the host's count on a KVM guest). Reached from a task on that CPU.
struct rq {
    __u64 prev_steal_time;
} __attribute__((preserve_access_index));

struct cfs_rq {
    struct rq *rq;
} __attribute__((preserve_access_index));

struct sched_entity {
    struct cfs_rq *cfs_rq;
} __attribute__((preserve_access_index));

struct task_struct {
    __s32 pid;
    __s32 tgid;
    char comm[16];
    struct sched_entity se;
} __attribute__((preserve_access_index));

struct irqaction {
    const char *name;
} __attribute__((preserve_access_index));

struct pt_regs;

#define COMM 16

enum kind {
    OFF_CPU = 1,
    IRQ = 2,
    SOFTIRQ = 3,
    IDLE = 4,
    FAULT = 5,
    MIGRATE = 6,
    IPI = 7,
    RUN = 8,
};

// One record of the ring buffer; read by src/event.rs (KernelEvent::parse).
struct event {
    __u64 start;
    __u64 end;
    __u64 mid;
    __u32 kind;
    __u32 cpu;
    __u32 tid;
    __u32 num;
    __u32 by_out;
    __u32 by_in;
    char name_out[COMM];
    char name_in[COMM];
    __u32 pid;
    __u32 pid_out;
    __u32 pid_in;
    __u32 pad;
};

// A measuring thread while it is off its CPU.
struct away {
    __u64 out;
    __u64 woken;
    __u32 preempted;
    __u32 by_out;
    __u32 pid_out;
    char name_out[COMM];
};

// What a measuring CPU is inside of (one level: interrupts do not nest
// on Linux, softirqs do not nest on one CPU).
struct inside {
    __u64 run_start;
    __u64 run_steal;
    __u64 irq_start;
    __u64 softirq_start;
    __u64 idle_start;
    __u64 ipi_start;
    __u32 irq;
    __u32 vec;
    __u32 idle_state;
    __u32 ipi;
    char irq_name[COMM];
    // Set by the CPU's first event: what was running as the recording
    // began is accounted from the recording's start (`origin`), not from
    // its first switch.
    __u32 started;
    // The task switched in (read back at the end of the recording: the
    // run still open then is accounted to it up to the end).
    __u32 cur_tid;
    __u32 cur_pid;
    __u32 pad;
    char cur_comm[COMM];
};

struct {
    __uint(type, BPF_MAP_TYPE_RINGBUF);
    __uint(max_entries, 1 << 24); // resized by the loader
} events SEC(".maps");

// The measuring threads (tid → 1).
struct {
    __uint(type, BPF_MAP_TYPE_HASH);
    __uint(max_entries, 1024);
    __type(key, __u32);
    __type(value, __u8);
} tids SEC(".maps");

// The measuring processes, every thread of each (pid → 1).
struct {
    __uint(type, BPF_MAP_TYPE_HASH);
    __uint(max_entries, 64);
    __type(key, __u32);
    __type(value, __u8);
} pids SEC(".maps");

struct {
    __uint(type, BPF_MAP_TYPE_HASH);
    __uint(max_entries, 1024);
    __type(key, __u32);
    __type(value, struct away);
} aways SEC(".maps");

// [0]: the measuring CPUs, one bit each (CPUs 0-63).
struct {
    __uint(type, BPF_MAP_TYPE_ARRAY);
    __uint(max_entries, 1);
    __type(key, __u32);
    __type(value, __u64);
} cpu_mask SEC(".maps");

// [0]: when the recording began (bpf_ktime_get_ns), set by the loader
// after every probe is attached and before the CPUs are set.
struct {
    __uint(type, BPF_MAP_TYPE_ARRAY);
    __uint(max_entries, 1);
    __type(key, __u32);
    __type(value, __u64);
} origin SEC(".maps");

// [0]: records the ring buffer had no room for.
struct {
    __uint(type, BPF_MAP_TYPE_ARRAY);
    __uint(max_entries, 1);
    __type(key, __u32);
    __type(value, __u64);
} lost SEC(".maps");

struct {
    __uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
    __uint(max_entries, 1);
    __type(key, __u32);
    __type(value, struct inside);
} insides SEC(".maps");

static __always_inline bool measuring_cpu(__u32 cpu)
{
    __u32 zero = 0;
    __u64 *mask = bpf_map_lookup_elem(&cpu_mask, &zero);
    return mask && cpu < 64 && (*mask >> cpu) & 1;
}

static __always_inline bool measuring(__u32 tid, __u32 pid)
{
    return bpf_map_lookup_elem(&tids, &tid) != 0 || bpf_map_lookup_elem(&pids, &pid) != 0;
}

static __always_inline struct event *reserve(__u32 kind)
{
    struct event *e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);
    if (!e) {
        __u32 zero = 0;
        __u64 *n = bpf_map_lookup_elem(&lost, &zero);
        if (n)
            __sync_fetch_and_add(n, 1);
        return 0;
    }
    __builtin_memset(e, 0, sizeof(*e));
    e->kind = kind;
    e->cpu = bpf_get_smp_processor_id();
    return e;
}

// The steal time so far of the CPU `t` is switched on, ns (0 where the
// kernel does not count it).
static __always_inline __u64 steal_now(struct task_struct *t)
{
    if (!bpf_core_field_exists(struct rq, prev_steal_time) ||
        !bpf_core_field_exists(struct cfs_rq, rq))
        return 0;
    return BPF_CORE_READ(t, se.cfs_rq, rq, prev_steal_time);
}

// The task now on this CPU becomes the one a run is open for.
static __always_inline void running(struct inside *in, struct task_struct *t, __u64 since,
                                    __u64 steal)
{
    in->run_start = since;
    in->run_steal = steal;
    in->cur_tid = t->pid;
    in->cur_pid = t->tgid;
    bpf_probe_read_kernel_str(in->cur_comm, COMM, t->comm);
}

// A measuring CPU's state, begun at its first event: the task that was
// running when the recording began ran from the recording's start (the
// idle task: idle from then), so a task that is never switched during the
// recording is accounted too. Null where this CPU is not watched.
static __always_inline struct inside *here(void)
{
    __u32 zero = 0;
    if (!measuring_cpu(bpf_get_smp_processor_id()))
        return 0;
    struct inside *in = bpf_map_lookup_elem(&insides, &zero);
    if (!in || in->started)
        return in;
    __u64 *t0 = bpf_map_lookup_elem(&origin, &zero);
    if (!t0 || !*t0)
        return 0;
    in->started = 1;
    struct task_struct *cur = bpf_get_current_task_btf();
    if (cur->pid)
        running(in, cur, *t0, steal_now(cur));
    else
        in->idle_start = *t0;
    return in;
}

// A span on a measuring CPU that began at *start, ends now: one record,
// and the CPU is no longer inside it.
static __always_inline void end_span(__u32 kind, __u64 *start, __u32 num, const char *name)
{
    if (!*start)
        return;
    struct event *e = reserve(kind);
    if (e) {
        e->start = *start;
        e->end = bpf_ktime_get_ns();
        e->num = num;
        if (name)
            __builtin_memcpy(e->name_out, name, COMM);
        bpf_ringbuf_submit(e, 0);
    }
    *start = 0;
}

SEC("tp_btf/sched_switch")
int BPF_PROG(on_switch, bool preempt, struct task_struct *prev, struct task_struct *next,
             unsigned int prev_state)
{
    __u64 now = bpf_ktime_get_ns();
    __u32 prev_tid = prev->pid, next_tid = next->pid;
    __u32 prev_pid = prev->tgid, next_pid = next->tgid;
    struct inside *in = here();
    if (in) {
        // The task leaving a measuring CPU ran there since its switch in
        // (the idle task's time is in the idle records).
        __u64 steal = steal_now(next);
        if (in->run_start && prev_tid) {
            struct event *e = reserve(RUN);
            if (e) {
                e->start = in->run_start;
                e->end = now;
                // The host's steal while the task ran here.
                e->mid = steal - in->run_steal;
                e->tid = prev_tid;
                e->pid = prev_pid;
                bpf_probe_read_kernel_str(e->name_out, COMM, prev->comm);
                bpf_ringbuf_submit(e, 0);
            }
        }
        if (next_tid) {
            running(in, next, now, steal);
        } else {
            in->run_start = 0;
        }
        // The idle task leaves: an idle period still open (begun with
        // the recording) was closed by its exit or is not known.
        if (!prev_tid)
            in->idle_start = 0;
    }
    if (measuring(prev_tid, prev_pid)) {
        struct away a = {};
        a.out = now;
        // Preempted: still runnable (TASK_RUNNING) as it leaves.
        a.preempted = preempt || prev_state == 0;
        a.by_out = next_tid;
        a.pid_out = next_pid;
        bpf_probe_read_kernel_str(a.name_out, COMM, next->comm);
        bpf_map_update_elem(&aways, &prev_tid, &a, BPF_ANY);
    }
    if (measuring(next_tid, next_pid)) {
        struct away *a = bpf_map_lookup_elem(&aways, &next_tid);
        if (a) {
            struct event *e = reserve(OFF_CPU);
            if (e) {
                e->start = a->out;
                e->end = now;
                e->mid = a->woken;
                e->tid = next_tid;
                e->pid = next_pid;
                e->pid_out = a->pid_out;
                e->num = a->preempted;
                e->by_out = a->by_out;
                __builtin_memcpy(e->name_out, a->name_out, COMM);
                e->by_in = prev_tid;
                e->pid_in = prev_pid;
                bpf_probe_read_kernel_str(e->name_in, COMM, prev->comm);
                bpf_ringbuf_submit(e, 0);
            }
            bpf_map_delete_elem(&aways, &next_tid);
        }
    }
    return 0;
}

// The wake-up as the waker starts it (sched_waking, on the waker's CPU):
// sched_wakeup of a task queued to an idle CPU fires only once that CPU
// is out of idle, which would hide the idle exit from the wait.
SEC("tp_btf/sched_waking")
int BPF_PROG(on_wakeup, struct task_struct *p)
{
    __u32 tid = p->pid;
    struct away *a = bpf_map_lookup_elem(&aways, &tid);
    if (a && !a->woken)
        a->woken = bpf_ktime_get_ns();
    return 0;
}

SEC("tp_btf/sched_migrate_task")
int BPF_PROG(on_migrate, struct task_struct *p, int dest_cpu)
{
    __u32 tid = p->pid, pid = p->tgid;
    if (!measuring(tid, pid))
        return 0;
    struct event *e = reserve(MIGRATE);
    if (e) {
        e->start = e->end = bpf_ktime_get_ns();
        e->tid = tid;
        e->pid = pid;
        e->num = dest_cpu;
        bpf_ringbuf_submit(e, 0);
    }
    return 0;
}

SEC("tp_btf/irq_handler_entry")
int BPF_PROG(on_irq_entry, int irq, struct irqaction *action)
{
    struct inside *in = here();
    if (!in)
        return 0;
    in->irq_start = bpf_ktime_get_ns();
    in->irq = irq;
    bpf_probe_read_kernel_str(in->irq_name, COMM, action->name);
    return 0;
}

SEC("tp_btf/irq_handler_exit")
int BPF_PROG(on_irq_exit, int irq, struct irqaction *action, int ret)
{
    struct inside *in = here();
    if (in)
        end_span(IRQ, &in->irq_start, in->irq, in->irq_name);
    return 0;
}

SEC("tp_btf/softirq_entry")
int BPF_PROG(on_softirq_entry, unsigned int vec)
{
    struct inside *in = here();
    if (!in)
        return 0;
    in->softirq_start = bpf_ktime_get_ns();
    in->vec = vec;
    return 0;
}

SEC("tp_btf/softirq_exit")
int BPF_PROG(on_softirq_exit, unsigned int vec)
{
    struct inside *in = here();
    if (in)
        end_span(SOFTIRQ, &in->softirq_start, in->vec, 0);
    return 0;
}

// The scheduler's inter-processor interrupt: how a wake-up reaches an
// idle CPU (x86; the loader attaches it where the kernel has it).
SEC("tp_btf/reschedule_entry")
int BPF_PROG(on_resched_entry, int vector)
{
    struct inside *in = here();
    if (!in)
        return 0;
    in->ipi_start = bpf_ktime_get_ns();
    in->ipi = vector;
    return 0;
}

SEC("tp_btf/reschedule_exit")
int BPF_PROG(on_resched_exit, int vector)
{
    struct inside *in = here();
    if (in)
        end_span(IPI, &in->ipi_start, in->ipi, 0);
    return 0;
}

// cpu_idle(state, cpu): entering an idle state, or leaving it
// (PWR_EVENT_EXIT, -1).
SEC("tp_btf/cpu_idle")
int BPF_PROG(on_idle, unsigned int state, unsigned int cpu_id)
{
    struct inside *in = here();
    if (!in)
        return 0;
    if (state != (unsigned int)-1) {
        in->idle_start = bpf_ktime_get_ns();
        in->idle_state = state;
        return 0;
    }
    end_span(IDLE, &in->idle_start, in->idle_state, 0);
    return 0;
}

SEC("tp_btf/page_fault_user")
int BPF_PROG(on_fault, unsigned long address, struct pt_regs *regs, unsigned long error_code)
{
    __u64 id = bpf_get_current_pid_tgid();
    __u32 tid = (__u32)id, pid = id >> 32;
    if (!measuring(tid, pid))
        return 0;
    struct event *e = reserve(FAULT);
    if (e) {
        e->start = e->end = bpf_ktime_get_ns();
        e->tid = tid;
        e->pid = pid;
        e->mid = address;
        bpf_ringbuf_submit(e, 0);
    }
    return 0;
}

char LICENSE[] SEC("license") = "Dual MIT/GPL";
