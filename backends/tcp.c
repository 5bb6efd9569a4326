/* tcp: one TCP connection per client to tbench_srv, dbench 4.0's or ours,
 * at SERVER port 7003 (--port). This is what tbench has always measured:
 * the TCP/IP stack and the device under it (loopback, for a local server).
 *
 * With no SERVER it talks to the server on 127.0.0.1 port 7003 (--port),
 * as dbench does, when one listens there; else it starts its own server
 * (src/server.c) for the run, on an ephemeral port of 127.0.0.1, or on
 * --port's, and stops it afterwards. The server follows the clients' model: a
 * forked process holding the listener, and a process per connection, with
 * client processes; threads of the tbench process with client threads (of
 * a process of their own when one may not open files for both ends).
 * -T options (default TCP_NODELAY, as dbench) apply to both ends.
 *
 * Reply bodies are discarded by the kernel (recv with MSG_TRUNC), as
 * dbench's tbench does; --copy-replies copies them to user space as the
 * other backends do, to compare backends with that held constant. */
#include "config.h"

#include <errno.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include "clock.h"
#include "cpulist.h"
#include "server.h"
#include "sockopt.h"
#include "tcp.h"

enum { CONNECT_TIMEOUT_SECS = 5 };

const struct tcp_flavour tcp_plain = { .name = "tcp", .local_server_first = true };

struct tcp_run {
	const struct tcp_flavour *fl;
	struct server *srv;          /* our own, when no SERVER was given */
	struct addrinfo *ai;         /* where every client connects */
	struct sockopts opts;
	char addr[160];              /* "127.0.0.1:7003", "[::1]:7003" */
	char peer[192];              /* "tcp server 127.0.0.1:7003", for errors */
	char log_prefix[48];         /* "tbench: tcp server", our own server's */
};

/* SERVER, when given, must name a host: a name that does not resolve is
 * bad input. A resolver that is down is not: start() reports that. */
static int check_server(const char *backend, const struct backend_config *cfg, struct errbuf *err);

int tcp_check_as(const struct tcp_flavour *fl, const struct backend_config *cfg, struct errbuf *err)
{
	struct sockopts opts;
	const char *spec = cfg->tcp_options ? cfg->tcp_options : SOCKOPT_TCP_DEFAULT;
	long port;

	/* Port 0 is for a server of our own: the kernel picks its port. */
	int least = cfg->server || cfg->no_own_server ? 1 : 0;

	if (cfg->port && parse_long_range(cfg->port, least, 65535, &port) < 0)
		return err_set(err, "%s: --port %s: not a port number from %d to 65535",
			       fl->name, cfg->port, least);
	if (sockopts_parse_tcp(spec, &opts, err) < 0) {
		struct errbuf why = *err;
		return err_set(err, "%s: -T %s: %s", fl->name, spec, why.msg);
	}
	if (cfg->server && cfg->server_cpus)
		return err_set(err, "%s: --server-cpus pins the server tbench starts itself: with "
			       "SERVER, start that tbench_srv with --cpus instead", fl->name);
	if (cfg->no_own_server && cfg->server_cpus)
		return err_set(err, "%s: --no-own-server and --server-cpus: --server-cpus pins the "
			       "server tbench starts itself: drop one of them", fl->name);
	if (cfg->no_own_server && !cfg->server && !fl->local_server_first)
		return err_set(err, "%s: --no-own-server: without SERVER %s always starts a server "
			       "of its own: give SERVER, or drop --no-own-server", fl->name, fl->name);
	return cfg->server ? check_server(fl->name, cfg, err) : 0;
}

static int tcp_check(const struct backend_config *cfg, struct errbuf *err)
{
	return tcp_check_as(&tcp_plain, cfg, err);
}

/* Where tbench's own server listens, and where a local one is looked for. */
static const char *loopback(const struct backend_config *cfg)
{
	return cfg->family == AF_INET6 ? "::1" : "127.0.0.1";
}

static int start_own_server(struct tcp_run *r, const struct backend_config *cfg,
			    char *port, size_t portlen, struct errbuf *err)
{
	struct server_config sc = {
		.listen = loopback(cfg), .port = cfg->port ? cfg->port : "0", .cpus = cfg->server_cpus,
		.opts = &r->opts, .processes = cfg->processes,
		.apart = !cfg->processes && server_apart(cfg->nclients, "tbench"),
		.mptcp = r->fl->protocol == IPPROTO_MPTCP, .uring_loops = r->fl->uring_loops,
		.log_prefix = r->log_prefix, .log_fd = 2,
	};
	struct errbuf why;

	snprintf(r->log_prefix, sizeof(r->log_prefix), "tbench: %s server", r->fl->name);
	if (server_listen(&sc, &r->srv, &why) < 0)
		return err_set(err, "%s: starting tbench's own server: %s%s", r->fl->name, why.msg,
			       cfg->port ? " (to use a tbench_srv already on that port, give "
			       "SERVER: 127.0.0.1)" : "");
	if (server_start(r->srv, &why) < 0)
		return err_set(err, "%s: %s", r->fl->name, why.msg);
	snprintf(port, portlen, "%u", server_port(r->srv));
	return 0;
}

/* "[::1]" and "::1" both name IPv6 loopback. */
static void strip_brackets(const char *in, char *out, size_t size)
{
	size_t n = strlen(in);

	if (n >= 2 && in[0] == '[' && in[n - 1] == ']')
		snprintf(out, size, "%.*s", (int)(n - 2), in + 1);
	else
		snprintf(out, size, "%s", in);
}

/* --family narrows SERVER to its IPv4 or its IPv6 addresses. */
static struct addrinfo resolve_hints(const struct backend_config *cfg)
{
	return (struct addrinfo){
		.ai_family = cfg->family, .ai_socktype = SOCK_STREAM, .ai_flags = AI_NUMERICSERV,
	};
}

static int resolve_error(const char *backend, const struct backend_config *cfg, const char *host,
			 int gai, struct errbuf *err)
{
	return err_set(err, "%s: SERVER %s: %s (give a host name, an IPv4 or an IPv6 "
		       "address%s)", backend, host, gai == EAI_SYSTEM ? strerror(errno) : gai_strerror(gai),
		       cfg->family == AF_INET6 ? " that has an IPv6 address: --family ipv6" :
		       cfg->family == AF_INET ? " that has an IPv4 address: --family ipv4" : "");
}

static int check_server(const char *backend, const struct backend_config *cfg, struct errbuf *err)
{
	struct addrinfo hints = resolve_hints(cfg), *ai;
	char name[256];

	strip_brackets(cfg->server, name, sizeof(name));
	int gai = getaddrinfo(name, cfg->port ? cfg->port : WIRE_PORT_STRING, &hints, &ai);
	if (gai == 0) {
		freeaddrinfo(ai);
		return 0;
	}
	if (gai == EAI_AGAIN || gai == EAI_FAIL || gai == EAI_MEMORY || gai == EAI_SYSTEM)
		return 0;
	return resolve_error(backend, cfg, cfg->server, gai, err);
}

static int resolve(struct tcp_run *r, const struct backend_config *cfg, const char *host,
		   const char *port, struct errbuf *err)
{
	struct addrinfo hints = resolve_hints(cfg);
	char name[256];

	strip_brackets(host, name, sizeof(name));
	int gai = getaddrinfo(name, port, &hints, &r->ai);
	if (gai)
		return resolve_error(r->fl->name, cfg, host, gai, err);
	snprintf(r->addr, sizeof(r->addr), strchr(name, ':') ? "[%s]:%s" : "%s:%s", name, port);
	snprintf(r->peer, sizeof(r->peer), "%s server %s", r->fl->name, r->addr);
	return 0;
}

void tcp_stop(void *run)
{
	struct tcp_run *r = run;

	server_free(r->srv);
	if (r->ai)
		freeaddrinfo(r->ai);
	free(r);
}

static int connect_error(const struct tcp_run *r, struct errbuf *err)
{
	if (errno == EINPROGRESS || errno == EAGAIN || errno == ETIMEDOUT)
		return err_set(err, "%s: connecting to %s: no answer within %d s (is the host "
			       "up and the port open?)", r->fl->name, r->addr, CONNECT_TIMEOUT_SECS);
	return err_set(err, "%s: connecting to %s: %s%s", r->fl->name, r->addr, strerror(errno),
		       errno == ECONNREFUSED && !r->srv ? " (is tbench_srv running there? start "
		       "it, or omit SERVER to use tbench's own)" : "");
}

/* A blocking connect that gives up after CONNECT_TIMEOUT_SECS: Linux
 * bounds connect() by SO_SNDTIMEO, which is cleared again afterwards so
 * that the run itself never times out on a slow reply. */
static int connect_one(const struct tcp_run *r, const struct addrinfo *ai, struct errbuf *err)
{
	struct timeval limit = { CONNECT_TIMEOUT_SECS, 0 }, none = { 0, 0 };
	int fd = socket(ai->ai_family, SOCK_STREAM | SOCK_CLOEXEC, r->fl->protocol);

	if (fd < 0)
		return err_errno(err, "%s: creating a socket for %s", r->fl->name, r->addr);
	/* Before connect(): buffer sizes decide the window scale of the handshake. */
	if (sockopts_apply(fd, &r->opts, err) < 0) {
		struct errbuf why = *err;
		close(fd);
		return err_set(err, "%s: -T: %s", r->fl->name, why.msg);
	}
	if (setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &limit, sizeof(limit)) < 0 ||
	    connect(fd, ai->ai_addr, ai->ai_addrlen) < 0 ||
	    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &none, sizeof(none)) < 0) {
		int saved = errno;   /* for connect_local(): ECONNREFUSED, nobody listens yet */
		connect_error(r, err);
		close(fd);
		errno = saved;
		return -1;
	}
	return fd;
}

/* A tbench_srv started just before tbench ("tbench_srv --port P &" then
 * "tbench --port P") may not listen yet. Had tbench started its own server
 * on P at once, that one would take the port, the tbench_srv fail to start,
 * and the run measure tbench's own server: killing "its" server would not
 * end it. So a port given is looked at again for a while first. */
#define LOCAL_SERVER_WAIT_NS 3000000000ull
#define LOCAL_SERVER_POLL_NS   50000000ull

/* A port given names a server's, and so does --no-own-server (whose
 * run fails when none listens yet). */
static bool looks_again(const struct backend_config *cfg)
{
	return cfg->no_own_server || (cfg->port && strcmp(cfg->port, "0") != 0);
}

/* A connection to the server on localhost, -1 when none listens there:
 * with --port or --no-own-server, once it has not for LOCAL_SERVER_WAIT_NS. */
static int connect_local(const struct tcp_run *r, const struct backend_config *cfg,
			 struct errbuf *err)
{
	bool wait = looks_again(cfg);
	uint64_t give_up = now_ns() + LOCAL_SERVER_WAIT_NS;
	int fd;

	while ((fd = connect_one(r, r->ai, err)) < 0 && wait && errno == ECONNREFUSED &&
	       now_ns() < give_up)
		sleep_ns(LOCAL_SERVER_POLL_NS);
	return fd;
}

/* dbench's tbench with no SERVER talks to localhost: where a tbench_srv
 * listens there, so do we (r->ai is then set); else we bring our own. */
static bool server_on_localhost(struct tcp_run *r, const struct backend_config *cfg,
				const char *port)
{
	struct errbuf err;

	if (resolve(r, cfg, loopback(cfg), port, &err) < 0)
		return false;
	int fd = connect_local(r, cfg, &err);
	if (fd >= 0) {
		close(fd);
		fprintf(stderr, "tbench: %s: no SERVER: using the server already listening on %s, "
			"as dbench does\n", r->fl->name, r->addr);
		return true;
	}
	freeaddrinfo(r->ai);
	r->ai = NULL;
	return false;
}

/* dbench's tbench would stop here: with --no-own-server so do we, saying
 * where a server was looked for; else we start ours and say so, as the
 * figures are then of a server the user did not start. */
static int no_local_server(struct tcp_run *r, const struct backend_config *cfg,
			   char *port, size_t portlen, struct errbuf *err)
{
	char tried[sizeof(r->addr) + 64];

	snprintf(tried, sizeof(tried), "%s", r->addr[0] ? r->addr : loopback(cfg));
	if (looks_again(cfg))
		snprintf(tried + strlen(tried), sizeof(tried) - strlen(tried), " (looked for %.0f s)",
			 LOCAL_SERVER_WAIT_NS / 1e9);
	if (cfg->no_own_server)
		return err_set(err, "%s: --no-own-server: no tbench_srv listens on %s: start one "
			       "there (tbench_srv -l %s --port %s), or give SERVER", r->fl->name, tried,
			       loopback(cfg), port);
	if (start_own_server(r, cfg, port, portlen, err) < 0)
		return -1;
	fprintf(stderr, "tbench: %s: no tbench_srv listens on %s: starting one of tbench's own "
		"on %s port %s (--no-own-server makes this an error)\n", r->fl->name, tried,
		loopback(cfg), port);
	return 0;
}

int tcp_start_as(const struct tcp_flavour *fl, const struct backend_config *cfg, void **run,
		 struct errbuf *err)
{
	struct tcp_run *r = calloc(1, sizeof(*r));
	char port[16];

	if (!r)
		return err_set(err, "%s: out of memory", fl->name);
	r->fl = fl;
	snprintf(port, sizeof(port), "%s", cfg->port ? cfg->port : WIRE_PORT_STRING);
	int rc = sockopts_parse_tcp(cfg->tcp_options ? cfg->tcp_options : SOCKOPT_TCP_DEFAULT,
				    &r->opts, err);
	/* A value the kernel refuses (TCP_CONGESTION=NAME) fails the run here, once. */
	if (rc == 0 && sockopts_probe(cfg->family == AF_INET6 ? AF_INET6 : AF_INET, fl->protocol,
				      &r->opts, err) < 0) {
		struct errbuf why = *err;
		rc = err_set(err, "%s: -T: %s", fl->name, why.msg);
	}
	/* --server-cpus pins tbench's own server: one already on localhost is not. */
	bool look_local = fl->local_server_first && !cfg->server_cpus;
	if (rc == 0 && !cfg->server && !(look_local && server_on_localhost(r, cfg, port)))
		rc = look_local ? no_local_server(r, cfg, port, sizeof(port), err)
				: start_own_server(r, cfg, port, sizeof(port), err);
	if (rc == 0 && !r->ai)
		rc = resolve(r, cfg, cfg->server ? cfg->server : loopback(cfg), port, err);
	if (rc < 0) {
		tcp_stop(r);
		return -1;
	}
	*run = r;
	return 0;
}

static int tcp_start(const struct backend_config *cfg, void **run, struct errbuf *err)
{
	return tcp_start_as(&tcp_plain, cfg, run, err);
}

int tcp_open_stream(void *run, const struct backend_config *cfg, struct wire_stream *c,
		    struct errbuf *err)
{
	struct tcp_run *r = run;
	int fd = -1;

	/* Every address SERVER has, in getaddrinfo's order, until one answers. */
	for (const struct addrinfo *ai = r->ai; ai && fd < 0; ai = ai->ai_next)
		fd = connect_one(r, ai, err);
	if (fd < 0)
		return -1;
	c->fd = fd;
	c->discard_replies = !cfg->copy_replies;
	c->peer = r->peer;
	return 0;
}

void tcp_socket_info(void *conn, struct socket_readback *out)
{
	const struct wire_stream *c = conn;

	sockopt_read_back(c->fd, out);
}

int tcp_open(void *run, const struct backend_config *cfg, unsigned client,
	     void **conn, struct errbuf *err)
{
	struct tcp_run *r = run;
	struct wire_stream *c = malloc(sizeof(*c));

	(void)client;   /* the driver puts "client N:" before our errors */
	if (!c)
		return err_set(err, "%s: out of memory", r->fl->name);
	if (tcp_open_stream(run, cfg, c, err) < 0) {
		free(c);
		return -1;
	}
	*conn = c;
	return 0;
}

const struct backend backend_tcp = {
	.name = "tcp",
	.summary = "TCP to tbench_srv at SERVER:" WIRE_PORT_STRING
		   ", or to its own server on 127.0.0.1 (default)",
	.flags = BACKEND_TAKES_SERVER | BACKEND_TCP | BACKEND_RECONNECTS | BACKEND_FAMILY |
		 BACKEND_SOCKOPTS | BACKEND_OWN_SERVER | BACKEND_OFFLOADS | BACKEND_WIRE | BACKEND_SWEPT |
		 BACKEND_COPY_REPLIES,
	/* the socket layer and TCP/IP, not unix's path: beside unix */
	.path = { .extends = "nop", .layer = "tcpip", .adds = "TCP/IP over loopback",
		  .differs_from = "unix", .drops_replies = true },
	.check = tcp_check,
	.start = tcp_start,
	.open = tcp_open,
	.exchange = wire_stream_exchange,
	.close = wire_stream_close,
	.stop = tcp_stop,
	.socket_info = tcp_socket_info,
	.add_settings = backend_no_settings,
};
