/* tbench-stats compare: two sets of results point by point, as a table,
 * as CSV, or as a verdict for git bisect run. */
#include "config.h"
#include "stats_cmd.h"
#include "stats_row.h"
#include "stats_summary.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* git bisect run's "cannot test this revision": a verdict the noise leaves open. */
enum { EXIT_CANNOT_TELL = 125 };

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

/* "mean ± ci (n)", "(n/k sittings)" when the interval is of k block
 * means, or "-" for a point not on this side. */
static void fmt_mean(char *buf, size_t len, const struct point *p)
{
	char a[64], b[64];
	if (!p) {
		snprintf(buf, len, "-");
		return;
	}
	const struct metric_sum *m = &p->m[0];
	fmt_num(a, sizeof(a), m->mean);
	fmt_num(b, sizeof(b), m->ci);
	if (isfinite(m->ci) && m->level != LEVEL_RUN)
		snprintf(buf, len, "%s ± %s (%zu/%zu %ss)", a, b, m->n, m->n_level, level_name(m->level));
	else if (isfinite(p->m[0].ci))
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

static size_t count_equivalence(const struct comparison *c, enum equivalence v)
{
	size_t n = 0;
	for (size_t i = 0; i < c->nrows; i++)
		n += c->rows[i].eq.verdict == v;
	return n;
}

static void print_comparison_csv(FILE *o, const struct summary *a, const struct comparison *c,
				 const struct equiv_margin *m, int resolve)
{
	for (size_t k = 0; k < a->keys.n; k++)
		fprintf(o, "%s,", a->keys.v[k]);
	fputs("n_a,mean_a,ci95_a,n_b,mean_b,ci95_b,change_pct,t,df,p,significant,"
	      "diff,diff_ci95,change_lo_pct,change_hi_pct,mde,mde_pct,method,pairs", o);
	put_equivalence_head(o, m);
	fputs(",level,half_width_pct", o);  /* after the others: added later */
	fputs(resolve ? ",runs_to_resolve\n" : "\n", o);
	for (size_t i = 0; i < c->nrows; i++) {
		const struct comparison_row *r = &c->rows[i];
		const struct metric_sum none = { .n = 0, .mean = NAN, .sd = NAN, .ci = NAN };
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
			fprintf(o, ",%s,%zu", diff_method(&r->d), r->d.pairs);
		else
			fputs(",,", o);
		put_equivalence(o, m, &r->eq);
		fprintf(o, ",%s,", r->a && r->b && r->d.valid ? level_name((enum ci_level)r->d.level) : "");
		csv_put_num(o, r->half_width_pct);
		if (resolve && r->runs_to_resolve)
			fprintf(o, ",%zu", r->runs_to_resolve);
		else if (resolve)
			fputc(',', o);
		fputc('\n', o);
	}
	fprintf(o, "geomean");
	for (size_t k = 1; k < a->keys.n; k++)
		fputc(',', o);
	fprintf(o, ",%zu,,,%zu,,,", c->nratio, c->nratio);
	csv_put_num(o, 100 * (c->geomean - 1));
	fprintf(o, ",,,,%zu significant,,,,,,,,", c->nsig);
	if (m->value > 0)
		fprintf(o, ",%zu equivalent,,,,", count_equivalence(c, EQUIV_EQUIVALENT));
	fputs(resolve ? ",,,\n" : ",,\n", o);
}

/* 1 when key k has one value in every row of the comparison. */
static int key_constant(const struct comparison *c, size_t k)
{
	for (size_t i = 1; i < c->nrows; i++)
		if (strcmp(row_point(&c->rows[i])->key[k], row_point(&c->rows[0])->key[k]) != 0)
			return 0;
	return 1;
}

/* The columns after method with --equivalent: the verdict and the margin
 * this noise could have shown. */
static void print_equivalence_cells(FILE *o, const struct equiv_margin *m, const struct equiv_est *e)
{
	char shown[32];
	if (!(m->value > 0))
		return;
	fmt_margin(shown, sizeof(shown), m, e->shown);
	fprintf(o, "  %-11s  %s", equivalence_word(e->verdict), shown);
}

/* The columns after p: significant, interval and MDE in percent, method. */
static void print_change_interval(FILE *o, const struct comparison_row *r, const struct equiv_margin *m)
{
	char iv[64] = "-", mde[32] = "-", method[32] = "-";
	if (isfinite(r->change_lo_pct))
		snprintf(iv, sizeof(iv), "[%+.2f%%, %+.2f%%]", r->change_lo_pct, r->change_hi_pct);
	if (isfinite(r->mde_pct))
		snprintf(mde, sizeof(mde), "%.2f%%", r->mde_pct);
	const char *by = r->d.level != LEVEL_RUN ? level_name((enum ci_level)r->d.level) : "";
	if (r->a && r->b && r->d.pairs)
		snprintf(method, sizeof(method), "%s (%zu)%s%s", diff_method(&r->d), r->d.pairs,
			 *by ? " " : "", by);
	else if (r->a && r->b)
		snprintf(method, sizeof(method), "unpaired%s%s", *by ? " " : "", by);
	if (m->value > 0)
		fprintf(o, "%-11s  %-20s  %7s  %-12s", r->verdict, iv, mde, method);
	else
		fprintf(o, "%-11s  %-20s  %7s  %s", r->verdict, iv, mde, method);
	print_equivalence_cells(o, m, &r->eq);
	fputc('\n', o);
}

/* What --equivalent's columns mean, for the table's head. */
static void print_equivalence_legend(FILE *o, const struct equiv_margin *m, double alpha)
{
	char margin[32];
	if (!(m->value > 0))
		return;
	fmt_margin(margin, sizeof(margin), m, m->value);
	fprintf(o, "equivalence: two one-sided tests against %s%s at %g%%: equivalent when the %g%% "
		"interval\nof the change lies within it, different when significant, else cannot tell; "
		"shown: the least\nmargin this noise could have shown equivalent (the farther end of "
		"that interval)\n", margin, m->relative ? " of A" : "", 100 * (1 - alpha),
		100 * (1 - 2 * alpha));
}

/* The table's last line with --equivalent: how many points came out how. */
static void print_equivalence_count(FILE *o, const struct equiv_margin *m, double alpha,
				    const struct comparison *c)
{
	char margin[32];
	if (!(m->value > 0))
		return;
	fmt_margin(margin, sizeof(margin), m, m->value);
	fprintf(o, "equivalent within %s at %g%%: %zu; different: %zu; cannot tell at this noise: %zu\n",
		margin, 100 * (1 - alpha), count_equivalence(c, EQUIV_EQUIVALENT),
		count_equivalence(c, EQUIV_DIFFERENT), count_equivalence(c, EQUIV_CANNOT_TELL));
}

/* The width of the widest mean of either side, 24 at least. */
static int mean_width(const struct comparison *c)
{
	int w = 24;
	char buf[160];
	for (size_t i = 0; i < c->nrows; i++)
		for (int side = 0; side < 2; side++) {
			fmt_mean(buf, sizeof(buf), side ? c->rows[i].b : c->rows[i].a);
			if (u8width(buf) > w)
				w = u8width(buf);
		}
	return w;
}

/* The table leaves out the keys after backend and clients that have one
 * value throughout (most knobs, "-"), and says those that were set. */
static void print_comparison_table(FILE *o, const char *const file[2], const char *metric,
				   double alpha, enum pairing by_rep, const struct equiv_margin *m,
				   double sittings_pct, const double relative[3], const struct summary *a,
				   const struct comparison *c)
{
	enum { MAX_KEYS = 32, HIDDEN = -1 };
	int kw[MAX_KEYS] = { 0 }, mean_w = mean_width(c);
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
	fputs("level: an interval is the runs', or when blocks of reps or sittings differ more\n"
	      "than runs within them, the block means' ((runs/blocks) after a mean; method says so)\n", o);
	fprintf(o, "significant: Welch's two-sided t-test at %g%% (p < %g)%s\n", 100 * (1 - alpha), alpha,
		by_rep == PAIR_RATIO ? ";\nwhere the runs pair up by rep, a t-test of the mean of ln(B/A), "
		"the change 100 (exp(x) - 1)\nof it and of its interval's ends (method paired-ratio)" :
		by_rep ? "; a paired t-test where the runs pair up by rep (method paired)" : "");
	fprintf(o, "interval: 95%% confidence interval of the change; mde: the least change the test "
		"would detect\n(95%% confidence, %.0f%% power) at this noise and number of runs\n",
		100 * STATS_MDE_POWER);
	if (isfinite(sittings_pct))
		fprintf(o, "sittings: A's and B's sittings differ by %+.2f%% (--sittings-pct): a significant "
			"change whose\ninterval lies within ±%.2f%% is 'sittings', within the sittings' "
			"difference, not significant\n", sittings_pct, fabs(sittings_pct));
	if (isfinite(relative[0]))
		fprintf(o, "relative: each side over its own sitting's yardstick, B's %+.2f%% [%+.2f%%, %+.2f%%] "
			"from A's:\nchange and interval are of (B/A) / (yB/yA), the two intervals combined; "
			"no p, no mde\n", relative[0], relative[1], relative[2]);
	print_equivalence_legend(o, m, alpha);
	fputc('\n', o);
	for (size_t k = 0; k < nkeys; k++)
		if (kw[k] != HIDDEN)
			pad(o, a->keys.v[k], kw[k], k > 0 && strcmp(a->keys.v[k], "clients") == 0);
	pad(o, "A", mean_w, 1);
	pad(o, "B", mean_w, 1);
	if (m->value > 0)
		fprintf(o, "%8s  %8s  %-11s  %-20s  %7s  %-12s  %-11s  %s\n", "change", "p", "significant",
			"interval", "mde", "method", "equivalence", "shown");
	else
		fprintf(o, "%8s  %8s  %-11s  %-20s  %7s  %s\n", "change", "p", "significant", "interval",
			"mde", "method");
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
		pad(o, ma, mean_w, 1);
		pad(o, mb, mean_w, 1);
		fprintf(o, "%8s  %8s  ", ch, pv);
		print_change_interval(o, r, m);
	}
	fprintf(o, "\ngeometric mean of B/A over %zu common points: ", c->nratio);
	if (isfinite(c->geomean))
		fprintf(o, "%+.2f%%", 100 * (c->geomean - 1));
	else
		fprintf(o, "-");
	fprintf(o, "  (%zu significant: %zu up, %zu down; %zu not", c->nsig, c->nup, c->ndown,
		c->ncommon - c->nsig - c->nsittings);
	if (isfinite(sittings_pct))
		fprintf(o, "; %zu within the sittings' difference", c->nsittings);
	fputs(")\n", o);
	print_equivalence_count(o, m, alpha, c);
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
	const char *keys, *metric, *alpha_s, *verdict, *equivalent, *resolve, *sittings, *relative_s, *file[2];
	int csv, by_rep, ratio;
	double alpha;
	double sittings_pct;            /* --sittings-pct's; NaN: none */
	double relative[3];             /* --relative-to-sittings PCT,LO,HI; NaN: none */
	struct verdict_rule rule;
	struct equiv_margin margin;     /* value 0: no --equivalent */
	struct equiv_margin effect;     /* --resolve's; value 0: none */
};

/* --relative-to-sittings PCT,LO,HI: the yardstick's change and its interval. */
static void relative_option(struct compare_opts *o)
{
	o->relative[0] = o->relative[1] = o->relative[2] = NAN;
	if (!o->relative_s)
		return;
	struct strlist v = strlist_split(o->relative_s);
	for (size_t i = 0; i < 3 && v.n == 3; i++)
		o->relative[i] = csv_num(v.v[i]);
	strlist_free(&v);
	if (!(isfinite(o->relative[0]) && isfinite(o->relative[1]) && isfinite(o->relative[2])) ||
	    !(o->relative[0] > -100) || !(o->relative[1] <= o->relative[2]))
		die(EXIT_USAGE, "compare: --relative-to-sittings %s: want PCT,LO,HI (the sittings' change "
		    "in %% above -100, and its interval, LO <= HI)", o->relative_s);
	if (o->sittings || o->equivalent || o->resolve)
		die(EXIT_USAGE, "compare: --relative-to-sittings goes without --sittings-pct, --equivalent "
		    "and --resolve");
}

/* --ratio: of pairs, and its margins and effects in percent (of A), the
 * scale a ratio has. */
static void ratio_options(const struct compare_opts *o)
{
	if (!o->ratio)
		return;
	if (!o->by_rep)
		die(EXIT_USAGE, "compare: --ratio is the ratio of paired runs: give --paired too "
		    "(unpaired, the change is already in percent of A)");
	if (o->equivalent && !o->margin.relative)
		die(EXIT_USAGE, "compare: --ratio takes --equivalent in percent of A (2%%), not '%s'",
		    o->equivalent);
	if (o->resolve && !o->effect.relative)
		die(EXIT_USAGE, "compare: --ratio takes --resolve in percent of A (2%%), not '%s'",
		    o->resolve);
}

static void compare_options(int argc, char **argv, struct compare_opts *o)
{
	const char *figure = NULL, *block_text = NULL;
	const struct poptOption table[] = {
		{ "keys", 0, POPT_ARG_STRING, &o->keys, 0, NULL, NULL },
		{ "alpha", 0, POPT_ARG_STRING, &o->alpha_s, 0, NULL, NULL },
		{ "verdict", 0, POPT_ARG_STRING, &o->verdict, 0, NULL, NULL },
		{ "equivalent", 0, POPT_ARG_STRING, &o->equivalent, 0, NULL, NULL },
		{ "metric", 0, POPT_ARG_STRING, &figure, 0, NULL, NULL },
		{ "figure", 0, POPT_ARG_STRING, &figure, 0, NULL, NULL },
		{ "csv", 0, POPT_ARG_NONE, &o->csv, 0, NULL, NULL },
		{ "paired", 0, POPT_ARG_NONE, &o->by_rep, 0, NULL, NULL },
		{ "ratio", 0, POPT_ARG_NONE, &o->ratio, 0, NULL, NULL },
		{ "resolve", 0, POPT_ARG_STRING, &o->resolve, 0, NULL, NULL },
		{ "sittings-pct", 0, POPT_ARG_STRING, &o->sittings, 0, NULL, NULL },
		{ "relative-to-sittings", 0, POPT_ARG_STRING, &o->relative_s, 0, NULL, NULL },
		{ "block-reps", 0, POPT_ARG_STRING, &block_text, 0, NULL, NULL },
		POPT_TABLEEND
	};
	int nfile = stats_options("compare", argc, argv, table, NULL, NULL, o->file, 2);
	int figure_given = figure != NULL;
	block_reps_set("compare", block_text);
	if (figure)
		o->metric = figure;
	if (nfile != 2)
		die(EXIT_USAGE, "compare: needs two inputs, A and B");
	o->alpha = csv_num(o->alpha_s);
	if (!(o->alpha > 0 && o->alpha < 1))
		die(EXIT_USAGE, "compare: --alpha %s: want a number between 0 and 1", o->alpha_s);
	struct errbuf err;
	if (o->equivalent && !(o->alpha < 0.5))
		die(EXIT_USAGE, "compare: --equivalent needs --alpha below 0.5 (its interval is at 1 - 2 alpha)");
	if (o->equivalent)
		equivalent_option("compare", o->equivalent, &o->margin);
	if (o->resolve && !o->csv)
		die(EXIT_USAGE, "compare: --resolve adds a column to --csv: give --csv too");
	if (o->resolve && equiv_margin_parse(&o->effect, o->resolve, &err) < 0)
		die(EXIT_USAGE, "compare: --resolve %s", err.msg);
	o->sittings_pct = o->sittings ? csv_num(o->sittings) : NAN;
	if (o->sittings && !isfinite(o->sittings_pct))
		die(EXIT_USAGE, "compare: --sittings-pct %s: want a number (the sittings' difference in %%)",
		    o->sittings);
	relative_option(o);
	ratio_options(o);
	if (!o->verdict)
		return;
	if (o->equivalent)
		die(EXIT_USAGE, "compare: --verdict and --equivalent are separate questions: give one");
	if (verdict_rule_parse(&o->rule, o->verdict, &err) < 0)
		die(EXIT_USAGE, "compare: --verdict %s", err.msg);
	if (o->ratio && !o->rule.relative)
		die(EXIT_USAGE, "compare: --ratio takes --verdict's threshold in percent of A "
		    "('%s<-3%%'), not '%s'", o->rule.figure, o->verdict);
	if (figure_given || o->csv)
		die(EXIT_USAGE, "compare: --verdict names its figure and prints lines of its own: "
		    "leave out --figure, --metric and --csv");
	o->metric = o->rule.figure;
}

/* --ratio: every run above 0, else exit 2 naming the file and line. */
/* No point in common: exit 2 naming the keys whose values differ. */
static void check_common_points(const struct compare_opts *o, struct summary *a, struct summary *b)
{
	char *differ = comparison_mismatch(a, b);
	if (!differ)
		return;
	fprintf(stderr, "%s: compare: no point of %s is in %s: they differ in %s.\n"
		"Leave a dimension out of --keys to compare across it (keys now: ",
		STATS_PROG, o->file[0], o->file[1], differ);
	for (size_t k = 0; k < a->keys.n; k++)
		fprintf(stderr, "%s%s", k ? "," : "", a->keys.v[k]);
	fputs(").\n", stderr);
	free(differ);
	summary_free(b);
	summary_free(a);
	exit(EXIT_USAGE);
}

void cmd_compare(int argc, char **argv)
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
	char *name[2] = { xstrdup(ta.name), xstrdup(tb.name) };
	summary_of(&ta, &kl, metric, &a);
	summary_of(&tb, &kl, metric, &b);
	strlist_free(&kl);
	struct errbuf err;
	bool not_positive = o.ratio && (compare_ratio_check(&a, name[0], &err) < 0 ||
					compare_ratio_check(&b, name[1], &err) < 0);
	free(name[0]);
	free(name[1]);
	if (not_positive) {
		summary_free(&b);
		summary_free(&a);
		die(EXIT_USAGE, "compare: %s", err.msg);
	}
	check_common_points(&o, &a, &b);
	enum pairing by_rep = o.ratio ? PAIR_RATIO : o.by_rep ? PAIR_BY_REP : PAIR_NONE;
	compare_summaries(&c, &a, &b, o.alpha, by_rep);
	if (o.equivalent)
		compare_equivalence(&c, &o.margin, o.alpha);
	if (o.resolve)
		compare_resolve(&c, &o.effect);
	if (isfinite(o.sittings_pct))
		compare_sittings(&c, o.sittings_pct);
	if (isfinite(o.relative[0]))
		compare_relative(&c, o.relative[0], o.relative[1], o.relative[2]);
	if (o.verdict)
		rc = print_verdict(stdout, &a, &c, &o.rule);
	else if (o.csv)
		print_comparison_csv(stdout, &a, &c, &o.margin, o.resolve != NULL);
	else
		print_comparison_table(stdout, o.file, metric, o.alpha, by_rep, &o.margin, o.sittings_pct,
				       o.relative, &a, &c);
	comparison_free(&c);
	summary_free(&b);
	summary_free(&a);
	verdict_rule_free(&o.rule);
	if (rc != 0 && fflush(stdout) != 0)
		die(EXIT_RUN_FAILED, "writing the output: %s", strerror(errno));
	if (rc != 0)
		exit(rc);
}
