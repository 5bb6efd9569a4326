/* tbench-stats paired and substitute: medians over repetitions, paired
 * ratios or costs, and what a difference in part of a time per operation
 * explains: the statistics of the benchmarks' reports (bench/'s scripts). */
#include "config.h"
#include "stats_cmd.h"
#include "stats_paired.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct paired_out {
	int decimals;        /* -1: %.6g; PRECISE: %.17g */
	double target;       /* NaN: no target columns */
};

/* --precise: every digit a double has, for a figure computed on */
#define PRECISE (-2)

/* v as --decimals or --precise say; nothing for NaN or infinity */
static void put_number(FILE *o, double v, int decimals)
{
	if (!isfinite(v))
		return;
	if (decimals == PRECISE)
		fprintf(o, "%.17g", v);
	else if (decimals < 0)
		csv_put_num(o, v);
	else
		fprintf(o, "%.*f", decimals, v);
}

static void put_value(FILE *o, double v, int decimals)
{
	fputc(',', o);
	put_number(o, v, decimals);
}

/* confidence as a whole percentage; nothing without values */
static void put_interval(FILE *o, const struct median_est *m, int decimals)
{
	put_value(o, m->median, decimals);
	put_value(o, m->lowest, decimals);
	put_value(o, m->highest, decimals);
	fputc(',', o);
	if (m->n)
		fprintf(o, "%.0f", 100 * m->confidence);
}

static void put_target(FILE *o, double v, double target)
{
	fprintf(o, ",%s", isnan(v) ? "" : v >= target ? "met" : "missed");
}

static void print_paired(FILE *o, const struct paired_result *r, const struct paired_spec *s,
			 const struct paired_out *f)
{
	for (size_t k = 0; k < s->keys.n; k++)
		fprintf(o, "%s%s", k ? "," : "", s->keys.v[k]);
	if (s->variant)
		fprintf(o, "%s%s", s->keys.n ? "," : "", s->variant);
	fputs(s->keys.n || s->variant ? "," : "", o);
	fputs("n,median,lowest,highest,confidence_pct", o);
	if (s->base)
		fputs(",pairs,paired,paired_lowest,paired_highest,paired_confidence_pct,of_medians", o);
	if (s->base && !isnan(f->target))
		fputs(",paired_target,of_medians_target", o);
	fputc('\n', o);
	for (size_t i = 0; i < r->n; i++) {
		const struct paired_group *g = &r->g[i];
		for (size_t k = 0; k < s->keys.n; k++) {
			if (k)
				fputc(',', o);
			csv_put_field(o, g->key[k]);
		}
		if (s->variant) {
			if (s->keys.n)
				fputc(',', o);
			csv_put_field(o, g->variant);
		}
		fprintf(o, "%s%zu", s->keys.n || s->variant ? "," : "", g->fig.n);
		put_interval(o, &g->fig, f->decimals);
		if (s->base) {
			fputc(',', o);
			if (!g->is_base)
				fprintf(o, "%zu", g->paired.n);
			put_interval(o, &g->paired, f->decimals);
			put_value(o, g->of_medians, f->decimals);
		}
		if (s->base && !isnan(f->target)) {
			put_target(o, g->paired.n ? g->paired.median : NAN, f->target);
			put_target(o, g->of_medians, f->target);
		}
		fputc('\n', o);
	}
}

/* A whole number in [lo, hi] given to option name. */
static long whole(const char *name, const char *v, long lo, long hi)
{
	char *end;
	long n = strtol(v, &end, 10);
	if (end == v || *end || n < lo || n > hi)
		die(EXIT_USAGE, "paired: %s takes a whole number from %ld to %ld, not '%s'", name, lo, hi, v);
	return n;
}

/* A number > 0, or a fraction N/D of two, given to option name. */
static double positive_number(const char *name, const char *v)
{
	const char *slash = strchr(v, '/');
	char *num = xstrdup(v);
	if (slash)
		num[slash - v] = '\0';
	double x = csv_num(num), d = slash ? csv_num(slash + 1) : 1;
	free(num);
	if (!(x > 0) || !(d > 0) || !isfinite(x / d))
		die(EXIT_USAGE, "paired: %s takes a number > 0 or a fraction N/D, not '%s'", name, v);
	return x / d;
}

/* Appends a repeated option's value to l. */
static void add_to(struct strlist *l, const char *v)
{
	l->v = xrealloc(l->v, (l->n + 1) * sizeof(char *));
	l->v[l->n++] = xstrdup(v);
}

enum { OPT_WHERE = 1, OPT_AS, OPT_RATIO, OPT_COST, OPT_PRECISE };

/* paired's repeated options and those that set a field of their own type. */
struct paired_given {
	struct paired_spec *spec;
	struct paired_out *out;
};

static void paired_option(void *to, int val, const char *value)
{
	struct paired_given *g = to;

	if (val == OPT_WHERE)
		add_to(&g->spec->where, value);
	else if (val == OPT_AS)
		add_to(&g->spec->alias, value);
	else if (val == OPT_PRECISE)
		g->out->decimals = PRECISE;
	else
		g->spec->stat = val == OPT_RATIO ? PAIRED_RATIO : PAIRED_COST;
}

void cmd_paired(int argc, char **argv)
{
	const char *keys = "clients", *positive = NULL, *decimals = NULL, *target = NULL,
		   *scale = NULL, *file[1] = { NULL };
	struct paired_spec s = { .figure = "mb_per_sec", .pair_by = "rep", .per_scale = 1 };
	struct paired_out f = { -1, NAN };
	struct paired_given given = { &s, &f };
	const struct poptOption table[] = {
		{ "ratio", 0, POPT_ARG_NONE, NULL, OPT_RATIO, NULL, NULL },
		{ "cost", 0, POPT_ARG_NONE, NULL, OPT_COST, NULL, NULL },
		{ "precise", 0, POPT_ARG_NONE, NULL, OPT_PRECISE, NULL, NULL },
		{ "where", 0, POPT_ARG_STRING, NULL, OPT_WHERE, NULL, NULL },
		{ "as", 0, POPT_ARG_STRING, NULL, OPT_AS, NULL, NULL },
		{ "figure", 0, POPT_ARG_STRING, &s.figure, 0, NULL, NULL },
		{ "keys", 0, POPT_ARG_STRING, &keys, 0, NULL, NULL },
		{ "variant", 0, POPT_ARG_STRING, &s.variant, 0, NULL, NULL },
		{ "base", 0, POPT_ARG_STRING, &s.base, 0, NULL, NULL },
		{ "pair-by", 0, POPT_ARG_STRING, &s.pair_by, 0, NULL, NULL },
		{ "positive", 0, POPT_ARG_STRING, &positive, 0, NULL, NULL },
		{ "per", 0, POPT_ARG_STRING, &s.per, 0, NULL, NULL },
		{ "per-scale", 0, POPT_ARG_STRING, &scale, 0, NULL, NULL },
		{ "decimals", 0, POPT_ARG_STRING, &decimals, 0, NULL, NULL },
		{ "target", 0, POPT_ARG_STRING, &target, 0, NULL, NULL },
		POPT_TABLEEND
	};
	int nfile = stats_options("paired", argc, argv, table, paired_option, &given, file, 1);
	if (!nfile)
		die(EXIT_USAGE, "paired: missing CSV");
	if (s.base && !s.variant)
		die(EXIT_USAGE, "paired: --base needs --variant (the column that names it)");
	if (scale)
		s.per_scale = positive_number("--per-scale", scale);
	if (decimals)
		f.decimals = (int)whole("--decimals", decimals, 0, 17);
	if (target && !isfinite(f.target = csv_num(target)))
		die(EXIT_USAGE, "paired: --target takes a number, not '%s'", target);
	s.keys = strlist_split(keys);
	if (positive)
		s.positive = strlist_split(positive);

	struct table t;
	struct paired_result r;
	struct errbuf err;
	read_table(&t, file[0]);
	if (paired_compute(&r, &t, &s, &err) < 0)
		die(EXIT_USAGE, "paired: %s", err.msg);
	print_paired(stdout, &r, &s, &f);
	paired_free(&r);
	table_free(&t);
	strlist_free(&s.keys);
	strlist_free(&s.positive);
	strlist_free(&s.where);
	strlist_free(&s.alias);
}

/* Comma-separated numbers given to option name, into x (at most max). */
static size_t numbers(const char *name, const char *list, double *x, size_t max)
{
	struct strlist l = strlist_split(list);
	size_t n = l.n;
	if (n == 0 || n > max)
		die(EXIT_USAGE, "substitute: %s takes 1 to %zu numbers, not '%s'", name, max, list);
	for (size_t i = 0; i < n; i++)
		if (!isfinite(x[i] = csv_num(l.v[i])))
			die(EXIT_USAGE, "substitute: %s: '%s' is not a number", name, l.v[i]);
	strlist_free(&l);
	return n;
}

void cmd_substitute(int argc, char **argv)
{
	enum { MAX_PARTS = 16 };
	const char *total = NULL, *from = NULL, *to = NULL, *decimals = NULL;
	double t, a[MAX_PARTS], b[MAX_PARTS];
	const struct poptOption table[] = {
		{ "total", 0, POPT_ARG_STRING, &total, 0, NULL, NULL },
		{ "from", 0, POPT_ARG_STRING, &from, 0, NULL, NULL },
		{ "to", 0, POPT_ARG_STRING, &to, 0, NULL, NULL },
		{ "decimals", 0, POPT_ARG_STRING, &decimals, 0, NULL, NULL },
		POPT_TABLEEND
	};

	stats_options("substitute", argc, argv, table, NULL, NULL, NULL, 0);
	if (!total || !from || !to)
		die(EXIT_USAGE, "substitute: needs --total, --from and --to");
	if (!isfinite(t = csv_num(total)))
		die(EXIT_USAGE, "substitute: --total: '%s' is not a number", total);
	size_t n = numbers("--from", from, a, MAX_PARTS);
	if (numbers("--to", to, b, MAX_PARTS) != n)
		die(EXIT_USAGE, "substitute: --from and --to name as many parts");
	put_number(stdout, stats_substitute(t, a, b, n),
		   decimals ? (int)whole("--decimals", decimals, 0, 17) : -1);
	putchar('\n');
}
