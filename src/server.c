/* See server.h. One accept loop polls the listening socket and a stop pipe;
 * each connection gets a child process (or a detached thread) that runs
 * wire_serve_socket() until its peer closes, misbehaves or times out.
 * Stopping shuts every connection down and waits for them, so nothing
 * outlives server_free(). This file: the log, the accept loop, serving in
 * the background and stopping; listening is server_listen.c's, the
 * connections server_conn.c's. */
#include "config.h"
#include "server.h"

#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

#include "clock.h"
#include "server_priv.h"
#include "wire.h"

/* ---- the log ------------------------------------------------------------ */

__attribute__((format(printf, 2, 0)))
static void log_write(const struct server *s, const char *fmt, va_list ap)
{
	char line[800];
	int n = snprintf(line, sizeof(line), "%s: ", s->prefix);

	vsnprintf(line + n, sizeof(line) - (size_t)n - 1, fmt, ap);
	n = (int)strlen(line);
	line[n++] = '\n';
	/* One write per line, so lines of concurrent connections never mix. */
	if (write(s->cfg.log_fd, line, (size_t)n) < 0) {
		/* nowhere left to say it */
	}
}

__attribute__((format(printf, 2, 3)))
void server_log_always(const struct server *s, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	log_write(s, fmt, ap);
	va_end(ap);
}

static void log_suppressed(const struct server *s, unsigned n)
{
	if (n)
		server_log_always(s, "%u more log lines suppressed (at most %d a second)", n,
			   SERVER_LOG_LINES_PER_SEC);
}

/* The first caller in a new second opens it, and says what the last ones
 * suppressed. */
static void log_new_second(const struct server *s)
{
	struct log_limit *l = s->log;
	uint64_t now = now_ns() / 1000000000u, seen = atomic_load(&l->second);

	if (now == seen || !atomic_compare_exchange_strong(&l->second, &seen, now))
		return;
	atomic_store(&l->lines, 0);
	log_suppressed(s, atomic_exchange(&l->suppressed, 0));
}

/* A line about one peer: a hostile crowd must not flood the log. */
__attribute__((format(printf, 2, 3)))
void server_log(const struct server *s, const char *fmt, ...)
{
	va_list ap;

	log_new_second(s);
	if (atomic_fetch_add(&s->log->lines, 1) >= SERVER_LOG_LINES_PER_SEC) {
		atomic_fetch_add(&s->log->suppressed, 1);
		return;
	}
	va_start(ap, fmt);
	log_write(s, fmt, ap);
	va_end(ap);
}

/* ---- accepting ---------------------------------------------------------- */

static unsigned live_connections(struct server *s)
{
	if (s->cfg.processes) {
		server_reap(s, false);
		return (unsigned)s->nkids;
	}
	pthread_mutex_lock(&s->lock);
	unsigned n = s->active;
	pthread_mutex_unlock(&s->lock);
	return n;
}

static void accept_failed(struct server *s)
{
	switch (errno) {
	case EINTR: case EAGAIN: case ECONNABORTED: case EPROTO: case EPERM:
		return;   /* that one connection is gone; the next may be fine */
	}
	server_log(s, "accepting a connection on %s: %s%s", s->addr, strerror(errno),
		   errno == EMFILE || errno == ENFILE ?
		   " (raise ulimit -n, or lower --max-clients)" : "");
	sleep_ns(ACCEPT_PAUSE_NS);
}

/* What every accepted socket gets before it is served: -T's options, and
 * the timeouts that drop a peer too slow inside a frame with no system call
 * added to the exchange. */
int server_prepare_conn(const struct server *s, int fd, struct errbuf *err)
{
	struct timeval t = { .tv_sec = s->cfg.timeout_secs };

	if (sockopts_apply(fd, &s->opts, err) < 0)
		return -1;
	if (s->cfg.timeout_secs &&
	    (setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &t, sizeof(t)) < 0 ||
	     setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &t, sizeof(t)) < 0))
		return err_errno(err, "setting the --timeout of %u s", s->cfg.timeout_secs);
	return 0;
}

static void accept_one(struct server *s)
{
	struct sockaddr_storage ss;
	socklen_t len = sizeof(ss);
	char peer[96];
	struct errbuf err;
	int fd = accept4(s->lfd, (struct sockaddr *)&ss, &len, SOCK_CLOEXEC);

	if (fd < 0) {
		accept_failed(s);
		return;
	}
	unsigned long id = ++s->next_id;
	server_format_addr(s, (struct sockaddr *)&ss, len, peer, sizeof(peer));
	unsigned live = s->cfg.max_clients ? live_connections(s) : 0;
	if (s->cfg.max_clients && live >= s->cfg.max_clients) {
		server_log(s, "connection %lu (%s): refused: already serving %u connections "
			   "(--max-clients %u)", id, peer, live, s->cfg.max_clients);
		close(fd);
		return;
	}
	if (server_prepare_conn(s, fd, &err) < 0) {
		server_log(s, "connection %lu (%s): %s; closed it", id, peer, err.msg);
		close(fd);
		return;
	}
	if ((s->cfg.processes ? server_spawn_process : server_spawn_thread)(s, fd, id, peer) < 0)
		close(fd);
}

int server_run(struct server *s)
{
	struct pollfd p[2] = {
		{ .fd = s->lfd, .events = POLLIN },
		{ .fd = s->stop_pipe[0], .events = POLLIN },
	};
	int rc = 0;

	if (s->cfg.uring_loops)
		return server_run_uring(s);
	if (s->cfg.processes && watch_child_ends(NULL) < 0) {
		server_log_always(s, "watching the connections' processes (SIGCHLD): %s",
				  strerror(errno));
		return -1;
	}
	for (;;) {
		if (s->cfg.processes)
			server_reap(s, false);
		log_new_second(s);
		int n = poll(p, 2, TICK_MS);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			server_log_always(s, "waiting for connections on %s: %s", s->addr, strerror(errno));
			rc = -1;
			break;
		}
		if (p[1].revents)
			break;
		if (p[0].revents & (POLLERR | POLLNVAL)) {
			server_log_always(s, "the listening socket %s failed", s->addr);
			rc = -1;
			break;
		}
		if (p[0].revents & POLLIN)
			accept_one(s);
	}
	/* Stop accepting first: a client connecting now is refused, not left waiting. */
	close(s->lfd);
	s->lfd = -1;
	if (s->cfg.processes)
		server_close_processes(s);
	else
		server_close_threads(s);
	log_suppressed(s, atomic_exchange(&s->log->suppressed, 0));
	return rc;
}

#ifndef HAVE_LIBURING
bool server_has_uring(void)
{
	return false;
}

int server_run_uring(struct server *s)
{
	(void)s;
	return -1;
}
#endif

/* ---- serving in the background ------------------------------------------ */

static void remove_socket(struct server *s)
{
	if (s->owns_path && unlink(s->path) < 0 && errno != ENOENT)
		server_log_always(s, "removing the socket %s: %s", s->path, strerror(errno));
	if (s->dir[0] && rmdir(s->dir) < 0 && errno != ENOENT)
		server_log_always(s, "removing the directory %s: %s", s->dir, strerror(errno));
	s->owns_path = false;
	s->dir[0] = '\0';
}

static void *run_thread(void *arg)
{
	server_run(arg);
	return NULL;
}

static int start_thread(struct server *s, struct errbuf *err)
{
	sigset_t all, old;

	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);   /* the embedding program's signals */
	int rc = pthread_create(&s->thread, NULL, run_thread, s);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (rc) {
		errno = rc;
		return err_errno(err, "starting the server thread for %s", s->addr);
	}
	s->has_thread = true;
	return 0;
}

static struct server *volatile listener_self;   /* in the listener process */

static void listener_on_term(int sig)
{
	int saved = errno;

	(void)sig;
	if (listener_self)
		server_request_stop(listener_self);
	errno = saved;
}

/* The forked listener: it holds the listening socket and nothing of its
 * parent's. When the parent dies it gets SIGTERM rather than SIGKILL, so
 * that it still closes its connections and removes its socket file. */
static _Noreturn void listener_main(struct server *s, pid_t parent)
{
	struct sigaction sa = { .sa_handler = listener_on_term };
	int keep[] = { s->lfd, s->stop_pipe[0], s->stop_pipe[1], s->cfg.log_fd };
	sigset_t none;

	if (die_with_parent(parent, SIGTERM) < 0) {
		remove_socket(s);
		_exit(1);
	}
	close_fds_except(keep, sizeof(keep) / sizeof(keep[0]));
	listener_self = s;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGTERM, &sa, NULL);
	signal(SIGINT, SIG_IGN);    /* Ctrl-C is for the parent, which then stops us */
	signal(SIGPIPE, SIG_IGN);
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	int rc = server_run(s);
	remove_socket(s);
	_exit(rc == 0 ? 0 : 1);
}

static int start_process(struct server *s, struct errbuf *err)
{
	sigset_t all, old;
	pid_t parent = getpid();

	/* Blocked across the fork: the child must not run its parent's
	 * handlers before it has its own. */
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	pid_t pid = fork();
	if (pid == 0)
		listener_main(s, parent);
	int saved = errno;
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (pid < 0) {
		errno = saved;
		return err_errno(err, "forking the server process for %s (raise ulimit -u?)",
				 s->addr);
	}
	s->listener = pid;
	/* Ours no more: what we fork later must not hold the listener. */
	close(s->lfd);
	close(s->stop_pipe[0]);
	close(s->stop_pipe[1]);
	s->lfd = s->stop_pipe[0] = s->stop_pipe[1] = -1;
	return 0;
}

int server_start(struct server *s, struct errbuf *err)
{
	return s->cfg.processes || s->cfg.apart ? start_process(s, err) : start_thread(s, err);
}

bool server_apart(unsigned nclients, const char *who)
{
	unsigned long want = 2ul * nclients + FDS_RUN_SPARE;
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) < 0 || rl.rlim_cur == RLIM_INFINITY || rl.rlim_cur >= want)
		return false;
	fprintf(stderr, "%s: note: %u connections need %lu open files for both their ends, more "
		"than this process may open (%llu, RLIMIT_NOFILE): the server's threads run in a "
		"process of their own\n", who, nclients, want, (unsigned long long)rl.rlim_cur);
	return true;
}

void server_request_stop(struct server *s)
{
	/* Full pipe: a stop is already pending, which is all we need. */
	if (write(s->stop_pipe[1], "x", 1) < 0) {
	}
}

/* SIGTERM, and SIGCONT in case it was stopped; SIGKILL after a few
 * seconds if it still has not gone: the run's end never hangs on it. */
static void stop_listener(struct server *s)
{
	if (kill(s->listener, SIGTERM) < 0 && errno != ESRCH)
		server_log_always(s, "stopping the server process %d: %s", (int)s->listener,
			   strerror(errno));
	kill(s->listener, SIGCONT);
	for (int waited_ms = 0;; waited_ms += 10) {
		pid_t r = waitpid(s->listener, NULL, WNOHANG);
		if (r != 0 && !(r < 0 && errno == EINTR))
			break;
		if (waited_ms == STOP_WAIT_SECS * 1000)
			kill(s->listener, SIGKILL);
		sleep_ns(10000000);
	}
	s->listener = 0;
}

void server_free(struct server *s)
{
	if (!s)
		return;
	if (s->has_thread) {
		server_request_stop(s);
		pthread_join(s->thread, NULL);
	}
	if (s->listener > 0)
		stop_listener(s);
	if (s->lfd >= 0)
		close(s->lfd);
	remove_socket(s);
	if (s->leaked)
		return;
	for (int i = 0; i < 2; i++)
		if (s->stop_pipe[i] >= 0)
			close(s->stop_pipe[i]);
	if (s->log)
		munmap(s->log, sizeof(*s->log));
	pthread_mutex_destroy(&s->lock);
	pthread_cond_destroy(&s->idle);
	free(s->kids);
	free(s);
}
