/* The server's connections: each accepted socket served by
 * wire_serve_socket() in a thread or a process of its own, and shut down
 * and waited for when the server stops. */
#include "config.h"
#include "server.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "server_priv.h"
#include "wire.h"

/* ---- a thread per connection -------------------------------------------- */

/* --cpus: connection k (the k-th accepted, from 0) on the list's entry k. */
static int pin_conn(const struct server *s, unsigned long id, const char *peer)
{
	struct errbuf err;
	char who[48];

	snprintf(who, sizeof(who), "connection %lu", id);
	if (cpu_list_pin(s->cfg.cpus, (unsigned)(id - 1), 0, who, &err) == 0)
		return 0;
	server_log(s, "connection %lu (%s): %s; closed it", id, peer, err.msg);
	return -1;
}

/* Out of the list, then `fd` closed (unless -1), then no longer counted,
 * all under the lock: a stop never shuts down a descriptor number that
 * something else has reused, and one that finds no connection left finds
 * no descriptor left either, so that a process forked after server_free()
 * (a client process of the next run) inherits none. */
static void conn_unlink(struct conn *c, int fd)
{
	struct server *s = c->s;

	pthread_mutex_lock(&s->lock);
	if (c->prev)
		c->prev->next = c->next;
	else
		s->conns = c->next;
	if (c->next)
		c->next->prev = c->prev;
	if (fd >= 0)
		close(fd);
	if (--s->active == 0)
		pthread_cond_broadcast(&s->idle);
	pthread_mutex_unlock(&s->lock);
}

static void *conn_thread(void *arg)
{
	struct conn *c = arg;
	struct server *s = c->s;
	struct errbuf err;

	/* A connection that cannot be pinned is logged and closed. */
	if (pin_conn(s, c->id, c->peer) == 0 && wire_serve_socket(c->fd, s->cfg.timeout_secs, &err) < 0) {
		pthread_mutex_lock(&s->lock);
		bool stopping = s->stopping;
		pthread_mutex_unlock(&s->lock);
		if (!stopping)
			server_log(s, "connection %lu (%s): %s; closed it", c->id, c->peer, err.msg);
	}
	conn_unlink(c, c->fd);
	free(c);
	return NULL;
}

int server_spawn_thread(struct server *s, int fd, unsigned long id, const char *peer)
{
	struct conn *c = calloc(1, sizeof(*c));
	pthread_attr_t attr;
	sigset_t all, old;
	pthread_t t;

	if (!c) {
		server_log(s, "connection %lu (%s): out of memory; closed it", id, peer);
		return -1;
	}
	*c = (struct conn){ .s = s, .fd = fd, .id = id };
	snprintf(c->peer, sizeof(c->peer), "%s", peer);
	pthread_mutex_lock(&s->lock);
	c->next = s->conns;
	if (s->conns)
		s->conns->prev = c;
	s->conns = c;
	s->active++;
	pthread_mutex_unlock(&s->lock);

	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	pthread_attr_setstacksize(&attr, CONN_STACK);
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);   /* signals are the main thread's */
	int rc = pthread_create(&t, &attr, conn_thread, c);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	pthread_attr_destroy(&attr);
	if (rc) {
		server_log(s, "connection %lu (%s): cannot start a thread: %s (raise ulimit -u, "
			   "or lower --max-clients); closed it", id, peer, strerror(rc));
		conn_unlink(c, -1);   /* the caller closes fd */
		free(c);
		return -1;
	}
	return 0;
}

/* Shut every connection down and wait for its thread to finish. */
void server_close_threads(struct server *s)
{
	struct timespec deadline;

	clock_gettime(CLOCK_REALTIME, &deadline);
	deadline.tv_sec += STOP_WAIT_SECS;
	pthread_mutex_lock(&s->lock);
	s->stopping = true;
	for (struct conn *c = s->conns; c; c = c->next)
		shutdown(c->fd, SHUT_RDWR);
	while (s->active > 0)
		if (pthread_cond_timedwait(&s->idle, &s->lock, &deadline) == ETIMEDOUT)
			break;
	if (s->active > 0) {
		server_log_always(s, "%u connections did not close within %d s of the stop",
			   s->active, STOP_WAIT_SECS);
		s->leaked = true;   /* their threads still use the server: keep it */
	}
	pthread_mutex_unlock(&s->lock);
}

/* ---- a process per connection ------------------------------------------- */

/* Only our own children are waited for: an embedding program has its own.
 * Without `block`, only after a SIGCHLD (server_run() watches for it): a
 * look at each of thousands of children at every accept made their set-up
 * quadratic in system calls. */
void server_reap(struct server *s, bool block)
{
	if (!block && !child_ended())
		return;
	for (size_t i = 0; i < s->nkids;) {
		pid_t r = waitpid(s->kids[i], NULL, block ? 0 : WNOHANG);
		if (r < 0 && errno == EINTR)
			continue;
		if (r == 0) {
			i++;
			continue;
		}
		s->kids[i] = s->kids[--s->nkids];   /* reaped, or not ours after all */
	}
}

static _Noreturn void child_serve(struct server *s, pid_t parent, int fd, unsigned long id,
				  const char *peer)
{
	sigset_t none;
	struct errbuf err;

	/* A server killed outright takes its connections with it: clients see
	 * the failure instead of a server that lives on without its parent. */
	if (die_with_parent(parent, SIGKILL) < 0)
		_exit(1);
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	signal(SIGINT, SIG_IGN);    /* the parent decides when to stop */
	signal(SIGTERM, SIG_DFL);   /* ... and says so with SIGTERM */
	signal(SIGPIPE, SIG_IGN);   /* a vanished client is a log line */
	close(s->lfd);
	close(s->stop_pipe[0]);
	close(s->stop_pipe[1]);
	if (pin_conn(s, id, peer) < 0)
		_exit(1);
	if (wire_serve_socket(fd, s->cfg.timeout_secs, &err) < 0)
		server_log(s, "connection %lu (%s): %s; closed it", id, peer, err.msg);
	_exit(0);
}

int server_spawn_process(struct server *s, int fd, unsigned long id, const char *peer)
{
	if (s->nkids == s->cap) {
		size_t cap = s->cap ? 2 * s->cap : 64;
		pid_t *k = realloc(s->kids, cap * sizeof(*k));
		if (!k) {
			server_log(s, "connection %lu (%s): out of memory; closed it", id, peer);
			return -1;
		}
		s->kids = k;
		s->cap = cap;
	}
	pid_t parent = getpid();
	pid_t pid = fork();
	if (pid < 0) {
		server_log(s, "connection %lu (%s): cannot fork a server process: %s (raise "
			   "ulimit -u, or lower --max-clients); closed it", id, peer, strerror(errno));
		return -1;
	}
	if (pid == 0)
		child_serve(s, parent, fd, id, peer);
	s->kids[s->nkids++] = pid;
	close(fd);
	return 0;
}

/* A connection process has nothing to save: SIGKILL ends it even when it
 * is stopped (SIGSTOP) or stuck, so the stop never waits for ever. */
void server_close_processes(struct server *s)
{
	for (size_t i = 0; i < s->nkids; i++)
		kill(s->kids[i], SIGKILL);
	server_reap(s, true);
}

