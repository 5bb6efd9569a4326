/* The tcp backend's connection code (backends/tcp.c), shared with the
 * backends that are tcp plus one thing: tcp-zc (zero-copy sends) and mptcp
 * (MPTCP sockets under the same stream). Each describes itself with a
 * flavour; everything else (SERVER, --port, -T, its own server when there
 * is no SERVER, connecting, errors) is tcp's. */
#ifndef TBENCH_BACKEND_TCP_H
#define TBENCH_BACKEND_TCP_H

#include <stdbool.h>

#include "backend.h"
#include "wire.h"

struct tcp_flavour {
	const char *name;          /* the backend's: starts its messages, names its peer */
	int protocol;              /* of every socket, ours and our own server's: 0 is TCP,
				    * IPPROTO_MPTCP */
	bool local_server_first;   /* no SERVER: a server already on localhost first, as dbench */
	unsigned uring_loops;      /* its own server: io_uring event loops (server.h); 0: tcp's */
};

extern const struct tcp_flavour tcp_plain;   /* tcp's own */

/* The backend members, for a flavour; tcp_stop() and tcp_open() serve every
 * flavour as they are (the run remembers its flavour). */
int tcp_check_as(const struct tcp_flavour *fl, const struct backend_config *cfg,
		 struct errbuf *err);
int tcp_start_as(const struct tcp_flavour *fl, const struct backend_config *cfg, void **run,
		 struct errbuf *err);
void tcp_stop(void *run);
int tcp_open(void *run, const struct backend_config *cfg, unsigned client, void **conn,
	     struct errbuf *err);

/* The connection's socket read back (sockopt_read_back): the
 * socket_info member of every flavour, whose conn starts with a stream. */
void tcp_socket_info(void *conn, struct socket_readback *out);

/* tcp_open() into a stream the caller holds (first member of a larger
 * conn): connected, -T applied, replies discarded unless --copy-replies. */
int tcp_open_stream(void *run, const struct backend_config *cfg, struct wire_stream *c,
		    struct errbuf *err);

#endif
