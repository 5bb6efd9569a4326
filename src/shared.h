/* State shared by the driver and its clients, in one MAP_SHARED mapping so
 * that forked clients (--processes) and threads see the same words. */
#ifndef TBENCH_SHARED_H
#define TBENCH_SHARED_H

#include <limits.h>
#include <linux/futex.h>
#include <stdatomic.h>
#include <stdint.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "run.h"

/* STALLED: the driver gave up on the client (--timeout); it is not waited for. */
enum slot_state { SLOT_STARTING, SLOT_READY, SLOT_FINISHED, SLOT_FAILED, SLOT_STALLED };

/* One client's live counters, on a cache line of its own: written by its
 * client alone and read by the driver every poll. The slots are packed
 * together, apart from the clients' figures: the driver's pass over a
 * thousand clients reads a few pages, not a page per client. 128 bytes
 * apart, not 64: the CPUs' adjacent-line prefetchers fetch lines in pairs,
 * and two clients writing neighbouring lines slowed each other (nop at 2
 * clients: 0.94 of the bare loop at 64, 0.96 at 128; results/, harness). */
struct slot {
	_Alignas(128) _Atomic uint64_t bytes;   /* payload counted so far, every phase */
	_Atomic uint64_t lines;                /* loadfile lines reached, every pass (dbench's figure) */
	_Atomic uint64_t op_start_ns;          /* start of the operation in flight; 0: none */
	_Atomic uint64_t interval_max_ns;      /* worst latency since the driver last looked */
	_Atomic uint64_t finished_ns;
	_Atomic int state;
	_Atomic int tid;                       /* the task running the client, for --cost */
};

/* --show-execute-time: room for this many struct pass_time per client;
 * passes beyond are counted, not timed. */
enum { PASS_TIMES = 1 << 16 };

struct shared {
	_Atomic int phase;
	_Atomic int failed;
	_Atomic uint64_t start_ns;             /* when the clients were released */
	struct errbuf error;
	struct socket_readback socket;         /* client 0 writes it before it is ready */
	struct client_stats *stats;            /* one per client, in the same mapping; each
						* read by the driver once its client stopped */
	struct slot slot[];
};

/* The phase word is also a futex: clients waiting for the start sleep on it
 * (threads and forked processes alike, as the mapping is shared) instead of
 * polling, so hundreds of waiting clients cost nothing. */
static inline void phase_wait_while(struct shared *sh, int phase)
{
	while (atomic_load(&sh->phase) == phase)
		syscall(SYS_futex, &sh->phase, FUTEX_WAIT, phase, NULL, NULL, 0);
}

static inline void phase_set(struct shared *sh, int phase)
{
	atomic_store(&sh->phase, phase);
	syscall(SYS_futex, &sh->phase, FUTEX_WAKE, INT_MAX, NULL, NULL, 0);
}

/* client.c: everything one client does, in its own thread or process. */
int client_main(const struct run_config *cfg, void *backend_run,
		struct shared *sh, struct pass_time *passes, unsigned id);

#endif
