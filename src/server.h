/* The listening server of the tbench wire protocol: tbench_srv's engine,
 * and the server the tcp and unix backends start for a run of their own.
 *
 * It listens on TCP (every address of the host unless told one) or on a
 * unix socket path, and answers each connection with wire_serve_socket(),
 * in a process of its own or a thread. A connection that sends what the
 * protocol cannot accept, or is too slow past the timeout inside a frame, is
 * logged in one line and closed; the log says at most a few lines a
 * second, then how many it suppressed; everything else goes on. */
#ifndef TBENCH_SERVER_H
#define TBENCH_SERVER_H

#include <stdbool.h>

#include "cpulist.h"
#include "sockopt.h"
#include "util.h"

struct server_config {
	const char *listen;        /* address or host name; NULL: every address, IPv6 and IPv4 */
	const char *port;          /* NULL: WIRE_PORT; "0": any free port */
	const char *unix_path;     /* set: a unix socket here instead of TCP */
	const char *private_dir;   /* with unix_path: its directory, made for it: removed with it */
	const struct sockopts *opts;  /* applied to every accepted socket; may be NULL */
	const struct cpu_list *cpus;  /* connection k's process or thread pinned to entry k; may be NULL */
	bool processes;            /* a process per connection (and per server_start) */
	bool apart;                /* threads, in a forked process of their own (server_apart()) */
	bool mptcp;                /* listen with IPPROTO_MPTCP: MPTCP peers, and TCP ones as TCP */
	unsigned max_clients;      /* connections at once, beyond which one is refused; 0: no limit */
	unsigned timeout_secs;     /* drop a peer this slow inside a frame; 0: never */
	unsigned uring_loops;      /* > 0: that many io_uring event loops (threads) serve every
				    * connection instead (server_uring.c); timeout_secs unused */
	const char *log_prefix;    /* starts every log line, e.g. "tbench_srv" */
	int log_fd;                /* where log lines go (2 for stderr) */
};

/* Defaults for a server that strangers can reach (tbench_srv); macros, so
 * that help text can quote them. */
#define SERVER_MAX_CLIENTS 4096
#define SERVER_TIMEOUT_SECS 60
enum { SERVER_LOG_LINES_PER_SEC = 10 };

struct server;

/* Bad configuration (address, port, path): the caller's usage error. */
enum { SERVER_BAD_CONFIG = -2 };

/* Bind and listen. 0; -1 when the system refused (err says what to do);
 * SERVER_BAD_CONFIG when the config cannot work. */
int server_listen(const struct server_config *cfg, struct server **out, struct errbuf *err);

/* Whether this kernel and network namespace can make MPTCP sockets: 0;
 * SERVER_BAD_CONFIG with err naming what is missing (the kernel's support,
 * or net.mptcp.enabled); -1 when the system refused for another reason. */
int server_mptcp_check(struct errbuf *err);

/* "[::]:7003", "127.0.0.1:7003", "[::1]:7003" or the socket path; the port
 * chosen; whether it is every address of the host. */
const char *server_address(const struct server *s);
unsigned server_port(const struct server *s);
bool server_on_every_address(const struct server *s);

/* With client threads: whether a server of `nclients` connections must run
 * apart, its threads in a process of its own, because this process may not
 * open a file for both ends of every connection (RLIMIT_NOFILE). When it
 * must, a note on stderr, starting with `who`, says so. */
bool server_apart(unsigned nclients, const char *who);

/* Whether this build has the event-loop server (liburing). */
bool server_has_uring(void);

/* Serve in the calling thread until server_request_stop(); then close
 * every connection and return 0 (-1 if polling itself failed). */
int server_run(struct server *s);

/* Serve in the background: from a thread, or with cfg->processes from a
 * forked process that alone holds the listening socket, so processes the
 * caller forks later inherit none of the server's descriptors. That
 * process dies with the thread that called this. */
int server_start(struct server *s, struct errbuf *err);

/* Async-signal-safe: stop accepting; server_run() returns soon after. */
void server_request_stop(struct server *s);

/* Stop (joining the background thread or process, if any), close every
 * connection, remove the unix socket (and private_dir) and free. Safe on NULL. */
void server_free(struct server *s);

#endif
