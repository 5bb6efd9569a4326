// SPDX-License-Identifier: GPL-2.0
/* The kernel side of --trace: follows the run's own tasks (those with a
 * slot in `task_slot`, given by user space or at fork) through the
 * scheduler and the softirqs around them, and adds up time per side in
 * per-CPU totals; a sampler splits their on-CPU time into user space and
 * system calls. With --trace-syscalls, programs on every system call's
 * entry and exit make that split exact and count the calls, at several
 * times the cost: the raw_syscalls tracepoints send every system call of
 * the machine through the kernel's slower path. Time counts only inside
 * [t_on, t_off], the execute phase, which user space sets; outside it the
 * programs keep each task's state and count nothing. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>

#include "trace_shared.h"

char LICENSE[] SEC("license") = "GPL";

#define TASK_DEAD_STATE 0x80     /* TASK_DEAD in prev_state */
#define TASK_WAKING_STATE 0x200  /* TASK_WAKING: a wake-up under way */
#define NET_TX_VEC 2
#define NET_RX_VEC 3

/* CLOCK_MONOTONIC ns, as bpf_ktime_get_ns(); t_on 0: not on yet. */
volatile __u64 t_on, t_off;
/* Set before loading: the system call programs are loaded (--trace-syscalls). */
const volatile bool follow_syscalls;

/* Every event asks first whether its task is one of the run's: a task's
 * own storage answers that in a few loads (nothing there: not ours), where
 * a hash of thread ids cost a hash and a bucket walk per event, most of
 * them for tasks not ours. Its value is the task's slot in `tasks`. */
struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, __u32);
} task_slot SEC(".maps");

/* The tracked tasks' records, by slot; an array, so that user space can
 * still read a task's record after it is gone, and a lookup is inlined. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, TRACE_MAX_TASKS);
	__type(key, __u32);
	__type(value, struct trace_task);
} tasks SEC(".maps");

/* Slots taken: user space's tasks first, then one per fork. */
volatile __u32 slots_used;

#define NOT_OURS 0xffffffffu

/* The task's slot, or NOT_OURS. */
static __always_inline __u32 slot_of(struct task_struct *p)
{
	__u32 *slot = bpf_task_storage_get(&task_slot, p, 0, 0);

	return slot ? *slot : NOT_OURS;
}

static __always_inline struct trace_task *task_at(__u32 slot)
{
	return slot != NOT_OURS ? bpf_map_lookup_elem(&tasks, &slot) : 0;
}

static __always_inline struct trace_task *task_of(struct task_struct *p)
{
	return task_at(slot_of(p));
}

/* A per-CPU array: each CPU adds to its own copy, user space sums them. */
#define PERCPU_ARRAY(name, entries, value_type) \
	struct { \
		__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY); \
		__uint(max_entries, entries); \
		__type(key, __u32); \
		__type(value, value_type); \
	} name SEC(".maps")

PERCPU_ARRAY(totals, 1, struct trace_totals);
PERCPU_ARRAY(syscalls, TRACE_SIDES * TRACE_SYSCALLS, struct trace_syscall);
/* Wake-up to run latency, per side and log2 bucket. */
PERCPU_ARRAY(wake_hist, TRACE_SIDES * TRACE_HIST, __u64);
/* The sampler's counts, per side and what the sample found (trace_shared.h). */
PERCPU_ARRAY(samples, TRACE_SIDES * TRACE_SAMPLE_SLOTS, __u64);
/* This CPU's softirq in progress: its start, 0 when none is timed. */
PERCPU_ARRAY(softirq_start, 1, __u64);

/* The task current on this CPU and its slot, set at each switch: system
 * calls and softirqs, most of the events, then find their task without
 * asking its storage. The task is compared, so that a stale entry (before
 * this CPU's first switch) only costs the storage's answer. A task given
 * its slot while on a CPU is seen from its next switch: user space gives
 * the run's tasks theirs before the release, while they wait for it. */
struct on_cpu {
	__u64 task;
	__u32 slot;
};
PERCPU_ARRAY(on_cpu, 1, struct on_cpu);

static __always_inline struct trace_task *current_task(void)
{
	struct task_struct *cur = bpf_get_current_task_btf();
	__u32 zero = 0;
	struct on_cpu *c = bpf_map_lookup_elem(&on_cpu, &zero);

	if (c && c->task == (__u64)cur)
		return task_at(c->slot);
	return task_of(cur);
}

/* The programs' own time (trace_shared.h, struct trace_prog_time): cheaper
 * than the kernel's timing of every BPF program (BPF_ENABLE_STATS, two
 * clock reads around every run of every program of the machine). Returns
 * the start of a timed run, 0 for the others. */
PERCPU_ARRAY(probes, TRACE_PROGS, struct trace_prog_time);

static __always_inline __u64 probe_begin(__u32 prog)
{
	struct trace_prog_time *p = bpf_map_lookup_elem(&probes, &prog);

	if (!p || ++p->runs % TRACE_PROBE_STRIDE)
		return 0;
	return bpf_ktime_get_ns();
}

static __always_inline int probe_end(__u32 prog, __u64 t0)
{
	struct trace_prog_time *p;

	if (t0 && (p = bpf_map_lookup_elem(&probes, &prog))) {
		p->timed++;
		p->timed_ns += bpf_ktime_get_ns() - t0;
	}
	return 0;
}

/* The part of [from, to] inside the window. */
static __always_inline __u64 in_window(__u64 from, __u64 to)
{
	__u64 on = t_on, off = t_off;

	if (!on)
		return 0;
	if (from < on)
		from = on;
	if (off && to > off)
		to = off;
	return to > from ? to - from : 0;
}

static __always_inline bool now_in_window(__u64 now)
{
	__u64 on = t_on, off = t_off;

	return on && now >= on && (!off || now < off);
}

static __always_inline struct trace_side *side_of(__u8 side)
{
	__u32 zero = 0;
	struct trace_totals *t = bpf_map_lookup_elem(&totals, &zero);

	/* The mask is for the verifier: side is 0 or 1 already. */
	return t && side < TRACE_SIDES ? &t->side[side & 1] : 0;
}

static __always_inline void add_syscall(__u8 side, __u32 nr, __u64 ns, __u64 count)
{
	__u32 key = side * TRACE_SYSCALLS + (nr < TRACE_SYSCALLS ? nr : TRACE_SYSCALL_UNKNOWN);
	struct trace_syscall *s = bpf_map_lookup_elem(&syscalls, &key);

	if (s) {
		s->ns += ns;
		s->count += count;
	}
}

/* The on-CPU time since task->seg: to the side's, and with the system call
 * programs to user space or to the call it is in. */
static __always_inline void account_cpu(struct trace_task *task, __u64 now)
{
	__u64 ns = in_window(task->seg, now);
	struct trace_side *s = side_of(task->side);

	task->seg = now;
	if (!ns || !s)
		return;
	s->cpu_ns += ns;
	if (!follow_syscalls)
		return;
	if (task->in_syscall == 0) {
		s->user_ns += ns;
	} else {
		add_syscall(task->side, task->in_syscall == 1 ? task->nr : TRACE_SYSCALL_UNKNOWN, ns, 0);
	}
}

/* floor(log2(ns)), 0 for 0, in six steps rather than a loop a bit. */
static __always_inline __u32 log2_bucket(__u64 ns)
{
	__u32 b = 0;

	for (__u32 step = 32; step; step >>= 1)
		if (ns >> step) {
			ns >>= step;
			b += step;
		}
	return b < TRACE_HIST - 1 ? b : TRACE_HIST - 1;
}

/* `now_state`: the task's state as this switch reads it. A waker may see
 * a task leave the run queue and begin its wake-up (sched_waking, which
 * finds it still running here) before this switch: the task's state is
 * then TASK_WAKING, and it goes to the run queue, woken, not to sleep. */
static __always_inline void switched_out(struct trace_task *task, __u64 now, bool preempt,
					 unsigned int prev_state, unsigned int now_state)
{
	struct trace_side *s = side_of(task->side);
	bool counted = now_in_window(now);

	account_cpu(task, now);
	task->since = now;
	task->woken = 0;
	if (preempt || prev_state == 0) {
		task->state = TRACE_RUNQ;
		if (s && counted)
			s->preempted++;
	} else if (prev_state & TASK_DEAD_STATE) {
		task->state = TRACE_DEAD;
		if (s && counted) {
			s->died++;
			s->died_ns_sum += now;
		}
	} else if (now_state == TASK_WAKING_STATE) {
		task->state = TRACE_RUNQ;
		task->woken = 1;
		if (s && counted)
			s->wakeups++;
	} else {
		task->state = TRACE_BLOCKED;
	}
	if (s && counted)
		s->switches_out++;
}

static __always_inline void switched_in(struct trace_task *task, __u64 now)
{
	struct trace_side *s = side_of(task->side);
	__u64 ns = in_window(task->since, now);

	/* Unseen until now: it waited in the run queue since before the window. */
	if (s && (task->state == TRACE_RUNQ || task->state == TRACE_UNSEEN))
		s->runq_ns += ns;
	else if (s && task->state == TRACE_BLOCKED)
		s->blocked_ns += ns;
	if (task->state == TRACE_RUNQ && task->woken && now_in_window(now)) {
		__u32 key = task->side * TRACE_HIST + log2_bucket(now - task->since);
		__u64 *n = bpf_map_lookup_elem(&wake_hist, &key);
		if (n)
			(*n)++;
		/* Woken from another CPU than the one it now runs on. */
		if (s && task->waker_cpu != bpf_get_smp_processor_id())
			s->wakeups_cross_cpu++;
	}
	task->state = TRACE_RUNNING;
	task->since = now;
	task->seg = now;
}

SEC("tp_btf/sched_switch")
int BPF_PROG(on_switch, bool preempt, struct task_struct *prev, struct task_struct *next,
	     unsigned int prev_state)
{
	__u64 t0 = probe_begin(TRACE_PROG_SWITCH);
	__u32 zero = 0, next_slot = slot_of(next);
	struct on_cpu *c = bpf_map_lookup_elem(&on_cpu, &zero);
	struct trace_task *out = c && c->task == (__u64)prev ? task_at(c->slot) : task_of(prev);
	struct trace_task *in = task_at(next_slot);
	__u64 now = 0;

	if (c) {
		c->task = (__u64)next;
		c->slot = next_slot;
	}

	/* The clock only for a switch of ours, once for both. */
	if (out) {
		now = bpf_ktime_get_ns();
		switched_out(out, now, preempt, prev_state, prev->__state);
	}
	if (in)
		switched_in(in, now ? now : bpf_ktime_get_ns());
	return probe_end(TRACE_PROG_SWITCH, t0);
}

/* Blocked until now: in the run queue from here, by the waker's CPU. */
static __always_inline void woken(struct trace_task *task)
{
	/* Still on its CPU: woken before it slept (no wait), or before its
	 * switch-out, which then sees TASK_WAKING and uses this CPU. */
	if (task->state == TRACE_RUNNING) {
		task->waker_cpu = bpf_get_smp_processor_id();
		return;
	}
	if (task->state == TRACE_RUNQ || task->state == TRACE_DEAD)
		return;
	__u64 now = bpf_ktime_get_ns();
	struct trace_side *s = side_of(task->side);
	if (s) {
		s->blocked_ns += in_window(task->since, now);
		if (now_in_window(now))
			s->wakeups++;
	}
	task->state = TRACE_RUNQ;
	task->since = now;
	task->woken = 1;
	task->waker_cpu = bpf_get_smp_processor_id();
}

/* The wake-up's start, on the waker's CPU: one program a wake-up, not
 * also one on sched_wakeup (which may run later on the target's CPU). */
SEC("tp_btf/sched_waking")
int BPF_PROG(on_waking, struct task_struct *p)
{
	__u64 t0 = probe_begin(TRACE_PROG_WAKING);
	struct trace_task *task = task_of(p);

	if (task)
		woken(task);
	return probe_end(TRACE_PROG_WAKING, t0);
}

/* No sched_waking before it: the parent that asks for it runs here. */
SEC("tp_btf/sched_wakeup_new")
int BPF_PROG(on_wakeup_new, struct task_struct *p)
{
	__u64 t0 = probe_begin(TRACE_PROG_WAKEUP_NEW);
	struct trace_task *task = task_of(p);

	if (task)
		woken(task);
	return probe_end(TRACE_PROG_WAKEUP_NEW, t0);
}

/* A task a tracked one starts (a server's per-connection process or
 * thread) is on the same side; blocked until its first wake-up. */
SEC("tp_btf/sched_process_fork")
int BPF_PROG(on_fork, struct task_struct *parent, struct task_struct *child)
{
	__u64 t0 = probe_begin(TRACE_PROG_FORK);
	struct trace_task *p = task_of(parent), *task;
	__u64 now = bpf_ktime_get_ns();

	if (!p)
		return probe_end(TRACE_PROG_FORK, t0);
	__u32 slot = __sync_fetch_and_add(&slots_used, 1);
	/* Out of slots: not followed, and reconciling says so. */
	if (!(task = bpf_map_lookup_elem(&tasks, &slot)))
		return probe_end(TRACE_PROG_FORK, t0);
	*task = (struct trace_task){
		.since = now, .seg = now, .nr = TRACE_SYSCALL_UNKNOWN, .side = p->side,
		.state = TRACE_BLOCKED, .in_syscall = 0,
	};
	if (!bpf_task_storage_get(&task_slot, child, &slot, BPF_LOCAL_STORAGE_GET_F_CREATE)) {
		task->state = TRACE_DEAD;   /* never seen: nothing to close */
		return probe_end(TRACE_PROG_FORK, t0);
	}
	if (now_in_window(now)) {
		struct trace_side *s = side_of(p->side);
		if (s) {
			s->born++;
			s->born_ns_sum += now;
		}
	}
	return probe_end(TRACE_PROG_FORK, t0);
}


SEC("tp_btf/sys_enter")
int BPF_PROG(on_sys_enter, struct pt_regs *regs, long id)
{
	__u64 t0 = probe_begin(TRACE_PROG_SYS_ENTER);
	struct trace_task *task = current_task();
	__u64 now;

	if (!task)
		return probe_end(TRACE_PROG_SYS_ENTER, t0);
	now = bpf_ktime_get_ns();
	task->in_syscall = 0;
	account_cpu(task, now);
	task->in_syscall = 1;
	task->nr = id >= 0 && id < TRACE_SYSCALLS ? (__u32)id : TRACE_SYSCALL_UNKNOWN;
	if (now_in_window(now))
		add_syscall(task->side, task->nr, 0, 1);
	return probe_end(TRACE_PROG_SYS_ENTER, t0);
}

SEC("tp_btf/sys_exit")
int BPF_PROG(on_sys_exit, struct pt_regs *regs, long ret)
{
	__u64 t0 = probe_begin(TRACE_PROG_SYS_EXIT);
	struct trace_task *task = current_task();

	if (!task)
		return probe_end(TRACE_PROG_SYS_EXIT, t0);
	/* Whatever was seen before, the time since seg was this call's.
	 * regs is a BTF pointer here: read directly, not through a helper. */
#ifdef __TARGET_ARCH_x86
	long nr = regs->orig_ax;
#else
	long nr = task->in_syscall == 1 ? (long)task->nr : TRACE_SYSCALL_UNKNOWN;
#endif
	task->nr = nr >= 0 && nr < TRACE_SYSCALLS ? (__u32)nr : TRACE_SYSCALL_UNKNOWN;
	task->in_syscall = 1;
	account_cpu(task, bpf_ktime_get_ns());
	task->in_syscall = 0;
	return probe_end(TRACE_PROG_SYS_EXIT, t0);
}

SEC("tp_btf/softirq_entry")
int BPF_PROG(on_softirq_entry, unsigned int vec)
{
	__u64 t0 = probe_begin(TRACE_PROG_SOFTIRQ_ENTRY);
	__u32 zero = 0;
	__u64 *start = bpf_map_lookup_elem(&softirq_start, &zero);

	if (start)
		*start = t_on ? bpf_ktime_get_ns() : 0;
	return probe_end(TRACE_PROG_SOFTIRQ_ENTRY, t0);
}

SEC("tp_btf/softirq_exit")
int BPF_PROG(on_softirq_exit, unsigned int vec)
{
	__u64 t0 = probe_begin(TRACE_PROG_SOFTIRQ_EXIT);
	__u32 zero = 0;
	__u64 *start = bpf_map_lookup_elem(&softirq_start, &zero);
	struct trace_totals *t = bpf_map_lookup_elem(&totals, &zero);

	if (!start || !t || !*start)
		return probe_end(TRACE_PROG_SOFTIRQ_EXIT, t0);
	__u64 ns = in_window(*start, bpf_ktime_get_ns());
	*start = 0;
	if (!ns)
		return probe_end(TRACE_PROG_SOFTIRQ_EXIT, t0);
	t->softirq_ns[vec == NET_RX_VEC ? TRACE_NET_RX : vec == NET_TX_VEC ? TRACE_NET_TX :
		      TRACE_SOFTIRQ_OTHER] += ns;
	struct trace_task *task = current_task();
	if (!task || task->side >= TRACE_SIDES)
		return probe_end(TRACE_PROG_SOFTIRQ_EXIT, t0);
	t->side[task->side & 1].softirq_ns += ns;
	/* Given apart, so not also in the user or system call time of the
	 * task it interrupted: that segment now starts after it. */
	__u64 on = t_on;
	task->seg = (task->seg > on ? task->seg : on) + ns;
	return probe_end(TRACE_PROG_SOFTIRQ_EXIT, t0);
}

/* The user mode of the registers a sample interrupted. */
static __always_inline bool from_user(struct bpf_perf_event_data *ctx)
{
#if defined(__TARGET_ARCH_x86)
	/* The context is read a whole word at a time; cs is the low 16 bits. */
	__u64 cs = *(__u64 *)((char *)&ctx->regs + __builtin_offsetof(struct pt_regs, cs));

	return (cs & 3) != 0;
#elif defined(__TARGET_ARCH_arm64)
	return (ctx->regs.pstate & 0xf) == 0;
#else
	return false;   /* not reached: on_sample counts nothing here */
#endif
}

/* The system call the task is in, from the registers its entry saved, or
 * TRACE_SYSCALL_UNKNOWN. On x86 an exception from user space (a page
 * fault) saves its error code where a system call saves its number; the
 * SYSCALL instruction's frame also has the return address in rcx and the
 * flags in r11, which tells the two apart. */
static __always_inline __u32 syscall_of(struct task_struct *cur)
{
#if defined(__TARGET_ARCH_x86)
	struct pt_regs *regs = (struct pt_regs *)bpf_task_pt_regs(cur);

	if (regs && regs->cx == regs->ip && regs->r11 == regs->flags &&
	    regs->orig_ax >= 0 && regs->orig_ax < TRACE_SYSCALL_UNKNOWN)
		return (__u32)regs->orig_ax;
#endif
	return TRACE_SYSCALL_UNKNOWN;
}

/* A sample of each CPU, TRACE_SAMPLE_HZ a second: where a task of the
 * run's was, outside softirqs (timed apart). */
SEC("perf_event")
int on_sample(struct bpf_perf_event_data *ctx)
{
	__u64 t0 = probe_begin(TRACE_PROG_SAMPLE);
	__u32 zero = 0;
	__u64 *softirq = bpf_map_lookup_elem(&softirq_start, &zero);
	struct trace_task *task = current_task();

#if !defined(__TARGET_ARCH_x86) && !defined(__TARGET_ARCH_arm64)
	task = 0;   /* user mode not told apart here: no samples, no split */
#endif
	if (!task || (softirq && *softirq) || !now_in_window(bpf_ktime_get_ns()))
		return probe_end(TRACE_PROG_SAMPLE, t0);
	__u32 what = from_user(ctx) ? TRACE_SAMPLE_USER : syscall_of(bpf_get_current_task_btf());
	__u32 key = (task->side & 1) * TRACE_SAMPLE_SLOTS + what;
	__u64 *n = bpf_map_lookup_elem(&samples, &key);
	if (n)
		(*n)++;
	return probe_end(TRACE_PROG_SAMPLE, t0);
}
