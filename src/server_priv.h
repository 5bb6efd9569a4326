/* What the server's files share (server.c: the log, the accept loop and
 * serving in the background; server_listen.c: addresses and listening;
 * server_conn.c: a thread or a process per connection). Private to them. */
#ifndef TBENCH_SERVER_PRIV_H
#define TBENCH_SERVER_PRIV_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <sys/un.h>

#include "server.h"
#include "sockopt.h"

enum {
	CONN_STACK = 256 * 1024,     /* wire_serve_socket keeps its buffer on the heap */
	STOP_WAIT_SECS = 5,          /* connections must end this soon after a stop */
	TICK_MS = 500,               /* reap finished children, say what the log suppressed */
	ACCEPT_PAUSE_NS = 50000000,  /* after a failed accept: a full fd table must not spin us */
};

/* In a shared mapping, so the limit holds across every process the server
 * forks: lines admitted in the current second, and those suppressed. */
struct log_limit {
	_Atomic uint64_t second;
	_Atomic unsigned lines, suppressed;
};

struct conn {
	struct server *s;
	int fd;
	unsigned long id;
	char peer[96];
	struct conn *prev, *next;
};

typedef char socket_path[sizeof(((struct sockaddr_un *)0)->sun_path)];

struct server {
	struct server_config cfg;
	struct sockopts opts;
	char prefix[64];
	socket_path path, dir;       /* the unix socket and its private directory */
	bool owns_path;              /* we bound it: we unlink it */
	char addr[128];
	unsigned port;
	bool every_address;
	int lfd;
	int stop_pipe[2];
	unsigned long next_id;
	struct log_limit *log;
	pthread_t thread;            /* server_start()'s thread ... */
	pid_t listener;              /* ... or process, seen from the caller */
	bool has_thread, leaked;
	/* thread per connection */
	pthread_mutex_t lock;
	pthread_cond_t idle;
	struct conn *conns;
	unsigned active;
	bool stopping;
	int accept_errno;            /* event loops: the accept failure last said */
	/* process per connection */
	pid_t *kids;
	size_t nkids, cap;
};

/* The log (server.c): server_log() for lines about one peer, limited to a
 * few a second; server_log_always() for the server's own. */
__attribute__((format(printf, 2, 3)))
void server_log(const struct server *s, const char *fmt, ...);
__attribute__((format(printf, 2, 3)))
void server_log_always(const struct server *s, const char *fmt, ...);

/* -T's options and the timeouts, on an accepted socket (server.c). */
int server_prepare_conn(const struct server *s, int fd, struct errbuf *err);

/* The event loops (server_uring.c): serve until stopped, as server_run. */
int server_run_uring(struct server *s);

/* "127.0.0.1:7003", "[::1]:7003" or "unix socket PATH" (server_listen.c). */
void server_format_addr(const struct server *s, const struct sockaddr *sa, socklen_t len,
			char *out, size_t outlen);

/* Connections (server_conn.c): serve accepted socket fd in a thread or a
 * process of its own (-1: it was refused and closed, and logged); reap
 * finished processes; shut every connection down and wait for it. */
int server_spawn_thread(struct server *s, int fd, unsigned long id, const char *peer);
int server_spawn_process(struct server *s, int fd, unsigned long id, const char *peer);
void server_reap(struct server *s, bool block);
void server_close_threads(struct server *s);
void server_close_processes(struct server *s);

#endif
