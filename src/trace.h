/* --trace: what the run's own tasks (clients and servers, processes or
 * threads) did in the kernel's eyes over the execute phase, from BPF
 * programs on the scheduler's and the softirqs' tracepoints and a
 * sampler on every CPU (--trace-syscalls: and on every system call):
 * on-CPU time (user space, and each system call), run-queue and blocked
 * time, wake-ups, softirq time. Added up in the kernel, read once at the
 * end: the hot loop does nothing for it. Needs root (or CAP_BPF and
 * CAP_PERFMON) and a build with libbpf (configure says). */
#ifndef TBENCH_TRACE_H
#define TBENCH_TRACE_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <linux/types.h>

#include "trace_shared.h"
#include "util.h"

/* The sum over every CPU, and the run's tasks counted. */
struct trace_result {
	bool known;                          /* traced over a whole execute phase */
	double wall_s;                       /* from on to off */
	uint64_t on_ns, off_ns;              /* CLOCK_MONOTONIC */
	unsigned tasks[TRACE_SIDES];         /* tracked when the execute phase began */
	bool syscalls_followed;              /* --trace-syscalls: counted, and timed exactly */
	struct trace_totals totals;
	/* Without --trace-syscalls, user_ns and each call's ns are cpu_ns split
	 * by the samples, and count is 0: not known. */
	struct trace_syscall syscall[TRACE_SIDES][TRACE_SYSCALLS];
	__u64 samples[TRACE_SIDES][TRACE_SAMPLE_SLOTS];
	__u64 wake_hist[TRACE_SIDES][TRACE_HIST];
	bool probe_known;                    /* the programs' own time was sampled */
	double probe_ns;                     /* the BPF programs' run time in the phase */
};

struct trace_bpf;

struct bpf_link;

struct trace {
	struct trace_bpf *skel;
	struct bpf_link **samplers;          /* one a CPU, or NULL where offline */
	int ncpus;
	bool syscalls;                       /* --trace-syscalls */
	uint64_t on_ns, off_ns;              /* CLOCK_MONOTONIC */
	struct trace_prog_time probe_on[TRACE_PROGS], probe_off[TRACE_PROGS];   /* summed over CPUs */
	bool probe_read;                     /* both read */
	unsigned tasks[TRACE_SIDES];
	bool on, off;
};

/* Whether this process may load and attach the BPF programs: root, or
 * CAP_BPF and CAP_PERFMON. 0, or -1 with what to do in err. */
int trace_check_privilege(struct errbuf *err);
/* Loads and attaches the programs, which count nothing until trace_on();
 * with `syscalls`, those on every system call too. 0, or -1 with why in
 * err (built without libbpf, BPF refused). */
int trace_open(struct trace *t, bool syscalls, struct errbuf *err);
/* Follows the run's tasks: those of client_tids are clients, every other
 * task of this process and its descendants a server (proc_run_tasks), and
 * any task these start later takes its parent's side. Before the release:
 * the warm-up then shows each task's state before the counting starts. */
int trace_track(struct trace *t, const pid_t *client_tids, unsigned n, pid_t driver_tid,
		struct errbuf *err);
/* The execute phase begins, and ends. */
void trace_on(struct trace *t);
void trace_off(struct trace *t);
/* Once the run's tasks are gone: the totals, each task's time still open
 * at trace_off() closed there. */
int trace_collect(struct trace *t, struct trace_result *r, struct errbuf *err);
void trace_close(struct trace *t);

#endif
