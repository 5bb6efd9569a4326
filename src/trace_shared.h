/* What the BPF side of --trace (trace.bpf.c) and its user side (trace.c)
 * share: the tracked task's record and the per-CPU totals. Plain __u64
 * fields: the BPF side takes the types from vmlinux.h, the user side from
 * <linux/types.h>. */
#ifndef TBENCH_TRACE_SHARED_H
#define TBENCH_TRACE_SHARED_H

#define TRACE_SIDES 2            /* clients, servers */
#define TRACE_SIDE_CLIENT 0
#define TRACE_SIDE_SERVER 1
#define TRACE_SYSCALLS 512       /* numbers below this; the last slot: not known */
#define TRACE_SYSCALL_UNKNOWN (TRACE_SYSCALLS - 1)
#define TRACE_HIST 40            /* log2 buckets of ns: bucket b holds [2^b, 2^(b+1)) */
#define TRACE_MAX_TASKS 65536

/* Where a tracked task is: the state's time runs from `since`. */
enum trace_state {
	TRACE_UNSEEN,            /* no event yet: the first one says what it was */
	TRACE_RUNNING,
	TRACE_RUNQ,              /* runnable, waiting for a CPU */
	TRACE_BLOCKED,
	TRACE_DEAD,
};

enum trace_softirq { TRACE_NET_RX, TRACE_NET_TX, TRACE_SOFTIRQ_OTHER, TRACE_SOFTIRQ_N };

/* 128 bytes apart: two CPUs updating two tasks' records must not share a
 * cache line, nor the pair of lines the CPU fetches together. */
struct trace_task {
	__u64 since;             /* the state's start */
	__u64 seg;               /* on CPU: the start of the part not yet accounted */
	__u32 nr;                /* the system call it is in, or TRACE_SYSCALL_UNKNOWN */
	__u32 waker_cpu;         /* the CPU its last wake-up was asked from */
	__u8 side, state;
	__u8 in_syscall;         /* 0 user space, 1 in a system call, 2 not known yet */
	__u8 woken;              /* in the run queue by a wake-up, not a preemption */
} __attribute__((aligned(128)));

struct trace_side {
	__u64 cpu_ns;            /* on CPU, softirqs apart */
	__u64 user_ns;           /* on CPU outside system calls (--trace-syscalls) */
	__u64 runq_ns, blocked_ns;
	__u64 switches_out, preempted;
	__u64 wakeups, wakeups_cross_cpu;
	/* Softirqs run while a task of this side was current; not also in
	 * its user or system call time. */
	__u64 softirq_ns;
	__u64 born, born_ns_sum; /* tasks started in the window, and when */
	__u64 died, died_ns_sum; /* tasks ended in the window, and when */
};

struct trace_totals {
	struct trace_side side[TRACE_SIDES];
	__u64 softirq_ns[TRACE_SOFTIRQ_N];   /* on every CPU */
};

struct trace_syscall {
	__u64 ns, count;
};

/* Without --trace-syscalls the split of cpu_ns into user space and each
 * system call is sampled: TRACE_SAMPLE_HZ a second on every CPU, a sample
 * of a run's task outside softirqs counts in samples[side][slot]: the
 * system call's number, TRACE_SYSCALL_UNKNOWN for the kernel outside one
 * (a page fault), TRACE_SAMPLE_USER for user space. */
#define TRACE_SAMPLE_HZ 997      /* a prime: no beat with the tick or a loop */
#define TRACE_SAMPLE_USER TRACE_SYSCALLS
#define TRACE_SAMPLE_SLOTS (TRACE_SYSCALLS + 1)

/* The programs' own time, per program and CPU: every run counted, one in
 * TRACE_PROBE_STRIDE timed (a prime, so that no short cycle of events is
 * always or never the one timed). */
#define TRACE_PROBE_STRIDE 17
enum trace_prog {
	TRACE_PROG_SWITCH, TRACE_PROG_WAKING, TRACE_PROG_WAKEUP_NEW, TRACE_PROG_FORK,
	TRACE_PROG_SYS_ENTER, TRACE_PROG_SYS_EXIT, TRACE_PROG_SOFTIRQ_ENTRY,
	TRACE_PROG_SOFTIRQ_EXIT, TRACE_PROG_SAMPLE, TRACE_PROGS
};

struct trace_prog_time {
	__u64 runs;              /* every run */
	__u64 timed, timed_ns;   /* the runs timed, and their time */
};

#endif
