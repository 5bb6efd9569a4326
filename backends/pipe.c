/* pipe: two pipes per client to a server of its own (a thread, or a
 * process with --processes) that speaks the tbench wire protocol. What it
 * measures is the cost of the kernel's pipe path and the wake-ups of a
 * request/response exchange, without any network stack. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include "backend.h"
#include "wire.h"

struct pipe_conn {
	int to_server[2];     /* client writes [1], server reads [0] */
	int from_server[2];   /* server writes [1], client reads [0] */
	pid_t server_pid;     /* --processes */
	pthread_t server_thread;
	char peer[32];
	uint8_t buf[WIRE_LIMIT];
};

static void serve(struct pipe_conn *c)
{
	struct errbuf err;

	if (wire_serve(c->to_server[0], c->from_server[1], &err) < 0)
		fprintf(stderr, "tbench: %s: %s\n", c->peer, err.msg);
}

static void *server_thread(void *arg)
{
	serve(arg);
	return NULL;
}

/* Room for the largest frame, so a request goes in with one write. */
static void grow_pipe(int fd)
{
	(void)fcntl(fd, F_SETPIPE_SZ, 128 * 1024);  /* best effort: 64 KiB works too */
}

static int start_server(struct pipe_conn *c, bool as_process, struct errbuf *err)
{
	if (!as_process) {
		int rc = pthread_create(&c->server_thread, NULL, server_thread, c);
		if (rc) {
			errno = rc;
			return err_errno(err, "pipe: starting %s thread", c->peer);
		}
		return 0;
	}
	c->server_pid = fork();
	if (c->server_pid < 0)
		return err_errno(err, "pipe: forking %s", c->peer);
	if (c->server_pid == 0) {
		signal(SIGINT, SIG_IGN);   /* the parent coordinates Ctrl-C */
		close(c->to_server[1]);
		close(c->from_server[0]);
		serve(c);
		_exit(0);
	}
	close(c->to_server[0]);
	close(c->from_server[1]);
	c->to_server[0] = c->from_server[1] = -1;
	return 0;
}

static int pipe_open(void *run, const struct backend_config *cfg, unsigned client,
		     void **conn, struct errbuf *err)
{
	struct pipe_conn *c = calloc(1, sizeof(*c));

	(void)run;
	if (!c)
		return err_set(err, "pipe: client %u: out of memory", client);
	snprintf(c->peer, sizeof(c->peer), "pipe server %u", client);
	if (pipe2(c->to_server, O_CLOEXEC) < 0) {
		free(c);
		return err_errno(err, "pipe: client %u: pipe2", client);
	}
	if (pipe2(c->from_server, O_CLOEXEC) < 0) {
		close(c->to_server[0]);
		close(c->to_server[1]);
		free(c);
		return err_errno(err, "pipe: client %u: pipe2", client);
	}
	grow_pipe(c->to_server[1]);
	grow_pipe(c->from_server[1]);
	if (start_server(c, cfg->processes, err) < 0) {
		for (int i = 0; i < 2; i++) {
			close(c->to_server[i]);
			close(c->from_server[i]);
		}
		free(c);
		return -1;
	}
	*conn = c;
	return 0;
}

static int pipe_exchange(void *conn, uint32_t send, uint32_t recv, struct errbuf *err)
{
	struct pipe_conn *c = conn;

	return wire_exchange(c->to_server[1], c->from_server[0], c->buf, send, recv,
			     c->peer, err);
}

/* Closing the request pipe is the server's end-of-stream. */
static void pipe_close(void *conn)
{
	struct pipe_conn *c = conn;

	/* Closing both client ends also frees a server stuck mid-reply after
	 * the client gave up on it. */
	close(c->to_server[1]);
	close(c->from_server[0]);
	if (c->server_pid > 0) {
		while (waitpid(c->server_pid, NULL, 0) < 0 && errno == EINTR)
			;
	} else {
		pthread_join(c->server_thread, NULL);
		close(c->to_server[0]);
		close(c->from_server[1]);
	}
	free(c);
}

const struct backend backend_pipe = {
	.name = "pipe",
	.summary = "two pipes per client to its own server thread/process: no network stack",
	.open = pipe_open,
	.exchange = pipe_exchange,
	.close = pipe_close,
};
