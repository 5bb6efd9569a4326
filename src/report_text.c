/* Output in dbench 4.0's tbench format, so that mmtests' and LKP's parsers
 * keep working, plus a p99 column; --cost's blocks and the notes for
 * standard error. The --json document is report_json.c's. */
#include "config.h"
#include "report.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report_figures.h"
#include "version.h"

static int first_write_errno;

/* Flushes f and keeps the reason of the first failure, for the end. */
static void flush(FILE *f)
{
	if (fflush(f) != 0 && !first_write_errno)
		first_write_errno = errno ? errno : EIO;
}

int report_write_error(FILE *f)
{
	flush(f);
	return first_write_errno ? first_write_errno : ferror(f) ? EIO : 0;
}

static const char *on_off(int v)
{
	return v < 0 ? "?" : v ? "on" : "off";
}

void report_header(FILE *f, const struct run_config *cfg, const struct report_options *ro)
{
	const struct netns_state *n = ro->netns;

	fprintf(f, "%s\n\n", version_line("tbench"));
	if (cfg->run_once && cfg->timelimit == 0)   /* no time limit: one pass of the loadfile */
		fprintf(f, "Running for one pass with load '%s' and minimum warmup %g secs\n",
			cfg->lf->path, cfg->warmup);
	else
		fprintf(f, "Running for %g seconds with load '%s' and minimum warmup %g secs\n",
			cfg->timelimit, cfg->lf->path, cfg->warmup);
	if (n && n->entered)
		fprintf(f, "(in a network namespace of its own%s: %s TSO %s, GSO %s, GRO %s)\n",
			n->user_ns ? " and a user namespace" : "", n->device, on_off(n->tso),
			on_off(n->gso), on_off(n->gro));
	for (unsigned i = 0; n && i < n->nsysctl; i++)
		fprintf(f, "(in its namespace, sysctl %s = %s, read back)\n", n->sysctl[i].name,
			n->sysctl[i].read);
	if (cfg->inject_ns)
		fprintf(f, "(calibration: %llu ns spun by each client after every exchange)\n",
			(unsigned long long)cfg->inject_ns);
	flush(f);
}

/* --- the lines while the run goes ------------------------------------- */

/* A set-up, progress or cleanup line: none with -q. Flushed, so that a
 * harness reading the pipe sees each as it comes. */
__attribute__((format(printf, 2, 3)))
static void live_line(void *ctx, const char *fmt, ...)
{
	struct report_live *l = ctx;
	va_list ap;

	if (l->quiet)
		return;
	va_start(ap, fmt);
	vfprintf(l->out, fmt, ap);
	va_end(ap);
	flush(l->out);
}

static void live_prepared(void *ctx, unsigned ready, unsigned total, double secs)
{
	live_line(ctx, "%u of %u processes prepared for launch %3.0f sec\n", ready, total, secs);
}

static void live_waiting(void *ctx, double secs, double start_at)
{
	live_line(ctx, "waiting %.1f sec for --start-at %.3f\n", secs, start_at);
}

static void live_released(void *ctx)
{
	live_line(ctx, "releasing clients\n");
}

static void live_progress(void *ctx, const struct run_progress *p)
{
	struct report_live *l = ctx;

	live_line(ctx, "%4u  %8llu  %7.2f MB/sec  %s %3u sec  latency %.03f ms\n", p->clients,
		  p->lines_per_client, p->mb_per_sec, p->phase == PHASE_EXECUTE ? "execute" : "warmup",
		  p->sec, p->latency_ms);
	/* Not in dbench's lines, which harnesses parse: on a terminal's stderr
	 * alone, once a minute of a run of two minutes or more. */
	if (!l->quiet && l->err_is_tty && p->phase == PHASE_EXECUTE && l->timelimit >= 120 &&
	    p->sec > 0 && p->sec % 60 == 0 && p->sec < l->timelimit) {
		unsigned left = (unsigned)(l->timelimit - p->sec + 0.5);
		fprintf(l->err, "tbench: %u min %02u s of the execute phase left\n", left / 60, left % 60);
	}
}

static void live_cleanup(void *ctx, unsigned left, double secs)
{
	live_line(ctx, "%4u  cleanup %3.0f sec\n", left, secs);
}

/* Not flushed here: every client's records come in a row at the end, and
 * the main flushes out once the run is over. */
static void live_passes(void *ctx, unsigned client, const struct pass_time *p, uint64_t shown,
			uint64_t total)
{
	struct report_live *l = ctx;

	for (uint64_t k = 0; k < shown; k++)
		fprintf(l->out, "%4u completed in %u ms at time %u ms\n", client, p[k].took_ms,
			p[k].at_ms);
	if (total > shown)   /* a note, not one of the lines mmtests reads */
		fprintf(l->err, "tbench: --show-execute-time: client %u: %llu more passes not shown "
			"(the first %llu are)\n", client, (unsigned long long)(total - shown),
			(unsigned long long)shown);
}

static void live_warning(void *ctx, const char *msg)
{
	struct report_live *l = ctx;

	fprintf(l->err, "tbench: %s\n", msg);
}

struct run_observer report_live_observer(struct report_live *live)
{
	return (struct run_observer){
		.ctx = live, .prepared = live_prepared, .waiting = live_waiting,
		.released = live_released, .progress = live_progress, .cleanup = live_cleanup,
		.passes = live_passes, .warning = live_warning,
	};
}

/* The loadfile's keywords in the width of mmtests' dbench, p99 last. */
static void op_table(FILE *f, const struct histogram op[OP_COUNT], const struct histogram all[OP_COUNT])
{
	fprintf(f, " Operation                Count    AvgLat    MaxLat    P99Lat\n");
	fprintf(f, " ------------------------------------------------------------\n");
	for (int i = 0; i < OP_COUNT; i++) {
		const struct histogram *h = &op[i];
		if (all[i].count == 0 || i == OP_SLEEP)
			continue;
		fprintf(f, " %-22s %7llu %9.03f %9.03f %9.03f\n", smb_keyword(i),
			(unsigned long long)h->count, hist_mean_ns(h) / 1e6, ms(h->max_ns),
			ms(hist_quantile(h, 0.99)));
	}
	fprintf(f, "\n");
}

static void prefix_warning(FILE *f, const struct run_config *cfg, const struct run_result *res)
{
	uint64_t least, sum = 0;

	if (!prefix_only(cfg, res, &least))
		return;
	for (unsigned i = 0; i < res->nclients; i++)
		sum += execute_ops(&res->clients[i]);
	size_t n_ops = cfg->lf->n_ops;
	double per_client_rate = (double)sum / res->nclients / res->execute_secs;
	fprintf(f, "tbench: warning: after the warm-up a client replayed as few as %llu of the %zu "
		"operations of %s: the figure reflects that part of the loadfile, not its mix.",
		(unsigned long long)least, n_ops, cfg->lf->path);
	if (per_client_rate > 0)
		fprintf(f, " One pass would take about %.0f s at this rate (-t).", n_ops / per_client_rate);
	fprintf(f, "\n");
}

static void per_client_results(FILE *f, const struct run_result *res)
{
	struct histogram *op = malloc(OP_COUNT * sizeof(*op));   /* a client's, whole */

	fprintf(f, "Per client results:\n");
	if (!op) {
		fprintf(f, "(not shown: out of memory)\n");
		return;
	}
	for (unsigned i = 0; i < res->nclients; i++) {
		const struct client_stats *c = &res->clients[i];
		fprintf(f, "Client %u did %llu operations and %llu bytes\n", i,
			(unsigned long long)execute_ops(c), (unsigned long long)c->bytes);
		memset(op, 0, OP_COUNT * sizeof(*op));
		for (int k = 0; k < OP_COUNT; k++)
			if (stats_op_used(c, k))
				stats_merge_op(&op[k], c, k);
		op_table(f, op, res->op);
	}
	free(op);
}

/* The figures of dbench's Throughput line after the word: MB/sec, the -s
 * and -S marks, clients, procs and max_latency. */
static void throughput_figures(FILE *f, const struct run_config *cfg,
			       const struct report_options *ro, const struct run_result *res)
{
	fprintf(f, "%g MB/sec%s%s  %u clients  %u procs  max_latency=%.03f ms\n",
		result_mb_per_sec(res), ro->sync_open ? " (sync open)" : "",
		ro->sync_dirs ? " (sync dirs)" : "", cfg->bcfg.nclients, run_procs(cfg),
		ms(res->max_latency_ns));
}

void report_summary(FILE *f, const struct run_config *cfg, const struct report_options *ro,
		    const struct run_result *res)
{
	fprintf(f, "\n");
	op_table(f, res->op, res->op);
	if (ro->per_client)
		per_client_results(f, res);
	fprintf(f, "Throughput ");
	throughput_figures(f, cfg, ro, res);
	flush(f);
}

void report_notes(FILE *f, const struct run_config *cfg, const struct report_options *ro,
		  const struct run_result *res)
{
	if (!res->executed)
		return;
	if (res->status != RUN_OK) {
		fprintf(f, "tbench: partial figures, not a result (%s after %.1f ",
			res->status == RUN_FAILED ? "failed" : "interrupted", res->execute_secs);
		if (cfg->timelimit > 0)   /* --run-once alone has no time limit */
			fprintf(f, "of %g ", cfg->timelimit);
		fprintf(f, "s): ");
		throughput_figures(f, cfg, ro, res);
	}
	prefix_warning(f, cfg, res);
	fflush(f);
}

/* --- cost and noise of the execute phase ------------------------------ */
/* A group's CPU and switches per operation, from a to b; "not measured"
 * for a group of no task of this run's (an external server, or none). */
static void cost_tasks(FILE *f, const char *name, const struct run_result *res,
		       const struct task_times *a, const struct task_times *b)
{
	if (b->tasks == 0) {
		fprintf(f, "  %s  not measured: no task of this run's "
			"(an external tbench_srv, or a backend without one)\n", name);
		return;
	}
	double user_s, sys_s;
	task_times_delta(a, b, cost_split_raw(&res->cost), &user_s, &sys_s);
	fprintf(f, "  %s  CPU %8.2f us (user %.2f, system %.2f)  switches %.3f (involuntary %.3f)\n",
		name, per_op(res, (user_s + sys_s) * 1e6), per_op(res, user_s * 1e6), per_op(res, sys_s * 1e6),
		per_op(res, (double)(b->vol_cs - a->vol_cs + b->invol_cs - a->invol_cs)),
		per_op(res, (double)(b->invol_cs - a->invol_cs)));
}

/* --cost: one short block after the Throughput line. */
void report_cost(FILE *f, const struct run_config *cfg, const struct report_options *ro,
		 const struct run_result *res)
{
	const struct cost *c = &res->cost;

	if (!cost_known(res)) {
		fprintf(f, "Cost per operation: nothing measured\n");
		return;
	}
	fprintf(f, "\nCost per operation (%llu operations of the execute phase):\n",
		(unsigned long long)res->ops);
	cost_tasks(f, "clients", res, &c->start.clients, &c->end.clients);
	cost_tasks(f, "servers", res, &c->start.servers, &c->end.servers);
	cost_tasks(f, "harness", res, &c->start.harness, &c->end.harness);
	fprintf(f, "  kernel  ");
	for (int i = 0; i < PERF_N; i++) {
		if (cost_perf_source(c, i))
			fprintf(f, " %s %.3f", cost_perf_name[i],
				per_op(res, (double)perf_delta(c, i) / (i == PERF_TASK_CLOCK ? 1e3 : 1)));
		else
			fprintf(f, " %s n/a", cost_perf_name[i]);
	}
	fprintf(f, "  (%s)\n", c->perf_fd[PERF_TASK_CLOCK] >= 0 ? "perf_event_open" :
		"from /proc; --perf: perf_event_open");
	double segs = net_known(c, NET_SEGS_OUT) ? net_delta(c, NET_SEGS_OUT) : 0;
	if (!(cfg->backend->flags & BACKEND_TCP))
		fprintf(f, "  network  none: backend %s sends no TCP segments\n", cfg->backend->name);
	else
		fprintf(f, "  network  segments out %.3f in %.3f  payload bytes/segment %.0f  retransmits %.4f  "
		"delayed ACKs %.4f  %s packets %.3f%s\n",
		per_op(res, segs), per_op(res, net_delta(c, NET_SEGS_IN)), segs > 0 ? res->wire_bytes / segs : 0,
		per_op(res, net_delta(c, NET_RETRANS)), per_op(res, net_delta(c, NET_DELAYED_ACKS)), c->dev,
		per_op(res, net_delta(c, NET_DEV_TX_PACKETS)),
		ro->netns && ro->netns->entered ? "" :
		"  (shared namespace: other traffic counts too; --netns for a private one)");
	if (cfg->backend->counters && cfg->backend->counter_names) {
		fprintf(f, "  backend ");
		for (int i = 0; i < BACKEND_COUNTERS && cfg->backend->counter_names[i]; i++)
			fprintf(f, " %s %llu", cfg->backend->counter_names[i],
				(unsigned long long)res->backend[i]);
		fprintf(f, "  (%s's own counts: whole run, every client)\n", cfg->backend->name);
	}
	/* Each reason once, with every counter it applies to. */
	for (int i = 0; i < PERF_N; i++) {
		bool first = true;
		if (cost_perf_source(c, i) || !c->perf_why[i][0])
			continue;
		for (int k = 0; k < i && first; k++)
			first = cost_perf_source(c, k) || strcmp(c->perf_why[k], c->perf_why[i]) != 0;
		if (!first)
			continue;
		fprintf(f, "  %s", cost_perf_name[i]);
		for (int k = i + 1; k < PERF_N; k++)
			if (!cost_perf_source(c, k) && strcmp(c->perf_why[k], c->perf_why[i]) == 0)
				fprintf(f, ", %s", cost_perf_name[k]);
		fprintf(f, ": %s\n", c->perf_why[i]);
	}
	flush(f);
}

/* --cost: the noise block, after the cost block. */
void report_noise(FILE *f, const struct run_config *cfg, const struct run_result *res)
{
	struct noise_figures n;

	noise_of(cfg, res, &n);
	if (!n.known) {
		fprintf(f, "Noise: nothing measured\n");
		return;
	}
	fprintf(f, "\nNoise of the execute phase (%.2f s, %u CPUs online):\n", n.wall_s, n.cpus);
	if (n.sys_known)
		fprintf(f, "  steal %.1f%%  other tasks' CPU %.1f%%  runnable outside the run %.1f",
			n.steal_pct, n.other_cpu_pct, n.outside_runnable);
	else
		fprintf(f, "  steal, other tasks' CPU, runnable tasks: /proc/stat not readable");
	fprintf(f, "  load average %.2f -> %.2f\n", n.loadavg_start, n.loadavg_end);
	fprintf(f, "  migrations %llu  ", (unsigned long long)n.migrations);
	if (n.freq_cpus)
		fprintf(f, "CPU frequency %.0f -> %.0f MHz (%u of %u CPUs changed)", n.freq_start_mhz,
			n.freq_end_mhz, n.freq_changed_cpus, n.freq_cpus);
	else
		fprintf(f, "CPU frequency not exposed");
	fprintf(f, "  longest stall %.2f s", n.longest_stall_s);
	if (isfinite(n.overrun_s))
		fprintf(f, "  overrun %.2f s", n.overrun_s);
	char why[600];
	noise_describe(&n, why, sizeof(why));
	fprintf(f, "\n  %s%s\n", n.reasons ? "disturbed: " : "not disturbed (man tbench, NOISE)",
		why);
	flush(f);
}

/* A disturbed run says so, whatever else was asked. */
void report_disturbed(FILE *f, const struct run_config *cfg, const struct run_result *res)
{
	struct noise_figures n;
	char why[600];

	noise_of(cfg, res, &n);
	if (!n.reasons)
		return;
	noise_describe(&n, why, sizeof(why));
	fprintf(f, "tbench: note: run disturbed, its figures are unsure: %s (man tbench, NOISE)\n", why);
}
