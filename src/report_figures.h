/* The figures both reports derive from a run, the dbench text output
 * (report_text.c) and the --json document (report_json.c), computed in
 * one place so that the two cannot disagree. Private to them. */
#ifndef TBENCH_REPORT_FIGURES_H
#define TBENCH_REPORT_FIGURES_H

#include <stdbool.h>
#include <stdint.h>

#include "run.h"
#include "syscall_name.h"

static inline double ms(uint64_t ns)
{
	return ns / 1e6;
}

/* dbench's figure: the execute phase's payload over its time; 0 without one. */
static inline double result_mb_per_sec(const struct run_result *res)
{
	return res->execute_secs > 0 ? 1e-6 * res->bytes / res->execute_secs : 0;
}

static inline uint64_t execute_ops(const struct client_stats *c)
{
	uint64_t n = 0;

	for (int i = 0; i < OP_COUNT; i++)
		if (stats_op_used(c, i))
			n += c->lat[i].count;
	return n;
}

/* Whether a client replayed less than one pass of the loadfile in the
 * execute phase (with many clients, or a short run): the figure then
 * reflects the loadfile's first part, not its mix. *least: the fewest. */
static inline bool prefix_only(const struct run_config *cfg, const struct run_result *res,
			       uint64_t *least)
{
	*least = UINT64_MAX;
	for (unsigned i = 0; i < res->nclients; i++) {
		uint64_t n = execute_ops(&res->clients[i]);
		if (n < *least)
			*least = n;
	}
	return res->nclients && *least < cfg->lf->n_ops && res->execute_secs > 0 && !cfg->run_once;
}

/* --- cost per operation ------------------------------------------------ */

static inline double per_op(const struct run_result *res, double v)
{
	return res->ops ? v / (double)res->ops : 0;
}

static inline uint64_t perf_delta(const struct cost *c, int i)
{
	return c->end.perf[i] - c->start.perf[i];
}

static inline bool net_known(const struct cost *c, int i)
{
	return c->start.net_ok[i] && c->end.net_ok[i];
}

static inline double net_delta(const struct cost *c, int i)
{
	return (double)(c->end.net[i] - c->start.net[i]);
}

static inline bool cost_known(const struct run_result *res)
{
	return res->cost.started && res->cost.ended && res->ops > 0;
}

/* --- --trace ---------------------------------------------------------- */

/* Time accounted (on CPU, run queue, blocked) may differ from the window
 * times the tasks by this share before the trace says it does not add up. */
#define TRACE_TOLERANCE 0.05
#define TRACE_TOP_SYSCALLS 6

/* One side's figures per operation (µs, or counts). */
struct trace_side_figures {
	double user_us, syscall_us, on_cpu_us, runq_us, blocked_us;
	double wakeups, cross_cpu, preempted, switches, softirq_us;
	double accounted_s, expected_s;      /* the whole window's task time */
	double group_us[SYSCALL_GROUPS];     /* syscall_us by group of calls */
	double samples;                      /* the sampler's, in the phase */
	double sampled_user_share;           /* of them in user space; -1: none */
};

static inline void trace_side_of(const struct run_result *res, int side,
				 struct trace_side_figures *f)
{
	const struct trace_result *t = &res->trace;
	const struct trace_side *s = &t->totals.side[side];
	double sys_ns = 0, off = (double)t->off_ns;

	for (int g = 0; g < SYSCALL_GROUPS; g++)
		f->group_us[g] = 0;
	for (unsigned nr = 0; nr < TRACE_SYSCALLS; nr++) {
		sys_ns += (double)t->syscall[side][nr].ns;
		f->group_us[syscall_group(nr)] += per_op(res, t->syscall[side][nr].ns / 1e3);
	}
	f->user_us = per_op(res, s->user_ns / 1e3);
	f->syscall_us = per_op(res, sys_ns / 1e3);
	f->softirq_us = per_op(res, s->softirq_ns / 1e3);
	/* Softirqs that interrupted a task are apart from its user and system
	 * call time (trace.bpf.c), and on its CPU all the same. */
	f->on_cpu_us = per_op(res, s->cpu_ns / 1e3) + f->softirq_us;
	f->samples = 0;
	for (int k = 0; k < TRACE_SAMPLE_SLOTS; k++)
		f->samples += (double)t->samples[side][k];
	f->sampled_user_share = f->samples > 0 ? t->samples[side][TRACE_SAMPLE_USER] / f->samples : -1;
	f->runq_us = per_op(res, s->runq_ns / 1e3);
	f->blocked_us = per_op(res, s->blocked_ns / 1e3);
	f->wakeups = per_op(res, (double)s->wakeups);
	f->cross_cpu = per_op(res, (double)s->wakeups_cross_cpu);
	f->preempted = per_op(res, (double)s->preempted);
	f->switches = per_op(res, (double)s->switches_out);
	f->accounted_s = ((double)s->cpu_ns + s->softirq_ns + s->runq_ns + s->blocked_ns) / 1e9;
	/* Tasks started in the window count from their start, those ended in
	 * it up to their end. */
	f->expected_s = t->wall_s * t->tasks[side] +
		(s->born * off - (double)s->born_ns_sum - (s->died * off - (double)s->died_ns_sum)) / 1e9;
}

/* accounted / expected over both sides; 0 when nothing was expected. */
static inline double trace_reconciled(const struct run_result *res)
{
	struct trace_side_figures f;
	double accounted = 0, expected = 0;

	for (int side = 0; side < TRACE_SIDES; side++) {
		trace_side_of(res, side, &f);
		accounted += f.accounted_s;
		expected += f.expected_s;
	}
	return expected > 0 ? accounted / expected : 0;
}

static inline bool trace_known(const struct run_result *res)
{
	return res->trace.known && res->ops > 0;
}

/* The system calls of a side that took the most time, at most max: their
 * numbers into nr, how many returned. */
static inline unsigned trace_top_syscalls(const struct trace_result *t, int side, unsigned *nr,
					  unsigned max)
{
	unsigned n = 0;
	bool taken[TRACE_SYSCALLS] = { false };

	while (n < max) {
		unsigned best = TRACE_SYSCALLS;
		for (unsigned i = 0; i < TRACE_SYSCALLS; i++)
			if (!taken[i] && (t->syscall[side][i].ns || t->syscall[side][i].count) &&
			    (best == TRACE_SYSCALLS || t->syscall[side][i].ns > t->syscall[side][best].ns))
				best = i;
		if (best == TRACE_SYSCALLS)
			break;
		taken[best] = true;
		nr[n++] = best;
	}
	return n;
}

/* The upper bound (ns) of the log2 bucket that holds quantile q of a
 * wake-up latency histogram; 0 when it is empty. */
static inline double trace_hist_quantile(const __u64 hist[TRACE_HIST], double q)
{
	uint64_t total = 0, seen = 0;

	for (int b = 0; b < TRACE_HIST; b++)
		total += hist[b];
	for (int b = 0; b < TRACE_HIST && total; b++) {
		seen += hist[b];
		if ((double)seen >= q * (double)total)
			return (double)(2ull << b);
	}
	return 0;
}

/* --- noise of the execute phase ---------------------------------------- */

static inline void noise_of(const struct run_config *cfg, const struct run_result *res,
			    struct noise_figures *f)
{
	/* Only a phase that ran to its -t can overrun it. */
	bool timed = !cfg->run_once && res->status == RUN_OK;

	noise_judge(&res->noise, &res->cost, timed ? cfg->timelimit : 0, res->execute_secs, f);
}

#endif
