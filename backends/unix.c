/* unix: one AF_UNIX stream connection per client to a server speaking the
 * tbench wire protocol. It measures the same request/response pattern as
 * tcp by the socket layer's unix path instead of TCP/IP: a different path,
 * set beside tcp's, not a layer under it (docs/method.md). AF_UNIX streams
 * ignore MSG_TRUNC, so reply bodies are always copied here: compare with
 * tcp's --copy-replies.
 *
 * By default the backend starts its own server (src/server.c) on a socket
 * in a private directory made with mkdtemp() under $TMPDIR (or /tmp), and
 * removes both at the end of the run. The server follows the clients'
 * model: a forked process holding the listener, and a process per
 * connection, with client processes; threads with client threads (of a
 * process of their own when one may not open files for both ends). With
 * --unix PATH it connects to a running `tbench_srv --unix PATH` instead.
 * -T takes the SO_* options; TCP ones are refused. --port does not apply
 * and is ignored. */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "backend.h"
#include "schema.h"
#include "server.h"
#include "sockopt.h"
#include "wire.h"

struct unix_run {
	struct server *srv;          /* our own, without --unix */
	/* Its mkdtemp() directory: short enough for "/sock" to fit sun_path. */
	char dir[sizeof(((struct sockaddr_un *)0)->sun_path) - sizeof("/sock") + 1];
	struct sockaddr_un sun;
	struct sockopts opts;
	char peer[160];              /* "unix server PATH", for errors */
};

/* --unix PATH: a running tbench_srv's socket instead of a server of its own. */
static struct unix_settings {
	const char *path;
} settings;

static int parse_path(void *to, const char *text, struct errbuf *err)
{
	(void)err;   /* checked with the rest in unix_check */
	((struct unix_settings *)to)->path = text;
	return 0;
}

static const struct backend_option unix_options[] = {
	{ "unix", "PATH", "socket of a running tbench_srv --unix", parse_path, true },
	{ NULL, NULL, NULL, NULL, false }
};

/* The socket of --unix; null when tbench started its own server. */
static void unix_add_settings(struct json_object *into, const void *to)
{
	json_put(into, SK_UNIX_SOCKET, json_string(((const struct unix_settings *)to)->path));
}

static int unix_check(const struct backend_config *cfg, struct errbuf *err)
{
	struct sockopts opts;
	const size_t max = sizeof(((struct sockaddr_un *)0)->sun_path) - 1;

	if (settings.path && (!*settings.path || strlen(settings.path) > max))
		return err_set(err, "unix: --unix %s: a socket path must be 1 to %zu bytes long",
			       settings.path, max);
	if (settings.path && cfg->server_cpus)
		return err_set(err, "unix: --server-cpus pins the server tbench starts itself: with "
			       "--unix, start that tbench_srv with --cpus instead");
	if (sockopts_parse_unix(cfg->tcp_options, &opts, err) < 0) {
		struct errbuf why = *err;
		return err_set(err, "unix: -T %s: %s", cfg->tcp_options, why.msg);
	}
	return 0;
}

/* A private directory, so no other user can race us for the socket name. */
static int make_dir(struct unix_run *r, struct errbuf *err)
{
	const char *tmp = getenv("TMPDIR");

	/* The socket path must fit sun_path with "/sock" after it. */
	if (!tmp || !*tmp || strlen(tmp) + sizeof("/tbench-unix.XXXXXX/sock") > sizeof(r->dir))
		tmp = "/tmp";
	snprintf(r->dir, sizeof(r->dir), "%s/tbench-unix.XXXXXX", tmp);
	if (!mkdtemp(r->dir)) {
		r->dir[0] = '\0';   /* nothing for unix_stop() to remove */
		return err_errno(err, "unix: making a private directory in %s (set TMPDIR to a "
				 "writable directory)", tmp);
	}
	return 0;
}

static int start_own_server(struct unix_run *r, const struct backend_config *cfg,
			    struct errbuf *err)
{
	struct server_config sc = {
		.unix_path = r->sun.sun_path, .private_dir = r->dir, .opts = &r->opts,
		.processes = cfg->processes, .cpus = cfg->server_cpus,
		.apart = !cfg->processes && server_apart(cfg->nclients, "tbench"),
		.log_prefix = "tbench: unix server", .log_fd = 2,
	};
	struct errbuf why;

	if (make_dir(r, err) < 0)
		return -1;
	snprintf(r->sun.sun_path, sizeof(r->sun.sun_path), "%s/sock", r->dir);
	if (server_listen(&sc, &r->srv, &why) < 0 || server_start(r->srv, &why) < 0)
		return err_set(err, "unix: starting tbench's own server: %s", why.msg);
	return 0;
}

static void unix_stop(void *run)
{
	struct unix_run *r = run;

	server_free(r->srv);   /* removes the socket and, once it has one, the directory */
	if (r->dir[0] && rmdir(r->dir) < 0 && errno != ENOENT)
		fprintf(stderr, "tbench: unix: removing %s: %s\n", r->dir, strerror(errno));
	free(r);
}

static int unix_start(const struct backend_config *cfg, void **run, struct errbuf *err)
{
	struct unix_run *r = calloc(1, sizeof(*r));

	if (!r)
		return err_set(err, "unix: out of memory");
	r->sun.sun_family = AF_UNIX;
	int rc = sockopts_parse_unix(cfg->tcp_options, &r->opts, err);
	if (rc == 0 && settings.path)
		snprintf(r->sun.sun_path, sizeof(r->sun.sun_path), "%s", settings.path);
	else if (rc == 0)
		rc = start_own_server(r, cfg, err);
	if (rc < 0) {
		unix_stop(r);
		return -1;
	}
	snprintf(r->peer, sizeof(r->peer), "unix server %s", r->sun.sun_path);
	*run = r;
	return 0;
}

static int connect_error(const struct unix_run *r, struct errbuf *err)
{
	bool hint = !r->srv && (errno == ENOENT || errno == ECONNREFUSED);

	return err_set(err, "unix: connecting to %s: %s%s%s%s", r->sun.sun_path, strerror(errno),
		       hint ? " (is `tbench_srv --unix " : "", hint ? r->sun.sun_path : "",
		       hint ? "` running? start it, or drop --unix to use tbench's own server)" : "");
}

static int unix_open(void *run, const struct backend_config *cfg, unsigned client,
		     void **conn, struct errbuf *err)
{
	struct unix_run *r = run;
	struct wire_stream *c = malloc(sizeof(*c));

	(void)cfg;
	(void)client;   /* the driver puts "client N:" before our errors */
	if (!c)
		return err_set(err, "unix: out of memory");
	c->fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (c->fd < 0) {
		free(c);
		return err_errno(err, "unix: creating a socket for %s", r->sun.sun_path);
	}
	if (sockopts_apply(c->fd, &r->opts, err) < 0 ||
	    (connect(c->fd, (const struct sockaddr *)&r->sun, sizeof(r->sun)) < 0 &&
	     connect_error(r, err) < 0)) {
		close(c->fd);
		free(c);
		return -1;
	}
	c->discard_replies = false;   /* AF_UNIX would copy them anyway */
	c->peer = r->peer;
	*conn = c;
	return 0;
}

static void unix_socket_info(void *conn, struct socket_readback *out)
{
	const struct wire_stream *c = conn;

	sockopt_read_back(c->fd, out);
}

const struct backend backend_unix = {
	.name = "unix",
	.summary = "AF_UNIX stream to its own server (or tbench_srv --unix PATH): no TCP/IP",
	.flags = BACKEND_RECONNECTS | BACKEND_OWN_SERVER | BACKEND_SWEPT,
	/* the socket layer's own copy and wake-up, not pipe's: beside pipe */
	.path = { .extends = "nop", .layer = "unix_socket", .adds = "unix socket stream: copy + wake-up",
		  .differs_from = "pipe" },
	.check = unix_check,
	.start = unix_start,
	.open = unix_open,
	.exchange = wire_stream_exchange,
	.close = wire_stream_close,
	.stop = unix_stop,
	.socket_info = unix_socket_info,
	.options = unix_options,
	.settings = &settings,
	.add_settings = unix_add_settings,
};
