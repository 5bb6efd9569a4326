/* Points, summaries and costs (decompositions too); see stats_summary.h.
 * Comparisons and verdicts are stats_compare.c's. */
#include "config.h"
#include "stats_summary.h"
#include "stats_row.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void summary_free(struct summary *s)
{
	for (size_t i = 0; i < s->npoints; i++) {
		struct point *p = &s->p[i];
		strv_free(p->key, s->keys.n);
		strv_free(p->carry, s->carry.n);
		free(p->m);
		free(p->rank);
		strv_free(p->reps.rep, p->reps.n);
		strv_free(p->reps.sitting, p->reps.n);
		free(p->reps.v);
		free(p->reps.line);
	}
	free(s->p);
	strlist_free(&s->keys);
	strlist_free(&s->carry);
	strlist_free(&s->metrics);
	memset(s, 0, sizeof(*s));
}

const struct point *summary_find(const struct summary *s, char *const *key)
{
	for (size_t i = 0; i < s->npoints; i++) {
		size_t k = 0;
		while (k < s->keys.n && strcmp(s->p[i].key[k], key[k]) == 0)
			k++;
		if (k == s->keys.n)
			return &s->p[i];
	}
	return NULL;
}

/* The names of l that are columns of t, into *names, their indices into
 * cols; a missing one is an error when required, else left out. */
static int pick_cols(const struct table *t, const struct strlist *l, int required,
		     struct strlist *names, int **cols, struct errbuf *err)
{
	names->n = 0;
	names->v = xrealloc(NULL, (l->n ? l->n : 1) * sizeof(char *));
	*cols = xrealloc(NULL, (l->n ? l->n : 1) * sizeof(int));
	for (size_t i = 0; i < l->n; i++) {
		int c = table_col(t, l->v[i]);
		if (c < 0 && required)
			return err_set(err, "%s: no column '%s'", t->name, l->v[i]);
		if (c < 0)
			continue;
		(*cols)[names->n] = c;
		names->v[names->n++] = xstrdup(l->v[i]);
	}
	return 0;
}

/* ---- grouping runs -------------------------------------------------------- */

static size_t first_row_with(const struct table *t, int col, const char *v)
{
	for (size_t r = 0; r < t->nrows; r++)
		if (strcmp(t->rows[r][col], v) == 0)
			return r;
	return t->nrows;
}

/* The index of row r's point, a new point if its keys are new. */
static size_t point_of(struct summary *s, const struct table *t, size_t r, const int *kc)
{
	char **row = t->rows[r];
	for (size_t i = 0; i < s->npoints; i++) {
		size_t k = 0;
		while (k < s->keys.n && strcmp(s->p[i].key[k], row[kc[k]]) == 0)
			k++;
		if (k == s->keys.n)
			return i;
	}
	s->p = xrealloc(s->p, (s->npoints + 1) * sizeof(*s->p));
	struct point *p = &s->p[s->npoints];
	memset(p, 0, sizeof(*p));
	p->key = xrealloc(NULL, (s->keys.n ? s->keys.n : 1) * sizeof(char *));
	p->rank = xrealloc(NULL, (s->keys.n ? s->keys.n : 1) * sizeof(size_t));
	for (size_t k = 0; k < s->keys.n; k++) {
		p->key[k] = xstrdup(row[kc[k]]);
		p->rank[k] = first_row_with(t, kc[k], row[kc[k]]);
	}
	p->carry = xrealloc(NULL, (s->carry.n ? s->carry.n : 1) * sizeof(char *));
	for (size_t c = 0; c < s->carry.n; c++)
		p->carry[c] = NULL;
	p->m = xrealloc(NULL, (s->metrics.n ? s->metrics.n : 1) * sizeof(*p->m));
	return s->npoints++;
}

/* A carried column's value over the ok rows: the common one, or "mixed". */
static void carry_value(char **slot, const char *v)
{
	if (!*slot) {
		*slot = xstrdup(v);
	} else if (strcmp(*slot, v) != 0) {
		free(*slot);
		*slot = xstrdup("mixed");
	}
}

static int cmp_points(const void *pa, const void *pb, void *ctx)
{
	const struct point *a = pa, *b = pb;
	size_t nkeys = *(const size_t *)ctx;
	for (size_t k = 0; k < nkeys; k++) {
		double x = csv_num(a->key[k]), y = csv_num(b->key[k]);
		if (!isnan(x) && !isnan(y) && x != y)
			return (x > y) - (x < y);
		if (isnan(x) || isnan(y)) {
			if (a->rank[k] != b->rank[k])
				return (a->rank[k] > b->rank[k]) - (a->rank[k] < b->rank[k]);
			int r = strcmp(a->key[k], b->key[k]);
			if (r)
				return r;
		}
	}
	return 0;
}

/* The summary of n runs from their level_estimate. */
static struct metric_sum metric_of(const struct level_est *e, size_t n)
{
	struct metric_sum m;
	m.n = n;
	m.mean = e->mean;
	m.sd = e->sd_runs;
	m.ci = e->ci;
	m.level = e->level;
	m.n_blocks = e->n_blocks;
	m.ci_runs = e->ci_runs;
	m.n_level = e->n;
	m.sd_level = e->sd;
	return m;
}

/* How a row counts: a run whose status is not ok failed; an ok run judged
 * disturbed (its "disturbed" cell) is left out too, counted apart. */
enum row_kind { ROW_OK, ROW_FAILED, ROW_DISTURBED };

static enum row_kind kind_of(const struct table *t, size_t r, int status, int disturbed)
{
	if (status >= 0 && strcmp(t->rows[r][status], "ok") != 0)
		return ROW_FAILED;
	return disturbed >= 0 && row_disturbed(t->rows[r][disturbed]) ? ROW_DISTURBED : ROW_OK;
}

/* Where in time row r of t ran: its rep, or without one its row. */
static double order_of(const struct table *t, size_t r, int rep)
{
	double v = rep >= 0 ? csv_num(t->rows[r][rep]) : NAN;
	return isfinite(v) ? v : (double)r;
}

/* The runs of a point's metric (column col), its ok rows row[0..nrows-1],
 * into runs: how many have the figure. */
static size_t point_runs(struct block_run *runs, const struct table *t, const size_t *row,
			 size_t nrows, int col)
{
	int rep = table_col(t, "rep"), sitting = table_col(t, "sitting");
	size_t n = 0;
	for (size_t i = 0; i < nrows; i++) {
		size_t r = row[i];
		double v = csv_num(t->rows[r][col]);
		if (!isnan(v))
			runs[n++] = (struct block_run){ v, order_of(t, r, rep),
							sitting >= 0 ? t->rows[r][sitting] : NULL };
	}
	return n;
}

/* Every metric of every point, from the ok rows; rowpoint[r] is row r's
 * point. Each interval at the level its runs call for (level_estimate). */
static void sum_metrics(struct summary *s, const struct table *t, const size_t *rowpoint,
			const int *mc, const enum row_kind *kind, size_t block_reps)
{
	size_t cap = t->nrows ? t->nrows : 1;
	struct block_run *runs = xrealloc(NULL, cap * sizeof(*runs));
	size_t *row = xrealloc(NULL, cap * sizeof(size_t));
	for (size_t p = 0; p < s->npoints; p++) {
		size_t nrows = 0;
		for (size_t r = 0; r < t->nrows; r++)
			if (kind[r] == ROW_OK && rowpoint[r] == p)
				row[nrows++] = r;
		for (size_t m = 0; m < s->metrics.n; m++) {
			size_t n = point_runs(runs, t, row, nrows, mc[m]);
			struct level_est e = level_estimate(runs, n, block_reps, SUMMARY_CONF);
			s->p[p].m[m] = metric_of(&e, n);
		}
	}
	free(runs);
	free(row);
}

/* The first metric of every run the means count, with its rep, into its
 * point's reps. */
static void collect_reps(struct summary *s, const struct table *t, const size_t *rowpoint,
			 int metric, const enum row_kind *kind, size_t block_reps)
{
	for (size_t p = 0; p < s->npoints; p++)
		s->p[p].reps.block_reps = block_reps;
	int rep = table_col(t, "rep"), sitting = table_col(t, "sitting");
	if (rep < 0 || metric < 0)
		return;
	for (size_t r = 0; r < t->nrows; r++) {
		double v = csv_num(t->rows[r][metric]);
		if (kind[r] != ROW_OK || isnan(v))
			continue;
		struct rep_values *rv = &s->p[rowpoint[r]].reps;
		rv->rep = xrealloc(rv->rep, (rv->n + 1) * sizeof(char *));
		rv->sitting = xrealloc(rv->sitting, (rv->n + 1) * sizeof(char *));
		rv->v = xrealloc(rv->v, (rv->n + 1) * sizeof(double));
		rv->line = xrealloc(rv->line, (rv->n + 1) * sizeof(size_t));
		rv->line[rv->n] = t->line[r];
		rv->rep[rv->n] = xstrdup(t->rows[r][rep]);
		rv->sitting[rv->n] = xstrdup(sitting >= 0 ? t->rows[r][sitting] : "");
		rv->v[rv->n++] = v;
	}
}

/* A cell strtod reads whole as nan or inf: a figure no run can have
 * (an empty cell is a figure the run lacks). */
static bool non_finite(const char *cell)
{
	char *end;
	double v = strtod(cell, &end);

	return end != cell && !*end && !isfinite(v);
}

static int bad_cell(const struct table *t, size_t r, int col, const char *why, struct errbuf *err)
{
	return err_set(err, "%s:%zu: column %d (%s): '%s' %s: fix or drop that row", t->name,
		       t->line[r], col + 1, t->head[col], t->rows[r][col], why);
}

/* What no run of a sweep writes: clients not a whole number above 0, a
 * figure nan or inf. Refused, named, rather than summarized into nonsense. */
static int check_runs(const struct table *t, const int *mc, size_t nm, int status,
		      struct errbuf *err)
{
	int clients = table_col(t, "clients");

	for (size_t r = 0; r < t->nrows; r++) {
		const char *cell = clients >= 0 ? t->rows[r][clients] : "1";
		bool failed = status >= 0 && strcmp(t->rows[r][status], "ok") != 0;
		double n = csv_num(cell);
		if ((*cell || !failed) && (!(n >= 1) || n != floor(n)))   /* a failed run may lack it */
			return bad_cell(t, r, clients, "is not a number of clients (a whole number "
					"above 0)", err);
		for (size_t m = 0; m < nm; m++)
			if (non_finite(t->rows[r][mc[m]]))
				return bad_cell(t, r, mc[m], "is not a finite number", err);
	}
	return 0;
}

int summarize_runs(struct summary *s, const struct table *runs, const struct strlist *keys,
		   const struct strlist *metrics, const struct strlist *carry, unsigned flags,
		   struct errbuf *err)
{
	int *kc = NULL, *mc = NULL, *cc = NULL, rc = -1;
	int status = table_col(runs, "status");
	int disturbed = flags & SUMMARY_KEEP_DISTURBED ? -1 : table_col(runs, "disturbed");
	size_t *rowpoint = xrealloc(NULL, (runs->nrows ? runs->nrows : 1) * sizeof(size_t));
	enum row_kind *kind = xrealloc(NULL, (runs->nrows ? runs->nrows : 1) * sizeof(*kind));

	memset(s, 0, sizeof(*s));
	if (pick_cols(runs, keys, 1, &s->keys, &kc, err) < 0 ||
	    pick_cols(runs, metrics, 0, &s->metrics, &mc, err) < 0 ||
	    pick_cols(runs, carry, 0, &s->carry, &cc, err) < 0 ||
	    check_runs(runs, mc, s->metrics.n, status, err) < 0)
		goto out;
	for (size_t r = 0; r < runs->nrows; r++) {
		rowpoint[r] = point_of(s, runs, r, kc);
		struct point *p = &s->p[rowpoint[r]];
		kind[r] = kind_of(runs, r, status, disturbed);
		p->n_failed += kind[r] == ROW_FAILED;
		p->n_disturbed += kind[r] == ROW_DISTURBED;
		if (kind[r] != ROW_OK)
			continue;
		p->n_ok++;
		for (size_t c = 0; c < s->carry.n; c++)
			carry_value(&p->carry[c], runs->rows[r][cc[c]]);
	}
	for (size_t i = 0; i < s->npoints; i++)
		for (size_t c = 0; c < s->carry.n; c++)
			if (!s->p[i].carry[c])
				s->p[i].carry[c] = xstrdup("");
	sum_metrics(s, runs, rowpoint, mc, kind, SUMMARY_BLOCK_REPS_OF(flags));
	collect_reps(s, runs, rowpoint, s->metrics.n ? mc[0] : -1, kind,
		     SUMMARY_BLOCK_REPS_OF(flags));
	if (s->npoints > 1)
		qsort_r(s->p, s->npoints, sizeof(*s->p), cmp_points, &s->keys.n);
	rc = 0;
out:
	if (rc < 0)
		summary_free(s);
	free(rowpoint);
	free(kind);
	free(kc);
	free(mc);
	free(cc);
	return rc;
}

/* ---- a summary read back ---------------------------------------------------- */

/* A count cell: a non-negative whole number, else 0. */
static size_t count_of(const char *s)
{
	double v = csv_num(s);
	return v >= 0 && v < 1e15 ? (size_t)v : 0;
}

/* metric's _mean, _sd, _ci95 into mc[0..2], required; its _ci95_level
 * into mc[3], -1 when there is none (a summary older than levels). */
static int metric_cols(const struct table *t, const char *metric, int mc[4], struct errbuf *err)
{
	static const char *const suffix[] = { "_mean", "_sd", "_ci95" };
	char name[256];
	snprintf(name, sizeof(name), "%s_ci95_level", metric);
	mc[3] = table_col(t, name);
	for (int i = 0; i < 3; i++) {
		snprintf(name, sizeof(name), "%s%s", metric, suffix[i]);
		if ((mc[i] = table_col(t, name)) < 0)
			return err_set(err, "%s: no column '%s'", t->name, name);
	}
	return 0;
}

/* The level of a summary's interval, where it says one: its sample (the
 * blocks) and that sample's sd, had back from the half-width. */
static void level_from_row(struct metric_sum *m, char **row, int level, int blocks)
{
	m->n_level = m->n;
	m->sd_level = m->sd;
	m->ci_runs = m->ci;
	m->n_blocks = blocks >= 0 ? count_of(row[blocks]) : 1;
	int l = level >= 0 ? level_named(row[level]) : -1;
	if (l <= LEVEL_RUN || m->n_blocks < 2 || !isfinite(m->ci))
		return;
	m->level = (enum ci_level)l;
	m->n_level = m->n_blocks;
	m->sd_level = m->ci * sqrt((double)m->n_blocks) /
		stats_t_quantile((1 + SUMMARY_CONF) / 2, (double)(m->n_blocks - 1));
	m->ci_runs = NAN;       /* not read back: the summary's _ci95_runs */
}

static void point_from_row(struct point *p, const struct table *t, size_t r, const int *kc,
			   size_t nkeys, const int nfc[3], const int mc[4])
{
	char **row = t->rows[r];
	memset(p, 0, sizeof(*p));
	p->key = xrealloc(NULL, (nkeys ? nkeys : 1) * sizeof(char *));
	p->rank = xrealloc(NULL, (nkeys ? nkeys : 1) * sizeof(size_t));
	for (size_t k = 0; k < nkeys; k++) {
		p->key[k] = xstrdup(row[kc[k]]);
		p->rank[k] = r;
	}
	p->n_ok = count_of(row[nfc[0]]);
	p->n_failed = nfc[1] >= 0 ? count_of(row[nfc[1]]) : 0;
	p->n_disturbed = nfc[2] >= 0 ? count_of(row[nfc[2]]) : 0;
	p->m = xrealloc(NULL, sizeof(*p->m));
	p->m[0] = (struct metric_sum){ .n = p->n_ok, .mean = csv_num(row[mc[0]]),
				       .sd = csv_num(row[mc[1]]), .ci = csv_num(row[mc[2]]) };
	/* n counts the ok runs; a figure some of them lack (a run that ended
	 * before its cost was read) has fewer values: none without a mean,
	 * one without a standard deviation (summarize writes it from 2). */
	if (isnan(p->m[0].mean))
		p->m[0].n = 0;
	else if (isnan(p->m[0].sd) && p->n_ok >= 2)
		p->m[0].n = 1;
	level_from_row(&p->m[0], row, mc[3], table_col(t, "n_blocks"));
}

int summary_read_back(struct summary *s, const struct table *t, const struct strlist *keys,
		      const char *metric, struct errbuf *err)
{
	int *kc = NULL, mc[4], rc = -1;
	int nfc[3] = { table_col(t, "n"), table_col(t, "n_failed"), table_col(t, "n_disturbed") };

	memset(s, 0, sizeof(*s));
	s->metrics = strlist_split(metric);
	if (pick_cols(t, keys, 1, &s->keys, &kc, err) < 0 || metric_cols(t, metric, mc, err) < 0)
		goto out;
	if (nfc[0] < 0) {
		err_set(err, "%s: no column 'n'", t->name);
		goto out;
	}
	s->p = xrealloc(NULL, (t->nrows ? t->nrows : 1) * sizeof(*s->p));
	for (size_t r = 0; r < t->nrows; r++) {
		point_from_row(&s->p[r], t, r, kc, s->keys.n, nfc, mc);
		s->npoints++;
	}
	rc = 0;
out:
	if (rc < 0)
		summary_free(s);
	free(kc);
	return rc;
}

int summarize_any(struct summary *s, const struct table *t, const struct strlist *keys,
		  const char *metric, unsigned flags, struct errbuf *err)
{
	char mean[256];
	snprintf(mean, sizeof(mean), "%s_mean", metric);
	if (table_col(t, mean) >= 0)
		return summary_read_back(s, t, keys, metric, err);
	if (table_col(t, metric) < 0) {
		memset(s, 0, sizeof(*s));
		return err_set(err, "%s: neither a '%s' nor a '%s' column", t->name, metric, mean);
	}
	struct strlist metrics = strlist_split(metric), none = { 0, NULL };
	int rc = summarize_runs(s, t, keys, &metrics, &none, flags, err);
	strlist_free(&metrics);
	return rc;
}

/* ---- cost ------------------------------------------------------------------------- */

/* How many of the dimensions after backend and clients two points share. */
static size_t shared_dims(const struct summary *s, const struct point *a, const struct point *b)
{
	size_t n = 0;
	for (size_t k = 2; k < s->keys.n; k++)
		n += strcmp(a->key[k], b->key[k]) == 0;
	return n;
}

/* The baseline's point at p's client count that shares the most of p's
 * other dimensions (the first of equals): nop has no offloads ("n/a"), so
 * the nearest point stands in. */
static const struct point *baseline_of(const struct summary *s, const struct point *p,
				       const char *baseline)
{
	const struct point *best = NULL;
	size_t best_shared = 0;
	for (size_t i = 0; i < s->npoints; i++) {
		const struct point *c = &s->p[i];
		if (strcmp(c->key[0], baseline) || strcmp(c->key[1], p->key[1]) || !(c->m[0].mean > 0))
			continue;
		size_t shared = shared_dims(s, c, p);
		if (!best || shared > best_shared) {
			best = c;
			best_shared = shared;
		}
	}
	return best;
}

size_t cost_rows(struct cost_row **rows, const struct summary *s, const char *baseline)
{
	size_t n = 0;
	*rows = xrealloc(NULL, (s->npoints ? s->npoints : 1) * sizeof(**rows));
	if (s->keys.n < 2)
		return 0;
	for (size_t i = 0; i < s->npoints; i++) {
		const struct point *p = &s->p[i], *base;
		if (strcmp(p->key[0], baseline) == 0 || !(p->m[0].mean > 0) ||
		    !(base = baseline_of(s, p, baseline)))
			continue;
		double ob = p->m[0].mean, on = base->m[0].mean;
		/* d(1e6/x) = 1e6 dx / x^2; a baseline without an interval adds nothing. */
		double eb = isfinite(p->m[0].ci) ? 1e6 * p->m[0].ci / (ob * ob) : NAN;
		double en = isfinite(base->m[0].ci) ? 1e6 * base->m[0].ci / (on * on) : 0;
		(*rows)[n++] = (struct cost_row){ p, base, 1e6 / ob - 1e6 / on, sqrt(eb * eb + en * en) };
	}
	return n;
}

/* ---- decomposition ---------------------------------------------------------------- */

/* The index of the key called by the len characters of name, or keys.n. */
static size_t key_named(const struct summary *s, const char *name, size_t len)
{
	size_t k = 0;
	while (k < s->keys.n && (strlen(s->keys.v[k]) != len || strncmp(s->keys.v[k], name, len) != 0))
		k++;
	return k;
}

/* Whether p has the setting of a level: the whole of it as p's offload
 * ("tcp:off", "tcp:tso=on:gso=off"), else each of its ':'-separated
 * NAME=VALUE parts as p's dimension NAME ("tcp:mtu=1500:offload=on"); a
 * part without '=' is an offload. */
static int has_setting(const struct summary *s, const struct point *p, const char *setting)
{
	size_t offload = key_named(s, "offload", strlen("offload"));
	if (offload < s->keys.n && strcmp(p->key[offload], setting) == 0)
		return 1;
	for (const char *part = setting; *part;) {
		size_t len = strcspn(part, ":");
		const char *eq = memchr(part, '=', len);
		size_t k = eq ? key_named(s, part, (size_t)(eq - part)) : offload;
		const char *value = eq ? eq + 1 : part;
		size_t vlen = len - (size_t)(value - part);
		if (k == s->keys.n || strlen(p->key[k]) != vlen || strncmp(p->key[k], value, vlen) != 0)
			return 0;
		part += len + (part[len] == ':');
	}
	return 1;
}

/* The point of level "backend[:setting]" at a client count: the first with
 * that setting (see has_setting), or without one the first of the backend. */
static const struct point *level_point(const struct summary *s, const char *level, const char *clients)
{
	const char *colon = strchr(level, ':');
	size_t blen = colon ? (size_t)(colon - level) : strlen(level);
	for (size_t i = 0; i < s->npoints; i++) {
		const struct point *p = &s->p[i];
		if (strlen(p->key[0]) != blen || strncmp(p->key[0], level, blen) != 0 ||
		    strcmp(p->key[1], clients) != 0 || p->m[0].n == 0 || !isfinite(p->m[0].mean))
			continue;
		if (!colon || has_setting(s, p, colon + 1))
			return p;
	}
	return NULL;
}

/* The layer's name and label: the model's where the step is one of its
 * own, else made of the levels and what their difference is. */
static void name_layer(struct layer_row *r, const struct decomp_model *m)
{
	const struct model_step *step = model_step_of(m, r->subtrahend, r->minuend);
	r->relation = model_relation(m, r->subtrahend, r->minuend);
	if (step) {
		r->name = xstrdup(step->name);
		r->label = xstrdup(step->label);
		return;
	}
	char name[256], label[512];
	const char *sep = *r->subtrahend ? "-" : "";
	snprintf(name, sizeof(name), "%s%s%s", r->minuend, sep, r->subtrahend);
	if (r->relation == REL_PATHS)
		model_paths_label(m, r->subtrahend, r->minuend, label, sizeof(label));
	else
		snprintf(label, sizeof(label), "%s%s%s", r->minuend, *sep ? " − " : "", r->subtrahend);
	r->name = xstrdup(name);
	r->label = xstrdup(label);
}

/* The difference of two points' means with its interval: paired by rep
 * where the runs pair up (rep_differences: the reps both levels ran), else
 * Welch's (point_difference); a lone first level has its own Student-t
 * interval. */
static void layer_stats(struct layer_row *r)
{
	const struct metric_sum *a = &r->a->m[0];
	if (!r->b) {
		r->mean = a->mean;
		r->ci = a->ci;
		r->df = a->n_level > 1 ? (double)(a->n_level - 1) : NAN;
		r->d = (struct diff_est){ a->mean, NAN, r->df, a->ci, NAN, NAN, NAN, 0, a->n_level > 1,
					  (int)a->level, 0 };
		r->bottom = 0;
		r->top = a->mean;
		return;
	}
	const struct metric_sum *b = &r->b->m[0];
	r->d = point_difference(r->b, r->a, 1);
	/* Paired over the reps both ran, the layer is the mean of their
	 * differences; else (and with the same reps, equally) of the means. */
	r->mean = r->d.pairs ? r->d.mean : a->mean - b->mean;
	r->bottom = b->mean;
	r->top = a->mean;
	r->ci = r->d.ci;
	r->df = r->d.df;
}

/* A new row of *rows, zeroed. */
static struct layer_row *new_row(struct layer_row **rows, size_t *n, size_t *cap)
{
	if (*n == *cap) {
		*cap = *cap ? 2 * *cap : 16;
		*rows = xrealloc(*rows, *cap * sizeof(**rows));
	}
	struct layer_row *r = &(*rows)[(*n)++];
	memset(r, 0, sizeof(*r));
	return r;
}

/* The row of level upper minus level lower (lower's point b, NULL alone). */
static void add_layer(struct layer_row *r, const char *clients, const char *upper,
		      const struct point *a, const char *lower, const struct point *b,
		      const struct decomp_model *m)
{
	r->clients = clients;
	r->minuend = upper;
	r->subtrahend = lower;
	r->a = a;
	r->b = b;
	name_layer(r, m);
	layer_stats(r);
}

/* The levels present at a client count, each minus the one present below it. */
static void chain_at(struct layer_row **rows, size_t *n, size_t *cap, const struct summary *s,
		     const char *clients, char *const *levels, size_t nlevels,
		     const struct decomp_model *m)
{
	const struct point *prev = NULL;
	const char *prev_level = "";
	for (size_t l = 0; l < nlevels; l++) {
		const struct point *p = level_point(s, levels[l], clients);
		if (!p)
			continue;
		add_layer(new_row(rows, n, cap), clients, levels[l], p, prev_level, prev, m);
		prev = p;
		prev_level = levels[l];
	}
}

/* Whether point i is the first of its client count. */
static int first_of_count(const struct summary *s, size_t i)
{
	size_t seen = 0;
	while (seen < i && strcmp(s->p[seen].key[1], s->p[i].key[1]) != 0)
		seen++;
	return seen == i;
}

size_t decompose(struct layer_row **rows, const struct summary *s, const struct strlist *levels,
		 const struct decomp_model *m)
{
	size_t n = 0, cap = 0;
	*rows = NULL;
	for (size_t i = 0; s->keys.n >= 2 && i < s->npoints; i++)
		if (first_of_count(s, i))
			chain_at(rows, &n, &cap, s, s->p[i].key[1], levels->v, levels->n, m);
	return n;
}

/* Each step of the model off the stack whose two levels are at the count. */
/* A level's point for a pair of different paths: like with like where
 * the sweep has it, i.e. a backend that drops reply bodies in the kernel
 * at copy_replies=on (tbench --copy-replies), as the other side copies
 * them; else the level's first point. *copied: set when so. */
static const struct point *paths_point(const struct summary *s, const char *level,
				       const char *clients, const struct decomp_model *m, bool *copied)
{
	char like[256];
	const struct point *p = NULL;
	if (model_drops_replies(m, level) &&
	    snprintf(like, sizeof(like), "%s:copy_replies=on", level) < (int)sizeof(like))
		p = level_point(s, like, clients);
	*copied = *copied || p;
	return p ? p : level_point(s, level, clients);
}

static void pairs_at(struct layer_row **rows, size_t *n, size_t *cap, const struct summary *s,
		     const char *clients, const struct decomp_model *m)
{
	for (size_t k = 0; k < m->n; k++) {
		const struct model_step *st = &m->step[k];
		if (st->kind == STEP_STACK)
			continue;
		bool copied = false, paths = st->kind == STEP_PATHS;
		const struct point *a = paths ? paths_point(s, st->upper, clients, m, &copied)
					      : level_point(s, st->upper, clients);
		const struct point *b = paths ? paths_point(s, st->lower, clients, m, &copied)
					      : level_point(s, st->lower, clients);
		if (!a || !b)
			continue;
		struct layer_row *r = new_row(rows, n, cap);
		add_layer(r, clients, st->upper, a, st->lower, b, m);
		if (copied && model_drops_replies(m, st->upper) != model_drops_replies(m, st->lower)) {
			char label[512];
			model_paths_label_copied(m, st->lower, st->upper, label, sizeof(label));
			free(r->label);
			r->label = xstrdup(label);
		}
	}
}

size_t decompose_model(struct layer_row **rows, const struct summary *s,
		       const struct decomp_model *m)
{
	/* the stack's levels as the model holds them: the rows point at them */
	char **stack = xrealloc(NULL, (m->n ? m->n : 1) * sizeof(char *));
	size_t nstack = 0, n = 0, cap = 0;
	while (nstack < m->n && m->step[nstack].kind == STEP_STACK) {
		stack[nstack] = m->step[nstack].upper;
		nstack++;
	}
	*rows = NULL;
	for (size_t i = 0; s->keys.n >= 2 && i < s->npoints; i++) {
		if (!first_of_count(s, i))
			continue;
		chain_at(rows, &n, &cap, s, s->p[i].key[1], stack, nstack, m);
		pairs_at(rows, &n, &cap, s, s->p[i].key[1], m);
	}
	free(stack);
	return n;
}

void layer_rows_free(struct layer_row *rows, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(rows[i].name);
		free(rows[i].label);
	}
	free(rows);
}
