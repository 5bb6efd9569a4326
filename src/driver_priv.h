/* What the driver's two files share: struct driver, the state of one run,
 * and the functions each calls of the other (driver.c: the phases, the
 * release and gathering; driver_clients.c: starting, watching and
 * stopping the clients). Private to them. */
#ifndef TBENCH_DRIVER_PRIV_H
#define TBENCH_DRIVER_PRIV_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "driver.h"
#include "priority.h"
#include "shared.h"

#define POLL_NS   100000000ull    /* how often the driver looks */
#define TICK_NS  1000000000ull    /* progress lines, as dbench's SIGALRM */
#define STOP_GRACE_NS 30000000000ull  /* after the end, some client stops within it, on a loaded machine too */
#define STUCK_FACTOR 10               /* an exchange this many times the expected wait is stuck */
#define STOP_POLL_NS 10000000ull      /* how often the driver looks while they stop */
#define START_AT_LATE_S 1.0           /* --start-at: set-up may end this much after the instant */
#define LATE_NS   250000000ull    /* a progress line later than this is off its schedule */
#define RELEASE_NS 1000000000ull  /* every client begins its first operation within it */
#define SETUP_WINDOW_MIN 16        /* clients in their set-up at once, at least */
#define SPAWN_POLL_NS 1000000ull   /* how often the driver looks while it starts clients */
#define SAMPLE_LATE_SHARE 0.02     /* a first sample later than this share of the execute phase is said */

struct driver {
	const struct run_config *cfg;
	const struct run_observer *obs;  /* never NULL: an empty one when none was given */
	unsigned nclients, per_proc;
	struct shared *sh;
	size_t sh_size;
	uint64_t *base;                 /* each client's bytes when the execute phase began */
	struct pass_time *passes;       /* --show-execute-time: PASS_TIMES per client */
	size_t passes_size;
	void *backend_run;
	pthread_t *threads;
	pid_t *pids;                    /* one per client process */
	struct sigaction old_sigchld;   /* restored when the run ends */
	bool watching_children;         /* driver_watch_children() set its handler */
	struct client_arg { struct driver *d; unsigned id; } *args;
	unsigned started;               /* clients (threads) or processes started */
	unsigned setup_first;           /* no client before it is still in its set-up */
	uint64_t setup_start;           /* the first client started; t0: released */
	uint64_t t0, exec_start, exec_end, worst_ns;
	uint64_t longest_done_ns;       /* the longest operation completed, warm-up too */
	int phase;
	unsigned last_sec;              /* the phase's last progress line: its whole second, 0 before */
	unsigned late_lines, skipped;   /* lines later than LATE_NS; seconds that had none */
	uint64_t worst_late_ns;
	uint64_t all_began_ns;          /* when every client had begun an operation; 0: not yet */
	bool release_warned;
	struct cost cost;               /* counters, and the samples of the execute phase */
	struct noise noise;             /* sampled with the cost; the stall watch */
	pid_t *tids;                    /* the clients' tasks */
	uint64_t watch_lines, watch_progress_ns;  /* the run's lines, and when they last grew */
	pid_t driver_tid;               /* this thread: neither client nor server */
	enum driver_priority priority;  /* this thread's, above the clients where allowed */
	pthread_t sampler;              /* takes the execute phase's first sample */
	uint64_t first_read_ns;         /* when it was done */
	bool sampling;                  /* sampler started and not yet joined */
};

static inline bool slot_done(const struct slot *s)
{
	int state = atomic_load(&s->state);
	return state == SLOT_FINISHED || state == SLOT_FAILED || state == SLOT_STALLED;
}

/* driver.c: the first error of the run wins; the observer hears of a phase. */
__attribute__((format(printf, 2, 3)))
void driver_set_error(struct driver *d, const char *fmt, ...);
void driver_tell_phase(struct driver *d, enum phase phase);

/* driver_clients.c */
struct pass_time *driver_passes_of(struct driver *d, unsigned id);
/* While client processes run, their exits are noted by a SIGCHLD handler
 * that driver_reap_dead() reads: without one it asks nothing. */
int driver_watch_children(struct driver *d, struct errbuf *err);
void driver_unwatch_children(struct driver *d);
/* Starts clients, threads or processes of per_proc threads each, while
 * fewer than a few are in their set-up: 1 while some are still to start,
 * 0 when all have, -1 on failure. */
int driver_spawn_more(struct driver *d, struct errbuf *err);
/* The set-up cut short: the clients never started are done, so that
 * nobody waits for them to stop. */
void driver_forget_unstarted(struct driver *d);
/* A client process that vanished without saying why ends the run. */
void driver_reap_dead(struct driver *d);
unsigned driver_count_ready(const struct driver *d);
unsigned driver_count_done(const struct driver *d);
/* A client whose exchange (or set-up) is in flight past --timeout, while
 * the run stalled or others went far faster, fails the run, named;
 * the stall watch is fed every client's progress. */
void driver_watchdog(struct driver *d, uint64_t now);
void driver_watch_stalls(struct driver *d, uint64_t now);
/* Lines replayed by every client; *waiting: one of them is in a Sleep
 * line or waiting for -R's schedule, which is no stall. */
uint64_t driver_progress_of(const struct driver *d, bool *waiting);
/* The end: every client told to stop, waited for within a grace period;
 * how many are stuck. */
int driver_stop_clients(struct driver *d);
/* Joins and waits for the clients; true when a stuck one was left behind. */
bool driver_reap_all(struct driver *d, bool stuck);

#endif
