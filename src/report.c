/* Output in dbench 4.0's tbench format, so that mmtests' and LKP's parsers
 * keep working, plus a p99 column and the --json document. */
#include "config.h"
#include "report.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static double ms(uint64_t ns)
{
	return ns / 1e6;
}

double result_mb_per_sec(const struct run_result *res)
{
	return res->execute_secs > 0 ? 1e-6 * res->bytes / res->execute_secs : 0;
}

void report_progress(FILE *f, const char *phase, unsigned nclients, unsigned long long ops_per_client,
		     double mb_per_sec, double secs, double latency_ms)
{
	fprintf(f, "%4u  %8llu  %7.2f MB/sec  %s %3.0f sec  latency %.03f ms\n",
		nclients, ops_per_client, mb_per_sec, phase, secs, latency_ms);
	fflush(f);
}

void report_cleanup(FILE *f, unsigned nclients, double secs)
{
	fprintf(f, "%4u  cleanup %3.0f sec\n", nclients, secs);
	fflush(f);
}

void report_summary(FILE *f, const struct run_config *cfg, const struct run_result *res)
{
	fprintf(f, "\n Operation      Count    AvgLat    MaxLat    P99Lat\n");
	fprintf(f, " --------------------------------------------------\n");
	for (int i = 0; i < OP_COUNT; i++) {
		const struct histogram *h = &res->op[i];
		if (h->count == 0)
			continue;
		fprintf(f, " %-12s %7llu %9.03f %9.03f %9.03f\n", smb_report_name(i),
			(unsigned long long)h->count, hist_mean_ns(h) / 1e6, ms(h->max_ns),
			ms(hist_quantile(h, 0.99)));
	}
	fprintf(f, "\nThroughput %g MB/sec  %u clients  %u procs  max_latency=%.03f ms\n",
		result_mb_per_sec(res), cfg->bcfg.nclients, cfg->bcfg.processes ? cfg->bcfg.nclients : 1,
		ms(res->all.max_ns));
	fflush(f);
}

/* JSON string with the escapes RFC 8259 requires. */
static void json_str(FILE *f, const char *s)
{
	fputc('"', f);
	for (; s && *s; s++) {
		unsigned char c = (unsigned char)*s;
		if (c == '"' || c == '\\')
			fprintf(f, "\\%c", c);
		else if (c < 0x20)
			fprintf(f, "\\u%04x", c);
		else
			fputc(c, f);
	}
	fputc('"', f);
}

static void json_latency(FILE *f, const struct histogram *h)
{
	fprintf(f, "\"count\": %llu, \"avg_ms\": %.6f, \"p50_ms\": %.6f, \"p99_ms\": %.6f, "
		"\"p999_ms\": %.6f, \"max_ms\": %.6f",
		(unsigned long long)h->count, hist_mean_ns(h) / 1e6, ms(hist_quantile(h, 0.50)),
		ms(hist_quantile(h, 0.99)), ms(hist_quantile(h, 0.999)), ms(h->max_ns));
}

static void json_settings(FILE *f, const struct run_config *cfg, int argc, const char *const *argv)
{
	fprintf(f, "  \"settings\": {\n    \"backend\": ");
	json_str(f, cfg->backend->name);
	fprintf(f, ",\n    \"clients\": %u,\n    \"loadfile\": ", cfg->bcfg.nclients);
	json_str(f, cfg->lf->path);
	fprintf(f, ",\n    \"loadfile_ops\": %zu,\n    \"loadfile_pass_bytes\": %llu,\n",
		cfg->lf->n_ops, (unsigned long long)cfg->lf->pass_payload);
	fprintf(f, "    \"timelimit_s\": %g,\n    \"warmup_s\": %g,\n    \"target_rate_mb_s\": %g,\n",
		cfg->timelimit, cfg->warmup, cfg->target_rate);
	fprintf(f, "    \"processes\": %s,\n    \"run_once\": %s,\n    \"server\": ",
		cfg->bcfg.processes ? "true" : "false", cfg->run_once ? "true" : "false");
	if (cfg->bcfg.server)
		json_str(f, cfg->bcfg.server);
	else
		fputs("null", f);
	fprintf(f, ",\n    \"command\": [");
	for (int i = 0; i < argc; i++) {
		fputs(i ? ", " : "", f);
		json_str(f, argv[i]);
	}
	fprintf(f, "]\n  },\n");
}

static void json_result(FILE *f, const struct run_result *res)
{
	static const char *const status[] = { "ok", "failed", "interrupted" };
	double cpu = res->cpu_user + res->cpu_sys;

	fprintf(f, "  \"result\": {\n    \"status\": \"%s\",\n    \"error\": ", status[res->status]);
	json_str(f, res->error);
	fprintf(f, ",\n    \"mb_per_sec\": %.6f,\n    \"ops_per_sec\": %.3f,\n",
		result_mb_per_sec(res), res->execute_secs > 0 ? res->ops / res->execute_secs : 0);
	fprintf(f, "    \"execute_s\": %.6f,\n    \"total_s\": %.6f,\n", res->execute_secs, res->total_secs);
	fprintf(f, "    \"payload_bytes\": %llu,\n    \"payload_bytes_all_phases\": %llu,\n    \"ops\": %llu,\n",
		(unsigned long long)res->bytes, (unsigned long long)res->bytes_all,
		(unsigned long long)res->ops);
	fprintf(f, "    \"latency\": { ");
	json_latency(f, &res->all);
	fprintf(f, " },\n    \"cpu\": { \"user_s\": %.6f, \"system_s\": %.6f, "
		"\"clients_user_s\": %.6f, \"clients_system_s\": %.6f, "
		"\"others_user_s\": %.6f, \"others_system_s\": %.6f, \"cpu_us_per_mb\": %.3f }\n  },\n",
		res->cpu_user, res->cpu_sys, res->cpu_clients_user, res->cpu_clients_sys,
		res->cpu_user - res->cpu_clients_user, res->cpu_sys - res->cpu_clients_sys,
		res->bytes_all ? cpu * 1e6 / (res->bytes_all / 1e6) : 0);
}

static void json_body(FILE *f, const struct run_config *cfg, const struct run_result *res,
		      int argc, const char *const *argv)
{
	fprintf(f, "{\n  \"tbench_version\": \"%s\",\n", PACKAGE_VERSION);
	json_settings(f, cfg, argc, argv);
	json_result(f, res);
	fprintf(f, "  \"operations\": [");
	for (int i = 0, first = 1; i < OP_COUNT; i++) {
		if (res->op[i].count == 0)
			continue;
		fprintf(f, "%s\n    { \"name\": \"%s\", ", first ? "" : ",", smb_report_name(i));
		json_latency(f, &res->op[i]);
		fputs(" }", f);
		first = 0;
	}
	fprintf(f, "\n  ],\n  \"clients\": [");
	for (unsigned i = 0; i < res->nclients; i++) {
		const struct client_stats *c = &res->clients[i];
		fprintf(f, "%s\n    { \"id\": %u, \"payload_bytes\": %llu, \"payload_bytes_all_phases\": %llu, "
			"\"ops_all_phases\": %llu, \"passes\": %llu, \"mb_per_sec\": %.6f, "
			"\"cpu_user_s\": %.6f, \"cpu_system_s\": %.6f }",
			i ? "," : "", i, (unsigned long long)c->bytes, (unsigned long long)c->bytes_all,
			(unsigned long long)c->ops_all, (unsigned long long)c->passes,
			res->execute_secs > 0 ? c->bytes / 1e6 / res->execute_secs : 0,
			c->cpu_user, c->cpu_sys);
	}
	fprintf(f, "\n  ]\n}\n");
}

/* Written whole: a temporary file renamed over the target. */
int report_json(const char *path, const struct run_config *cfg, const struct run_result *res,
		int argc, const char *const *argv, struct errbuf *err)
{
	char tmp[4096];

	if (snprintf(tmp, sizeof(tmp), "%s.tmp.%ld", path, (long)getpid()) >= (int)sizeof(tmp))
		return err_set(err, "--json %s: path too long", path);
	FILE *f = fopen(tmp, "w");
	if (!f)
		return err_errno(err, "--json %s: cannot create %s", path, tmp);
	json_body(f, cfg, res, argc, argv);
	if (ferror(f) | fclose(f)) {
		err_errno(err, "--json %s: writing %s", path, tmp);
		unlink(tmp);
		return -1;
	}
	if (rename(tmp, path) < 0) {
		err_errno(err, "--json %s: renaming %s", path, tmp);
		unlink(tmp);
		return -1;
	}
	return 0;
}
