/* One client: connect, wait for the start, replay the loadfile, count.
 * The replay loop is the hot path: it allocates nothing, parses nothing and
 * makes no system call the backend does not make itself. */
#include "config.h"

#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "shared.h"

struct client {
	const struct run_config *cfg;
	struct shared *sh;
	struct slot *slot;
	unsigned id;
	void *conn;
};

/* The first failure wins the error message; the driver ends the run. */
static int client_fail(struct client *c, const struct op *op, const struct errbuf *err)
{
	int expected = 0;

	if (atomic_compare_exchange_strong(&c->sh->failed, &expected, 1)) {
		if (op)
			snprintf(c->sh->error, sizeof(c->sh->error),
				 "client %u, %s line %u (%s): %s", c->id, c->cfg->lf->path,
				 op->line, smb_keyword(op->type), err->msg);
		else
			snprintf(c->sh->error, sizeof(c->sh->error), "client %u: %s",
				 c->id, err->msg);
	}
	atomic_store(&c->slot->state, SLOT_FAILED);
	return -1;
}

/* Every client is released at once by the driver flipping the phase. */
static int wait_for_start(struct client *c)
{
	atomic_store(&c->slot->state, SLOT_READY);
	phase_wait_while(c->sh, PHASE_SETUP);
	return atomic_load(&c->sh->phase) == PHASE_DONE ? -1 : 0;
}

/* mmtests' --show-execute-time line, written in one piece. */
static void show_pass(const struct client *c, uint64_t pass_start, uint64_t now)
{
	char line[96];
	uint64_t start = atomic_load(&c->sh->start_ns);
	int n = snprintf(line, sizeof(line), "%4u completed in %llu ms at time %llu ms\n",
			 c->id, (unsigned long long)((now - pass_start) / 1000000),
			 (unsigned long long)((now - start) / 1000000));

	if (write(STDOUT_FILENO, line, (size_t)n) < 0) {
		/* stdout gone: the run still counts */
	}
}

/* With -R: sleep until the bytes so far are due at the target rate. */
static uint64_t throttle(const struct client *c, uint64_t bytes_all, uint64_t start, uint64_t now)
{
	double secs = (double)bytes_all / (c->cfg->target_rate * 1e6);
	uint64_t due = start + (uint64_t)(secs * 1e9);

	if (due <= now)
		return now;
	sleep_ns(due - now);
	return now_ns();
}

static int replay(struct client *c)
{
	const struct run_config *cfg = c->cfg;
	const struct op *begin = cfg->lf->ops, *end = begin + cfg->lf->n_ops;
	int (*exchange)(void *, uint32_t, uint32_t, struct errbuf *) = cfg->backend->exchange;
	struct slot *slot = c->slot;
	struct client_stats *st = &slot->stats;
	const uint32_t name_extra = client_name_extra(c->id);
	int phase = atomic_load(&c->sh->phase);
	uint64_t t_prev = now_ns(), t_start = t_prev;
	struct errbuf err;

	for (;;) {
		uint64_t t_pass = t_prev;

		for (const struct op *op = begin; op < end; op++) {
			if (op->exchanges) {
				if (exchange(c->conn, op_send_bytes(op, name_extra), op->recv, &err) < 0)
					return client_fail(c, op, &err);
			} else if (op->sleep_ms) {
				sleep_ns(op->sleep_ms * 1000000ull);
			}
			uint64_t t = now_ns(), lat = t - t_prev;
			t_prev = t;

			int now_phase = atomic_load_explicit(&c->sh->phase, memory_order_relaxed);
			if (now_phase != phase) {
				if (now_phase == PHASE_DONE)
					return 0;   /* finished after the end: not counted */
				memset(st->op, 0, sizeof(st->op));
				st->bytes = 0;
				phase = now_phase;
			}
			hist_record(&st->op[op->type], lat);
			st->bytes += op->payload;
			st->bytes_all += op->payload;
			st->ops_all++;
			atomic_store_explicit(&slot->bytes, st->bytes, memory_order_relaxed);
			atomic_store_explicit(&slot->ops, st->ops_all, memory_order_relaxed);
			if (lat > atomic_load_explicit(&slot->interval_max_ns, memory_order_relaxed))
				atomic_store_explicit(&slot->interval_max_ns, lat, memory_order_relaxed);
			if (cfg->target_rate > 0)
				t_prev = throttle(c, st->bytes_all, t_start, t);
		}
		st->passes++;
		if (cfg->show_execute_time)
			show_pass(c, t_pass, t_prev);
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

int client_main(const struct run_config *cfg, void *backend_run, struct shared *sh, unsigned id)
{
	struct client c = { cfg, sh, &sh->slot[id], id, NULL };
	const struct backend *be = cfg->backend;
	struct errbuf err;
	int rc = -1;

	if (be->open(backend_run, &cfg->bcfg, id, &c.conn, &err) < 0)
		return client_fail(&c, NULL, &err);
	/* dbench's connection set-up exchange; not counted. */
	if (be->exchange(c.conn, SMB_SETUP_SEND, SMB_SETUP_RECV, &err) < 0)
		client_fail(&c, NULL, &err);
	else if (wait_for_start(&c) == 0)
		rc = replay(&c);
	else
		rc = 0;
	atomic_store(&c.slot->finished_ns, now_ns());
	be->close(c.conn);
	record_cpu(&c.slot->stats, cfg->bcfg.processes ? RUSAGE_SELF : RUSAGE_THREAD);
	if (rc == 0)
		atomic_store(&c.slot->state, SLOT_FINISHED);
	return rc;
}
