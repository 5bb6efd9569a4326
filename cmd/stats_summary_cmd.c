/* tbench-stats summarize, cost and decompose: a runs.csv's points, and
 * the cost of a backend and of each layer of an operation from them. */
#include "config.h"
#include "registry.h"
#include "stats_cmd.h"
#include "stats_model.h"
#include "stats_row.h"
#include "stats_summary.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The blocks a point's runs fell into: those of its figures' that all
 * its runs have. */
static size_t point_blocks(const struct summary *s, const struct point *p)
{
	size_t n = 0;
	for (size_t m = 0; m < s->metrics.n; m++)
		if (p->m[m].n_blocks > n)
			n = p->m[m].n_blocks;
	return n;
}

/* After the columns of older summaries, so that their readers keep
 * working: n_blocks, then each metric's level and its interval taking the
 * runs as independent. */
static void print_levels(FILE *o, const struct summary *s, const struct point *p)
{
	if (!p) {
		fputs(",n_blocks", o);
		for (size_t m = 0; m < s->metrics.n; m++)
			fprintf(o, ",%s_ci95_level,%s_ci95_runs", s->metrics.v[m], s->metrics.v[m]);
		return;
	}
	fprintf(o, ",%zu", point_blocks(s, p));
	for (size_t m = 0; m < s->metrics.n; m++) {
		fprintf(o, ",%s,", p->m[m].n ? level_name(p->m[m].level) : "");
		csv_put_num(o, p->m[m].ci_runs);
	}
}

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
	print_levels(o, s, NULL);
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
		print_levels(o, s, p);
		fputc('\n', o);
	}
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

void cmd_summarize(int argc, char **argv)
{
	const char *keys = NULL, *metrics = NULL, *file[1] = { NULL };
	int nfile = 0;

	const char *block_text = NULL;
	const struct poptOption table[] = {
		{ "keys", 0, POPT_ARG_STRING, &keys, 0, NULL, NULL },
		{ "metrics", 0, POPT_ARG_STRING, &metrics, 0, NULL, NULL },
		{ "block-reps", 0, POPT_ARG_STRING, &block_text, 0, NULL, NULL },
		POPT_TABLEEND
	};
	nfile = stats_options("summarize", argc, argv, table, NULL, NULL, file, 1);
	block_reps_set("summarize", block_text);
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

/* The keys of a command that needs backend and clients first. */
static void check_cost_keys(const char *cmd, const char *keys)
{
	struct strlist kl = strlist_split(keys ? keys : "backend,clients");
	int bad_keys = kl.n < 2 || strcmp(kl.v[0], "backend") || strcmp(kl.v[1], "clients");
	strlist_free(&kl);
	if (bad_keys)
		die(EXIT_USAGE, "%s: --keys must be backend,clients[,<setting>...]", cmd);
}

/* The decomposition's model of the backends built in (backends/registry.c). */
static void registry_model(struct decomp_model *m)
{
	struct errbuf err;
	if (model_build(m, backends, &err) < 0)
		die(EXIT_RUN_FAILED, "the backends' paths (backends/*.c, .path): %s", err.msg);
}

void cmd_cost(int argc, char **argv)
{
	const char *keys = NULL, *base = NULL, *file[1] = { NULL };
	int nfile = 0;
	struct decomp_model m;

	const char *block_text = NULL;
	const struct poptOption table[] = {
		{ "keys", 0, POPT_ARG_STRING, &keys, 0, NULL, NULL },
		{ "baseline", 0, POPT_ARG_STRING, &base, 0, NULL, NULL },
		{ "block-reps", 0, POPT_ARG_STRING, &block_text, 0, NULL, NULL },
		POPT_TABLEEND
	};
	nfile = stats_options("cost", argc, argv, table, NULL, NULL, file, 1);
	block_reps_set("cost", block_text);
	if (!nfile)
		die(EXIT_USAGE, "cost: missing SUMMARY.csv, RUNS.csv or DIR");
	check_cost_keys("cost", keys);
	/* the harness by default: the root of the decomposition's model */
	registry_model(&m);
	if (!base && !(base = model_root(&m)))
		die(EXIT_USAGE, "cost: no backend is a root of the model: give --baseline");

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
	model_free(&m);
}

/* The layers in CSV. kind, after pairs so that older readers' columns
 * stay put: layer, different-paths, setting or total (stats_model.h);
 * then, with --equivalent, the equivalence columns. */
static void print_layers(FILE *o, const char *figure, const struct layer_row *rows, size_t n,
			 const struct equiv_margin *m)
{
	fputs("figure,clients,layer,label,minuend,subtrahend,mean,ci95,df,n_minuend,n_subtrahend,"
	      "bottom,top,method,pairs,kind", o);
	put_equivalence_head(o, m);
	fputc('\n', o);
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
			fprintf(o, ",%s,%zu", diff_method(&r->d), r->d.pairs);
		else
			fputs(",,", o);
		fprintf(o, ",%s", relation_name(r->relation));
		put_equivalence(o, m, &r->eq);
		fputc('\n', o);
	}
}

/* The characters of UTF-8 text. */
static size_t utf8_width(const char *s)
{
	size_t n = 0;
	for (const char *c = s; *c; c++)
		n += ((unsigned char)*c & 0xC0) != 0x80;
	return n;
}

/* Left-aligned in width columns of text. */
static void put_padded(FILE *o, const char *s, int width)
{
	fputs(s, o);
	for (width -= (int)utf8_width(s); width > 0; width--)
		fputc(' ', o);
}

/* With --equivalent, after a layer's line: whether it is within the margin
 * of nothing, and the least margin this noise could have shown. */
static void put_layer_equivalence(FILE *o, const struct equiv_margin *m, const struct layer_row *r)
{
	char shown[32];
	if (!(m->value > 0) || !r->b)
		return;
	fmt_margin(shown, sizeof(shown), m, r->eq.shown);
	fprintf(o, "  %s (shown %s)", equivalence_word(r->eq.verdict), shown);
}

/* " ± CI  METHOD  clear of 0" (and its level, when not the runs'), or
 * that there is no interval; with
 * --equivalent, the layer's equivalence to nothing after it. */
static void put_interval(FILE *o, const struct layer_row *r, const struct equiv_margin *m)
{
	if (!isfinite(r->ci))
		fputs("   (no interval: fewer than 2 runs)", o);
	else
		fprintf(o, " ± %-8.3f %-8s %s", r->ci, r->b ? diff_method(&r->d) : "own",
			fabs(r->mean) > r->ci ? "clear of 0" : "covers 0");
	if (isfinite(r->ci) && r->d.level != LEVEL_RUN)
		fprintf(o, " (%s level)", level_name((enum ci_level)r->d.level));
	put_layer_equivalence(o, m, r);
	fputc('\n', o);
}

/* --trace's parts of the runs (runs.csv's trace_ columns), where it has them. */
struct trace_parts {
	struct summary s;               /* metric i is part[of[i]] */
	struct row_part part[64];
	size_t n, of[64];
	int have;
};

/* Metric i of the parts, when either point has it (a part neither side
 * has, another backend's system calls, is left out). */
static const struct row_part *part_shown(const struct trace_parts *tp, size_t i,
					 const struct point *a, const struct point *b)
{
	int shown = fabs(a->m[i].mean) >= 5e-4 || fabs(b->m[i].mean) >= 5e-4;
	return shown ? &tp->part[tp->of[i]] : NULL;
}

/* Each part of the two sides of a different-paths row, side by side. */
static void print_parts(FILE *o, const struct trace_parts *tp, const struct layer_row *r)
{
	const struct point *a = summary_find(&tp->s, r->a->key), *b = summary_find(&tp->s, r->b->key);
	if (!a || !b)
		return;
	fprintf(o, "      by part (--trace, per operation: µs, counts)  %10s %10s\n", r->minuend,
		r->subtrahend);
	for (size_t i = 0; i < tp->s.metrics.n; i++) {
		const struct row_part *part = part_shown(tp, i, a, b);
		char what[160];
		if (!part)
			continue;
		snprintf(what, sizeof(what), "%s %s", part->side, part->label);
		fputs("        ", o);
		put_padded(o, what, 36);
		fprintf(o, "%10.3f %10.3f\n", a->m[i].mean, b->m[i].mean);
	}
}

/* One line of --parts: a part of both sides of r. */
static void put_part_line(FILE *o, const struct layer_row *r, const struct row_part *part,
			  double a, double b)
{
	const char *const text[] = { r->clients, r->name, r->minuend, r->subtrahend, part->side,
				     part->column, part->label };
	for (size_t c = 0; c < sizeof(text) / sizeof(text[0]); c++) {
		csv_put_field(o, text[c]);
		fputc(',', o);
	}
	csv_put_num(o, a);
	fputc(',', o);
	csv_put_num(o, b);
	fputc('\n', o);
}

/* --parts: the parts of every different-paths row in CSV, a line a part. */
static void print_parts_csv(FILE *o, const struct trace_parts *tp, const struct layer_row *rows,
			    size_t n)
{
	fputs("clients,layer,minuend,subtrahend,side,column,part,minuend_mean,subtrahend_mean\n", o);
	for (size_t k = 0; k < n; k++) {
		const struct layer_row *r = &rows[k];
		if (r->relation != REL_PATHS || !r->b)
			continue;
		const struct point *a = summary_find(&tp->s, r->a->key), *b = summary_find(&tp->s, r->b->key);
		for (size_t i = 0; a && b && i < tp->s.metrics.n; i++) {
			const struct row_part *part = part_shown(tp, i, a, b);
			if (part)
				put_part_line(o, r, part, a->m[i].mean, b->m[i].mean);
		}
	}
}

/* A difference of different paths: each side's total, then the
 * difference, never drawn as a layer of the other. */
static void print_paths_row(FILE *o, const struct layer_row *r, const struct trace_parts *tp,
			    const struct equiv_margin *m)
{
	fprintf(o, "  %s\n      %s %.3f, %s %.3f; difference %10.3f", r->label, r->minuend, r->top,
		r->subtrahend, r->bottom, r->mean);
	put_interval(o, r, m);
	if (tp->have)
		print_parts(o, tp, r);
}

/* The layers for a reader: a block per client count, a line a layer with
 * its mean, its 95% interval and how that was had, and whether the
 * interval is clear of 0 (the layer larger than its error bar); different
 * paths side by side, by part where the runs were traced. */
static void print_layers_table(FILE *o, const char *figure, const struct layer_row *rows, size_t n,
			       const struct trace_parts *tp, const struct equiv_margin *m)
{
	char margin[32];
	int width = 44;
	for (size_t i = 0; i < n; i++)
		if (rows[i].relation != REL_PATHS && (int)utf8_width(rows[i].label) + 2 > width)
			width = (int)utf8_width(rows[i].label) + 2;
	fprintf(o, "%s: each layer's mean and 95%% interval, per client count\n", figure);
	fmt_margin(margin, sizeof(margin), m, m->value);
	if (m->value > 0)
		fprintf(o, "equivalence of each layer to nothing within %s%s at 95%%\n(two one-sided "
			"tests on its 90%% interval); shown: the least margin this noise could have shown\n",
			margin, m->relative ? " of the level below" : "");
	for (size_t i = 0; i < n; i++) {
		const struct layer_row *r = &rows[i];
		if (i == 0 || strcmp(r->clients, rows[i - 1].clients) != 0)
			fprintf(o, "\n%s clients\n", r->clients);
		if (r->relation == REL_PATHS && r->b) {
			print_paths_row(o, r, tp, m);
			continue;
		}
		fputs("  ", o);
		put_padded(o, r->label, width);
		fprintf(o, "%10.3f", r->mean);
		put_interval(o, r, m);
	}
}

/* The trace parts of file, summarized by the same keys, when it is a
 * runs.csv of traced runs. */
static void load_trace_parts(struct trace_parts *tp, const char *file, const char *keys)
{
	struct table t;
	struct errbuf err;
	memset(tp, 0, sizeof(*tp));
	load_results(file, &t);
	tp->n = row_trace_parts(tp->part, sizeof(tp->part) / sizeof(tp->part[0]));
	tp->n += row_trace_counts(tp->part + tp->n, sizeof(tp->part) / sizeof(tp->part[0]) - tp->n);
	struct strlist kl = keys_of(keys, &t), ml = { 0, xrealloc(NULL, (tp->n + 1) * sizeof(char *)) };
	struct strlist none = { 0, NULL };
	for (size_t k = 0; k < tp->n; k++)
		if (table_col(&t, tp->part[k].column) >= 0) {
			tp->of[ml.n] = k;
			ml.v[ml.n++] = xstrdup(tp->part[k].column);
		}
	tp->have = ml.n > 0 && summarize_runs(&tp->s, &t, &kl, &ml, &none, summary_flags(), &err) == 0;
	strlist_free(&kl);
	strlist_free(&ml);
	table_free(&t);
}

/* The model, tab-separated: "stack" (a step of the stack), "sibling" (a
 * layer beside it) or "paths" (different paths, not a layer), the two
 * levels, the step's name and label. */
static void print_model(FILE *o, const struct decomp_model *m)
{
	static const char *const kind[] = {
		[STEP_STACK] = "stack", [STEP_BRANCH] = "sibling", [STEP_PATHS] = "paths",
	};
	fputs("kind\tlower\tupper\tname\tlabel\n", o);
	for (size_t i = 0; i < m->n; i++)
		fprintf(o, "%s\t%s\t%s\t%s\t%s\n", kind[m->step[i].kind], m->step[i].lower,
			m->step[i].upper, m->step[i].name, m->step[i].label);
}

void cmd_decompose(int argc, char **argv)
{
	const char *keys = NULL, *figure = "cost_cpu_us", *levels = NULL, *file[1] = { NULL };
	const char *equivalent = NULL;
	struct equiv_margin margin = { 0, 0 };
	int nfile = 0, table = 0, model = 0, parts = 0;

	const char *block_text = NULL;
	const struct poptOption options[] = {
		{ "model", 0, POPT_ARG_NONE, &model, 0, NULL, NULL },
		{ "table", 0, POPT_ARG_NONE, &table, 0, NULL, NULL },
		{ "parts", 0, POPT_ARG_NONE, &parts, 0, NULL, NULL },
		{ "keys", 0, POPT_ARG_STRING, &keys, 0, NULL, NULL },
		{ "figure", 0, POPT_ARG_STRING, &figure, 0, NULL, NULL },
		{ "levels", 0, POPT_ARG_STRING, &levels, 0, NULL, NULL },
		{ "equivalent", 0, POPT_ARG_STRING, &equivalent, 0, NULL, NULL },
		{ "block-reps", 0, POPT_ARG_STRING, &block_text, 0, NULL, NULL },
		POPT_TABLEEND
	};
	nfile = stats_options("decompose", argc, argv, options, NULL, NULL, file, 1);
	block_reps_set("decompose", block_text);
	if (equivalent)
		equivalent_option("decompose", equivalent, &margin);
	struct decomp_model m;
	registry_model(&m);
	if (model) {
		print_model(stdout, &m);
		model_free(&m);
		return;
	}
	if (!nfile)
		die(EXIT_USAGE, "decompose: missing SUMMARY.csv, RUNS.csv or DIR");
	check_cost_keys("decompose", keys);
	struct strlist ll = strlist_split(levels ? levels : "");
	if (levels && ll.n == 0)
		die(EXIT_USAGE, "decompose: --levels: empty list (e.g. nop,pipe)");

	struct summary s;
	struct layer_row *rows;
	struct trace_parts tp = { .have = 0 };
	figure = figure_named(figure);
	load_summary(file[0], keys, figure, &s);
	size_t n = levels ? decompose(&rows, &s, &ll, &m) : decompose_model(&rows, &s, &m);
	if (equivalent)
		layers_equivalence(rows, n, &margin);
	if (table || parts)
		load_trace_parts(&tp, file[0], keys);
	if (parts && !tp.have)
		die(EXIT_USAGE, "decompose --parts: %s has no --trace parts (runs.csv's trace_ columns: "
		    "a sweep run with -- --trace)", file[0]);
	if (parts) {
		print_parts_csv(stdout, &tp, rows, n);
	} else if (table) {
		print_layers_table(stdout, figure, rows, n, &tp, &margin);
	} else {
		print_layers(stdout, figure, rows, n, &margin);
	}
	if (tp.have)
		summary_free(&tp.s);
	layer_rows_free(rows, n);
	summary_free(&s);
	strlist_free(&ll);
	model_free(&m);
}
