/* See server.h. One accept loop polls the listening socket and a stop pipe;
 * each connection gets a detached thread (or a child process) that runs
 * wire_serve() until its peer closes or misbehaves. Stopping shuts every
 * connection down and waits for them, so nothing outlives server_free(). */
#include "config.h"
#include "server.h"

#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "wire.h"

enum {
	CONN_STACK = 256 * 1024,     /* wire_serve keeps its buffer on the heap */
	STOP_WAIT_SECS = 5,          /* connections must end this soon after a stop */
	REAP_MS = 200,               /* --fork: how often finished children are reaped */
};

struct conn {
	struct server *s;
	int fd;
	unsigned long id;
	char peer[96];
	struct conn *prev, *next;
};

struct server {
	struct server_config cfg;
	struct sockopts opts;
	char prefix[64];
	char path[sizeof(((struct sockaddr_un *)0)->sun_path)];
	bool owns_path;              /* we bound it: we unlink it */
	char addr[128];
	unsigned port;
	int lfd;
	int stop_pipe[2];
	unsigned long next_id;
	pthread_t thread;
	bool has_thread, leaked;
	uint64_t last_accept_log;
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

__attribute__((format(printf, 2, 3)))
static void server_log(const struct server *s, const char *fmt, ...)
{
	char line[800];
	va_list ap;
	int n = snprintf(line, sizeof(line), "%s: ", s->prefix);

	va_start(ap, fmt);
	vsnprintf(line + n, sizeof(line) - (size_t)n - 1, fmt, ap);
	va_end(ap);
	n = (int)strlen(line);
	line[n++] = '\n';
	/* One write per line, so lines of concurrent connections never mix. */
	if (write(s->cfg.log_fd, line, (size_t)n) < 0) {
		/* nowhere left to say it */
	}
}

/* "127.0.0.1:7003", "[::1]:7003", or "unix socket PATH". */
static void format_addr(const struct server *s, const struct sockaddr *sa, socklen_t len,
			char *buf, size_t size)
{
	char host[64], serv[16];

	if (sa->sa_family == AF_UNIX) {
		snprintf(buf, size, "unix socket %s", s->path);
		return;
	}
	if (getnameinfo(sa, len, host, sizeof(host), serv, sizeof(serv),
			NI_NUMERICHOST | NI_NUMERICSERV) != 0) {
		snprintf(buf, size, "unknown peer");
		return;
	}
	snprintf(buf, size, sa->sa_family == AF_INET6 ? "[%s]:%s" : "%s:%s", host, serv);
}

/* ---- listening ---------------------------------------------------------- */

static int parse_port(const char *p, unsigned *out)
{
	char *end;
	errno = 0;
	long v = strtol(p, &end, 10);

	if (errno || end == p || *end || v < 0 || v > 65535)
		return -1;
	*out = (unsigned)v;
	return 0;
}

static int bind_error(const char *host, unsigned port, struct errbuf *err)
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
	return err_set(err, "binding %s port %u: %s%s", host, port, strerror(errno), hint);
}

static int bind_tcp(struct server *s, const struct addrinfo *ai, const char *host,
		    unsigned port, struct errbuf *err)
{
	struct sockaddr_storage ss;
	socklen_t len = sizeof(ss);
	int one = 1;

	s->lfd = socket(ai->ai_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (s->lfd < 0)
		return err_errno(err, "creating a TCP socket for %s", host);
	/* A restarted server must not wait out the old one's TIME_WAITs. */
	if (setsockopt(s->lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) < 0)
		return err_errno(err, "setting SO_REUSEADDR on the socket for %s", host);
	if (bind(s->lfd, ai->ai_addr, ai->ai_addrlen) < 0)
		return bind_error(host, port, err);
	if (listen(s->lfd, SOMAXCONN) < 0)
		return err_errno(err, "listening on %s port %u", host, port);
	if (getsockname(s->lfd, (struct sockaddr *)&ss, &len) < 0)
		return err_errno(err, "asking which port %s was given", host);
	s->port = ntohs(ss.ss_family == AF_INET6 ? ((struct sockaddr_in6 *)&ss)->sin6_port
					       : ((struct sockaddr_in *)&ss)->sin_port);
	format_addr(s, (struct sockaddr *)&ss, len, s->addr, sizeof(s->addr));
	return 0;
}

static int listen_tcp(struct server *s, struct errbuf *err)
{
	const char *want = s->cfg.listen ? s->cfg.listen : "127.0.0.1";
	const char *port = s->cfg.port ? s->cfg.port : "7003";
	struct addrinfo hints = {
		.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM,
		.ai_flags = AI_PASSIVE | AI_NUMERICSERV,
	};
	struct addrinfo *res;
	char host[256];
	unsigned portnum;

	if (parse_port(port, &portnum) < 0) {
		err_set(err, "--port %s: not a port number from 0 to 65535 (0: any free port)", port);
		return SERVER_BAD_CONFIG;
	}
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
	int rc = bind_tcp(s, res, host, portnum, err);   /* the first address only */
	freeaddrinfo(res);
	return rc;
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
	snprintf(s->prefix, sizeof(s->prefix), "%s", cfg->log_prefix ? cfg->log_prefix : "server");
	pthread_mutex_init(&s->lock, NULL);
	pthread_cond_init(&s->idle, NULL);

	int rc = cfg->unix_path ? listen_unix(s, err) : listen_tcp(s, err);
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

/* ---- a thread per connection -------------------------------------------- */

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

	if (wire_serve(c->fd, c->fd, &err) < 0) {
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
			   "or use --max-connections); closed it", id, peer, strerror(rc));
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
		server_log(s, "%u connections did not close within %d s of the stop",
			   s->active, STOP_WAIT_SECS);
		s->leaked = true;   /* their threads still use the server: keep it */
	}
	pthread_mutex_unlock(&s->lock);
}

/* ---- a process per connection (--fork) ---------------------------------- */

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

	/* A server killed outright takes its connections with it, as the
	 * threads would go: clients see the failure instead of a zombie server. */
	if (prctl(PR_SET_PDEATHSIG, SIGTERM) < 0 || getppid() != parent)
		_exit(1);
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	signal(SIGINT, SIG_IGN);    /* the parent decides when to stop */
	signal(SIGTERM, SIG_DFL);   /* ... and says so with SIGTERM */
	close(s->lfd);
	close(s->stop_pipe[0]);
	close(s->stop_pipe[1]);
	if (wire_serve(fd, fd, &err) < 0)
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
			   "ulimit -u, or use --max-connections); closed it", id, peer, strerror(errno));
		return -1;
	}
	if (pid == 0)
		child_serve(s, parent, fd, id, peer);
	s->kids[s->nkids++] = pid;
	close(fd);
	return 0;
}

static void close_processes(struct server *s)
{
	for (size_t i = 0; i < s->nkids; i++)
		kill(s->kids[i], SIGTERM);
	reap(s, true);
}

/* ---- accepting ---------------------------------------------------------- */

static unsigned live_connections(struct server *s)
{
	if (s->cfg.fork) {
		reap(s, false);
		return (unsigned)s->nkids;
	}
	pthread_mutex_lock(&s->lock);
	unsigned n = s->active;
	pthread_mutex_unlock(&s->lock);
	return n;
}

/* Running out of descriptors or memory is worth a line a second at most;
 * the pause keeps a full descriptor table from spinning the loop. */
static void accept_failed(struct server *s)
{
	switch (errno) {
	case EINTR: case EAGAIN: case ECONNABORTED: case EPROTO: case EPERM:
		return;   /* that one connection is gone; the next may be fine */
	}
	uint64_t now = now_ns();
	if (now - s->last_accept_log >= 1000000000u) {
		server_log(s, "accepting a connection on %s: %s%s", s->addr, strerror(errno),
			   errno == EMFILE || errno == ENFILE ?
			   " (raise ulimit -n, or use --max-connections)" : "");
		s->last_accept_log = now;
	}
	sleep_ns(50000000);
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
	unsigned live = s->cfg.max_connections ? live_connections(s) : 0;
	if (s->cfg.max_connections && live >= s->cfg.max_connections) {
		server_log(s, "connection %lu (%s): refused: already serving %u connections "
			   "(--max-connections %u)", id, peer, live, s->cfg.max_connections);
		close(fd);
		return;
	}
	if (sockopts_apply(fd, &s->opts, &err) < 0) {
		server_log(s, "connection %lu (%s): %s; closed it", id, peer, err.msg);
		close(fd);
		return;
	}
	if ((s->cfg.fork ? spawn_process : spawn_thread)(s, fd, id, peer) < 0)
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
		if (s->cfg.fork)
			reap(s, false);
		int n = poll(p, 2, s->cfg.fork ? REAP_MS : -1);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			server_log(s, "waiting for connections on %s: %s", s->addr, strerror(errno));
			rc = -1;
			break;
		}
		if (p[1].revents)
			break;
		if (p[0].revents & (POLLERR | POLLNVAL)) {
			server_log(s, "the listening socket %s failed", s->addr);
			rc = -1;
			break;
		}
		if (p[0].revents & POLLIN)
			accept_one(s);
	}
	/* Stop accepting first: a client connecting now is refused, not left waiting. */
	close(s->lfd);
	s->lfd = -1;
	if (s->cfg.fork)
		close_processes(s);
	else
		close_threads(s);
	return rc;
}

static void *run_thread(void *arg)
{
	server_run(arg);
	return NULL;
}

int server_start(struct server *s, struct errbuf *err)
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

void server_request_stop(struct server *s)
{
	/* Full pipe: a stop is already pending, which is all we need. */
	if (write(s->stop_pipe[1], "x", 1) < 0) {
	}
}

void server_free(struct server *s)
{
	if (!s)
		return;
	if (s->has_thread) {
		server_request_stop(s);
		pthread_join(s->thread, NULL);
	}
	if (s->lfd >= 0)
		close(s->lfd);
	if (s->owns_path && unlink(s->path) < 0 && errno != ENOENT)
		server_log(s, "removing the socket %s: %s", s->path, strerror(errno));
	if (s->leaked)
		return;
	for (int i = 0; i < 2; i++)
		if (s->stop_pipe[i] >= 0)
			close(s->stop_pipe[i]);
	pthread_mutex_destroy(&s->lock);
	pthread_cond_destroy(&s->idle);
	free(s->kids);
	free(s);
}
