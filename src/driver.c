/* The driver: starts the clients (processes by default, as dbench; threads
 * with --threads), releases them together, moves them through warm-up,
 * execute and cleanup as dbench does, tells its observer how it goes,
 * watches every exchange against the timeout, and gathers the clients'
 * figures. It prints nothing: the observer does, or not. */
#include "config.h"

#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "cpulist.h"
#include "driver.h"
#include "shared.h"

#define POLL_NS   100000000ull    /* how often the driver looks */
#define TICK_NS  1000000000ull    /* progress lines, as dbench's SIGALRM */
#define STOP_GRACE_NS 30000000000ull  /* clients stop within it after the end, on a loaded machine too */
#define START_AT_LATE_S 1.0           /* --start-at: set-up may end this much after the instant */
#define LATE_NS   250000000ull    /* a progress line later than this is off its schedule */
#define RELEASE_NS 1000000000ull  /* every client begins its first operation within it */

static volatile sig_atomic_t stop_requested;

void driver_request_stop(void)
{
	stop_requested = 1;
}

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
	struct client_arg { struct driver *d; unsigned id; } *args;
	unsigned started;               /* clients (threads) or processes started */
	uint64_t t0, exec_start, exec_end, worst_ns;
	int phase;
	unsigned last_sec;              /* the phase's last progress line: its whole second, 0 before */
	unsigned late_lines, skipped;   /* lines later than LATE_NS; seconds that had none */
	uint64_t worst_late_ns;
	uint64_t all_began_ns;          /* when every client had begun an operation; 0: not yet */
	bool release_warned;
	struct cost cost;               /* counters, and the samples of the execute phase */
	struct noise noise;             /* sampled with the cost; the stall watch */
	pid_t *tids;                    /* the clients' tasks */
};

static void set_error(struct driver *d, const char *msg)
{
	int expected = 0;

	if (atomic_compare_exchange_strong(&d->sh->failed, &expected, 1))
		snprintf(d->sh->error, sizeof(d->sh->error), "%s", msg);
}

__attribute__((format(printf, 2, 3)))
static void warn(struct driver *d, const char *fmt, ...)
{
	char msg[600];
	va_list ap;

	if (!d->obs->warning)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	d->obs->warning(d->obs->ctx, msg);
}

static void tell_phase(struct driver *d, enum phase phase)
{
	if (d->obs->phase)
		d->obs->phase(d->obs->ctx, phase);
}

static struct pass_time *passes_of(struct driver *d, unsigned id)
{
	return d->passes ? d->passes + (size_t)id * PASS_TIMES : NULL;
}

/* --cpus: the calling thread, which runs client `id`, on the list's entry
 * id. A client that cannot be pinned fails, and so does the run. */
static int pin_client(struct driver *d, unsigned id)
{
	struct errbuf err;
	char who[32];

	snprintf(who, sizeof(who), "client %u", id);
	if (cpu_list_pin(d->cfg->cpus, id, 0, who, &err) == 0)
		return 0;
	set_error(d, err.msg);
	atomic_store(&d->sh->slot[id].state, SLOT_FAILED);
	return -1;
}

static void *client_thread(void *p)
{
	struct client_arg *a = p;

	if (pin_client(a->d, a->id) == 0)
		client_main(a->d->cfg, a->d->backend_run, a->d->sh, passes_of(a->d, a->id), a->id);
	return NULL;
}

/* Client threads start with Ctrl-C blocked: only the driver handles it. */
static int start_threads(struct driver *d, unsigned first, unsigned n, pthread_t *threads,
			 struct errbuf *err)
{
	sigset_t block, old;
	unsigned i;

	sigemptyset(&block);
	sigaddset(&block, SIGINT);
	sigaddset(&block, SIGTERM);
	pthread_sigmask(SIG_BLOCK, &block, &old);
	for (i = 0; i < n; i++) {
		d->args[first + i] = (struct client_arg){ d, first + i };
		int rc = pthread_create(&threads[i], NULL, client_thread, &d->args[first + i]);
		if (rc) {
			errno = rc;
			err_errno(err, "starting client thread %u of %u (raise ulimit -u?)",
				  first + i, d->nclients);
			break;
		}
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	return (int)i;
}

/* A client process: its clients run as threads, the first in main(). It
 * dies with tbench, even when tbench is killed with SIGKILL. */
static void client_process(struct driver *d, unsigned proc, pid_t parent)
{
	unsigned first = proc * d->per_proc;
	unsigned n = d->nclients - first < d->per_proc ? d->nclients - first : d->per_proc;
	pthread_t threads[n > 1 ? n - 1 : 1];
	struct errbuf err;
	int rc = 0;

	if (die_with_parent(parent, SIGKILL) < 0)
		_exit(1);
	signal(SIGINT, SIG_IGN);
	signal(SIGTERM, SIG_DFL);
	if (pin_client(d, first) < 0) {
		for (unsigned i = 1; i < n; i++)   /* never started: nobody waits for them */
			atomic_store(&d->sh->slot[first + i].state, SLOT_FAILED);
		_exit(1);
	}
	int extra = n > 1 ? start_threads(d, first + 1, n - 1, threads, &err) : 0;
	if (extra < (int)n - 1)
		set_error(d, err.msg);
	else
		rc = client_main(d->cfg, d->backend_run, d->sh, passes_of(d, first), first);
	for (int i = 0; i < extra; i++)
		pthread_join(threads[i], NULL);
	_exit(rc == 0 ? 0 : 1);
}

static int spawn(struct driver *d, struct errbuf *err)
{
	if (!d->cfg->bcfg.processes) {
		d->started = (unsigned)start_threads(d, 0, d->nclients, d->threads, err);
		return d->started == d->nclients ? 0 : -1;
	}
	unsigned nprocs = run_procs(d->cfg);
	pid_t parent = getpid();

	fflush(NULL);   /* nothing buffered is copied into the children */
	for (; d->started < nprocs; d->started++) {
		pid_t pid = fork();
		if (pid < 0)
			return err_errno(err, "forking client process %u of %u (raise ulimit -u?)",
					 d->started, nprocs);
		if (pid == 0)
			client_process(d, d->started, parent);
		d->pids[d->started] = pid;
	}
	return 0;
}

static bool slot_done(const struct slot *s)
{
	int state = atomic_load(&s->state);
	return state == SLOT_FINISHED || state == SLOT_FAILED || state == SLOT_STALLED;
}

static bool slot_stalled(const struct slot *s)
{
	return atomic_load(&s->state) == SLOT_STALLED;
}

/* A client process that vanished without saying why ends the run; its
 * clients are done, so nobody waits for them. */
/* Has some child exited? One call, where the scan costs one per client
 * process; WNOWAIT leaves the child for the scan. A backend's own server
 * is a child too: when it is the one, every poll scans, as it did. */
static bool some_child_exited(void)
{
	siginfo_t info;

	memset(&info, 0, sizeof(info));
	if (waitid(P_ALL, 0, &info, WEXITED | WNOHANG | WNOWAIT) < 0)
		return errno != ECHILD;   /* not sure: scan */
	return info.si_pid != 0;
}

static void reap_dead(struct driver *d)
{
	if (!d->pids || !some_child_exited())
		return;
	for (unsigned p = 0; p < d->started; p++) {
		int status;
		if (d->pids[p] <= 0 || waitpid(d->pids[p], &status, WNOHANG) <= 0)
			continue;
		d->pids[p] = 0;
		for (unsigned i = p * d->per_proc; i < (p + 1) * d->per_proc && i < d->nclients; i++) {
			if (slot_done(&d->sh->slot[i]))
				continue;
			atomic_store(&d->sh->slot[i].state, SLOT_FAILED);
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
}

static unsigned count_ready(const struct driver *d)
{
	unsigned n = 0;

	for (unsigned i = 0; i < d->nclients; i++)
		n += atomic_load(&d->sh->slot[i].state) != SLOT_STARTING;
	return n;
}

static unsigned count_done(const struct driver *d)
{
	unsigned n = 0;

	for (unsigned i = 0; i < d->nclients; i++)
		n += slot_done(&d->sh->slot[i]);
	return n;
}

/* Who a stalled client was waiting for, for the error message. */
static void describe_peer(const struct driver *d, char *out, size_t size)
{
	const struct backend_config *b = &d->cfg->bcfg;

	if (b->server)
		snprintf(out, size, "%s server %s%s%s", d->cfg->backend->name, b->server,
			 b->port ? " port " : "", b->port ? b->port : "");
	else
		snprintf(out, size, "backend %s's own server", d->cfg->backend->name);
}

/* The operation a client is in: the line it reached, found in the op array. */
static const struct op *op_at_line(const struct loadfile *lf, uint64_t lines)
{
	if (lines == 0 || lf->n_lines == 0)
		return NULL;
	uint32_t line = (uint32_t)((lines - 1) % lf->n_lines) + 1;
	size_t lo = 0, hi = lf->n_ops;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (lf->ops[mid].line < line)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < lf->n_ops && lf->ops[lo].line == line ? &lf->ops[lo] : NULL;
}

/* Every exchange has a bound: a client whose exchange (or set-up) has been
 * in flight longer than --timeout ends the run, naming it. */
static void watchdog(struct driver *d, uint64_t now)
{
	uint64_t limit = (uint64_t)(d->cfg->timeout * 1e9);

	for (unsigned i = 0; limit && i < d->nclients; i++) {
		struct slot *s = &d->sh->slot[i];
		uint64_t start = atomic_load_explicit(&s->op_start_ns, memory_order_relaxed);
		if (!start || start > now || now - start < limit || slot_done(s))
			continue;
		char peer[200], msg[600];
		const struct op *op = d->phase == PHASE_SETUP ? NULL
			: op_at_line(d->cfg->lf, atomic_load(&s->lines));
		describe_peer(d, peer, sizeof(peer));
		if (op && !op->exchanges)
			continue;   /* a long Sleep line is the loadfile's wish */
		if (op)
			snprintf(msg, sizeof(msg), "client %u, %s line %u (%s): no reply from %s "
				 "within %g s (--timeout): is the server alive and reachable?", i,
				 d->cfg->lf->path, op->line, smb_keyword(op->type), peer, d->cfg->timeout);
		else
			snprintf(msg, sizeof(msg), "client %u: connecting to %s took longer than %g s "
				 "(--timeout): is the server alive and answering?", i, peer, d->cfg->timeout);
		set_error(d, msg);
		atomic_store(&s->state, SLOT_STALLED);   /* nobody waits for it */
	}
}

/* Is something ending the run? Also reaps dead clients and runs the watchdog. */
static int checkpoint(struct driver *d, uint64_t now)
{
	reap_dead(d);
	watchdog(d, now);
	if (atomic_load(&d->sh->failed))
		return RUN_FAILED;
	if (stop_requested)
		return RUN_INTERRUPTED;
	return -1;
}

static double realtime_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* --start-at: every client is connected; the warm-up starts at that
 * instant (hosts started together), or the run fails when set-up ended
 * too late for it. Ctrl-C and failures still end the wait. */
static int wait_start_at(struct driver *d)
{
	double start_at = d->cfg->start_at, late = realtime_s() - start_at;
	char msg[200];

	if (late > START_AT_LATE_S) {
		snprintf(msg, sizeof(msg), "--start-at %.3f: the set-up ended %.3f s after that "
			 "instant (more than %g s late): give a later time", start_at, late,
			 START_AT_LATE_S);
		set_error(d, msg);
		return RUN_FAILED;
	}
	if (late < 0 && d->obs->waiting)
		d->obs->waiting(d->obs->ctx, -late, start_at);
	while ((late = realtime_s() - start_at) < 0) {
		int end = checkpoint(d, now_ns());
		if (end >= 0)
			return end;
		sleep_ns(-late * 1e9 < POLL_NS ? (uint64_t)(-late * 1e9) : POLL_NS);
	}
	return -1;
}

/* Set-up: dbench's "N of N processes prepared for launch" lines, told once
 * a poll until every client is ready; then the release. */
static int wait_ready(struct driver *d)
{
	uint64_t t0 = now_ns();
	unsigned nprocs = run_procs(d->cfg), per = d->cfg->bcfg.processes ? d->per_proc : 1;

	for (;;) {
		unsigned ready = count_ready(d);
		int end = checkpoint(d, now_ns());
		if (end >= 0)
			return end;
		if (d->obs->prepared)
			d->obs->prepared(d->obs->ctx, d->cfg->bcfg.processes ? ready / per : ready,
					 d->cfg->bcfg.processes ? nprocs : d->nclients,
					 (now_ns() - t0) / 1e9);
		if (ready == d->nclients)
			break;
		sleep_ns(POLL_NS);
	}
	int end = d->cfg->start_at ? wait_start_at(d) : -1;
	if (end >= 0)
		return end;
	if (d->obs->released)
		d->obs->released(d->obs->ctx);
	return -1;
}

/* One progress tick: the figures of dbench's line for the phase, second sec
 * of it, and the worst latency since the last line, operations still in
 * flight included. */
static void tick(struct driver *d, uint64_t now, unsigned sec)
{
	uint64_t bytes = 0, lines = 0, worst = 0;
	unsigned active = 0;

	bool execute = d->phase == PHASE_EXECUTE;

	for (unsigned i = 0; i < d->nclients; i++) {
		struct slot *s = &d->sh->slot[i];
		uint64_t b = atomic_load_explicit(&s->bytes, memory_order_relaxed);
		uint64_t start = atomic_load_explicit(&s->op_start_ns, memory_order_relaxed);
		uint64_t m = atomic_exchange_explicit(&s->interval_max_ns, 0, memory_order_relaxed);
		active += b > 0;
		/* The execute phase's bytes from the driver's own baseline: a
		 * client still in an operation it began in the warm-up has not
		 * yet cleared its warm-up count, which would read as a burst. */
		bytes += execute ? (b > d->base[i] ? b - d->base[i] : 0) : b;
		lines += atomic_load_explicit(&s->lines, memory_order_relaxed);
		if (start && start < now && now - start > m)
			m = now - start;
		if (m > worst)
			worst = m;
	}
	if (execute && worst > d->worst_ns)
		d->worst_ns = worst;
	/* dbench's rate: the phase's bytes over its real time so far, which
	 * is a second at least (progress() ticks from second 1 on). */
	double secs = (double)(now - (execute ? d->exec_start : d->t0)) / 1e9;
	if (secs < 1.0 || !d->obs->progress)
		return;
	struct run_progress p = {
		.phase = execute ? PHASE_EXECUTE : PHASE_WARMUP,
		.clients = execute ? d->nclients : active, .lines_per_client = lines / d->nclients,
		.mb_per_sec = bytes / 1e6 / secs, .sec = sec, .latency_ms = worst / 1e6,
	};
	d->obs->progress(d->obs->ctx, &p);
}

/* A line (sec 0: the end of the execute phase) later than LATE_NS: the
 * driver did not get the CPU in time. Said at once the first time, in sum
 * at the end. */
static void note_late(struct driver *d, uint64_t now, uint64_t due, unsigned sec)
{
	char what[48];

	if (now < due + LATE_NS)
		return;
	if (now - due > d->worst_late_ns)
		d->worst_late_ns = now - due;
	if (d->late_lines++)
		return;
	/* No "execute" in a warning: mmtests greps its log of both streams
	 * for it and takes each such line for a progress line. */
	if (sec && d->phase == PHASE_EXECUTE)
		snprintf(what, sizeof(what), "the line of second %u after the warm-up", sec);
	else if (sec)
		snprintf(what, sizeof(what), "the warmup line of second %u", sec);
	else
		snprintf(what, sizeof(what), "the end of the run");
	warn(d, "warning: the driver got the CPU %.2f s after %s was due (more than %.2f s): "
	     "it does not get it in time with %u clients on this machine; lines follow the "
	     "clock and seconds without one are left out", (now - due) / 1e9, what,
	     LATE_NS / 1e9, d->nclients);
}

/* The clients are released together: each should begin its first
 * operation within RELEASE_NS. When some do not, the machine is not running
 * them together, and the first seconds measure fewer clients than asked. */
static void watch_release(struct driver *d, uint64_t now)
{
	unsigned waiting = 0;

	if (d->all_began_ns)
		return;
	for (unsigned i = 0; i < d->nclients; i++) {
		const struct slot *s = &d->sh->slot[i];
		waiting += atomic_load_explicit(&s->lines, memory_order_relaxed) == 0 && !slot_done(s);
	}
	if (waiting == 0) {
		d->all_began_ns = now;
	} else if (now - d->t0 > RELEASE_NS && !d->release_warned) {
		d->release_warned = true;
		warn(d, "warning: %u of %u clients had not begun their first operation %.1f s "
		     "after the release (more than %.1f s): the machine does not run them "
		     "together; use fewer clients or a quieter machine", waiting, d->nclients,
		     (now - d->t0) / 1e9, RELEASE_NS / 1e9);
	}
}

/* What the run did not keep of its schedule, once it is over. */
static void schedule_summary(struct driver *d)
{
	if (d->late_lines)
		warn(d, "warning: the driver got the CPU more than %.2f s after a line (or the end "
		     "of a phase) was due %u times, the worst %.2f s late, and %u seconds had no "
		     "line: the run did not keep its 1 s schedule with %u clients on this machine",
		     LATE_NS / 1e9, d->late_lines, d->worst_late_ns / 1e9, d->skipped, d->nclients);
	if (d->release_warned && d->all_began_ns)
		warn(d, "warning: the last of the %u clients began %.1f s after the release",
		     d->nclients, (d->all_began_ns - d->t0) / 1e9);
}

/* The line of the whole second now is in, at most one per second and
 * never a second twice: after a stall (the driver's, or the machine's)
 * the seconds it spanned are not caught up, and the line printed then
 * carries the stall's latency, read since the last line. At most second
 * cap. Returns when the next line is due. */
static uint64_t progress(struct driver *d, uint64_t now, uint64_t due, unsigned cap)
{
	uint64_t start = d->phase == PHASE_EXECUTE ? d->exec_start : d->t0;
	uint64_t whole = (now - start) / TICK_NS;
	unsigned sec = whole < cap ? (unsigned)whole : cap;

	if (sec > d->last_sec) {
		d->skipped += sec - d->last_sec - 1;
		note_late(d, now, due, sec);
		tick(d, now, sec);
		d->last_sec = sec;
	}
	return start + (whole + 1) * TICK_NS;
}

/* dbench's rule: the warm-up lasts its minimum and until every client has
 * counted bytes (a loadfile without payload cannot wait for that); with
 * --warmup it lasts exactly that long. */
static bool warmup_over(const struct driver *d, uint64_t now)
{
	const struct run_config *cfg = d->cfg;

	if (now - d->t0 < (uint64_t)(cfg->warmup * 1e9))
		return false;
	if (cfg->warmup_exact || cfg->lf->pass_payload == 0)
		return true;
	for (unsigned i = 0; i < d->nclients; i++)
		if (atomic_load_explicit(&d->sh->slot[i].bytes, memory_order_relaxed) == 0 &&
		    !slot_done(&d->sh->slot[i]))
			return false;
	return true;
}

/* What every task of the run had used so far, and the machine around it:
 * the machine's side read around the run's, so that its interval holds it. */
static void sample_cost(struct driver *d, struct cost_sample *s, struct noise_sample *ns, bool end)
{
	for (unsigned i = 0; i < d->nclients; i++)
		d->tids[i] = atomic_load(&d->sh->slot[i].tid);
	if (!end)
		noise_sample(ns, now_ns());
	cost_sample(&d->cost, s, d->tids, d->nclients);
	if (end)
		noise_sample(ns, now_ns());
}

/* Loadfile lines reached by every client; *waiting when one of them waits
 * by wish (a Sleep line, or -R's pace): then no progress is no stall. */
static uint64_t progress_of(const struct driver *d, bool *waiting)
{
	uint64_t lines = 0;

	*waiting = false;
	for (unsigned i = 0; i < d->nclients; i++) {
		const struct slot *s = &d->sh->slot[i];
		uint64_t l = atomic_load_explicit(&s->lines, memory_order_relaxed);
		lines += l;
		if (*waiting || slot_done(s))
			continue;
		const struct op *op = op_at_line(d->cfg->lf, l);
		*waiting = (op && !op->exchanges) ||
			   (d->cfg->target_rate > 0 && !atomic_load_explicit(&s->op_start_ns, memory_order_relaxed));
	}
	return lines;
}

static void watch_stalls(struct driver *d, uint64_t now)
{
	bool waiting;
	uint64_t lines = progress_of(d, &waiting);

	if (d->noise.started)
		noise_watch(&d->noise, lines, waiting, now);
}

static void set_phase(struct driver *d, int phase, uint64_t now)
{
	d->phase = phase;
	/* Before the clients see the phase: a short pass (--run-once) may
	 * otherwise be over, its switches uncounted, when /proc is read. The
	 * phase starts when they see it, after the sample. */
	if (phase == PHASE_EXECUTE) {
		bool waiting;
		sample_cost(d, &d->cost.start, &d->noise.start, false);
		d->cost.started = d->noise.started = true;
		now = now_ns();
		noise_start_watch(&d->noise, progress_of(d, &waiting), now);
	}
	if (phase == PHASE_EXECUTE) {
		d->exec_start = now;
		for (unsigned i = 0; i < d->nclients; i++)
			d->base[i] = atomic_load_explicit(&d->sh->slot[i].bytes, memory_order_relaxed);
	}
	phase_set(d->sh, phase);
	tell_phase(d, phase);
}

/* Run-once: the run ends when the last client finished its pass. */
static uint64_t last_finish(const struct driver *d)
{
	uint64_t last = 0;

	for (unsigned i = 0; i < d->nclients; i++) {
		uint64_t f = atomic_load(&d->sh->slot[i].finished_ns);
		if (f > last)
			last = f;
	}
	return last;
}

/* Warm-up, execute, and the end: by time limit, run-once, error or Ctrl-C. */
static enum run_status run_phases(struct driver *d)
{
	const struct run_config *cfg = d->cfg;
	uint64_t limit_ns = (uint64_t)(cfg->timelimit * 1e9);
	/* Run-once counts its one pass whole unless a warm-up was asked for. */
	bool no_warmup = (cfg->warmup_exact || cfg->run_once) && cfg->warmup == 0;

	d->t0 = now_ns();
	atomic_store(&d->sh->start_ns, d->t0);
	set_phase(d, no_warmup ? PHASE_EXECUTE : PHASE_WARMUP, d->t0);
	for (uint64_t next_tick = d->t0 + TICK_NS;;) {
		uint64_t now = now_ns();
		uint64_t wake = next_tick < now + POLL_NS ? next_tick : now + POLL_NS;
		if (d->phase == PHASE_EXECUTE && limit_ns && d->exec_start + limit_ns < wake)
			wake = d->exec_start + limit_ns;
		if (wake > now)
			sleep_ns(wake - now);
		now = now_ns();
		int end = checkpoint(d, now);
		if (end >= 0)
			return d->exec_end = now, (enum run_status)end;
		if (count_done(d) == d->nclients)
			return d->exec_end = last_finish(d), RUN_OK;
		if (d->phase == PHASE_EXECUTE)
			watch_stalls(d, now);
		bool over = d->phase == PHASE_EXECUTE && limit_ns && now >= d->exec_start + limit_ns;
		/* A line due before the end is printed even when the driver woke
		 * late, as on a loaded machine: the execute phase has its lines. */
		if (over && next_tick < d->exec_start + limit_ns && now >= next_tick)
			progress(d, now, next_tick, (unsigned)((limit_ns - 1) / TICK_NS));
		if (over) {
			note_late(d, now, d->exec_start + limit_ns, 0);
			return d->exec_end = now, RUN_OK;
		}
		watch_release(d, now);
		if (d->phase == PHASE_WARMUP && warmup_over(d, now)) {
			/* No line at the switch, as dbench; a driver that woke late
			 * has missed the warm-up's lines since the one due. */
			if (now >= next_tick) {
				d->skipped += (unsigned)((now - next_tick) / TICK_NS);
				note_late(d, now, next_tick, (unsigned)((next_tick - d->t0) / TICK_NS));
			}
			set_phase(d, PHASE_EXECUTE, now);
			d->last_sec = 0;
			next_tick = d->exec_start + TICK_NS;
			continue;
		}
		if (now >= next_tick)
			next_tick = progress(d, now, next_tick, UINT_MAX);
	}
}

/* Every client stops after its current operation; dbench's cleanup lines,
 * told, count those still finishing, once a second, down to 0. One that
 * does not stop within the grace period is stuck in its backend. */
static int stop_clients(struct driver *d)
{
	uint64_t start = now_ns(), next_line = start + TICK_NS;
	uint64_t grace = d->cfg->timeout > 0 && d->cfg->timeout * 1e9 < STOP_GRACE_NS ?
			 (uint64_t)(d->cfg->timeout * 1e9) : STOP_GRACE_NS;
	uint64_t since = d->exec_start ? d->exec_start : d->t0;
	bool lines = d->t0 && d->obs->cleanup;
	int stuck = 0;

	tell_phase(d, PHASE_DONE);
	if (lines)
		d->obs->cleanup(d->obs->ctx, d->nclients - count_done(d), (start - since) / 1e9);
	phase_set(d->sh, PHASE_DONE);
	for (;;) {
		uint64_t now = now_ns();
		reap_dead(d);
		unsigned left = d->nclients - count_done(d);
		if (left == 0 || now - start >= grace)
			break;
		if (now >= next_line && lines) {
			d->obs->cleanup(d->obs->ctx, left, (now - since) / 1e9);
			next_line += TICK_NS;
		}
		sleep_ns(1000000);
	}
	if (lines)
		d->obs->cleanup(d->obs->ctx, d->nclients - count_done(d), (now_ns() - since) / 1e9);
	for (unsigned i = 0; i < d->nclients; i++) {
		if (slot_done(&d->sh->slot[i]))
			continue;
		if (!stuck++) {
			char msg[160];
			snprintf(msg, sizeof(msg), "client %u did not stop within %.0f s of the end "
				 "of the run: stuck in backend %s", i, grace / 1e9, d->cfg->backend->name);
			set_error(d, msg);
		}
	}
	return stuck;
}

/* Threads that stopped are joined; processes are waited for, and killed
 * when a client of theirs is stuck or stalled. A stuck or stalled thread
 * cannot be taken back: it is left behind, and true is returned. */
static bool reap_all(struct driver *d, bool stuck)
{
	bool left_behind = false;

	for (unsigned i = 0; d->threads && i < d->started; i++) {
		const struct slot *s = &d->sh->slot[i];
		if (slot_stalled(s) || (stuck && !slot_done(s)))
			left_behind = true;
		else
			pthread_join(d->threads[i], NULL);
	}
	for (unsigned p = 0; d->pids && p < d->started; p++) {
		if (d->pids[p] <= 0)
			continue;
		bool kill_it = stuck;
		for (unsigned i = p * d->per_proc; i < (p + 1) * d->per_proc && i < d->nclients; i++)
			kill_it |= slot_stalled(&d->sh->slot[i]);
		if (kill_it)
			kill(d->pids[p], SIGKILL);
		while (waitpid(d->pids[p], NULL, 0) < 0 && errno == EINTR)
			;
	}
	return left_behind;
}

static void add_cpu(double *user, double *sys, int who)
{
	struct rusage ru;

	if (getrusage(who, &ru) == 0) {
		*user += ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6;
		*sys += ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6;
	}
}

/* Interrupted before the execute phase: what clients counted was warm-up. */
static void forget_warmup(struct run_result *res)
{
	res->bytes = res->wire_bytes = 0;
	memset(res->op, 0, sizeof(res->op));
	memset(&res->all, 0, sizeof(res->all));
	res->ops = 0;
	for (unsigned i = 0; i < res->nclients; i++) {
		res->clients[i].bytes = res->clients[i].wire_bytes = 0;
		memset(res->clients[i].op, 0, sizeof(res->clients[i].op));
	}
}

static int collect(struct driver *d, struct run_result *res)
{
	res->nclients = d->nclients;
	res->clients = calloc(d->nclients, sizeof(*res->clients));
	if (!res->clients)
		return -1;
	for (unsigned i = 0; i < d->nclients; i++) {
		const struct client_stats *st = &d->sh->stats[i];
		res->clients[i] = *st;
		res->bytes += st->bytes;
		res->bytes_all += st->bytes_all;
		res->wire_bytes += st->wire_bytes;
		res->cpu_clients_user += st->cpu_user;
		res->cpu_clients_sys += st->cpu_sys;
		for (int k = 0; k < BACKEND_COUNTERS; k++)
			res->backend[k] += st->backend[k];
		for (int op = 0; op < OP_COUNT; op++) {
			hist_merge(&res->op[op], &st->op[op]);
			if (op != OP_SLEEP && op != OP_CONNECT)   /* the loadfile's operations */
				hist_merge(&res->all, &st->op[op]);
		}
	}
	res->ops = res->all.count;
	res->cost = d->cost;
	res->noise = d->noise;
	res->socket = d->sh->socket;
	if (!d->exec_start)
		forget_warmup(res);
	res->max_latency_ns = d->worst_ns > res->all.max_ns ? d->worst_ns : res->all.max_ns;
	add_cpu(&res->cpu_user, &res->cpu_sys, RUSAGE_SELF);
	add_cpu(&res->cpu_user, &res->cpu_sys, RUSAGE_CHILDREN);
	return 0;
}

/* mmtests' "completed in" records, held while measuring, told at the end. */
static void tell_pass_times(struct driver *d)
{
	for (unsigned i = 0; d->passes && d->obs->passes && i < d->nclients; i++) {
		uint64_t n = d->sh->stats[i].passes;
		d->obs->passes(d->obs->ctx, i, passes_of(d, i), n < PASS_TIMES ? n : PASS_TIMES, n);
	}
}

static void *map_shared(size_t size)
{
	void *p = mmap(NULL, size, PROT_READ | PROT_WRITE,
		       MAP_SHARED | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	return p == MAP_FAILED ? NULL : p;
}

static int driver_init(struct driver *d, const struct run_config *cfg,
		       const struct run_observer *obs, struct errbuf *err)
{
	static const struct run_observer none;

	memset(d, 0, sizeof(*d));
	d->cfg = cfg;
	d->obs = obs ? obs : &none;
	/* First, for driver_free, and before any task starts: the counters
	 * follow those created after. Without --perf it opens nothing: /proc
	 * is read at the samples. */
	cost_open(&d->cost, "lo", cfg->perf);
	d->nclients = cfg->bcfg.nclients;
	d->per_proc = cfg->clients_per_process ? cfg->clients_per_process : 1;
	size_t slots = sizeof(struct shared) + d->nclients * sizeof(struct slot);
	slots = (slots + 63) & ~(size_t)63;
	d->sh_size = slots + d->nclients * sizeof(struct client_stats);
	if (!(d->sh = map_shared(d->sh_size)))
		return err_errno(err, "mapping %zu bytes of shared counters", d->sh_size);
	d->sh->stats = (struct client_stats *)((char *)d->sh + slots);
	if (cfg->show_execute_time) {
		d->passes_size = (size_t)d->nclients * PASS_TIMES * sizeof(struct pass_time);
		if (!(d->passes = map_shared(d->passes_size)))
			return err_errno(err, "mapping room for the --show-execute-time lines");
	}
	d->args = calloc(d->nclients, sizeof(*d->args));
	d->base = calloc(d->nclients, sizeof(*d->base));
	if (cfg->bcfg.processes)
		d->pids = calloc(run_procs(cfg), sizeof(*d->pids));
	else
		d->threads = calloc(d->nclients, sizeof(*d->threads));
	if (!(d->tids = calloc(d->nclients, sizeof(*d->tids))))
		return err_set(err, "out of memory for %u clients", d->nclients);
	if (!d->args || !d->base || !(d->pids || d->threads))
		return err_set(err, "out of memory for %u clients", d->nclients);
	/* Before any server or client starts: they all read the clock it chooses. */
	if (clock_init(err) < 0)
		return -1;
	if (cfg->backend->start && cfg->backend->start(&cfg->bcfg, &d->backend_run, err) < 0)
		return -1;
	return 0;
}

static void driver_free(struct driver *d, bool clients_stuck)
{
	/* A stuck client thread may still use the backend and the shared maps:
	 * they are left to the process's exit, which comes soon. */
	bool in_use = clients_stuck && d->threads;

	if (d->cfg->backend->stop && d->backend_run && !in_use)
		d->cfg->backend->stop(d->backend_run);
	if (d->sh && !in_use)
		munmap(d->sh, d->sh_size);
	if (d->passes && !in_use)
		munmap(d->passes, d->passes_size);
	cost_close(&d->cost);
	noise_free(&d->noise);
	free(d->threads);
	free(d->pids);
	free(d->args);
	free(d->base);
	free(d->tids);
}

enum run_status driver_run(const struct run_config *cfg, const struct run_observer *obs,
			   struct run_result *res)
{
	struct driver d;
	struct errbuf err;
	int status = RUN_FAILED;

	memset(res, 0, sizeof(*res));
	if (driver_init(&d, cfg, obs, &err) < 0) {
		snprintf(res->error, sizeof(res->error), "%s", err.msg);
		driver_free(&d, false);
		return res->status = RUN_FAILED;
	}
	d.phase = PHASE_SETUP;
	if (spawn(&d, &err) < 0)
		set_error(&d, err.msg);
	else if ((status = wait_ready(&d)) < 0)
		status = run_phases(&d);
	schedule_summary(&d);
	if (d.cost.started) {
		sample_cost(&d, &d.cost.end, &d.noise.end, true);
		d.cost.ended = d.noise.ended = true;
		noise_finish(&d.noise);
	}

	bool stuck = reap_all(&d, stop_clients(&d) > 0);
	/* The backend's servers stop, and are reaped, before the CPU is read:
	 * RUSAGE_CHILDREN counts only children that were waited for. */
	if (!(stuck && d.threads) && cfg->backend->stop && d.backend_run) {
		cfg->backend->stop(d.backend_run);
		d.backend_run = NULL;
	}
	if (atomic_load(&d.sh->failed))
		status = RUN_FAILED;
	res->executed = d.exec_start != 0;
	if (res->executed && d.exec_end > d.exec_start)
		res->execute_secs = (d.exec_end - d.exec_start) / 1e9;
	res->total_secs = d.t0 ? (now_ns() - d.t0) / 1e9 : 0;
	snprintf(res->error, sizeof(res->error), "%s", d.sh->error);
	if (cfg->show_execute_time)
		tell_pass_times(&d);
	if (collect(&d, res) < 0 && status == RUN_OK) {
		snprintf(res->error, sizeof(res->error), "out of memory collecting results");
		status = RUN_FAILED;
	}
	driver_free(&d, stuck);
	return res->status = (enum run_status)status;
}

void run_result_free(struct run_result *res)
{
	free(res->clients);
	res->clients = NULL;
}
