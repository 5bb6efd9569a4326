/* The server's listening socket: TCP on every address (as dbench) or on
 * one, MPTCP, or a unix socket path; and how addresses are written. */
#include "config.h"
#include "server.h"

#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "server_priv.h"
#include "wire.h"

/* ---- addresses ---------------------------------------------------------- */

/* "127.0.0.1:7003", "[::1]:7003", or "unix socket PATH". An IPv4 peer of
 * a dual-stack socket shows as IPv4, not as ::ffff:a.b.c.d. */
void server_format_addr(const struct server *s, const struct sockaddr *sa, socklen_t len,
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
	server_format_addr(s, (struct sockaddr *)&ss, len, s->addr, sizeof(s->addr));
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
	if (cfg->uring_loops && !server_has_uring()) {
		free(s);
		err_set(err, "--uring: this build has no io_uring (configure found no liburing 2.3+: "
			"apt-get install liburing-dev, then configure again)");
		return SERVER_BAD_CONFIG;
	}
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

