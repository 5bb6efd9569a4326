/* The figures both reports derive from a run, the dbench text output
 * (report_text.c) and the --json document (report_json.c), computed in
 * one place so that the two cannot disagree. Private to them. */
#ifndef TBENCH_REPORT_FIGURES_H
#define TBENCH_REPORT_FIGURES_H

#include <stdbool.h>
#include <stdint.h>

#include "run.h"

static inline double ms(uint64_t ns)
{
	return ns / 1e6;
}

/* dbench's figure: the execute phase's payload over its time; 0 without one. */
static inline double result_mb_per_sec(const struct run_result *res)
{
	return res->execute_secs > 0 ? 1e-6 * res->bytes / res->execute_secs : 0;
}

static inline uint64_t execute_ops(const struct client_stats *c)
{
	uint64_t n = 0;

	for (int i = 0; i < OP_COUNT; i++)
		if (stats_op_used(c, i))
			n += c->op[i].count;
	return n;
}

/* Whether a client replayed less than one pass of the loadfile in the
 * execute phase (with many clients, or a short run): the figure then
 * reflects the loadfile's first part, not its mix. *least: the fewest. */
static inline bool prefix_only(const struct run_config *cfg, const struct run_result *res,
			       uint64_t *least)
{
	*least = UINT64_MAX;
	for (unsigned i = 0; i < res->nclients; i++) {
		uint64_t n = execute_ops(&res->clients[i]);
		if (n < *least)
			*least = n;
	}
	return res->nclients && *least < cfg->lf->n_ops && res->execute_secs > 0 && !cfg->run_once;
}

/* --- cost per operation ------------------------------------------------ */

static inline double per_op(const struct run_result *res, double v)
{
	return res->ops ? v / (double)res->ops : 0;
}

static inline uint64_t perf_delta(const struct cost *c, int i)
{
	return c->end.perf[i] - c->start.perf[i];
}

static inline bool net_known(const struct cost *c, int i)
{
	return c->start.net_ok[i] && c->end.net_ok[i];
}

static inline double net_delta(const struct cost *c, int i)
{
	return (double)(c->end.net[i] - c->start.net[i]);
}

static inline bool cost_known(const struct run_result *res)
{
	return res->cost.started && res->cost.ended && res->ops > 0;
}

/* --- noise of the execute phase ---------------------------------------- */

static inline void noise_of(const struct run_config *cfg, const struct run_result *res,
			    struct noise_figures *f)
{
	/* Only a phase that ran to its -t can overrun it. */
	bool timed = !cfg->run_once && res->status == RUN_OK;

	noise_judge(&res->noise, &res->cost, timed ? cfg->timelimit : 0, res->execute_secs, f);
}

#endif
