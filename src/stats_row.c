/* The columns of runs.csv, each named once; see stats_row.h. */
#include "config.h"
#include "stats_row.h"
#include "table.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum {
	COL_SET = 1,            /* --set may give it; a given value wins over the JSON's */
	COL_JSON_FIRST = 2,     /* the JSON's value wins when it is not empty */
};

struct column {
	const char *name;
	const char *json;       /* dotted path in the run's JSON, or NULL */
	unsigned flags;
	char *(*rule)(const struct row_input *in, const struct column *c);  /* when worked out */
};

static char *model_of(const struct row_input *in, const struct column *c);
static char *status_of(const struct row_input *in, const struct column *c);
static char *server_user_of(const struct row_input *in, const struct column *c);
static char *server_system_of(const struct row_input *in, const struct column *c);
static char *cpu_per_mb_of(const struct row_input *in, const struct column *c);

/* The order of runs.csv. The first four name a run in a sweep (its point
 * and repetition); --resume matches them. */
static const struct column columns[] = {
	{ "backend", "settings.backend", COL_SET, NULL },
	{ "clients", "settings.clients", COL_SET, NULL },
	{ "offload", NULL, COL_SET, NULL },             /* the sweep's setting: on, off, tso=on:... */
	{ "rep", NULL, COL_SET, NULL },
	{ "model", "settings.model", COL_SET, model_of }, /* processes or threads */
	{ "procs", "settings.procs", 0, NULL },         /* client processes */
	{ "dev", NULL, COL_SET, NULL },                 /* device whose offloads were set */
	{ "tso", NULL, COL_SET, NULL },                 /* offloads as read back */
	{ "gso", NULL, COL_SET, NULL },
	{ "gro", NULL, COL_SET, NULL },
	{ "status", "result.status", 0, status_of },    /* ok, failed, interrupted */
	{ "partial", "result.partial", 0, NULL },
	{ "exit_code", NULL, COL_SET, NULL },
	{ "mb_per_sec", "result.mb_per_sec", 0, NULL },
	{ "ops_per_sec", "result.ops_per_sec", 0, NULL },
	{ "avg_ms", "result.latency.avg_ms", 0, NULL },
	{ "p99_ms", "result.latency.p99_ms", 0, NULL },
	{ "clients_user_s", "result.cpu.clients_user_s", 0, NULL },
	{ "clients_system_s", "result.cpu.clients_system_s", 0, NULL },
	{ "server_user_s", "result.cpu.others_user_s", 0, server_user_of },
	{ "server_system_s", "result.cpu.others_system_s", 0, server_system_of },
	{ "cpu_us_per_mb", "result.cpu.cpu_us_per_mb", 0, cpu_per_mb_of },
	{ "execute_s", "result.execute_s", 0, NULL },
	{ "started", NULL, COL_SET, NULL },             /* ISO 8601 */
	{ "json", NULL, COL_SET, NULL },                /* the JSON's path in the sweep */
	{ "error", "result.error", COL_SET | COL_JSON_FIRST, NULL },
};
enum { NCOLS = sizeof(columns) / sizeof(columns[0]) };

size_t row_ncols(void)
{
	return NCOLS;
}

const char *row_col_name(size_t i)
{
	return i < NCOLS ? columns[i].name : NULL;
}

static const struct column *column_named(const char *name)
{
	for (size_t i = 0; i < NCOLS; i++)
		if (strcmp(columns[i].name, name) == 0)
			return &columns[i];
	return NULL;
}

int row_col_settable(const char *name)
{
	const struct column *c = column_named(name);
	return c && (c->flags & COL_SET);
}

/* ---- where values come from ---------------------------------------------------- */

static const char *set_value(const struct row_input *in, const char *name)
{
	const char *v = NULL;
	for (size_t i = 0; i < in->nset; i++)
		if (strcmp(in->set[i].name, name) == 0)
			v = in->set[i].value;
	return v;
}

static const char *json_text(const struct row_input *in, const char *path)
{
	return in->json && path ? json_scalar_text(json_get(in->json, path)) : "";
}

/* A JSON number, NaN when absent, null or not a number. */
static double json_num(const struct row_input *in, const char *path)
{
	const struct json_node *n = in->json ? json_get(in->json, path) : NULL;
	return n && n->type == JSON_NUMBER ? n->num : NAN;
}

static char *fmt(const char *format, double v)
{
	char buf[64];
	if (!isfinite(v))
		return xstrdup("");
	snprintf(buf, sizeof(buf), format, v);
	return xstrdup(buf);
}

/* A column without a rule: --set first, the JSON's value otherwise (or the
 * other way round for COL_JSON_FIRST). */
static char *plain_value(const struct row_input *in, const struct column *c)
{
	const char *set = c->flags & COL_SET ? set_value(in, c->name) : NULL;
	const char *json = json_text(in, c->json);
	if (c->flags & COL_JSON_FIRST)
		return xstrdup(*json || !set ? json : set);
	return xstrdup(set ? set : json);
}

/* The JSON's model; a tbench older than it says "processes": true/false;
 * a run without JSON has the model the sweep asked for, if it says. */
static char *model_of(const struct row_input *in, const struct column *c)
{
	const struct json_node *p = in->json ? json_get(in->json, "settings.processes") : NULL;
	const char *set = set_value(in, c->name);
	if (*json_text(in, c->json))
		return xstrdup(json_text(in, c->json));
	if (p && (p->type == JSON_TRUE || p->type == JSON_FALSE))
		return xstrdup(p->type == JSON_TRUE ? "processes" : "threads");
	return xstrdup(set ? set : "");
}

/* ok only when tbench said ok and exited 0; a run without JSON failed. */
static char *status_of(const struct row_input *in, const struct column *c)
{
	const char *exit_code = set_value(in, "exit_code");
	const char *said = json_text(in, c->json);
	if (!in->json)
		return xstrdup("failed");
	if (strcmp(said, "ok") == 0)
		return xstrdup(!exit_code || strcmp(exit_code, "0") == 0 ? "ok" : "failed");
	return xstrdup(strcmp(said, "interrupted") == 0 ? "interrupted" : "failed");
}

static char *server_cpu(const struct row_input *in, const struct column *c, int which)
{
	if (!in->server_cpu_measured)
		return xstrdup(json_text(in, c->json));
	return fmt("%.6f", in->server_end[which] - in->server_start[which]);
}

static char *server_user_of(const struct row_input *in, const struct column *c)
{
	return server_cpu(in, c, 0);
}

static char *server_system_of(const struct row_input *in, const struct column *c)
{
	return server_cpu(in, c, 1);
}

/* With a server outside tbench measured, its CPU joins tbench's own:
 * CPU microseconds per MB of payload over all phases. */
static char *cpu_per_mb_of(const struct row_input *in, const struct column *c)
{
	if (!in->server_cpu_measured)
		return xstrdup(json_text(in, c->json));
	double mb = json_num(in, "result.payload_bytes_all_phases") / 1e6;
	double cpu = json_num(in, "result.cpu.user_s") + json_num(in, "result.cpu.system_s") +
		     in->server_end[0] - in->server_start[0] + in->server_end[1] - in->server_start[1];
	return fmt("%.3f", mb > 0 ? cpu * 1e6 / mb : NAN);
}

char **row_make(const struct row_input *in)
{
	char **cells = xrealloc(NULL, NCOLS * sizeof(*cells));
	for (size_t i = 0; i < NCOLS; i++)
		cells[i] = columns[i].rule ? columns[i].rule(in, &columns[i]) : plain_value(in, &columns[i]);
	return cells;
}

void row_free(char **cells)
{
	if (!cells)
		return;
	for (size_t i = 0; i < NCOLS; i++)
		free(cells[i]);
	free(cells);
}
