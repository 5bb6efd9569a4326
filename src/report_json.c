/* The --json document: the settings, the figures and the histograms of a
 * run, for the sweep scripts and other programs, written whole at the end. */
#include "config.h"
#include "report_json.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "clock.h"
#include "cpulist.h"
#include "json.h"
#include "report_figures.h"
#include "version.h"

static void json_str(FILE *f, const char *s)
{
	json_write_string(f, s);
}

static void json_latency(FILE *f, const struct histogram *h)
{
	fprintf(f, "\"count\": %llu, \"avg_ms\": %.6f, \"p50_ms\": %.6f, \"p99_ms\": %.6f, "
		"\"p999_ms\": %.6f, \"max_ms\": %.6f",
		(unsigned long long)h->count, hist_mean_ns(h) / 1e6, ms(hist_quantile(h, 0.50)),
		ms(hist_quantile(h, 0.99)), ms(hist_quantile(h, 0.999)), ms(h->max_ns));
}

/* The non-empty buckets as [low_ns, high_ns, count] (a bucket holds low <=
 * ns < high; the last, which clamps, has high = low), with the exact sum and
 * maximum: enough to merge runs and recompute hist_quantile's figures. */
static void json_histogram(FILE *f, const struct histogram *h)
{
	fprintf(f, ", \"histogram\": { \"sum_ns\": %llu, \"max_ns\": %llu, \"buckets\": [",
		(unsigned long long)h->sum_ns, (unsigned long long)h->max_ns);
	for (unsigned i = 0, first = 1; i < HIST_BUCKETS; i++) {
		if (!h->bucket[i])
			continue;
		uint64_t lo = hist_bucket_low(i), hi = i + 1 < HIST_BUCKETS ? hist_bucket_low(i + 1) : lo;
		fprintf(f, "%s[%llu, %llu, %u]", first ? "" : ", ", (unsigned long long)lo,
			(unsigned long long)hi, h->bucket[i]);
		first = 0;
	}
	fprintf(f, "] }");
}

void report_json_latency(FILE *f, const struct histogram *h)
{
	json_latency(f, h);
	json_histogram(f, h);
}

/* The clock the timestamps came from; with the TSC, how far its time had
 * drifted from CLOCK_MONOTONIC since the calibration (checked now, as the
 * run has just ended). */
static void json_clock(FILE *f)
{
	struct clock_check c;

	clock_check(&c);
	fprintf(f, "    \"clock\": { \"source\": \"%s\", \"why\": ", clock_source_name(c.source));
	json_str(f, c.why);
	if (c.source == CLOCK_SOURCE_TSC)
		fprintf(f, ", \"calibration_error_ppm\": %.3f, \"checked_after_s\": %.3f },\n",
			c.error_ppm, c.elapsed_s);
	else
		fprintf(f, ", \"calibration_error_ppm\": null, \"checked_after_s\": null },\n");
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

	fprintf(f, "    \"cpus\": ");
	json_str_or_null(f, cfg->cpus ? cfg->cpus->text : NULL);
	fprintf(f, ",\n    \"server_cpus\": ");
	json_str_or_null(f, sc ? sc->text : NULL);
	fprintf(f, ",\n    \"family\": ");
	json_str_or_null(f, family == AF_UNIX ? NULL : family_name(family));
	if (cfg->start_at)
		fprintf(f, ",\n    \"start_at\": %.6f,\n", cfg->start_at);
	else
		fprintf(f, ",\n    \"start_at\": null,\n");
}

static void json_settings(FILE *f, const struct run_config *cfg, const struct run_result *res,
			  int argc, const char *const *argv)
{
	fprintf(f, "  \"settings\": {\n    \"backend\": ");
	json_str(f, cfg->backend->name);
	fprintf(f, ",\n    \"clients\": %u,\n    \"model\": \"%s\",\n    \"procs\": %u,\n"
		"    \"clients_per_process\": %u,\n    \"copy_replies\": %s,\n    \"loadfile\": ",
		cfg->bcfg.nclients, cfg->bcfg.processes ? "processes" : "threads", run_procs(cfg),
		cfg->clients_per_process ? cfg->clients_per_process : 1,
		cfg->bcfg.copy_replies ? "true" : "false");
	json_str(f, cfg->lf->path);
	fprintf(f, ",\n    \"loadfile_ops\": %zu,\n    \"loadfile_pass_bytes\": %llu,\n",
		cfg->lf->n_ops, (unsigned long long)cfg->lf->pass_payload);
	fprintf(f, "    \"timelimit_s\": %g,\n    \"warmup_s\": %g,\n    \"target_rate_mb_s\": %g,\n"
		"    \"timeout_s\": %g,\n", cfg->timelimit, cfg->warmup, cfg->target_rate, cfg->timeout);
	json_backend_settings(f, cfg);
	fprintf(f, "    \"processes\": %s,\n    \"run_once\": %s,\n    \"server\": ",
		cfg->bcfg.processes ? "true" : "false", cfg->run_once ? "true" : "false");
	if (cfg->bcfg.server)
		json_str(f, cfg->bcfg.server);
	else
		fputs("null", f);
	fprintf(f, ",\n");
	json_clock(f);
	json_knob_settings(f, cfg, res);
	fprintf(f, "    \"command\": [");
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

	fprintf(f, "  \"result\": {\n    \"status\": \"%s\",\n    \"partial\": %s,\n    \"error\": ",
		status[res->status], res->status == RUN_OK ? "false" : "true");
	json_str(f, res->error);
	fprintf(f, ",\n");
	json_figure(f, "mb_per_sec", result_mb_per_sec(res), ex, "\n");
	json_figure(f, "ops_per_sec", ex ? res->ops / res->execute_secs : 0, ex, "\n");
	json_figure(f, "execute_s", res->execute_secs, res->executed, "\n");
	fprintf(f, "    \"total_s\": %.6f,\n", res->total_secs);
	fprintf(f, "    \"payload_bytes\": %llu,\n    \"payload_bytes_all_phases\": %llu,\n    \"ops\": %llu,\n",
		(unsigned long long)res->bytes, (unsigned long long)res->bytes_all,
		(unsigned long long)res->ops);
	json_figure(f, "max_latency_ms", ms(res->max_latency_ns), ex, "\n");
	/* The warning of report_notes: a client replayed less than one pass. */
	fprintf(f, "    \"less_than_a_pass\": %s,\n", prefix_only(cfg, res, &least) ? "true" : "false");
	if (ex) {
		fprintf(f, "    \"latency\": { ");
		report_json_latency(f, &res->all);
		fprintf(f, " },\n");
	} else {
		fprintf(f, "    \"latency\": null,\n");
	}
	fprintf(f, "    \"cpu\": { \"user_s\": %.6f, \"system_s\": %.6f, "
		"\"clients_user_s\": %.6f, \"clients_system_s\": %.6f, "
		"\"others_user_s\": %.6f, \"others_system_s\": %.6f, \"cpu_us_per_mb\": %.3f }\n  },\n",
		res->cpu_user, res->cpu_sys, res->cpu_clients_user, res->cpu_clients_sys,
		res->cpu_user - res->cpu_clients_user, res->cpu_sys - res->cpu_clients_sys,
		res->bytes_all ? cpu * 1e6 / (res->bytes_all / 1e6) : 0);
}

/* A group's CPU (µs) and switches per operation. */
static void json_tasks(FILE *f, const char *name, const struct run_result *res,
		       const struct task_times *a, const struct task_times *b)
{
	fprintf(f, "      \"%s\": { \"tasks\": %u, \"cpu_user_us\": %.3f, \"cpu_system_us\": %.3f, "
		"\"voluntary_switches\": %.4f, \"involuntary_switches\": %.4f },\n", name, b->tasks,
		per_op(res, (b->user_s - a->user_s) * 1e6), per_op(res, (b->sys_s - a->sys_s) * 1e6),
		per_op(res, (double)(b->vol_cs - a->vol_cs)), per_op(res, (double)(b->invol_cs - a->invol_cs)));
}

static void json_cost(FILE *f, const struct run_config *cfg, const struct run_result *res)
{
	const struct cost *c = &res->cost;

	if (!cost_known(res)) {
		fprintf(f, "  \"cost\": null,\n");
		return;
	}
	fprintf(f, "  \"cost\": {\n    \"per_operation\": {\n");
	json_tasks(f, "clients", res, &c->start.clients, &c->end.clients);
	json_tasks(f, "servers", res, &c->start.servers, &c->end.servers);
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
		fprintf(f, "      \"payload_bytes_per_segment\": %.1f\n    },\n", res->wire_bytes / segs);
	else
		fprintf(f, "      \"payload_bytes_per_segment\": null\n    },\n");
	fprintf(f, "    \"operations\": %llu,\n    \"device\": ", (unsigned long long)res->ops);
	json_str(f, c->dev);
	fprintf(f, ",\n    \"counted_by\": {");
	for (int i = 0, first = 1; i < PERF_N; i++) {
		if (!cost_perf_source(c, i))
			continue;
		fprintf(f, "%s \"%s\": ", first ? "" : ",", cost_perf_name[i]);
		json_str(f, cost_perf_source(c, i));
		first = 0;
	}
	fprintf(f, " },\n    \"not_available\": {");
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
		fprintf(f, "  \"backend_counters\": null,\n");
		return;
	}
	fprintf(f, "  \"backend_counters\": {");
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

static void json_noise(FILE *f, const struct run_config *cfg, const struct run_result *res)
{
	struct noise_figures n;

	noise_of(cfg, res, &n);
	if (!n.known) {
		fprintf(f, "  \"noise\": null,\n");
		return;
	}
	fprintf(f, "  \"noise\": {\n    \"wall_s\": %.4f, \"online_cpus\": %u, ", n.wall_s, n.cpus);
	json_num_or_null(f, "steal_pct", n.sys_known ? n.steal_pct : NAN, ", ");
	json_num_or_null(f, "other_cpu_pct", n.sys_known ? n.other_cpu_pct : NAN, ", ");
	json_num_or_null(f, "outside_runnable", n.sys_known ? n.outside_runnable : NAN, ",\n    ");
	json_num_or_null(f, "loadavg_start", n.loadavg_start, ", ");
	json_num_or_null(f, "loadavg_end", n.loadavg_end, ", ");
	fprintf(f, "\"cpu_migrations\": %llu,\n    \"cpu_freq\": ", (unsigned long long)n.migrations);
	if (n.freq_cpus)
		fprintf(f, "{ \"exposed\": true, \"cpus\": %u, \"start_mhz\": %.1f, \"end_mhz\": %.1f, "
			"\"changed_cpus\": %u },\n    ", n.freq_cpus, n.freq_start_mhz, n.freq_end_mhz,
			n.freq_changed_cpus);
	else
		fprintf(f, "{ \"exposed\": false },\n    ");
	json_num_or_null(f, "longest_stall_s", n.longest_stall_s, ", ");
	json_num_or_null(f, "overrun_s", n.overrun_s, ",\n    ");
	fprintf(f, "\"thresholds\": { \"steal_pct\": %g, \"other_cpu_pct\": %g, \"stall_s\": %g, ",
		NOISE_STEAL_PCT, NOISE_OTHER_CPU_PCT, NOISE_STALL_S);
	json_num_or_null(f, "overrun_s", n.overrun_limit_s, ", ");
	fprintf(f, "\"min_judged_s\": %g },\n    \"disturbed\": %s, \"reasons\": [",
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
		fprintf(f, "  \"netns\": null,\n");
		return;
	}
	fprintf(f, "  \"netns\": { \"private\": %s, \"user_namespace\": %s, \"device\": ",
		n->entered ? "true" : "false", n->user_ns ? "true" : "false");
	json_str(f, n->device[0] ? n->device : "lo");
	fprintf(f, ", ");
	json_offload(f, "tso", n->tso, ", ");
	json_offload(f, "gso", n->gso, ", ");
	json_offload(f, "gro", n->gro, ", ");
	if (n->mtu > 0)
		fprintf(f, "\"mtu\": %d },\n", n->mtu);
	else
		fprintf(f, "\"mtu\": null },\n");
}

/* Client 0's first connection as getsockopt saw it; null without a socket. */
static void json_socket(FILE *f, const struct socket_readback *s)
{
	if (!s->known) {
		fprintf(f, "  \"socket\": null,\n");
		return;
	}
	fprintf(f, "  \"socket\": { \"family\": ");
	json_str_or_null(f, family_name(s->family));
	fprintf(f, ", \"cc\": ");
	json_str_or_null(f, s->cc[0] ? s->cc : NULL);
	fprintf(f, ", \"nodelay\": %s, \"sndbuf\": %d, \"rcvbuf\": %d },\n",
		s->nodelay < 0 ? "null" : s->nodelay ? "true" : "false", s->sndbuf, s->rcvbuf);
}

static void json_body(FILE *f, const struct run_config *cfg, const struct report_options *ro,
		      const struct run_result *res, int argc, const char *const *argv)
{
	fprintf(f, "{\n  \"tbench_version\": ");
	json_str(f, version_line("tbench"));
	fprintf(f, ",\n");
	json_settings(f, cfg, res, argc, argv);
	json_netns(f, ro ? ro->netns : NULL);
	json_socket(f, &res->socket);
	json_result(f, cfg, res);
	json_cost(f, cfg, res);
	json_noise(f, cfg, res);
	json_backend_counters(f, cfg, res);
	fprintf(f, "  \"operations\": [");
	for (int i = 0, first = 1; i < OP_COUNT; i++) {
		if (res->op[i].count == 0 || i == OP_SLEEP)
			continue;
		fprintf(f, "%s\n    { \"name\": \"%s\", ", first ? "" : ",", smb_keyword(i));
		json_latency(f, &res->op[i]);
		fputs(" }", f);
		first = 0;
	}
	fprintf(f, "\n  ],\n  \"clients\": [");
	for (unsigned i = 0; i < res->nclients; i++) {
		const struct client_stats *c = &res->clients[i];
		fprintf(f, "%s\n    { \"id\": %u, \"payload_bytes\": %llu, \"payload_bytes_all_phases\": %llu, "
			"\"ops\": %llu, \"ops_all_phases\": %llu, \"passes\": %llu, \"mb_per_sec\": %.6f, "
			"\"cpu_user_s\": %.6f, \"cpu_system_s\": %.6f }",
			i ? "," : "", i, (unsigned long long)c->bytes, (unsigned long long)c->bytes_all,
			(unsigned long long)execute_ops(c), (unsigned long long)c->ops_all, (unsigned long long)c->passes,
			res->execute_secs > 0 ? c->bytes / 1e6 / res->execute_secs : 0,
			c->cpu_user, c->cpu_sys);
	}
	fprintf(f, "\n  ]\n}\n");
}

int report_json_open(struct json_out *j, const char *path, struct errbuf *err)
{
	memset(j, 0, sizeof(*j));
	size_t n = strlen(path) + 32;
	j->path = strdup(path);
	j->tmp = malloc(n);
	if (!j->path || !j->tmp) {
		report_json_discard(j);
		return err_set(err, "--json %s: out of memory", path);
	}
	snprintf(j->tmp, n, "%s.tmp.%ld", path, (long)getpid());
	j->f = fopen(j->tmp, "w");
	if (!j->f) {
		err_errno(err, "--json %s: cannot create %s (does the directory exist and is it "
			  "writable?)", path, j->tmp);
		report_json_discard(j);
		return -1;
	}
	return 0;
}

/* Written whole: the temporary file renamed over the target. */
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
		err_errno(err, "--json %s: writing %s", j->path, j->tmp);
		report_json_discard(j);
		return -1;
	}
	if (rename(j->tmp, j->path) < 0) {
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
