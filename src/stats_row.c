/* The columns of runs.csv, each named once; see stats_row.h. */
#include "config.h"
#include "stats_row.h"
#include "schema.h"
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
	COL_WAS_KNOB_NAME = 64, /* a read-back that older tables name as its knob (tso for tso_read) */
};

/* A knob's read-back column is named by the knob and this. */
#define READBACK_SUFFIX "_read"

struct column {
	const char *name;
	enum jpath json;        /* where in the run's JSON (schema.h), or JP_NONE */
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
static char *inject_of(const struct row_input *in, const struct column *c);
static char *sysctls_of(const struct row_input *in, const struct column *c);
static char *copy_replies_of(const struct row_input *in, const struct column *c);

/* The JSON paths that sum_of adds up for a column of that rule, by name. */
static const struct {
	const char *column;
	const enum jpath paths[5];
} sums[] = {
	{ "cost_clients_cpu_us", { JP_PER_OP_CLIENTS_CPU_USER_US, JP_PER_OP_CLIENTS_CPU_SYSTEM_US } },
	{ "cost_servers_cpu_us", { JP_PER_OP_SERVERS_CPU_USER_US, JP_PER_OP_SERVERS_CPU_SYSTEM_US } },
	{ "cost_cpu_us", { JP_PER_OP_CLIENTS_CPU_USER_US, JP_PER_OP_CLIENTS_CPU_SYSTEM_US,
			   JP_PER_OP_SERVERS_CPU_USER_US, JP_PER_OP_SERVERS_CPU_SYSTEM_US } },
};

/* --trace's columns: "trace_clients_user_us", "trace_servers_sys_futex_us"
 * (schema.h's TRACE_SIDE_FIGURES and TRACE_SYSCALL_GROUPS, each side). */
#define TRACE_FIGURE_COLUMN(side, key) "trace_" side "_" key
#define TRACE_GROUP_COLUMN(side, key) "trace_" side "_sys_" key "_us"
#define TRACE_FIGURE_ENTRY(a, SIDE, side, ID, KEY, PART) \
	{ TRACE_FIGURE_COLUMN(side, KEY), JP_TRACE_##SIDE##_##ID, COL_FIGURE, NULL },
#define TRACE_GROUP_ENTRY(a, SIDE, side, ID, KEY, LABEL) \
	{ TRACE_GROUP_COLUMN(side, KEY), JP_TRACE_##SIDE##_SYS_##ID, COL_FIGURE, NULL },
#define TRACE_SIDE_ENTRIES(a, SIDE, side) \
	TRACE_SIDE_FIGURES(TRACE_FIGURE_ENTRY, a, SIDE, side) \
	TRACE_SYSCALL_GROUPS(TRACE_GROUP_ENTRY, a, SIDE, side)

/* The order of runs.csv. Up to rep they name a run in a sweep (its point
 * and repetition, with model); --resume matches them. The knobs are those
 * of tbench-sweep --vary: what the sweep asked for, "n/a" where a knob
 * does not apply to the backend; the sweep checks the read-back. */
static const struct column columns[] = {
	{ "backend", JP_SETTINGS_BACKEND, COL_SET | COL_POINT, NULL },
	{ "clients", JP_SETTINGS_CLIENTS, COL_SET | COL_POINT, NULL },
	{ "offload", JP_NONE, COL_SET | COL_KNOB, NULL },  /* TSO and GSO together: on, off, tso=on:... */
	{ "tso", JP_NONE, COL_SET | COL_KNOB, NULL },
	{ "gso", JP_NONE, COL_SET | COL_KNOB, NULL },
	{ "gro", JP_NONE, COL_SET | COL_KNOB, NULL },
	{ "mtu", JP_NONE, COL_SET | COL_KNOB, NULL },
	{ "cc", JP_NONE, COL_SET | COL_KNOB, NULL },       /* TCP congestion control */
	{ "nodelay", JP_NONE, COL_SET | COL_KNOB, NULL },
	{ "sndbuf", JP_NONE, COL_SET | COL_KNOB, NULL },
	{ "rcvbuf", JP_NONE, COL_SET | COL_KNOB, NULL },
	{ "family", JP_NONE, COL_SET | COL_KNOB, NULL },   /* ipv4, ipv6 */
	{ "placement", JP_NONE, COL_SET | COL_KNOB, NULL }, /* same, split, free */
	{ "rate", JP_NONE, COL_SET | COL_KNOB, NULL },     /* tc tbf rate */
	/* tbench --inject-ns: a known cost per exchange, to calibrate a study */
	{ "inject_ns", JP_SETTINGS_INJECT_NS, COL_SET | COL_KNOB, inject_of },
	/* tbench --copy-replies: tcp's reply bodies copied as unix's are (like with like) */
	{ "copy_replies", JP_SETTINGS_COPY_REPLIES, COL_SET | COL_KNOB, copy_replies_of },
	/* tbench --netns --sysctl: "name=value;name=value" as asked, in that order */
	{ "sysctl", JP_NETNS_SYSCTLS, COL_SET | COL_KNOB, sysctls_of },
	{ "rep", JP_NONE, COL_SET, NULL },
	{ "model", JP_SETTINGS_MODEL, COL_SET | COL_POINT, model_of }, /* processes or threads */
	{ "procs", JP_SETTINGS_PROCS, 0, NULL },         /* client processes */
	{ "netns", JP_NETNS, 0, netns_of },              /* private, private+userns, host */
	{ "dev", JP_NETNS_DEVICE, COL_SET, NULL },       /* device whose offloads were set */
	/* Offloads as read back (on, off; "n/a" where no device carries the bytes). */
	{ "tso" READBACK_SUFFIX, JP_NETNS_TSO, COL_SET | COL_READBACK | COL_WAS_KNOB_NAME,
	  offload_of },
	{ "gso" READBACK_SUFFIX, JP_NETNS_GSO, COL_SET | COL_READBACK | COL_WAS_KNOB_NAME,
	  offload_of },
	{ "gro" READBACK_SUFFIX, JP_NETNS_GRO, COL_SET | COL_READBACK | COL_WAS_KNOB_NAME,
	  offload_of },
	/* tbench --sysctl in its namespace, as read back: "name=value;name=value" */
	{ "sysctl" READBACK_SUFFIX, JP_NETNS_SYSCTLS, COL_READBACK, sysctls_of },
	{ "status", JP_RESULT_STATUS, 0, status_of },    /* ok, failed, interrupted */
	{ "partial", JP_RESULT_PARTIAL, 0, NULL },
	{ "exit_code", JP_NONE, COL_SET, NULL },
	{ "mb_per_sec", JP_RESULT_MB_PER_SEC, COL_FIGURE, NULL },
	{ "ops_per_sec", JP_RESULT_OPS_PER_SEC, COL_FIGURE, NULL },
	/* the time one operation takes per client: clients * 1e6 / ops_per_sec */
	{ "wall_us_per_op", JP_RESULT_OPS_PER_SEC, COL_FIGURE, wall_per_op_of },
	{ "avg_ms", JP_LATENCY_AVG_MS, COL_FIGURE, NULL },
	{ "p99_ms", JP_LATENCY_P99_MS, COL_FIGURE, NULL },
	{ "clients_user_s", JP_CPU_CLIENTS_USER_S, COL_FIGURE, NULL },
	{ "clients_system_s", JP_CPU_CLIENTS_SYSTEM_S, COL_FIGURE, NULL },
	{ "server_user_s", JP_CPU_OTHERS_USER_S, COL_FIGURE, server_user_of },
	{ "server_system_s", JP_CPU_OTHERS_SYSTEM_S, COL_FIGURE, server_system_of },
	{ "cpu_us_per_mb", JP_CPU_US_PER_MB, COL_FIGURE, cpu_per_mb_of },
	{ "execute_s", JP_RESULT_EXECUTE_S, 0, NULL },
	/* Per operation of the execute phase (tbench --cost; every --json has them). */
	{ "cost_operations", JP_COST_OPERATIONS, 0, NULL },
	{ "cost_cpu_us", JP_NONE, COL_FIGURE, sum_of },    /* clients + servers, user + system */
	{ "cost_clients_cpu_us", JP_NONE, COL_FIGURE, sum_of },
	{ "cost_clients_cpu_user_us", JP_PER_OP_CLIENTS_CPU_USER_US, COL_FIGURE, NULL },
	{ "cost_clients_cpu_system_us", JP_PER_OP_CLIENTS_CPU_SYSTEM_US, COL_FIGURE, NULL },
	{ "cost_clients_voluntary_switches", JP_PER_OP_CLIENTS_VOLUNTARY_SWITCHES, COL_FIGURE, NULL },
	{ "cost_clients_involuntary_switches", JP_PER_OP_CLIENTS_INVOLUNTARY_SWITCHES, COL_FIGURE, NULL },
	{ "cost_clients_tasks", JP_PER_OP_CLIENTS_TASKS, 0, NULL },
	{ "cost_servers_cpu_us", JP_NONE, COL_FIGURE, sum_of },
	{ "cost_servers_cpu_user_us", JP_PER_OP_SERVERS_CPU_USER_US, COL_FIGURE, NULL },
	{ "cost_servers_cpu_system_us", JP_PER_OP_SERVERS_CPU_SYSTEM_US, COL_FIGURE, NULL },
	{ "cost_servers_voluntary_switches", JP_PER_OP_SERVERS_VOLUNTARY_SWITCHES, COL_FIGURE, NULL },
	{ "cost_servers_involuntary_switches", JP_PER_OP_SERVERS_INVOLUNTARY_SWITCHES, COL_FIGURE, NULL },
	{ "cost_servers_tasks", JP_PER_OP_SERVERS_TASKS, 0, NULL },
	{ "cost_task_clock_us", JP_PER_OP_TASK_CLOCK_US, COL_FIGURE, NULL },
	{ "cost_context_switches", JP_PER_OP_CONTEXT_SWITCHES, COL_FIGURE, NULL },
	{ "cost_cpu_migrations", JP_PER_OP_CPU_MIGRATIONS, COL_FIGURE, NULL },
	{ "cost_cycles", JP_PER_OP_CYCLES, COL_FIGURE, NULL },
	{ "cost_instructions", JP_PER_OP_INSTRUCTIONS, COL_FIGURE, NULL },
	{ "cost_syscalls", JP_PER_OP_SYSCALLS, COL_FIGURE, NULL },
	{ "cost_segments_out", JP_PER_OP_SEGMENTS_OUT, COL_FIGURE, NULL },
	{ "cost_segments_in", JP_PER_OP_SEGMENTS_IN, COL_FIGURE, NULL },
	{ "cost_retransmits", JP_PER_OP_RETRANSMITS, COL_FIGURE, NULL },
	{ "cost_delayed_acks", JP_PER_OP_DELAYED_ACKS, COL_FIGURE, NULL },
	{ "cost_dev_tx_packets", JP_PER_OP_DEV_TX_PACKETS, COL_FIGURE, NULL },
	{ "cost_dev_tx_bytes", JP_PER_OP_DEV_TX_BYTES, COL_FIGURE, NULL },
	{ "cost_dev_rx_packets", JP_PER_OP_DEV_RX_PACKETS, COL_FIGURE, NULL },
	{ "cost_dev_rx_bytes", JP_PER_OP_DEV_RX_BYTES, COL_FIGURE, NULL },
	{ "cost_payload_bytes_per_segment", JP_PER_OP_PAYLOAD_BYTES_PER_SEGMENT, COL_FIGURE, NULL },
	{ "cost_device", JP_COST_DEVICE, 0, NULL },      /* whose packets and bytes */
	/* "cycles: why; instructions: why" for the figures left empty */
	{ "cost_not_available", JP_COST_NOT_AVAILABLE, 0, not_available_of },
	/* What else the machine did during the execute phase (tbench's "noise"). */
	{ "noise_steal_pct", JP_NOISE_STEAL_PCT, 0, NULL },        /* % of the CPU capacity */
	{ "noise_other_cpu_pct", JP_NOISE_OTHER_CPU_PCT, 0, NULL },
	{ "noise_outside_runnable", JP_NOISE_OUTSIDE_RUNNABLE, 0, NULL },
	{ "noise_cpu_migrations", JP_NOISE_CPU_MIGRATIONS, 0, NULL },
	{ "noise_freq_changed_cpus", JP_NOISE_FREQ_CHANGED_CPUS, 0, NULL },  /* empty: not exposed */
	{ "noise_longest_stall_s", JP_NOISE_LONGEST_STALL_S, 0, NULL },
	{ "noise_overrun_s", JP_NOISE_OVERRUN_S, 0, NULL },
	/* "no", or the reasons joined by '+' (other_cpu+stall); empty: not known */
	{ "disturbed", JP_NOISE, 0, disturbed_of },
	/* Where each side's tasks spent the execute phase, per operation (tbench
	 * --trace); empty for a run without it. */
	{ "trace_reconciled_ratio", JP_TRACE_RECONCILED_RATIO, 0, NULL },
	{ "trace_softirq_net_rx_us", JP_TRACE_NET_RX_US, COL_FIGURE, NULL },  /* every CPU's */
	{ "trace_softirq_net_tx_us", JP_TRACE_NET_TX_US, COL_FIGURE, NULL },
	TRACE_SIDE_KEYS(TRACE_SIDE_ENTRIES, _)
	{ "started", JP_NONE, COL_SET, NULL },             /* ISO 8601 */
	/* The sweep's sitting (one boot, one stretch of time: e.g. boot id and
	 * start time); a merged dataset keeps each sweep's. Runs of two or
	 * more sittings are blocks of the interval (stats_blocks.h). */
	{ "sitting", JP_NONE, COL_SET, NULL },
	{ "json", JP_NONE, COL_SET, NULL },                /* the JSON's path in the sweep */
	{ "error", JP_RESULT_ERROR, COL_SET | COL_JSON_FIRST, NULL },
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
		    strcmp(jpath(columns[i].json), name) == 0)
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
		if (!(c->flags & COL_WAS_KNOB_NAME) || table_col(t, c->name) >= 0)
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

/* A side's figures and groups of system calls, in schema.h's order. */
static const struct trace_part {
	const char *side, *key, *column, *label;
} trace_figures[] = {
#define TRACE_FIGURE_PART(a, SIDE, side, ID, KEY, PART) { side, KEY, TRACE_FIGURE_COLUMN(side, KEY), PART },
#define TRACE_FIGURE_PARTS(a, SIDE, side) TRACE_SIDE_FIGURES(TRACE_FIGURE_PART, a, SIDE, side)
	TRACE_SIDE_KEYS(TRACE_FIGURE_PARTS, _)
}, trace_groups[] = {
#define TRACE_GROUP_PART(a, SIDE, side, ID, KEY, LABEL) { side, KEY, TRACE_GROUP_COLUMN(side, KEY), LABEL },
#define TRACE_GROUP_PARTS(a, SIDE, side) TRACE_SYSCALL_GROUPS(TRACE_GROUP_PART, a, SIDE, side)
	TRACE_SIDE_KEYS(TRACE_GROUP_PARTS, _)
};

/* Each figure with a part, but in place of syscall_us its side's groups. */
size_t row_trace_parts(struct row_part *out, size_t max)
{
	size_t n = 0;
	for (size_t i = 0; i < sizeof(trace_figures) / sizeof(trace_figures[0]); i++) {
		const struct trace_part *f = &trace_figures[i];
		if (strcmp(f->key, SK_SYSCALL_US) != 0) {
			if (f->label && n < max)
				out[n++] = (struct row_part){ f->side, f->column, f->label };
			continue;
		}
		for (size_t g = 0; g < sizeof(trace_groups) / sizeof(trace_groups[0]); g++)
			if (strcmp(trace_groups[g].side, f->side) == 0 && n < max)
				out[n++] = (struct row_part){ f->side, trace_groups[g].column, trace_groups[g].label };
	}
	return n;
}

/* The figures without a part: each side's counts (wake-ups), by their keys. */
size_t row_trace_counts(struct row_part *out, size_t max)
{
	size_t n = 0;
	for (size_t i = 0; i < sizeof(trace_figures) / sizeof(trace_figures[0]); i++)
		if (!trace_figures[i].label && n < max)
			out[n++] = (struct row_part){ trace_figures[i].side, trace_figures[i].column,
						      trace_figures[i].key };
	return n;
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

static const char *json_text(const struct row_input *in, enum jpath path)
{
	return json_scalar_text(jget(in->json, path));
}

/* A JSON number, NaN when absent, null or not a number. */
static double json_num(const struct row_input *in, enum jpath path)
{
	const struct json_node *n = jget(in->json, path);
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
	const struct json_node *p = jget(in->json, JP_SETTINGS_PROCESSES);
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
	double mb = json_num(in, JP_RESULT_PAYLOAD_BYTES_ALL_PHASES) / 1e6;
	double cpu = json_num(in, JP_CPU_USER_S) + json_num(in, JP_CPU_SYSTEM_S) +
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
	const struct json_node *n = jget(in->json, c->json);
	if (!n || n->type != JSON_OBJECT)
		return xstrdup("");
	if (strcmp(json_text(in, JP_NETNS_PRIVATE), "true") != 0)
		return xstrdup("host");
	return xstrdup(strcmp(json_text(in, JP_NETNS_USER_NAMESPACE), "true") == 0 ?
		       "private+userns" : "private");
}

static char *wall_per_op_of(const struct row_input *in, const struct column *c)
{
	double ops = json_num(in, c->json), clients = json_num(in, JP_SETTINGS_CLIENTS);
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
		return fmt("%.6g", total);   /* nop's 0.1 µs keeps its digits */
	}
	return xstrdup("");
}

/* An object of "figure": "why" as "figure: why; figure: why". */
static char *not_available_of(const struct row_input *in, const struct column *c)
{
	const struct json_node *n = jget(in->json, c->json);
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
	const struct json_node *d = jget(in->json, JP_NOISE_DISTURBED);
	(void)c;                /* its object's members are named */
	const struct json_node *r = jget(in->json, JP_NOISE_REASONS);
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

/* --inject-ns as the sweep asked; a run given it by hand says so in its
 * JSON; none (0, or a tbench that does not say) is not varied. */
static char *inject_of(const struct row_input *in, const struct column *c)
{
	const char *set = set_value(in, c->name), *json = json_text(in, c->json);
	if (set)
		return xstrdup(set);
	return xstrdup(*json && strcmp(json, "0") != 0 ? json : ROW_NOT_VARIED);
}

/* --copy-replies as the sweep asked; a run given it by hand says "on" (its
 * JSON's settings.copy_replies); without it, not varied. */
static char *copy_replies_of(const struct row_input *in, const struct column *c)
{
	const char *set = set_value(in, c->name);
	if (set)
		return xstrdup(set);
	return xstrdup(strcmp(json_text(in, c->json), "true") == 0 ? "on" : ROW_NOT_VARIED);
}

/* netns.sysctls as "name=value;name=value": the values asked for (the
 * knob: --set first, "-" for none) or read back (empty for none). */
static char *sysctls_of(const struct row_input *in, const struct column *c)
{
	const int knob = c->flags & COL_KNOB;
	const char *set = knob ? set_value(in, c->name) : NULL;
	const struct json_node *a = jget(in->json, c->json);
	if (set)
		return xstrdup(set);
	if (!a || a->type != JSON_ARRAY || a->nkids == 0)
		return xstrdup(knob ? ROW_NOT_VARIED : "");
	size_t len = 1;
	for (size_t i = 0; i < a->nkids; i++)
		len += strlen(json_scalar_text(json_get(&a->kids[i], SK_NAME))) +
		       strlen(json_scalar_text(json_get(&a->kids[i], knob ? SK_ASKED : SK_READ))) + 2;
	char *out = xrealloc(NULL, len);
	out[0] = '\0';
	for (size_t i = 0; i < a->nkids; i++) {
		if (i)
			strcat(out, ";");
		strcat(out, json_scalar_text(json_get(&a->kids[i], SK_NAME)));
		strcat(out, "=");
		strcat(out, json_scalar_text(json_get(&a->kids[i], knob ? SK_ASKED : SK_READ)));
	}
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
