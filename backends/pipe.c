/* pipe: two pipes per client to a server of its own (a thread, or a
 * process with --processes) that speaks the tbench wire protocol. What it
 * measures is the cost of the kernel's pipe path and the wake-ups of a
 * request/response exchange, without any network stack. */
#include "config.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "backend.h"
#include "companion.h"
#include "wire.h"

struct pipe_conn {
	int to_server[2];     /* client writes [1], server reads [0] */
	int from_server[2];   /* server writes [1], client reads [0] */
	struct companion server;
	char peer[32];
	uint8_t buf[WIRE_LIMIT];
};

static void serve(void *arg)
{
	struct pipe_conn *c = arg;
	struct errbuf err;

	if (wire_serve_pipe(c->to_server[0], c->from_server[1], &err) < 0)
		fprintf(stderr, "tbench: %s: %s\n", c->peer, err.msg);
}

/* Room for the largest frame, so a request goes in with one write. */
static void grow_pipe(int fd)
{
	(void)fcntl(fd, F_SETPIPE_SZ, 128 * 1024);  /* best effort: 64 KiB works too */
}

static void close_pipes(struct pipe_conn *c)
{
	for (int i = 0; i < 2; i++) {
		if (c->to_server[i] >= 0)
			close(c->to_server[i]);
		if (c->from_server[i] >= 0)
			close(c->from_server[i]);
	}
}

static int pipe_open(void *run, const struct backend_config *cfg, unsigned client,
		     void **conn, struct errbuf *err)
{
	struct pipe_conn *c = calloc(1, sizeof(*c));

	(void)run;
	if (!c)
		return err_set(err, "pipe: out of memory");
	c->to_server[0] = c->to_server[1] = c->from_server[0] = c->from_server[1] = -1;
	snprintf(c->peer, sizeof(c->peer), "pipe server %u", client);
	if (pipe2(c->to_server, O_CLOEXEC) < 0 || pipe2(c->from_server, O_CLOEXEC) < 0) {
		err_errno(err, "pipe: creating the pipes to its server");
		goto fail;
	}
	grow_pipe(c->to_server[1]);
	grow_pipe(c->from_server[1]);
	c->server = (struct companion){
		.serve = serve, .arg = c, .nkeep = 2,
		.keep = { c->to_server[0], c->from_server[1] },
		.cpus = cfg->server_cpus, .index = client,
	};
	if (companion_start(&c->server, backend_solo_processes(cfg), c->peer, err) < 0)
		goto fail;
	if (companion_is_process(&c->server)) {
		close(c->to_server[0]);
		close(c->from_server[1]);
		c->to_server[0] = c->from_server[1] = -1;
	}
	*conn = c;
	return 0;
fail:
	close_pipes(c);
	free(c);
	return -1;
}

static int pipe_exchange(void *conn, uint32_t send, uint32_t recv, struct errbuf *err)
{
	struct pipe_conn *c = conn;

	return wire_exchange(c->to_server[1], c->from_server[0], c->buf, send, recv,
			     c->peer, err);
}

/* Closing both client ends is the server's end-of-stream; it also frees a
 * server stuck mid-reply after the client gave up on it. */
static void pipe_close(void *conn)
{
	struct pipe_conn *c = conn;

	close(c->to_server[1]);
	close(c->from_server[0]);
	c->to_server[1] = c->from_server[0] = -1;
	companion_wait(&c->server);
	close_pipes(c);
	free(c);
}

const struct backend backend_pipe = {
	.name = "pipe",
	.summary = "two pipes per client to its own server thread/process: no network stack",
	.flags = BACKEND_SWEPT | BACKEND_YARDSTICK,
	/* every step of nop's (the driver, the memcpy()s), then the kernel's */
	.path = { .extends = "nop", .layer = "copy_wakeup", .adds = "copy + wake-up" },
	.open = pipe_open,
	.exchange = pipe_exchange,
	.close = pipe_close,
	.add_settings = backend_no_settings,
};
