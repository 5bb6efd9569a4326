/* tbench-stats: the tables and statistics behind scripts/tbench-sweep,
 * tbench-plot and tbench-compare, so that the scripts do no arithmetic and
 * name no column of their own. This file reads the command line and
 * prints; the work is in table.c (CSV), json.c, stats_row.c (the columns of
 * runs.csv), stats_summary.c (points, comparisons, costs) and stats.c. */
#include "config.h"
#include "json.h"
#include "schema.h"
#include "stats_merge.h"
#include "stats_proc.h"
#include "stats_row.h"
#include "stats_summary.h"
#include "table.h"
#include "version.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* The keys when --keys is not given: the columns of the file that name a
 * point (row_dimensions), said so in --help. */
#define DEFAULT_KEYS_TEXT "backend, clients, model and every\nknob column the file has"
/* The layers of an operation: harness, copy and wake-up, socket, TCP/IP, offload. */
#define DEFAULT_LEVELS "nop,pipe,unix,tcp:off,tcp:on"

static const char prog[] = "tbench-stats";
/* git bisect run's "cannot test this revision": a verdict the noise leaves open. */
enum { EXIT_CANNOT_TELL = 125 };

__attribute__((format(printf, 2, 3), noreturn))
static void die(int code, const char *fmt, ...)
{
	va_list ap;
	fprintf(stderr, "%s: ", prog);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(code);
}

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: tbench-stats summarize [--keys K,..] [--metrics M,..] RUNS.csv\n"
		"       tbench-stats compare [--metric M] [--keys K,..] [--alpha A] [--paired]\n"
		"                        [--csv | --verdict 'FIGURE<THRESHOLD[%%]'] A B\n"
		"       tbench-stats cost [--baseline NAME] [--keys K,..] SUMMARY.csv|RUNS.csv|DIR\n"
		"       tbench-stats decompose [--figure F] [--levels L,..] [--keys K,..]\n"
		"                        SUMMARY.csv|RUNS.csv|DIR\n"
		"       tbench-stats row [--set NAME=VALUE]... [--server-cpu-start U,S\n"
		"                        --server-cpu-end U,S] [--columns C,..] [RUN.json]\n"
		"       tbench-stats row --header | --figures | --knobs\n"
		"       tbench-stats select [--where NAME=VALUE]... [--columns C,..] [--tsv] FILE.csv\n"
		"       tbench-stats proc-cpu PID\n"
		"       tbench-stats merge [--names H1,H2,..] A.json B.json ...\n"
		"\n"
		"summarize  one row per point (rows of RUNS.csv with equal key columns): n runs\n"
		"           with status 'ok', n_failed, n_disturbed (ok runs left out: their\n"
		"           'disturbed' column is not empty nor 'no', man tbench NOISE), and\n"
		"           for each metric column its mean, sample\n"
		"           standard deviation (_sd) and the half-width of the 95%% Student-t\n"
		"           confidence interval of the mean (_ci95). Default metrics: every\n"
		"           figure of runs.csv (tbench-stats row --figures) that the file has.\n"
		"           Other columns of a point, knob or read-back that are no key are\n"
		"           carried: the value its ok runs share, else 'mixed'.\n"
		"compare    per point of A and B (results directories, runs.csv or summary.csv)\n"
		"           of one figure (--metric or --figure: a column, or the JSON path it\n"
		"           is read from, e.g. cost.per_operation.segments_out):\n"
		"           means, %% change B vs A, Welch's two-sided t-test (Welch-Satterthwaite\n"
		"           degrees of freedom), 'yes' when p < alpha (default 0.05, i.e. 95%%),\n"
		"           the 95%% interval of B - A (diff, diff_ci95; in %% of A: change_lo_pct,\n"
		"           change_hi_pct) and the minimum detectable effect (mde, mde_pct: the\n"
		"           least change this test would detect at 95%% confidence with 80%% power,\n"
		"           (t(0.975, df) + t(0.80, df)) x standard error of B - A),\n"
		"           and the geometric mean of B/A over the common points. --paired: A\n"
		"           and B ran interleaved, so runs of equal rep pair up; a point's interval\n"
		"           and test are then those of the per-rep differences (method paired,\n"
		"           pairs n) where the reps match, each once, else Welch's (unpaired).\n"
		"           --verdict: for git bisect run: 'mb_per_sec<-3%%' is bad (exit 1)\n"
		"           when a point's interval of the change lies wholly below -3%%, good\n"
		"           (exit 0) when every point's lies wholly above, else exit 125; '>'\n"
		"           for a rise; without %% in the figure's units. A line per point.\n"
		"           Points match on every key; by default also on a knob column only\n"
		"           one side has (the other did not vary it: '-'), on model only when\n"
		"           both have it.\n"
		"           No point in common: exit 2, naming the keys whose values differ.\n"
		"cost       transport cost per operation: 1e6/ops_per_sec(backend) minus\n"
		"           1e6/ops_per_sec(NAME, default nop) at the same client count (the\n"
		"           point of NAME that shares the most other keys), in microseconds,\n"
		"           with a 95%% interval from the delta method.\n"
		"decompose  the layers of an operation's cost per client count: each level\n"
		"           (backend[:setting], default " DEFAULT_LEVELS ";\n"
		"           setting: an offload value, or NAME=VALUE of keys joined by ':',\n"
		"           e.g. tcp:mtu=1500:offload=off; the first point that has it)\n"
		"           minus the level below it, as a difference of means of the figure\n"
		"           (default cost_cpu_us; also wall_us_per_op, cost_task_clock_us...)\n"
		"           with its 95%% interval: from the per-rep differences (Student-t, n-1\n"
		"           df; method paired, pairs n) when a RUNS.csv's runs of the two levels\n"
		"           pair up by rep (the same reps, each once), else from Welch's standard\n"
		"           error (Welch-Satterthwaite df; unpaired); bottom and top place it in\n"
		"           the stack.\n"
		"row        the runs.csv row of one run from its --json document (none: the run\n"
		"           left none) and the values only the sweep knows (--set); --header the\n"
		"           header; --figures the figure columns, one a line; --knobs the knob\n"
		"           columns (tbench-sweep --vary NAME): the value the sweep asked for,\n"
		"           '-' when not given (not varied); NAME_read a knob as read back.\n"
		"           A server's CPU seconds read before and after the run replace the\n"
		"           JSON's figures for servers. --columns: only those cells,\n"
		"           tab-separated.\n"
		"select     the rows whose columns have the given values, all columns or those\n"
		"           named; --tsv: tab-separated, no header.\n"
		"proc-cpu   user,system CPU seconds of a process and every process below it,\n"
		"           alive or reaped.\n"
		"merge      one --json document of the runs that several client hosts made at\n"
		"           once: MB/sec, operations, bytes, CPU summed; latency from the sum of\n"
		"           their histograms; each host's figures under \"hosts\".\n"
		"\n"
		"Defaults: --metric mb_per_sec; --keys " DEFAULT_KEYS_TEXT ".\n"
		"A runs.csv or summary.csv older than the knob columns is read with its\n"
		"read-back tso, gso, gro as tso_read, gso_read, gro_read.\n"
		"TBENCH_KEEP_DISTURBED=1: disturbed runs count as ok (n), not in n_disturbed.\n"
		"Exit status: 0 success, 1 failure (output not written), 2 usage or input error.\n");
}

/* --name VALUE or --name=VALUE at argv[*i]; 1 when it matched. */
static int opt_value(int argc, char **argv, int *i, const char *name, const char **val)
{
	size_t len = strlen(name);
	if (strncmp(argv[*i], name, len) != 0)
		return 0;
	if (argv[*i][len] == '=') {
		*val = argv[*i] + len + 1;
		return 1;
	}
	if (argv[*i][len] != '\0')
		return 0;
	if (*i + 1 >= argc)
		die(EXIT_USAGE, "%s needs a value", name);
	*val = argv[++*i];
	return 1;
}

/* The operands of a subcommand (everything not an option), at most max. */
static const char *operand(const char *cmd, char **argv, int i, const char **files, int *n, int max)
{
	if (argv[i][0] == '-' && argv[i][1])
		die(EXIT_USAGE, "%s: unknown option %s (see tbench-stats --help)", cmd, argv[i]);
	if (*n == max)
		die(EXIT_USAGE, "%s: too many operands at '%s'", cmd, argv[i]);
	return files[(*n)++] = argv[i];
}

static void read_table(struct table *t, const char *path)
{
	struct errbuf err;
	if (table_read(t, path, &err) < 0)
		die(EXIT_USAGE, "%s", err.msg);
	row_upgrade_table(t);
}

/* The keys given, or those of the file (row_dimensions). */
static struct strlist keys_of(const char *keys, const struct table *t)
{
	return keys ? strlist_split(keys) : row_dimensions(t);
}

/* ---- summarize ------------------------------------------------------------- */

static void print_summary(FILE *o, const struct summary *s)
{
	for (size_t k = 0; k < s->keys.n; k++)
		fprintf(o, "%s%s", k ? "," : "", s->keys.v[k]);
	for (size_t c = 0; c < s->carry.n; c++)
		fprintf(o, ",%s", s->carry.v[c]);
	fputs(",n,n_failed,n_disturbed", o);
	for (size_t m = 0; m < s->metrics.n; m++) {
		const char *name = s->metrics.v[m];
		fprintf(o, ",%s_mean,%s_sd,%s_ci95", name, name, name);
	}
	fputc('\n', o);
	for (size_t i = 0; i < s->npoints; i++) {
		const struct point *p = &s->p[i];
		for (size_t k = 0; k < s->keys.n; k++) {
			if (k)
				fputc(',', o);
			csv_put_field(o, p->key[k]);
		}
		for (size_t c = 0; c < s->carry.n; c++) {
			fputc(',', o);
			csv_put_field(o, p->carry[c]);
		}
		fprintf(o, ",%zu,%zu,%zu", p->n_ok, p->n_failed, p->n_disturbed);
		for (size_t m = 0; m < s->metrics.n; m++) {
			fputc(',', o);
			csv_put_num(o, p->m[m].mean);
			fputc(',', o);
			csv_put_num(o, p->m[m].sd);
			fputc(',', o);
			csv_put_num(o, p->m[m].ci);
		}
		fputc('\n', o);
	}
}

/* $TBENCH_KEEP_DISTURBED=1: disturbed runs count as ok in every summary. */
static unsigned summary_flags(void)
{
	const char *keep = getenv("TBENCH_KEEP_DISTURBED");
	return keep && strcmp(keep, "1") == 0 ? SUMMARY_KEEP_DISTURBED : 0;
}

/* Disturbed runs were left out of the summary: said, with how many. */
static void note_disturbed(const struct summary *s, const char *file)
{
	size_t n = 0, points = 0;

	for (size_t i = 0; i < s->npoints; i++) {
		n += s->p[i].n_disturbed;
		points += s->p[i].n_disturbed > 0;
	}
	if (n)
		fprintf(stderr, "tbench-stats: note: %s: %zu disturbed run%s left out of %zu point%s "
			"(column n_disturbed; why: runs.csv's disturbed, man tbench NOISE)\n", file, n,
			n == 1 ? "" : "s", points, points == 1 ? "" : "s");
}

/* Every figure column of runs.csv, in its order. */
static struct strlist figure_columns(void)
{
	struct strlist l = { 0, xrealloc(NULL, row_ncols() * sizeof(char *)) };
	for (size_t i = 0; i < row_ncols(); i++)
		if (row_col_is_figure(i))
			l.v[l.n++] = xstrdup(row_col_name(i));
	return l;
}

static void cmd_summarize(int argc, char **argv)
{
	const char *keys = NULL, *metrics = NULL, *file[1] = { NULL };
	int nfile = 0;

	for (int i = 1; i < argc; i++)
		if (!opt_value(argc, argv, &i, "--keys", &keys) &&
		    !opt_value(argc, argv, &i, "--metrics", &metrics))
			operand("summarize", argv, i, file, &nfile, 1);
	if (!nfile)
		die(EXIT_USAGE, "summarize: missing RUNS.csv");

	struct table t;
	struct summary s;
	struct errbuf err;
	struct strlist ml = metrics ? strlist_split(metrics) : figure_columns();
	read_table(&t, file[0]);
	struct strlist kl = keys_of(keys, &t), cl = row_carried(&t, &kl);
	if (summarize_runs(&s, &t, &kl, &ml, &cl, summary_flags(), &err) < 0)
		die(EXIT_USAGE, "%s", err.msg);
	print_summary(stdout, &s);
	note_disturbed(&s, file[0]);
	summary_free(&s);
	table_free(&t);
	strlist_free(&kl);
	strlist_free(&ml);
	strlist_free(&cl);
}

/* ---- compare and cost -------------------------------------------------------- */

/* A results directory (its runs.csv, else its summary.csv), a runs.csv or
 * a summary.csv, read as a table. */
static void load_results(const char *arg, struct table *t)
{
	char path[4096];
	struct stat st;

	snprintf(path, sizeof(path), "%s", arg);
	if (stat(arg, &st) == 0 && S_ISDIR(st.st_mode)) {
		snprintf(path, sizeof(path), "%s/runs.csv", arg);
		if (access(path, F_OK) != 0)
			snprintf(path, sizeof(path), "%s/summary.csv", arg);
	}
	read_table(t, path);
}

/* A table of results as a summary of one metric; the table is freed. */
static void summary_of(struct table *t, const struct strlist *keys, const char *metric, struct summary *s)
{
	struct errbuf err;
	if (summarize_any(s, t, keys, metric, summary_flags(), &err) < 0)
		die(EXIT_USAGE, "%s (figures: tbench-stats row --figures)", err.msg);
	note_disturbed(s, t->name);
	table_free(t);
}

/* One input of cost or decompose as a summary of one metric. */
static void load_summary(const char *arg, const char *keys, const char *metric, struct summary *s)
{
	struct table t;
	load_results(arg, &t);
	struct strlist kl = keys_of(keys, &t);
	summary_of(&t, &kl, metric, s);
	strlist_free(&kl);
}

/* A figure named by its column or by the JSON path it is read from; a
 * name of neither is taken as it is (a column of some other CSV). */
static const char *figure_named(const char *name)
{
	const char *col = row_figure_column(name);
	return col ? col : name;
}

static void fmt_num(char *buf, size_t len, double v)
{
	if (!isfinite(v))
		snprintf(buf, len, "-");
	else if (fabs(v) >= 100)
		snprintf(buf, len, "%.1f", v);
	else if (fabs(v) >= 1)
		snprintf(buf, len, "%.3f", v);
	else
		snprintf(buf, len, "%.4g", v);
}

/* "mean ± ci (n)", or "-" for a point not on this side. */
static void fmt_mean(char *buf, size_t len, const struct point *p)
{
	char a[64], b[64];
	if (!p) {
		snprintf(buf, len, "-");
		return;
	}
	fmt_num(a, sizeof(a), p->m[0].mean);
	fmt_num(b, sizeof(b), p->m[0].ci);
	if (isfinite(p->m[0].ci))
		snprintf(buf, len, "%s ± %s (%zu)", a, b, p->m[0].n);
	else
		snprintf(buf, len, "%s (%zu)", a, p->m[0].n);
}

/* Width of a UTF-8 string in columns (each code point one column). */
static int u8width(const char *s)
{
	int w = 0;
	for (; *s; s++)
		if (((unsigned char)*s & 0xc0) != 0x80)
			w++;
	return w;
}

static void pad(FILE *o, const char *s, int width, int right)
{
	int fill = width - u8width(s);
	for (int i = 0; right && i < fill; i++)
		fputc(' ', o);
	fputs(s, o);
	for (int i = 0; !right && i < fill; i++)
		fputc(' ', o);
	fputs("  ", o);
}

static const struct point *row_point(const struct comparison_row *r)
{
	return r->a ? r->a : r->b;
}

static void print_comparison_csv(FILE *o, const struct summary *a, const struct comparison *c)
{
	for (size_t k = 0; k < a->keys.n; k++)
		fprintf(o, "%s,", a->keys.v[k]);
	fputs("n_a,mean_a,ci95_a,n_b,mean_b,ci95_b,change_pct,t,df,p,significant,"
	      "diff,diff_ci95,change_lo_pct,change_hi_pct,mde,mde_pct,method,pairs\n", o);
	for (size_t i = 0; i < c->nrows; i++) {
		const struct comparison_row *r = &c->rows[i];
		const struct metric_sum none = { 0, NAN, NAN, NAN };
		const struct metric_sum *ma = r->a ? &r->a->m[0] : &none, *mb = r->b ? &r->b->m[0] : &none;
		const double nums[] = { ma->mean, ma->ci, mb->mean, mb->ci, r->change_pct,
					r->w.t, r->w.df, r->w.p };
		const double more[] = { r->d.mean, r->d.ci, r->change_lo_pct, r->change_hi_pct,
					r->d.mde, r->mde_pct };
		for (size_t k = 0; k < a->keys.n; k++) {
			csv_put_field(o, row_point(r)->key[k]);
			fputc(',', o);
		}
		for (size_t j = 0; j < sizeof(nums) / sizeof(nums[0]); j++) {
			if (j == 0 || j == 2)
				fprintf(o, "%zu,", j ? mb->n : ma->n);
			csv_put_num(o, nums[j]);
			fputc(',', o);
		}
		fprintf(o, "%s", r->verdict);
		for (size_t j = 0; j < sizeof(more) / sizeof(more[0]); j++) {
			fputc(',', o);
			csv_put_num(o, more[j]);
		}
		if (r->a && r->b)
			fprintf(o, ",%s,%zu\n", diff_method(&r->d), r->d.pairs);
		else
			fputs(",,\n", o);
	}
	fprintf(o, "geomean");
	for (size_t k = 1; k < a->keys.n; k++)
		fputc(',', o);
	fprintf(o, ",%zu,,,%zu,,,", c->nratio, c->nratio);
	csv_put_num(o, 100 * (c->geomean - 1));
	fprintf(o, ",,,,%zu significant,,,,,,,,\n", c->nsig);
}

/* 1 when key k has one value in every row of the comparison. */
static int key_constant(const struct comparison *c, size_t k)
{
	for (size_t i = 1; i < c->nrows; i++)
		if (strcmp(row_point(&c->rows[i])->key[k], row_point(&c->rows[0])->key[k]) != 0)
			return 0;
	return 1;
}

/* The columns after p: significant, interval and MDE in percent, method. */
static void print_change_interval(FILE *o, const struct comparison_row *r)
{
	char iv[64] = "-", mde[32] = "-", method[32] = "-";
	if (isfinite(r->change_lo_pct))
		snprintf(iv, sizeof(iv), "[%+.2f%%, %+.2f%%]", r->change_lo_pct, r->change_hi_pct);
	if (isfinite(r->mde_pct))
		snprintf(mde, sizeof(mde), "%.2f%%", r->mde_pct);
	if (r->a && r->b && r->d.pairs)
		snprintf(method, sizeof(method), "paired (%zu)", r->d.pairs);
	else if (r->a && r->b)
		snprintf(method, sizeof(method), "unpaired");
	fprintf(o, "%-11s  %-20s  %7s  %s\n", r->verdict, iv, mde, method);
}

/* The table leaves out the keys after backend and clients that have one
 * value throughout (most knobs, "-"), and says those that were set. */
static void print_comparison_table(FILE *o, const char *const file[2], const char *metric,
				   double alpha, int by_rep, const struct summary *a,
				   const struct comparison *c)
{
	enum { MAX_KEYS = 32, MEAN_WIDTH = 24, HIDDEN = -1 };
	int kw[MAX_KEYS] = { 0 };
	size_t nkeys = a->keys.n < MAX_KEYS ? a->keys.n : MAX_KEYS;
	const char *sep = "every point: ";

	fprintf(o, "A: %s\nB: %s\n", file[0], file[1]);
	for (size_t k = 0; k < nkeys; k++) {
		kw[k] = u8width(a->keys.v[k]);
		for (size_t i = 0; i < c->nrows; i++)
			if (u8width(row_point(&c->rows[i])->key[k]) > kw[k])
				kw[k] = u8width(row_point(&c->rows[i])->key[k]);
		if (k < 2 || !c->nrows || !key_constant(c, k))
			continue;
		kw[k] = HIDDEN;
		if (strcmp(row_point(&c->rows[0])->key[k], ROW_NOT_VARIED) != 0) {
			fprintf(o, "%s%s=%s", sep, a->keys.v[k], row_point(&c->rows[0])->key[k]);
			sep = ", ";
		}
	}
	if (*sep == ',')
		fputc('\n', o);
	fprintf(o, "metric: %s, mean ± half-width of its 95%% confidence interval (runs)\n", metric);
	fprintf(o, "significant: Welch's two-sided t-test at %g%% (p < %g)%s\n", 100 * (1 - alpha), alpha,
		by_rep ? "; a paired t-test where the runs pair up by rep (method paired)" : "");
	fprintf(o, "interval: 95%% confidence interval of the change; mde: the least change the test "
		"would detect\n(95%% confidence, %.0f%% power) at this noise and number of runs\n\n",
		100 * STATS_MDE_POWER);
	for (size_t k = 0; k < nkeys; k++)
		if (kw[k] != HIDDEN)
			pad(o, a->keys.v[k], kw[k], k > 0 && strcmp(a->keys.v[k], "clients") == 0);
	pad(o, "A", MEAN_WIDTH, 1);
	pad(o, "B", MEAN_WIDTH, 1);
	fprintf(o, "%8s  %8s  %-11s  %-20s  %7s  %s\n", "change", "p", "significant", "interval", "mde",
		"method");
	for (size_t i = 0; i < c->nrows; i++) {
		const struct comparison_row *r = &c->rows[i];
		char ma[160], mb[160], ch[32] = "-", pv[32] = "-";
		for (size_t k = 0; k < nkeys; k++)
			if (kw[k] != HIDDEN)
				pad(o, row_point(r)->key[k], kw[k], k > 0 && strcmp(a->keys.v[k], "clients") == 0);
		fmt_mean(ma, sizeof(ma), r->a);
		fmt_mean(mb, sizeof(mb), r->b);
		if (isfinite(r->change_pct))
			snprintf(ch, sizeof(ch), "%+.2f%%", r->change_pct);
		if (isfinite(r->w.p))
			snprintf(pv, sizeof(pv), r->w.p < 0.0001 ? "%.1e" : "%.4f", r->w.p);
		pad(o, ma, MEAN_WIDTH, 1);
		pad(o, mb, MEAN_WIDTH, 1);
		fprintf(o, "%8s  %8s  ", ch, pv);
		print_change_interval(o, r);
	}
	fprintf(o, "\ngeometric mean of B/A over %zu common points: ", c->nratio);
	if (isfinite(c->geomean))
		fprintf(o, "%+.2f%%", 100 * (c->geomean - 1));
	else
		fprintf(o, "-");
	fprintf(o, "  (%zu significant: %zu up, %zu down; %zu not)\n", c->nsig, c->nup, c->ndown,
		c->ncommon - c->nsig);
}

/* "backend=tcp clients=4" (the keys that vary), for a verdict's line. */
static void print_point_name(FILE *o, const struct summary *a, const struct comparison *c,
			     const struct comparison_row *r)
{
	const char *sep = "";
	for (size_t k = 0; k < a->keys.n; k++) {
		if (k >= 2 && key_constant(c, k))
			continue;
		fprintf(o, "%s%s=%s", sep, a->keys.v[k], row_point(r)->key[k]);
		sep = " ";
	}
}

/* One line: the point, good/bad/unsure and why. */
static enum verdict print_point_verdict(FILE *o, const struct summary *a, const struct comparison *c,
					const struct comparison_row *r, const struct verdict_rule *rule)
{
	static const char *const word[] = { "good", "bad", "unsure" };
	const char *unit = rule->relative ? "%" : "";
	double lo, hi;
	enum verdict v = verdict_of(r, rule, &lo, &hi);
	print_point_name(o, a, c, r);
	fprintf(o, ": %s: ", word[v]);
	if (!r->a || !r->b) {
		fprintf(o, "%s, nothing to compare\n", r->verdict);
	} else if (!isfinite(lo)) {
		fprintf(o, "no interval (runs: A %zu, B %zu; need 2 each%s)\n", r->a->m[0].n, r->b->m[0].n,
			rule->relative ? " and A's mean above 0" : "");
	} else {
		const char *where[] = { rule->below ? "above" : "below", rule->below ? "below" : "above",
					"straddles" };
		fprintf(o, "%s change %+.3g%s, 95%% interval [%+.3g%s, %+.3g%s] (%s, runs %zu/%zu) %s%s "
			"%+g%s; mde %.3g%s\n", rule->figure, rule->relative ? r->change_pct : r->d.mean, unit,
			lo, unit, hi, unit, diff_method(&r->d), r->a->m[0].n, r->b->m[0].n,
			v == VERDICT_UNSURE ? "" : "lies wholly ", where[v], rule->threshold, unit,
			rule->relative ? r->mde_pct : r->d.mde, unit);
	}
	return v;
}

/* --verdict: a line per point, then the exit status for git bisect run:
 * 1 if any point is bad, else 0 if every point is good, else 125. */
static int print_verdict(FILE *o, const struct summary *a, const struct comparison *c,
			 const struct verdict_rule *rule)
{
	size_t nbad = 0, ngood = 0;
	for (size_t i = 0; i < c->nrows; i++) {
		enum verdict v = print_point_verdict(o, a, c, &c->rows[i], rule);
		nbad += v == VERDICT_BAD;
		ngood += v == VERDICT_GOOD;
	}
	int rc = nbad ? 1 : ngood == c->nrows ? 0 : EXIT_CANNOT_TELL;
	fprintf(o, "verdict: %s (%zu of %zu points bad, %zu good)\n",
		rc == 1 ? "bad" : rc == 0 ? "good" : "cannot tell at this noise", nbad, c->nrows, ngood);
	return rc;
}

struct compare_opts {
	const char *keys, *metric, *alpha_s, *verdict, *file[2];
	int csv, by_rep;
	double alpha;
	struct verdict_rule rule;
};

static void compare_options(int argc, char **argv, struct compare_opts *o)
{
	int nfile = 0, figure_given = 0;
	for (int i = 1; i < argc; i++) {
		if (opt_value(argc, argv, &i, "--keys", &o->keys) ||
		    opt_value(argc, argv, &i, "--alpha", &o->alpha_s) ||
		    opt_value(argc, argv, &i, "--verdict", &o->verdict))
			continue;
		if (opt_value(argc, argv, &i, "--metric", &o->metric) ||
		    opt_value(argc, argv, &i, "--figure", &o->metric))
			figure_given = 1;
		else if (strcmp(argv[i], "--csv") == 0)
			o->csv = 1;
		else if (strcmp(argv[i], "--paired") == 0)
			o->by_rep = 1;
		else
			operand("compare", argv, i, o->file, &nfile, 2);
	}
	if (nfile != 2)
		die(EXIT_USAGE, "compare: needs two inputs, A and B");
	o->alpha = csv_num(o->alpha_s);
	if (!(o->alpha > 0 && o->alpha < 1))
		die(EXIT_USAGE, "compare: --alpha %s: want a number between 0 and 1", o->alpha_s);
	if (!o->verdict)
		return;
	struct errbuf err;
	if (verdict_rule_parse(&o->rule, o->verdict, &err) < 0)
		die(EXIT_USAGE, "compare: --verdict %s", err.msg);
	if (figure_given || o->csv)
		die(EXIT_USAGE, "compare: --verdict names its figure and prints lines of its own: "
		    "leave out --figure, --metric and --csv");
	o->metric = o->rule.figure;
}

/* No point in common: exit 2 naming the keys whose values differ. */
static void check_common_points(const struct compare_opts *o, struct summary *a, struct summary *b)
{
	char *differ = comparison_mismatch(a, b);
	if (!differ)
		return;
	fprintf(stderr, "%s: compare: no point of %s is in %s: they differ in %s.\n"
		"Leave a dimension out of --keys to compare across it (keys now: ",
		prog, o->file[0], o->file[1], differ);
	for (size_t k = 0; k < a->keys.n; k++)
		fprintf(stderr, "%s%s", k ? "," : "", a->keys.v[k]);
	fputs(").\n", stderr);
	free(differ);
	summary_free(b);
	summary_free(a);
	exit(EXIT_USAGE);
}

static void cmd_compare(int argc, char **argv)
{
	struct compare_opts o = { .metric = "mb_per_sec", .alpha_s = "0.05" };
	struct table ta, tb;
	struct summary a, b;
	struct comparison c;
	int rc = 0;

	compare_options(argc, argv, &o);
	const char *metric = figure_named(o.metric);
	load_results(o.file[0], &ta);
	load_results(o.file[1], &tb);
	struct strlist kl = o.keys ? strlist_split(o.keys) : comparison_keys(&ta, &tb);
	summary_of(&ta, &kl, metric, &a);
	summary_of(&tb, &kl, metric, &b);
	strlist_free(&kl);
	check_common_points(&o, &a, &b);
	compare_summaries(&c, &a, &b, o.alpha, o.by_rep);
	if (o.verdict)
		rc = print_verdict(stdout, &a, &c, &o.rule);
	else if (o.csv)
		print_comparison_csv(stdout, &a, &c);
	else
		print_comparison_table(stdout, o.file, metric, o.alpha, o.by_rep, &a, &c);
	comparison_free(&c);
	summary_free(&b);
	summary_free(&a);
	verdict_rule_free(&o.rule);
	if (rc != 0 && fflush(stdout) != 0)
		die(EXIT_RUN_FAILED, "writing the output: %s", strerror(errno));
	if (rc != 0)
		exit(rc);
}

/* The keys of a command that needs backend and clients first. */
static void check_cost_keys(const char *cmd, const char *keys)
{
	struct strlist kl = strlist_split(keys ? keys : "backend,clients");
	int bad_keys = kl.n < 2 || strcmp(kl.v[0], "backend") || strcmp(kl.v[1], "clients");
	strlist_free(&kl);
	if (bad_keys)
		die(EXIT_USAGE, "%s: --keys must be backend,clients[,<setting>...]", cmd);
}

static void cmd_cost(int argc, char **argv)
{
	const char *keys = NULL, *base = "nop", *file[1] = { NULL };
	int nfile = 0;

	for (int i = 1; i < argc; i++)
		if (!opt_value(argc, argv, &i, "--keys", &keys) &&
		    !opt_value(argc, argv, &i, "--baseline", &base))
			operand("cost", argv, i, file, &nfile, 1);
	if (!nfile)
		die(EXIT_USAGE, "cost: missing SUMMARY.csv, RUNS.csv or DIR");
	check_cost_keys("cost", keys);

	struct summary s;
	struct cost_row *rows;
	FILE *o = stdout;
	load_summary(file[0], keys, "ops_per_sec", &s);
	size_t n = cost_rows(&rows, &s, base);
	for (size_t k = 0; k < s.keys.n; k++)
		fprintf(o, "%s,", s.keys.v[k]);
	fprintf(o, "cost_us,cost_ci95_us,ops_per_sec,%s_ops_per_sec\n", base);
	for (size_t i = 0; i < n; i++) {
		for (size_t k = 0; k < s.keys.n; k++) {
			csv_put_field(o, rows[i].p->key[k]);
			fputc(',', o);
		}
		const double nums[] = { rows[i].cost_us, rows[i].ci_us, rows[i].p->m[0].mean,
					rows[i].base->m[0].mean };
		for (size_t j = 0; j < 4; j++) {
			if (j)
				fputc(',', o);
			csv_put_num(o, nums[j]);
		}
		fputc('\n', o);
	}
	free(rows);
	summary_free(&s);
}

static void print_layers(FILE *o, const char *figure, const struct layer_row *rows, size_t n)
{
	fputs("figure,clients,layer,label,minuend,subtrahend,mean,ci95,df,n_minuend,n_subtrahend,"
	      "bottom,top,method,pairs\n", o);
	for (size_t i = 0; i < n; i++) {
		const struct layer_row *r = &rows[i];
		const char *const text[] = { figure, r->clients, r->name, r->label, r->minuend, r->subtrahend };
		const double nums[] = { r->mean, r->ci, r->df };
		for (size_t k = 0; k < sizeof(text) / sizeof(text[0]); k++) {
			csv_put_field(o, text[k]);
			fputc(',', o);
		}
		for (size_t k = 0; k < sizeof(nums) / sizeof(nums[0]); k++) {
			csv_put_num(o, nums[k]);
			fputc(',', o);
		}
		fprintf(o, "%zu,", r->a->m[0].n);
		if (r->b)
			fprintf(o, "%zu", r->b->m[0].n);
		fputc(',', o);
		csv_put_num(o, r->bottom);
		fputc(',', o);
		csv_put_num(o, r->top);
		if (r->b)
			fprintf(o, ",%s,%zu\n", diff_method(&r->d), r->d.pairs);
		else
			fputs(",,\n", o);
	}
}

static void cmd_decompose(int argc, char **argv)
{
	const char *keys = NULL, *figure = "cost_cpu_us", *levels = DEFAULT_LEVELS, *file[1] = { NULL };
	int nfile = 0;

	for (int i = 1; i < argc; i++)
		if (!opt_value(argc, argv, &i, "--keys", &keys) &&
		    !opt_value(argc, argv, &i, "--figure", &figure) &&
		    !opt_value(argc, argv, &i, "--levels", &levels))
			operand("decompose", argv, i, file, &nfile, 1);
	if (!nfile)
		die(EXIT_USAGE, "decompose: missing SUMMARY.csv, RUNS.csv or DIR");
	check_cost_keys("decompose", keys);
	struct strlist ll = strlist_split(levels);
	if (ll.n == 0)
		die(EXIT_USAGE, "decompose: --levels: empty list (e.g. " DEFAULT_LEVELS ")");

	struct summary s;
	struct layer_row *rows;
	figure = figure_named(figure);
	load_summary(file[0], keys, figure, &s);
	size_t n = decompose(&rows, &s, &ll);
	print_layers(stdout, figure, rows, n);
	layer_rows_free(rows, n);
	summary_free(&s);
	strlist_free(&ll);
}

/* ---- row, select, proc-cpu ------------------------------------------------------ */

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

static void cmd_row(int argc, char **argv)
{
	struct row_input in = { 0 };
	struct row_setting *set = xrealloc(NULL, (size_t)argc * sizeof(*set));
	const char *file[1] = { NULL }, *val, *columns = NULL;
	int nfile = 0, have_start = 0, have_end = 0, header = 0;
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

static void cmd_select(int argc, char **argv)
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

static void cmd_proc_cpu(int argc, char **argv)
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

/* ---- main ------------------------------------------------------------------------ */

static const struct {
	const char *name;
	void (*run)(int argc, char **argv);
} commands[] = {
	{ "summarize", cmd_summarize },
	{ "compare", cmd_compare },
	{ "cost", cmd_cost },
	{ "decompose", cmd_decompose },
	{ "row", cmd_row },
	{ "select", cmd_select },
	{ "proc-cpu", cmd_proc_cpu },
	{ "merge", cmd_merge },
};

int main(int argc, char **argv)
{
	if (argc < 2) {
		usage(stderr);
		return EXIT_USAGE;
	}
	if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "help") == 0) {
		usage(stdout);
		return EXIT_OK;
	}
	if (strcmp(argv[1], "--version") == 0 || strcmp(argv[1], "-V") == 0) {
		printf("%s\n", version_line("tbench-stats"));
		return EXIT_OK;
	}
	size_t i = 0;
	while (i < sizeof(commands) / sizeof(commands[0]) && strcmp(argv[1], commands[i].name) != 0)
		i++;
	if (i == sizeof(commands) / sizeof(commands[0])) {
		fprintf(stderr, "%s: unknown command '%s'\n", prog, argv[1]);
		usage(stderr);
		return EXIT_USAGE;
	}
	commands[i].run(argc - 1, argv + 1);
	if (fflush(stdout) != 0 || ferror(stdout))
		die(EXIT_RUN_FAILED, "writing the output: %s", strerror(errno));
	return EXIT_OK;
}
