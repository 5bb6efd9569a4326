/* tbench-stats row, select and proc-cpu: what the sweep asks for each
 * run (its runs.csv row, a server's CPU seconds) and of its tables. */
#include "config.h"
#include "json.h"
#include "schema.h"
#include "stats_cmd.h"
#include "stats_proc.h"
#include "stats_row.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* "U,S": two CPU-second figures. */
static void parse_cpu_pair(const char *opt, const char *s, double out[2])
{
	char *end;
	errno = 0;
	out[0] = strtod(s, &end);
	if (end != s && *end == ',') {
		const char *t = end + 1;
		out[1] = strtod(t, &end);
		if (end != t && !*end && errno == 0 && out[0] >= 0 && out[1] >= 0)
			return;
	}
	die(EXIT_USAGE, "row: %s %s: want USER,SYSTEM seconds (tbench-stats proc-cpu PID prints them)",
	    opt, s);
}

/* --set NAME=VALUE (and --where, which shares the form). */
static struct row_setting parse_setting(const char *opt, const char *arg)
{
	const char *eq = strchr(arg, '=');
	if (!eq || eq == arg)
		die(EXIT_USAGE, "%s %s: want NAME=VALUE", opt, arg);
	struct row_setting s = { strndup(arg, (size_t)(eq - arg)), eq + 1 };
	if (!s.name)
		die(EXIT_RUN_FAILED, "out of memory");
	return s;
}

static void print_row_header(FILE *o)
{
	for (size_t i = 0; i < row_ncols(); i++)
		fprintf(o, "%s%s", i ? "," : "", row_col_name(i));
	fputc('\n', o);
}

/* The columns of one kind (row_col_is_figure, row_col_is_knob), one a line. */
static void print_columns(FILE *o, int (*is_kind)(size_t i))
{
	for (size_t i = 0; i < row_ncols(); i++)
		if (is_kind(i))
			fprintf(o, "%s\n", row_col_name(i));
}

/* --trace's breakdown: "side<TAB>column<TAB>label" a line, in the order
 * the parts stack (tbench-plot draws them so). */
static void print_trace_parts(FILE *o)
{
	struct row_part parts[64];
	size_t n = row_trace_parts(parts, sizeof(parts) / sizeof(parts[0]));

	for (size_t i = 0; i < n; i++)
		fprintf(o, "%s\t%s\t%s\n", parts[i].side, parts[i].column, parts[i].label);
}

/* Cells into one line of tab-separated text: tabs and line breaks become spaces. */
static void put_tsv(FILE *o, char *const *cells, const int *cols, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		if (i)
			fputc('\t', o);
		for (const char *s = cells[cols[i]]; *s; s++)
			fputc(*s == '\t' || *s == '\n' || *s == '\r' ? ' ' : *s, o);
	}
	fputc('\n', o);
}

/* The row, or with --columns only those of its cells, tab-separated. */
static void print_row(FILE *o, char **cells, const char *columns)
{
	if (!columns) {
		csv_put_row(o, cells, row_ncols());
		return;
	}
	struct strlist cl = strlist_split(columns);
	int *cols = xrealloc(NULL, (cl.n ? cl.n : 1) * sizeof(int));
	for (size_t i = 0; i < cl.n; i++) {
		size_t c = 0;
		while (c < row_ncols() && strcmp(row_col_name(c), cl.v[i]) != 0)
			c++;
		if (c == row_ncols())
			die(EXIT_USAGE, "row: --columns: no column '%s' (see tbench-stats row --header)", cl.v[i]);
		cols[i] = (int)c;
	}
	put_tsv(o, cells, cols, cl.n);
	free(cols);
	strlist_free(&cl);
}

/* The row of the run whose JSON is at path (NULL: none). */
static void print_run_row(FILE *o, struct row_input *in, const char *path, const char *columns)
{
	struct json_node doc;
	struct errbuf err;
	if (path && schema_read_file(&doc, path, &err) < 0)
		die(EXIT_USAGE, "%s", err.msg);
	in->json = path ? &doc : NULL;
	char **cells = row_make(in);
	print_row(o, cells, columns);
	row_free(cells);
	if (path)
		json_free(&doc);
}

/* The values of a repeated NAME=VALUE option (--set, --where), in order. */
struct settings_given {
	const char *flag;
	struct row_setting *v;
	size_t n;
};

static void add_setting(void *to, int val, const char *text)
{
	struct settings_given *g = to;

	(void)val;
	g->v[g->n++] = parse_setting(g->flag, text);
}

enum { LIST_NONE, LIST_FIGURES, LIST_KNOBS };

void cmd_row(int argc, char **argv)
{
	struct settings_given set = { "--set", xrealloc(NULL, (size_t)argc * sizeof(*set.v)), 0 };
	struct row_input in = { 0 };
	const char *file[1] = { NULL }, *columns = NULL, *start = NULL, *end = NULL;
	int header = 0, parts = 0, list = LIST_NONE;
	const struct poptOption table[] = {
		{ "set", 0, POPT_ARG_STRING, NULL, 's', NULL, NULL },
		{ "server-cpu-start", 0, POPT_ARG_STRING, &start, 0, NULL, NULL },
		{ "server-cpu-end", 0, POPT_ARG_STRING, &end, 0, NULL, NULL },
		{ "columns", 0, POPT_ARG_STRING, &columns, 0, NULL, NULL },
		{ "header", 0, POPT_ARG_NONE, &header, 0, NULL, NULL },
		{ "figures", 0, POPT_ARG_VAL, &list, LIST_FIGURES, NULL, NULL },
		{ "knobs", 0, POPT_ARG_VAL, &list, LIST_KNOBS, NULL, NULL },
		{ "trace-parts", 0, POPT_ARG_NONE, &parts, 0, NULL, NULL },
		POPT_TABLEEND
	};
	stats_options("row", argc, argv, table, add_setting, &set, file, 1);
	int have_start = start != NULL, have_end = end != NULL;
	int (*list_kind)(size_t i) = list == LIST_FIGURES ? row_col_is_figure :
				     list == LIST_KNOBS ? row_col_is_knob : NULL;

	for (size_t i = 0; i < set.n; i++)
		if (!row_col_settable(set.v[i].name))
			die(EXIT_USAGE, "row: --set %s=%s: not a column that the sweep gives "
			    "(see tbench-stats row --header)", set.v[i].name, set.v[i].value);
	in.set = set.v;
	in.nset = set.n;
	if (start)
		parse_cpu_pair("--server-cpu-start", start, in.server_start);
	if (end)
		parse_cpu_pair("--server-cpu-end", end, in.server_end);
	if (have_start != have_end)
		die(EXIT_USAGE, "row: give both --server-cpu-start and --server-cpu-end, or neither");
	in.server_cpu_measured = have_start;
	if (header)
		print_row_header(stdout);
	else if (parts)
		print_trace_parts(stdout);
	else if (list_kind)
		print_columns(stdout, list_kind);
	else
		print_run_row(stdout, &in, file[0], columns);
	for (size_t i = 0; i < set.n; i++)
		free((char *)set.v[i].name);
	free(set.v);
}

static int row_matches(const struct table *t, size_t r, const struct row_setting *where,
		       const int *wc, size_t nwhere)
{
	for (size_t w = 0; w < nwhere; w++)
		if (strcmp(t->rows[r][wc[w]], where[w].value) != 0)
			return 0;
	return 1;
}

static void print_selection(FILE *o, const struct table *t, const int *cols, size_t ncols, int tsv,
			    const struct row_setting *where, const int *wc, size_t nwhere)
{
	char **cells = xrealloc(NULL, (ncols ? ncols : 1) * sizeof(*cells));
	if (!tsv) {
		for (size_t i = 0; i < ncols; i++)
			cells[i] = t->head[cols[i]];
		csv_put_row(o, cells, ncols);
	}
	for (size_t r = 0; r < t->nrows; r++) {
		if (!row_matches(t, r, where, wc, nwhere))
			continue;
		if (tsv) {
			put_tsv(o, t->rows[r], cols, ncols);
			continue;
		}
		for (size_t i = 0; i < ncols; i++)
			cells[i] = t->rows[r][cols[i]];
		csv_put_row(o, cells, ncols);
	}
	free(cells);
}

static int need_col(const struct table *t, const char *name)
{
	int c = table_col(t, name);
	if (c < 0)
		die(EXIT_USAGE, "%s: no column '%s'", t->name, name);
	return c;
}

void cmd_select(int argc, char **argv)
{
	struct settings_given w = { "--where", xrealloc(NULL, (size_t)argc * sizeof(*w.v)), 0 };
	const char *file[1] = { NULL }, *columns = NULL;
	int tsv = 0;
	const struct poptOption table[] = {
		{ "where", 0, POPT_ARG_STRING, NULL, 'w', NULL, NULL },
		{ "columns", 0, POPT_ARG_STRING, &columns, 0, NULL, NULL },
		{ "tsv", 0, POPT_ARG_NONE, &tsv, 0, NULL, NULL },
		POPT_TABLEEND
	};
	int nfile = stats_options("select", argc, argv, table, add_setting, &w, file, 1);
	struct row_setting *where = w.v;
	size_t nwhere = w.n;

	if (!nfile)
		die(EXIT_USAGE, "select: missing FILE.csv");

	struct table t;
	read_table(&t, file[0]);
	int *wc = xrealloc(NULL, (nwhere ? nwhere : 1) * sizeof(int));
	for (size_t w = 0; w < nwhere; w++)
		wc[w] = need_col(&t, where[w].name);
	struct strlist cl = columns ? strlist_split(columns) : (struct strlist){ t.ncols, t.head };
	int *cols = xrealloc(NULL, (cl.n ? cl.n : 1) * sizeof(int));
	for (size_t i = 0; i < cl.n; i++)
		cols[i] = need_col(&t, cl.v[i]);
	print_selection(stdout, &t, cols, cl.n, tsv, where, wc, nwhere);
	if (columns)
		strlist_free(&cl);
	free(cols);
	free(wc);
	table_free(&t);
	for (size_t w = 0; w < nwhere; w++)
		free((char *)where[w].name);
	free(where);
}

void cmd_proc_cpu(int argc, char **argv)
{
	double cpu[2];
	struct errbuf err;
	char *end;

	errno = 0;
	long pid = argc == 2 ? strtol(argv[1], &end, 10) : 0;
	if (argc != 2 || end == argv[1] || *end || pid <= 0 || errno)
		die(EXIT_USAGE, "proc-cpu: want one PID");
	if (proc_tree_cpu((pid_t)pid, cpu, &err) < 0)
		die(EXIT_USAGE, "proc-cpu: %s", err.msg);
	printf("%.6f,%.6f\n", cpu[0], cpu[1]);
}
