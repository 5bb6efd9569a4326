/* A run as the driver takes it and gives it back: what to do (run_config),
 * what it tells while it runs (run_observer) and what came of it
 * (run_result), for the driver, the reports and the mains alike. */
#ifndef TBENCH_RUN_H
#define TBENCH_RUN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "backend.h"
#include "cost.h"
#include "histogram.h"
#include "loadfile.h"
#include "noise.h"
#include "priority.h"
#include "trace.h"
#include "util.h"

struct run_config {
	const struct loadfile *lf;
	const struct backend *backend;
	/* Every backend built, NULL-terminated, or NULL for `backend` alone:
	 * --json records each one's settings, whichever ran. */
	const struct backend *const *all_backends;
	struct backend_config bcfg;  /* also how many clients, and processes or threads */
	double timelimit;        /* execute seconds; 0: no limit (--run-once) */
	double warmup;           /* minimum seconds before the execute phase */
	bool warmup_exact;       /* warm-up lasts exactly `warmup`, counted bytes or not */
	double target_rate;      /* MB/sec per client; 0: as fast as it goes */
	double timeout;          /* seconds an exchange may take before the run fails; 0: none */
	unsigned reconnect;      /* a new connection every N operations, timed as Connect; 0: never */
	uint64_t inject_ns;      /* --inject-ns: a known cost spun after each exchange; 0: none */
	bool run_once;           /* one pass of the loadfile per client */
	bool show_execute_time;  /* mmtests' "completed in" line per pass */
	bool cost;               /* report what the execute phase cost (--cost, --json); sampled always */
	bool perf;               /* with cost: perf_event_open counters too (--perf) */
	const struct cpu_list *cpus;  /* --cpus: client i pinned to entry i, or NULL */
	double start_at;         /* --start-at: CLOCK_REALTIME seconds to start the warm-up at; 0: none */
	struct trace *trace;     /* --trace: loaded and attached, not yet on; NULL without */
};

/* With processes, the clients (threads) each client process runs. */
static inline unsigned run_per_process(const struct run_config *cfg)
{
	return cfg->bcfg.clients_per_process ? cfg->bcfg.clients_per_process : 1;
}

/* Processes that run clients: the figure dbench prints as "procs". */
static inline unsigned run_procs(const struct run_config *cfg)
{
	unsigned per = run_per_process(cfg);

	return cfg->bcfg.processes ? (cfg->bcfg.nclients + per - 1) / per : 1;
}

/* One client's figures. Histograms and `bytes` cover the execute phase.
 * Its latency histograms, one an operation, are kept by rows (a row: one
 * power of two's buckets of one operation), handed out from row[] in the
 * order the client first needs them: the rows it uses sit together, a
 * quarter or less of the pages whole histograms would touch. */
enum { STATS_ROWS = OP_COUNT * HIST_ROWS };
_Static_assert(STATS_ROWS < UINT16_MAX, "client_stats: a row's index fits row_of[]");
struct client_stats {
	uint64_t bytes;          /* counted payload, execute phase */
	uint64_t bytes_all;      /* counted payload, every phase */
	uint64_t ops_all;        /* operations done, every phase */
	uint64_t passes;         /* whole passes of the loadfile */
	uint64_t wire_bytes;     /* bytes sent and received, execute phase */
	double cpu_user, cpu_sys;  /* the client's own CPU seconds */
	uint64_t backend[BACKEND_COUNTERS];  /* the backend's counters(), whole run */
	uint32_t used_ops;       /* a bit per operation that has counted */
	uint32_t rows_used;
	struct hist_tally lat[OP_COUNT];
	uint16_t row_of[OP_COUNT][HIST_ROWS];   /* 1 + the index of its row in row[]; 0: none */
	uint32_t row[STATS_ROWS][HIST_SUB];     /* last: 152 KiB a client, most never touched */
};
_Static_assert(offsetof(struct client_stats, row) + sizeof(((struct client_stats *)0)->row) ==
	       sizeof(struct client_stats), "client_stats: row[] is its last member");

static inline bool stats_op_used(const struct client_stats *c, int op)
{
	return c->used_ops >> op & 1u;
}

static inline void stats_record(struct client_stats *c, int op, uint64_t ns)
{
	unsigned i = hist_index(ns);
	uint16_t *row = &c->row_of[op][i >> HIST_SUB_BITS];

	if (__builtin_expect(*row == 0, 0))
		*row = (uint16_t)++c->rows_used;
	c->row[*row - 1][i & (HIST_SUB - 1)]++;
	hist_tally_add(&c->lat[op], ns);
	c->used_ops |= 1u << op;
}

/* Every histogram empty again, touching only the rows in use. */
static inline void stats_clear_ops(struct client_stats *c)
{
	memset(c->row, 0, c->rows_used * sizeof(c->row[0]));
	memset(c->row_of, 0, sizeof(c->row_of));
	memset(c->lat, 0, sizeof(c->lat));
	c->rows_used = 0;
	c->used_ops = 0;
}

/* Client c's histogram of operation op added to dst. */
static inline void stats_merge_op(struct histogram *dst, const struct client_stats *c, int op)
{
	hist_merge_rows(dst, &c->lat[op], c->row_of[op], c->row, c->rows_used);
}

enum run_status { RUN_OK, RUN_FAILED, RUN_INTERRUPTED };

struct run_result {
	enum run_status status;
	struct errbuf error;
	bool executed;           /* the execute phase began: there are figures */
	bool released;           /* the set-up was over: the clients were released */
	double execute_secs, total_secs;
	double setup_secs;       /* from the first client's start to the release */
	uint64_t max_latency_ns; /* dbench's max_latency: worst seen at a tick of the execute
				  * phase, operations still in flight included */
	unsigned nclients;
	struct client_stats *clients;      /* nclients of them, in the clients' own mapping */
	void *clients_map;                 /* which run_result_free() unmaps */
	size_t clients_map_size;
	struct histogram op[OP_COUNT];     /* every client's, merged */
	struct histogram all;              /* every operation of every client */
	uint64_t bytes, bytes_all, ops;
	double cpu_user, cpu_sys;          /* whole run: every thread and child */
	double cpu_clients_user, cpu_clients_sys;
	uint64_t wire_bytes;               /* execute phase, every client */
	uint64_t backend[BACKEND_COUNTERS];  /* the backend's counters(), every client, whole run */
	struct cost cost;                  /* the execute phase's start and end (perf: with cfg->perf) */
	struct trace_result trace;         /* --trace's totals of the execute phase */
	struct noise noise;                /* what else the machine did meanwhile; stalls */
	struct socket_readback socket;     /* client 0's first connection, if the backend says */
	enum driver_priority driver_priority;   /* the driver's, while it ran */
};

/* The phases of a run, in order. The clients read the current one from
 * the shared mapping (shared.h). PHASE_STOP: the execute phase is over
 * and the driver takes its last sample; the clients count nothing more and
 * wait, still there to be read, for PHASE_DONE. Observers never see it. */
enum phase { PHASE_SETUP, PHASE_WARMUP, PHASE_EXECUTE, PHASE_STOP, PHASE_DONE };

/* --show-execute-time: one record per pass, kept by its client and told
 * when the run is over, so that measuring writes nothing. */
struct pass_time {
	uint32_t took_ms, at_ms;
};

/* One progress tick's figures, those of dbench's line. */
struct run_progress {
	enum phase phase;        /* PHASE_WARMUP or PHASE_EXECUTE */
	unsigned clients;        /* warm-up: those that counted bytes; execute: all */
	unsigned long long lines_per_client;   /* loadfile lines reached, on average */
	double mb_per_sec;       /* the phase's bytes over its time so far */
	unsigned sec;            /* the whole second of the phase */
	double latency_ms;       /* worst since the last tick, operations in flight included */
};

/* What the driver tells while the run goes, from its own thread, in the
 * order it happens. Each callback may be NULL; each gets ctx back. The
 * driver prints nothing itself: what is shown, and where, is the
 * observer's choice. */
struct run_observer {
	void *ctx;
	/* Set-up, once a poll: `ready` of `total` clients (or processes) connected. */
	void (*prepared)(void *ctx, unsigned ready, unsigned total, double secs);
	/* --start-at: every client is ready `secs` before the instant. */
	void (*waiting)(void *ctx, double secs, double start_at);
	void (*released)(void *ctx);
	/* The clients were moved on: to the warm-up (or straight to the execute
	 * phase) at the release, to the execute phase after the warm-up, to
	 * PHASE_DONE when the run ends, however far it got. */
	void (*phase)(void *ctx, enum phase phase);
	void (*progress)(void *ctx, const struct run_progress *p);
	/* The end: `left` clients still finishing, `secs` into the phase it cut. */
	void (*cleanup)(void *ctx, unsigned left, double secs);
	/* --show-execute-time, after the run: the first `shown` of a client's
	 * `total` passes (the rest were counted, not timed). */
	void (*passes)(void *ctx, unsigned client, const struct pass_time *p, uint64_t shown,
		       uint64_t total);
	/* The run went on, but not as planned (its schedule slipped): a
	 * sentence starting "warning: ". */
	void (*warning)(void *ctx, const char *msg);
};

#endif
