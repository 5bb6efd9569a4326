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

void cmd_row(int argc, char **argv)
{
	struct row_input in = { 0 };
	struct row_setting *set = xrealloc(NULL, (size_t)argc * sizeof(*set));
	const char *file[1] = { NULL }, *val, *columns = NULL;
	int nfile = 0, have_start = 0, have_end = 0, header = 0, parts = 0;
	int (*list_kind)(size_t i) = NULL;

	for (int i = 1; i < argc; i++) {
		if (opt_value(argc, argv, &i, "--set", &val)) {
			set[in.nset] = parse_setting("--set", val);
			if (!row_col_settable(set[in.nset].name))
				die(EXIT_USAGE, "row: --set %s: not a column that the sweep gives "
				    "(see tbench-stats row --header)", val);
			in.nset++;
		} else if (opt_value(argc, argv, &i, "--server-cpu-start", &val)) {
			parse_cpu_pair("--server-cpu-start", val, in.server_start);
			have_start = 1;
		} else if (opt_value(argc, argv, &i, "--server-cpu-end", &val)) {
			parse_cpu_pair("--server-cpu-end", val, in.server_end);
			have_end = 1;
		} else if (opt_value(argc, argv, &i, "--columns", &columns)) {
			continue;
		} else if (strcmp(argv[i], "--header") == 0) {
			header = 1;
		} else if (strcmp(argv[i], "--figures") == 0) {
			list_kind = row_col_is_figure;
		} else if (strcmp(argv[i], "--knobs") == 0) {
			list_kind = row_col_is_knob;
		} else if (strcmp(argv[i], "--trace-parts") == 0) {
			parts = 1;
		} else {
			operand("row", argv, i, file, &nfile, 1);
		}
	}
	if (have_start != have_end)
		die(EXIT_USAGE, "row: give both --server-cpu-start and --server-cpu-end, or neither");
	in.server_cpu_measured = have_start;
	in.set = set;
	if (header)
		print_row_header(stdout);
	else if (parts)
		print_trace_parts(stdout);
	else if (list_kind)
		print_columns(stdout, list_kind);
	else
		print_run_row(stdout, &in, file[0], columns);
	for (size_t i = 0; i < in.nset; i++)
		free((char *)set[i].name);
	free(set);
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
	struct row_setting *where = xrealloc(NULL, (size_t)argc * sizeof(*where));
	const char *file[1] = { NULL }, *val, *columns = NULL;
	int nfile = 0, tsv = 0;
	size_t nwhere = 0;

	for (int i = 1; i < argc; i++) {
		if (opt_value(argc, argv, &i, "--where", &val))
			where[nwhere++] = parse_setting("--where", val);
		else if (opt_value(argc, argv, &i, "--columns", &columns))
			continue;
		else if (strcmp(argv[i], "--tsv") == 0)
			tsv = 1;
		else
			operand("select", argv, i, file, &nfile, 1);
	}
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
