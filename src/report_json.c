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
#include "json_build.h"
#include "report_figures.h"
#include "schema.h"
#include "syscall_name.h"
#include "version.h"

typedef struct json_object jobj;

static jobj *flag(bool b)
{
	return json_object_new_boolean(b);
}

/* The clock the timestamps came from; with the TSC, how far its time had
 * drifted from CLOCK_MONOTONIC since the calibration (checked now, as the
 * run has just ended). */
static jobj *json_clock(void)
{
	struct clock_check c;
	jobj *o = json_object_new_object();
	bool tsc;

	clock_check(&c);
	tsc = c.source == CLOCK_SOURCE_TSC;
	json_put(o, SK_SOURCE, json_string(clock_source_name(c.source)));
	json_put(o, SK_WHY, json_string(c.why));
	json_put(o, SK_CALIBRATION_ERROR_PPM, tsc ? json_fixed("%.3f", c.error_ppm) : NULL);
	json_put(o, SK_CHECKED_AFTER_S, tsc ? json_fixed("%.3f", c.elapsed_s) : NULL);
	return o;
}

/* The backends' own settings, each added by its backend: recorded for
 * every backend built, whichever ran, so the keys do not depend on -b. */
static void json_backend_settings(jobj *o, const struct run_config *cfg)
{
	const struct backend *const alone[] = { cfg->backend, NULL };
	const struct backend *const *all = cfg->all_backends ? cfg->all_backends : alone;

	for (size_t i = 0; all[i]; i++)
		all[i]->add_settings(o, all[i]->settings);
}

static const char *family_name(int family)
{
	return family == AF_INET ? "ipv4" : family == AF_INET6 ? "ipv6" : family == AF_UNIX ? "unix"
									      : NULL;
}

/* The sweep's knobs as asked (CPU lists, start, injected cost) and as they came out
 * (the address family: --family, else what client 0's socket had). */
static void json_knob_settings(jobj *o, const struct run_config *cfg, const struct run_result *res)
{
	const struct cpu_list *sc = cfg->bcfg.server_cpus;
	int family = cfg->bcfg.family ? cfg->bcfg.family : res->socket.known ? res->socket.family : 0;

	json_put(o, SK_CPUS, json_string(cfg->cpus ? cfg->cpus->text : NULL));
	json_put(o, SK_SERVER_CPUS, json_string(sc ? sc->text : NULL));
	json_put(o, SK_FAMILY, json_string(family == AF_UNIX ? NULL : family_name(family)));
	json_put(o, SK_START_AT, cfg->start_at ? json_fixed("%.6f", cfg->start_at) : NULL);
	json_put(o, SK_INJECT_NS, json_object_new_uint64(cfg->inject_ns));
}

static jobj *json_settings(const struct run_config *cfg, const struct run_result *res,
			   int argc, const char *const *argv)
{
	jobj *o = json_object_new_object(), *command = json_object_new_array();

	json_put(o, SK_BACKEND, json_string(cfg->backend->name));
	json_put(o, SK_CLIENTS, json_object_new_uint64(cfg->bcfg.nclients));
	json_put(o, SK_MODEL, json_string(cfg->bcfg.processes ? "processes" : "threads"));
	json_put(o, SK_PROCS, json_object_new_uint64(run_procs(cfg)));
	json_put(o, SK_CLIENTS_PER_PROCESS, json_object_new_uint64(run_per_process(cfg)));
	json_put(o, SK_COPY_REPLIES, flag(cfg->bcfg.copy_replies));
	json_put(o, SK_LOADFILE, json_string(cfg->lf->path));
	json_put(o, SK_LOADFILE_OPS, json_object_new_uint64(cfg->lf->n_ops));
	json_put(o, SK_LOADFILE_PASS_BYTES, json_object_new_uint64(cfg->lf->pass_payload));
	json_put(o, SK_TIMELIMIT_S, json_fixed("%g", cfg->timelimit));
	json_put(o, SK_WARMUP_S, json_fixed("%g", cfg->warmup));
	json_put(o, SK_TARGET_RATE_MB_S, json_fixed("%g", cfg->target_rate));
	json_put(o, SK_TIMEOUT_S, json_fixed("%g", cfg->timeout));
	json_backend_settings(o, cfg);
	json_put(o, SK_PROCESSES, flag(cfg->bcfg.processes));
	json_put(o, SK_RUN_ONCE, flag(cfg->run_once));
	json_put(o, SK_SERVER, json_string(cfg->bcfg.server));
	json_put(o, SK_CLOCK, json_clock());
	json_put(o, SK_DRIVER_PRIORITY, json_string(priority_name(res->driver_priority)));
	json_knob_settings(o, cfg, res);
	for (int i = 0; i < argc; i++)
		json_object_array_add(command, json_string(argv[i]));
	json_put(o, SK_COMMAND, command);
	return o;
}

/* A figure of the execute phase: null when there was none to measure. */
static jobj *figure(double v, bool known)
{
	return known ? json_fixed("%.6f", v) : NULL;
}

static jobj *json_cpu(const struct run_result *res)
{
	jobj *o = json_object_new_object();
	double cpu = res->cpu_user + res->cpu_sys;

	json_put(o, SK_USER_S, json_fixed("%.6f", res->cpu_user));
	json_put(o, SK_SYSTEM_S, json_fixed("%.6f", res->cpu_sys));
	json_put(o, SK_CLIENTS_USER_S, json_fixed("%.6f", res->cpu_clients_user));
	json_put(o, SK_CLIENTS_SYSTEM_S, json_fixed("%.6f", res->cpu_clients_sys));
	json_put(o, SK_OTHERS_USER_S, json_fixed("%.6f", res->cpu_user - res->cpu_clients_user));
	json_put(o, SK_OTHERS_SYSTEM_S, json_fixed("%.6f", res->cpu_sys - res->cpu_clients_sys));
	json_put(o, SK_CPU_US_PER_MB,
		 json_fixed("%.3f", res->bytes_all ? cpu * 1e6 / (res->bytes_all / 1e6) : 0));
	return o;
}

static jobj *json_result(const struct run_config *cfg, const struct run_result *res)
{
	uint64_t least;
	static const char *const status[] = { "ok", "failed", "interrupted" };
	bool ex = res->executed && res->execute_secs > 0;
	jobj *o = json_object_new_object();

	json_put(o, SK_STATUS, json_string(status[res->status]));
	json_put(o, SK_PARTIAL, flag(res->status != RUN_OK));
	json_put(o, SK_ERROR, json_string(res->error.msg));
	json_put(o, SK_MB_PER_SEC, figure(result_mb_per_sec(res), ex));
	json_put(o, SK_OPS_PER_SEC, figure(ex ? res->ops / res->execute_secs : 0, ex));
	json_put(o, SK_EXECUTE_S, figure(res->execute_secs, res->executed));
	json_put(o, SK_TOTAL_S, json_fixed("%.6f", res->total_secs));
	json_put(o, SK_SETUP_S, json_fixed("%.6f", res->setup_secs));
	json_put(o, SK_PAYLOAD_BYTES, json_object_new_uint64(res->bytes));
	json_put(o, SK_PAYLOAD_BYTES_ALL_PHASES, json_object_new_uint64(res->bytes_all));
	json_put(o, SK_OPS, json_object_new_uint64(res->ops));
	json_put(o, SK_MAX_LATENCY_MS, figure(ms(res->max_latency_ns), ex));
	/* The warning of report_notes: a client replayed less than one pass. */
	json_put(o, SK_LESS_THAN_A_PASS, flag(prefix_only(cfg, res, &least)));
	json_put(o, SK_LATENCY, ex ? schema_latency(&res->all) : NULL);
	json_put(o, SK_CPU, json_cpu(res));
	return o;
}

/* A group's CPU (µs) and switches per operation; the CPU to 6 significant
 * digits, as nop's 0.1 µs needs for a precision of a few tenths of a
 * per cent. */
static jobj *json_tasks(const struct run_result *res, const struct task_times *a,
			const struct task_times *b)
{
	jobj *o = json_object_new_object();
	double user_s, sys_s;

	task_times_delta(a, b, cost_split_raw(&res->cost), &user_s, &sys_s);
	json_put(o, SK_TASKS, json_object_new_uint64(b->tasks));
	json_put(o, SK_CPU_USER_US, json_fixed("%.6g", per_op(res, user_s * 1e6)));
	json_put(o, SK_CPU_SYSTEM_US, json_fixed("%.6g", per_op(res, sys_s * 1e6)));
	json_put(o, SK_VOLUNTARY_SWITCHES,
		 json_fixed("%.4f", per_op(res, (double)(b->vol_cs - a->vol_cs))));
	json_put(o, SK_INVOLUNTARY_SWITCHES,
		 json_fixed("%.4f", per_op(res, (double)(b->invol_cs - a->invol_cs))));
	return o;
}

static jobj *json_cost_per_op(const struct run_config *cfg, const struct run_result *res)
{
	const struct cost *c = &res->cost;
	jobj *o = json_object_new_object();

	json_put(o, SK_CLIENTS, json_tasks(res, &c->start.clients, &c->end.clients));
	json_put(o, SK_SERVERS, json_tasks(res, &c->start.servers, &c->end.servers));
	json_put(o, SK_HARNESS, json_tasks(res, &c->start.harness, &c->end.harness));
	for (int i = 0; i < PERF_N; i++) {
		double v = per_op(res, (double)perf_delta(c, i) / (i == PERF_TASK_CLOCK ? 1e3 : 1));
		json_put(o, cost_perf_name[i], cost_perf_source(c, i) ? json_fixed("%.4f", v) : NULL);
	}
	for (int i = 0; i < NET_N; i++)
		json_put(o, cost_net_name[i],
			 net_known(c, i) ? json_fixed("%.4f", per_op(res, net_delta(c, i))) : NULL);
	double segs = net_known(c, NET_SEGS_OUT) ? net_delta(c, NET_SEGS_OUT) : 0;
	bool per_segment = segs > 0 && (cfg->backend->flags & BACKEND_TCP);
	json_put(o, SK_PAYLOAD_BYTES_PER_SEGMENT,
		 per_segment ? json_fixed("%.1f", res->wire_bytes / segs) : NULL);
	return o;
}

static jobj *json_cost(const struct run_config *cfg, const struct run_result *res)
{
	const struct cost *c = &res->cost;
	jobj *o, *counted_by, *not_available;

	if (!cost_known(res))
		return NULL;
	o = json_object_new_object();
	counted_by = json_object_new_object();
	not_available = json_object_new_object();
	json_put(o, SK_PER_OPERATION, json_cost_per_op(cfg, res));
	json_put(o, SK_OPERATIONS, json_object_new_uint64(res->ops));
	json_put(o, SK_DEVICE, json_string(c->dev));
	for (int i = 0; i < PERF_N; i++) {
		if (cost_perf_source(c, i))
			json_put(counted_by, cost_perf_name[i], json_string(cost_perf_source(c, i)));
		if (c->perf_why[i][0])
			json_put(not_available, cost_perf_name[i], json_string(c->perf_why[i]));
	}
	json_put(counted_by, SK_CPU_USER_SYSTEM, json_string(cost_split_source(c)));
	json_put(o, SK_COUNTED_BY, counted_by);
	json_put(o, SK_NOT_AVAILABLE, not_available);
	return o;
}

/* The backend's own counts, for the whole run: null when it keeps none. */
static jobj *json_backend_counters(const struct run_config *cfg, const struct run_result *res)
{
	const char *const *names = cfg->backend->counter_names;
	jobj *o;

	if (!cfg->backend->counters || !names)
		return NULL;
	o = json_object_new_object();
	for (int i = 0; i < BACKEND_COUNTERS && names[i]; i++)
		json_put(o, names[i], json_object_new_uint64(res->backend[i]));
	return o;
}

/* A side's system calls, every one seen, most time first. */
static jobj *json_trace_syscalls(const struct run_result *res, int side)
{
	unsigned nr[TRACE_SYSCALLS];
	unsigned n = trace_top_syscalls(&res->trace, side, nr, TRACE_SYSCALLS);
	char buf[32];
	jobj *a = json_object_new_array();

	for (unsigned i = 0; i < n; i++) {
		const struct trace_syscall *s = &res->trace.syscall[side][nr[i]];
		jobj *o = json_object_new_object();
		bool named = nr[i] != TRACE_SYSCALL_UNKNOWN;
		json_put(o, SK_NAME, json_string(named ? syscall_name(nr[i], buf, sizeof(buf)) : NULL));
		json_put(o, SK_NR, json_object_new_uint64(nr[i]));
		json_put(o, SK_COUNT, res->trace.syscalls_followed
			 ? json_fixed("%.4f", per_op(res, (double)s->count)) : NULL);
		json_put(o, SK_US, json_fixed("%.6g", per_op(res, s->ns / 1e3)));
		json_object_array_add(a, o);
	}
	return a;
}

/* The wake-up-to-run histogram: [low_ns, high_ns, count] of its non-empty
 * log2 buckets, as the latency objects' buckets. */
static jobj *json_trace_hist(const __u64 hist[TRACE_HIST])
{
	jobj *o = json_object_new_object(), *buckets = json_object_new_array();

	for (int b = 0; b < TRACE_HIST; b++) {
		if (!hist[b])
			continue;
		json_object_array_add(buckets, json_bucket(b ? 1ull << b : 0ull, 2ull << b, hist[b]));
	}
	json_put(o, SK_BUCKETS, buckets);
	return o;
}

static jobj *json_trace_side(const struct run_result *res, int side)
{
	const struct trace_side *t = &res->trace.totals.side[side];
	struct trace_side_figures s;
	jobj *o = json_object_new_object(), *groups = json_object_new_object();

	trace_side_of(res, side, &s);
	json_put(o, SK_TASKS, json_object_new_uint64(res->trace.tasks[side]));
	json_put(o, SK_STARTED, json_object_new_uint64(t->born));
	json_put(o, SK_ENDED, json_object_new_uint64(t->died));
	json_put(o, SK_ON_CPU_US, json_fixed("%.6g", s.on_cpu_us));
	json_put(o, SK_USER_US, json_fixed("%.6g", s.user_us));
	json_put(o, SK_SYSCALL_US, json_fixed("%.6g", s.syscall_us));
	json_put(o, SK_RUN_QUEUE_US, json_fixed("%.6g", s.runq_us));
	json_put(o, SK_BLOCKED_US, json_fixed("%.6g", s.blocked_us));
	json_put(o, SK_WAKEUPS, json_fixed("%.4f", s.wakeups));
	json_put(o, SK_WAKEUPS_CROSS_CPU, json_fixed("%.4f", s.cross_cpu));
	json_put(o, SK_SWITCHES, json_fixed("%.4f", s.switches));
	json_put(o, SK_PREEMPTED, json_fixed("%.4f", s.preempted));
	json_put(o, SK_SOFTIRQ_US, json_fixed("%.6g", s.softirq_us));
	json_put(o, SK_SAMPLES, json_object_new_uint64((uint64_t)s.samples));
	json_put(o, SK_SAMPLED_USER_SHARE,
		 s.sampled_user_share >= 0 ? json_fixed("%.4f", s.sampled_user_share) : NULL);
	for (unsigned g = 0; g < SYSCALL_GROUPS; g++)
		json_put(groups, syscall_group_key(g), json_fixed("%.6g", s.group_us[g]));
	json_put(o, SK_SYSCALL_GROUPS_US, groups);
	json_put(o, SK_SYSCALLS, json_trace_syscalls(res, side));
	json_put(o, SK_WAKEUP_LATENCY, json_trace_hist(res->trace.wake_hist[side]));
	return o;
}

static jobj *json_trace_per_op(const struct run_result *res)
{
	const struct trace_result *t = &res->trace;
	jobj *o = json_object_new_object(), *softirq = json_object_new_object();

	for (int side = 0; side < TRACE_SIDES; side++)
		json_put(o, side == TRACE_SIDE_CLIENT ? SK_CLIENTS : SK_SERVERS,
			 json_trace_side(res, side));
	json_put(softirq, SK_NET_RX, json_fixed("%.6g", per_op(res, t->totals.softirq_ns[TRACE_NET_RX] / 1e3)));
	json_put(softirq, SK_NET_TX, json_fixed("%.6g", per_op(res, t->totals.softirq_ns[TRACE_NET_TX] / 1e3)));
	json_put(softirq, SK_OTHER,
		 json_fixed("%.6g", per_op(res, t->totals.softirq_ns[TRACE_SOFTIRQ_OTHER] / 1e3)));
	json_put(o, SK_SOFTIRQ_US, softirq);
	return o;
}

/* --trace's figures; null when the run was not traced. */
static jobj *json_trace(const struct run_result *res)
{
	const struct trace_result *t = &res->trace;
	jobj *o;

	if (!trace_known(res))
		return NULL;
	double ratio = trace_reconciled(res);
	o = json_object_new_object();
	json_put(o, SK_WALL_S, json_fixed("%.6f", t->wall_s));
	json_put(o, SK_OPERATIONS, json_object_new_uint64(res->ops));
	json_put(o, SK_RECONCILED_RATIO, json_fixed("%.6f", ratio));
	json_put(o, SK_TOLERANCE_PCT, json_fixed("%g", TRACE_TOLERANCE * 100));
	json_put(o, SK_RECONCILED, flag(fabs(ratio - 1) <= TRACE_TOLERANCE));
	/* A known bias: the run's tasks ran this and more on top of their own work. */
	json_put(o, SK_PROBE_CPU_US,
		 t->probe_known ? json_fixed("%.6g", per_op(res, t->probe_ns / 1e3)) : NULL);
	json_put(o, SK_SYSCALLS_FOLLOWED, flag(t->syscalls_followed));
	json_put(o, SK_PER_OPERATION, json_trace_per_op(res));
	return o;
}

static jobj *json_cpu_freq(const struct noise_figures *n)
{
	jobj *o = json_object_new_object();

	json_put(o, SK_EXPOSED, flag(n->freq_cpus));
	if (!n->freq_cpus)
		return o;
	json_put(o, SK_CPUS, json_object_new_uint64(n->freq_cpus));
	json_put(o, SK_START_MHZ, json_fixed("%.1f", n->freq_start_mhz));
	json_put(o, SK_END_MHZ, json_fixed("%.1f", n->freq_end_mhz));
	json_put(o, SK_CHANGED_CPUS, json_object_new_uint64(n->freq_changed_cpus));
	return o;
}

static jobj *json_noise_thresholds(const struct noise_figures *n)
{
	jobj *o = json_object_new_object();

	json_put(o, SK_STEAL_PCT, json_fixed("%g", NOISE_STEAL_PCT));
	json_put(o, SK_OTHER_CPU_PCT, json_fixed("%g", NOISE_OTHER_CPU_PCT));
	json_put(o, SK_STALL_S, json_fixed("%g", NOISE_STALL_S));
	json_put(o, SK_OVERRUN_S, json_fixed("%.4f", n->overrun_limit_s));
	json_put(o, SK_MIN_JUDGED_S, json_fixed("%g", NOISE_MIN_JUDGED_S));
	return o;
}

static jobj *json_noise(const struct run_config *cfg, const struct run_result *res)
{
	struct noise_figures n;
	jobj *o, *reasons;

	noise_of(cfg, res, &n);
	if (!n.known)
		return NULL;
	o = json_object_new_object();
	reasons = json_object_new_array();
	json_put(o, SK_WALL_S, json_fixed("%.4f", n.wall_s));
	json_put(o, SK_ONLINE_CPUS, json_object_new_uint64(n.cpus));
	json_put(o, SK_STEAL_PCT, json_fixed("%.4f", n.sys_known ? n.steal_pct : NAN));
	json_put(o, SK_OTHER_CPU_PCT, json_fixed("%.4f", n.sys_known ? n.other_cpu_pct : NAN));
	json_put(o, SK_OUTSIDE_RUNNABLE, json_fixed("%.4f", n.sys_known ? n.outside_runnable : NAN));
	json_put(o, SK_LOADAVG_START, json_fixed("%.4f", n.loadavg_start));
	json_put(o, SK_LOADAVG_END, json_fixed("%.4f", n.loadavg_end));
	json_put(o, SK_CPU_MIGRATIONS, json_object_new_uint64(n.migrations));
	json_put(o, SK_CPU_FREQ, json_cpu_freq(&n));
	json_put(o, SK_LONGEST_STALL_S, json_fixed("%.4f", n.longest_stall_s));
	json_put(o, SK_OVERRUN_S, json_fixed("%.4f", n.overrun_s));
	json_put(o, SK_THRESHOLDS, json_noise_thresholds(&n));
	json_put(o, SK_DISTURBED, flag(n.reasons));
	for (int i = 0; i < NOISE_REASONS; i++)
		if (n.reasons & (1u << i))
			json_object_array_add(reasons, json_string(noise_reason_name[i]));
	json_put(o, SK_REASONS, reasons);
	return o;
}

/* An offload as read back: null when it could not be. */
static jobj *offload(int v)
{
	return v < 0 ? NULL : flag(v);
}

/* Where the run's bytes went: its own namespace or the host's, and the
 * loopback's offloads and the namespace's --sysctl's as read back. */
static jobj *json_netns(const struct netns_state *n)
{
	jobj *o, *sysctls;

	if (!n)
		return NULL;
	o = json_object_new_object();
	json_put(o, SK_PRIVATE, flag(n->entered));
	json_put(o, SK_USER_NAMESPACE, flag(n->user_ns));
	json_put(o, SK_DEVICE, json_string(n->device[0] ? n->device : "lo"));
	json_put(o, SK_TSO, offload(n->tso));
	json_put(o, SK_GSO, offload(n->gso));
	json_put(o, SK_GRO, offload(n->gro));
	json_put(o, SK_MTU, n->mtu > 0 ? json_object_new_int(n->mtu) : NULL);
	sysctls = json_object_new_array();
	for (unsigned i = 0; i < n->nsysctl; i++) {
		jobj *one = json_object_new_object();
		json_put(one, SK_NAME, json_string(n->sysctl[i].name));
		json_put(one, SK_ASKED, json_string(n->sysctl[i].asked));
		json_put(one, SK_READ, json_string(n->sysctl[i].read));
		json_object_array_add(sysctls, one);
	}
	json_put(o, SK_SYSCTLS, sysctls);
	return o;
}

/* Client 0's first connection as getsockopt saw it; null without a socket. */
static jobj *json_socket(const struct socket_readback *s)
{
	jobj *o;

	if (!s->known)
		return NULL;
	o = json_object_new_object();
	json_put(o, SK_FAMILY, json_string(family_name(s->family)));
	json_put(o, SK_CC, json_string(s->cc[0] ? s->cc : NULL));
	json_put(o, SK_NODELAY, offload(s->nodelay));
	json_put(o, SK_SNDBUF, json_object_new_int(s->sndbuf));
	json_put(o, SK_RCVBUF, json_object_new_int(s->rcvbuf));
	return o;
}

static jobj *json_operations(const struct run_result *res)
{
	jobj *a = json_object_new_array();

	for (int i = 0; i < OP_COUNT; i++) {
		if (res->op[i].count == 0 || i == OP_SLEEP)
			continue;
		jobj *o = json_object_new_object();
		json_put(o, SK_NAME, json_string(smb_keyword(i)));
		schema_add_latency_figures(o, &res->op[i]);
		json_object_array_add(a, o);
	}
	return a;
}

static jobj *json_clients(const struct run_result *res)
{
	jobj *a = json_object_new_array();

	for (unsigned i = 0; i < res->nclients; i++) {
		const struct client_stats *c = &res->clients[i];
		jobj *o = json_object_new_object();
		json_put(o, SK_ID, json_object_new_uint64(i));
		json_put(o, SK_PAYLOAD_BYTES, json_object_new_uint64(c->bytes));
		json_put(o, SK_PAYLOAD_BYTES_ALL_PHASES, json_object_new_uint64(c->bytes_all));
		json_put(o, SK_OPS, json_object_new_uint64(execute_ops(c)));
		json_put(o, SK_OPS_ALL_PHASES, json_object_new_uint64(c->ops_all));
		json_put(o, SK_PASSES, json_object_new_uint64(c->passes));
		json_put(o, SK_MB_PER_SEC,
			 json_fixed("%.6f", res->execute_secs > 0 ? c->bytes / 1e6 / res->execute_secs : 0));
		json_put(o, SK_CPU_USER_S, json_fixed("%.6f", c->cpu_user));
		json_put(o, SK_CPU_SYSTEM_S, json_fixed("%.6f", c->cpu_sys));
		json_object_array_add(a, o);
	}
	return a;
}

static jobj *json_document(const struct run_config *cfg, const struct report_options *ro,
			   const struct run_result *res, int argc, const char *const *argv)
{
	jobj *doc = json_object_new_object();

	json_put(doc, SK_SCHEMA_VERSION, json_object_new_int(SCHEMA_VERSION));
	json_put(doc, SK_TBENCH_VERSION, json_string(version_line("tbench")));
	json_put(doc, SK_SETTINGS, json_settings(cfg, res, argc, argv));
	json_put(doc, SK_NETNS, json_netns(ro ? ro->netns : NULL));
	json_put(doc, SK_SOCKET, json_socket(&res->socket));
	json_put(doc, SK_RESULT, json_result(cfg, res));
	json_put(doc, SK_COST, json_cost(cfg, res));
	json_put(doc, SK_NOISE, json_noise(cfg, res));
	json_put(doc, SK_TRACE, json_trace(res));
	json_put(doc, SK_BACKEND_COUNTERS, json_backend_counters(cfg, res));
	json_put(doc, SK_OPERATIONS, json_operations(res));
	json_put(doc, SK_CLIENTS, json_clients(res));
	return doc;
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
	struct json_object *doc = json_document(cfg, ro, res, argc, argv);
	errno = 0;
	int bad = json_write_doc(j->f, doc) < 0;
	json_object_put(doc);
	bad |= fflush(j->f) != 0 || ferror(j->f);
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
