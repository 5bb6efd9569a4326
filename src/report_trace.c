/* --trace's block, after the Throughput line (and --cost's): where the
 * run's tasks spent the execute phase, per operation, and whether that
 * adds up to the phase's time. */
#include "config.h"
#include "report.h"
#include "report_figures.h"
#include "syscall_name.h"

#include <math.h>
#include <stdio.h>

/* A time in ns with its unit, for the histogram's bounds. */
static const char *ns_text(double ns, char *buf, size_t size)
{
	if (ns < 1e3)
		snprintf(buf, size, "%.0f ns", ns);
	else if (ns < 1e6)
		snprintf(buf, size, "%.0f us", ns / 1e3);
	else
		snprintf(buf, size, "%.0f ms", ns / 1e6);
	return buf;
}

/* The calls that took most time; their counts with --trace-syscalls,
 * else their time from the samples. */
static void trace_syscalls(FILE *f, const struct run_result *res, int side)
{
	unsigned nr[TRACE_TOP_SYSCALLS];
	unsigned n = trace_top_syscalls(&res->trace, side, nr, TRACE_TOP_SYSCALLS);
	bool counted = res->trace.syscalls_followed;
	char buf[32];

	fprintf(f, "             system calls (%s):", counted ? "count, us" : "us, sampled");
	for (unsigned i = 0; i < n; i++) {
		const struct trace_syscall *s = &res->trace.syscall[side][nr[i]];
		const char *name = nr[i] == TRACE_SYSCALL_UNKNOWN ? "outside calls"
			: syscall_name(nr[i], buf, sizeof(buf));
		if (counted)
			fprintf(f, "%s %s %.2f %.2f", i ? "," : "", name, per_op(res, (double)s->count),
				per_op(res, s->ns / 1e3));
		else
			fprintf(f, "%s %s %.2f", i ? "," : "", name, per_op(res, s->ns / 1e3));
	}
	fprintf(f, "%s\n", n ? "" : " none");
}

static void trace_wake_latency(FILE *f, const __u64 hist[TRACE_HIST])
{
	char a[16], b[16], c[16];

	if (trace_hist_quantile(hist, 1) == 0) {
		fprintf(f, "             wake-up to run: no wake-ups\n");
		return;
	}
	fprintf(f, "             wake-up to run: 50%% within %s, 90%% within %s, 99%% within %s\n",
		ns_text(trace_hist_quantile(hist, 0.5), a, sizeof(a)),
		ns_text(trace_hist_quantile(hist, 0.9), b, sizeof(b)),
		ns_text(trace_hist_quantile(hist, 0.99), c, sizeof(c)));
}

static void trace_side(FILE *f, const struct run_result *res, int side)
{
	struct trace_side_figures s;

	trace_side_of(res, side, &s);
	if (res->trace.tasks[side] == 0 && res->trace.totals.side[side].born == 0) {
		fprintf(f, "  %-7s  not traced: no task of this run's (an external tbench_srv, or a "
			"backend without one)\n", side == TRACE_SIDE_CLIENT ? "clients" : "servers");
		return;
	}
	fprintf(f, "  %-7s  %u tasks  on-CPU %.2f us (user %.2f, system calls %.2f, softirq %.2f)  "
		"run queue %.2f us  blocked %.2f us\n", side == TRACE_SIDE_CLIENT ? "clients" : "servers",
		res->trace.tasks[side], s.on_cpu_us, s.user_us, s.syscall_us, s.softirq_us, s.runq_us,
		s.blocked_us);
	fprintf(f, "             wake-ups %.3f (%.3f across CPUs)  switches %.3f (preempted %.3f)\n",
		s.wakeups, s.cross_cpu, s.switches, s.preempted);
	if (!res->trace.syscalls_followed && s.samples > 0)
		fprintf(f, "             user and system calls split by %.0f samples "
			"(--trace-syscalls: counted and timed)\n", s.samples);
	else if (!res->trace.syscalls_followed)
		fprintf(f, "             user and system calls not split: no samples (too short a "
			"run, or an architecture the sampler does not read)\n");
	trace_syscalls(f, res, side);
	trace_wake_latency(f, res->trace.wake_hist[side]);
}

void report_trace(FILE *f, const struct run_config *cfg, const struct run_result *res)
{
	const struct trace_result *t = &res->trace;

	(void)cfg;
	if (!trace_known(res)) {
		fprintf(f, "Trace: nothing traced\n");
		return;
	}
	fprintf(f, "\nTrace of the execute phase (BPF, %.2f s; per operation, %llu operations):\n",
		t->wall_s, (unsigned long long)res->ops);
	for (int side = 0; side < TRACE_SIDES; side++)
		trace_side(f, res, side);
	fprintf(f, "  softirq  NET_RX %.2f us  NET_TX %.2f us  other %.2f us  (every CPU)\n",
		per_op(res, t->totals.softirq_ns[TRACE_NET_RX] / 1e3),
		per_op(res, t->totals.softirq_ns[TRACE_NET_TX] / 1e3),
		per_op(res, t->totals.softirq_ns[TRACE_SOFTIRQ_OTHER] / 1e3));
	double ratio = trace_reconciled(res);
	fprintf(f, "  reconciled  on-CPU + run queue + blocked = %.1f%% of the phase's time x its "
		"%u tasks: %s %.0f%%\n", ratio * 100, t->tasks[0] + t->tasks[1],
		fabs(ratio - 1) <= TRACE_TOLERANCE ? "within" : "NOT within", TRACE_TOLERANCE * 100);
	if (t->probe_known)
		fprintf(f, "  probes   the BPF programs ran %.2f us per operation, in the run's tasks "
			"and its softirqs: the run is slower by that and more\n",
			per_op(res, t->probe_ns / 1e3));
	fflush(f);
}
