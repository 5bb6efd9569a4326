/* socketpair: one AF_UNIX SOCK_STREAM socketpair per client to a server of
 * its own (a thread, or a process with --processes) running the shared
 * echo loop. What it measures is the kernel's unix-socket stream path and
 * the wake-ups of a request/response exchange: socket buffers, skb
 * allocation and one copy each way, but no TCP/IP, no loopback device and
 * no offloads. Its kernel path is unix's: set beside unix, what differs
 * is a server per client and no listener; beside tcp or pipe it is a
 * different path, not a layer (docs/method.md). */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <unistd.h>

#include "backend.h"
#include "companion.h"
#include "sockopt.h"
#include "wire.h"

struct sp_conn {
	int fd;               /* the client's end */
	int server_fd;        /* the server's end; -1 in the client once a process has it */
	struct companion server;
	char peer[40];
	uint8_t buf[WIRE_LIMIT];
};

/* A server that gives up shuts its end, so its client sees the end of
 * the stream at once instead of waiting for a reply that never comes. */
static void serve(void *arg)
{
	struct sp_conn *c = arg;
	struct errbuf err;

	if (wire_serve_socket(c->server_fd, 0, &err) < 0)
		fprintf(stderr, "tbench: %s: %s\n", c->peer, err.msg);
	shutdown(c->server_fd, SHUT_RDWR);
}

static int sp_open(void *run, const struct backend_config *cfg, unsigned client,
		   void **conn, struct errbuf *err)
{
	struct sp_conn *c = calloc(1, sizeof(*c));
	int sv[2];

	(void)run;
	if (!c)
		return err_set(err, "socketpair: out of memory");
	snprintf(c->peer, sizeof(c->peer), "socketpair server %u", client);
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0) {
		free(c);
		return err_errno(err, "socketpair: creating the socket pair to its server");
	}
	c->fd = sv[0];
	c->server_fd = sv[1];
	c->server = (struct companion){
		.serve = serve, .arg = c, .nkeep = 1, .keep = { c->server_fd },
		.cpus = cfg->server_cpus, .index = client,
	};
	if (companion_start(&c->server, backend_solo_processes(cfg), c->peer, err) < 0) {
		close(sv[0]);
		close(sv[1]);
		free(c);
		return -1;
	}
	if (companion_is_process(&c->server)) {
		close(c->server_fd);
		c->server_fd = -1;
	}
	*conn = c;
	return 0;
}

static int sp_exchange(void *conn, uint32_t send, uint32_t recv, struct errbuf *err)
{
	struct sp_conn *c = conn;

	return wire_exchange(c->fd, c->fd, c->buf, send, recv, c->peer, err);
}

/* Shutting the client's end is the server's end-of-stream; it also frees
 * a server stuck mid-reply after the client gave up on it. */
static void sp_close(void *conn)
{
	struct sp_conn *c = conn;

	shutdown(c->fd, SHUT_RDWR);
	close(c->fd);
	companion_wait(&c->server);
	if (c->server_fd >= 0)
		close(c->server_fd);
	free(c);
}

static void sp_socket_info(void *conn, struct socket_readback *out)
{
	const struct sp_conn *c = conn;

	sockopt_read_back(c->fd, out);
}

const struct backend backend_socketpair = {
	.name = "socketpair",
	.summary = "an AF_UNIX socketpair per client to its own server thread/process",
	/* unix's kernel path with pipe's server per client, no listener */
	.path = { .extends = "nop", .layer = "socketpair", .adds = "unix socket stream, a server per client",
		  .differs_from = "unix" },
	.open = sp_open,
	.exchange = sp_exchange,
	.close = sp_close,
	.socket_info = sp_socket_info,
	.add_settings = backend_no_settings,
};
