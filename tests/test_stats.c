/* The statistics tools' pure parts against known answers: src/stats.c
 * (textbook t tables, closed forms of the t CDF for df = 1 and 2,
 * hand-computed samples), CSV tables, the JSON reader (also on truncated and
 * mangled input), the runs.csv row of the committed sample runs and the
 * parts of a traced run's breakdown, and the
 * grouping, comparison, cost and decomposition rows, the decomposition's
 * model derived from backends' declarations (a registry of the test's own). */
#include "config.h"
#include "json.h"
#include "stats.h"
#include "stats_paired.h"
#include "stats_proc.h"
#include "stats_model.h"
#include "stats_row.h"
#include "stats_summary.h"
#include "table.h"
#include "testlib.h"

#include <math.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static void moments(void)
{
	const double x[] = { 2, 4, 4, 4, 5, 5, 7, 9 };
	CHECK_NEAR(stats_mean_of(x, 8), 5, 1e-12);
	CHECK_NEAR(stats_sd_of(x, 8), sqrt(32.0 / 7), 1e-12);   /* sum of squares 32, n-1 = 7 */
	CHECK_NEAR(stats_sd_of(x, 1), 0, 0);
	double odd[] = { 9, 1, 5 }, even[] = { 7, 1, 3, 100 };
	CHECK_NEAR(stats_median(odd, 3), 5, 0);
	CHECK_NEAR(stats_median(even, 4), 5, 0);   /* (3 + 7) / 2: the middle two, sorted */
	CHECK_NEAR(stats_median(odd, 0), 0, 0);

	/* Welford stays exact where the naive formula cancels. */
	struct stats_acc a;
	stats_init(&a);
	stats_add(&a, 1e9 + 4);
	stats_add(&a, 1e9 + 7);
	stats_add(&a, 1e9 + 13);
	stats_add(&a, 1e9 + 16);
	CHECK_NEAR(a.mean, 1e9 + 10, 1e-6);
	CHECK_NEAR(stats_var(&a), 30, 1e-6);
	CHECK_NEAR(a.min, 1e9 + 4, 0);
	CHECK_NEAR(a.max, 1e9 + 16, 0);
	CHECK_EQ_U(a.n, 4);
}

static void t_distribution(void)
{
	/* Two-sided 95% critical values from any t table. */
	CHECK_NEAR(stats_t_quantile(0.975, 1), 12.706, 5e-4);
	CHECK_NEAR(stats_t_quantile(0.975, 2), 4.303, 5e-4);
	CHECK_NEAR(stats_t_quantile(0.975, 3), 3.182, 5e-4);
	CHECK_NEAR(stats_t_quantile(0.975, 10), 2.228, 5e-4);
	CHECK_NEAR(stats_t_quantile(0.975, 30), 2.042, 5e-4);
	CHECK_NEAR(stats_t_quantile(0.975, 1e7), 1.960, 5e-4);  /* the normal limit */
	/* Other columns of the table. */
	CHECK_NEAR(stats_t_quantile(0.95, 5), 2.015, 5e-4);
	CHECK_NEAR(stats_t_quantile(0.995, 3), 5.841, 5e-4);
	CHECK_NEAR(stats_t_quantile(0.9995, 1), 636.619, 5e-3);
	CHECK_NEAR(stats_t_quantile(0.025, 10), -2.228, 5e-4);
	CHECK_NEAR(stats_t_quantile(0.5, 7), 0, 0);
	/* More digits: t(0.975, 1) = tan(0.475 pi) exactly (Cauchy). */
	CHECK_NEAR(stats_t_quantile(0.975, 1), tan(0.475 * M_PI), 1e-9);
	/* df = 2 has the closed form t = (2p-1) sqrt(2 / (4p(1-p))). */
	CHECK_NEAR(stats_t_quantile(0.975, 2), 0.95 * sqrt(2 / (4 * 0.975 * 0.025)), 1e-9);

	/* CDF: df = 1 is Cauchy, 1/2 + atan(t)/pi; df = 2 is 1/2 + t / (2 sqrt(2 + t^2)). */
	CHECK_NEAR(stats_t_cdf(1, 1), 0.75, 1e-12);
	CHECK_NEAR(stats_t_cdf(-3, 1), 0.5 + atan(-3) / M_PI, 1e-12);
	CHECK_NEAR(stats_t_cdf(2, 2), 0.5 + 2 / (2 * sqrt(6)), 1e-12);
	CHECK_NEAR(stats_t_cdf(0, 4.5), 0.5, 1e-15);
	CHECK_NEAR(stats_t_cdf(2.228, 10), 0.975, 5e-5);
	CHECK_NEAR(stats_t_cdf(INFINITY, 3), 1, 0);
	/* Round trip, fractional df as Welch produces. */
	for (double df = 1.5; df < 200; df *= 1.7)
		for (double p = 0.6; p < 0.9999; p = 1 - (1 - p) / 3)
			CHECK_NEAR(stats_t_cdf(stats_t_quantile(p, df), df), p, 1e-10);

	/* The incomplete beta at known points: I_x(1, 1) = x, I_x(a, 1) = x^a. */
	CHECK_NEAR(stats_betainc(0.3, 1, 1), 0.3, 1e-14);
	CHECK_NEAR(stats_betainc(0.6, 3, 1), 0.216, 1e-14);
	CHECK_NEAR(stats_betainc(0.6, 2, 2), 3 * 0.36 - 2 * 0.216, 1e-14);  /* 3x^2 - 2x^3 */
	CHECK(isnan(stats_t_quantile(1, 3)));
	CHECK(isnan(stats_t_quantile(0.9, 0)));
}

static void confidence(void)
{
	/* {2,4,4,4,5,5,7,9}: sd sqrt(32/7), n 8, t(0.975, 7) = 2.3646 */
	CHECK_NEAR(stats_ci_half(sqrt(32.0 / 7), 8, 0.95), 2.3646 * sqrt(32.0 / 7) / sqrt(8), 1e-4);
	/* n = 2: t(0.975, 1) * sd / sqrt 2 */
	CHECK_NEAR(stats_ci_half(1, 2, 0.95), 12.7062 / sqrt(2), 1e-4);
	CHECK(isnan(stats_ci_half(1, 1, 0.95)));
}

static void welch(void)
{
	/* A = {1,2,3,4,5}: mean 3, var 2.5; B = {4,6,8,10,12}: mean 8, var 10.
	 * se^2 = 2.5/5 + 10/5 = 2.5, t = 5 / sqrt(2.5) = 3.16228,
	 * df = 2.5^2 / (0.5^2/4 + 2^2/4) = 6.25 / 1.0625 = 5.88235,
	 * p = 0.02004 (numerical integration of the t density). */
	struct welch w = stats_welch(3, sqrt(2.5), 5, 8, sqrt(10), 5);
	CHECK(w.valid);
	CHECK_NEAR(w.t, 3.16228, 1e-5);
	CHECK_NEAR(w.df, 5.88235, 1e-5);
	CHECK_NEAR(w.p, 0.02004, 1e-5);

	/* Equal variances and sizes: df = 2n - 2 = 4; the samples of tests/data:
	 * {100,102,98} vs {110,112,108}: t = 10/sqrt(8/3) = 6.12372, p = 0.003602. */
	w = stats_welch(100, 2, 3, 110, 2, 3);
	CHECK_NEAR(w.t, 6.12372, 1e-5);
	CHECK_NEAR(w.df, 4, 1e-12);
	CHECK_NEAR(w.p, 0.003602, 1e-6);
	/* {100,110,90} vs {101,111,91}: t = 0.122474, p = 0.90843 */
	w = stats_welch(100, 10, 3, 101, 10, 3);
	CHECK_NEAR(w.p, 0.90843, 1e-5);
	/* Sign follows B - A. */
	w = stats_welch(110, 2, 3, 100, 2, 3);
	CHECK_NEAR(w.t, -6.12372, 1e-5);
	CHECK_NEAR(w.p, 0.003602, 1e-6);

	/* Degenerate: one run, or no spread at all. */
	CHECK(!stats_welch(1, 0, 1, 2, 1, 5).valid);
	w = stats_welch(5, 0, 3, 5, 0, 3);
	CHECK(w.valid && w.p == 1);
	w = stats_welch(5, 0, 3, 6, 0, 3);
	CHECK(w.valid && w.p == 0);
}

static void geomean(void)
{
	const double r[] = { 1.1, 1.01 };
	CHECK_NEAR(stats_geomean(r, 2), sqrt(1.1 * 1.01), 1e-12);
	const double s[] = { 2, 8 };
	CHECK_NEAR(stats_geomean(s, 2), 4, 1e-12);
	const double bad[] = { 2, 0 };
	CHECK(isnan(stats_geomean(bad, 2)));
	CHECK(isnan(stats_geomean(s, 0)));
}

static int parse_table(struct table *t, const char *text)
{
	struct errbuf err;
	int rc = table_parse(t, "t.csv", text, strlen(text), &err);
	if (rc < 0)
		fprintf(stderr, "table_parse: %s\n", err.msg);
	return rc;
}

static void tables(void)
{
	struct table t;
	struct errbuf err;
	const char *text = "# a comment\r\na,b,c\r\n\r\n1,\"x, \"\"y\"\"\",\n"
			   "\"two\nlines\",,3\n# another\n4,5,6";
	CHECK(parse_table(&t, text) == 0);
	CHECK_EQ_U(t.ncols, 3);
	CHECK_EQ_U(t.nrows, 3);
	CHECK_STR(t.head[2], "c");
	CHECK_STR(t.rows[0][1], "x, \"y\"");
	CHECK_STR(t.rows[0][2], "");
	CHECK_STR(t.rows[1][0], "two\nlines");
	CHECK_EQ_U(t.line[1], 5);
	CHECK_EQ_U(t.line[2], 8);        /* a quoted line break counts */
	CHECK_STR(t.rows[2][2], "6");
	CHECK(table_col(&t, "b") == 1 && table_col(&t, "z") == -1);
	table_free(&t);

	CHECK(table_parse(&t, "bad.csv", "a,b\n1,2\n3\n", 10, &err) < 0);
	CHECK_STR(err.msg, "bad.csv:3: 1 fields, the header has 2");
	CHECK(table_parse(&t, "cut.csv", "a,bc", 4, &err) < 0);   /* cut in its header */
	CHECK_STR(err.msg, "cut.csv:1: the header ends at column 2 ('bc') without a line end: "
		  "the file was cut short; write it again");
	CHECK(table_parse(&t, "empty.csv", "# nothing\n", 10, &err) < 0);
	CHECK_STR(err.msg, "empty.csv: empty (no header line)");
	CHECK(table_read(&t, "/nonexistent/runs.csv", &err) < 0);
	CHECK(strstr(err.msg, "/nonexistent/runs.csv: No such file") == err.msg);

	struct strlist l = strlist_split(",backend,,clients,");
	CHECK_EQ_U(l.n, 2);
	CHECK_STR(l.v[1], "clients");
	strlist_free(&l);
	CHECK(isnan(csv_num("")) && isnan(csv_num("1x")) && csv_num("2.5e1") == 25);
}

/* ---- JSON ------------------------------------------------------------------------- */

static int parse_json(struct json_node *root, const char *text, struct errbuf *err)
{
	return json_parse(root, "x.json", text, strlen(text), err);
}

static void json_values(void)
{
	struct json_node root;
	struct errbuf err;
	const char *text = "{ \"a\": { \"b\": [10, -2.5e3, true, null, \"q\\\"\\u00e9\\ud83d\\ude00\"] },"
			   " \"dup\": 1, \"dup\": 2, \"empty\": {}, \"list\": [] }";
	CHECK(parse_json(&root, text, &err) == 0);
	CHECK(json_get(&root, "a.b.0")->num == 10);
	CHECK_STR(json_scalar_text(json_get(&root, "a.b.1")), "-2.5e3");
	CHECK(json_get(&root, "a.b.1")->num == -2500);
	CHECK_STR(json_scalar_text(json_get(&root, "a.b.2")), "true");
	CHECK_STR(json_scalar_text(json_get(&root, "a.b.3")), "");
	CHECK_STR(json_scalar_text(json_get(&root, "a.b.4")), "q\"\xc3\xa9\xf0\x9f\x98\x80");
	CHECK(json_get(&root, "a.b.5") == NULL && json_get(&root, "a.c") == NULL);
	CHECK(json_get(&root, "dup")->num == 2);        /* the last of a name (json-c's) */
	CHECK_STR(json_scalar_text(json_get(&root, "a")), "");
	CHECK(json_get(&root, "empty")->nkids == 0 && json_get(&root, "list")->type == JSON_ARRAY);
	json_free(&root);

	/* json-c's words for what is wrong, or the reader's for what json-c
	 * lets through (a bad number, a control character in a string); the
	 * position is the reader's. */
	static const struct { const char *text, *where; } bad[] = {
		{ "{\"a\": 1,\n \"b\" 2}", "x.json:2:6: " },
		{ "[1, 2", "x.json:1:6: " },
		{ "[01]", "x.json:1:4: " },
		{ "[1.]", "x.json:1:2: bad number" },
		{ "[1e+]", "x.json:1:5: " },
		{ "\"tab\there\"", "x.json:1:5: control character in a string" },
		{ "[-1.5e]", "x.json:1:" },
		{ "\"\\x\"", "x.json:1:3: " },
		{ "\"\\u0000\"", "x.json: \\u0000 in a string" },
		{ "nul", "x.json:1:4: " },
		{ "{} {}", "x.json:1:4: " },
		{ "", "x.json:1:1: " },
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		CHECK(parse_json(&root, bad[i].text, &err) < 0);
		CHECK(strncmp(err.msg, bad[i].where, strlen(bad[i].where)) == 0);
		printf("  %s\n", err.msg);
	}
	CHECK(json_parse(&root, "x.json", "{}\n\0{}", 5, &err) < 0);
	CHECK_STR(err.msg, "x.json:2:1: text after the end of the document");
	char deep[2 * JSON_MAX_DEPTH + 8];
	memset(deep, '[', JSON_MAX_DEPTH + 1);
	memset(deep + JSON_MAX_DEPTH + 1, ']', JSON_MAX_DEPTH + 1);
	deep[2 * JSON_MAX_DEPTH + 2] = '\0';
	CHECK(parse_json(&root, deep, &err) < 0 && strstr(err.msg, "nested too deeply"));
	/* JSON_MAX_DEPTH levels: fine */
	CHECK(json_parse(&root, "x.json", deep + 1, 2 * JSON_MAX_DEPTH, &err) == 0);
	json_free(&root);
}

/* Every prefix of a real document, and the document with bytes overwritten
 * (fixed seed), parse or fail cleanly: under ASan any overread would show. */
static void json_hostile(void)
{
	struct errbuf err;
	size_t len;
	char *doc = read_text_file(TBENCH_SRCDIR "/tests/data/run-ok.json", 1 << 20, &len, &err);
	CHECK(doc != NULL);
	if (!doc)
		return;
	int failures = 0;
	for (size_t n = 0; n < len; n++) {
		struct json_node root;
		char *copy = malloc(n ? n : 1);   /* exactly n bytes: no terminator to lean on */
		memcpy(copy, doc, n);
		if (json_parse(&root, "cut.json", copy, n, &err) == 0)
			json_free(&root);
		else
			failures++;
		free(copy);
	}
	CHECK(failures >= (int)len - 2);     /* only the whole text (and its text minus a newline) parse */
	unsigned seed = 12345;
	const char junk[] = "{}[]\",:\\u0123456789eE+-.tfn \x01\xff";
	for (int round = 0; round < 3000; round++) {
		struct json_node root;
		char *copy = malloc(len);
		memcpy(copy, doc, len);
		for (int k = 0; k < 1 + round % 4; k++) {
			seed = seed * 1103515245 + 12345;
			copy[(seed >> 8) % len] = junk[(seed >> 20) % (sizeof(junk) - 1)];
		}
		if (json_parse(&root, "mangled.json", copy, len, &err) == 0)
			json_free(&root);
		free(copy);
	}
	free(doc);
}

/* ---- the runs.csv row --------------------------------------------------------------- */

/* Makes the row of a sample run and checks every cell against the row of
 * tests/data/rows.csv, by column name. */
static void check_row(const char *json_file, const struct row_setting *set, size_t nset,
		      const double *server_cpu, const struct table *want, size_t want_row)
{
	struct json_node doc;
	struct errbuf err;
	char path[1024];
	snprintf(path, sizeof(path), "%s/tests/data/%s", TBENCH_SRCDIR, json_file);
	CHECK(json_read_file(&doc, path, &err) == 0);
	struct row_input in = { &doc, set, nset, server_cpu != NULL, { 0, 0 }, { 0, 0 } };
	if (server_cpu) {
		memcpy(in.server_start, server_cpu, 2 * sizeof(double));
		memcpy(in.server_end, server_cpu + 2, 2 * sizeof(double));
	}
	char **cells = row_make(&in);
	for (size_t i = 0; i < row_ncols(); i++) {
		int c = table_col(want, row_col_name(i));
		CHECK(c >= 0);
		if (c >= 0 && strcmp(cells[i], want->rows[want_row][c]) != 0) {
			test_failures++;
			fprintf(stderr, "%s: column %s is '%s', want '%s'\n", json_file, row_col_name(i),
				cells[i], want->rows[want_row][c]);
		}
	}
	row_free(cells);
	json_free(&doc);
}

static void rows(void)
{
	struct table want;
	struct errbuf err;
	CHECK(table_read(&want, TBENCH_SRCDIR "/tests/data/rows.csv", &err) == 0);
	CHECK_EQ_U(want.ncols, row_ncols());    /* one column each, in the same order */
	for (size_t i = 0; i < want.ncols && i < row_ncols(); i++)
		CHECK_STR(want.head[i], row_col_name(i));

	const struct row_setting ok[] = {
		{ "offload", "on" }, { "rep", "2" }, { "dev", "lo" }, { "tso_read", "on" }, { "gso_read", "on" },
		{ "gro_read", "on" }, { "exit_code", "0" }, { "started", "2026-12-01T10:00:00+00:00" },
		{ "json", "runs/tcp_c4_on_r2.json" },
	};
	const struct row_setting interrupted[] = {
		{ "backend", "pipe" }, { "clients", "8" }, { "offload", "n/a" }, { "rep", "1" },
		{ "tso_read", "n/a" }, { "gso_read", "n/a" }, { "gro_read", "n/a" }, { "exit_code", "1" },
		{ "started", "2026-12-01T10:00:05+00:00" }, { "json", "runs/pipe_c8_na_r1.json" },
		{ "error", "not used: the JSON has one" },
	};
	const double server_cpu[4] = { 10, 20, 10.5, 21.5 };
	check_row("run-ok.json", ok, sizeof(ok) / sizeof(ok[0]), NULL, &want, 0);
	check_row("run-interrupted-warmup.json", interrupted,
		  sizeof(interrupted) / sizeof(interrupted[0]), NULL, &want, 1);
	check_row("run-ok.json", ok, sizeof(ok) / sizeof(ok[0]), server_cpu, &want, 2);
	/* A --netns run with cost figures: offloads read back, device and namespace
	 * from its JSON; two knobs varied. */
	const struct row_setting with_cost[] = {
		{ "offload", "off" }, { "mtu", "1500" }, { "placement", "split" }, { "rep", "1" }, { "exit_code", "0" },
		{ "started", "2026-12-01T11:00:00+00:00" }, { "json", "runs/tcp_c4_off_r1.json" },
	};
	check_row("run-cost.json", with_cost, sizeof(with_cost) / sizeof(with_cost[0]), NULL, &want, 3);
	/* A --trace run: its figures per side, and by group of system calls. */
	const struct row_setting traced[] = {
		{ "rep", "1" }, { "exit_code", "0" }, { "started", "2026-12-05T10:00:00+00:00" },
		{ "json", "runs/tcp_c2_r1.json" },
	};
	check_row("run-trace.json", traced, sizeof(traced) / sizeof(traced[0]), NULL, &want, 4);
	table_free(&want);

	/* Figures by column or by the JSON path they come from; not other columns. */
	CHECK_STR(row_figure_column("cost.per_operation.segments_out"), "cost_segments_out");
	CHECK_STR(row_figure_column("cost_clients_cpu_us"), "cost_clients_cpu_us");
	CHECK_STR(row_figure_column("result.ops_per_sec"), "ops_per_sec");
	CHECK(row_figure_column("rep") == NULL && row_figure_column("cost.device") == NULL &&
	      row_figure_column("nosuch") == NULL);

	/* No JSON at all: failed, with what the sweep knows. */
	const struct row_setting none[] = { { "backend", "tcp" }, { "exit_code", "2" },
					    { "error", "tbench: -b tcp: no such backend" } };
	struct row_input in = { NULL, none, 3, 0, { 0, 0 }, { 0, 0 } };
	char **cells = row_make(&in);
	CHECK_STR(cells[0], "tcp");
	for (size_t i = 0; i < row_ncols(); i++) {
		if (strcmp(row_col_name(i), "status") == 0)
			CHECK_STR(cells[i], "failed");
		if (strcmp(row_col_name(i), "error") == 0)
			CHECK_STR(cells[i], "tbench: -b tcp: no such backend");
		if (strcmp(row_col_name(i), "mb_per_sec") == 0)
			CHECK_STR(cells[i], "");
	}
	row_free(cells);
	CHECK(row_col_settable("offload") && !row_col_settable("mb_per_sec") && !row_col_settable("x"));
}

/* The breakdown of --trace: each side's parts are figure columns, and in
 * the row of a traced run they add up to the side's on-CPU, run-queue and
 * blocked time (none left out, none counted twice). */
static void trace_parts(void)
{
	struct row_part parts[64];
	size_t n = row_trace_parts(parts, 64);
	struct json_node doc;
	struct errbuf err;
	const char *sides[] = { "clients", "servers" };
	const char *whole[] = { "on_cpu_us", "run_queue_us", "blocked_us" };   /* a side's time */

	CHECK(n >= 2 * 4 && n < 64);
	CHECK(row_trace_parts(parts, 3) == 3);
	CHECK(json_read_file(&doc, TBENCH_SRCDIR "/tests/data/run-trace.json", &err) == 0);
	struct row_input in = { &doc, NULL, 0, 0, { 0, 0 }, { 0, 0 } };
	char **cells = row_make(&in);
	for (size_t s = 0; s < 2; s++) {
		char path[128];
		double sum = 0, want = 0;
		for (size_t i = 0; i < n; i++) {
			size_t c = 0;
			while (c < row_ncols() && strcmp(row_col_name(c), parts[i].column) != 0)
				c++;
			CHECK(c < row_ncols() && row_col_is_figure(c) && parts[i].label[0]);
			if (c < row_ncols() && strcmp(parts[i].side, sides[s]) == 0)
				sum += atof(cells[c]);
		}
		for (size_t k = 0; k < sizeof(whole) / sizeof(whole[0]); k++) {
			snprintf(path, sizeof(path), "trace.per_operation.%s.%s", sides[s], whole[k]);
			const struct json_node *v = json_get(&doc, path);
			CHECK(v && v->type == JSON_NUMBER);
			want += v ? v->num : 0;
		}
		CHECK_NEAR(sum, want, want * 1e-4);
	}
	CHECK_STR(parts[0].column, "trace_clients_user_us");
	CHECK_STR(parts[n - 1].column, "trace_servers_blocked_us");
	CHECK_STR(row_figure_column("trace.per_operation.servers.syscall_groups_us.futex"),
		  "trace_servers_sys_futex_us");
	row_free(cells);
	json_free(&doc);
}

/* ---- points, comparisons, costs --------------------------------------------------- */

static const char runs_csv[] =
	"backend,clients,offload,rep,status,tso,mb_per_sec,ops_per_sec\n"
	"tcp,16,on,1,ok,on,100,1000\n"
	"tcp,2,on,1,ok,on,50,500\n"
	"nop,2,n/a,1,ok,n/a,1000,100000\n"
	"tcp,16,on,2,ok,off,110,1100\n"
	"tcp,2,on,2,failed,on,,\n"
	"nop,2,n/a,2,ok,n/a,1000,100000\n"
	"tcp,2,on,3,ok,on,54,540\n";

static void summaries(void)
{
	struct table t;
	struct summary s;
	struct errbuf err;
	struct strlist keys = strlist_split("backend,clients,offload");
	struct strlist metrics = strlist_split("mb_per_sec,nosuch,ops_per_sec");
	struct strlist carry = strlist_split("tso,gro");

	CHECK(parse_table(&t, runs_csv) == 0);
	CHECK(summarize_runs(&s, &t, &keys, &metrics, &carry, 0, &err) == 0);
	CHECK_EQ_U(s.npoints, 3);
	CHECK_EQ_U(s.metrics.n, 2);               /* nosuch left out */
	CHECK_EQ_U(s.carry.n, 1);                 /* gro left out */
	/* tcp before nop (the sweep's order), then 2 before 16 (numbers) */
	CHECK_STR(s.p[0].key[0], "tcp");
	CHECK_STR(s.p[0].key[1], "2");
	CHECK_STR(s.p[1].key[1], "16");
	CHECK_STR(s.p[2].key[0], "nop");
	CHECK_EQ_U(s.p[0].n_ok, 2);
	CHECK_EQ_U(s.p[0].n_failed, 1);
	CHECK_NEAR(s.p[0].m[0].mean, 52, 1e-12);
	CHECK_NEAR(s.p[0].m[0].sd, sqrt(8), 1e-12);
	CHECK_NEAR(s.p[0].m[0].ci, stats_t_quantile(0.975, 1) * sqrt(8) / sqrt(2), 1e-9);
	CHECK_STR(s.p[1].carry[0], "mixed");
	CHECK_STR(s.p[0].carry[0], "on");

	/* cost: 1e6/520 - 1e6/100000 us at 2 clients; none at 16 (no nop) */
	struct summary ops;
	CHECK(summarize_any(&ops, &t, &keys, "ops_per_sec", 0, &err) == 0);
	struct cost_row *cost;
	size_t n = cost_rows(&cost, &ops, "nop");
	CHECK_EQ_U(n, 1);
	if (n == 1) {
		CHECK_NEAR(cost[0].cost_us, 1e6 / 520 - 10, 1e-9);
		CHECK_NEAR(cost[0].ci_us, 1e6 * ops.p[0].m[0].ci / (520.0 * 520), 1e-9);  /* nop: no spread */
	}
	free(cost);
	summary_free(&ops);

	struct strlist bad = strlist_split("backend,nosuch");
	CHECK(summarize_runs(&ops, &t, &bad, &metrics, &carry, 0, &err) < 0);
	CHECK_STR(err.msg, "t.csv: no column 'nosuch'");
	strlist_free(&bad);
	summary_free(&s);
	table_free(&t);
	strlist_free(&keys);
	strlist_free(&metrics);
	strlist_free(&carry);
}

/* An ok run judged disturbed is left out of its point, counted apart; an
 * empty cell (not known) or "no" is not disturbed. */
static void disturbed_runs(void)
{
	static const char csv[] =
		"backend,clients,status,disturbed,mb_per_sec\n"
		"pipe,1,ok,no,100\n"
		"pipe,1,ok,other_cpu+stall,7\n"
		"pipe,1,ok,,102\n"
		"pipe,1,failed,,\n";
	struct table t;
	struct summary s;
	struct errbuf err;
	struct strlist keys = strlist_split("backend,clients"), metrics = strlist_split("mb_per_sec");
	struct strlist carry = { 0, NULL };

	CHECK(row_disturbed("stall") && !row_disturbed("no") && !row_disturbed(""));
	CHECK(parse_table(&t, csv) == 0);
	CHECK(summarize_runs(&s, &t, &keys, &metrics, &carry, 0, &err) == 0);
	CHECK_EQ_U(s.npoints, 1);
	CHECK_EQ_U(s.p[0].n_ok, 2);
	CHECK_EQ_U(s.p[0].n_failed, 1);
	CHECK_EQ_U(s.p[0].n_disturbed, 1);
	CHECK_NEAR(s.p[0].m[0].mean, 101, 1e-12);
	summary_free(&s);
	CHECK(summarize_runs(&s, &t, &keys, &metrics, &carry, SUMMARY_KEEP_DISTURBED, &err) == 0);
	CHECK_EQ_U(s.p[0].n_ok, 3);
	CHECK_EQ_U(s.p[0].n_disturbed, 0);
	CHECK_NEAR(s.p[0].m[0].mean, 209.0 / 3, 1e-12);
	summary_free(&s);
	table_free(&t);
	strlist_free(&keys);
	strlist_free(&metrics);
}

static void comparisons(void)
{
	struct table ta, tb;
	struct summary a, b;
	struct comparison c;
	struct errbuf err;
	struct strlist keys = strlist_split("backend,clients");

	/* A as runs, B as a summary read back: the same figures as welch() above. */
	CHECK(parse_table(&ta, "backend,clients,mb_per_sec\npipe,1,100\npipe,1,102\npipe,1,98\n"
			  "tcp,1,5\n") == 0);
	CHECK(parse_table(&tb, "backend,clients,n,mb_per_sec_mean,mb_per_sec_sd,mb_per_sec_ci95\n"
			  "udp,1,2,7,1,9\npipe,1,3,110,2,4.97\n") == 0);
	CHECK(summarize_any(&a, &ta, &keys, "mb_per_sec", 0, &err) == 0);
	CHECK(summarize_any(&b, &tb, &keys, "mb_per_sec", 0, &err) == 0);
	compare_summaries(&c, &a, &b, 0.05, 0);
	CHECK_EQ_U(c.nrows, 3);
	CHECK(c.rows[0].a == &a.p[0] && c.rows[0].b == &b.p[1]);
	CHECK_NEAR(c.rows[0].change_pct, 10, 1e-9);
	CHECK_NEAR(c.rows[0].w.p, 0.003602, 1e-6);
	CHECK_STR(c.rows[0].verdict, "yes");
	CHECK_STR(c.rows[1].verdict, "only in A");
	CHECK_STR(c.rows[2].verdict, "only in B");
	CHECK_NEAR(c.geomean, 1.1, 1e-12);
	CHECK_EQ_U(c.ncommon, 1);
	CHECK_EQ_U(c.nup, 1);
	/* sittings 3% apart: the +10% change's interval reaches beyond, it stays */
	double lo = c.rows[0].change_lo_pct, hi = c.rows[0].change_hi_pct;
	CHECK(lo > 3 && hi < 20);
	compare_sittings(&c, 3);
	CHECK_STR(c.rows[0].verdict, "yes");
	CHECK_EQ_U(c.nsig, 1);
	CHECK_EQ_U(c.nsittings, 0);
	/* 20% apart (either sign): the change is within it, not significant */
	compare_sittings(&c, -20);
	CHECK_STR(c.rows[0].verdict, "sittings");
	CHECK_EQ_U(c.nsig, 0);
	CHECK_EQ_U(c.nup, 0);
	CHECK_EQ_U(c.nsittings, 1);
	CHECK_STR(c.rows[1].verdict, "only in A");
	comparison_free(&c);
	/* the bound is the interval's ends, not the change: hi just above it */
	compare_summaries(&c, &a, &b, 0.05, 0);
	compare_sittings(&c, hi - 0.01);
	CHECK_STR(c.rows[0].verdict, "yes");
	compare_sittings(&c, hi);
	CHECK_STR(c.rows[0].verdict, "sittings");
	comparison_free(&c);
	/* relative to yardsticks 10% apart (exactly): B/A = 1.1 over 1.1, no change */
	compare_summaries(&c, &a, &b, 0.05, 0);
	double dci = c.rows[0].d.ci;
	compare_relative(&c, 10, 10, 10);
	CHECK_NEAR(c.rows[0].change_pct, 0, 1e-9);
	CHECK_NEAR(c.rows[0].change_hi_pct, 100 * dci / 110, 1e-9);
	CHECK_NEAR(c.rows[0].change_lo_pct, -100 * dci / 110, 1e-9);
	CHECK_STR(c.rows[0].verdict, "no");
	CHECK(isnan(c.rows[0].w.p) && isnan(c.rows[0].mde_pct));
	CHECK_EQ_U(c.nsig, 0);
	CHECK_NEAR(c.geomean, 1, 1e-12);
	comparison_free(&c);
	/* yardsticks 0 +- 1% apart: the +10% stands, its interval widened in quadrature */
	compare_summaries(&c, &a, &b, 0.05, 0);
	compare_relative(&c, 0, -1, 1);
	CHECK_NEAR(c.rows[0].change_pct, 10, 1e-9);
	CHECK_NEAR(c.rows[0].change_hi_pct - 10, 110 * hypot(dci / 110, 0.01), 1e-9);
	CHECK_STR(c.rows[0].verdict, "yes");
	CHECK_EQ_U(c.nup, 1);
	comparison_free(&c);
	summary_free(&b);
	CHECK(summarize_any(&b, &tb, &keys, "ops_per_sec", 0, &err) < 0);
	CHECK_STR(err.msg, "t.csv: neither a 'ops_per_sec' nor a 'ops_per_sec_mean' column");
	table_free(&tb);

	/* A figure that some of a point's ok runs lack: fewer values than n. */
	CHECK(parse_table(&tb, "backend,clients,n,mb_per_sec_mean,mb_per_sec_sd,mb_per_sec_ci95\n"
			  "tcp,1,3,50,,\nnop,1,2,,,\npipe,1,3,9,1,2.5\n") == 0);
	CHECK(summarize_any(&b, &tb, &keys, "mb_per_sec", 0, &err) == 0);
	CHECK_EQ_U(b.p[0].m[0].n, 1);
	CHECK_EQ_U(b.p[1].m[0].n, 0);
	CHECK_EQ_U(b.p[2].m[0].n, 3);
	CHECK_EQ_U(b.p[0].n_ok, 3);
	summary_free(&b);
	summary_free(&a);
	table_free(&ta);
	table_free(&tb);
	strlist_free(&keys);
}

/* ---- the decomposition's model ----------------------------------------------- */

/* A registry of the test's own: the facts as backends/ declares them for
 * these four, and a throwaway backend that declares tcp its parent and
 * nothing else anywhere. */
static const struct backend t_nop = { .name = "nop", .flags = BACKEND_SWEPT,
	.path = { .layer = "harness", .adds = "harness" } };
static const struct backend t_pipe = { .name = "pipe", .flags = BACKEND_SWEPT,
	.path = { .extends = "nop", .layer = "copy_wakeup", .adds = "copy + wake-up" } };
static const struct backend t_unix = { .name = "unix", .flags = BACKEND_SWEPT,
	.path = { .extends = "nop", .layer = "unix_socket", .adds = "unix socket", .differs_from = "pipe" } };
static const struct backend t_tcp = { .name = "tcp", .flags = BACKEND_SWEPT | BACKEND_OFFLOADS,
	.path = { .extends = "nop", .layer = "tcpip", .adds = "TCP/IP", .differs_from = "unix",
		  .drops_replies = true } };
static const struct backend t_toy = { .name = "toy", .flags = BACKEND_SWEPT,
	.path = { .extends = "tcp", .layer = "toy", .adds = "a toy's own" } };
static const struct backend *const test_registry[] = { &t_tcp, &t_unix, &t_pipe, &t_nop, &t_toy, NULL };

static void test_model(struct decomp_model *m)
{
	struct errbuf err;
	CHECK(model_build(m, test_registry, &err) == 0);
}

/* The model from the declarations alone: the throwaway backend tops the
 * stack, the others are layers beside it, and the pairs that only differ
 * are different paths, never layers. */
static void model_from_registry(void)
{
	struct decomp_model m;
	test_model(&m);
	char *stack = model_stack_levels(&m);
	CHECK_STR(stack, "nop,tcp:off,tcp:on,toy");
	free(stack);
	CHECK_STR(model_root(&m), "nop");
	const struct model_step *toy = model_step_of(&m, "tcp:on", "toy");
	CHECK(toy && toy->kind == STEP_STACK);
	if (toy)
		CHECK_STR(toy->label, "a toy's own (toy − tcp, TSO/GSO on)");
	const struct model_step *pipe = model_step_of(&m, "nop", "pipe");
	CHECK(pipe && pipe->kind == STEP_BRANCH);
	const struct model_step *paths = model_step_of(&m, "unix", "tcp:on");
	CHECK(paths && paths->kind == STEP_PATHS);
	if (paths)
		CHECK_STR(paths->label, "tcp − unix: different paths, not a layer; tcp's reply bodies "
			  "stay in the kernel (unless --copy-replies), unix's are copied");
	CHECK(model_step_of(&m, "pipe", "unix") && model_step_of(&m, "pipe", "unix")->kind == STEP_PATHS);
	CHECK(!model_step_of(&m, "unix", "tcp:off"));   /* not a step at all, let alone a layer */

	CHECK(model_relation(&m, "unix", "tcp:off") == REL_PATHS);
	CHECK(model_relation(&m, "tcp:on", "unix") == REL_PATHS);
	CHECK(model_relation(&m, "pipe", "unix") == REL_PATHS);
	CHECK(model_relation(&m, "nop", "tcp:on") == REL_LAYER);
	CHECK(model_relation(&m, "tcp:off", "tcp:on") == REL_LAYER);
	CHECK(model_relation(&m, "nop", "toy") == REL_LAYER);        /* through tcp */
	CHECK(model_relation(&m, "toy", "tcp") == REL_LAYER);
	CHECK(model_relation(&m, "pipe", "toy") == REL_PATHS);
	CHECK(model_relation(&m, "tcp:mtu=1500", "tcp:mtu=9000") == REL_SETTING);
	CHECK(model_relation(&m, "", "nop") == REL_LAYER);           /* the root alone */
	CHECK(model_relation(&m, "", "pipe") == REL_TOTAL);
	CHECK(model_relation(&m, "pipe", "nosuch") == REL_PATHS);
	CHECK_STR(relation_name(REL_PATHS), "different-paths");
	model_free(&m);

	/* declarations that cannot be: each names the backend to fix */
	struct errbuf err;
	static const struct backend lost = { .name = "lost", .path = { .extends = "nosuch", .adds = "x" } };
	static const struct backend loop_a = { .name = "a", .path = { .extends = "b", .adds = "x" } };
	static const struct backend loop_b = { .name = "b", .path = { .extends = "a", .adds = "x" } };
	static const struct backend *const bad1[] = { &t_nop, &lost, NULL }, *const bad2[] = { &loop_a, &loop_b, NULL };
	CHECK(model_build(&m, bad1, &err) < 0);
	CHECK(strstr(err.msg, "backend lost: path.extends names no backend: nosuch") != NULL);
	model_free(&m);
	CHECK(model_build(&m, bad2, &err) < 0);
	CHECK(strstr(err.msg, "circle") != NULL);
	model_free(&m);
}

/* Two knobs varied (mtu, placement), model in the file, offload not applying
 * to pipe: the dimensions, the points, and a second sweep without the mtu
 * column (it did not vary it) matched on the rest. */
static const char knobs_a[] =
	"backend,clients,offload,mtu,placement,rep,model,tso_read,status,mb_per_sec,ops_per_sec\n"
	"tcp,1,on,1500,same,1,processes,on,ok,10,100\n"
	"tcp,1,on,65536,same,1,processes,on,ok,20,200\n"
	"tcp,1,on,1500,split,1,processes,on,ok,30,300\n"
	"tcp,1,on,65536,split,1,processes,on,ok,40,400\n"
	"tcp,1,on,65536,split,2,processes,off,ok,42,420\n"
	"pipe,1,n/a,n/a,same,1,processes,n/a,ok,50,500\n"
	"nop,1,n/a,n/a,same,1,processes,n/a,ok,1000,10000\n"
	"nop,1,n/a,n/a,split,1,processes,n/a,ok,500,5000\n";
static const char knobs_b[] =
	"backend,clients,offload,placement,rep,model,status,mb_per_sec\n"
	"tcp,1,on,same,1,processes,ok,11\n"
	"pipe,1,n/a,same,1,processes,ok,55\n";

static void knob_points(void)
{
	struct table t;
	struct summary s;
	struct errbuf err;
	CHECK(parse_table(&t, knobs_a) == 0);
	struct strlist keys = row_dimensions(&t);
	struct strlist carry = row_carried(&t, &keys);
	struct strlist metrics = strlist_split("mb_per_sec");
	CHECK_EQ_U(keys.n, 6);
	CHECK_STR(keys.v[0], "backend");
	CHECK_STR(keys.v[2], "model");          /* the points' names first, then the knobs in their order */
	CHECK_STR(keys.v[3], "offload");
	CHECK_STR(keys.v[4], "mtu");
	CHECK_STR(keys.v[5], "placement");
	CHECK_EQ_U(carry.n, 1);
	CHECK_STR(carry.v[0], "tso_read");
	CHECK(summarize_runs(&s, &t, &keys, &metrics, &carry, 0, &err) == 0);
	CHECK_EQ_U(s.npoints, 7);               /* 4 of tcp, one of pipe, two of nop */
	/* numbers numerically, other values in the order they first appear */
	CHECK_STR(s.p[0].key[4], "1500");
	CHECK_STR(s.p[0].key[5], "same");
	CHECK_STR(s.p[1].key[4], "1500");
	CHECK_STR(s.p[1].key[5], "split");
	CHECK_STR(s.p[3].key[4], "65536");
	CHECK_EQ_U(s.p[3].n_ok, 2);
	CHECK_NEAR(s.p[3].m[0].mean, 41, 1e-12);
	CHECK_STR(s.p[3].carry[0], "mixed");

	/* cost: the nop point sharing the most dimensions (placement split) */
	struct cost_row *cost;
	struct summary ops;
	CHECK(summarize_any(&ops, &t, &keys, "ops_per_sec", 0, &err) == 0);
	size_t n = cost_rows(&cost, &ops, "nop");
	CHECK_EQ_U(n, 5);
	for (size_t i = 0; i < n; i++)
		CHECK_STR(cost[i].base->key[5], cost[i].p->key[5]);
	CHECK_NEAR(cost[3].cost_us, 1e6 / 410 - 1e6 / 5000, 1e-9);
	free(cost);

	/* a level naming knob values; a bare setting is the offload */
	struct strlist levels = strlist_split("pipe,tcp:mtu=65536:placement=split,tcp:on:mtu=1500,tcp:mtu=9000");
	struct layer_row *r;
	struct decomp_model m;
	test_model(&m);
	n = decompose(&r, &ops, &levels, &m);
	CHECK_EQ_U(n, 3);
	if (n == 3) {
		CHECK_NEAR(r[1].mean, 410 - 500, 1e-9);
		CHECK_NEAR(r[2].top, 100, 1e-9);        /* the first tcp point with mtu 1500: same */
		CHECK_STR(r[1].name, "tcp:mtu=65536:placement=split-pipe");
		CHECK(r[1].relation == REL_PATHS);
		CHECK(r[2].relation == REL_SETTING);     /* tcp at two knob settings */
	}
	layer_rows_free(r, n);
	model_free(&m);
	strlist_free(&levels);
	summary_free(&ops);
	summary_free(&s);
	table_free(&t);
	strlist_free(&keys);
	strlist_free(&carry);
	strlist_free(&metrics);

	/* An older runs.csv: tso, gso, gro were read back; they are no keys. */
	CHECK(parse_table(&t, "backend,clients,offload,rep,model,tso,gso,gro,mb_per_sec\n"
			  "tcp,1,on,1,threads,on,on,off,5\n") == 0);
	row_upgrade_table(&t);
	keys = row_dimensions(&t);
	CHECK_EQ_U(keys.n, 4);
	CHECK_STR(keys.v[3], "offload");
	CHECK(table_col(&t, "gro_read") == 7 && table_col(&t, "gro") < 0);
	strlist_free(&keys);
	table_free(&t);
}

/* Two tables compared on keys (NULL: comparison_keys): the keys, the
 * summaries, what comparison_mismatch says and the comparison. */
struct compared {
	struct table ta, tb;
	struct strlist keys;
	struct summary a, b;
	char *why;
	struct comparison c;
};

static void compare_tables(struct compared *x, const char *a_csv, const char *b_csv, const char *keys)
{
	struct errbuf err;
	CHECK(parse_table(&x->ta, a_csv) == 0 && parse_table(&x->tb, b_csv) == 0);
	x->keys = keys ? strlist_split(keys) : comparison_keys(&x->ta, &x->tb);
	CHECK(summarize_any(&x->a, &x->ta, &x->keys, "mb_per_sec", 0, &err) == 0);
	CHECK(summarize_any(&x->b, &x->tb, &x->keys, "mb_per_sec", 0, &err) == 0);
	x->why = comparison_mismatch(&x->a, &x->b);
	compare_summaries(&x->c, &x->a, &x->b, 0.05, 0);
}

static void compared_free(struct compared *x)
{
	comparison_free(&x->c);
	free(x->why);
	summary_free(&x->a);
	summary_free(&x->b);
	strlist_free(&x->keys);
	table_free(&x->ta);
	table_free(&x->tb);
}

static void knob_comparisons(void)
{
	struct compared x;
	compare_tables(&x, knobs_a, knobs_b, NULL);
	CHECK_EQ_U(x.keys.n, 6);
	CHECK_STR(x.keys.v[4], "mtu");          /* B lacks it: "-" there */
	CHECK_STR(x.why, "mtu (A: 1500, 65536, n/a; B: -)");   /* what no point can share */
	CHECK_EQ_U(x.c.ncommon, 0);
	compared_free(&x);

	/* Compared across mtu and placement: tcp and pipe at 1 client match. */
	compare_tables(&x, knobs_a, knobs_b, "backend,clients,model,offload");
	CHECK(x.why == NULL);
	CHECK_EQ_U(x.c.ncommon, 2);
	CHECK_STR(x.c.rows[2].verdict, "only in A");    /* nop */
	compared_free(&x);

	/* Matched on every key: B's mtu "-" where A has no column. */
	compare_tables(&x, "backend,clients,model,mb_per_sec\ntcp,1,threads,5\ntcp,1,threads,6\n",
		       "backend,clients,mtu,placement,mb_per_sec\ntcp,1,-,-,7\ntcp,1,-,-,8\ntcp,1,1500,-,9\n", NULL);
	CHECK_EQ_U(x.keys.n, 4);                /* model: only A has it, so no key */
	CHECK_EQ_U(x.c.ncommon, 1);
	CHECK_EQ_U(x.c.nrows, 2);
	CHECK_NEAR(x.c.rows[0].change_pct, 100 * (7.5 / 5.5 - 1), 1e-9);
	compared_free(&x);

	/* No combination in both, though each value is; or only some are. */
	compare_tables(&x, "backend,clients,mb_per_sec\ntcp,1,1\nnop,2,1\n",
		       "backend,clients,mb_per_sec\ntcp,2,1\nnop,1,1\n", NULL);
	CHECK_STR(x.why, "no key alone: the same values in A and B, in combinations none of which is in both");
	compared_free(&x);
	compare_tables(&x, "backend,clients,mb_per_sec\ntcp,1,1\nnop,2,1\n",
		       "backend,clients,mb_per_sec\ntcp,2,1\npipe,1,1\n", NULL);
	CHECK_STR(x.why, "backend (A: tcp, nop; B: tcp, pipe), in combinations none of which is in both");
	compared_free(&x);
}

/* The layers of tests/data/layers.csv (r: all 8) against +-20% of the
 * level below: offload 2 +- t(0.95, 50/17) sqrt(5/3) on tcp:off's 11 is
 * [-1.06, 5.06], 46% of 11 at its far end: cannot tell; unix - pipe 3 +-
 * 2.131847 sqrt(2/3) on 5 is clear of 0 and beyond 20%: different; the
 * first level is no layer between two: n/a. */
static void layer_equivalence(struct layer_row *r)
{
	struct equiv_margin m;
	struct errbuf err;

	CHECK(equiv_margin_parse(&m, "20%", &err) == 0);
	layers_equivalence(r, 8, &m);
	CHECK(r[0].eq.verdict == EQUIV_NONE);
	CHECK(r[2].eq.verdict == EQUIV_DIFFERENT);
	CHECK_NEAR(r[2].eq.hi, 100 * (3 + 2.131847 * sqrt(2.0 / 3)) / 5, 1e-3);
	CHECK(r[4].eq.verdict == EQUIV_CANNOT_TELL);
	CHECK_NEAR(r[4].eq.shown, 100 * (2 + stats_t_quantile(0.95, 50.0 / 17) * sqrt(5.0 / 3)) / 11, 1e-6);
}

/* tcp − unix like with like: tcp's point at copy_replies=on where the
 * sweep has one (tests/data/like-with-like.csv). */
static void paths_like_with_like(void)
{
	struct table t;
	struct summary s;
	struct errbuf err;
	struct strlist keys = strlist_split("backend,clients,offload,copy_replies");
	struct layer_row *r;
	struct decomp_model m;

	test_model(&m);
	CHECK(table_read(&t, TBENCH_SRCDIR "/tests/data/like-with-like.csv", &err) == 0);
	CHECK(summarize_any(&s, &t, &keys, "cost_cpu_us", 0, &err) == 0);
	size_t n = decompose_model(&r, &s, &m);
	const struct layer_row *paths = NULL, *offload = NULL;
	for (size_t i = 0; i < n; i++) {
		if (strcmp(r[i].name, "tcp-unix") == 0)
			paths = &r[i];
		if (strcmp(r[i].name, "offload") == 0)
			offload = &r[i];
	}
	CHECK(paths && offload);
	if (paths) {
		CHECK_NEAR(paths->mean, 12 - 11, 1e-12);
		CHECK_STR(paths->label, "tcp − unix: different paths, not a layer; like with like: both "
			  "copy reply bodies (tcp with --copy-replies)");
	}
	if (offload)
		CHECK_NEAR(offload->mean, 10 - 8, 1e-12);
	layer_rows_free(r, n);
	summary_free(&s);
	table_free(&t);
	strlist_free(&keys);
	model_free(&m);
}

/* The layers of tests/data/layers.csv, worked out in its comments. */
static void layers(void)
{
	struct table t;
	struct summary s;
	struct errbuf err;
	struct strlist keys = strlist_split("backend,clients,offload");
	struct strlist levels = strlist_split("nop,pipe,unix,tcp:off,tcp:on");
	struct layer_row *r;
	struct decomp_model m;

	test_model(&m);
	CHECK(table_read(&t, TBENCH_SRCDIR "/tests/data/layers.csv", &err) == 0);
	CHECK(summarize_any(&s, &t, &keys, "cost_cpu_us", 0, &err) == 0);
	size_t n = decompose(&r, &s, &levels, &m);
	CHECK_EQ_U(n, 8);
	if (n == 8) {
		/* the levels of the old stack: unix over pipe and tcp over unix
		 * are differences of different paths, not layers */
		const char *const names[] = { "harness", "copy_wakeup", "unix-pipe", "tcp:off-unix", "offload",
					      "harness", "copy_wakeup", "tcp:off-pipe" };
		const enum path_relation rel[] = { REL_LAYER, REL_LAYER, REL_PATHS, REL_PATHS, REL_LAYER,
						   REL_LAYER, REL_LAYER, REL_PATHS };
		const double means[] = { 1, 4, 3, 3, 2, 2, 5, 14 };
		for (size_t i = 0; i < n; i++) {
			CHECK_STR(r[i].name, names[i]);
			CHECK_NEAR(r[i].mean, means[i], 1e-12);
			CHECK_NEAR(r[i].top - r[i].bottom, means[i], 1e-12);   /* the stack */
			CHECK_STR(r[i].clients, i < 5 ? "1" : "2");
			CHECK(r[i].relation == rel[i]);
		}
		CHECK_STR(r[2].label, "unix − pipe: different paths, not a layer");
		CHECK_STR(r[7].label, "tcp:off − pipe: different paths, not a layer; tcp's reply bodies "
			  "stay in the kernel (unless --copy-replies), pipe's are copied");
		CHECK_NEAR(r[0].ci, 0, 1e-12);                          /* nop alone: no spread */
		CHECK_NEAR(r[0].bottom, 0, 0);
		/* pipe - nop: se = sqrt(1/3), df = 2: t = 4.303 */
		CHECK_NEAR(r[1].df, 2, 1e-9);
		CHECK_NEAR(r[1].ci, 4.3027 * sqrt(1.0 / 3), 1e-3);
		/* unix - pipe: se = sqrt(2/3), df = 4: t = 2.776 */
		CHECK_NEAR(r[2].df, 4, 1e-9);
		CHECK_NEAR(r[2].ci, 2.7764 * sqrt(2.0 / 3), 1e-3);
		/* tcp off - unix: variances of the means 4/3 and 1/3, df = (5/3)^2 / ((4/3)^2/2 + (1/3)^2/2) */
		CHECK_NEAR(r[3].df, 50.0 / 17, 1e-9);
		CHECK_NEAR(r[3].ci, stats_t_quantile(0.975, 50.0 / 17) * sqrt(5.0 / 3), 1e-9);
		CHECK_NEAR(r[4].ci, r[3].ci, 1e-9);                     /* the same two variances */
		CHECK_NEAR(r[4].bottom, 11, 0);
		CHECK_NEAR(r[4].top, 13, 0);
		CHECK(isnan(r[5].ci) && isnan(r[6].ci));                /* one nop run: no interval */
		CHECK_NEAR(r[7].bottom, 7, 0);
		layer_equivalence(r);
	}
	layer_rows_free(r, n);

	/* the model's own decomposition: the stack (nop, tcp off, tcp on; no
	 * toy in the data), then pipe and unix beside it, then the paths */
	n = decompose_model(&r, &s, &m);
	CHECK_EQ_U(n, 10);
	if (n == 10) {
		const char *const names[] = { "harness", "tcpip", "offload", "unix_socket", "copy_wakeup",
					      "tcp-unix", "unix-pipe", "harness", "tcpip", "copy_wakeup" };
		const double means[] = { 1, 10, 2, 7, 4, 5, 3, 2, 19, 5 };
		for (size_t i = 0; i < n; i++) {
			CHECK_STR(r[i].name, names[i]);
			CHECK_NEAR(r[i].mean, means[i], 1e-12);
			CHECK(r[i].relation == (i == 5 || i == 6 ? REL_PATHS : REL_LAYER));
		}
		CHECK_STR(r[1].subtrahend, "nop");
		CHECK_NEAR(r[2].bottom, 11, 0);                         /* the stack: tcp off to on */
		CHECK_NEAR(r[5].bottom, 8, 0);                          /* the two totals side by side */
		CHECK_NEAR(r[5].top, 13, 0);
		CHECK_STR(r[8].clients, "2");
	}
	layer_rows_free(r, n);
	model_free(&m);
	summary_free(&s);
	table_free(&t);
	strlist_free(&keys);
	strlist_free(&levels);
}

/* ---- differences taken pair by pair -------------------------------------------- */

/* The Student-t interval of a mean difference and the minimum detectable
 * effect, worked out by hand. */
static void difference_intervals(void)
{
	/* d = 2, 4, 4, 6: mean 4, squares 8, sd sqrt(8/3), se sqrt(8/3)/2 =
	 * sqrt(2/3), df 3: t(0.975, 3) = 3.1824463 */
	const double d[] = { 2, 4, 4, 6 };
	struct diff_est e = stats_diff_paired(d, 4, 0.95);
	CHECK(e.valid);
	CHECK_EQ_U(e.pairs, 4);
	CHECK_NEAR(e.mean, 4, 1e-12);
	CHECK_NEAR(e.se, sqrt(2.0 / 3), 1e-12);
	CHECK_NEAR(e.df, 3, 0);
	CHECK_NEAR(e.ci, 3.1824463 * sqrt(2.0 / 3), 1e-6);
	CHECK_NEAR(e.t, 4 / sqrt(2.0 / 3), 1e-9);
	CHECK(!stats_diff_paired(d, 1, 0.95).valid);

	/* MDE: with many df it is (1.95996 + 0.84162) se, the "2.8 standard
	 * errors" of the textbooks; sd 1 and 5 runs a side: se sqrt(0.4),
	 * df 8, t(0.975, 8) = 2.3060, t(0.80, 8) = 0.8889. */
	CHECK_NEAR(stats_mde(1, 1e7, 0.95, 0.80), 2.8016, 1e-3);
	e = stats_diff_welch(10, 1, 5, 12, 1, 5, 0.95);
	CHECK_NEAR(e.df, 8, 1e-9);
	CHECK_NEAR(e.mde, (2.3060 + 0.8889) * sqrt(0.4), 1e-3);
	CHECK_NEAR(e.mean, 2, 1e-12);
	CHECK_NEAR(e.p, stats_welch(10, 1, 5, 12, 1, 5).p, 1e-12);
	CHECK(!stats_diff_welch(10, 1, 1, 12, 1, 5, 0.95).valid);

	/* Runs to resolve an effect: sd 1 a side, 5 runs each give an MDE of
	 * 2.0207 (above), 4 runs each (se sqrt(0.5), df 6: t(0.975, 6) =
	 * 2.4469, t(0.80, 6) = 0.9057) 2.3707. */
	CHECK_EQ_U(stats_runs_to_resolve(1, 1, 2.1, 0.95, 0.80, 1000), 5);
	CHECK_EQ_U(stats_runs_to_resolve(1, 1, 2.37, 0.95, 0.80, 1000), 5);
	CHECK_EQ_U(stats_runs_to_resolve(1, 1, 2.38, 0.95, 0.80, 1000), 4);
	CHECK_EQ_U(stats_runs_to_resolve(0, 0, 1, 0.95, 0.80, 1000), 2);    /* no noise: the least */
	CHECK_EQ_U(stats_runs_to_resolve(1, 1, 0.01, 0.95, 0.80, 100), 0);  /* beyond max */
	CHECK_EQ_U(stats_runs_to_resolve(1, 1, 0, 0.95, 0.80, 1000), 0);
	CHECK_EQ_U(stats_runs_to_resolve(NAN, 1, 2, 0.95, 0.80, 1000), 0);
	/* Many runs: the MDE of n runs a side near 2.8016 sqrt(2 / n). */
	size_t n = stats_runs_to_resolve(1, 1, 0.1, 0.95, 0.80, 100000);
	CHECK(n >= 1568 && n <= 1572);   /* 2 (2.8016 / 0.1)^2 = 1569.8 */
}

/* pipe and unix share a large offset per rep (the machine's drift): the
 * differences 10, 12, 8, 10 are steady, the levels are not. */
static const char paired_runs[] =
	"backend,clients,rep,status,mb_per_sec\n"
	"pipe,1,1,ok,1000\npipe,1,2,ok,2000\npipe,1,3,ok,3000\npipe,1,4,ok,4000\n"
	"unix,1,2,ok,2012\nunix,1,1,ok,1010\nunix,1,3,ok,3008\nunix,1,4,ok,4010\nunix,1,5,failed,\n"
	/* at 2 clients unix's reps are not pipe's: no pairs */
	"pipe,2,1,ok,1000\npipe,2,2,ok,2000\npipe,2,3,ok,3000\n"
	"unix,2,1,ok,1010\nunix,2,2,ok,2012\nunix,2,4,ok,3008\n"
	/* at 4 clients a rep twice on one side: no pairs */
	"pipe,4,1,ok,1000\npipe,4,1,ok,2000\nunix,4,1,ok,1010\nunix,4,2,ok,2012\n"
	/* at 8 clients --precision's way: unix went on for 2 more reps; the 3
	 * both ran pair (differences 10, 12, 8), the 2 more do not count */
	"pipe,8,1,ok,1000\npipe,8,2,ok,2000\npipe,8,3,ok,3000\n"
	"unix,8,1,ok,1010\nunix,8,2,ok,2012\nunix,8,3,ok,3008\nunix,8,4,ok,9000\nunix,8,5,ok,9500\n";

static void paired_differences(void)
{
	struct table t;
	struct summary s;
	struct errbuf err;
	struct strlist keys = strlist_split("backend,clients");
	struct strlist levels = strlist_split("pipe,unix");
	struct layer_row *r;
	struct decomp_model m;

	test_model(&m);
	CHECK(parse_table(&t, paired_runs) == 0);
	CHECK(summarize_any(&s, &t, &keys, "mb_per_sec", 0, &err) == 0);
	size_t n = decompose(&r, &s, &levels, &m);
	model_free(&m);
	CHECK_EQ_U(n, 8);
	if (n == 8) {
		/* 1 client: the interval of 10, 12, 8, 10 (sd sqrt(8/3), se sqrt(2/3), df 3);
		 * unix - pipe is no layer, but its difference pairs up all the same */
		CHECK(r[1].relation == REL_PATHS);
		CHECK_STR(diff_method(&r[1].d), "paired");
		CHECK_EQ_U(r[1].d.pairs, 4);
		CHECK_NEAR(r[1].mean, 10, 1e-9);
		CHECK_NEAR(r[1].ci, 3.1824463 * sqrt(2.0 / 3), 1e-6);
		CHECK_NEAR(r[1].df, 3, 0);
		/* the same data unpaired: the offsets' spread in the interval */
		struct diff_est u = point_difference(r[1].b, r[1].a, 0);
		CHECK_STR(diff_method(&u), "unpaired");
		CHECK_NEAR(u.mean, 10, 1e-9);
		CHECK(u.ci > 100 * r[1].ci);
		CHECK(u.mde > 100 * r[1].d.mde);
		/* reps that do not match, a rep twice: Welch's */
		CHECK_STR(diff_method(&r[3].d), "unpaired");
		CHECK_EQ_U(r[3].d.pairs, 0);
		CHECK_NEAR(r[3].ci, point_difference(r[3].b, r[3].a, 0).ci, 1e-12);
		CHECK_NEAR(r[3].df, stats_welch(2000, 1000, 3, 2010, 1001, 3).df, 1e-6);
		CHECK_STR(diff_method(&r[5].d), "unpaired");
		/* 8 clients: paired on reps 1-3, the layer their mean (10), not the
		 * difference of the means (which the 2 extra reps would move) */
		CHECK_STR(diff_method(&r[7].d), "paired");
		CHECK_EQ_U(r[7].d.pairs, 3);
		CHECK_NEAR(r[7].mean, 10, 1e-9);
		CHECK_NEAR(r[7].ci, 4.3026527 * 2 / sqrt(3.0), 1e-6);   /* sd 2, t(0.975, 2) */
	}
	layer_rows_free(r, n);

	/* compare pairs only when asked (two sweeps' reps are not simultaneous) */
	struct comparison c;
	struct summary one = s;
	compare_summaries(&c, &one, &s, 0.05, 1);
	CHECK_STR(diff_method(&c.rows[0].d), "paired");
	CHECK_NEAR(c.rows[0].d.mean, 0, 1e-12);
	comparison_free(&c);
	summary_free(&s);
	table_free(&t);
	strlist_free(&keys);
	strlist_free(&levels);
}

/* A layer of the model's own (pipe over nop) from runs that pair up by rep:
 * the interval of the per-rep differences 4, 5, 3. */
static void paired_layer(void)
{
	static const char runs[] =
		"backend,clients,rep,status,cost_cpu_us\n"
		"nop,1,1,ok,100\nnop,1,2,ok,200\nnop,1,3,ok,300\n"
		"pipe,1,1,ok,104\npipe,1,2,ok,205\npipe,1,3,ok,303\n";
	struct table t;
	struct summary s;
	struct errbuf err;
	struct strlist keys = strlist_split("backend,clients");
	struct decomp_model m;
	struct layer_row *r;

	test_model(&m);
	CHECK(parse_table(&t, runs) == 0);
	CHECK(summarize_any(&s, &t, &keys, "cost_cpu_us", 0, &err) == 0);
	size_t n = decompose_model(&r, &s, &m);
	CHECK_EQ_U(n, 2);
	if (n == 2) {
		CHECK_STR(r[1].name, "copy_wakeup");
		CHECK(r[1].relation == REL_LAYER);
		CHECK_STR(diff_method(&r[1].d), "paired");
		CHECK_EQ_U(r[1].d.pairs, 3);
		CHECK_NEAR(r[1].mean, 4, 1e-9);
		CHECK_NEAR(r[1].ci, 4.3026527 * 1 / sqrt(3.0), 1e-6);   /* sd 1, t(0.975, 2) */
	}
	layer_rows_free(r, n);
	model_free(&m);
	summary_free(&s);
	table_free(&t);
	strlist_free(&keys);
}

/* --verdict's rule and its three answers on made-up intervals. */
static void verdicts(void)
{
	struct verdict_rule rule;
	struct errbuf err;
	double lo, hi;
	CHECK(verdict_rule_parse(&rule, "mb_per_sec<-3%", &err) == 0);
	CHECK_STR(rule.figure, "mb_per_sec");
	CHECK(rule.below && rule.relative);
	CHECK_NEAR(rule.threshold, -3, 0);

	struct point pa = { 0 }, pb = { 0 };
	struct comparison_row row = { .a = &pa, .b = &pb, .d = { .valid = 1 } };
	row.change_lo_pct = -8, row.change_hi_pct = -4;
	CHECK(verdict_of(&row, &rule, &lo, &hi) == VERDICT_BAD);
	CHECK_NEAR(lo, -8, 0);
	row.change_lo_pct = -2, row.change_hi_pct = 1;
	CHECK(verdict_of(&row, &rule, &lo, &hi) == VERDICT_GOOD);
	row.change_lo_pct = -4, row.change_hi_pct = 1;
	CHECK(verdict_of(&row, &rule, &lo, &hi) == VERDICT_UNSURE);
	row.d.valid = 0;
	CHECK(verdict_of(&row, &rule, &lo, &hi) == VERDICT_UNSURE);
	verdict_rule_free(&rule);

	/* '>' and an absolute threshold: bad when B - A lies above 0.5 */
	CHECK(verdict_rule_parse(&rule, "wall_us_per_op>0.5", &err) == 0);
	CHECK(!rule.below && !rule.relative);
	row.d = (struct diff_est){ .mean = 1, .ci = 0.25, .valid = 1 };
	CHECK(verdict_of(&row, &rule, &lo, &hi) == VERDICT_BAD);
	row.d.mean = 0.1;
	CHECK(verdict_of(&row, &rule, &lo, &hi) == VERDICT_GOOD);
	verdict_rule_free(&rule);

	CHECK(verdict_rule_parse(&rule, "mb_per_sec", &err) < 0);
	CHECK(strstr(err.msg, "FIGURE<THRESHOLD") != NULL);
	CHECK(verdict_rule_parse(&rule, "mb_per_sec<-3%x", &err) < 0);
	CHECK(verdict_rule_parse(&rule, "<3", &err) < 0);
	CHECK(verdict_rule_parse(&rule, "mb_per_sec<", &err) < 0);
}

/* ---- CPU of a process tree ----------------------------------------------------- */

static double own_cpu_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* A child that has used 0.2 s of CPU counts while it lives and after it is
 * reaped (the bounds are CPU time, not wall-clock: a loaded machine only
 * makes the child take longer). */
static void process_tree(void)
{
	double before[2], during[2], after[2];
	struct errbuf err;
	int ready[2];
	char c;

	CHECK(proc_tree_cpu(getpid(), before, &err) == 0);
	CHECK(pipe(ready) == 0);
	pid_t child = fork();
	if (child == 0) {
		volatile unsigned long spin = 0;
		while (own_cpu_s() < 0.2)
			spin++;
		if (write(ready[1], "x", 1) != 1)
			_exit(1);
		pause();
		_exit(0);
	}
	CHECK(child > 0 && read(ready[0], &c, 1) == 1);
	CHECK(proc_tree_cpu(getpid(), during, &err) == 0);
	CHECK(during[0] + during[1] - before[0] - before[1] >= 0.15);   /* a tick or so short at most */
	size_t n, marked = 0;
	struct proc_entry *v = proc_tree(getpid(), &n, &err);
	CHECK(v != NULL);
	for (size_t i = 0; v && i < n; i++) {
		marked += v[i].in_tree;
		if (v[i].pid == child || v[i].pid == getpid())
			CHECK(v[i].in_tree);
		if (v[i].pid == getppid())
			CHECK(!v[i].in_tree);
	}
	CHECK(marked >= 2);
	free(v);
	kill(child, SIGKILL);
	CHECK(waitpid(child, NULL, 0) == child);
	CHECK(proc_tree_cpu(getpid(), after, &err) == 0);
	CHECK(after[0] + after[1] >= during[0] + during[1]);            /* reaped: still counted */
	close(ready[0]);
	close(ready[1]);
	CHECK(proc_tree_cpu(child, after, &err) < 0 && strstr(err.msg, "no process"));
}

/* B - A of two made-up samples, unpaired (Welch). */
static struct diff_est welch_of(const double *a, const double *b, size_t n)
{
	return stats_diff_welch(stats_mean_of(a, n), stats_sd_of(a, n), n,
				stats_mean_of(b, n), stats_sd_of(b, n), n, 0.95);
}

static void check_equivalence(const struct diff_est *d, double margin, enum equivalence want,
			      double lo, double hi)
{
	struct equiv_est e = stats_equivalence(d, margin, 0.05);
	if (e.verdict != want)
		fprintf(stderr, "  margin %g: got %s, want %s\n", margin, equivalence_word(e.verdict),
			equivalence_word(want));
	CHECK(e.verdict == want);
	CHECK_NEAR(e.lo, lo, 1e-5);
	CHECK_NEAR(e.hi, hi, 1e-5);
	CHECK_NEAR(e.shown, fmax(fabs(lo), fabs(hi)), 1e-5);
}

/* Two one-sided tests at alpha 0.05 on made-up samples: the 90% interval
 * of the difference, mean +- t(0.95, df) se, against +-margin, then the
 * two-sided p against 0.05.  Unpaired samples of 3 with sd 1 (or 0.1) on
 * both sides: se = sd sqrt(2/3), Welch df = 4, t(0.95, 4) = 2.131847.
 * Paired, 3 differences with sd 0.5: se = 0.5 / sqrt(3) = 0.288675, df 2,
 * t(0.95, 2) = 2.919986. */
static void equivalence_tests(void)
{
	const double a[] = { 99, 100, 101 }, near[] = { 100, 101, 102 }, far[] = { 109, 110, 111 };
	const double a_tight[] = { 99.9, 100, 100.1 }, b_tight[] = { 100.9, 101, 101.1 };

	/* Cannot tell: 1 +- 2.131847 * 0.816497 = 1 +- 1.740646, [-0.740646,
	 * 2.740646]: not within +-2; t = 1.2247, p = 0.288: no difference
	 * either.  The same noise shows +-3 (above 2.740646) equivalent. */
	struct diff_est d = welch_of(a, near, 3);
	check_equivalence(&d, 2, EQUIV_CANNOT_TELL, -0.740646, 2.740646);
	check_equivalence(&d, 3, EQUIV_EQUIVALENT, -0.740646, 2.740646);
	/* Different: 10 +- 1.740646 is far outside +-3; t = 12.25, p < 0.001. */
	d = welch_of(a, far, 3);
	check_equivalence(&d, 3, EQUIV_DIFFERENT, 8.259354, 11.740646);
	/* Equivalent though significant: 1 +- 0.174065 lies within +-3 (a real
	 * difference, too small to matter); within +-1.1 it does not, and
	 * then it is different. */
	d = welch_of(a_tight, b_tight, 3);
	CHECK(d.p < 0.05);
	check_equivalence(&d, 3, EQUIV_EQUIVALENT, 0.825935, 1.174065);
	check_equivalence(&d, 1.1, EQUIV_DIFFERENT, 0.825935, 1.174065);

	/* Paired: differences 0.5, 1, 1.5: 1 +- 2.919986 * 0.288675 = 1 +-
	 * 0.842927, [0.157073, 1.842927]: within +-2 equivalent; not within
	 * +-1.5, and t = 3.4641 with 2 df is p = 0.0742: cannot tell. */
	const double dn[] = { 0.5, 1, 1.5 }, df_[] = { 9.5, 10, 10.5 }, flat[] = { 2, 2, 2 };
	d = stats_diff_paired(dn, 3, 0.95);
	check_equivalence(&d, 2, EQUIV_EQUIVALENT, 0.157073, 1.842927);
	check_equivalence(&d, 1.5, EQUIV_CANNOT_TELL, 0.157073, 1.842927);
	/* 10 +- 0.842927 against +-2: different (t = 34.6, p < 0.001). */
	d = stats_diff_paired(df_, 3, 0.95);
	check_equivalence(&d, 2, EQUIV_DIFFERENT, 9.157073, 10.842927);
	/* No spread: the interval is the point 2: within +-3, outside +-1. */
	d = stats_diff_paired(flat, 3, 0.95);
	check_equivalence(&d, 3, EQUIV_EQUIVALENT, 2, 2);
	check_equivalence(&d, 1, EQUIV_DIFFERENT, 2, 2);

	/* Too little data, or no margin: no verdict. */
	d = stats_diff_paired(dn, 1, 0.95);
	CHECK(stats_equivalence(&d, 3, 0.05).verdict == EQUIV_NONE);
	d = welch_of(a, near, 3);
	CHECK(stats_equivalence(&d, 0, 0.05).verdict == EQUIV_NONE);
	CHECK_STR(equivalence_word(EQUIV_CANNOT_TELL), "cannot tell");
}

/* A margin in percent of the reference mean: 3% of 100 is the +-3 above,
 * equivalent, shown 2.740646%; 3% of 50 is 1.5: cannot tell, and the
 * interval in percent of 50 doubles.  No reference mean above 0: n/a. */
static void equivalence_margins(void)
{
	const double a[] = { 99, 100, 101 }, near[] = { 100, 101, 102 };
	struct diff_est d = welch_of(a, near, 3);
	struct equiv_margin m;
	struct errbuf err;

	CHECK(equiv_margin_parse(&m, "3%", &err) == 0 && m.relative && m.value == 3);
	struct equiv_est e = equivalence_of(&d, 100, &m, 0.05);
	CHECK(e.verdict == EQUIV_EQUIVALENT);
	CHECK_NEAR(e.shown, 2.740646, 1e-5);
	e = equivalence_of(&d, 50, &m, 0.05);
	CHECK(e.verdict == EQUIV_CANNOT_TELL);
	CHECK_NEAR(e.lo, -1.481291, 1e-5);
	CHECK_NEAR(e.shown, 5.481291, 1e-5);
	CHECK(equivalence_of(&d, 0, &m, 0.05).verdict == EQUIV_NONE);
	CHECK(equiv_margin_parse(&m, "0.5", &err) == 0 && !m.relative && m.value == 0.5);
	const char *const bad[] = { "0", "-3%", "3x", "%", "", "3%%", "nan" };
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		CHECK(equiv_margin_parse(&m, bad[i], &err) == -1);
	CHECK(strstr(err.msg, "want a margin above 0") != NULL);
}

static void median_intervals(void)
{
	double x[] = { 5, 1, 3 }, y[] = { 9, 2, 7, 4, 6 };
	struct median_est m = stats_median_est(x, 3);
	CHECK_EQ_U(m.n, 3);
	CHECK_NEAR(m.median, 3, 0);
	CHECK_NEAR(m.lowest, 1, 0);
	CHECK_NEAR(m.highest, 5, 0);
	CHECK_NEAR(m.confidence, 0.75, 1e-15);      /* 1 - 2^(1-3) */
	m = stats_median_est(y, 5);
	CHECK_NEAR(m.median, 6, 0);
	CHECK_NEAR(m.confidence, 0.9375, 1e-15);    /* 1 - 2^-4: the 94% of 5 pairs */
	m = stats_median_est(y, 1);
	CHECK_NEAR(m.confidence, 0, 0);             /* one value covers nothing for sure */
	m = stats_median_est(NULL, 0);
	CHECK(m.n == 0 && isnan(m.median) && isnan(m.lowest) && m.confidence == 0);

	/* 10 µs an operation, of which parts of 3 and 2 become 1 and 1: 7 µs, 10/7 the rate */
	const double from[] = { 3, 2 }, to[] = { 1, 1 }, more[] = { 13, 0 };
	CHECK_NEAR(stats_substitute(10, from, to, 2), 10.0 / 7, 1e-15);
	CHECK_NEAR(stats_substitute(10, from, to, 0), 1, 0);            /* nothing replaced */
	CHECK_NEAR(stats_substitute(10, from, more, 1), 10.0 / 20, 1e-15);
	CHECK(isnan(stats_substitute(1, from, to, 1)));                 /* 1 - 3 + 1: no time left */
}

/* Runs as the benchmarks write them. Clients 10 comes first in the file
 * and last in the output (numbers in order); a run of -1 (failed) and one
 * whose status is not ok count nowhere; clients 2's variant b ran rep 2
 * twice: its median takes both, its pair the last. */
static const char paired_csv[] =
	"rep,clients,variant,status,mb\n"
	"1,10,a,ok,7\n"
	"1,1,a,ok,100\n" "1,1,b,ok,110\n"
	"2,1,b,ok,120\n" "2,1,a,ok,100\n"
	"3,1,a,ok,200\n" "3,1,b,ok,180\n"
	"4,1,b,ok,-1\n"
	"1,2,a,ok,50\n" "1,2,b,fail,0\n"
	"2,2,a,ok,40\n" "2,2,b,ok,60\n" "2,2,b,ok,80\n";

static struct paired_spec paired_spec(enum paired_stat stat)
{
	static char *keys[] = { "clients" }, *where[] = { "status=ok" }, *positive[] = { "mb" };
	return (struct paired_spec){ .figure = "mb", .keys = { 1, keys }, .variant = "variant",
		.base = "a", .pair_by = "rep", .stat = stat, .where = { 1, where },
		.positive = { 1, positive }, .per_scale = 1 };
}

static void paired_ratios(void)
{
	struct table t;
	struct paired_result r;
	struct errbuf err;
	struct paired_spec s = paired_spec(PAIRED_RATIO);

	if (parse_table(&t, paired_csv) < 0 || paired_compute(&r, &t, &s, &err) < 0) {
		CHECK(!"paired_compute");
		return;
	}
	CHECK_EQ_U(r.n, 5);   /* (1,a) (1,b) (2,a) (2,b) (10,a) */
	const struct paired_group *a1 = &r.g[0], *b1 = &r.g[1], *a2 = &r.g[2], *b2 = &r.g[3];
	CHECK(!strcmp(a1->key[0], "1") && !strcmp(a1->variant, "a") && a1->is_base);
	CHECK(!strcmp(r.g[4].key[0], "10"));
	/* a at 1 client: 100 100 200; b: 110 120 180 (its -1 left out) */
	CHECK_EQ_U(a1->fig.n, 3);
	CHECK_NEAR(a1->fig.median, 100, 0);
	CHECK_NEAR(a1->fig.highest, 200, 0);
	CHECK_EQ_U(a1->paired.n, 0);                  /* the base pairs with nothing */
	CHECK_EQ_U(b1->fig.n, 3);
	CHECK_NEAR(b1->fig.median, 120, 0);
	/* pairs: 110/100 = 1.1, 120/100 = 1.2, 180/200 = 0.9 */
	CHECK_EQ_U(b1->paired.n, 3);
	CHECK_NEAR(b1->paired.median, 1.1, 1e-12);
	CHECK_NEAR(b1->paired.lowest, 0.9, 1e-12);
	CHECK_NEAR(b1->paired.highest, 1.2, 1e-12);
	CHECK_NEAR(b1->paired.confidence, 0.75, 1e-15);
	CHECK_NEAR(b1->of_medians, 1.2, 1e-12);        /* 120 / 100 */
	/* 2 clients: a 50 40; b 60 80 (rep 1 failed); its pair the last rep 2: 80/40 */
	CHECK_NEAR(a2->fig.median, 45, 0);
	CHECK_NEAR(b2->fig.median, 70, 0);
	CHECK_EQ_U(b2->paired.n, 1);
	CHECK_NEAR(b2->paired.median, 2, 1e-12);
	CHECK_NEAR(b2->of_medians, 70.0 / 45, 1e-12);
	paired_free(&r);

	/* --cost: 1e6/110 - 1e6/100 = -909.09, 1e6/120 - 1e4 = -1666.67,
	 * 1e6/180 - 1e6/200 = 555.56: the median the first */
	s = paired_spec(PAIRED_COST);
	CHECK(paired_compute(&r, &t, &s, &err) == 0);
	CHECK_NEAR(r.g[1].paired.median, 1e6 / 110 - 1e4, 1e-9);
	CHECK_NEAR(r.g[1].paired.lowest, 1e6 / 120 - 1e4, 1e-9);
	CHECK_NEAR(r.g[1].paired.highest, 1e6 / 180 - 1e6 / 200, 1e-9);
	paired_free(&r);
	table_free(&t);
}

static void paired_groups(void)
{
	struct table t;
	struct paired_result r;
	struct errbuf err;
	static char *alias[] = { "b=a" }, *where[] = { "status" };
	struct paired_spec s = paired_spec(PAIRED_RATIO);

	if (parse_table(&t, paired_csv) < 0)
		return;
	/* b counted as a, no base: at 1 client 100 110 120 100 200 180, median (110 + 120) / 2 */
	s.base = NULL;
	s.alias = (struct strlist){ 1, alias };
	CHECK(paired_compute(&r, &t, &s, &err) == 0);
	CHECK_EQ_U(r.n, 3);
	CHECK_EQ_U(r.g[0].fig.n, 6);
	CHECK_NEAR(r.g[0].fig.median, 115, 0);
	paired_free(&r);
	/* --per rep --per-scale 2: 7 x 1e6 / (1 x 2) at 10 clients */
	s.per = "rep";
	s.per_scale = 2;
	CHECK(paired_compute(&r, &t, &s, &err) == 0);
	CHECK_NEAR(r.g[2].fig.median, 3.5e6, 0);
	paired_free(&r);
	/* no variant column: a group per point */
	s = paired_spec(PAIRED_RATIO);
	s.variant = s.base = NULL;
	CHECK(paired_compute(&r, &t, &s, &err) == 0);
	CHECK(r.n == 3 && r.g[0].fig.n == 6 && !strcmp(r.g[0].variant, ""));
	paired_free(&r);
	/* by status, every run: ok before fail, as they first appear, not as spelled */
	static char *status[] = { "status" };
	s.keys = (struct strlist){ 1, status };
	s.where = s.positive = (struct strlist){ 0, NULL };
	CHECK(paired_compute(&r, &t, &s, &err) == 0);
	CHECK(r.n == 2 && !strcmp(r.g[0].key[0], "ok") && !strcmp(r.g[1].key[0], "fail"));
	CHECK_EQ_U(r.g[0].fig.n, 12);
	paired_free(&r);
	s = paired_spec(PAIRED_RATIO);
	s.figure = "mbps";
	CHECK(paired_compute(&r, &t, &s, &err) < 0 && strstr(err.msg, "no column 'mbps'"));
	s = paired_spec(PAIRED_RATIO);
	s.where = (struct strlist){ 1, where };
	CHECK(paired_compute(&r, &t, &s, &err) < 0 && strstr(err.msg, "NAME=VALUE"));
	table_free(&t);
}

int main(void)
{
	moments();
	t_distribution();
	confidence();
	welch();
	geomean();
	tables();
	json_values();
	json_hostile();
	rows();
	trace_parts();
	summaries();
	disturbed_runs();
	model_from_registry();
	layers();
	paths_like_with_like();
	comparisons();
	knob_points();
	knob_comparisons();
	difference_intervals();
	paired_differences();
	paired_layer();
	verdicts();
	equivalence_tests();
	equivalence_margins();
	process_tree();
	median_intervals();
	paired_ratios();
	paired_groups();
	return test_done("test_stats");
}
