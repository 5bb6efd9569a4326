/* mptcp: tcp with IPPROTO_MPTCP sockets, to an MPTCP-capable server
 * (tbench_srv --mptcp) at SERVER, or to its own server, which listens with
 * MPTCP, without one. Everything else is tcp's (backends/tcp.h): --port,
 * -T, reply bodies. mptcp minus tcp is the cost of MPTCP's layer over the
 * TCP subflows; with more subflows (endpoints on a veth, by `ip mptcp`),
 * what spreading one stream over several paths costs or gains.
 *
 * A peer that speaks only TCP (dbench's tbench_srv, ours without --mptcp)
 * still works: the kernel falls back to plain TCP on that connection. Each
 * connection says which it got (getsockopt MPTCP_INFO, Linux 5.16 and
 * later) when it closes; --json's "backend_counters" and --cost add them
 * up, and a fallback of client 0 is noted on stderr as it connects. */
#include "config.h"

#include <errno.h>
#include <linux/mptcp.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

#include "server.h"
#include "tcp.h"

enum mptcp_counter { MP_USED, MP_FALLBACK, MP_UNKNOWN, MP_SUBFLOWS, MP_N };
static const char *const mptcp_counter_names[] = {
	[MP_USED] = "mptcp_connections", [MP_FALLBACK] = "tcp_fallbacks",
	[MP_UNKNOWN] = "unknown_connections", [MP_SUBFLOWS] = "subflows", [MP_N] = NULL,
};
_Static_assert((int)MP_N <= (int)BACKEND_COUNTERS, "mptcp counts more than the driver keeps");

static const struct tcp_flavour mptcp_flavour = {
	.name = "mptcp", .protocol = IPPROTO_MPTCP, .local_server_first = false,
};

/* tcp's checks, and a kernel that has MPTCP turned on: else exit 2. */
static int mptcp_check(const struct backend_config *cfg, struct errbuf *err)
{
	struct errbuf why;

	if (tcp_check_as(&mptcp_flavour, cfg, err) < 0)
		return -1;
	if (server_mptcp_check(&why) == SERVER_BAD_CONFIG)
		return err_set(err, "mptcp: %s", why.msg);
	return 0;   /* any other failure is start()'s to report */
}

static int mptcp_start(const struct backend_config *cfg, void **run, struct errbuf *err)
{
	return tcp_start_as(&mptcp_flavour, cfg, run, err);
}

/* Which a connection is: MP_USED (then *subflows its subflows),
 * MP_FALLBACK (the kernel fell back to TCP), or MP_UNKNOWN. */
static enum mptcp_counter connection_kind(int fd, unsigned *subflows)
{
	struct mptcp_info info;
	socklen_t len = sizeof(info);

	memset(&info, 0, sizeof(info));
	*subflows = 0;
	if (getsockopt(fd, SOL_MPTCP, MPTCP_INFO, &info, &len) < 0)
		return errno == EOPNOTSUPP ? MP_FALLBACK : MP_UNKNOWN;
	if (info.mptcpi_flags & MPTCP_INFO_FLAG_FALLBACK)
		return MP_FALLBACK;
	*subflows = 1u + info.mptcpi_subflows;   /* the initial one and those added */
	return MP_USED;
}

static int mptcp_open(void *run, const struct backend_config *cfg, unsigned client, void **conn,
		      struct errbuf *err)
{
	static bool noted;   /* once per process: client 0 lives in one */
	unsigned subflows;

	if (tcp_open(run, cfg, client, conn, err) < 0)
		return -1;
	const struct wire_stream *c = *conn;
	if (client == 0 && !noted && connection_kind(c->fd, &subflows) == MP_FALLBACK) {
		noted = true;
		fprintf(stderr, "tbench: mptcp: %s answered as plain TCP: the kernel fell back to "
			"TCP (an MPTCP server: tbench_srv --mptcp)\n", c->peer);
	}
	return 0;
}

static void mptcp_counters(void *conn, uint64_t sum[BACKEND_COUNTERS])
{
	const struct wire_stream *c = conn;
	unsigned subflows;

	sum[connection_kind(c->fd, &subflows)]++;
	sum[MP_SUBFLOWS] += subflows;
}

const struct backend backend_mptcp = {
	.name = "mptcp",
	.summary = "MPTCP to tbench_srv --mptcp at SERVER:" WIRE_PORT_STRING
		   ", or to its own MPTCP server on 127.0.0.1",
	.flags = BACKEND_TAKES_SERVER | BACKEND_TCP | BACKEND_RECONNECTS | BACKEND_FAMILY |
		 BACKEND_SOCKOPTS | BACKEND_OWN_SERVER | BACKEND_MULTIPATH | BACKEND_COPY_REPLIES,
	/* MPTCP over its TCP subflow: every step of tcp's and its own */
	.path = { .extends = "tcp", .layer = "mptcp", .adds = "MPTCP over its TCP subflow",
		  .drops_replies = true },
	.check = mptcp_check,
	.start = mptcp_start,
	.open = mptcp_open,
	.exchange = wire_stream_exchange,
	.close = wire_stream_close,
	.stop = tcp_stop,
	.socket_info = tcp_socket_info,
	.counters = mptcp_counters,
	.counter_names = mptcp_counter_names,
	.add_settings = backend_no_settings,
};
