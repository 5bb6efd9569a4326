/* A backend is one way for bytes to travel between a client and its server.
 *
 * The driver replays the loadfile and calls exchange() once per operation:
 * send `send` bytes, receive `recv` bytes, return when the reply is in.
 * Backends never see SMB; the driver never names a backend. */
#ifndef TBENCH_BACKEND_H
#define TBENCH_BACKEND_H

#include <stdbool.h>
#include <stdint.h>

#include "util.h"

struct cpu_list;

/* A connection's socket as the kernel has it, read back once after it
 * connected (client 0's first connection), for --json. */
struct socket_readback {
	bool known;
	int family;               /* AF_INET, AF_INET6, AF_UNIX */
	char cc[16];              /* TCP_CONGESTION; "" when not TCP */
	int nodelay;              /* TCP_NODELAY 0 or 1; -1 when not TCP */
	int sndbuf, rcvbuf;       /* SO_SNDBUF, SO_RCVBUF as the kernel reports them */
};

/* Settings a backend may read, from the command line. */
struct backend_config {
	const char *server;       /* SERVER argument: a remote peer, or NULL */
	int family;               /* --family: AF_INET or AF_INET6; AF_UNSPEC (0): as SERVER resolves */
	const struct cpu_list *server_cpus;  /* --server-cpus: client i's server on entry i, or NULL */
	const char *port;         /* --port, or NULL for the backend's default */
	const char *unix_path;    /* --unix PATH, or NULL */
	bool no_own_server;       /* --no-own-server: never start a server of tbench's own */
	const char *tcp_options;  /* -T, or NULL */
	unsigned nclients;
	bool processes;           /* clients are processes: so are the servers a backend brings */
	bool copy_replies;        /* copy reply bodies to user space (tcp discards them by default, as dbench) */
	const char *zerocopy_threshold;  /* tcp-zc: smallest request sent with MSG_ZEROCOPY, or NULL */
	unsigned spin_us;         /* shm: --spin, microseconds of spinning before a futex wait */
	struct uring_settings {   /* uring: --uring */
		bool sqpoll, files, buffers;
		uint32_t zc_min;      /* IORING_OP_SEND_ZC for sends of at least this; 0: never */
	} uring;
};

/* Counts of a backend's own, e.g. sends that were really zero-copy. */
enum { BACKEND_COUNTERS = 6 };

enum backend_flags {
	BACKEND_TAKES_SERVER = 1 << 0,   /* accepts a SERVER argument */
	BACKEND_TCP = 1 << 1,            /* its bytes travel as TCP segments: network counters apply */
	BACKEND_RECONNECTS = 1 << 2,     /* close() and open() again make a new connection (--reconnect) */
	BACKEND_FAMILY = 1 << 3,         /* follows --family (IPv4 or IPv6) */
};

struct backend {
	const char *name;
	const char *summary;             /* one line for `tbench -b help` */
	unsigned flags;
	/* Optional: once per run before any client, e.g. to start a shared server. */
	int (*start)(const struct backend_config *cfg, void **run, struct errbuf *err);
	/* One client's connection (and its private server, if it brings one).
	 * Runs in the client's own thread or process. */
	int (*open)(void *run, const struct backend_config *cfg, unsigned client,
		    void **conn, struct errbuf *err);
	/* The hot path: 0 when the reply is in, -1 with err naming the peer. */
	int (*exchange)(void *conn, uint32_t send, uint32_t recv, struct errbuf *err);
	void (*close)(void *conn);
	void (*stop)(void *run);         /* optional */
	/* Optional: check the command line's settings before anything starts;
	 * a failure is bad usage (exit 2), e.g. an unknown -T option. */
	int (*check)(const struct backend_config *cfg, struct errbuf *err);
	/* Optional: adds the connection's own counts to `sum`, named by
	 * counter_names (NULL-terminated, at most BACKEND_COUNTERS). Called
	 * before every close(); the driver adds up every client's, over the
	 * whole run, for --json and --cost. */
	void (*counters)(void *conn, uint64_t sum[BACKEND_COUNTERS]);
	const char *const *counter_names;
	/* Optional: the connection's socket read back (getsockopt), once. */
	void (*socket_info)(void *conn, struct socket_readback *out);
};

#endif
