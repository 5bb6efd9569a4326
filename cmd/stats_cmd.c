/* tbench-stats: what its subcommands share; see stats_cmd.h. */
#include "config.h"
#include "stats_cmd.h"
#include "stats_row.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

void die(int code, const char *fmt, ...)
{
	va_list ap;
	fprintf(stderr, "%s: ", STATS_PROG);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(code);
}

static void option_error(const char *cmd, poptContext pc, int rc)
{
	const char *bad = poptBadOption(pc, POPT_BADOPTION_NOALIAS);

	if (rc == POPT_ERROR_NOARG)
		die(EXIT_USAGE, "%s needs a value", bad);
	if (rc == POPT_ERROR_BADOPT)
		die(EXIT_USAGE, "%s: unknown option %s (see tbench-stats --help)", cmd, bad);
	die(EXIT_USAGE, "%s: %s: %s", cmd, bad, poptStrerror(rc));
}

/* Every string the command line gave: kept for the process's life (a
 * setting points into its text), freed at exit. */
static char **kept;
static size_t nkept;

static void free_kept(void)
{
	while (nkept)
		free(kept[--nkept]);
	free(kept);
	kept = NULL;
}

static const char *keep(char *s)
{
	if (!kept)
		atexit(free_kept);
	kept = xrealloc(kept, (nkept + 1) * sizeof(*kept));
	return kept[nkept++] = s;
}

/* A string option of table[i] comes back as STRING_OPTION + i, its value
 * then ours to keep, not a copy popt makes and forgets. */
enum { STRING_OPTION = 0x10000 };

static struct poptOption *own_table(const struct poptOption *table)
{
	size_t n = 0;

	while (table[n].longName)
		n++;
	struct poptOption *own = xrealloc(NULL, (n + 1) * sizeof(*own));
	memcpy(own, table, (n + 1) * sizeof(*own));
	for (size_t i = 0; i < n; i++)
		if ((own[i].argInfo & POPT_ARG_MASK) == POPT_ARG_STRING && own[i].arg) {
			own[i].arg = NULL;
			own[i].val = STRING_OPTION + (int)i;
		}
	return own;
}

int stats_options(const char *cmd, int argc, char **argv, const struct poptOption *table,
		  void (*repeated)(void *ctx, int val, const char *value), void *ctx,
		  const char **operands, int max)
{
	struct poptOption *own = own_table(table);
	poptContext pc = poptGetContext(cmd, argc, (const char **)argv, own, 0);
	const char *arg;
	int rc, n = 0;

	if (!pc)
		die(EXIT_RUN_FAILED, "%s: out of memory", cmd);
	while ((rc = poptGetNextOpt(pc)) > 0) {
		char *given = poptGetOptArg(pc);
		const char *value = given ? keep(given) : "";
		if (rc >= STRING_OPTION)
			*(const char **)table[rc - STRING_OPTION].arg = value;
		else
			repeated(ctx, rc, value);
	}
	if (rc < -1)
		option_error(cmd, pc, rc);
	/* The operands are pc's: copied, to outlive it. */
	while ((arg = poptGetArg(pc))) {
		if (n == max)
			die(EXIT_USAGE, "%s: too many operands at '%s'", cmd, arg);
		operands[n++] = keep(xstrdup(arg));
	}
	poptFreeContext(pc);
	free(own);
	return n;
}

void read_table(struct table *t, const char *path)
{
	struct errbuf err;
	if (table_read(t, path, &err) < 0)
		die(EXIT_USAGE, "%s", err.msg);
	row_upgrade_table(t);
}

struct strlist keys_of(const char *keys, const struct table *t)
{
	return keys ? strlist_split(keys) : row_dimensions(t);
}

/* --block-reps of this command: 0 when not given (the default size). */
static size_t block_reps;

void block_reps_set(const char *cmd, const char *text)
{
	double b;
	if (!text)
		return;
	b = csv_num(text);
	if (!(b >= 2 && b <= 1e6) || b != floor(b))
		die(EXIT_USAGE, "%s: --block-reps %s: want a whole number of repetitions, 2 or more",
		    cmd, text);
	block_reps = (size_t)b;
}

unsigned summary_flags(void)
{
	const char *keep = getenv("TBENCH_KEEP_DISTURBED");
	unsigned flags = keep && strcmp(keep, "1") == 0 ? SUMMARY_KEEP_DISTURBED : 0;
	return flags | SUMMARY_BLOCK_REPS(block_reps);
}

void note_disturbed(const struct summary *s, const char *file)
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

void load_results(const char *arg, struct table *t)
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

void summary_of(struct table *t, const struct strlist *keys, const char *metric, struct summary *s)
{
	struct errbuf err;
	if (summarize_any(s, t, keys, metric, summary_flags(), &err) < 0)
		die(EXIT_USAGE, "%s (figures: tbench-stats row --figures)", err.msg);
	note_disturbed(s, t->name);
	table_free(t);
}

void load_summary(const char *arg, const char *keys, const char *metric, struct summary *s)
{
	struct table t;
	load_results(arg, &t);
	struct strlist kl = keys_of(keys, &t);
	summary_of(&t, &kl, metric, s);
	strlist_free(&kl);
}

const char *figure_named(const char *name)
{
	const char *col = row_figure_column(name);
	return col ? col : name;
}

void equivalent_option(const char *cmd, const char *text, struct equiv_margin *m)
{
	struct errbuf err;
	if (equiv_margin_parse(m, text, &err) < 0)
		die(EXIT_USAGE, "%s: --equivalent %s", cmd, err.msg);
}

void fmt_margin(char *buf, size_t len, const struct equiv_margin *m, double v)
{
	if (isfinite(v))
		snprintf(buf, len, "±%.3g%s", v, m->relative ? "%" : "");
	else
		snprintf(buf, len, "-");
}

void put_equivalence_head(FILE *o, const struct equiv_margin *m)
{
	const char *u = m->relative ? "_pct" : "";
	if (m->value > 0)
		fprintf(o, ",equivalence,margin%s,equiv_lo%s,equiv_hi%s,margin_shown%s", u, u, u, u);
}

void put_equivalence(FILE *o, const struct equiv_margin *m, const struct equiv_est *e)
{
	if (m->value > 0) {
		fprintf(o, ",%s,", equivalence_word(e->verdict));
		csv_put_num(o, m->value);
		const double nums[] = { e->lo, e->hi, e->shown };
		for (size_t j = 0; j < sizeof(nums) / sizeof(nums[0]); j++) {
			fputc(',', o);
			csv_put_num(o, nums[j]);
		}
	}
}
