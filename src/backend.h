/* A backend is one way for bytes to travel between a client and its server.
 *
 * The driver replays the loadfile and calls exchange() once per operation:
 * send `send` bytes, receive `recv` bytes, return when the reply is in.
 * Backends never see SMB; the driver never names a backend. */
#ifndef TBENCH_BACKEND_H
#define TBENCH_BACKEND_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "util.h"

struct json_object;

/* add_settings of a backend that has no settings of its own. */
void backend_no_settings(struct json_object *into, const void *settings);

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
	bool no_own_server;       /* --no-own-server: never start a server of tbench's own */
	const char *tcp_options;  /* -T, or NULL */
	unsigned nclients;
	bool processes;           /* clients are processes (backend_solo_processes()) */
	unsigned clients_per_process;  /* with processes: clients (threads) in each; 0: one */
	bool copy_replies;        /* copy reply bodies to user space (tcp discards them by default, as dbench) */
};

/* Clients are processes of one client each: so are the servers a backend
 * brings for each. A process of several clients (--clients-per-process)
 * runs their servers as threads of its own: forking a process from one of
 * thousands of threads copies all their page tables every time. */
static inline bool backend_solo_processes(const struct backend_config *cfg)
{
	return cfg->processes && cfg->clients_per_process <= 1;
}

/* A command-line option of one backend's own. tbench's --help lists it
 * (after the backend's name) and options.c hands its value to parse(),
 * which keeps it in the backend's settings: the backend alone knows what
 * the value means, and a new setting touches no file but the backend's.
 * parse() fails with err naming the flag and what it takes (exit 2). */
struct backend_option {
	const char *flag;         /* the long option without "--"; unique among all backends */
	const char *arg;          /* the value's name in --help, e.g. "BYTES" */
	const char *help;         /* one line for --help */
	int (*parse)(void *settings, const char *text, struct errbuf *err);
	bool others_refuse;       /* with another -b it is bad usage (exit 2), not ignored */
};

/* Counts of a backend's own, e.g. sends that were really zero-copy. */
enum { BACKEND_COUNTERS = 6 };

enum backend_flags {
	BACKEND_TAKES_SERVER = 1 << 0,   /* accepts a SERVER argument */
	BACKEND_TCP = 1 << 1,            /* its bytes travel as TCP segments: network counters apply */
	BACKEND_RECONNECTS = 1 << 2,     /* close() and open() again make a new connection (--reconnect) */
	BACKEND_FAMILY = 1 << 3,         /* follows --family (IPv4 or IPv6) */
	/* What the sweep needs to know, printed by `tbench -b list`: */
	BACKEND_OFFLOADS = 1 << 4,       /* runs once per TSO/GSO/GRO setting of the device it crosses */
	BACKEND_SOCKOPTS = 1 << 5,       /* its TCP sockets take -T (congestion control, buffers, ...) */
	BACKEND_OWN_SERVER = 1 << 6,     /* without SERVER it starts a shared server of its own */
	BACKEND_WIRE = 1 << 7,           /* the sweep sends it over --veth's pair and --dev's device */
	BACKEND_MULTIPATH = 1 << 8,      /* wants tbench_srv --mptcp and a second path (--veth) */
	BACKEND_SWEPT = 1 << 9,          /* in tbench-sweep's default set of backends */
	BACKEND_COPY_REPLIES = 1 << 10,  /* drops reply bodies in the kernel unless --copy-replies */
	BACKEND_YARDSTICK = 1 << 11,     /* in the short yardstick a sweep runs before its plan */
};

/* Where a backend's path sits among the others', for the decomposition
 * (src/stats_model.c derives the stack from these; docs/method.md). A
 * difference of two backends is a layer only where one's path contains
 * the other's: every step of the lesser is a step of the greater. */
struct backend_path {
	/* The backend whose whole path this one's contains; NULL: none. A
	 * backend with adds and no extends is a root (the harness). */
	const char *extends;
	const char *layer;               /* what it adds, as a short name: "copy_wakeup" */
	const char *adds;                /* what it adds, for a reader: "copy + wake-up" */
	/* The backend that does the same exchange by a different kernel path,
	 * set beside it: their difference is not a layer. */
	const char *differs_from;
	/* Its reply bodies do not reach user space (tcp's MSG_TRUNC, unless
	 * --copy-replies): set beside a backend that copies them, the
	 * difference counts that copy too. */
	bool drops_replies;
};

struct backend {
	const char *name;
	const char *summary;             /* one line for `tbench -b help` */
	unsigned flags;
	struct backend_path path;        /* optional: outside the decomposition's model without */
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
	/* Optional: its own options, ending with a NULL flag, and the settings
	 * they fill in (the backend's file-scope struct, read by its functions). */
	const struct backend_option *options;
	void *settings;
	/* Required: adds its settings to --json's "settings" object, or is
	 * backend_no_settings, saying it has none. Every backend built adds
	 * its own, whichever ran, so that every document has the same keys. */
	void (*add_settings)(struct json_object *into, const void *settings);
};

#endif
