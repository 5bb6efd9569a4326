/* tbench-stats summarize, cost and decompose: a runs.csv's points, and
 * the cost of a backend and of each layer of an operation from them. */
#include "config.h"
#include "stats_cmd.h"
#include "stats_row.h"
#include "stats_summary.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

/* The keys of a command that needs backend and clients first. */
static void check_cost_keys(const char *cmd, const char *keys)
{
	struct strlist kl = strlist_split(keys ? keys : "backend,clients");
	int bad_keys = kl.n < 2 || strcmp(kl.v[0], "backend") || strcmp(kl.v[1], "clients");
	strlist_free(&kl);
	if (bad_keys)
		die(EXIT_USAGE, "%s: --keys must be backend,clients[,<setting>...]", cmd);
}

void cmd_cost(int argc, char **argv)
{
	/* the harness: the first level of the decomposition's stack */
	const char *keys = NULL, *base = stack_steps[0].to, *file[1] = { NULL };
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

static void print_layers(FILE *o, const char *figure, const struct layer_row *rows, size_t n,
			 const struct equiv_margin *m)
{
	fputs("figure,clients,layer,label,minuend,subtrahend,mean,ci95,df,n_minuend,n_subtrahend,"
	      "bottom,top,method,pairs", o);
	put_equivalence_head(o, m);
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
		put_equivalence(o, m, &r->eq);
	}
}

/* Left-aligned in width columns of text, UTF-8 counted by characters. */
static void put_padded(FILE *o, const char *s, int width)
{
	fputs(s, o);
	for (const char *c = s; *c; c++)
		width -= ((unsigned char)*c & 0xC0) != 0x80;
	for (; width > 0; width--)
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

/* The layers for a reader: a block per client count, a line a layer with
 * its mean, its 95% interval and how that was had, and whether the
 * interval is clear of 0 (the layer larger than its error bar). */
static void print_layers_table(FILE *o, const char *figure, const struct layer_row *rows, size_t n,
			       const struct equiv_margin *m)
{
	char margin[32];
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
		fputs("  ", o);
		put_padded(o, r->label, 44);
		fprintf(o, "%10.3f", r->mean);
		if (!isfinite(r->ci)) {
			fputs("   (no interval: fewer than 2 runs)", o);
			put_layer_equivalence(o, m, r);
			fputc('\n', o);
			continue;
		}
		fprintf(o, " ± %-8.3f %-8s %s", r->ci, r->b ? diff_method(&r->d) : "own",
			fabs(r->mean) > r->ci ? "clear of 0" : "covers 0");
		put_layer_equivalence(o, m, r);
		fputc('\n', o);
	}
}

/* The model, tab-separated: "stack" or "sibling", the two levels, the
 * layer's name and label. */
static void print_steps(FILE *o, const char *kind, const struct layer_step *steps, size_t n)
{
	for (size_t i = 0; i < n; i++)
		fprintf(o, "%s\t%s\t%s\t%s\t%s\n", kind, steps[i].from, steps[i].to, steps[i].name,
			steps[i].label);
}

static void print_model(FILE *o)
{
	fputs("kind\tlower\tupper\tname\tlabel\n", o);
	print_steps(o, "stack", stack_steps, n_stack_steps);
	print_steps(o, "sibling", sibling_steps, n_sibling_steps);
}

void cmd_decompose(int argc, char **argv)
{
	const char *keys = NULL, *figure = "cost_cpu_us", *levels = NULL, *file[1] = { NULL };
	const char *equivalent = NULL;
	struct equiv_margin margin = { 0, 0 };
	int nfile = 0, table = 0;

	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--model") == 0) {
			print_model(stdout);
			return;
		}
		if (strcmp(argv[i], "--table") == 0) {
			table = 1;
			continue;
		}
		if (!opt_value(argc, argv, &i, "--keys", &keys) &&
		    !opt_value(argc, argv, &i, "--figure", &figure) &&
		    !opt_value(argc, argv, &i, "--levels", &levels) &&
		    !opt_value(argc, argv, &i, "--equivalent", &equivalent))
			operand("decompose", argv, i, file, &nfile, 1);
	}
	if (equivalent)
		equivalent_option("decompose", equivalent, &margin);
	if (!nfile)
		die(EXIT_USAGE, "decompose: missing SUMMARY.csv, RUNS.csv or DIR");
	check_cost_keys("decompose", keys);
	char *stack = stack_levels();
	struct strlist ll = strlist_split(levels ? levels : stack);
	if (ll.n == 0)
		die(EXIT_USAGE, "decompose: --levels: empty list (e.g. %s)", stack);

	struct summary s;
	struct layer_row *rows;
	figure = figure_named(figure);
	load_summary(file[0], keys, figure, &s);
	size_t n = decompose(&rows, &s, &ll);
	if (equivalent)
		layers_equivalence(rows, n, &margin);
	if (table)
		print_layers_table(stdout, figure, rows, n, &margin);
	else
		print_layers(stdout, figure, rows, n, &margin);
	layer_rows_free(rows, n);
	summary_free(&s);
	strlist_free(&ll);
	free(stack);
}
