/* tbench_srv: answer tbench's wire protocol on TCP (127.0.0.1:7003 by
 * default) or a unix socket, until SIGTERM or SIGINT. The engine is
 * server.c; this file is its command line. */
#include "config.h"

#include <errno.h>
#include <popt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "server.h"

enum { OPT_VERSION = 1, OPT_FORK, OPT_THREADS };

struct srv_options {
	struct server_config cfg;
	char *port, *listen, *unix_path, *tcp_options, *max;   /* popt's copies: ours to free */
	int quiet;
};

static void free_options(struct srv_options *o)
{
	free(o->port);
	free(o->listen);
	free(o->unix_path);
	free(o->tcp_options);
	free(o->max);
}

static struct server *volatile running;     /* for the signal handler */
static volatile sig_atomic_t stop_early;    /* a signal before it was set */

static void on_stop_signal(int sig)
{
	int saved = errno;

	(void)sig;
	stop_early = 1;
	if (running)
		server_request_stop(running);
	errno = saved;
}

static int usage_error(poptContext pc, const char *what)
{
	fprintf(stderr, "tbench_srv: %s\nTry 'tbench_srv --help' for more information.\n", what);
	poptFreeContext(pc);
	return -1;
}

static int parse_max(const char *s, unsigned *out)
{
	char *end;
	errno = 0;
	long v = strtol(s, &end, 10);

	if (errno || end == s || *end || v < 0 || v > 1000000)
		return -1;
	*out = (unsigned)v;
	return 0;
}

/* 0: serve; 1: done (--help, --version); -1: bad usage. */
static int parse_args(int argc, const char **argv, struct srv_options *o)
{
	struct poptOption table[] = {
		{ "port", 'p', POPT_ARG_STRING, &o->port, 0,
		  "TCP port to listen on (default 7003; 0: any free port, printed)", "PORT" },
		{ "listen", 'l', POPT_ARG_STRING, &o->listen, 0,
		  "address to listen on, IPv4 or IPv6 (default 127.0.0.1)", "ADDR" },
		{ "unix", 'u', POPT_ARG_STRING, &o->unix_path, 0,
		  "listen on a unix socket at PATH instead of TCP", "PATH" },
		{ "fork", 0, POPT_ARG_NONE, NULL, OPT_FORK,
		  "a process per connection", NULL },
		{ "threads", 0, POPT_ARG_NONE, NULL, OPT_THREADS,
		  "a thread per connection (the default)", NULL },
		{ "max-connections", 'm', POPT_ARG_STRING, &o->max, 0,
		  "refuse connections beyond N at a time (default 0: no limit)", "N" },
		{ "tcp-options", 'T', POPT_ARG_STRING, &o->tcp_options, 0,
		  "options for accepted TCP sockets (default TCP_NODELAY)", "OPTS" },
		{ "quiet", 'q', POPT_ARG_NONE, &o->quiet, 0,
		  "log only problems, not the listening address", NULL },
		{ "version", 'V', POPT_ARG_NONE, NULL, OPT_VERSION, "print the version", NULL },
		POPT_AUTOHELP
		POPT_TABLEEND
	};
	poptContext pc = poptGetContext("tbench_srv", argc, argv, table, 0);
	int rc;

	while ((rc = poptGetNextOpt(pc)) > 0) {
		if (rc == OPT_VERSION) {
			printf("tbench_srv %s\n", PACKAGE_VERSION);
			poptFreeContext(pc);
			return 1;
		}
		o->cfg.fork = rc == OPT_FORK;
	}
	if (rc < -1) {
		char what[256];
		snprintf(what, sizeof(what), "%s: %s", poptBadOption(pc, POPT_BADOPTION_NOALIAS),
			 poptStrerror(rc));
		return usage_error(pc, what);
	}
	if (poptPeekArg(pc)) {
		char what[256];
		snprintf(what, sizeof(what), "unexpected argument '%.100s': tbench_srv takes "
			 "options only", poptPeekArg(pc));
		return usage_error(pc, what);
	}
	if (o->max && parse_max(o->max, &o->cfg.max_connections) < 0)
		return usage_error(pc, "--max-connections must be a whole number from 0 "
				   "(no limit) to 1000000");
	if (o->unix_path && (o->listen || o->port))
		return usage_error(pc, "--unix listens on a socket path: drop --listen and --port");
	o->cfg.port = o->port;
	o->cfg.listen = o->listen;
	o->cfg.unix_path = o->unix_path;
	poptFreeContext(pc);
	return 0;
}

static void install_signals(void)
{
	struct sigaction sa = { .sa_handler = on_stop_signal };

	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);   /* a vanished client is a log line, not our death */
}

static int serve(struct srv_options *o)
{
	const char *spec = o->tcp_options ? o->tcp_options : o->unix_path ? NULL
							    : SOCKOPT_TCP_DEFAULT;
	struct sockopts opts;
	struct errbuf err;
	struct server *s;

	if (sockopts_parse(spec, !o->unix_path, &opts, &err) < 0) {
		fprintf(stderr, "tbench_srv: -T %s: %s\n", spec, err.msg);
		return EXIT_USAGE;
	}
	o->cfg.opts = &opts;
	install_signals();
	int rc = server_listen(&o->cfg, &s, &err);
	if (rc < 0) {
		fprintf(stderr, "tbench_srv: %s\n", err.msg);
		return rc == SERVER_BAD_CONFIG ? EXIT_USAGE : EXIT_RUN_FAILED;
	}
	running = s;
	if (stop_early)   /* the signal came before the handler could see the server */
		server_request_stop(s);
	if (!o->quiet) {
		/* Scripts wait for this line; with --port 0 it is how they learn the port. */
		printf("tbench_srv: listening on %s (%s per connection)\n",
		       server_address(s), o->cfg.fork ? "a process" : "a thread");
		fflush(stdout);
	}
	rc = server_run(s);
	running = NULL;
	server_free(s);
	return rc == 0 ? EXIT_OK : EXIT_RUN_FAILED;
}

int main(int argc, char **argv)
{
	struct srv_options o = { .cfg = { .log_prefix = "tbench_srv", .log_fd = 2 } };
	int rc = parse_args(argc, (const char **)argv, &o);

	if (rc == 0)
		rc = serve(&o);
	else
		rc = rc > 0 ? EXIT_OK : EXIT_USAGE;
	free_options(&o);
	return rc;
}
