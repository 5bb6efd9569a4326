/* The server's event-loop shape (server_config.uring_loops): that many
 * threads, each an io_uring event loop (uring_loop.c) with its own ring,
 * all taking connections from the one listening socket with multishot
 * accepts, each serving those it took. Connection k's number, the
 * --max-clients count and the log are the server's own; --cpus pins loop
 * k to entry k. The stop pipe, never read, stops every loop at once. */
#include "config.h"
#include "server.h"

#include <errno.h>
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

static int accepted(void *arg, int fd, unsigned long *id)
{
	struct server *s = arg;
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
		return 0;
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
	struct server *s = arg;
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
	struct server *s = arg;

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
		.listen_fd = s->lfd, .conn_fd = -1, .stop_fd = s->stop_pipe[0], .bufs = LOOP_BUFS,
		.accepted = accepted, .ended = ended, .accept_failed = accept_failed, .arg = s,
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

int server_run_uring(struct server *s)
{
	struct loop_thread *t = calloc(s->cfg.uring_loops, sizeof(*t));
	sigset_t all, old;
	int rc = 0;

	if (!t) {
		server_log_always(s, "out of memory for %u event loops", s->cfg.uring_loops);
		return -1;
	}
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);   /* signals are the caller's */
	for (unsigned i = 0; i < s->cfg.uring_loops; i++) {
		t[i] = (struct loop_thread){ .s = s, .index = i };
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
	for (unsigned i = 0; i < s->cfg.uring_loops; i++)
		if (t[i].started) {
			pthread_join(t[i].thread, NULL);
			rc |= t[i].rc;
		}
	free(t);
	close(s->lfd);
	s->lfd = -1;
	return rc < 0 ? -1 : 0;
}
