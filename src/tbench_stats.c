/* tbench-stats: the statistics behind scripts/tbench-sweep, tbench-plot and
 * tbench-compare, so that the shell scripts do no arithmetic of their own.
 *
 *   tbench-stats summarize [--keys K,..] [--metrics M,..] RUNS.csv
 *   tbench-stats compare [--metric M] [--keys K,..] [--alpha A] [--csv] A B
 *   tbench-stats cost [--baseline nop] SUMMARY.csv|RUNS.csv|DIR
 *
 * CSV in, CSV (or a table) out; columns are found by name in the header. */
#include "config.h"
#include "stats.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define DEFAULT_KEYS "backend,clients,offload"
#define DEFAULT_METRICS "mb_per_sec,ops_per_sec,avg_ms,p99_ms,clients_user_s,clients_system_s," \
	"server_user_s,server_system_s,cpu_us_per_mb"
#define CARRY_COLS "tso,gso,gro"
#define CONF 0.95

static const char *prog = "tbench-stats";

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

static void *xrealloc(void *p, size_t n)
{
	p = realloc(p, n ? n : 1);
	if (!p)
		die(1, "out of memory");
	return p;
}

static char *xstrdup(const char *s)
{
	char *d = strdup(s);
	if (!d)
		die(1, "out of memory");
	return d;
}

/* Free n strings and the array holding them. */
static void strv_free(char **v, size_t n)
{
	if (!v)
		return;
	for (size_t i = 0; i < n; i++)
		free(v[i]);
	free(v);
}

/* ---- CSV ------------------------------------------------------------------ */

struct table {
	char *path;
	size_t ncols, nrows;
	char **head;
	char ***rows;           /* rows[r][c], every row has ncols fields */
};

/* Split one line into fields; "quoted, fields" and "" escapes are understood. */
static size_t split_csv(char *line, char ***out)
{
	size_t n = 0, cap = 8;
	char **f = xrealloc(NULL, cap * sizeof(*f));
	char *p = line;

	for (;;) {
		char *start = p, *w = p;
		if (*p == '"') {
			p++;
			for (;;) {
				if (*p == '"' && p[1] == '"') {
					*w++ = '"';
					p += 2;
				} else if (*p == '"') {
					p++;
					break;
				} else if (!*p) {
					break;
				} else {
					*w++ = *p++;
				}
			}
			while (*p && *p != ',')
				p++;
		} else {
			while (*p && *p != ',')
				*w++ = *p++;
		}
		char sep = *p;
		*w = '\0';
		if (n == cap)
			f = xrealloc(f, (cap *= 2) * sizeof(*f));
		f[n++] = xstrdup(start);
		if (sep != ',')
			break;
		p++;
	}
	*out = f;
	return n;
}

static void table_read(struct table *t, const char *path)
{
	FILE *f = fopen(path, "r");
	char *line = NULL;
	size_t cap = 0, rcap = 0;
	ssize_t len;
	size_t lineno = 0;

	if (!f)
		die(2, "%s: %s", path, strerror(errno));
	memset(t, 0, sizeof(*t));
	t->path = xstrdup(path);
	while ((len = getline(&line, &cap, f)) >= 0) {
		lineno++;
		while (len > 0 && (line[len - 1] == '\n' || line[len - 1] == '\r'))
			line[--len] = '\0';
		if (len == 0 || line[0] == '#')
			continue;
		char **fields;
		size_t n = split_csv(line, &fields);
		if (!t->head) {
			t->head = fields;
			t->ncols = n;
			continue;
		}
		if (n != t->ncols) {
			strv_free(fields, n);
			die(2, "%s:%zu: %zu fields, the header has %zu", path, lineno, n, t->ncols);
		}
		if (t->nrows == rcap)
			t->rows = xrealloc(t->rows, (rcap = rcap ? 2 * rcap : 64) * sizeof(*t->rows));
		t->rows[t->nrows++] = fields;
	}
	free(line);
	if (ferror(f))
		die(2, "%s: %s", path, strerror(errno));
	fclose(f);
	if (!t->head)
		die(2, "%s: empty (no header line)", path);
}

static void table_free(struct table *t)
{
	for (size_t r = 0; r < t->nrows; r++)
		strv_free(t->rows[r], t->ncols);
	free(t->rows);
	strv_free(t->head, t->ncols);
	free(t->path);
	memset(t, 0, sizeof(*t));
}

static int col(const struct table *t, const char *name)
{
	for (size_t i = 0; i < t->ncols; i++)
		if (strcmp(t->head[i], name) == 0)
			return (int)i;
	return -1;
}

static int need_col(const struct table *t, const char *name)
{
	int c = col(t, name);
	if (c < 0)
		die(2, "%s: no column '%s'", t->path, name);
	return c;
}

/* A number, or NaN for an empty or non-numeric field. */
static double num(const char *s)
{
	char *end;
	if (!*s)
		return NAN;
	errno = 0;
	double v = strtod(s, &end);
	if (end == s || *end || errno == ERANGE)
		return NAN;
	return v;
}

/* A count field: a non-negative number, else 0. */
static size_t count(const char *s)
{
	double v = num(s);
	return v >= 0 && v < 1e15 ? (size_t)v : 0;
}

struct list {
	size_t n;
	char **v;
};

static struct list split_list(const char *s)
{
	struct list l = { 0, NULL };
	char *copy = xstrdup(s), *save = NULL;
	for (char *tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		l.v = xrealloc(l.v, (l.n + 1) * sizeof(*l.v));
		l.v[l.n++] = xstrdup(tok);
	}
	free(copy);
	return l;
}

static void list_free(struct list *l)
{
	strv_free(l->v, l->n);
	l->v = NULL;
	l->n = 0;
}

/* CSV field out: quoted only when it must be. */
static void put_field(FILE *f, const char *s)
{
	if (!strpbrk(s, ",\"\n")) {
		fputs(s, f);
		return;
	}
	fputc('"', f);
	for (; *s; s++) {
		if (*s == '"')
			fputc('"', f);
		fputc(*s, f);
	}
	fputc('"', f);
}

static void put_num(FILE *f, double v)
{
	if (isfinite(v))
		fprintf(f, "%.6g", v);
}

/* ---- summaries -------------------------------------------------------------- */

struct metric_sum {
	size_t n;
	double mean, sd, ci;
};

struct point {
	char **key;             /* nkeys values */
	char **carry;           /* ncarry values, "mixed" when they differ */
	size_t n_ok, n_failed;
	struct metric_sum *m;   /* nmetrics */
};

struct summary {
	size_t nkeys, ncarry, nmetrics, npoints;
	char **keys, **carry, **metrics;
	struct point *p;
};

/* The points' keys and carried values are not owned (they point
 * into the table read, or are literals): only the arrays are freed. */
static void summary_free(struct summary *s)
{
	for (size_t p = 0; p < s->npoints; p++) {
		free(s->p[p].key);
		free(s->p[p].carry);
		free(s->p[p].m);
	}
	free(s->p);
	strv_free(s->keys, s->nkeys);
	strv_free(s->carry, s->ncarry);
	strv_free(s->metrics, s->nmetrics);
	memset(s, 0, sizeof(*s));
}

static const struct table *sort_table;
static const int *sort_keycols;
static size_t sort_nkeys;

/* Order of first appearance of a string value in column c (so backends stay
 * in the order the sweep ran them); numbers sort numerically. */
static size_t first_seen(const struct table *t, int c, const char *v)
{
	for (size_t r = 0; r < t->nrows; r++)
		if (strcmp(t->rows[r][c], v) == 0)
			return r;
	return t->nrows;
}

static int cmp_key(const char *a, const char *b, int c)
{
	double x = num(a), y = num(b);
	if (!isnan(x) && !isnan(y))
		return (x > y) - (x < y);
	size_t i = first_seen(sort_table, c, a), j = first_seen(sort_table, c, b);
	if (i != j)
		return (i > j) - (i < j);
	return strcmp(a, b);
}

static int cmp_point(const void *pa, const void *pb)
{
	const struct point *a = pa, *b = pb;
	for (size_t k = 0; k < sort_nkeys; k++) {
		int r = cmp_key(a->key[k], b->key[k], sort_keycols[k]);
		if (r)
			return r;
	}
	return 0;
}

static int is_ok_row(const struct table *t, int status_col, size_t r)
{
	return status_col < 0 || strcmp(t->rows[r][status_col], "ok") == 0;
}

/* The names of l that are columns of t, as owned copies in *names, their
 * indices in cols[]; a missing one is an error when required, else skipped. */
static size_t pick_cols(const struct table *t, const struct list *l, int required,
			char ***names, int *cols)
{
	size_t n = 0;

	*names = xrealloc(NULL, l->n * sizeof(char *));
	for (size_t i = 0; i < l->n; i++) {
		int c = required ? need_col(t, l->v[i]) : col(t, l->v[i]);
		if (c < 0)
			continue;
		cols[n] = c;
		(*names)[n++] = xstrdup(l->v[i]);
	}
	return n;
}

/* The index of the point of row r, a new one if its keys are new. */
static size_t point_of(struct summary *s, const struct table *t, size_t r, const int *kc)
{
	size_t p, k;

	for (p = 0; p < s->npoints; p++) {
		for (k = 0; k < s->nkeys; k++)
			if (strcmp(s->p[p].key[k], t->rows[r][kc[k]]) != 0)
				break;
		if (k == s->nkeys)
			return p;
	}
	s->p = xrealloc(s->p, (s->npoints + 1) * sizeof(*s->p));
	struct point *np = &s->p[s->npoints++];
	memset(np, 0, sizeof(*np));
	np->key = xrealloc(NULL, s->nkeys * sizeof(char *));
	for (k = 0; k < s->nkeys; k++)
		np->key[k] = t->rows[r][kc[k]];
	np->carry = xrealloc(NULL, s->ncarry * sizeof(char *));
	for (size_t c = 0; c < s->ncarry; c++)
		np->carry[c] = NULL;
	np->m = xrealloc(NULL, s->nmetrics * sizeof(*np->m));
	return p;
}

/* Carried columns of an ok row: the common value, or "mixed". */
static void carry_row(struct point *pt, const struct summary *s, const struct table *t,
		      size_t r, const int *cc)
{
	for (size_t c = 0; c < s->ncarry; c++) {
		const char *v = t->rows[r][cc[c]];
		if (!pt->carry[c])
			pt->carry[c] = (char *)v;
		else if (strcmp(pt->carry[c], v) != 0)
			pt->carry[c] = "mixed";
	}
}

/* Mean, sd and interval of column mc over the ok rows of point p. */
static struct metric_sum sum_metric(const struct table *t, const size_t *rowpoint, size_t p,
				    int mc, int status)
{
	struct stats_acc a;
	struct metric_sum ms;

	stats_init(&a);
	for (size_t r = 0; r < t->nrows; r++) {
		double v;
		if (rowpoint[r] == p && is_ok_row(t, status, r) && !isnan(v = num(t->rows[r][mc])))
			stats_add(&a, v);
	}
	ms.n = a.n;
	ms.mean = a.n ? a.mean : NAN;
	ms.sd = a.n > 1 ? stats_sd(&a) : NAN;
	ms.ci = stats_ci_half(ms.sd, a.n, CONF);
	return ms;
}

static void sort_points(struct summary *s, const struct table *t, const int *kc)
{
	if (s->npoints < 2)
		return;         /* s->p may be NULL: never pass it to qsort */
	sort_table = t;
	sort_keycols = kc;
	sort_nkeys = s->nkeys;
	qsort(s->p, s->npoints, sizeof(*s->p), cmp_point);
	sort_table = NULL;
	sort_keycols = NULL;
}

/* Group the runs of t by the key columns and summarize every metric present.
 * The points' keys and carried values point into t: free s before t. */
static void summarize_runs(const struct table *t, const char *keys, const char *metrics,
			   struct summary *s)
{
	struct list kl = split_list(keys), ml = split_list(metrics), cl = split_list(CARRY_COLS);
	int *kc = xrealloc(NULL, kl.n * sizeof(int));
	int *mc = xrealloc(NULL, ml.n * sizeof(int));
	int *cc = xrealloc(NULL, cl.n * sizeof(int));
	size_t *rowpoint = xrealloc(NULL, t->nrows * sizeof(size_t));
	int status = col(t, "status");

	memset(s, 0, sizeof(*s));
	s->nkeys = pick_cols(t, &kl, 1, &s->keys, kc);
	s->nmetrics = pick_cols(t, &ml, 0, &s->metrics, mc);
	s->ncarry = pick_cols(t, &cl, 0, &s->carry, cc);
	list_free(&kl);
	list_free(&ml);
	list_free(&cl);

	for (size_t r = 0; r < t->nrows; r++) {
		size_t p = rowpoint[r] = point_of(s, t, r, kc);
		if (!is_ok_row(t, status, r)) {
			s->p[p].n_failed++;
			continue;
		}
		s->p[p].n_ok++;
		carry_row(&s->p[p], s, t, r, cc);
	}
	for (size_t p = 0; p < s->npoints; p++) {
		for (size_t c = 0; c < s->ncarry; c++)
			if (!s->p[p].carry[c])
				s->p[p].carry[c] = "";
		for (size_t m = 0; m < s->nmetrics; m++)
			s->p[p].m[m] = sum_metric(t, rowpoint, p, mc[m], status);
	}
	sort_points(s, t, kc);
	free(rowpoint);
	free(cc);
	free(mc);
	free(kc);
}

/* A summary.csv read back: keys, n and <metric>_mean/_sd/_ci95 columns. */
static void summary_from_table(const struct table *t, const char *keys, const char *metric,
			       struct summary *s)
{
	struct list kl = split_list(keys);
	char name[256];
	int kc[32], nc = need_col(t, "n"), mc[3], fc = col(t, "n_failed");
	static const char *suffix[] = { "_mean", "_sd", "_ci95" };

	if (kl.n > 32)
		die(2, "too many key columns");
	memset(s, 0, sizeof(*s));
	s->keys = kl.v;
	s->nkeys = kl.n;
	for (size_t k = 0; k < kl.n; k++)
		kc[k] = need_col(t, kl.v[k]);
	for (int i = 0; i < 3; i++) {
		snprintf(name, sizeof(name), "%s%s", metric, suffix[i]);
		mc[i] = need_col(t, name);
	}
	s->nmetrics = 1;
	s->metrics = xrealloc(NULL, sizeof(char *));
	s->metrics[0] = xstrdup(metric);
	s->npoints = t->nrows;
	s->p = xrealloc(NULL, t->nrows * sizeof(*s->p));
	for (size_t r = 0; r < t->nrows; r++) {
		struct point *p = &s->p[r];
		memset(p, 0, sizeof(*p));
		p->key = xrealloc(NULL, kl.n * sizeof(char *));
		for (size_t k = 0; k < kl.n; k++)
			p->key[k] = t->rows[r][kc[k]];
		p->n_ok = count(t->rows[r][nc]);
		p->n_failed = fc >= 0 ? count(t->rows[r][fc]) : 0;
		p->m = xrealloc(NULL, sizeof(*p->m));
		p->m[0].n = p->n_ok;
		p->m[0].mean = num(t->rows[r][mc[0]]);
		p->m[0].sd = num(t->rows[r][mc[1]]);
		p->m[0].ci = num(t->rows[r][mc[2]]);
		if (p->n_ok >= 2 && isnan(p->m[0].sd))
			die(2, "%s: line %zu: n = %zu but no %s_sd", t->path, r + 2, p->n_ok, metric);
	}
}

static int is_dir(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

static int exists(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0;
}

/* A results directory (its runs.csv, else its summary.csv), a runs.csv or a
 * summary.csv, reduced to a summary of one metric's points. */
static void load_any(const char *arg, const char *keys, const char *metric, struct summary *s,
		     struct table *t)
{
	char path[4096];
	char mean_col[256];

	if (is_dir(arg)) {
		snprintf(path, sizeof(path), "%s/runs.csv", arg);
		if (!exists(path))
			snprintf(path, sizeof(path), "%s/summary.csv", arg);
	} else {
		snprintf(path, sizeof(path), "%s", arg);
	}
	table_read(t, path);
	snprintf(mean_col, sizeof(mean_col), "%s_mean", metric);
	if (col(t, mean_col) >= 0)
		summary_from_table(t, keys, metric, s);
	else if (col(t, metric) >= 0)
		summarize_runs(t, keys, metric, s);
	else
		die(2, "%s: neither a '%s' nor a '%s' column", path, metric, mean_col);
}

/* ---- subcommands ----------------------------------------------------------- */

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: tbench-stats summarize [--keys K,..] [--metrics M,..] RUNS.csv\n"
		"       tbench-stats compare [--metric M] [--keys K,..] [--alpha A] [--csv] A B\n"
		"       tbench-stats cost [--baseline NAME] [--keys K,..] SUMMARY.csv|RUNS.csv|DIR\n"
		"\n"
		"summarize  one row per point (rows of RUNS.csv with equal key columns): n runs\n"
		"           with status 'ok', n_failed, and for each metric column its mean, sample\n"
		"           standard deviation (_sd) and the half-width of the 95%% Student-t\n"
		"           confidence interval of the mean (_ci95).\n"
		"compare    per point of A and B (results directories, runs.csv or summary.csv):\n"
		"           means, %% change B vs A, Welch's two-sided t-test (Welch-Satterthwaite\n"
		"           degrees of freedom), 'yes' when p < alpha (default 0.05, i.e. 95%%),\n"
		"           and the geometric mean of B/A over the common points.\n"
		"cost       transport cost per operation: 1e6/ops_per_sec(backend) minus\n"
		"           1e6/ops_per_sec(NAME, default nop) at the same client count, in\n"
		"           microseconds, with a 95%% interval from the delta method.\n"
		"\n"
		"Defaults: --keys " DEFAULT_KEYS ", --metric mb_per_sec,\n"
		"          --metrics " DEFAULT_METRICS "\n"
		"Exit status: 0 success, 1 internal error, 2 usage or input error.\n");
}

/* Option parsing shared by the subcommands: --name VALUE or --name=VALUE. */
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
		die(2, "%s needs a value", name);
	*val = argv[++*i];
	return 1;
}

static int cmd_summarize(int argc, char **argv)
{
	const char *keys = DEFAULT_KEYS, *metrics = DEFAULT_METRICS, *file = NULL;

	for (int i = 1; i < argc; i++) {
		if (opt_value(argc, argv, &i, "--keys", &keys) ||
		    opt_value(argc, argv, &i, "--metrics", &metrics))
			continue;
		if (argv[i][0] == '-' && argv[i][1])
			die(2, "summarize: unknown option %s", argv[i]);
		if (file)
			die(2, "summarize: one RUNS.csv only");
		file = argv[i];
	}
	if (!file)
		die(2, "summarize: missing RUNS.csv");

	struct table t;
	struct summary s;
	table_read(&t, file);
	summarize_runs(&t, keys, metrics, &s);

	FILE *o = stdout;
	for (size_t k = 0; k < s.nkeys; k++)
		fprintf(o, "%s%s", k ? "," : "", s.keys[k]);
	for (size_t c = 0; c < s.ncarry; c++)
		fprintf(o, ",%s", s.carry[c]);
	fputs(",n,n_failed", o);
	for (size_t m = 0; m < s.nmetrics; m++)
		fprintf(o, ",%s_mean,%s_sd,%s_ci95", s.metrics[m], s.metrics[m], s.metrics[m]);
	fputc('\n', o);
	for (size_t p = 0; p < s.npoints; p++) {
		const struct point *pt = &s.p[p];
		for (size_t k = 0; k < s.nkeys; k++) {
			if (k)
				fputc(',', o);
			put_field(o, pt->key[k]);
		}
		for (size_t c = 0; c < s.ncarry; c++) {
			fputc(',', o);
			put_field(o, pt->carry[c]);
		}
		fprintf(o, ",%zu,%zu", pt->n_ok, pt->n_failed);
		for (size_t m = 0; m < s.nmetrics; m++) {
			fputc(',', o);
			put_num(o, pt->m[m].mean);
			fputc(',', o);
			put_num(o, pt->m[m].sd);
			fputc(',', o);
			put_num(o, pt->m[m].ci);
		}
		fputc('\n', o);
	}
	summary_free(&s);
	table_free(&t);
	if (fflush(o) || ferror(o))
		die(1, "writing: %s", strerror(errno));
	return 0;
}

static const struct point *find_point(const struct summary *s, const struct point *q)
{
	for (size_t p = 0; p < s->npoints; p++) {
		size_t k;
		for (k = 0; k < s->nkeys; k++)
			if (strcmp(s->p[p].key[k], q->key[k]) != 0)
				break;
		if (k == s->nkeys)
			return &s->p[p];
	}
	return NULL;
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

static void fmt_mean(char *buf, size_t len, const struct metric_sum *m)
{
	char a[64], b[64];
	fmt_num(a, sizeof(a), m->mean);
	if (isfinite(m->ci)) {
		fmt_num(b, sizeof(b), m->ci);
		snprintf(buf, len, "%s ± %s (%zu)", a, b, m->n);
	} else {
		snprintf(buf, len, "%s (%zu)", a, m->n);
	}
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
	if (right)
		for (int i = 0; i < fill; i++)
			fputc(' ', o);
	fputs(s, o);
	if (!right)
		for (int i = 0; i < fill; i++)
			fputc(' ', o);
}

static int cmd_compare(int argc, char **argv)
{
	const char *keys = DEFAULT_KEYS, *metric = "mb_per_sec", *alpha_s = "0.05", *file[2] = { 0, 0 };
	int csv = 0, nfile = 0;

	for (int i = 1; i < argc; i++) {
		if (opt_value(argc, argv, &i, "--keys", &keys) ||
		    opt_value(argc, argv, &i, "--metric", &metric) ||
		    opt_value(argc, argv, &i, "--alpha", &alpha_s))
			continue;
		if (strcmp(argv[i], "--csv") == 0) {
			csv = 1;
			continue;
		}
		if (argv[i][0] == '-' && argv[i][1])
			die(2, "compare: unknown option %s", argv[i]);
		if (nfile == 2)
			die(2, "compare: two inputs only (A B)");
		file[nfile++] = argv[i];
	}
	if (nfile != 2)
		die(2, "compare: needs two inputs, A and B");
	double alpha = num(alpha_s);
	if (!(alpha > 0 && alpha < 1))
		die(2, "compare: --alpha must be between 0 and 1");

	struct table ta, tb;
	struct summary a, b;
	load_any(file[0], keys, metric, &a, &ta);
	load_any(file[1], keys, metric, &b, &tb);

	size_t cap = a.npoints + b.npoints + 1, nratio = 0, nsig = 0, nup = 0, ndown = 0, ncommon = 0;
	double *ratio = xrealloc(NULL, cap * sizeof(double));
	FILE *o = stdout;
	int kw[32] = { 0 };
	const int colw_mean = 24;

	if (a.nkeys > 32)
		die(2, "too many key columns");
	for (size_t k = 0; k < a.nkeys; k++) {
		kw[k] = u8width(a.keys[k]);
		for (size_t p = 0; p < a.npoints; p++)
			if (u8width(a.p[p].key[k]) > kw[k])
				kw[k] = u8width(a.p[p].key[k]);
		for (size_t p = 0; p < b.npoints; p++)
			if (u8width(b.p[p].key[k]) > kw[k])
				kw[k] = u8width(b.p[p].key[k]);
	}

	if (csv) {
		for (size_t k = 0; k < a.nkeys; k++)
			fprintf(o, "%s,", a.keys[k]);
		fprintf(o, "n_a,mean_a,ci95_a,n_b,mean_b,ci95_b,change_pct,t,df,p,significant\n");
	} else {
		fprintf(o, "A: %s\nB: %s\n", file[0], file[1]);
		fprintf(o, "metric: %s, mean ± half-width of its 95%% confidence interval (runs)\n", metric);
		fprintf(o, "significant: Welch's two-sided t-test at %g%% (p < %g)\n\n",
			100 * (1 - alpha), alpha);
		for (size_t k = 0; k < a.nkeys; k++) {
			pad(o, a.keys[k], kw[k], k > 0 && strcmp(a.keys[k], "clients") == 0);
			fputs("  ", o);
		}
		pad(o, "A", colw_mean, 1);
		fputs("  ", o);
		pad(o, "B", colw_mean, 1);
		fprintf(o, "  %8s  %8s  %s\n", "change", "p", "significant");
	}

	/* Points of A in A's order, then those only in B. */
	for (int side = 0; side < 2; side++) {
		const struct summary *s = side ? &b : &a, *other = side ? &a : &b;
		for (size_t p = 0; p < s->npoints; p++) {
			const struct point *pa, *pb;
			if (side == 0) {
				pa = &s->p[p];
				pb = find_point(other, pa);
			} else {
				pb = &s->p[p];
				if (find_point(other, pb))
					continue;
				pa = NULL;
			}
			const struct point *any = pa ? pa : pb;
			struct metric_sum none = { 0, NAN, NAN, NAN };
			const struct metric_sum *ma = pa ? &pa->m[0] : &none, *mb = pb ? &pb->m[0] : &none;
			double change = NAN;
			struct welch w = { NAN, NAN, NAN, 0 };
			const char *sig = "n/a";

			if (pa && pb) {
				ncommon++;
				if (ma->mean > 0 && mb->mean > 0) {
					change = 100 * (mb->mean / ma->mean - 1);
					ratio[nratio++] = mb->mean / ma->mean;
				}
				w = stats_welch(ma->mean, isnan(ma->sd) ? 0 : ma->sd, ma->n,
						mb->mean, isnan(mb->sd) ? 0 : mb->sd, mb->n);
				if (w.valid) {
					sig = w.p < alpha ? "yes" : "no";
					if (w.p < alpha) {
						nsig++;
						if (mb->mean > ma->mean)
							nup++;
						else
							ndown++;
					}
				}
			} else {
				sig = pa ? "only in A" : "only in B";
			}
			if (csv) {
				for (size_t k = 0; k < a.nkeys; k++) {
					put_field(o, any->key[k]);
					fputc(',', o);
				}
				fprintf(o, "%zu,", ma->n);
				put_num(o, ma->mean);
				fputc(',', o);
				put_num(o, ma->ci);
				fprintf(o, ",%zu,", mb->n);
				put_num(o, mb->mean);
				fputc(',', o);
				put_num(o, mb->ci);
				fputc(',', o);
				put_num(o, change);
				fputc(',', o);
				put_num(o, w.t);
				fputc(',', o);
				put_num(o, w.df);
				fputc(',', o);
				put_num(o, w.p);
				fprintf(o, ",%s\n", sig);
			} else {
				char bufa[160], bufb[160], ch[32], pv[32];
				for (size_t k = 0; k < a.nkeys; k++) {
					pad(o, any->key[k], kw[k], k > 0 && strcmp(a.keys[k], "clients") == 0);
					fputs("  ", o);
				}
				if (pa)
					fmt_mean(bufa, sizeof(bufa), ma);
				else
					snprintf(bufa, sizeof(bufa), "-");
				if (pb)
					fmt_mean(bufb, sizeof(bufb), mb);
				else
					snprintf(bufb, sizeof(bufb), "-");
				if (isfinite(change))
					snprintf(ch, sizeof(ch), "%+.2f%%", change);
				else
					snprintf(ch, sizeof(ch), "-");
				if (isfinite(w.p))
					snprintf(pv, sizeof(pv), w.p < 0.0001 ? "%.1e" : "%.4f", w.p);
				else
					snprintf(pv, sizeof(pv), "-");
				pad(o, bufa, colw_mean, 1);
				fputs("  ", o);
				pad(o, bufb, colw_mean, 1);
				fprintf(o, "  %8s  %8s  %s\n", ch, pv, sig);
			}
		}
	}

	double g = stats_geomean(ratio, nratio);
	if (csv) {
		fprintf(o, "geomean");
		for (size_t k = 1; k < a.nkeys; k++)
			fputc(',', o);
		fprintf(o, ",%zu,,,%zu,,,", nratio, nratio);
		put_num(o, 100 * (g - 1));
		fprintf(o, ",,,,%zu significant\n", nsig);
	} else {
		fprintf(o, "\ngeometric mean of B/A over %zu common points: ", nratio);
		if (isfinite(g))
			fprintf(o, "%+.2f%%", 100 * (g - 1));
		else
			fprintf(o, "-");
		fprintf(o, "  (%zu significant: %zu up, %zu down; %zu not)\n", nsig, nup, ndown,
			ncommon - nsig);
	}
	free(ratio);
	summary_free(&b);
	summary_free(&a);
	table_free(&tb);
	table_free(&ta);
	if (fflush(o) || ferror(o))
		die(1, "writing: %s", strerror(errno));
	return 0;
}

static int cmd_cost(int argc, char **argv)
{
	const char *keys = DEFAULT_KEYS, *base = "nop", *file = NULL;

	for (int i = 1; i < argc; i++) {
		if (opt_value(argc, argv, &i, "--keys", &keys) ||
		    opt_value(argc, argv, &i, "--baseline", &base))
			continue;
		if (argv[i][0] == '-' && argv[i][1])
			die(2, "cost: unknown option %s", argv[i]);
		if (file)
			die(2, "cost: one input only");
		file = argv[i];
	}
	if (!file)
		die(2, "cost: missing SUMMARY.csv, RUNS.csv or DIR");
	struct list kl = split_list(keys);
	int bad_keys = kl.n != 3 || strcmp(kl.v[0], "backend") || strcmp(kl.v[1], "clients");
	list_free(&kl);
	if (bad_keys)
		die(2, "cost: --keys must be backend,clients,<setting>");

	struct table t;
	struct summary s;
	load_any(file, keys, "ops_per_sec", &s, &t);

	FILE *o = stdout;
	fprintf(o, "backend,clients,%s,cost_us,cost_ci95_us,ops_per_sec,%s_ops_per_sec\n", s.keys[2], base);
	for (size_t p = 0; p < s.npoints; p++) {
		const struct point *pt = &s.p[p];
		if (strcmp(pt->key[0], base) == 0 || !(pt->m[0].mean > 0))
			continue;
		/* The baseline at the same client count: same setting if it was run
		 * that way, else any (nop has no offloads: its setting is n/a). */
		const struct point *bp = NULL;
		for (size_t q = 0; q < s.npoints; q++) {
			const struct point *c = &s.p[q];
			if (strcmp(c->key[0], base) || strcmp(c->key[1], pt->key[1]) || !(c->m[0].mean > 0))
				continue;
			if (!bp || strcmp(c->key[2], pt->key[2]) == 0)
				bp = c;
		}
		if (!bp)
			continue;
		double ob = pt->m[0].mean, on = bp->m[0].mean;
		double cost = 1e6 / ob - 1e6 / on;
		double eb = isfinite(pt->m[0].ci) ? 1e6 * pt->m[0].ci / (ob * ob) : NAN;
		double en = isfinite(bp->m[0].ci) ? 1e6 * bp->m[0].ci / (on * on) : 0;
		put_field(o, pt->key[0]);
		fputc(',', o);
		put_field(o, pt->key[1]);
		fputc(',', o);
		put_field(o, pt->key[2]);
		fputc(',', o);
		put_num(o, cost);
		fputc(',', o);
		put_num(o, sqrt(eb * eb + en * en));
		fputc(',', o);
		put_num(o, ob);
		fputc(',', o);
		put_num(o, on);
		fputc('\n', o);
	}
	summary_free(&s);
	table_free(&t);
	if (fflush(o) || ferror(o))
		die(1, "writing: %s", strerror(errno));
	return 0;
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		usage(stderr);
		return 2;
	}
	if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "help") == 0) {
		usage(stdout);
		return 0;
	}
	if (strcmp(argv[1], "--version") == 0 || strcmp(argv[1], "-V") == 0) {
		printf("tbench-stats %s\n", PACKAGE_VERSION);
		return 0;
	}
	if (strcmp(argv[1], "summarize") == 0)
		return cmd_summarize(argc - 1, argv + 1);
	if (strcmp(argv[1], "compare") == 0)
		return cmd_compare(argc - 1, argv + 1);
	if (strcmp(argv[1], "cost") == 0)
		return cmd_cost(argc - 1, argv + 1);
	fprintf(stderr, "%s: unknown command '%s'\n", prog, argv[1]);
	usage(stderr);
	return 2;
}
