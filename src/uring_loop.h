/* An io_uring event loop serving the wire protocol: one thread, one ring
 * (SINGLE_ISSUER|DEFER_TASKRUN where the kernel has them), many
 * connections. A multishot accept on a listening socket takes them in; a
 * multishot receive into provided buffers reads each one's requests, which
 * are parsed where they land (only their 8-byte headers are kept); each
 * reply, its 4-byte length and that many zeros, goes out with one
 * SENDMSG. tbench_srv --uring runs several (server_uring.c); the uring
 * backend's per-connection server runs one with a single connection. */
#ifndef TBENCH_URING_LOOP_H
#define TBENCH_URING_LOOP_H

#include <stdbool.h>

#include "uring_ring.h"
#include "util.h"

/* A connection one loop accepted for another, written whole to that
 * loop's inbox pipe (16 bytes: under PIPE_BUF, so never split). */
struct uring_handoff {
	int fd;
	unsigned long id;
};

struct uring_loop_config {
	int listen_fd;        /* multishot accept on it; -1: serve conn_fd alone */
	int inbox_fd;         /* read end of a pipe of struct uring_handoff: connections
			       * handed to this loop by the others; -1: none */
	int conn_fd;          /* with listen_fd -1: the one connection, served until it ends */
	int stop_fd;          /* readable (a pipe never read): stop; -1: none */
	unsigned bufs;        /* provided buffers of the ring (a power of two) */
	/* An accepted socket: 0 and its id to serve it; 1 when handed to
	 * another loop (not served here, not closed); -1 when refused (the
	 * callee closed it). NULL: every one served. */
	int (*accepted)(void *arg, int fd, unsigned long *id);
	/* A connection ending, before its fd is closed: `why` NULL when the
	 * peer closed between frames, else what went wrong. */
	void (*ended)(void *arg, int fd, unsigned long id, const char *why);
	/* An accept failed with `err` (an errno); the next comes after
	 * pause_ms (0: at once). NULL: not said. */
	void (*accept_failed)(void *arg, int err, unsigned pause_ms);
	void *arg;
	struct uring_ring_got *got;   /* what the ring got, or NULL */
};

/* Serves until stop_fd is readable (or the one connection ended); 0, or
 * -1 with err when the ring could not be set up or failed. */
int uring_loop_run(const struct uring_loop_config *cfg, struct errbuf *err);

#endif
