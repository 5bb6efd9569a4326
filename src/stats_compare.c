/* Two summaries compared point by point, what they have in common when
 * nothing is, and the verdict of a comparison; see stats_summary.h. */
#include "config.h"
#include "stats_summary.h"
#include "stats_row.h"

#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- differences of two points ---------------------------------------------------- */

/* The index of the run of rv at rep (in the same sitting), or rv->n. */
static size_t rep_index(const struct rep_values *rv, const char *rep, const char *sitting)
{
	size_t i = 0;
	while (i < rv->n && (strcmp(rv->rep[i], rep) != 0 || strcmp(rv->sitting[i], sitting) != 0))
		i++;
	return i;
}

/* What a pair of runs gives: b - a, or ln(b / a) for PAIR_RATIO (NaN
 * unless both are above 0). */
static double pair_value(double a, double b, enum pairing how)
{
	if (how != PAIR_RATIO)
		return b - a;
	return a > 0 && b > 0 ? log(b / a) : NAN;
}

/* b - a (or ln(b / a)) rep by rep (within a sitting) into d over the reps
 * both points ran: the pairs, or 0 for none (also when a pair has no
 * ratio: compare_ratio_check refuses such runs first). A rep twice on either side pairs nothing.
 * Two points with the same reps pair (2 of them at least); others when 3
 * or more reps are common: --precision stops its points at different reps,
 * and the reps they both ran were run back to back all the same. */
static size_t rep_differences(const struct rep_values *a, const struct rep_values *b,
			      struct block_run *d, enum pairing how)
{
	size_t n = 0;

	for (size_t j = 0; j < b->n; j++)
		if (rep_index(b, b->rep[j], b->sitting[j]) != j)
			return 0;
	for (size_t i = 0; i < a->n; i++) {
		if (rep_index(a, a->rep[i], a->sitting[i]) != i)
			return 0;
		size_t j = rep_index(b, a->rep[i], a->sitting[i]);
		double rep = csv_num(a->rep[i]);
		if (j == b->n)
			continue;
		d[n++] = (struct block_run){ pair_value(a->v[i], b->v[j], how),
					     isfinite(rep) ? rep : (double)i, a->sitting[i] };
		if (isnan(d[n - 1].v))
			return 0;
	}
	bool same_reps = n == a->n && n == b->n;
	return n >= (same_reps ? 2 : 3) ? n : 0;
}

/* The paired difference: the mean of the per-rep differences, its
 * interval at the level they call for. */
static struct diff_est paired_difference(struct block_run *d, size_t pairs, size_t block_reps)
{
	struct level_est e = level_estimate(d, pairs, block_reps, SUMMARY_CONF);
	struct diff_est r = stats_diff_se(e.mean, e.se, e.df, SUMMARY_CONF);
	r.pairs = pairs;
	r.level = (int)e.level;
	return r;
}

struct diff_est point_difference(const struct point *a, const struct point *b, enum pairing by_rep)
{
	const struct metric_sum *ma = &a->m[0], *mb = &b->m[0];
	struct block_run *d = xrealloc(NULL, (a->reps.n ? a->reps.n : 1) * sizeof(*d));
	size_t pairs = by_rep ? rep_differences(&a->reps, &b->reps, d, by_rep) : 0;
	struct diff_est e;
	if (pairs) {
		e = paired_difference(d, pairs, a->reps.block_reps);
		e.log_ratio = by_rep == PAIR_RATIO;
	} else {
		e = stats_diff_welch(ma->mean, isnan(ma->sd_level) ? 0 : ma->sd_level, ma->n_level,
				     mb->mean, isnan(mb->sd_level) ? 0 : mb->sd_level, mb->n_level,
				     SUMMARY_CONF);
		e.level = (int)(ma->level > mb->level ? ma->level : mb->level);
	}
	free(d);
	return e;
}

const char *diff_method(const struct diff_est *d)
{
	if (!d->pairs)
		return "unpaired";
	return d->log_ratio ? "paired-ratio" : "paired";
}

/* ---- comparison ------------------------------------------------------------------ */

/* The change in percent of A from d: of a log ratio, 100 (exp(x) - 1)
 * of its mean, its interval's ends and its MDE; else d against A's mean
 * (A's mean as the yardstick: its own noise is in d's interval already;
 * that of the ratio's denominator adds a term of second order). */
static void change_in_pct(struct comparison_row *row, double mean_a)
{
	const struct diff_est *d = &row->d;
	if (d->log_ratio) {
		row->change_pct = 100 * expm1(d->mean);
		row->change_lo_pct = 100 * expm1(d->mean - d->ci);
		row->change_hi_pct = 100 * expm1(d->mean + d->ci);
		row->mde_pct = 100 * expm1(d->mde);
	} else if (mean_a > 0) {
		row->change_lo_pct = 100 * (d->mean - d->ci) / mean_a;
		row->change_hi_pct = 100 * (d->mean + d->ci) / mean_a;
		row->mde_pct = 100 * d->mde / mean_a;
	}
	row->half_width_pct = (row->change_hi_pct - row->change_lo_pct) / 2;
}

static void compare_point(struct comparison *c, struct comparison_row *row, double alpha,
			  enum pairing by_rep, double *ratio)
{
	const struct metric_sum *ma = &row->a->m[0], *mb = &row->b->m[0];
	c->ncommon++;
	if (ma->mean > 0 && mb->mean > 0) {
		row->change_pct = 100 * (mb->mean / ma->mean - 1);
		ratio[c->nratio++] = mb->mean / ma->mean;
	}
	row->d = point_difference(row->a, row->b, by_rep);
	row->w = (struct welch){ row->d.t, row->d.df, row->d.p, row->d.valid };
	change_in_pct(row, ma->mean);
	row->verdict = "n/a";
	if (!row->w.valid)
		return;
	row->verdict = row->w.p < alpha ? "yes" : "no";
	if (row->w.p < alpha) {
		c->nsig++;
		if (row->d.log_ratio ? row->d.mean > 0 : mb->mean > ma->mean)
			c->nup++;
		else
			c->ndown++;
	}
}

void compare_summaries(struct comparison *c, const struct summary *a, const struct summary *b,
		       double alpha, enum pairing by_rep)
{
	size_t cap = a->npoints + b->npoints + 1;
	double *ratio = xrealloc(NULL, cap * sizeof(double));

	memset(c, 0, sizeof(*c));
	c->rows = xrealloc(NULL, cap * sizeof(*c->rows));
	for (size_t i = 0; i < a->npoints + b->npoints; i++) {
		int in_a = i < a->npoints;
		const struct point *p = in_a ? &a->p[i] : &b->p[i - a->npoints];
		const struct point *other = summary_find(in_a ? b : a, p->key);
		if (!in_a && other)
			continue;       /* compared already, from A's side */
		struct comparison_row *row = &c->rows[c->nrows++];
		*row = (struct comparison_row){ .a = in_a ? p : NULL, .b = in_a ? other : p,
						.change_pct = NAN, .change_lo_pct = NAN,
						.change_hi_pct = NAN, .mde_pct = NAN,
						.half_width_pct = NAN,
						.d = { NAN, NAN, NAN, NAN, NAN, NAN, NAN, 0, 0, 0, 0 },
						.w = { NAN, NAN, NAN, 0 },
						.verdict = in_a ? "only in A" : "only in B" };
		if (row->a && row->b)
			compare_point(c, row, alpha, by_rep, ratio);
	}
	c->geomean = stats_geomean(ratio, c->nratio);
	free(ratio);
}

void compare_sittings(struct comparison *c, double sittings_pct)
{
	double bound = fabs(sittings_pct);
	for (size_t i = 0; i < c->nrows; i++) {
		struct comparison_row *r = &c->rows[i];
		if (strcmp(r->verdict, "yes") != 0 || !isfinite(r->change_lo_pct) ||
		    fabs(r->change_lo_pct) > bound || fabs(r->change_hi_pct) > bound)
			continue;
		r->verdict = "sittings";
		c->nsig--;
		c->nsittings++;
		if (r->b->m[0].mean > r->a->m[0].mean)
			c->nup--;
		else
			c->ndown--;
	}
}

void compare_relative(struct comparison *c, double y_pct, double y_lo_pct, double y_hi_pct)
{
	double y = 1 + y_pct / 100, hy = (y_hi_pct - y_lo_pct) / 200 / y;
	c->nsig = c->nup = c->ndown = 0;
	c->geomean /= y;
	for (size_t i = 0; i < c->nrows; i++) {
		struct comparison_row *r = &c->rows[i];
		if (!r->a || !r->b)
			continue;
		double ma = r->a->m[0].mean, mb = r->b->m[0].mean;
		r->w.t = r->w.p = r->d.mde = r->mde_pct = NAN;
		r->verdict = "n/a";
		if (!(ma > 0 && mb > 0) || !r->w.valid || !isfinite(r->d.ci)) {
			r->change_pct = r->change_lo_pct = r->change_hi_pct = NAN;
			continue;
		}
		double rb = mb / ma, h = hypot(r->d.ci / ma / rb, hy), rr = rb / y;
		r->change_pct = 100 * (rr - 1);
		r->change_lo_pct = 100 * (rr * (1 - h) - 1);
		r->change_hi_pct = 100 * (rr * (1 + h) - 1);
		int sig = r->change_lo_pct > 0 || r->change_hi_pct < 0;
		r->verdict = sig ? "yes" : "no";
		c->nsig += sig;
		c->nup += sig && rr > 1;
		c->ndown += sig && rr < 1;
	}
}

/* A column of value in every row, added to t. */
static void add_column(struct table *t, const char *name, const char *value)
{
	t->head = xrealloc(t->head, (t->ncols + 1) * sizeof(char *));
	t->head[t->ncols] = xstrdup(name);
	for (size_t r = 0; r < t->nrows; r++) {
		t->rows[r] = xrealloc(t->rows[r], (t->ncols + 1) * sizeof(char *));
		t->rows[r][t->ncols] = xstrdup(value);
	}
	t->ncols++;
}

/* The knob columns of from that to lacks, added to to as not varied. */
static void add_missing_knobs(struct table *to, const struct table *from)
{
	struct strlist dims = row_dimensions(from);
	for (size_t i = 0; i < dims.n; i++)
		if (row_is_knob(dims.v[i]) && table_col(to, dims.v[i]) < 0)
			add_column(to, dims.v[i], ROW_NOT_VARIED);
	strlist_free(&dims);
}

struct strlist comparison_keys(struct table *a, struct table *b)
{
	add_missing_knobs(a, b);
	add_missing_knobs(b, a);
	struct strlist keys = row_dimensions(a);
	size_t n = 0;
	for (size_t i = 0; i < keys.n; i++) {
		if (table_col(b, keys.v[i]) >= 0 || strcmp(keys.v[i], "backend") == 0 ||
		    strcmp(keys.v[i], "clients") == 0)
			keys.v[n++] = keys.v[i];
		else
			free(keys.v[i]);
	}
	keys.n = n;
	return keys;
}

/* ---- nothing in common ------------------------------------------------------------- */

static int has_value(const struct summary *s, size_t k, const char *v)
{
	for (size_t i = 0; i < s->npoints; i++)
		if (strcmp(s->p[i].key[k], v) == 0)
			return 1;
	return 0;
}

static void append(char **buf, size_t *len, const char *text)
{
	size_t add = strlen(text);
	*buf = xrealloc(*buf, *len + add + 1);
	memcpy(*buf + *len, text, add + 1);
	*len += add;
}

/* The distinct values of key k in s, in order: "a, b, c", the first few. */
static void append_values(char **buf, size_t *len, const struct summary *s, size_t k)
{
	enum { MAX_SHOWN = 6 };
	size_t shown = 0;
	for (size_t i = 0; i < s->npoints; i++) {
		size_t first = 0;
		while (strcmp(s->p[first].key[k], s->p[i].key[k]) != 0)
			first++;
		if (first < i)
			continue;
		if (shown == MAX_SHOWN) {
			append(buf, len, ", ...");
			return;
		}
		append(buf, len, shown++ ? ", " : "");
		append(buf, len, *s->p[i].key[k] ? s->p[i].key[k] : "(empty)");
	}
}

/* How the values of key k in a and b relate. */
enum { VALUES_SAME, VALUES_OVERLAP, VALUES_DISJOINT };

static int values_relation(const struct summary *a, const struct summary *b, size_t k)
{
	size_t a_in_b = 0, b_in_a = 0;
	for (size_t i = 0; i < a->npoints; i++)
		a_in_b += has_value(b, k, a->p[i].key[k]);
	for (size_t i = 0; i < b->npoints; i++)
		b_in_a += has_value(a, k, b->p[i].key[k]);
	if (a_in_b == 0)
		return VALUES_DISJOINT;
	return a_in_b == a->npoints && b_in_a == b->npoints ? VALUES_SAME : VALUES_OVERLAP;
}

/* The keys whose values relate so, "name (A: ...; B: ...)" each. */
static void append_keys(char **buf, size_t *len, const struct summary *a, const struct summary *b,
			int relation)
{
	for (size_t k = 0; k < a->keys.n; k++) {
		if (values_relation(a, b, k) != relation)
			continue;
		append(buf, len, *len ? "; " : "");
		append(buf, len, a->keys.v[k]);
		append(buf, len, " (A: ");
		append_values(buf, len, a, k);
		append(buf, len, "; B: ");
		append_values(buf, len, b, k);
		append(buf, len, ")");
	}
}

/* The keys with no value in common explain it; else those whose values
 * only overlap, in combinations none of which is in both. */
char *comparison_mismatch(const struct summary *a, const struct summary *b)
{
	char *buf = NULL;
	size_t len = 0;
	if (!a->npoints || !b->npoints)
		return NULL;
	for (size_t i = 0; i < a->npoints; i++)
		if (summary_find(b, a->p[i].key))
			return NULL;
	append_keys(&buf, &len, a, b, VALUES_DISJOINT);
	if (buf)
		return buf;
	append_keys(&buf, &len, a, b, VALUES_OVERLAP);
	append(&buf, &len, len ? ", in combinations none of which is in both" :
	       "no key alone: the same values in A and B, in combinations none of which is in both");
	return buf;
}

void comparison_free(struct comparison *c)
{
	free(c->rows);
	memset(c, 0, sizeof(*c));
}

/* ---- equivalence -------------------------------------------------------------------- */

int equiv_margin_parse(struct equiv_margin *m, const char *text, struct errbuf *err)
{
	char *end;
	m->value = strtod(text, &end);
	m->relative = *end == '%';
	if (end == text || *(end + m->relative) || !isfinite(m->value) || !(m->value > 0))
		return err_set(err, "'%s': want a margin above 0, in percent of the reference mean "
			       "(3%%) or in the figure's units (0.5)", text);
	return 0;
}

struct equiv_est equivalence_of(const struct diff_est *d, double ref, const struct equiv_margin *m,
				double alpha)
{
	if (!m->relative)
		return stats_equivalence(d, m->value, alpha);
	if (!(ref > 0) || !isfinite(ref))
		return (struct equiv_est){ EQUIV_NONE, NAN, NAN, NAN };
	struct equiv_est e = stats_equivalence(d, m->value * ref / 100, alpha);
	e.lo = 100 * e.lo / ref;
	e.hi = 100 * e.hi / ref;
	e.shown = 100 * e.shown / ref;
	return e;
}

void compare_equivalence(struct comparison *c, const struct equiv_margin *m, double alpha)
{
	for (size_t i = 0; i < c->nrows; i++) {
		struct comparison_row *r = &c->rows[i];
		r->eq = (struct equiv_est){ EQUIV_NONE, NAN, NAN, NAN };
		if (r->a && r->b && r->d.log_ratio && m->relative)
			r->eq = stats_equivalence_ratio(&r->d, m->value, alpha);
		else if (r->a && r->b && !r->d.log_ratio)
			r->eq = equivalence_of(&r->d, r->a->m[0].mean, m, alpha);
	}
}

/* The standard deviation of the logs of a point's runs (all above 0:
 * compare_ratio_check). */
static double sd_of_logs(const struct rep_values *rv)
{
	double *x = xrealloc(NULL, (rv->n ? rv->n : 1) * sizeof(double));
	for (size_t i = 0; i < rv->n; i++)
		x[i] = log(rv->v[i]);
	double sd = stats_sd_of(x, rv->n);
	free(x);
	return sd;
}

int compare_ratio_check(const struct summary *s, const char *name, struct errbuf *err)
{
	for (size_t i = 0; i < s->npoints; i++) {
		const struct rep_values *rv = &s->p[i].reps;
		for (size_t j = 0; j < rv->n; j++)
			if (!(rv->v[j] > 0))
				return err_set(err, "%s:%zu: %s %g: --ratio takes the ratio of runs above 0; "
					       "leave out --ratio for this figure", name, rv->line[j],
					       s->metrics.v[0], rv->v[j]);
	}
	return 0;
}

void compare_resolve(struct comparison *c, const struct equiv_margin *effect)
{
	for (size_t i = 0; i < c->nrows; i++) {
		struct comparison_row *r = &c->rows[i];
		r->runs_to_resolve = 0;
		if (!r->a || !r->b || r->a->m[0].n < 2 || r->b->m[0].n < 2)
			continue;
		double sd_a = r->a->m[0].sd, sd_b = r->b->m[0].sd;
		double size = effect->relative ? effect->value * r->a->m[0].mean / 100 : effect->value;
		if (r->d.log_ratio) {
			/* the runs' logs; a rise of EFFECT%, the smaller of it and a fall in log */
			sd_a = sd_of_logs(&r->a->reps);
			sd_b = sd_of_logs(&r->b->reps);
			size = effect->relative ? log1p(effect->value / 100) : NAN;
		}
		r->runs_to_resolve = stats_runs_to_resolve(sd_a, sd_b, size, SUMMARY_CONF,
							   STATS_MDE_POWER, COMPARE_RESOLVE_MAX);
	}
}

void layers_equivalence(struct layer_row *rows, size_t n, const struct equiv_margin *m)
{
	for (size_t i = 0; i < n; i++) {
		struct layer_row *r = &rows[i];
		r->eq = (struct equiv_est){ EQUIV_NONE, NAN, NAN, NAN };
		if (r->b)
			r->eq = equivalence_of(&r->d, r->bottom, m, 1 - SUMMARY_CONF);
	}
}

/* ---- verdict ------------------------------------------------------------------------ */

int verdict_rule_parse(struct verdict_rule *r, const char *text, struct errbuf *err)
{
	size_t flen = strcspn(text, "<>");
	char *end;
	memset(r, 0, sizeof(*r));
	if (flen == 0 || !text[flen])
		return err_set(err, "'%s': want FIGURE<THRESHOLD or FIGURE>THRESHOLD, e.g. 'mb_per_sec<-3%%'",
			       text);
	r->below = text[flen] == '<';
	r->threshold = strtod(text + flen + 1, &end);
	r->relative = *end == '%';
	if (end == text + flen + 1 || *(end + r->relative) || !isfinite(r->threshold))
		return err_set(err, "'%s': the threshold '%s' is not a number (or a percentage: -3%%)",
			       text, text + flen + 1);
	r->figure = xrealloc(NULL, flen + 1);
	memcpy(r->figure, text, flen);
	r->figure[flen] = '\0';
	return 0;
}

void verdict_rule_free(struct verdict_rule *r)
{
	free(r->figure);
	memset(r, 0, sizeof(*r));
}

enum verdict verdict_of(const struct comparison_row *row, const struct verdict_rule *r,
			double *lo, double *hi)
{
	*lo = *hi = NAN;
	if (!row->a || !row->b || !row->d.valid)
		return VERDICT_UNSURE;
	if (r->relative) {
		*lo = row->change_lo_pct;
		*hi = row->change_hi_pct;
	} else {
		*lo = row->d.mean - row->d.ci;
		*hi = row->d.mean + row->d.ci;
	}
	if (!isfinite(*lo) || !isfinite(*hi))
		return VERDICT_UNSURE;
	/* '<': beyond is below the threshold; '>': above it. */
	double beyond_lo = r->below ? -*hi : *lo, beyond_hi = r->below ? -*lo : *hi;
	double t = r->below ? -r->threshold : r->threshold;
	if (beyond_lo > t)
		return VERDICT_BAD;
	if (beyond_hi < t)
		return VERDICT_GOOD;
	return VERDICT_UNSURE;
}
