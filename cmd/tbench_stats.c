/* tbench-stats: the tables and statistics behind scripts/tbench-sweep,
 * tbench-plot and tbench-compare, so that the scripts do no arithmetic and
 * name no column of their own. This file is its usage and the table of
 * subcommands; each family of them has a file of its own (stats_cmd.h),
 * which reads its command line and prints. The work is in src/: table.c
 * (CSV), json.c and schema.c (the --json document), stats_row.c (the
 * columns of runs.csv), stats_summary.c (points, comparisons, costs),
 * stats_merge.c, stats_paired.c (the benchmarks' medians and pairs) and
 * stats.c. */
#include "config.h"
#include "stats_cmd.h"
#include "version.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The keys when --keys is not given: the columns of the file that name a
 * point (row_dimensions), said so in --help. */
#define DEFAULT_KEYS_TEXT "backend, clients, model and every\nknob column the file has"

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: tbench-stats summarize [--keys K,..] [--metrics M,..] [--block-reps B]\n"
		"                        RUNS.csv\n"
		"       tbench-stats compare [--metric M] [--keys K,..] [--alpha A]\n"
		"                        [--paired [--ratio]] [--csv [--resolve EFFECT[%%]]]\n"
		"                        [--equivalent MARGIN[%%]]\n"
		"                        [--sittings-pct PCT | --relative-to-sittings PCT,LO,HI] A B\n"
		"       tbench-stats compare [--keys K,..] [--alpha A] [--paired [--ratio]]\n"
		"                        --verdict 'FIGURE<THRESHOLD[%%]' A B\n"
		"       tbench-stats cost [--baseline NAME] [--keys K,..] SUMMARY.csv|RUNS.csv|DIR\n"
		"       tbench-stats decompose [--figure F] [--levels L,..] [--keys K,..]\n"
		"                        [--table | --parts] [--equivalent MARGIN[%%]]\n"
		"                        SUMMARY.csv|RUNS.csv|DIR\n"
		"       tbench-stats decompose --model\n"
		"       tbench-stats row [--set NAME=VALUE]... [--server-cpu-start U,S\n"
		"                        --server-cpu-end U,S] [--columns C,..] [RUN.json]\n"
		"       tbench-stats row --header | --figures | --knobs | --trace-parts\n"
		"       tbench-stats select [--where NAME=VALUE]... [--columns C,..] [--tsv] FILE.csv\n"
		"       tbench-stats proc-cpu PID\n"
		"       tbench-stats merge [--names H1,H2,..] A.json B.json ...\n"
		"       tbench-stats paired [--figure F] [--keys K,..] [--variant COL\n"
		"                        [--as V=NAME]... [--base NAME [--ratio | --cost]\n"
		"                        [--pair-by COL] [--target T]]] [--where NAME=VALUE]...\n"
		"                        [--positive C,..] [--per COL [--per-scale X|N/D]]\n"
		"                        [--decimals N | --precise] FILE.csv\n"
		"       tbench-stats substitute --total T --from A,.. --to B,.. [--decimals N]\n"
		"\n"
		"summarize  one row per point (rows of RUNS.csv with equal key columns): n runs\n"
		"           with status 'ok', n_failed, n_disturbed (ok runs left out: their\n"
		"           'disturbed' column is not empty nor 'no', man tbench NOISE), and\n"
		"           for each metric column its mean, sample\n"
		"           standard deviation (_sd) and the half-width of the 95%% Student-t\n"
		"           confidence interval of the mean (_ci95), at the level of the variance:\n"
		"           the runs, or the means of blocks of --block-reps B consecutive reps\n"
		"           (default max(2, floor(sqrt n))) or of sittings (runs.csv's 'sitting')\n"
		"           when an F-test at 5%% finds them differing; then n_blocks and per\n"
		"           metric _ci95_level (run, block, sitting) and _ci95_runs (the runs').\n"
		"           compare, cost and decompose take --block-reps too, and compare's\n"
		"           last CSV column, level, says where its interval's variance was.\n"
		"           Default metrics: every\n"
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
		"           pairs n) where the reps pair up (see decompose), else Welch's.\n"
		"           --ratio (with --paired): of the per-rep ln(B/A) instead (all runs\n"
		"           above 0), the change and its interval 100 (exp(x) - 1) of theirs\n"
		"           (method paired-ratio; diff, diff_ci95, mde then in ln(B/A); margins\n"
		"           and thresholds in %%). half_width_pct: (change_hi_pct -\n"
		"           change_lo_pct) / 2, after level.\n"
		"           --verdict: for git bisect run: 'mb_per_sec<-3%%' is bad (exit 1)\n"
		"           when a point's interval of the change lies wholly below -3%%, good\n"
		"           (exit 0) when every point's lies wholly above, else exit 125; '>'\n"
		"           for a rise; without %% in the figure's units. A line per point.\n"
		"           --equivalent 3%%: is B the same as A within +-3%% of A (without %%:\n"
		"           in the figure's units)? Two one-sided tests at alpha: 'equivalent'\n"
		"           when the (1-2 alpha) interval of B - A lies within the margin, else\n"
		"           'different' when significant, else 'cannot tell'; margin_shown: the\n"
		"           least margin this noise could have shown equivalent. Columns\n"
		"           equivalence, margin, equiv_lo, equiv_hi, margin_shown (_pct with %%)\n"
		"           after all others.\n"
		"           --resolve 2.4%%: with --csv, a last column runs_to_resolve: the\n"
		"           fewest runs a side with which two sweeps of these standard\n"
		"           deviations, compared unpaired, would have an mde of 2.4%% of A\n"
		"           (without %%: in the figure's units); empty beyond 100000 runs.\n"
		"           --sittings-pct 4.2: A's and B's sittings differ by 4.2%% (say, a\n"
		"           yardstick's change; sign ignored): a significant change whose 95%%\n"
		"           interval lies within +-4.2%% of A is 'sittings' in significant, not\n"
		"           counted significant.\n"
		"           --relative-to-sittings 4.2,3.1,5.3: each side over its own sitting,\n"
		"           B's 4.2%% [3.1, 5.3] from A's: the change of (B/A)/(1.042), its\n"
		"           interval B/A's and the sittings' combined in quadrature; no p, mde.\n"
		"           Points match on every key; by default also on a knob column only\n"
		"           one side has (the other did not vary it: '-'), on model only when\n"
		"           both have it.\n"
		"           No point in common: exit 2, naming the keys whose values differ.\n"
		"cost       transport cost per operation: 1e6/ops_per_sec(backend) minus\n"
		"           1e6/ops_per_sec(NAME; default: the root of decompose's\n"
		"           model, nop) at the same client count (the point of NAME that\n"
		"           shares the most other keys), in microseconds,\n"
		"           with a 95%% interval from the delta method.\n"
		"decompose  the layers of an operation's cost per client count: each level\n"
		"           (backend[:setting]; default: the model --model lists, from the\n"
		"           backends' registry entries: its stack, then the layers beside it,\n"
		"           then the pairs of different paths; setting: an offload value, or\n"
		"           NAME=VALUE of keys joined by ':', e.g. tcp:mtu=1500:offload=off;\n"
		"           the first point that has it) minus the level below it, as a\n"
		"           difference of means of the figure (default cost_cpu_us; also\n"
		"           wall_us_per_op, cost_task_clock_us...) with its 95%% interval: from\n"
		"           the per-rep differences (Student-t, n-1 df; method paired, pairs n)\n"
		"           when a RUNS.csv's runs of the two levels pair up by rep (the reps\n"
		"           both ran, each once: 2 or more when both ran the same reps, else 3\n"
		"           or more), else from Welch's standard error (Welch-Satterthwaite df;\n"
		"           unpaired); bottom and top place it in the stack; kind says whether\n"
		"           it is a layer (one path contains the other) or different-paths.\n"
		"           --table: for a reader, a block per client count, each layer with\n"
		"           its interval, clear of 0 or covering it; different paths side by\n"
		"           side, by --trace part where the runs have them; --parts: those\n"
		"           parts in CSV, a line a part of each different-paths row.\n"
		"           --equivalent: each layer against nothing, as compare's, at 95%%;\n"
		"           with %% in percent of the level below.\n"
		"           --model: the stack's steps, the layers drawn beside it (sibling)\n"
		"           and the different paths (paths), tab-separated: kind, lower,\n"
		"           upper, name, label.\n"
		"row        the runs.csv row of one run from its --json document (none: the run\n"
		"           left none) and the values only the sweep knows (--set); --header the\n"
		"           header; --figures the figure columns, one a line; --knobs the knob\n"
		"           columns (tbench-sweep --vary NAME): the value the sweep asked for,\n"
		"           '-' when not given (not varied); NAME_read a knob as read back;\n"
		"           --trace-parts the figures of tbench --trace that add up to a\n"
		"           side's time, as they stack: side, column, label (tab-separated).\n"
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
		"paired     the statistics of the benchmarks under bench/: per point (--keys,\n"
		"           default clients) and variant (the values of --variant's column) the\n"
		"           runs' median of the figure (default mb_per_sec) and its distribution-\n"
		"           free interval, lowest to highest, of confidence 1 - 2^(1-n); with\n"
		"           --base, per pair of runs of a variant and the base (equal --pair-by,\n"
		"           default rep) the ratio (or --cost: 1e6/v - 1e6/base, the us per\n"
		"           operation of rates) and the median and interval of those, and the\n"
		"           same of the two medians (of_medians); --target T: met when >= T.\n"
		"           A run counts when it matches every --where, has a number > 0 in every\n"
		"           --positive column and a number as its figure; --per: the figure x 1e6\n"
		"           / (COL x --per-scale); --as: variant V counts as NAME. --decimals:\n"
		"           numbers with N decimals (else %%.6g); --precise: all of a double's.\n"
		"substitute the ratio of rates that replacing parts A of a time per operation T\n"
		"           by B alone would give: T / (T - sum A + sum B).\n"
		"\n"
		"Defaults: --metric mb_per_sec; --keys " DEFAULT_KEYS_TEXT ".\n"
		"A runs.csv or summary.csv older than the knob columns is read with its\n"
		"read-back tso, gso, gro as tso_read, gso_read, gro_read.\n"
		"TBENCH_KEEP_DISTURBED=1: disturbed runs count as ok (n), not in n_disturbed.\n"
		"Exit status: 0 success, 1 failure (output not written), 2 usage or input error.\n");
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
	{ "paired", cmd_paired },
	{ "substitute", cmd_substitute },
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
		fprintf(stderr, "%s: unknown command '%s'\n", STATS_PROG, argv[1]);
		usage(stderr);
		return EXIT_USAGE;
	}
	commands[i].run(argc - 1, argv + 1);
	if (fflush(stdout) != 0 || ferror(stdout))
		die(EXIT_RUN_FAILED, "writing the output: %s", strerror(errno));
	return EXIT_OK;
}

