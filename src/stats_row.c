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
	COL_FIGURE = 4,         /* a number per run: summarized, compared, plotted */
	COL_POINT = 8,          /* with the knobs, names a point: backend, clients, model */
	COL_KNOB = 16,          /* a knob of the sweep: the value it asked for, "-" when not varied */
	COL_READBACK = 32,      /* a knob's value as read back: its column is "<knob>_read" */
};

/* A knob's read-back column is named by the knob and this. */
#define READBACK_SUFFIX "_read"

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
static char *offload_of(const struct row_input *in, const struct column *c);
static char *netns_of(const struct row_input *in, const struct column *c);
static char *wall_per_op_of(const struct row_input *in, const struct column *c);
static char *sum_of(const struct row_input *in, const struct column *c);
static char *not_available_of(const struct row_input *in, const struct column *c);
static char *disturbed_of(const struct row_input *in, const struct column *c);

#define PER_OP "cost.per_operation."
/* The JSON paths that sum_of adds up for a column of that rule, by name. */
static const struct {
	const char *column, *const paths[5];
} sums[] = {
	{ "cost_clients_cpu_us", { PER_OP "clients.cpu_user_us", PER_OP "clients.cpu_system_us" } },
	{ "cost_servers_cpu_us", { PER_OP "servers.cpu_user_us", PER_OP "servers.cpu_system_us" } },
	{ "cost_cpu_us", { PER_OP "clients.cpu_user_us", PER_OP "clients.cpu_system_us",
			   PER_OP "servers.cpu_user_us", PER_OP "servers.cpu_system_us" } },
};

/* The order of runs.csv. Up to rep they name a run in a sweep (its point
 * and repetition, with model); --resume matches them. The knobs are those
 * of tbench-sweep --vary: what the sweep asked for, "n/a" where a knob
 * does not apply to the backend; the sweep checks the read-back. */
static const struct column columns[] = {
	{ "backend", "settings.backend", COL_SET | COL_POINT, NULL },
	{ "clients", "settings.clients", COL_SET | COL_POINT, NULL },
	{ "offload", NULL, COL_SET | COL_KNOB, NULL },  /* TSO and GSO together: on, off, tso=on:... */
	{ "tso", NULL, COL_SET | COL_KNOB, NULL },
	{ "gso", NULL, COL_SET | COL_KNOB, NULL },
	{ "gro", NULL, COL_SET | COL_KNOB, NULL },
	{ "mtu", NULL, COL_SET | COL_KNOB, NULL },
	{ "cc", NULL, COL_SET | COL_KNOB, NULL },       /* TCP congestion control */
	{ "nodelay", NULL, COL_SET | COL_KNOB, NULL },
	{ "sndbuf", NULL, COL_SET | COL_KNOB, NULL },
	{ "rcvbuf", NULL, COL_SET | COL_KNOB, NULL },
	{ "family", NULL, COL_SET | COL_KNOB, NULL },   /* ipv4, ipv6 */
	{ "placement", NULL, COL_SET | COL_KNOB, NULL }, /* same, split, free */
	{ "rate", NULL, COL_SET | COL_KNOB, NULL },     /* tc tbf rate */
	{ "rep", NULL, COL_SET, NULL },
	{ "model", "settings.model", COL_SET | COL_POINT, model_of }, /* processes or threads */
	{ "procs", "settings.procs", 0, NULL },         /* client processes */
	{ "netns", "netns", 0, netns_of },              /* private, private+userns, host */
	{ "dev", "netns.device", COL_SET, NULL },       /* device whose offloads were set */
	/* Offloads as read back (on, off; "n/a" where no device carries the bytes). */
	{ "tso" READBACK_SUFFIX, "netns.tso", COL_SET | COL_READBACK, offload_of },
	{ "gso" READBACK_SUFFIX, "netns.gso", COL_SET | COL_READBACK, offload_of },
	{ "gro" READBACK_SUFFIX, "netns.gro", COL_SET | COL_READBACK, offload_of },
	{ "status", "result.status", 0, status_of },    /* ok, failed, interrupted */
	{ "partial", "result.partial", 0, NULL },
	{ "exit_code", NULL, COL_SET, NULL },
	{ "mb_per_sec", "result.mb_per_sec", COL_FIGURE, NULL },
	{ "ops_per_sec", "result.ops_per_sec", COL_FIGURE, NULL },
	/* the time one operation takes per client: clients * 1e6 / ops_per_sec */
	{ "wall_us_per_op", "result.ops_per_sec", COL_FIGURE, wall_per_op_of },
	{ "avg_ms", "result.latency.avg_ms", COL_FIGURE, NULL },
	{ "p99_ms", "result.latency.p99_ms", COL_FIGURE, NULL },
	{ "clients_user_s", "result.cpu.clients_user_s", COL_FIGURE, NULL },
	{ "clients_system_s", "result.cpu.clients_system_s", COL_FIGURE, NULL },
	{ "server_user_s", "result.cpu.others_user_s", COL_FIGURE, server_user_of },
	{ "server_system_s", "result.cpu.others_system_s", COL_FIGURE, server_system_of },
	{ "cpu_us_per_mb", "result.cpu.cpu_us_per_mb", COL_FIGURE, cpu_per_mb_of },
	{ "execute_s", "result.execute_s", 0, NULL },
	/* Per operation of the execute phase (tbench --cost; every --json has them). */
	{ "cost_operations", "cost.operations", 0, NULL },
	{ "cost_cpu_us", NULL, COL_FIGURE, sum_of },    /* clients + servers, user + system */
	{ "cost_clients_cpu_us", NULL, COL_FIGURE, sum_of },
	{ "cost_clients_cpu_user_us", PER_OP "clients.cpu_user_us", COL_FIGURE, NULL },
	{ "cost_clients_cpu_system_us", PER_OP "clients.cpu_system_us", COL_FIGURE, NULL },
	{ "cost_clients_voluntary_switches", PER_OP "clients.voluntary_switches", COL_FIGURE, NULL },
	{ "cost_clients_involuntary_switches", PER_OP "clients.involuntary_switches", COL_FIGURE, NULL },
	{ "cost_clients_tasks", PER_OP "clients.tasks", 0, NULL },
	{ "cost_servers_cpu_us", NULL, COL_FIGURE, sum_of },
	{ "cost_servers_cpu_user_us", PER_OP "servers.cpu_user_us", COL_FIGURE, NULL },
	{ "cost_servers_cpu_system_us", PER_OP "servers.cpu_system_us", COL_FIGURE, NULL },
	{ "cost_servers_voluntary_switches", PER_OP "servers.voluntary_switches", COL_FIGURE, NULL },
	{ "cost_servers_involuntary_switches", PER_OP "servers.involuntary_switches", COL_FIGURE, NULL },
	{ "cost_servers_tasks", PER_OP "servers.tasks", 0, NULL },
	{ "cost_task_clock_us", PER_OP "task_clock_us", COL_FIGURE, NULL },
	{ "cost_context_switches", PER_OP "context_switches", COL_FIGURE, NULL },
	{ "cost_cpu_migrations", PER_OP "cpu_migrations", COL_FIGURE, NULL },
	{ "cost_cycles", PER_OP "cycles", COL_FIGURE, NULL },
	{ "cost_instructions", PER_OP "instructions", COL_FIGURE, NULL },
	{ "cost_syscalls", PER_OP "syscalls", COL_FIGURE, NULL },
	{ "cost_segments_out", PER_OP "segments_out", COL_FIGURE, NULL },
	{ "cost_segments_in", PER_OP "segments_in", COL_FIGURE, NULL },
	{ "cost_retransmits", PER_OP "retransmits", COL_FIGURE, NULL },
	{ "cost_delayed_acks", PER_OP "delayed_acks", COL_FIGURE, NULL },
	{ "cost_dev_tx_packets", PER_OP "dev_tx_packets", COL_FIGURE, NULL },
	{ "cost_dev_tx_bytes", PER_OP "dev_tx_bytes", COL_FIGURE, NULL },
	{ "cost_dev_rx_packets", PER_OP "dev_rx_packets", COL_FIGURE, NULL },
	{ "cost_dev_rx_bytes", PER_OP "dev_rx_bytes", COL_FIGURE, NULL },
	{ "cost_payload_bytes_per_segment", PER_OP "payload_bytes_per_segment", COL_FIGURE, NULL },
	{ "cost_device", "cost.device", 0, NULL },      /* whose packets and bytes */
	/* "cycles: why; instructions: why" for the figures left empty */
	{ "cost_not_available", "cost.not_available", 0, not_available_of },
	/* What else the machine did during the execute phase (tbench's "noise"). */
	{ "noise_steal_pct", "noise.steal_pct", 0, NULL },        /* % of the CPU capacity */
	{ "noise_other_cpu_pct", "noise.other_cpu_pct", 0, NULL },
	{ "noise_outside_runnable", "noise.outside_runnable", 0, NULL },
	{ "noise_cpu_migrations", "noise.cpu_migrations", 0, NULL },
	{ "noise_freq_changed_cpus", "noise.cpu_freq.changed_cpus", 0, NULL },  /* empty: not exposed */
	{ "noise_longest_stall_s", "noise.longest_stall_s", 0, NULL },
	{ "noise_overrun_s", "noise.overrun_s", 0, NULL },
	/* "no", or the reasons joined by '+' (other_cpu+stall); empty: not known */
	{ "disturbed", "noise", 0, disturbed_of },
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

int row_col_is_figure(size_t i)
{
	return i < NCOLS && (columns[i].flags & COL_FIGURE);
}

const char *row_figure_column(const char *name)
{
	const struct column *c = column_named(name);
	if (c)
		return c->flags & COL_FIGURE ? c->name : NULL;
	for (size_t i = 0; i < NCOLS; i++)
		if ((columns[i].flags & COL_FIGURE) && !columns[i].rule && columns[i].json &&
		    strcmp(columns[i].json, name) == 0)
			return columns[i].name;
	return NULL;
}

int row_col_is_knob(size_t i)
{
	return i < NCOLS && (columns[i].flags & COL_KNOB);
}

int row_is_knob(const char *name)
{
	const struct column *c = column_named(name);
	return c && (c->flags & COL_KNOB);
}

void row_upgrade_table(struct table *t)
{
	for (size_t i = 0; i < NCOLS; i++) {
		const struct column *c = &columns[i];
		if (!(c->flags & COL_READBACK) || table_col(t, c->name) >= 0)
			continue;
		size_t len = strlen(c->name) - strlen(READBACK_SUFFIX);   /* the knob's name */
		for (size_t k = 0; k < t->ncols; k++)
			if (strlen(t->head[k]) == len && strncmp(t->head[k], c->name, len) == 0) {
				free(t->head[k]);
				t->head[k] = xstrdup(c->name);
			}
	}
}

struct strlist row_dimensions(const struct table *t)
{
	struct strlist l = { 0, xrealloc(NULL, NCOLS * sizeof(char *)) };
	for (size_t i = 0; i < NCOLS; i++)
		if ((columns[i].flags & COL_POINT) && table_col(t, columns[i].name) >= 0)
			l.v[l.n++] = xstrdup(columns[i].name);
	for (size_t i = 0; i < NCOLS; i++)
		if ((columns[i].flags & COL_KNOB) && table_col(t, columns[i].name) >= 0)
			l.v[l.n++] = xstrdup(columns[i].name);
	return l;
}

static int listed(const struct strlist *l, const char *name)
{
	for (size_t i = 0; i < l->n; i++)
		if (strcmp(l->v[i], name) == 0)
			return 1;
	return 0;
}

struct strlist row_carried(const struct table *t, const struct strlist *keys)
{
	struct strlist l = { 0, xrealloc(NULL, NCOLS * sizeof(char *)) };
	for (size_t i = 0; i < NCOLS; i++) {
		const struct column *c = &columns[i];
		if ((c->flags & (COL_POINT | COL_KNOB | COL_READBACK)) && table_col(t, c->name) >= 0 &&
		    !listed(keys, c->name))
			l.v[l.n++] = xstrdup(c->name);
	}
	return l;
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
 * other way round for COL_JSON_FIRST); a knob not given was not varied. */
static char *plain_value(const struct row_input *in, const struct column *c)
{
	const char *set = c->flags & COL_SET ? set_value(in, c->name) : NULL;
	const char *json = json_text(in, c->json);
	if (c->flags & COL_KNOB)
		return xstrdup(set ? set : ROW_NOT_VARIED);
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

/* A read-back offload: --set wins ("n/a" for a run whose bytes cross no
 * device); else the JSON's true/false as on/off, unknown (null) empty. */
static char *offload_of(const struct row_input *in, const struct column *c)
{
	const char *set = set_value(in, c->name), *json = json_text(in, c->json);
	if (set)
		return xstrdup(set);
	return xstrdup(strcmp(json, "true") == 0 ? "on" : strcmp(json, "false") == 0 ? "off" : "");
}

/* Where the run's bytes went: a network namespace of its own (and a user
 * namespace too), or the host's; empty for a tbench that does not say. */
static char *netns_of(const struct row_input *in, const struct column *c)
{
	const struct json_node *n = in->json ? json_get(in->json, c->json) : NULL;
	if (!n || n->type != JSON_OBJECT)
		return xstrdup("");
	if (strcmp(json_scalar_text(json_get(n, "private")), "true") != 0)
		return xstrdup("host");
	return xstrdup(strcmp(json_scalar_text(json_get(n, "user_namespace")), "true") == 0 ?
		       "private+userns" : "private");
}

static char *wall_per_op_of(const struct row_input *in, const struct column *c)
{
	double ops = json_num(in, c->json), clients = json_num(in, "settings.clients");
	return fmt("%.4f", ops > 0 && clients > 0 ? clients * 1e6 / ops : NAN);
}

/* The sum of the JSON figures that sums[] lists for this column; empty
 * when any of them is missing. */
static char *sum_of(const struct row_input *in, const struct column *c)
{
	for (size_t i = 0; i < sizeof(sums) / sizeof(sums[0]); i++) {
		if (strcmp(sums[i].column, c->name) != 0)
			continue;
		double total = 0;
		for (size_t k = 0; k < sizeof(sums[i].paths) / sizeof(sums[i].paths[0]) && sums[i].paths[k]; k++)
			total += json_num(in, sums[i].paths[k]);
		return fmt("%.4f", total);
	}
	return xstrdup("");
}

/* An object of "figure": "why" as "figure: why; figure: why". */
static char *not_available_of(const struct row_input *in, const struct column *c)
{
	const struct json_node *n = in->json ? json_get(in->json, c->json) : NULL;
	size_t len = 1;
	if (!n || n->type != JSON_OBJECT)
		return xstrdup("");
	for (size_t i = 0; i < n->nkids; i++)
		len += strlen(n->kids[i].key) + strlen(json_scalar_text(&n->kids[i])) + 4;
	char *out = xrealloc(NULL, len);
	out[0] = '\0';
	for (size_t i = 0; i < n->nkids; i++) {
		if (i)
			strcat(out, "; ");
		strcat(out, n->kids[i].key);
		strcat(out, ": ");
		strcat(out, json_scalar_text(&n->kids[i]));
	}
	return out;
}

/* The verdict of the run's "noise" object: "no", or its reasons joined by
 * '+'; empty for a run without one (older tbench, or nothing measured). */
static char *disturbed_of(const struct row_input *in, const struct column *c)
{
	const struct json_node *n = in->json ? json_get(in->json, c->json) : NULL;
	const struct json_node *d = n ? json_get(n, "disturbed") : NULL;
	const struct json_node *r = n ? json_get(n, "reasons") : NULL;
	if (!d || (d->type != JSON_TRUE && d->type != JSON_FALSE))
		return xstrdup("");
	if (d->type == JSON_FALSE)
		return xstrdup("no");
	size_t len = sizeof("yes");
	for (size_t i = 0; r && r->type == JSON_ARRAY && i < r->nkids; i++)
		len += strlen(json_scalar_text(&r->kids[i])) + 1;
	char *out = xrealloc(NULL, len);
	out[0] = '\0';
	for (size_t i = 0; r && r->type == JSON_ARRAY && i < r->nkids; i++) {
		if (i)
			strcat(out, "+");
		strcat(out, json_scalar_text(&r->kids[i]));
	}
	if (!out[0])
		strcpy(out, "yes");
	return out;
}

char **row_make(const struct row_input *in)
{
	char **cells = xrealloc(NULL, NCOLS * sizeof(*cells));
	for (size_t i = 0; i < NCOLS; i++)
		cells[i] = columns[i].rule ? columns[i].rule(in, &columns[i]) : plain_value(in, &columns[i]);
	return cells;
}

int row_disturbed(const char *cell)
{
	return cell[0] && strcmp(cell, "no") != 0;
}

void row_free(char **cells)
{
	if (!cells)
		return;
	for (size_t i = 0; i < NCOLS; i++)
		free(cells[i]);
	free(cells);
}
