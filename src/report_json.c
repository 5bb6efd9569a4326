/* The --json document: the settings, the figures and the histograms of a
 * run, for the sweep scripts and other programs, written whole at the end. */
#include "config.h"
#include "report_json.h"

#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "clock.h"
#include "cpulist.h"
#include "json.h"
#include "report_figures.h"
#include "schema.h"
#include "syscall_name.h"
#include "version.h"

static void json_str(FILE *f, const char *s)
{
	json_write_string(f, s);
}

/* The clock the timestamps came from; with the TSC, how far its time had
 * drifted from CLOCK_MONOTONIC since the calibration (checked now, as the
 * run has just ended). */
static void json_clock(FILE *f)
{
	struct clock_check c;

	clock_check(&c);
	fprintf(f, "    " SKEY(SK_CLOCK) "{ " SKEY(SK_SOURCE) "\"%s\", " SKEY(SK_WHY),
		clock_source_name(c.source));
	json_str(f, c.why);
	if (c.source == CLOCK_SOURCE_TSC)
		fprintf(f, ", " SKEY(SK_CALIBRATION_ERROR_PPM) "%.3f, " SKEY(SK_CHECKED_AFTER_S)
			"%.3f },\n", c.error_ppm, c.elapsed_s);
	else
		fprintf(f, ", " SKEY(SK_CALIBRATION_ERROR_PPM) "null, " SKEY(SK_CHECKED_AFTER_S)
			"null },\n");
}

/* The backends' own settings, each described by its backend: recorded
 * for every backend built, whichever ran, so the keys do not depend on -b. */
static void json_backend_settings(FILE *f, const struct run_config *cfg)
{
	const struct backend *const alone[] = { cfg->backend, NULL };
	const struct backend *const *all = cfg->all_backends ? cfg->all_backends : alone;

	for (size_t i = 0; all[i]; i++)
		if (all[i]->describe_json)
			all[i]->describe_json(f, all[i]->settings);
}

static const char *family_name(int family)
{
	return family == AF_INET ? "ipv4" : family == AF_INET6 ? "ipv6" : family == AF_UNIX ? "unix"
									      : NULL;
}

static void json_str_or_null(FILE *f, const char *s)
{
	if (s)
		json_str(f, s);
	else
		fputs("null", f);
}

/* The sweep's knobs as asked (CPU lists, start) and as they came out
 * (the address family: --family, else what client 0's socket had). */
static void json_knob_settings(FILE *f, const struct run_config *cfg, const struct run_result *res)
{
	const struct cpu_list *sc = cfg->bcfg.server_cpus;
	int family = cfg->bcfg.family ? cfg->bcfg.family : res->socket.known ? res->socket.family : 0;

	fprintf(f, "    " SKEY(SK_CPUS));
	json_str_or_null(f, cfg->cpus ? cfg->cpus->text : NULL);
	fprintf(f, ",\n    " SKEY(SK_SERVER_CPUS));
	json_str_or_null(f, sc ? sc->text : NULL);
	fprintf(f, ",\n    " SKEY(SK_FAMILY));
	json_str_or_null(f, family == AF_UNIX ? NULL : family_name(family));
	if (cfg->start_at)
		fprintf(f, ",\n    " SKEY(SK_START_AT) "%.6f,\n", cfg->start_at);
	else
		fprintf(f, ",\n    " SKEY(SK_START_AT) "null,\n");
}

static void json_settings(FILE *f, const struct run_config *cfg, const struct run_result *res,
			  int argc, const char *const *argv)
{
	fprintf(f, "  " SKEY(SK_SETTINGS) "{\n    " SKEY(SK_BACKEND));
	json_str(f, cfg->backend->name);
	fprintf(f, ",\n    " SKEY(SK_CLIENTS) "%u,\n    " SKEY(SK_MODEL) "\"%s\",\n    "
		SKEY(SK_PROCS) "%u,\n    " SKEY(SK_CLIENTS_PER_PROCESS) "%u,\n    "
		SKEY(SK_COPY_REPLIES) "%s,\n    " SKEY(SK_LOADFILE),
		cfg->bcfg.nclients, cfg->bcfg.processes ? "processes" : "threads", run_procs(cfg),
		run_per_process(cfg),
		cfg->bcfg.copy_replies ? "true" : "false");
	json_str(f, cfg->lf->path);
	fprintf(f, ",\n    " SKEY(SK_LOADFILE_OPS) "%zu,\n    " SKEY(SK_LOADFILE_PASS_BYTES)
		"%llu,\n",
		cfg->lf->n_ops, (unsigned long long)cfg->lf->pass_payload);
	fprintf(f, "    " SKEY(SK_TIMELIMIT_S) "%g,\n    " SKEY(SK_WARMUP_S) "%g,\n    "
		SKEY(SK_TARGET_RATE_MB_S) "%g,\n    " SKEY(SK_TIMEOUT_S) "%g,\n", cfg->timelimit,
		cfg->warmup, cfg->target_rate, cfg->timeout);
	json_backend_settings(f, cfg);
	fprintf(f, "    " SKEY(SK_PROCESSES) "%s,\n    " SKEY(SK_RUN_ONCE) "%s,\n    "
		SKEY(SK_SERVER),
		cfg->bcfg.processes ? "true" : "false", cfg->run_once ? "true" : "false");
	if (cfg->bcfg.server)
		json_str(f, cfg->bcfg.server);
	else
		fputs("null", f);
	fprintf(f, ",\n");
	json_clock(f);
	fprintf(f, "    " SKEY(SK_DRIVER_PRIORITY) "\"%s\",\n", priority_name(res->driver_priority));
	json_knob_settings(f, cfg, res);
	fprintf(f, "    " SKEY(SK_COMMAND) "[");
	for (int i = 0; i < argc; i++) {
		fputs(i ? ", " : "", f);
		json_str(f, argv[i]);
	}
	fprintf(f, "]\n  },\n");
}

/* A figure of the execute phase: null when there was none to measure. */
static void json_figure(FILE *f, const char *name, double v, bool known, const char *after)
{
	if (known)
		fprintf(f, "    \"%s\": %.6f,%s", name, v, after);
	else
		fprintf(f, "    \"%s\": null,%s", name, after);
}

static void json_result(FILE *f, const struct run_config *cfg, const struct run_result *res)
{
	uint64_t least;
	static const char *const status[] = { "ok", "failed", "interrupted" };
	double cpu = res->cpu_user + res->cpu_sys;
	bool ex = res->executed && res->execute_secs > 0;

	fprintf(f, "  " SKEY(SK_RESULT) "{\n    " SKEY(SK_STATUS) "\"%s\",\n    "
		SKEY(SK_PARTIAL) "%s,\n    " SKEY(SK_ERROR),
		status[res->status], res->status == RUN_OK ? "false" : "true");
	json_str(f, res->error.msg);
	fprintf(f, ",\n");
	json_figure(f, SK_MB_PER_SEC, result_mb_per_sec(res), ex, "\n");
	json_figure(f, SK_OPS_PER_SEC, ex ? res->ops / res->execute_secs : 0, ex, "\n");
	json_figure(f, SK_EXECUTE_S, res->execute_secs, res->executed, "\n");
	fprintf(f, "    " SKEY(SK_TOTAL_S) "%.6f,\n    " SKEY(SK_SETUP_S) "%.6f,\n", res->total_secs,
		res->setup_secs);
	fprintf(f, "    " SKEY(SK_PAYLOAD_BYTES) "%llu,\n    " SKEY(SK_PAYLOAD_BYTES_ALL_PHASES)
		"%llu,\n    " SKEY(SK_OPS) "%llu,\n",
		(unsigned long long)res->bytes, (unsigned long long)res->bytes_all,
		(unsigned long long)res->ops);
	json_figure(f, SK_MAX_LATENCY_MS, ms(res->max_latency_ns), ex, "\n");
	/* The warning of report_notes: a client replayed less than one pass. */
	fprintf(f, "    " SKEY(SK_LESS_THAN_A_PASS) "%s,\n",
		prefix_only(cfg, res, &least) ? "true" : "false");
	if (ex) {
		fprintf(f, "    " SKEY(SK_LATENCY) "{ ");
		schema_put_latency(f, &res->all);
		fprintf(f, " },\n");
	} else {
		fprintf(f, "    " SKEY(SK_LATENCY) "null,\n");
	}
	fprintf(f, "    " SKEY(SK_CPU) "{ " SKEY(SK_USER_S) "%.6f, " SKEY(SK_SYSTEM_S) "%.6f, "
		SKEY(SK_CLIENTS_USER_S) "%.6f, " SKEY(SK_CLIENTS_SYSTEM_S) "%.6f, "
		SKEY(SK_OTHERS_USER_S) "%.6f, " SKEY(SK_OTHERS_SYSTEM_S) "%.6f, "
		SKEY(SK_CPU_US_PER_MB) "%.3f }\n  },\n",
		res->cpu_user, res->cpu_sys, res->cpu_clients_user, res->cpu_clients_sys,
		res->cpu_user - res->cpu_clients_user, res->cpu_sys - res->cpu_clients_sys,
		res->bytes_all ? cpu * 1e6 / (res->bytes_all / 1e6) : 0);
}

/* A group's CPU (µs) and switches per operation; the CPU to 6 significant
 * digits, as nop's 0.1 µs needs for a precision of a few tenths of a
 * per cent. */
static void json_tasks(FILE *f, const char *name, const struct run_result *res,
		       const struct task_times *a, const struct task_times *b)
{
	fprintf(f, "      \"%s\": { " SKEY(SK_TASKS) "%u, " SKEY(SK_CPU_USER_US) "%.6g, "
		SKEY(SK_CPU_SYSTEM_US) "%.6g, " SKEY(SK_VOLUNTARY_SWITCHES) "%.4f, "
		SKEY(SK_INVOLUNTARY_SWITCHES) "%.4f },\n", name, b->tasks,
		per_op(res, (b->user_s - a->user_s) * 1e6), per_op(res, (b->sys_s - a->sys_s) * 1e6),
		per_op(res, (double)(b->vol_cs - a->vol_cs)), per_op(res, (double)(b->invol_cs - a->invol_cs)));
}

static void json_cost(FILE *f, const struct run_config *cfg, const struct run_result *res)
{
	const struct cost *c = &res->cost;

	if (!cost_known(res)) {
		fprintf(f, "  " SKEY(SK_COST) "null,\n");
		return;
	}
	fprintf(f, "  " SKEY(SK_COST) "{\n    " SKEY(SK_PER_OPERATION) "{\n");
	json_tasks(f, SK_CLIENTS, res, &c->start.clients, &c->end.clients);
	json_tasks(f, SK_SERVERS, res, &c->start.servers, &c->end.servers);
	for (int i = 0; i < PERF_N; i++) {
		double v = per_op(res, (double)perf_delta(c, i) / (i == PERF_TASK_CLOCK ? 1e3 : 1));
		if (cost_perf_source(c, i))
			fprintf(f, "      \"%s\": %.4f,\n", cost_perf_name[i], v);
		else
			fprintf(f, "      \"%s\": null,\n", cost_perf_name[i]);
	}
	for (int i = 0; i < NET_N; i++) {
		if (net_known(c, i))
			fprintf(f, "      \"%s\": %.4f,\n", cost_net_name[i], per_op(res, net_delta(c, i)));
		else
			fprintf(f, "      \"%s\": null,\n", cost_net_name[i]);
	}
	double segs = net_known(c, NET_SEGS_OUT) ? net_delta(c, NET_SEGS_OUT) : 0;
	if (segs > 0 && (cfg->backend->flags & BACKEND_TCP))
		fprintf(f, "      " SKEY(SK_PAYLOAD_BYTES_PER_SEGMENT) "%.1f\n    },\n",
			res->wire_bytes / segs);
	else
		fprintf(f, "      " SKEY(SK_PAYLOAD_BYTES_PER_SEGMENT) "null\n    },\n");
	fprintf(f, "    " SKEY(SK_OPERATIONS) "%llu,\n    " SKEY(SK_DEVICE),
		(unsigned long long)res->ops);
	json_str(f, c->dev);
	fprintf(f, ",\n    " SKEY(SK_COUNTED_BY) "{");
	for (int i = 0, first = 1; i < PERF_N; i++) {
		if (!cost_perf_source(c, i))
			continue;
		fprintf(f, "%s \"%s\": ", first ? "" : ",", cost_perf_name[i]);
		json_str(f, cost_perf_source(c, i));
		first = 0;
	}
	fprintf(f, " },\n    " SKEY(SK_NOT_AVAILABLE) "{");
	for (int i = 0, first = 1; i < PERF_N; i++) {
		if (!c->perf_why[i][0])
			continue;
		fprintf(f, "%s \"%s\": ", first ? "" : ",", cost_perf_name[i]);
		json_str(f, c->perf_why[i]);
		first = 0;
	}
	fprintf(f, " }\n  },\n");
}

/* The backend's own counts, for the whole run: null when it keeps none. */
static void json_backend_counters(FILE *f, const struct run_config *cfg, const struct run_result *res)
{
	const char *const *names = cfg->backend->counter_names;

	if (!cfg->backend->counters || !names) {
		fprintf(f, "  " SKEY(SK_BACKEND_COUNTERS) "null,\n");
		return;
	}
	fprintf(f, "  " SKEY(SK_BACKEND_COUNTERS) "{");
	for (int i = 0; i < BACKEND_COUNTERS && names[i]; i++)
		fprintf(f, "%s \"%s\": %llu", i ? "," : "", names[i], (unsigned long long)res->backend[i]);
	fprintf(f, " },\n");
}

static void json_num_or_null(FILE *f, const char *name, double v, const char *after)
{
	if (isfinite(v))
		fprintf(f, "\"%s\": %.4f%s", name, v, after);
	else
		fprintf(f, "\"%s\": null%s", name, after);
}

/* A side's system calls, every one seen, most time first. */
static void json_trace_syscalls(FILE *f, const struct run_result *res, int side)
{
	unsigned nr[TRACE_SYSCALLS];
	unsigned n = trace_top_syscalls(&res->trace, side, nr, TRACE_SYSCALLS);
	char buf[32];

	fprintf(f, SKEY(SK_SYSCALLS) "[");
	for (unsigned i = 0; i < n; i++) {
		const struct trace_syscall *s = &res->trace.syscall[side][nr[i]];
		fprintf(f, "%s{ " SKEY(SK_NAME), i ? ", " : "");
		json_str_or_null(f, nr[i] == TRACE_SYSCALL_UNKNOWN ? NULL : syscall_name(nr[i], buf, sizeof(buf)));
		fprintf(f, ", " SKEY(SK_NR) "%u, " SKEY(SK_COUNT) "%.4f, " SKEY(SK_US) "%.6g }",
			nr[i], per_op(res, (double)s->count), per_op(res, s->ns / 1e3));
	}
	fprintf(f, "]");
}

/* The wake-up-to-run histogram: [low_ns, high_ns, count] of its non-empty
 * log2 buckets, as the latency objects' buckets. */
static void json_trace_hist(FILE *f, const __u64 hist[TRACE_HIST])
{
	fprintf(f, SKEY(SK_WAKEUP_LATENCY) "{ " SKEY(SK_BUCKETS) "[");
	for (int b = 0, first = 1; b < TRACE_HIST; b++) {
		if (!hist[b])
			continue;
		fprintf(f, "%s[%llu, %llu, %llu]", first ? "" : ", ", b ? 1ull << b : 0ull, 2ull << b,
			(unsigned long long)hist[b]);
		first = 0;
	}
	fprintf(f, "] }");
}

static void json_trace_side(FILE *f, const struct run_result *res, int side)
{
	const struct trace_side *t = &res->trace.totals.side[side];
	struct trace_side_figures s;

	trace_side_of(res, side, &s);
	fprintf(f, "      \"%s\": { " SKEY(SK_TASKS) "%u, " SKEY(SK_STARTED) "%llu, " SKEY(SK_ENDED) "%llu, "
		SKEY(SK_ON_CPU_US) "%.6g, " SKEY(SK_USER_US) "%.6g, " SKEY(SK_SYSCALL_US) "%.6g, "
		SKEY(SK_RUN_QUEUE_US) "%.6g, " SKEY(SK_BLOCKED_US) "%.6g, " SKEY(SK_WAKEUPS) "%.4f, "
		SKEY(SK_WAKEUPS_CROSS_CPU) "%.4f, " SKEY(SK_SWITCHES) "%.4f, " SKEY(SK_PREEMPTED) "%.4f, "
		SKEY(SK_SOFTIRQ_US) "%.6g,\n        ",
		side == TRACE_SIDE_CLIENT ? SK_CLIENTS : SK_SERVERS, res->trace.tasks[side],
		(unsigned long long)t->born, (unsigned long long)t->died, s.on_cpu_us, s.user_us,
		s.syscall_us, s.runq_us, s.blocked_us, s.wakeups, s.cross_cpu, s.switches, s.preempted,
		s.softirq_us);
	fprintf(f, SKEY(SK_SYSCALL_GROUPS_US) "{");
	for (unsigned g = 0; g < SYSCALL_GROUPS; g++)
		fprintf(f, "%s\"%s\": %.6g", g ? ", " : " ", syscall_group_key(g), s.group_us[g]);
	fprintf(f, " },\n        ");
	json_trace_syscalls(f, res, side);
	fprintf(f, ",\n        ");
	json_trace_hist(f, res->trace.wake_hist[side]);
	fprintf(f, " },\n");
}

/* --trace's figures; null when the run was not traced. */
static void json_trace(FILE *f, const struct run_result *res)
{
	const struct trace_result *t = &res->trace;

	if (!trace_known(res)) {
		fprintf(f, "  " SKEY(SK_TRACE) "null,\n");
		return;
	}
	double ratio = trace_reconciled(res);
	fprintf(f, "  " SKEY(SK_TRACE) "{\n    " SKEY(SK_WALL_S) "%.6f,\n    " SKEY(SK_OPERATIONS)
		"%llu,\n    " SKEY(SK_RECONCILED_RATIO) "%.6f,\n    " SKEY(SK_TOLERANCE_PCT) "%g,\n    "
		SKEY(SK_RECONCILED) "%s,\n    ", t->wall_s,
		(unsigned long long)res->ops, ratio, TRACE_TOLERANCE * 100,
		fabs(ratio - 1) <= TRACE_TOLERANCE ? "true" : "false");
	/* A known bias: the run's tasks ran this and more on top of their own work. */
	if (t->probe_known)
		fprintf(f, SKEY(SK_PROBE_CPU_US) "%.6g,\n    ", per_op(res, t->probe_ns / 1e3));
	else
		fprintf(f, SKEY(SK_PROBE_CPU_US) "null,\n    ");
	fprintf(f, SKEY(SK_PER_OPERATION) "{\n");
	for (int side = 0; side < TRACE_SIDES; side++)
		json_trace_side(f, res, side);
	fprintf(f, "      " SKEY(SK_SOFTIRQ_US) "{ " SKEY(SK_NET_RX) "%.6g, " SKEY(SK_NET_TX) "%.6g, "
		SKEY(SK_OTHER) "%.6g }\n    }\n  },\n",
		per_op(res, t->totals.softirq_ns[TRACE_NET_RX] / 1e3),
		per_op(res, t->totals.softirq_ns[TRACE_NET_TX] / 1e3),
		per_op(res, t->totals.softirq_ns[TRACE_SOFTIRQ_OTHER] / 1e3));
}

static void json_noise(FILE *f, const struct run_config *cfg, const struct run_result *res)
{
	struct noise_figures n;

	noise_of(cfg, res, &n);
	if (!n.known) {
		fprintf(f, "  " SKEY(SK_NOISE) "null,\n");
		return;
	}
	fprintf(f, "  " SKEY(SK_NOISE) "{\n    " SKEY(SK_WALL_S) "%.4f, " SKEY(SK_ONLINE_CPUS) "%u, ",
		n.wall_s, n.cpus);
	json_num_or_null(f, SK_STEAL_PCT, n.sys_known ? n.steal_pct : NAN, ", ");
	json_num_or_null(f, SK_OTHER_CPU_PCT, n.sys_known ? n.other_cpu_pct : NAN, ", ");
	json_num_or_null(f, SK_OUTSIDE_RUNNABLE, n.sys_known ? n.outside_runnable : NAN, ",\n    ");
	json_num_or_null(f, SK_LOADAVG_START, n.loadavg_start, ", ");
	json_num_or_null(f, SK_LOADAVG_END, n.loadavg_end, ", ");
	fprintf(f, SKEY(SK_CPU_MIGRATIONS) "%llu,\n    " SKEY(SK_CPU_FREQ), (unsigned long long)n.migrations);
	if (n.freq_cpus)
		fprintf(f, "{ " SKEY(SK_EXPOSED) "true, " SKEY(SK_CPUS) "%u, " SKEY(SK_START_MHZ) "%.1f, "
			SKEY(SK_END_MHZ) "%.1f, " SKEY(SK_CHANGED_CPUS) "%u },\n    ", n.freq_cpus,
			n.freq_start_mhz, n.freq_end_mhz, n.freq_changed_cpus);
	else
		fprintf(f, "{ " SKEY(SK_EXPOSED) "false },\n    ");
	json_num_or_null(f, SK_LONGEST_STALL_S, n.longest_stall_s, ", ");
	json_num_or_null(f, SK_OVERRUN_S, n.overrun_s, ",\n    ");
	fprintf(f, SKEY(SK_THRESHOLDS) "{ " SKEY(SK_STEAL_PCT) "%g, " SKEY(SK_OTHER_CPU_PCT) "%g, "
		SKEY(SK_STALL_S) "%g, ",
		NOISE_STEAL_PCT, NOISE_OTHER_CPU_PCT, NOISE_STALL_S);
	json_num_or_null(f, SK_OVERRUN_S, n.overrun_limit_s, ", ");
	fprintf(f, SKEY(SK_MIN_JUDGED_S) "%g },\n    " SKEY(SK_DISTURBED) "%s, " SKEY(SK_REASONS) "[",
		NOISE_MIN_JUDGED_S, n.reasons ? "true" : "false");
	for (int i = 0, first = 1; i < NOISE_REASONS; i++)
		if (n.reasons & (1u << i)) {
			fprintf(f, "%s\"%s\"", first ? "" : ", ", noise_reason_name[i]);
			first = 0;
		}
	fprintf(f, "]\n  },\n");
}

static void json_offload(FILE *f, const char *name, int v, const char *after)
{
	fprintf(f, "\"%s\": %s%s", name, v < 0 ? "null" : v ? "true" : "false", after);
}

/* Where the run's bytes went: its own namespace or the host's, and the
 * loopback's offloads as read back. */
static void json_netns(FILE *f, const struct netns_state *n)
{
	if (!n) {
		fprintf(f, "  " SKEY(SK_NETNS) "null,\n");
		return;
	}
	fprintf(f, "  " SKEY(SK_NETNS) "{ " SKEY(SK_PRIVATE) "%s, " SKEY(SK_USER_NAMESPACE) "%s, "
		SKEY(SK_DEVICE),
		n->entered ? "true" : "false", n->user_ns ? "true" : "false");
	json_str(f, n->device[0] ? n->device : "lo");
	fprintf(f, ", ");
	json_offload(f, SK_TSO, n->tso, ", ");
	json_offload(f, SK_GSO, n->gso, ", ");
	json_offload(f, SK_GRO, n->gro, ", ");
	if (n->mtu > 0)
		fprintf(f, SKEY(SK_MTU) "%d },\n", n->mtu);
	else
		fprintf(f, SKEY(SK_MTU) "null },\n");
}

/* Client 0's first connection as getsockopt saw it; null without a socket. */
static void json_socket(FILE *f, const struct socket_readback *s)
{
	if (!s->known) {
		fprintf(f, "  " SKEY(SK_SOCKET) "null,\n");
		return;
	}
	fprintf(f, "  " SKEY(SK_SOCKET) "{ " SKEY(SK_FAMILY));
	json_str_or_null(f, family_name(s->family));
	fprintf(f, ", " SKEY(SK_CC));
	json_str_or_null(f, s->cc[0] ? s->cc : NULL);
	fprintf(f, ", " SKEY(SK_NODELAY) "%s, " SKEY(SK_SNDBUF) "%d, " SKEY(SK_RCVBUF) "%d },\n",
		s->nodelay < 0 ? "null" : s->nodelay ? "true" : "false", s->sndbuf, s->rcvbuf);
}

static void json_body(FILE *f, const struct run_config *cfg, const struct report_options *ro,
		      const struct run_result *res, int argc, const char *const *argv)
{
	fprintf(f, "{\n  " SKEY(SK_SCHEMA_VERSION) "%d,\n  " SKEY(SK_TBENCH_VERSION),
		SCHEMA_VERSION);
	json_str(f, version_line("tbench"));
	fprintf(f, ",\n");
	json_settings(f, cfg, res, argc, argv);
	json_netns(f, ro ? ro->netns : NULL);
	json_socket(f, &res->socket);
	json_result(f, cfg, res);
	json_cost(f, cfg, res);
	json_noise(f, cfg, res);
	json_trace(f, res);
	json_backend_counters(f, cfg, res);
	fprintf(f, "  " SKEY(SK_OPERATIONS) "[");
	for (int i = 0, first = 1; i < OP_COUNT; i++) {
		if (res->op[i].count == 0 || i == OP_SLEEP)
			continue;
		fprintf(f, "%s\n    { " SKEY(SK_NAME) "\"%s\", ", first ? "" : ",", smb_keyword(i));
		schema_put_latency_figures(f, &res->op[i]);
		fputs(" }", f);
		first = 0;
	}
	fprintf(f, "\n  ],\n  " SKEY(SK_CLIENTS) "[");
	for (unsigned i = 0; i < res->nclients; i++) {
		const struct client_stats *c = &res->clients[i];
		fprintf(f, "%s\n    { " SKEY(SK_ID) "%u, " SKEY(SK_PAYLOAD_BYTES) "%llu, "
			SKEY(SK_PAYLOAD_BYTES_ALL_PHASES) "%llu, " SKEY(SK_OPS) "%llu, "
			SKEY(SK_OPS_ALL_PHASES) "%llu, " SKEY(SK_PASSES) "%llu, " SKEY(SK_MB_PER_SEC) "%.6f, "
			SKEY(SK_CPU_USER_S) "%.6f, " SKEY(SK_CPU_SYSTEM_S) "%.6f }",
			i ? "," : "", i, (unsigned long long)c->bytes, (unsigned long long)c->bytes_all,
			(unsigned long long)execute_ops(c), (unsigned long long)c->ops_all, (unsigned long long)c->passes,
			res->execute_secs > 0 ? c->bytes / 1e6 / res->execute_secs : 0,
			c->cpu_user, c->cpu_sys);
	}
	fprintf(f, "\n  ]\n}\n");
}

/* A regular file (or a new one) is written whole: a temporary file renamed
 * over it at the end, so a reader never sees half a document. Anything else
 * (/dev/stdout, a pipe, /dev/null) is written as it is: a rename would
 * replace the device or pipe with a file. */
int report_json_open(struct json_out *j, const char *path, struct errbuf *err)
{
	struct stat st;
	bool direct = stat(path, &st) == 0 && !S_ISREG(st.st_mode);
	size_t n = strlen(path) + 32;

	memset(j, 0, sizeof(*j));
	j->path = strdup(path);
	j->tmp = direct ? NULL : malloc(n);
	if (!j->path || (!direct && !j->tmp)) {
		report_json_discard(j);
		return err_set(err, "--json %s: out of memory", path);
	}
	if (!direct)
		snprintf(j->tmp, n, "%s.tmp.%ld", path, (long)getpid());
	j->f = fopen(direct ? path : j->tmp, "w");
	if (!j->f) {
		err_errno(err, "--json %s: cannot create %s (does the directory exist and is it "
			  "writable?)", path, direct ? path : j->tmp);
		report_json_discard(j);
		return -1;
	}
	return 0;
}

int report_json_write(struct json_out *j, const struct run_config *cfg,
		      const struct report_options *ro, const struct run_result *res,
		      int argc, const char *const *argv, struct errbuf *err)
{
	json_body(j->f, cfg, ro, res, argc, argv);
	errno = 0;
	int bad = fflush(j->f) != 0 || ferror(j->f);
	int saved = errno ? errno : EIO;
	bad |= fclose(j->f) != 0;
	j->f = NULL;
	if (bad) {
		errno = errno ? errno : saved;
		err_set(err, "--json %s: %s (writing %s%s: make room there, or give another path)",
			j->path, strerror(errno), j->tmp ? j->tmp : j->path,
			j->tmp ? ", removed" : "");
		report_json_discard(j);
		return -1;
	}
	if (j->tmp && rename(j->tmp, j->path) < 0) {
		err_errno(err, "--json %s: renaming %s", j->path, j->tmp);
		report_json_discard(j);
		return -1;
	}
	free(j->tmp);
	j->tmp = NULL;
	report_json_discard(j);
	return 0;
}

void report_json_discard(struct json_out *j)
{
	if (j->f)
		fclose(j->f);
	if (j->tmp)
		unlink(j->tmp);
	free(j->tmp);
	free(j->path);
	memset(j, 0, sizeof(*j));
}
