/* See server.h. One accept loop polls the listening socket and a stop pipe;
 * each connection gets a child process (or a detached thread) that runs
 * wire_serve_socket() until its peer closes, misbehaves or times out.
 * Stopping shuts every connection down and waits for them, so nothing
 * outlives server_free(). */
#include "config.h"
#include "server.h"

#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "clock.h"
#include "wire.h"

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
	/* process per connection */
	pid_t *kids;
	size_t nkids, cap;
};

/* ---- the log ------------------------------------------------------------ */

__attribute__((format(printf, 2, 0)))
static void log_write(const struct server *s, const char *fmt, va_list ap)
{
	char line[800];
	int n = snprintf(line, sizeof(line), "%s: ", s->prefix);

	vsnprintf(line + n, sizeof(line) - (size_t)n - 1, fmt, ap);
	n = (int)strlen(line);
	line[n++] = '\n';
	/* One write per line, so lines of concurrent connections never mix. */
	if (write(s->cfg.log_fd, line, (size_t)n) < 0) {
		/* nowhere left to say it */
	}
}

__attribute__((format(printf, 2, 3)))
static void log_always(const struct server *s, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	log_write(s, fmt, ap);
	va_end(ap);
}

static void log_suppressed(const struct server *s, unsigned n)
{
	if (n)
		log_always(s, "%u more log lines suppressed (at most %d a second)", n,
			   SERVER_LOG_LINES_PER_SEC);
}

/* The first caller in a new second opens it, and says what the last ones
 * suppressed. */
static void log_new_second(const struct server *s)
{
	struct log_limit *l = s->log;
	uint64_t now = now_ns() / 1000000000u, seen = atomic_load(&l->second);

	if (now == seen || !atomic_compare_exchange_strong(&l->second, &seen, now))
		return;
	atomic_store(&l->lines, 0);
	log_suppressed(s, atomic_exchange(&l->suppressed, 0));
}

/* A line about one peer: a hostile crowd must not flood the log. */
__attribute__((format(printf, 2, 3)))
static void server_log(const struct server *s, const char *fmt, ...)
{
	va_list ap;

	log_new_second(s);
	if (atomic_fetch_add(&s->log->lines, 1) >= SERVER_LOG_LINES_PER_SEC) {
		atomic_fetch_add(&s->log->suppressed, 1);
		return;
	}
	va_start(ap, fmt);
	log_write(s, fmt, ap);
	va_end(ap);
}

/* ---- addresses ---------------------------------------------------------- */

/* "127.0.0.1:7003", "[::1]:7003", or "unix socket PATH". An IPv4 peer of
 * a dual-stack socket shows as IPv4, not as ::ffff:a.b.c.d. */
static void format_addr(const struct server *s, const struct sockaddr *sa, socklen_t len,
			char *buf, size_t size)
{
	const struct sockaddr_in6 *v6 = (const struct sockaddr_in6 *)sa;
	struct sockaddr_in v4;
	char host[64], serv[16];

	if (sa->sa_family == AF_UNIX) {
		snprintf(buf, size, "unix socket %s", s->path);
		return;
	}
	if (sa->sa_family == AF_INET6 && IN6_IS_ADDR_V4MAPPED(&v6->sin6_addr)) {
		v4 = (struct sockaddr_in){ .sin_family = AF_INET, .sin_port = v6->sin6_port };
		memcpy(&v4.sin_addr, &v6->sin6_addr.s6_addr[12], sizeof(v4.sin_addr));
		sa = (const struct sockaddr *)&v4;
		len = sizeof(v4);
	}
	if (getnameinfo(sa, len, host, sizeof(host), serv, sizeof(serv),
			NI_NUMERICHOST | NI_NUMERICSERV) != 0) {
		snprintf(buf, size, "unknown peer");
		return;
	}
	snprintf(buf, size, sa->sa_family == AF_INET6 ? "[%s]:%s" : "%s:%s", host, serv);
}

/* ---- listening ---------------------------------------------------------- */

static int listen_error(const char *host, unsigned port, struct errbuf *err)
{
	const char *hint = "";

	switch (errno) {
	case EADDRINUSE:
		return err_set(err, "port %u on %s is in use (another tbench_srv?): pass --port, "
			       "or stop what holds it", port, host);
	case EACCES:
		hint = " (ports below 1024 need root: pass --port)";
		break;
	case EADDRNOTAVAIL:
		hint = " (not an address of this host: check --listen)";
		break;
	}
	return err_set(err, "listening on %s port %u: %s%s", host, port, strerror(errno), hint);
}

/* A listening TCP socket, or -1 with errno. dual: the IPv6 wildcard,
 * taking IPv4 too whatever net.ipv6.bindv6only says. protocol: 0 (TCP) or
 * IPPROTO_MPTCP, whose listener takes plain TCP peers as well. */
static int tcp_listener(const struct sockaddr *sa, socklen_t len, bool dual, int protocol)
{
	int one = 1, zero = 0;
	int fd = socket(sa->sa_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, protocol);

	if (fd < 0)
		return -1;
	/* A restarted server must not wait out the old one's TIME_WAITs. */
	if (setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) < 0 ||
	    (dual && setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &zero, sizeof(zero)) < 0) ||
	    bind(fd, sa, len) < 0 || listen(fd, SOMAXCONN) < 0) {
		int saved = errno;
		close(fd);
		errno = saved;
		return -1;
	}
	return fd;
}

/* The port and address text of what we listen on. */
static int name_listener(struct server *s, struct errbuf *err)
{
	struct sockaddr_storage ss;
	socklen_t len = sizeof(ss);

	if (getsockname(s->lfd, (struct sockaddr *)&ss, &len) < 0)
		return err_errno(err, "asking which port the listening socket was given");
	s->port = ntohs(ss.ss_family == AF_INET6 ? ((struct sockaddr_in6 *)&ss)->sin6_port
					       : ((struct sockaddr_in *)&ss)->sin_port);
	format_addr(s, (struct sockaddr *)&ss, len, s->addr, sizeof(s->addr));
	return 0;
}

/* As dbench: every address. IPv6's wildcard takes IPv4 as well; where the
 * host has no IPv6, IPv4's wildcard alone. */
static int listen_everywhere(struct server *s, unsigned port, int protocol, struct errbuf *err)
{
	struct sockaddr_in6 a6 = { .sin6_family = AF_INET6, .sin6_port = htons((uint16_t)port),
				   .sin6_addr = IN6ADDR_ANY_INIT };
	struct sockaddr_in a4 = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port),
				  .sin_addr.s_addr = htonl(INADDR_ANY) };

	s->lfd = tcp_listener((struct sockaddr *)&a6, sizeof(a6), true, protocol);
	if (s->lfd < 0 && errno != EADDRINUSE && errno != EACCES)
		s->lfd = tcp_listener((struct sockaddr *)&a4, sizeof(a4), false, protocol);
	if (s->lfd < 0)
		return listen_error("every address", port, err);
	s->every_address = true;
	return name_listener(s, err);
}

static int listen_tcp(struct server *s, struct errbuf *err)
{
	const char *want = s->cfg.listen;
	const char *port = s->cfg.port ? s->cfg.port : WIRE_PORT_STRING;
	struct addrinfo hints = {
		.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM,
		.ai_flags = AI_PASSIVE | AI_NUMERICSERV,
	};
	struct addrinfo *res;
	char host[256];
	long portnum;
	int protocol = s->cfg.mptcp ? IPPROTO_MPTCP : 0;

	if (parse_long_range(port, 0, 65535, &portnum) < 0) {
		err_set(err, "--port %s: not a port number from 0 to 65535 (0: any free port)", port);
		return SERVER_BAD_CONFIG;
	}
	int missing = s->cfg.mptcp ? server_mptcp_check(err) : 0;
	if (missing < 0)
		return missing;
	if (!want)
		return listen_everywhere(s, (unsigned)portnum, protocol, err);
	/* "[::1]" as well as "::1". */
	size_t n = strlen(want);
	if (n >= 2 && want[0] == '[' && want[n - 1] == ']' && n - 2 < sizeof(host))
		snprintf(host, sizeof(host), "%.*s", (int)(n - 2), want + 1);
	else
		snprintf(host, sizeof(host), "%s", want);
	int gai = getaddrinfo(host, port, &hints, &res);
	if (gai) {
		err_set(err, "--listen %s: %s (give an IPv4 or IPv6 address of this host)", want,
			gai_strerror(gai));
		return SERVER_BAD_CONFIG;
	}
	s->lfd = tcp_listener(res->ai_addr, res->ai_addrlen, false, protocol);   /* the first address only */
	freeaddrinfo(res);
	if (s->lfd < 0)
		return listen_error(host, (unsigned)portnum, err);
	return name_listener(s, err);
}

int server_mptcp_check(struct errbuf *err)
{
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, IPPROTO_MPTCP);
	char enabled[8] = "";

	if (fd >= 0) {
		close(fd);
		return 0;
	}
	if (errno != EPROTONOSUPPORT && errno != ENOPROTOOPT && errno != EINVAL)
		return err_errno(err, "creating an MPTCP socket");
	int saved = errno;
	FILE *f = fopen("/proc/sys/net/mptcp/enabled", "r");
	if (f) {
		if (!fgets(enabled, sizeof(enabled), f))
			enabled[0] = '\0';
		fclose(f);
	}
	if (enabled[0] == '0')
		err_set(err, "MPTCP is turned off in this network namespace (net.mptcp.enabled "
			"is 0): turn it on with sysctl -w net.mptcp.enabled=1");
	else
		err_set(err, "this kernel has no MPTCP (socket(IPPROTO_MPTCP): %s): it needs "
			"Linux 5.6 or later built with CONFIG_MPTCP", strerror(saved));
	return SERVER_BAD_CONFIG;
}

/* A socket file left by a server that died is removed; a live one is not. */
static int clear_stale(const char *path, struct errbuf *err)
{
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	struct stat st;

	if (lstat(path, &st) < 0)
		return err_errno(err, "--unix %s", path);
	if (!S_ISSOCK(st.st_mode))
		return err_set(err, "--unix %s exists and is not a socket: remove it or pick "
			       "another path", path);
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return err_errno(err, "creating a unix socket to probe %s", path);
	memcpy(sun.sun_path, path, strlen(path) + 1);
	int rc = connect(fd, (struct sockaddr *)&sun, sizeof(sun));
	int saved = errno;
	close(fd);
	if (rc == 0)
		return err_set(err, "a server is already listening on %s: stop it or pick "
			       "another --unix path", path);
	if (saved != ECONNREFUSED) {
		errno = saved;
		return err_errno(err, "probing the existing socket %s", path);
	}
	if (unlink(path) < 0)
		return err_errno(err, "removing the stale socket %s", path);
	return 0;
}

static int listen_unix(struct server *s, struct errbuf *err)
{
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	const char *path = s->cfg.unix_path;

	if (!*path || strlen(path) >= sizeof(sun.sun_path)) {
		err_set(err, "--unix %s: a socket path must be 1 to %zu bytes long", path,
			sizeof(sun.sun_path) - 1);
		return SERVER_BAD_CONFIG;
	}
	memcpy(sun.sun_path, path, strlen(path) + 1);
	snprintf(s->path, sizeof(s->path), "%s", path);
	snprintf(s->addr, sizeof(s->addr), "%s", path);
	s->lfd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (s->lfd < 0)
		return err_errno(err, "creating a unix socket for %s", path);
	int rc = bind(s->lfd, (struct sockaddr *)&sun, sizeof(sun));
	if (rc < 0 && errno == EADDRINUSE) {
		if (clear_stale(path, err) < 0)
			return -1;
		rc = bind(s->lfd, (struct sockaddr *)&sun, sizeof(sun));
	}
	if (rc < 0)
		return err_errno(err, "binding the unix socket %s", path);
	s->owns_path = true;
	if (listen(s->lfd, SOMAXCONN) < 0)
		return err_errno(err, "listening on %s", path);
	return 0;
}

int server_listen(const struct server_config *cfg, struct server **out, struct errbuf *err)
{
	struct server *s = calloc(1, sizeof(*s));

	*out = NULL;
	if (!s)
		return err_set(err, "out of memory for the server");
	s->cfg = *cfg;
	s->lfd = s->stop_pipe[0] = s->stop_pipe[1] = -1;
	if (cfg->opts)
		s->opts = *cfg->opts;
	if (cfg->unix_path && cfg->private_dir)
		snprintf(s->dir, sizeof(s->dir), "%s", cfg->private_dir);
	snprintf(s->prefix, sizeof(s->prefix), "%s", cfg->log_prefix ? cfg->log_prefix : "server");
	pthread_mutex_init(&s->lock, NULL);
	pthread_cond_init(&s->idle, NULL);

	int rc = 0;
	s->log = mmap(NULL, sizeof(*s->log), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS,
		      -1, 0);
	if (s->log == MAP_FAILED) {
		s->log = NULL;
		rc = err_errno(err, "mapping the server's log counters");
	}
	if (rc == 0)
		rc = cfg->unix_path ? listen_unix(s, err) : listen_tcp(s, err);
	if (rc == 0 && pipe2(s->stop_pipe, O_CLOEXEC | O_NONBLOCK) < 0)
		rc = err_errno(err, "creating the server's stop pipe");
	if (rc < 0) {
		server_free(s);
		return rc;
	}
	*out = s;
	return 0;
}

const char *server_address(const struct server *s)
{
	return s->addr;
}

unsigned server_port(const struct server *s)
{
	return s->port;
}

bool server_on_every_address(const struct server *s)
{
	return s->every_address;
}

/* ---- a thread per connection -------------------------------------------- */

/* --cpus: connection k (the k-th accepted, from 0) on the list's entry k. */
static int pin_conn(const struct server *s, unsigned long id, const char *peer)
{
	struct errbuf err;
	char who[48];

	snprintf(who, sizeof(who), "connection %lu", id);
	if (cpu_list_pin(s->cfg.cpus, (unsigned)(id - 1), 0, who, &err) == 0)
		return 0;
	server_log(s, "connection %lu (%s): %s; closed it", id, peer, err.msg);
	return -1;
}

static void conn_unlink(struct conn *c)
{
	struct server *s = c->s;

	pthread_mutex_lock(&s->lock);
	if (c->prev)
		c->prev->next = c->next;
	else
		s->conns = c->next;
	if (c->next)
		c->next->prev = c->prev;
	if (--s->active == 0)
		pthread_cond_broadcast(&s->idle);
	pthread_mutex_unlock(&s->lock);
}

static void *conn_thread(void *arg)
{
	struct conn *c = arg;
	struct server *s = c->s;
	struct errbuf err;

	/* A connection that cannot be pinned is logged and closed. */
	if (pin_conn(s, c->id, c->peer) == 0 && wire_serve_socket(c->fd, s->cfg.timeout_secs, &err) < 0) {
		pthread_mutex_lock(&s->lock);
		bool stopping = s->stopping;
		pthread_mutex_unlock(&s->lock);
		if (!stopping)
			server_log(s, "connection %lu (%s): %s; closed it", c->id, c->peer, err.msg);
	}
	/* Out of the list before the fd is closed: a stop must never shut
	 * down a descriptor number that something else has reused. */
	conn_unlink(c);
	close(c->fd);
	free(c);
	return NULL;
}

static int spawn_thread(struct server *s, int fd, unsigned long id, const char *peer)
{
	struct conn *c = calloc(1, sizeof(*c));
	pthread_attr_t attr;
	sigset_t all, old;
	pthread_t t;

	if (!c) {
		server_log(s, "connection %lu (%s): out of memory; closed it", id, peer);
		return -1;
	}
	*c = (struct conn){ .s = s, .fd = fd, .id = id };
	snprintf(c->peer, sizeof(c->peer), "%s", peer);
	pthread_mutex_lock(&s->lock);
	c->next = s->conns;
	if (s->conns)
		s->conns->prev = c;
	s->conns = c;
	s->active++;
	pthread_mutex_unlock(&s->lock);

	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	pthread_attr_setstacksize(&attr, CONN_STACK);
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);   /* signals are the main thread's */
	int rc = pthread_create(&t, &attr, conn_thread, c);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	pthread_attr_destroy(&attr);
	if (rc) {
		server_log(s, "connection %lu (%s): cannot start a thread: %s (raise ulimit -u, "
			   "or lower --max-clients); closed it", id, peer, strerror(rc));
		conn_unlink(c);
		free(c);
		return -1;
	}
	return 0;
}

/* Shut every connection down and wait for its thread to finish. */
static void close_threads(struct server *s)
{
	struct timespec deadline;

	clock_gettime(CLOCK_REALTIME, &deadline);
	deadline.tv_sec += STOP_WAIT_SECS;
	pthread_mutex_lock(&s->lock);
	s->stopping = true;
	for (struct conn *c = s->conns; c; c = c->next)
		shutdown(c->fd, SHUT_RDWR);
	while (s->active > 0)
		if (pthread_cond_timedwait(&s->idle, &s->lock, &deadline) == ETIMEDOUT)
			break;
	if (s->active > 0) {
		log_always(s, "%u connections did not close within %d s of the stop",
			   s->active, STOP_WAIT_SECS);
		s->leaked = true;   /* their threads still use the server: keep it */
	}
	pthread_mutex_unlock(&s->lock);
}

/* ---- a process per connection ------------------------------------------- */

/* Only our own children are waited for: an embedding program has its own. */
static void reap(struct server *s, bool block)
{
	for (size_t i = 0; i < s->nkids;) {
		pid_t r = waitpid(s->kids[i], NULL, block ? 0 : WNOHANG);
		if (r < 0 && errno == EINTR)
			continue;
		if (r == 0) {
			i++;
			continue;
		}
		s->kids[i] = s->kids[--s->nkids];   /* reaped, or not ours after all */
	}
}

static _Noreturn void child_serve(struct server *s, pid_t parent, int fd, unsigned long id,
				  const char *peer)
{
	sigset_t none;
	struct errbuf err;

	/* A server killed outright takes its connections with it: clients see
	 * the failure instead of a server that lives on without its parent. */
	if (die_with_parent(parent, SIGKILL) < 0)
		_exit(1);
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	signal(SIGINT, SIG_IGN);    /* the parent decides when to stop */
	signal(SIGTERM, SIG_DFL);   /* ... and says so with SIGTERM */
	signal(SIGPIPE, SIG_IGN);   /* a vanished client is a log line */
	close(s->lfd);
	close(s->stop_pipe[0]);
	close(s->stop_pipe[1]);
	if (pin_conn(s, id, peer) < 0)
		_exit(1);
	if (wire_serve_socket(fd, s->cfg.timeout_secs, &err) < 0)
		server_log(s, "connection %lu (%s): %s; closed it", id, peer, err.msg);
	_exit(0);
}

static int spawn_process(struct server *s, int fd, unsigned long id, const char *peer)
{
	if (s->nkids == s->cap) {
		size_t cap = s->cap ? 2 * s->cap : 64;
		pid_t *k = realloc(s->kids, cap * sizeof(*k));
		if (!k) {
			server_log(s, "connection %lu (%s): out of memory; closed it", id, peer);
			return -1;
		}
		s->kids = k;
		s->cap = cap;
	}
	pid_t parent = getpid();
	pid_t pid = fork();
	if (pid < 0) {
		server_log(s, "connection %lu (%s): cannot fork a server process: %s (raise "
			   "ulimit -u, or lower --max-clients); closed it", id, peer, strerror(errno));
		return -1;
	}
	if (pid == 0)
		child_serve(s, parent, fd, id, peer);
	s->kids[s->nkids++] = pid;
	close(fd);
	return 0;
}

/* A connection process has nothing to save: SIGKILL ends it even when it
 * is stopped (SIGSTOP) or stuck, so the stop never waits for ever. */
static void close_processes(struct server *s)
{
	for (size_t i = 0; i < s->nkids; i++)
		kill(s->kids[i], SIGKILL);
	reap(s, true);
}

/* ---- accepting ---------------------------------------------------------- */

static unsigned live_connections(struct server *s)
{
	if (s->cfg.processes) {
		reap(s, false);
		return (unsigned)s->nkids;
	}
	pthread_mutex_lock(&s->lock);
	unsigned n = s->active;
	pthread_mutex_unlock(&s->lock);
	return n;
}

static void accept_failed(struct server *s)
{
	switch (errno) {
	case EINTR: case EAGAIN: case ECONNABORTED: case EPROTO: case EPERM:
		return;   /* that one connection is gone; the next may be fine */
	}
	server_log(s, "accepting a connection on %s: %s%s", s->addr, strerror(errno),
		   errno == EMFILE || errno == ENFILE ?
		   " (raise ulimit -n, or lower --max-clients)" : "");
	sleep_ns(ACCEPT_PAUSE_NS);
}

/* What every accepted socket gets before it is served: -T's options, and
 * the timeouts that drop a peer too slow inside a frame with no system call
 * added to the exchange. */
static int prepare_conn(const struct server *s, int fd, struct errbuf *err)
{
	struct timeval t = { .tv_sec = s->cfg.timeout_secs };

	if (sockopts_apply(fd, &s->opts, err) < 0)
		return -1;
	if (s->cfg.timeout_secs &&
	    (setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &t, sizeof(t)) < 0 ||
	     setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &t, sizeof(t)) < 0))
		return err_errno(err, "setting the --timeout of %u s", s->cfg.timeout_secs);
	return 0;
}

static void accept_one(struct server *s)
{
	struct sockaddr_storage ss;
	socklen_t len = sizeof(ss);
	char peer[96];
	struct errbuf err;
	int fd = accept4(s->lfd, (struct sockaddr *)&ss, &len, SOCK_CLOEXEC);

	if (fd < 0) {
		accept_failed(s);
		return;
	}
	unsigned long id = ++s->next_id;
	format_addr(s, (struct sockaddr *)&ss, len, peer, sizeof(peer));
	unsigned live = s->cfg.max_clients ? live_connections(s) : 0;
	if (s->cfg.max_clients && live >= s->cfg.max_clients) {
		server_log(s, "connection %lu (%s): refused: already serving %u connections "
			   "(--max-clients %u)", id, peer, live, s->cfg.max_clients);
		close(fd);
		return;
	}
	if (prepare_conn(s, fd, &err) < 0) {
		server_log(s, "connection %lu (%s): %s; closed it", id, peer, err.msg);
		close(fd);
		return;
	}
	if ((s->cfg.processes ? spawn_process : spawn_thread)(s, fd, id, peer) < 0)
		close(fd);
}

int server_run(struct server *s)
{
	struct pollfd p[2] = {
		{ .fd = s->lfd, .events = POLLIN },
		{ .fd = s->stop_pipe[0], .events = POLLIN },
	};
	int rc = 0;

	for (;;) {
		if (s->cfg.processes)
			reap(s, false);
		log_new_second(s);
		int n = poll(p, 2, TICK_MS);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			log_always(s, "waiting for connections on %s: %s", s->addr, strerror(errno));
			rc = -1;
			break;
		}
		if (p[1].revents)
			break;
		if (p[0].revents & (POLLERR | POLLNVAL)) {
			log_always(s, "the listening socket %s failed", s->addr);
			rc = -1;
			break;
		}
		if (p[0].revents & POLLIN)
			accept_one(s);
	}
	/* Stop accepting first: a client connecting now is refused, not left waiting. */
	close(s->lfd);
	s->lfd = -1;
	if (s->cfg.processes)
		close_processes(s);
	else
		close_threads(s);
	log_suppressed(s, atomic_exchange(&s->log->suppressed, 0));
	return rc;
}

/* ---- serving in the background ------------------------------------------ */

static void remove_socket(struct server *s)
{
	if (s->owns_path && unlink(s->path) < 0 && errno != ENOENT)
		log_always(s, "removing the socket %s: %s", s->path, strerror(errno));
	if (s->dir[0] && rmdir(s->dir) < 0 && errno != ENOENT)
		log_always(s, "removing the directory %s: %s", s->dir, strerror(errno));
	s->owns_path = false;
	s->dir[0] = '\0';
}

static void *run_thread(void *arg)
{
	server_run(arg);
	return NULL;
}

static int start_thread(struct server *s, struct errbuf *err)
{
	sigset_t all, old;

	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);   /* the embedding program's signals */
	int rc = pthread_create(&s->thread, NULL, run_thread, s);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (rc) {
		errno = rc;
		return err_errno(err, "starting the server thread for %s", s->addr);
	}
	s->has_thread = true;
	return 0;
}

static struct server *volatile listener_self;   /* in the listener process */

static void listener_on_term(int sig)
{
	int saved = errno;

	(void)sig;
	if (listener_self)
		server_request_stop(listener_self);
	errno = saved;
}

/* The forked listener: it holds the listening socket and nothing of its
 * parent's. When the parent dies it gets SIGTERM rather than SIGKILL, so
 * that it still closes its connections and removes its socket file. */
static _Noreturn void listener_main(struct server *s, pid_t parent)
{
	struct sigaction sa = { .sa_handler = listener_on_term };
	int keep[] = { s->lfd, s->stop_pipe[0], s->stop_pipe[1], s->cfg.log_fd };
	sigset_t none;

	if (die_with_parent(parent, SIGTERM) < 0) {
		remove_socket(s);
		_exit(1);
	}
	close_fds_except(keep, sizeof(keep) / sizeof(keep[0]));
	listener_self = s;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGTERM, &sa, NULL);
	signal(SIGINT, SIG_IGN);    /* Ctrl-C is for the parent, which then stops us */
	signal(SIGPIPE, SIG_IGN);
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	int rc = server_run(s);
	remove_socket(s);
	_exit(rc == 0 ? 0 : 1);
}

static int start_process(struct server *s, struct errbuf *err)
{
	sigset_t all, old;
	pid_t parent = getpid();

	/* Blocked across the fork: the child must not run its parent's
	 * handlers before it has its own. */
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	pid_t pid = fork();
	if (pid == 0)
		listener_main(s, parent);
	int saved = errno;
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (pid < 0) {
		errno = saved;
		return err_errno(err, "forking the server process for %s (raise ulimit -u?)",
				 s->addr);
	}
	s->listener = pid;
	/* Ours no more: what we fork later must not hold the listener. */
	close(s->lfd);
	close(s->stop_pipe[0]);
	close(s->stop_pipe[1]);
	s->lfd = s->stop_pipe[0] = s->stop_pipe[1] = -1;
	return 0;
}

int server_start(struct server *s, struct errbuf *err)
{
	return s->cfg.processes ? start_process(s, err) : start_thread(s, err);
}

void server_request_stop(struct server *s)
{
	/* Full pipe: a stop is already pending, which is all we need. */
	if (write(s->stop_pipe[1], "x", 1) < 0) {
	}
}

/* SIGTERM, and SIGCONT in case it was stopped; SIGKILL after a few
 * seconds if it still has not gone: the run's end never hangs on it. */
static void stop_listener(struct server *s)
{
	if (kill(s->listener, SIGTERM) < 0 && errno != ESRCH)
		log_always(s, "stopping the server process %d: %s", (int)s->listener,
			   strerror(errno));
	kill(s->listener, SIGCONT);
	for (int waited_ms = 0;; waited_ms += 10) {
		pid_t r = waitpid(s->listener, NULL, WNOHANG);
		if (r != 0 && !(r < 0 && errno == EINTR))
			break;
		if (waited_ms == STOP_WAIT_SECS * 1000)
			kill(s->listener, SIGKILL);
		sleep_ns(10000000);
	}
	s->listener = 0;
}

void server_free(struct server *s)
{
	if (!s)
		return;
	if (s->has_thread) {
		server_request_stop(s);
		pthread_join(s->thread, NULL);
	}
	if (s->listener > 0)
		stop_listener(s);
	if (s->lfd >= 0)
		close(s->lfd);
	remove_socket(s);
	if (s->leaked)
		return;
	for (int i = 0; i < 2; i++)
		if (s->stop_pipe[i] >= 0)
			close(s->stop_pipe[i]);
	if (s->log)
		munmap(s->log, sizeof(*s->log));
	pthread_mutex_destroy(&s->lock);
	pthread_cond_destroy(&s->idle);
	free(s->kids);
	free(s);
}
