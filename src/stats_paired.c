/* Medians over repetitions and paired comparisons; see stats_paired.h. */
#include "config.h"
#include "stats_paired.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* The columns of a spec, found in the table once. */
struct cols {
	int figure, variant, pair_by, per;
	int *key, *where, *positive;
	const char **where_value;   /* points into spec.where's strings */
};

static int column(const struct table *t, const char *name, const char *what, struct errbuf *err)
{
	int c = table_col(t, name);
	if (c < 0)
		err_set(err, "%s: no column '%s' (%s)", t->name, name, what);
	return c;
}

static void cols_free(struct cols *c)
{
	free(c->key);
	free(c->where);
	free(c->positive);
	free(c->where_value);
}

static int find_cols(struct cols *c, const struct table *t, const struct paired_spec *s,
		     struct errbuf *err)
{
	*c = (struct cols){ .variant = -1, .per = -1 };
	c->key = xrealloc(NULL, (s->keys.n + 1) * sizeof(int));
	c->where = xrealloc(NULL, (s->where.n + 1) * sizeof(int));
	c->where_value = xrealloc(NULL, (s->where.n + 1) * sizeof(char *));
	c->positive = xrealloc(NULL, (s->positive.n + 1) * sizeof(int));
	if ((c->figure = column(t, s->figure, "the figure", err)) < 0 ||
	    (c->pair_by = column(t, s->pair_by, "pair-by", err)) < 0 ||
	    (s->variant && (c->variant = column(t, s->variant, "the variant", err)) < 0) ||
	    (s->per && (c->per = column(t, s->per, "per", err)) < 0))
		return -1;
	for (size_t k = 0; k < s->keys.n; k++)
		if ((c->key[k] = column(t, s->keys.v[k], "a key", err)) < 0)
			return -1;
	for (size_t k = 0; k < s->positive.n; k++)
		if ((c->positive[k] = column(t, s->positive.v[k], "positive", err)) < 0)
			return -1;
	for (size_t k = 0; k < s->where.n; k++) {
		const char *eq = strchr(s->where.v[k], '=');
		if (!eq || eq == s->where.v[k])
			return err_set(err, "where: NAME=VALUE, not '%s'", s->where.v[k]);
		char *name = xstrdup(s->where.v[k]);
		name[eq - s->where.v[k]] = '\0';
		c->where[k] = column(t, name, "where", err);
		free(name);
		if (c->where[k] < 0)
			return -1;
		c->where_value[k] = eq + 1;
	}
	return 0;
}

/* The figure of row r, NaN when the run does not count. */
static double run_value(char **row, const struct cols *c, const struct paired_spec *s)
{
	for (size_t k = 0; k < s->where.n; k++)
		if (strcmp(row[c->where[k]], c->where_value[k]) != 0)
			return NAN;
	for (size_t k = 0; k < s->positive.n; k++)
		if (!(csv_num(row[c->positive[k]]) > 0))
			return NAN;
	double v = csv_num(row[c->figure]);
	if (c->per >= 0)
		v = v * 1e6 / (csv_num(row[c->per]) * s->per_scale);
	return v;
}

/* The name a variant counts as: its alias VALUE=NAME, else itself. */
static const char *variant_of(const char *v, const struct paired_spec *s)
{
	size_t len = strlen(v);
	for (size_t i = 0; i < s->alias.n; i++)
		if (strncmp(s->alias.v[i], v, len) == 0 && s->alias.v[i][len] == '=')
			return s->alias.v[i] + len + 1;
	return v;
}

/* ---- order: key by key, numbers numerically, other values as they first appear */

/* Where value v of key k (k == nkeys: the variant) first appeared: the
 * index of the first group that has it, that group being g[n] if none. */
static size_t first_seen(const struct paired_group *g, size_t n, size_t k, size_t nkeys,
			 const char *v)
{
	for (size_t i = 0; i < n; i++)
		if (strcmp(k < nkeys ? g[i].key[k] : g[i].variant, v) == 0)
			return g[i].rank[k];
	return n;
}

static int cmp_groups(const void *pa, const void *pb)
{
	const struct paired_group *a = pa, *b = pb;
	for (size_t k = 0; k <= a->nkeys; k++) {
		const char *va = k < a->nkeys ? a->key[k] : a->variant;
		const char *vb = k < a->nkeys ? b->key[k] : b->variant;
		double na = csv_num(va), nb = csv_num(vb);
		if (!isnan(na) && !isnan(nb) && na != nb)
			return na < nb ? -1 : 1;
		if (a->rank[k] != b->rank[k])
			return a->rank[k] < b->rank[k] ? -1 : 1;
	}
	return 0;
}

static int same_point(const struct paired_group *g, char **row, const struct cols *c, size_t nkeys)
{
	for (size_t k = 0; k < nkeys; k++)
		if (strcmp(g->key[k], row[c->key[k]]) != 0)
			return 0;
	return 1;
}

static struct paired_group *group_of(struct paired_result *r, char **row, const char *variant,
				     const struct cols *c, size_t nkeys)
{
	for (size_t i = 0; i < r->n; i++)
		if (same_point(&r->g[i], row, c, nkeys) && strcmp(r->g[i].variant, variant) == 0)
			return &r->g[i];
	r->g = xrealloc(r->g, (r->n + 1) * sizeof(*r->g));
	struct paired_group *g = &r->g[r->n];
	*g = (struct paired_group){ .key = xrealloc(NULL, (nkeys + 1) * sizeof(char *)),
				    .rank = xrealloc(NULL, (nkeys + 1) * sizeof(size_t)),
				    .nkeys = nkeys, .variant = xstrdup(variant), .of_medians = NAN };
	for (size_t k = 0; k <= nkeys; k++) {
		if (k < nkeys)
			g->key[k] = xstrdup(row[c->key[k]]);
		g->rank[k] = first_seen(r->g, r->n, k, nkeys, k < nkeys ? g->key[k] : variant);
	}
	r->n++;
	return g;
}

/* ---- pairs ------------------------------------------------------------------------ */

static double pair_stat(enum paired_stat stat, double v, double b)
{
	if (stat == PAIRED_RATIO)
		return b > 0 ? v / b : NAN;
	return v > 0 && b > 0 ? 1e6 / v - 1e6 / b : NAN;
}

/* The last run of g with pair value p, -1 when none. */
static long last_run(const struct paired_group *g, const char *p)
{
	for (size_t i = g->n; i-- > 0;)
		if (strcmp(g->pair[i], p) == 0)
			return (long)i;
	return -1;
}

static const struct paired_group *base_of(const struct paired_result *r, const struct paired_group *g,
					  const char *base, size_t nkeys)
{
	for (size_t i = 0; i < r->n; i++) {
		const struct paired_group *b = &r->g[i];
		int same = strcmp(b->variant, base) == 0;
		for (size_t k = 0; same && k < nkeys; k++)
			same = strcmp(b->key[k], g->key[k]) == 0;
		if (same)
			return b;
	}
	return NULL;
}

/* g against its base b: a run of each per pair value (the last one of
 * either, should one have run twice), the statistic of each pair. */
static void pair_up(struct paired_group *g, const struct paired_group *b, enum paired_stat stat)
{
	double *d = xrealloc(NULL, (g->n + 1) * sizeof(double));
	size_t n = 0;

	for (size_t i = 0; i < g->n; i++) {
		long j = last_run(b, g->pair[i]);
		if (last_run(g, g->pair[i]) != (long)i || j < 0)
			continue;
		double s = pair_stat(stat, g->x[i], b->x[j]);
		if (!isnan(s))
			d[n++] = s;
	}
	g->paired = stats_median_est(d, n);
	if (g->fig.n && b->fig.n)
		g->of_medians = pair_stat(stat, g->fig.median, b->fig.median);
	free(d);
}

static void summarize_groups(struct paired_result *r, const struct paired_spec *s)
{
	for (size_t i = 0; i < r->n; i++) {
		/* the median sorts: sort a copy, keep the runs in their order for the pairs */
		struct paired_group *g = &r->g[i];
		double *x = xrealloc(NULL, (g->n + 1) * sizeof(double));
		memcpy(x, g->x, g->n * sizeof(double));
		g->fig = stats_median_est(x, g->n);
		g->paired = stats_median_est(NULL, 0);
		free(x);
		g->is_base = s->base && strcmp(g->variant, s->base) == 0;
	}
	for (size_t i = 0; s->base && i < r->n; i++) {
		const struct paired_group *b = base_of(r, &r->g[i], s->base, s->keys.n);
		if (b && !r->g[i].is_base)
			pair_up(&r->g[i], b, s->stat);
	}
}

int paired_compute(struct paired_result *r, const struct table *t, const struct paired_spec *s,
		   struct errbuf *err)
{
	struct cols c;

	*r = (struct paired_result){ 0, s->keys.n, NULL };
	if (s->base && !s->variant)
		return err_set(err, "a base needs a variant column");
	if (find_cols(&c, t, s, err) < 0) {
		cols_free(&c);
		return -1;
	}
	for (size_t i = 0; i < t->nrows; i++) {
		char **row = t->rows[i];
		double v = run_value(row, &c, s);
		if (isnan(v))
			continue;
		struct paired_group *g = group_of(r, row, c.variant < 0 ? "" :
						  variant_of(row[c.variant], s), &c, s->keys.n);
		g->x = xrealloc(g->x, (g->n + 1) * sizeof(double));
		g->pair = xrealloc(g->pair, (g->n + 1) * sizeof(char *));
		g->x[g->n] = v;
		g->pair[g->n++] = xstrdup(row[c.pair_by]);
	}
	cols_free(&c);
	qsort(r->g, r->n, sizeof(*r->g), cmp_groups);
	summarize_groups(r, s);
	return 0;
}

void paired_free(struct paired_result *r)
{
	for (size_t i = 0; i < r->n; i++) {
		struct paired_group *g = &r->g[i];
		strv_free(g->key, r->nkeys);
		free(g->rank);
		free(g->variant);
		free(g->x);
		strv_free(g->pair, g->n);
	}
	free(r->g);
	*r = (struct paired_result){ 0, 0, NULL };
}
