/* The listening server of the tbench wire protocol: tbench_srv's engine,
 * and the server the tcp and unix backends start for a run of their own.
 *
 * It listens on one TCP address (127.0.0.1:7003 unless told otherwise) or
 * one unix socket path, and answers each connection with wire_serve(), in
 * a thread of its own (the default) or a forked process. A connection that
 * sends what the protocol cannot accept is logged in one line and closed;
 * everything else goes on. */
#ifndef TBENCH_SERVER_H
#define TBENCH_SERVER_H

#include <stdbool.h>

#include "sockopt.h"
#include "util.h"

struct server_config {
	const char *listen;        /* address or host name; NULL: 127.0.0.1 */
	const char *port;          /* NULL: 7003; "0": any free port */
	const char *unix_path;     /* set: a unix socket here instead of TCP */
	const struct sockopts *opts;  /* applied to every accepted socket; may be NULL */
	bool fork;                 /* a process per connection instead of a thread */
	unsigned max_connections;  /* 0: no limit */
	const char *log_prefix;    /* starts every log line, e.g. "tbench_srv" */
	int log_fd;                /* where log lines go (2 for stderr) */
};

struct server;

/* Bad configuration (address, port, path): the caller's usage error. */
enum { SERVER_BAD_CONFIG = -2 };

/* Bind and listen. 0; -1 when the system refused (err says what to do);
 * SERVER_BAD_CONFIG when the config cannot work. */
int server_listen(const struct server_config *cfg, struct server **out, struct errbuf *err);

/* "127.0.0.1:7003", "[::1]:7003" or the socket path; the port chosen. */
const char *server_address(const struct server *s);
unsigned server_port(const struct server *s);

/* Serve in the calling thread until server_request_stop(); then close
 * every connection and return 0 (-1 if polling itself failed). */
int server_run(struct server *s);

/* Serve from a background thread (signals blocked there): the embedded use. */
int server_start(struct server *s, struct errbuf *err);

/* Async-signal-safe: stop accepting; server_run() returns soon after. */
void server_request_stop(struct server *s);

/* Stop (joining the background thread, if any), close every connection,
 * remove the unix socket and free. Safe on NULL. */
void server_free(struct server *s);

#endif
