/* The driver's clients: started as threads or as processes of threads,
 * watched (a death nobody announced, an exchange past --timeout, a
 * stall), told to stop and waited for. */
#include "config.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "clock.h"
#include "cpulist.h"
#include "driver_priv.h"
#include "smb.h"

struct pass_time *driver_passes_of(struct driver *d, unsigned id)
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
	driver_set_error(d, "%s", err.msg);
	atomic_store(&d->sh->slot[id].state, SLOT_FAILED);
	return -1;
}

static void *client_thread(void *p)
{
	struct client_arg *a = p;

	if (pin_client(a->d, a->id) == 0)
		client_main(a->d->cfg, a->d->backend_run, a->d->sh, driver_passes_of(a->d, a->id), a->id);
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
	signal(SIGCHLD, SIG_DFL);   /* the driver's handler is the driver's */
	futex_hash_for_clients(n);
	if (pin_client(d, first) < 0) {
		for (unsigned i = 1; i < n; i++)   /* never started: nobody waits for them */
			atomic_store(&d->sh->slot[first + i].state, SLOT_FAILED);
		_exit(1);
	}
	int extra = n > 1 ? start_threads(d, first + 1, n - 1, threads, &err) : 0;
	if (extra < (int)n - 1)
		driver_set_error(d, "%s", err.msg);
	else
		rc = client_main(d->cfg, d->backend_run, d->sh, driver_passes_of(d, first), first);
	for (int i = 0; i < extra; i++)
		pthread_join(threads[i], NULL);
	_exit(rc == 0 ? 0 : 1);
}

/* Clients begun but not through their set-up yet. Thousands of them at
 * once would share the CPUs so thinly that all finish late, their servers'
 * set-up past --timeout; a few at a time, each is done in a millisecond or
 * two. Clients mostly finish in the order they began: the scan starts at
 * the first one that had not. */
static unsigned in_setup(struct driver *d, unsigned begun)
{
	unsigned n = 0;

	while (d->setup_first < begun &&
	       atomic_load(&d->sh->slot[d->setup_first].state) != SLOT_STARTING)
		d->setup_first++;
	for (unsigned i = d->setup_first; i < begun; i++)
		n += atomic_load(&d->sh->slot[i].state) == SLOT_STARTING;
	return n;
}

static unsigned setup_window(void)
{
	unsigned per_cpu = 4 * online_cpus();

	return per_cpu > SETUP_WINDOW_MIN ? per_cpu : SETUP_WINDOW_MIN;
}

static unsigned clients_begun(const struct driver *d)
{
	unsigned n = d->cfg->bcfg.processes ? d->started * d->per_proc : d->started;
	return n < d->nclients ? n : d->nclients;
}

int driver_spawn_more(struct driver *d, struct errbuf *err)
{
	unsigned window = setup_window();
	unsigned total = d->cfg->bcfg.processes ? run_procs(d->cfg) : d->nclients;
	pid_t parent = getpid();

	while (d->started < total && in_setup(d, clients_begun(d)) < window) {
		if (!d->cfg->bcfg.processes) {
			if (start_threads(d, d->started, 1, &d->threads[d->started], err) < 1)
				return -1;
			d->started++;
			continue;
		}
		fflush(NULL);   /* nothing buffered is copied into the children */
		pid_t pid = fork();
		if (pid < 0)
			return err_errno(err, "forking client process %u of %u (raise ulimit -u?)",
					 d->started, total);
		if (pid == 0)
			client_process(d, d->started, parent);
		d->pids[d->started++] = pid;
	}
	return d->started < total;
}

void driver_forget_unstarted(struct driver *d)
{
	for (unsigned i = clients_begun(d); i < d->nclients; i++)
		atomic_store(&d->sh->slot[i].state, SLOT_FAILED);
}

static bool slot_stalled(const struct slot *s)
{
	return atomic_load(&s->state) == SLOT_STALLED;
}

/* A client process ended. One that vanished without saying why ends the
 * run; its clients are done, so nobody waits for them. */
static void client_process_ended(struct driver *d, unsigned p, int status)
{
	d->pids[p] = 0;
	for (unsigned i = p * d->per_proc; i < (p + 1) * d->per_proc && i < d->nclients; i++) {
		if (slot_done(&d->sh->slot[i]))
			continue;
		atomic_store(&d->sh->slot[i].state, SLOT_FAILED);
		if (WIFSIGNALED(status))
			driver_set_error(d, "client %u died: killed by signal %d (%s)",
					 i, WTERMSIG(status), strsignal(WTERMSIG(status)));
		else
			driver_set_error(d, "client %u exited with status %d before finishing",
					 i, WEXITSTATUS(status));
	}
}

static bool client_process_index(const struct driver *d, pid_t pid, unsigned *p)
{
	for (*p = 0; *p < d->started; (*p)++)
		if (d->pids[*p] == pid)
			return true;
	return false;
}

/* Client processes: looked for after a SIGCHLD (watch_child_ends()). */
int driver_watch_children(struct driver *d, struct errbuf *err)
{
	if (watch_child_ends(&d->old_sigchld) < 0)
		return err_errno(err, "setting a SIGCHLD handler");
	d->watching_children = true;
	return 0;
}

void driver_unwatch_children(struct driver *d)
{
	if (d->watching_children)
		sigaction(SIGCHLD, &d->old_sigchld, NULL);
	d->watching_children = false;
}

/* Reaps the client processes that exited. The kernel names each exited
 * child (WNOWAIT leaves it for the waitpid): one call a child, where
 * asking every client process costs a system call each, ten thousand a
 * poll while thousands stop. A child that is no client (a backend's own
 * server) is its owner's to wait for; behind it, every process is asked. */
void driver_reap_dead(struct driver *d)
{
	if (!d->pids || !child_ended())
		return;
	for (;;) {
		siginfo_t info;
		unsigned p;
		int status;

		memset(&info, 0, sizeof(info));
		if (waitid(P_ALL, 0, &info, WEXITED | WNOHANG | WNOWAIT) < 0 || info.si_pid == 0)
			return;
		if (!client_process_index(d, info.si_pid, &p))
			break;
		if (waitpid(info.si_pid, &status, 0) == info.si_pid)
			client_process_ended(d, p, status);
		else if (errno != EINTR)
			return;
	}
	for (unsigned p = 0; p < d->started; p++) {
		int status;
		if (d->pids[p] > 0 && waitpid(d->pids[p], &status, WNOHANG) > 0)
			client_process_ended(d, p, status);
	}
}

unsigned driver_count_ready(const struct driver *d)
{
	unsigned n = 0;

	for (unsigned i = 0; i < d->nclients; i++)
		n += atomic_load(&d->sh->slot[i].state) != SLOT_STARTING;
	return n;
}

unsigned driver_count_done(const struct driver *d)
{
	unsigned n = 0;

	for (unsigned i = 0; i < d->nclients; i++)
		n += slot_done(&d->sh->slot[i]);
	return n;
}

/* The clients stop; one that has not while no other stopped for the grace
 * period is stuck. Thousands of processes take long to end on a loaded
 * machine, but they keep ending: the grace runs from the last one. Each
 * first ends the operation it is in: where operations took long, the
 * grace is twice the longest. The scan reads every slot and waits on
 * every child: every STOP_POLL_NS, not a tight loop, since the driver may
 * hold a CPU above the clients. */
int driver_stop_clients(struct driver *d)
{
	uint64_t start = now_ns(), next_line = start + TICK_NS, last_stop = start;
	uint64_t grace = d->cfg->timeout > 0 && d->cfg->timeout * 1e9 < STOP_GRACE_NS ?
			 (uint64_t)(d->cfg->timeout * 1e9) : STOP_GRACE_NS;
	if (grace < 2 * d->longest_done_ns)
		grace = 2 * d->longest_done_ns;
	uint64_t since = d->exec_start ? d->exec_start : d->t0;
	bool lines = d->t0 && d->obs->cleanup;
	unsigned left = d->nclients - driver_count_done(d);
	int stuck = 0;

	driver_tell_phase(d, PHASE_DONE);
	if (lines)
		d->obs->cleanup(d->obs->ctx, left, (start - since) / 1e9);
	phase_set(d->sh, PHASE_DONE);
	for (;;) {
		uint64_t now = now_ns();
		driver_reap_dead(d);
		unsigned now_left = d->nclients - driver_count_done(d);
		if (now_left < left)
			last_stop = now;
		left = now_left;
		if (left == 0 || now - last_stop >= grace)
			break;
		if (now >= next_line && lines) {
			d->obs->cleanup(d->obs->ctx, left, (now - since) / 1e9);
			next_line += TICK_NS;
		}
		sleep_ns(STOP_POLL_NS);
	}
	if (lines)
		d->obs->cleanup(d->obs->ctx, d->nclients - driver_count_done(d), (now_ns() - since) / 1e9);
	for (unsigned i = 0; i < d->nclients; i++) {
		if (slot_done(&d->sh->slot[i]))
			continue;
		if (!stuck++)
			driver_set_error(d, "client %u did not stop: no client stopped in the %.0f s "
					 "before it was given up: stuck in backend %s", i, grace / 1e9,
					 d->cfg->backend->name);
	}
	return stuck;
}

/* Threads that stopped are joined; processes are waited for, and killed
 * when a client of theirs is stuck or stalled. A stuck or stalled thread
 * cannot be taken back: it is left behind, and true is returned. */
bool driver_reap_all(struct driver *d, bool stuck)
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

/* ---- watching them ---------------------------------------------------- */

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

/* Has the run completed an operation within the last `limit`? Also keeps
 * the run's lines, for expected_wait(). */
static bool run_progressed(struct driver *d, uint64_t now, uint64_t limit)
{
	uint64_t lines = 0;

	for (unsigned i = 0; i < d->nclients; i++)
		lines += atomic_load_explicit(&d->sh->slot[i].lines, memory_order_relaxed);
	if (lines != d->watch_lines || !d->watch_progress_ns) {
		d->watch_lines = lines;
		d->watch_progress_ns = now;
	}
	return now - d->watch_progress_ns < limit;
}

/* What an operation waits on this machine, by Little's law: the clients
 * in flight over the run's rate of operations since the release. */
static double expected_wait_ns(const struct driver *d, uint64_t now)
{
	double secs = d->t0 && now > d->t0 ? (double)(now - d->t0) / 1e9 : 0;
	double rate = secs > 0 ? (double)d->watch_lines / secs : 0;

	return rate > 0 ? (d->nclients - driver_count_done(d)) / rate * 1e9 : 0;
}

/* Fails the run for client i, naming its operation and peer. When the
 * others went on meanwhile, the peer may be alive but never given the
 * CPU: tens of thousands of runnable tasks on a few CPUs were seen to
 * leave a few of them unrun for minutes. */
static void fail_stalled(struct driver *d, unsigned i, const struct op *op, bool others_went_on)
{
	const char *why = others_went_on ? "the other clients went on meanwhile: is that server "
		"alive? With thousands of clients per CPU the scheduler can leave a task unrun "
		"this long: then raise --timeout" : "is the server alive and reachable?";
	char peer[200];

	describe_peer(d, peer, sizeof(peer));
	if (op)
		driver_set_error(d, "client %u, %s line %u (%s): no reply from %s within %g s "
				 "(--timeout): %s", i, d->cfg->lf->path, op->line,
				 smb_keyword(op->type), peer, d->cfg->timeout, why);
	else
		driver_set_error(d, "client %u: connecting to %s took longer than %g s "
				 "(--timeout): is the server alive and answering?", i, peer,
				 d->cfg->timeout);
	atomic_store(&d->sh->slot[i].state, SLOT_STALLED);   /* nobody waits for it */
}

/* Every exchange has a bound: a client whose exchange (or set-up) has been
 * in flight longer than --timeout ends the run, naming it. But a machine
 * given more clients than it can run serves every one of them late: there
 * an exchange past it is stuck only when the run completed no operation
 * in that time, or when it waited STUCK_FACTOR times what an operation
 * waits in this run (expected_wait_ns()). */
void driver_watchdog(struct driver *d, uint64_t now)
{
	uint64_t limit = (uint64_t)(d->cfg->timeout * 1e9);
	bool progressed = limit && d->phase != PHASE_SETUP && run_progressed(d, now, limit);
	double expected = -1;

	for (unsigned i = 0; limit && i < d->nclients; i++) {
		struct slot *s = &d->sh->slot[i];
		uint64_t start = atomic_load_explicit(&s->op_start_ns, memory_order_relaxed);
		if (!start || start > now || now - start < limit || slot_done(s))
			continue;
		const struct op *op = d->phase == PHASE_SETUP ? NULL
			: op_at_line(d->cfg->lf, atomic_load(&s->lines));
		if (op && !op->exchanges)
			continue;   /* a long Sleep line is the loadfile's wish */
		if (progressed && expected < 0)
			expected = expected_wait_ns(d, now);
		if (progressed && now - start < STUCK_FACTOR * expected)
			continue;   /* late with the others: the machine is slow, not the peer */
		fail_stalled(d, i, op, progressed);
	}
}

uint64_t driver_progress_of(const struct driver *d, bool *waiting)
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

void driver_watch_stalls(struct driver *d, uint64_t now)
{
	bool waiting;
	uint64_t lines = driver_progress_of(d, &waiting);

	if (d->noise.started)
		noise_watch(&d->noise, lines, waiting, now);
}
