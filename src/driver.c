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
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "cpulist.h"
#include "driver.h"
#include "driver_priv.h"
#include "shared.h"

static volatile sig_atomic_t stop_requested;

void driver_request_stop(void)
{
	stop_requested = 1;
}

void driver_set_error(struct driver *d, const char *fmt, ...)
{
	int expected = 0;
	va_list ap;

	if (!atomic_compare_exchange_strong(&d->sh->failed, &expected, 1))
		return;
	va_start(ap, fmt);
	vsnprintf(d->sh->error.msg, sizeof(d->sh->error.msg), fmt, ap);
	va_end(ap);
}

__attribute__((format(printf, 2, 3)))
static void warn(struct driver *d, const char *fmt, ...)
{
	char msg[ERRBUF_SIZE];
	va_list ap;

	if (!d->obs->warning)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	d->obs->warning(d->obs->ctx, msg);
}

void driver_tell_phase(struct driver *d, enum phase phase)
{
	if (d->obs->phase)
		d->obs->phase(d->obs->ctx, phase);
}

/* Is something ending the run? Also reaps dead clients and runs the watchdog. */
static int checkpoint(struct driver *d, uint64_t now)
{
	driver_reap_dead(d);
	driver_watchdog(d, now);
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

	if (late > START_AT_LATE_S) {
		driver_set_error(d, "--start-at %.3f: the set-up ended %.3f s after that instant "
				 "(more than %g s late): give a later time", start_at, late,
				 START_AT_LATE_S);
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

/* The clients' tasks, as each told its slot. */
static void load_tids(struct driver *d)
{
	for (unsigned i = 0; i < d->nclients; i++)
		d->tids[i] = atomic_load(&d->sh->slot[i].tid);
}

/* --trace: the run's tasks, each started by now, told to the BPF programs
 * before the release, so that the warm-up shows each one's state. */
static int track_tasks(struct driver *d)
{
	struct errbuf err;

	if (!d->cfg->trace)
		return -1;
	load_tids(d);
	if (trace_track(d->cfg->trace, d->tids, d->nclients, d->driver_tid, &err) < 0) {
		driver_set_error(d, "%s", err.msg);
		return RUN_FAILED;
	}
	return -1;
}

/* Set-up: the clients started a few at a time, and dbench's "N of N
 * processes prepared for launch" lines, told once a poll until every
 * client is ready; then the release. */
static int wait_ready(struct driver *d)
{
	uint64_t t0 = d->setup_start = now_ns(), next_line = t0;
	unsigned nprocs = run_procs(d->cfg), per = d->cfg->bcfg.processes ? d->per_proc : 1;
	struct errbuf err;
	int spawning = 1;

	for (;;) {
		if (spawning && (spawning = driver_spawn_more(d, &err)) < 0) {
			driver_set_error(d, "%s", err.msg);
			return RUN_FAILED;
		}
		uint64_t now = now_ns();
		if (now < next_line) {   /* the checkpoint scans every child: once a poll */
			sleep_ns(SPAWN_POLL_NS);
			continue;
		}
		int end = checkpoint(d, now);
		if (end >= 0)
			return end;
		unsigned ready = driver_count_ready(d);
		if (d->obs->prepared)
			d->obs->prepared(d->obs->ctx, d->cfg->bcfg.processes ? ready / per : ready,
					 d->cfg->bcfg.processes ? nprocs : d->nclients, (now - t0) / 1e9);
		if (ready == d->nclients)
			break;
		next_line = now + POLL_NS;
		sleep_ns(spawning ? SPAWN_POLL_NS : POLL_NS);
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
		if (m > d->longest_done_ns)
			d->longest_done_ns = m;
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
	load_tids(d);
	if (!end)
		noise_sample(ns, now_ns(), d->driver_tid);
	cost_sample(&d->cost, s, d->tids, d->nclients, d->driver_tid, end);
	if (end)
		noise_sample(ns, now_ns(), d->driver_tid);
}

static void *sample_start(void *arg)
{
	struct driver *d = arg;

	sample_cost(d, &d->cost.start, &d->noise.start, false);
	d->first_read_ns = now_ns();
	return NULL;
}

/* The first sample reads a few /proc files per task of the run. With
 * thousands of clients sharing the CPUs the driver gets little of it, and
 * the read can take seconds: taken in a thread of its own, it holds up
 * neither the switch to the execute phase nor its progress lines. Said
 * when it took long enough to matter to the figures read from it. */
static void start_sample(struct driver *d, bool clients_running)
{
	pthread_attr_t attr;

	priority_thread_attr(&attr, d->priority);
	if (clients_running && (pthread_create(&d->sampler, &attr, sample_start, d) == 0 ||
				pthread_create(&d->sampler, NULL, sample_start, d) == 0))
		d->sampling = true;
	else
		sample_cost(d, &d->cost.start, &d->noise.start, false);
	pthread_attr_destroy(&attr);
	d->cost.started = d->noise.started = true;
}

static void join_sampler(struct driver *d)
{
	if (!d->sampling)
		return;
	pthread_join(d->sampler, NULL);
	d->sampling = false;
	double from = (d->noise.start.at_ns > d->exec_start ? d->noise.start.at_ns - d->exec_start : 0) / 1e9;
	double to = (d->first_read_ns > d->exec_start ? d->first_read_ns - d->exec_start : 0) / 1e9;
	uint64_t span = d->exec_end > d->exec_start ? d->exec_end - d->exec_start : 0;
	if (span && to > SAMPLE_LATE_SHARE * span / 1e9)
		warn(d, "warning: the run's tasks were first read from %.2f to %.2f s into the execute "
		     "phase (of %.2f s): its CPU, cost and noise figures cover the run from then",
		     from, to, span / 1e9);
}

/* Loadfile lines reached by every client; *waiting when one of them waits
 * by wish (a Sleep line, or -R's pace): then no progress is no stall.
 * From the warm-up, the clients see the execute phase first and the first
 * sample follows; from the set-up (no warm-up), the sample comes first, so
 * that a short pass (--run-once) cannot be over, its CPU unread, before it. */
static void set_phase(struct driver *d, int phase, uint64_t now)
{
	bool from_warmup = d->phase == PHASE_WARMUP;

	d->phase = phase;
	if (phase == PHASE_EXECUTE) {
		bool waiting;
		if (!from_warmup) {
			start_sample(d, false);
			now = now_ns();
		}
		noise_start_watch(&d->noise, driver_progress_of(d, &waiting), now);
		d->exec_start = now;
		for (unsigned i = 0; i < d->nclients; i++)
			d->base[i] = atomic_load_explicit(&d->sh->slot[i].bytes, memory_order_relaxed);
		if (d->cfg->trace)
			trace_on(d->cfg->trace);
	}
	phase_set(d->sh, phase);
	driver_tell_phase(d, phase);
	if (phase == PHASE_EXECUTE && from_warmup)
		start_sample(d, true);
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
		if (driver_count_done(d) == d->nclients)
			return d->exec_end = last_finish(d), RUN_OK;
		if (d->phase == PHASE_EXECUTE)
			driver_watch_stalls(d, now);
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
		stats_clear_ops(&res->clients[i]);
	}
}

/* The figures are read where the clients wrote them: the mapping passes to
 * the result, and only the histograms in use are read. */
static void collect(struct driver *d, struct run_result *res)
{
	res->nclients = d->nclients;
	res->clients = d->sh->stats;
	for (unsigned i = 0; i < d->nclients; i++) {
		const struct client_stats *st = &d->sh->stats[i];
		res->bytes += st->bytes;
		res->bytes_all += st->bytes_all;
		res->wire_bytes += st->wire_bytes;
		res->cpu_clients_user += st->cpu_user;
		res->cpu_clients_sys += st->cpu_sys;
		for (int k = 0; k < BACKEND_COUNTERS; k++)
			res->backend[k] += st->backend[k];
		for (int op = 0; op < OP_COUNT; op++) {
			if (!stats_op_used(st, op))
				continue;
			stats_merge_op(&res->op[op], st, op);
			if (op != OP_SLEEP && op != OP_CONNECT)   /* the loadfile's operations */
				stats_merge_op(&res->all, st, op);
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
}

/* mmtests' "completed in" records, held while measuring, told at the end. */
static void tell_pass_times(struct driver *d)
{
	for (unsigned i = 0; d->passes && d->obs->passes && i < d->nclients; i++) {
		uint64_t n = d->sh->stats[i].passes;
		d->obs->passes(d->obs->ctx, i, driver_passes_of(d, i), n < PASS_TIMES ? n : PASS_TIMES, n);
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
	d->driver_tid = (pid_t)syscall(SYS_gettid);
	d->priority = priority_raise();
	/* First, for driver_free, and before any task starts: the counters
	 * follow those created after. Without --perf it opens nothing: /proc
	 * is read at the samples. */
	cost_open(&d->cost, "lo", cfg->perf);
	d->nclients = cfg->bcfg.nclients;
	d->per_proc = run_per_process(cfg);
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
	if (cfg->bcfg.processes) {
		d->pids = calloc(run_procs(cfg), sizeof(*d->pids));
		if (driver_watch_children(d, err) < 0)
			return -1;
	} else {
		d->threads = calloc(d->nclients, sizeof(*d->threads));
		futex_hash_for_clients(d->nclients);
	}
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
	driver_unwatch_children(d);
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
		err_set(&res->error, "%s", err.msg);
		driver_free(&d, false);
		return res->status = RUN_FAILED;
	}
	d.phase = PHASE_SETUP;
	if ((status = wait_ready(&d)) >= 0)
		driver_forget_unstarted(&d);
	else if ((status = track_tasks(&d)) < 0)
		status = run_phases(&d);
	/* The end's figures are those of this instant: clients that finish an
	 * operation while the last sample is read count it no more. */
	if (cfg->trace)
		trace_off(cfg->trace);
	if (d.cost.started)
		phase_set(d.sh, PHASE_STOP);
	join_sampler(&d);
	schedule_summary(&d);
	if (d.cost.started) {
		sample_cost(&d, &d.cost.end, &d.noise.end, true);
		d.cost.ended = d.noise.ended = true;
		noise_finish(&d.noise);
	}

	bool stuck = driver_reap_all(&d, driver_stop_clients(&d) > 0);
	/* The backend's servers stop, and are reaped, before the CPU is read:
	 * RUSAGE_CHILDREN counts only children that were waited for. */
	if (!(stuck && d.threads) && cfg->backend->stop && d.backend_run) {
		cfg->backend->stop(d.backend_run);
		d.backend_run = NULL;
	}
	/* After the reaping: a task gone has closed its own time. */
	if (cfg->trace && trace_collect(cfg->trace, &res->trace, &err) < 0)
		driver_set_error(&d, "%s", err.msg);
	if (atomic_load(&d.sh->failed))
		status = RUN_FAILED;
	res->executed = d.exec_start != 0;
	res->released = d.t0 != 0;
	if (res->executed && d.exec_end > d.exec_start)
		res->execute_secs = (d.exec_end - d.exec_start) / 1e9;
	res->total_secs = d.t0 ? (now_ns() - d.t0) / 1e9 : 0;
	res->driver_priority = d.priority;
	res->setup_secs = d.t0 ? (d.t0 - d.setup_start) / 1e9 : 0;
	err_set(&res->error, "%s", d.sh->error.msg);
	/* A whole run's only, as dbench, whose clients that lose their server
	 * exit before they dump theirs: mmtests takes every one for a figure. */
	if (cfg->show_execute_time && status == RUN_OK)
		tell_pass_times(&d);
	collect(&d, res);
	if (!(stuck && d.threads)) {   /* else a stuck client may write it still: left mapped */
		res->clients_map = d.sh;
		res->clients_map_size = d.sh_size;
		d.sh = NULL;
	}
	driver_free(&d, stuck);
	return res->status = (enum run_status)status;
}

void run_result_free(struct run_result *res)
{
	if (res->clients_map)
		munmap(res->clients_map, res->clients_map_size);
	res->clients_map = NULL;
	res->clients = NULL;
}
