/* The server's event-loop shape (server_config.uring_loops): that many
 * threads, each an io_uring event loop (uring_loop.c) with its own ring,
 * all taking connections from the one listening socket with multishot
 * accepts. A loop's multishot accept drains the whole backlog of a burst
 * of connections, so the loop that wakes first would take them all:
 * connection k (from 1) is served by loop (k - 1) mod N, handed over
 * through that loop's inbox pipe when another accepted it. Connection k's
 * number, the --max-clients count and the log are the server's own; --cpus
 * pins loop k to entry k. The stop pipe, never read, stops every loop at
 * once. */
#include "config.h"
#include "server.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "server_priv.h"
#include "uring_loop.h"

enum { LOOP_BUFS = 256 };

struct loop_thread {
	struct server *s;
	struct loop_thread *all;      /* every loop's, n of them */
	unsigned n;
	int inbox[2];                 /* connections handed to this loop */
	unsigned index;
	pthread_t thread;
	bool started;
	int rc;
};

bool server_has_uring(void)
{
	return true;
}

static void peer_name(const struct server *s, int fd, char *out, size_t size)
{
	struct sockaddr_storage ss;
	socklen_t len = sizeof(ss);

	if (getpeername(fd, (struct sockaddr *)&ss, &len) < 0)
		snprintf(out, size, "a peer gone");
	else
		server_format_addr(s, (struct sockaddr *)&ss, len, out, size);
}

/* Connection id's loop; 1 once handed to it, 0 when it is this one (or the
 * hand-over failed: then served here, as before). */
static int hand_over(struct loop_thread *t, int fd, unsigned long id)
{
	struct loop_thread *to = &t->all[(id - 1) % t->n];
	struct uring_handoff h = { fd, id };

	if (to == t)
		return 0;
	for (;;) {
		ssize_t w = write(to->inbox[1], &h, sizeof(h));
		if (w == (ssize_t)sizeof(h))
			return 1;
		if (w < 0 && errno == EINTR)
			continue;
		return 0;
	}
}

static int accepted(void *arg, int fd, unsigned long *id)
{
	struct loop_thread *t = arg;
	struct server *s = t->s;
	struct errbuf err;
	char peer[96];

	pthread_mutex_lock(&s->lock);
	*id = ++s->next_id;
	bool full = s->cfg.max_clients && s->active >= s->cfg.max_clients;
	unsigned live = s->active;
	if (!full)
		s->active++;
	pthread_mutex_unlock(&s->lock);
	if (!full && server_prepare_conn(s, fd, &err) == 0)
		return hand_over(t, fd, *id);
	peer_name(s, fd, peer, sizeof(peer));
	if (full)
		server_log(s, "connection %lu (%s): refused: already serving %u connections "
			   "(--max-clients %u)", *id, peer, live, s->cfg.max_clients);
	else
		server_log(s, "connection %lu (%s): %s; closed it", *id, peer, err.msg);
	if (!full) {
		pthread_mutex_lock(&s->lock);
		s->active--;
		pthread_mutex_unlock(&s->lock);
	}
	close(fd);
	return -1;
}

static void ended(void *arg, int fd, unsigned long id, const char *why)
{
	struct server *s = ((struct loop_thread *)arg)->s;
	char peer[96];

	if (why) {
		peer_name(s, fd, peer, sizeof(peer));
		server_log(s, "connection %lu (%s): %s; closed it", id, peer, why);
	}
	pthread_mutex_lock(&s->lock);
	s->active--;
	pthread_mutex_unlock(&s->lock);
}

/* Every loop meets the same full fd table: said once per cause, not once
 * per loop and pause. */
static void accept_failed(void *arg, int err, unsigned pause_ms)
{
	struct server *s = ((struct loop_thread *)arg)->s;

	if (!pause_ms)
		return;   /* that one connection is gone; the next may be fine */
	pthread_mutex_lock(&s->lock);
	bool said = s->accept_errno == err;
	s->accept_errno = err;
	pthread_mutex_unlock(&s->lock);
	if (!said)
		server_log_always(s, "accepting a connection on %s: %s%s; each event loop pauses its "
				  "accepts %u ms after each failure (said once)", s->addr, strerror(err),
				  err == EMFILE || err == ENFILE ?
				  " (raise ulimit -n, or lower --max-clients)" : "", pause_ms);
}

static void *loop_main(void *arg)
{
	struct loop_thread *t = arg;
	struct server *s = t->s;
	struct uring_loop_config lc = {
		.listen_fd = s->lfd, .inbox_fd = t->inbox[0], .conn_fd = -1,
		.stop_fd = s->stop_pipe[0], .bufs = LOOP_BUFS,
		.accepted = accepted, .ended = ended, .accept_failed = accept_failed, .arg = t,
	};
	struct errbuf err;
	char who[32];

	snprintf(who, sizeof(who), "event loop %u", t->index);
	t->rc = cpu_list_pin(s->cfg.cpus, t->index, 0, who, &err);
	if (t->rc == 0)
		t->rc = uring_loop_run(&lc, &err);
	if (t->rc < 0) {
		server_log_always(s, "%s on %s: %s", who, s->addr, err.msg);
		server_request_stop(s);   /* the others stop too: the run fails whole */
	}
	return NULL;
}

/* Every loop's inbox, before any loop accepts. Room for a burst of
 * thousands of hand-overs where the kernel allows it (a full inbox blocks
 * the loop writing to it until its owner reads). */
static int inboxes_open(struct server *s, struct loop_thread *t, unsigned n)
{
	for (unsigned i = 0; i < n; i++)
		t[i] = (struct loop_thread){ .s = s, .all = t, .n = n, .index = i, .inbox = { -1, -1 } };
	for (unsigned i = 0; i < n; i++) {
		if (pipe2(t[i].inbox, O_CLOEXEC) < 0) {
			server_log_always(s, "event loop %u's inbox: pipe2: %s (raise ulimit -n?)", i,
					  strerror(errno));
			return -1;
		}
		(void)fcntl(t[i].inbox[1], F_SETPIPE_SZ, 1 << 20);   /* best effort */
	}
	return 0;
}

/* After the loops: connections handed over but never taken are closed. */
static void inboxes_close(struct server *s, struct loop_thread *t, unsigned n)
{
	struct uring_handoff h;

	for (unsigned i = 0; i < n; i++) {
		if (t[i].inbox[0] < 0)
			continue;
		if (fcntl(t[i].inbox[0], F_SETFL, O_NONBLOCK) == 0)
			while (read(t[i].inbox[0], &h, sizeof(h)) == (ssize_t)sizeof(h)) {
				close(h.fd);
				pthread_mutex_lock(&s->lock);
				s->active--;
				pthread_mutex_unlock(&s->lock);
			}
		close(t[i].inbox[0]);
		if (t[i].inbox[1] >= 0)
			close(t[i].inbox[1]);
	}
}

int server_run_uring(struct server *s)
{
	const unsigned n = s->cfg.uring_loops;
	struct loop_thread *t = calloc(n, sizeof(*t));
	sigset_t all, old;
	int rc = 0;

	if (!t) {
		server_log_always(s, "out of memory for %u event loops", n);
		return -1;
	}
	if (inboxes_open(s, t, n) < 0) {
		inboxes_close(s, t, n);
		free(t);
		return -1;
	}
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);   /* signals are the caller's */
	for (unsigned i = 0; i < n; i++) {
		int e = pthread_create(&t[i].thread, NULL, loop_main, &t[i]);
		if (e) {
			server_log_always(s, "starting event loop %u: %s (raise ulimit -u?)", i,
					  strerror(e));
			server_request_stop(s);
			rc = -1;
			break;
		}
		t[i].started = true;
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	for (unsigned i = 0; i < n; i++)
		if (t[i].started) {
			pthread_join(t[i].thread, NULL);
			rc |= t[i].rc;
		}
	inboxes_close(s, t, n);
	free(t);
	close(s->lfd);
	s->lfd = -1;
	return rc < 0 ? -1 : 0;
}
