/* One client: connect, wait for the start, replay the loadfile, count.
 * The replay loop is the hot path: it allocates nothing, parses nothing and
 * makes no system call the backend does not make itself (but the sleeps a
 * loadfile's Sleep lines and timestamps, or -R, ask for). */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "clock.h"
#include "shared.h"

struct client {
	const struct run_config *cfg;
	void *backend_run;
	struct shared *sh;
	struct slot *slot;
	struct client_stats *st;
	struct pass_time *passes;   /* PASS_TIMES of them, or NULL */
	unsigned id;
	void *conn;
};

/* dbench's -R: before each operation, sleep for what the bytes since the
 * previous one are due at the target rate, in whole milliseconds, never
 * making up a shortfall later. */
struct rate {
	uint64_t last_bytes, last_ns;
};

/* The first failure wins the error message; the driver ends the run. */
static int client_fail(struct client *c, const struct op *op, const struct errbuf *err)
{
	int expected = 0;

	if (atomic_compare_exchange_strong(&c->sh->failed, &expected, 1)) {
		if (op)
			err_set(&c->sh->error, "client %u, %s line %u (%s): %s", c->id, c->cfg->lf->path,
				 op->line, smb_keyword(op->type), err->msg);
		else
			err_set(&c->sh->error, "client %u: %s",
				 c->id, err->msg);
	}
	atomic_store(&c->slot->state, SLOT_FAILED);
	return -1;
}

/* Every client is released at once by the driver flipping the phase. */
static int wait_for_start(struct client *c)
{
	atomic_store(&c->slot->op_start_ns, 0);
	atomic_store(&c->slot->state, SLOT_READY);
	phase_wait_while(c->sh, PHASE_SETUP);
	return atomic_load(&c->sh->phase) == PHASE_DONE ? -1 : 0;
}

static void record_pass(struct client *c, uint64_t pass_start, uint64_t now)
{
	uint64_t n = c->st->passes;

	if (!c->passes || n >= PASS_TIMES)
		return;
	c->passes[n] = (struct pass_time){
		.took_ms = (uint32_t)((now - pass_start) / 1000000),
		.at_ms = (uint32_t)((now - atomic_load(&c->sh->start_ns)) / 1000000),
	};
}

static uint64_t throttle(struct rate *r, double mb_per_sec, uint64_t bytes, uint64_t now)
{
	if (r->last_bytes == 0) {
		*r = (struct rate){ bytes, now };
		return now;
	}
	double due_ns = (double)(bytes - r->last_bytes) / mb_per_sec * 1e3 - (double)(now - r->last_ns);
	if (due_ns >= 1e6) {
		sleep_ns((uint64_t)(due_ns / 1e6) * 1000000);
		now = now_ns();
	}
	*r = (struct rate){ bytes, now };
	return now;
}

/* A timestamped line waits until its time into the pass, as dbench does. */
static uint64_t wait_until_due(uint64_t due, uint64_t now)
{
	if (due <= now)
		return now;
	sleep_ns(due - now);
	return now_ns();
}

/* What an operation does besides its exchange, and when it really starts. */
static uint64_t before_op(struct client *c, struct rate *rate, const struct op *op,
			  uint64_t pass_start, uint64_t now)
{
	if (c->cfg->target_rate <= 0 && !op->due_ms)
		return now;
	/* A wait -R or the loadfile's timestamps ask for is no exchange in
	 * flight: neither --timeout nor the progress lines' latency counts it,
	 * however long the loadfile makes it. */
	atomic_store_explicit(&c->slot->op_start_ns, 0, memory_order_relaxed);
	if (c->cfg->target_rate > 0)
		return throttle(rate, c->cfg->target_rate, c->st->bytes_all, now);
	return wait_until_due(pass_start + op->due_ms * 1000000ull, now);
}

/* A connection; out of descriptors, the error says which limit to raise. */
static int open_conn(const struct run_config *cfg, void *backend_run, unsigned id, void **conn,
		     struct errbuf *err)
{
	if (cfg->backend->open(backend_run, &cfg->bcfg, id, conn, err) == 0)
		return 0;
	if (errno == EMFILE || errno == ENFILE) {
		struct rlimit rl;
		struct errbuf why = *err;
		getrlimit(RLIMIT_NOFILE, &rl);
		err_set(err, "%s (%s: this process may have %llu open; raise ulimit -n, and as "
			"root ulimit -Hn, or run fewer clients in a process: processes, or "
			"--clients-per-process)", why.msg,
			errno == EMFILE ? "RLIMIT_NOFILE" : "fs.file-max, the system's limit",
			(unsigned long long)rl.rlim_cur);
	}
	return -1;
}

/* The backend's own counts of a connection, kept before it closes. */
static void close_conn(struct client *c)
{
	const struct backend *be = c->cfg->backend;

	if (be->counters)
		be->counters(c->conn, c->st->backend);
	be->close(c->conn);
	c->conn = NULL;
}

/* --reconnect: the connection closed and opened again, timed as an
 * operation of its own (Connect), as netperf's TCP_CRR does. */
static uint64_t reconnect(struct client *c, uint64_t t_start, struct errbuf *err)
{
	close_conn(c);
	if (open_conn(c->cfg, c->backend_run, c->id, &c->conn, err) < 0)
		return 0;
	uint64_t t = now_ns();
	stats_record(c->st, OP_CONNECT, t - t_start);
	return t;
}

/* --inject-ns: a cost known exactly, spun on the run's clock (a sleep
 * would give the CPU away and wake late, costing more than asked). */
static void spin_for(uint64_t ns)
{
	const uint64_t until = now_ns() + ns;

	while (now_ns() < until) {
#if defined(__x86_64__)
		__builtin_ia32_pause();   /* kinder to a sibling hyperthread; no time of its own */
#endif
	}
}

static int replay(struct client *c)
{
	const struct run_config *cfg = c->cfg;
	const struct op *begin = cfg->lf->ops, *end = begin + cfg->lf->n_ops;
	int (*exchange)(void *, uint32_t, uint32_t, struct errbuf *) = cfg->backend->exchange;
	struct slot *slot = c->slot;
	struct client_stats *st = c->st;
	const uint32_t name_extra = client_name_extra(c->id);
	int phase = atomic_load(&c->sh->phase);
	uint64_t t_prev = now_ns(), lines = 0;
	const unsigned every = cfg->reconnect;
	const uint64_t inject_ns = cfg->inject_ns;
	unsigned until_reconnect = every;
	struct rate rate = { 0, 0 };
	struct errbuf err;

	for (;; lines += cfg->lf->n_lines) {
		uint64_t t_pass = t_prev;

		for (const struct op *op = begin; op < end; op++) {
			uint64_t t_start = before_op(c, &rate, op, t_pass, t_prev);
			atomic_store_explicit(&slot->lines, lines + op->line, memory_order_relaxed);
			atomic_store_explicit(&slot->op_start_ns, t_start, memory_order_relaxed);
			uint32_t send = op_send_bytes(op, name_extra);
			if (every && op->exchanges && --until_reconnect == 0) {
				until_reconnect = every;
				if (!(t_start = reconnect(c, t_start, &err)))
					return client_fail(c, op, &err);
			}
			if (op->exchanges) {
				if (exchange(c->conn, send, op->recv, &err) < 0)
					return client_fail(c, op, &err);
				if (inject_ns)   /* off: this one branch, always taken the same way */
					spin_for(inject_ns);
			} else if (op->sleep_us) {
				sleep_ns(op->sleep_us * 1000ull);
			}
			/* A TSC read may run a few ns ahead of the code before it. */
			uint64_t t = now_ns(), lat = t > t_start ? t - t_start : 0;
			t_prev = t;

			int now_phase = atomic_load_explicit(&c->sh->phase, memory_order_relaxed);
			if (now_phase != phase) {
				/* The warm-up's counts are not the execute phase's, even
				 * when no operation of the execute phase finished. */
				if (phase != PHASE_EXECUTE) {
					stats_clear_ops(st);
					st->bytes = st->wire_bytes = 0;
				}
				if (now_phase == PHASE_STOP || now_phase == PHASE_DONE) {
					/* Finished after the end: not counted. */
					phase_wait_while(c->sh, PHASE_STOP);
					return 0;
				}
				phase = now_phase;
			}
			stats_record(st, op->type, lat);
			st->bytes += op->payload;
			st->wire_bytes += op->exchanges ? send + op->recv : 0;
			st->bytes_all += op->payload;
			st->ops_all++;
			atomic_store_explicit(&slot->bytes, st->bytes_all, memory_order_relaxed);
			if (lat > atomic_load_explicit(&slot->interval_max_ns, memory_order_relaxed))
				atomic_store_explicit(&slot->interval_max_ns, lat, memory_order_relaxed);
		}
		record_pass(c, t_pass, t_prev);
		st->passes++;
		if (cfg->run_once)
			return 0;
	}
}

static void record_cpu(struct client_stats *st, int who)
{
	struct rusage ru;

	if (getrusage(who, &ru) == 0) {
		st->cpu_user = ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6;
		st->cpu_sys = ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6;
	}
}

/* Run-once: the client (and its server) stays until the driver has
 * taken the last sample of the execute phase, which counts its CPU. */
static void linger(struct client *c)
{
	atomic_store(&c->slot->state, SLOT_FINISHED);
	for (int phase; (phase = atomic_load(&c->sh->phase)) != PHASE_DONE;)
		phase_wait_while(c->sh, phase);
}

int client_main(const struct run_config *cfg, void *backend_run, struct shared *sh,
		struct pass_time *passes, unsigned id)
{
	struct client c = { cfg, backend_run, sh, &sh->slot[id], &sh->stats[id], passes, id, NULL };
	const struct backend *be = cfg->backend;
	struct errbuf err;
	int rc = -1;

	atomic_store(&c.slot->tid, (int)syscall(SYS_gettid));
	/* The set-up is in flight for the driver's watchdog until the client is ready. */
	atomic_store(&c.slot->op_start_ns, now_ns());
	if (open_conn(cfg, backend_run, id, &c.conn, &err) < 0)
		return client_fail(&c, NULL, &err);
	if (id == 0 && be->socket_info)   /* once, outside the replay loop */
		be->socket_info(c.conn, &sh->socket);
	/* dbench's connection set-up exchange; not counted. */
	if (be->exchange(c.conn, SMB_SETUP_SEND, SMB_SETUP_RECV, &err) < 0)
		client_fail(&c, NULL, &err);
	else if (wait_for_start(&c) == 0)
		rc = replay(&c);
	else
		rc = 0;
	atomic_store(&c.slot->op_start_ns, 0);
	atomic_store(&c.slot->finished_ns, now_ns());
	if (rc == 0 && cfg->run_once)
		linger(&c);
	if (c.conn)   /* none when --reconnect's open failed */
		close_conn(&c);
	record_cpu(c.st, backend_solo_processes(&cfg->bcfg) ? RUSAGE_SELF : RUSAGE_THREAD);
	if (rc == 0)
		atomic_store(&c.slot->state, SLOT_FINISHED);
	return rc;
}
