/* The driver: starts the clients (threads, or processes with --processes),
 * releases them together, moves them through warm-up, execute and cleanup,
 * prints progress once a second and gathers their figures. */
#include "config.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "report.h"
#include "shared.h"

#define POLL_NS       100000000ull   /* how often the driver looks */
#define STOP_GRACE_NS 10000000000ull /* clients must stop within it after the end, even on a loaded machine */

static volatile sig_atomic_t stop_requested;

void driver_request_stop(void)
{
	stop_requested = 1;
}

struct driver {
	const struct run_config *cfg;
	struct shared *sh;
	size_t sh_size;
	void *backend_run;
	pthread_t *threads;
	pid_t *pids;
	struct client_arg { struct driver *d; unsigned id; } *args;
	unsigned started;
	uint64_t t0, exec_start, exec_end;
};

static void *client_thread(void *p)
{
	struct client_arg *a = p;

	client_main(a->d->cfg, a->d->backend_run, a->d->sh, a->id);
	return NULL;
}

static void set_error(struct driver *d, const char *msg)
{
	int expected = 0;

	if (atomic_compare_exchange_strong(&d->sh->failed, &expected, 1))
		snprintf(d->sh->error, sizeof(d->sh->error), "%s", msg);
}

/* Threads start with Ctrl-C blocked: only the driver handles it. */
static int spawn_threads(struct driver *d, struct errbuf *err)
{
	sigset_t block, old;

	sigemptyset(&block);
	sigaddset(&block, SIGINT);
	sigaddset(&block, SIGTERM);
	pthread_sigmask(SIG_BLOCK, &block, &old);
	for (; d->started < d->cfg->bcfg.nclients; d->started++) {
		d->args[d->started] = (struct client_arg){ d, d->started };
		int rc = pthread_create(&d->threads[d->started], NULL, client_thread,
					&d->args[d->started]);
		if (rc) {
			errno = rc;
			err_errno(err, "starting client thread %u of %u (raise ulimit -u?)",
				  d->started, d->cfg->bcfg.nclients);
			break;
		}
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	return d->started == d->cfg->bcfg.nclients ? 0 : -1;
}

static int spawn_processes(struct driver *d, struct errbuf *err)
{
	fflush(NULL);
	for (; d->started < d->cfg->bcfg.nclients; d->started++) {
		pid_t pid = fork();
		if (pid < 0)
			return err_errno(err, "forking client %u of %u (raise ulimit -u?)",
					 d->started, d->cfg->bcfg.nclients);
		if (pid == 0) {
			signal(SIGINT, SIG_IGN);
			signal(SIGTERM, SIG_DFL);
			_exit(client_main(d->cfg, d->backend_run, d->sh, d->started) == 0 ? 0 : 1);
		}
		d->pids[d->started] = pid;
	}
	return 0;
}

/* A forked client that vanished without saying why ends the run. */
static void reap_dead(struct driver *d)
{
	for (unsigned i = 0; d->pids && i < d->started; i++) {
		int status;
		if (d->pids[i] <= 0 || waitpid(d->pids[i], &status, WNOHANG) <= 0)
			continue;
		d->pids[i] = 0;
		int state = atomic_load(&d->sh->slot[i].state);
		if (state == SLOT_FINISHED || state == SLOT_FAILED)
			continue;
		char msg[128];
		if (WIFSIGNALED(status))
			snprintf(msg, sizeof(msg), "client %u died: killed by signal %d (%s)",
				 i, WTERMSIG(status), strsignal(WTERMSIG(status)));
		else
			snprintf(msg, sizeof(msg), "client %u exited with status %d before finishing",
				 i, WEXITSTATUS(status));
		set_error(d, msg);
	}
}

static unsigned count_state(const struct driver *d, int want_ready)
{
	unsigned n = 0;

	for (unsigned i = 0; i < d->started; i++) {
		int s = atomic_load(&d->sh->slot[i].state);
		n += want_ready ? s != SLOT_STARTING : (s == SLOT_FINISHED || s == SLOT_FAILED);
	}
	return n;
}

static int wait_ready(struct driver *d)
{
	while (count_state(d, 1) < d->cfg->bcfg.nclients) {
		reap_dead(d);
		if (atomic_load(&d->sh->failed) || stop_requested)
			return -1;
		sleep_ns(1000000);
	}
	return atomic_load(&d->sh->failed) ? -1 : 0;
}

static void progress(struct driver *d, uint64_t now, int phase)
{
	uint64_t bytes = 0, ops = 0, worst = 0;

	for (unsigned i = 0; i < d->started; i++) {
		struct slot *s = &d->sh->slot[i];
		bytes += atomic_load_explicit(&s->bytes, memory_order_relaxed);
		ops += atomic_load_explicit(&s->ops, memory_order_relaxed);
		uint64_t m = atomic_exchange_explicit(&s->interval_max_ns, 0, memory_order_relaxed);
		if (m > worst)
			worst = m;
	}
	if (d->cfg->quiet)
		return;
	uint64_t since = phase == PHASE_EXECUTE ? d->exec_start : d->t0;
	double secs = (double)(now - since) / 1e9;
	report_progress(stdout, phase == PHASE_EXECUTE ? "execute" : "warmup", d->cfg->bcfg.nclients,
			ops / d->cfg->bcfg.nclients, secs > 0 ? bytes / 1e6 / secs : 0, secs, worst / 1e6);
}

/* Warm-up, execute, and the end: by time limit, run-once, error or Ctrl-C. */
static enum run_status run_phases(struct driver *d)
{
	const struct run_config *cfg = d->cfg;
	uint64_t warmup_ns = (uint64_t)(cfg->warmup * 1e9);
	uint64_t limit_ns = (uint64_t)(cfg->timelimit * 1e9);
	int phase = warmup_ns ? PHASE_WARMUP : PHASE_EXECUTE;

	d->t0 = d->exec_start = now_ns();
	atomic_store(&d->sh->start_ns, d->t0);
	phase_set(d->sh, phase);
	for (uint64_t next_tick = d->t0 + 1000000000u;;) {
		uint64_t now = now_ns();
		uint64_t wake = next_tick < now + POLL_NS ? next_tick : now + POLL_NS;
		if (wake > now)
			sleep_ns(wake - now);
		now = now_ns();
		reap_dead(d);
		if (stop_requested)
			return d->exec_end = now, RUN_INTERRUPTED;
		if (atomic_load(&d->sh->failed))
			return d->exec_end = now, RUN_FAILED;
		if (count_state(d, 0) == cfg->bcfg.nclients) {
			d->exec_end = 0;   /* run-once: ends when the last client did */
			for (unsigned i = 0; i < cfg->bcfg.nclients; i++) {
				uint64_t f = atomic_load(&d->sh->slot[i].finished_ns);
				if (f > d->exec_end)
					d->exec_end = f;
			}
			return RUN_OK;
		}
		if (phase == PHASE_EXECUTE && limit_ns && now >= d->exec_start + limit_ns)
			return d->exec_end = now, RUN_OK;
		if (now >= next_tick) {
			progress(d, now, phase);
			next_tick += 1000000000u;
		}
		if (phase == PHASE_WARMUP && now >= d->t0 + warmup_ns) {
			phase = PHASE_EXECUTE;
			d->exec_start = now;
			phase_set(d->sh, phase);
		}
	}
}

/* Every client stops after its current operation; one that does not within
 * the grace period is stuck in its backend, and the run has failed. */
static int stop_clients(struct driver *d)
{
	uint64_t deadline = now_ns() + STOP_GRACE_NS;
	int stuck = 0;

	phase_set(d->sh, PHASE_DONE);
	while (count_state(d, 0) < d->started && now_ns() < deadline) {
		reap_dead(d);
		sleep_ns(1000000);
	}
	for (unsigned i = 0; i < d->started; i++) {
		int s = atomic_load(&d->sh->slot[i].state);
		if (s == SLOT_FINISHED || s == SLOT_FAILED) {
			if (d->threads)
				pthread_join(d->threads[i], NULL);
			else if (d->pids[i] > 0)
				while (waitpid(d->pids[i], NULL, 0) < 0 && errno == EINTR)
					;
			continue;
		}
		if (!stuck++) {
			char msg[160];
			snprintf(msg, sizeof(msg), "client %u did not stop within %.0f s of the end "
				 "of the run: stuck in backend %s", i, STOP_GRACE_NS / 1e9,
				 d->cfg->backend->name);
			set_error(d, msg);
		}
		if (d->pids && d->pids[i] > 0) {
			kill(d->pids[i], SIGKILL);
			waitpid(d->pids[i], NULL, 0);
		}
	}
	return stuck ? -1 : 0;
}

static void add_cpu(double *user, double *sys, int who)
{
	struct rusage ru;

	if (getrusage(who, &ru) == 0) {
		*user += ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6;
		*sys += ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6;
	}
}

static int collect(struct driver *d, struct run_result *res)
{
	res->nclients = d->cfg->bcfg.nclients;
	res->clients = calloc(d->cfg->bcfg.nclients, sizeof(*res->clients));
	if (!res->clients)
		return -1;
	for (unsigned i = 0; i < d->cfg->bcfg.nclients; i++) {
		const struct client_stats *st = &d->sh->slot[i].stats;
		res->clients[i] = *st;
		res->bytes += st->bytes;
		res->bytes_all += st->bytes_all;
		res->cpu_clients_user += st->cpu_user;
		res->cpu_clients_sys += st->cpu_sys;
		for (int op = 0; op < OP_COUNT; op++) {
			hist_merge(&res->op[op], &st->op[op]);
			hist_merge(&res->all, &st->op[op]);
		}
	}
	res->ops = res->all.count;
	add_cpu(&res->cpu_user, &res->cpu_sys, RUSAGE_SELF);
	add_cpu(&res->cpu_user, &res->cpu_sys, RUSAGE_CHILDREN);
	return 0;
}

static int driver_init(struct driver *d, const struct run_config *cfg, struct errbuf *err)
{
	memset(d, 0, sizeof(*d));
	d->cfg = cfg;
	d->sh_size = sizeof(struct shared) + cfg->bcfg.nclients * sizeof(struct slot);
	d->sh = mmap(NULL, d->sh_size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (d->sh == MAP_FAILED) {
		d->sh = NULL;
		return err_errno(err, "mapping %zu bytes of shared counters", d->sh_size);
	}
	if (cfg->bcfg.processes)
		d->pids = calloc(cfg->bcfg.nclients, sizeof(*d->pids));
	else {
		d->threads = calloc(cfg->bcfg.nclients, sizeof(*d->threads));
		d->args = calloc(cfg->bcfg.nclients, sizeof(*d->args));
	}
	if (cfg->bcfg.processes ? !d->pids : !d->threads || !d->args)
		return err_set(err, "out of memory for %u clients", cfg->bcfg.nclients);
	if (cfg->backend->start && cfg->backend->start(&cfg->bcfg, &d->backend_run, err) < 0)
		return -1;
	return 0;
}

static void driver_free(struct driver *d, bool clients_stuck)
{
	if (d->cfg->backend->stop && d->backend_run && !clients_stuck)
		d->cfg->backend->stop(d->backend_run);
	/* A stuck thread may still touch the shared map: the process exits soon anyway. */
	if (d->sh && !clients_stuck)
		munmap(d->sh, d->sh_size);
	free(d->threads);
	free(d->pids);
	free(d->args);
}

enum run_status driver_run(const struct run_config *cfg, struct run_result *res)
{
	struct driver d;
	struct errbuf err;
	enum run_status status = RUN_FAILED;
	bool stuck = false;

	memset(res, 0, sizeof(*res));
	if (driver_init(&d, cfg, &err) < 0) {
		snprintf(res->error, sizeof(res->error), "%s", err.msg);
		driver_free(&d, false);
		return res->status = RUN_FAILED;
	}
	int spawned = cfg->bcfg.processes ? spawn_processes(&d, &err) : spawn_threads(&d, &err);
	if (spawned < 0)
		set_error(&d, err.msg);
	else if (wait_ready(&d) == 0)
		status = run_phases(&d);
	else if (stop_requested && !atomic_load(&d.sh->failed))
		status = RUN_INTERRUPTED;

	stuck = stop_clients(&d) < 0;
	if (!cfg->quiet && d.t0)
		report_cleanup(stdout, cfg->bcfg.nclients, (now_ns() - d.t0) / 1e9);
	if (atomic_load(&d.sh->failed))
		status = RUN_FAILED;
	if (d.exec_end > d.exec_start && d.t0)
		res->execute_secs = (d.exec_end - d.exec_start) / 1e9;
	res->total_secs = d.t0 ? (now_ns() - d.t0) / 1e9 : 0;
	snprintf(res->error, sizeof(res->error), "%s", d.sh->error);
	if (collect(&d, res) < 0 && status == RUN_OK) {
		snprintf(res->error, sizeof(res->error), "out of memory collecting results");
		status = RUN_FAILED;
	}
	driver_free(&d, stuck);
	return res->status = status;
}

void run_result_free(struct run_result *res)
{
	free(res->clients);
	res->clients = NULL;
}
