/* tbench_srv: answer tbench's wire protocol on TCP (every address, port
 * 7003, by default), MPTCP (--mptcp, which takes TCP peers too) or a unix
 * socket, until SIGTERM or SIGINT. The engine is server.c; this file is
 * its command line. */
#include "config.h"

#include <errno.h>
#include <limits.h>
#include <popt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include "cpulist.h"
#include "server.h"
#include "version.h"
#include "wire.h"

enum { OPT_VERSION = 1, OPT_FORK, OPT_THREADS };

/* Descriptors a thread-per-connection server needs beyond one per client. */
enum { SPARE_FDS = 64 };

struct srv_options {
	struct server_config cfg;
	char *port, *listen, *unix_path, *tcp_options, *max, *timeout;   /* popt's copies: ours to free */
	char *cpus_text, *loops;
	struct cpu_list cpus;      /* --cpus */
	int quiet, mptcp, uring;
};

static void free_options(struct srv_options *o)
{
	free(o->port);
	free(o->listen);
	free(o->unix_path);
	free(o->tcp_options);
	free(o->max);
	free(o->timeout);
	free(o->cpus_text);
	free(o->loops);
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

/* The numbers: NULL when they are fine, else what is wrong. */
static const char *check_numbers(struct srv_options *o)
{
	long v;

	if (o->max) {
		if (parse_long_range(o->max, 0, 1000000, &v) < 0)
			return "--max-clients must be a whole number from 0 (no limit) to 1000000";
		o->cfg.max_clients = (unsigned)v;
	}
	if (o->timeout) {
		if (parse_long_range(o->timeout, 0, 86400, &v) < 0)
			return "--timeout must be a whole number of seconds from 0 (never) to 86400";
		o->cfg.timeout_secs = (unsigned)v;
	}
	if (o->loops) {
		if (!o->uring)
			return "--loops is the number of --uring's event loops: add --uring";
		if (parse_long_range(o->loops, 1, 1024, &v) < 0)
			return "--loops must be a whole number of event loops from 1 to 1024";
		o->cfg.uring_loops = (unsigned)v;
	} else if (o->uring) {
		o->cfg.uring_loops = online_cpus();
	}
	if (o->cpus_text) {
		static struct errbuf err;
		if (cpu_list_parse("--cpus", o->cpus_text, &o->cpus, &err) < 0 ||
		    cpu_list_check_allowed("--cpus", &o->cpus, &err) < 0)
			return err.msg;
		o->cfg.cpus = &o->cpus;
	}
	return NULL;
}

/* 0: serve; 1: done (--help, --version); -1: bad usage. */
static int parse_args(int argc, const char **argv, struct srv_options *o)
{
	struct poptOption table[] = {
		{ "port", 'p', POPT_ARG_STRING, &o->port, 0,
		  "TCP port to listen on (default " WIRE_PORT_STRING "; 0: any free port, printed)",
		  "PORT" },
		{ "listen", 'l', POPT_ARG_STRING, &o->listen, 0,
		  "listen on this address only, IPv4 or IPv6 (default: every address)", "ADDR" },
		{ "unix", 'u', POPT_ARG_STRING, &o->unix_path, 0,
		  "listen on a unix socket at PATH instead of TCP", "PATH" },
		{ "mptcp", 0, POPT_ARG_NONE, &o->mptcp, 0,
		  "listen with MPTCP (plain TCP peers still served, as TCP)", NULL },
		{ "fork", 0, POPT_ARG_NONE, NULL, OPT_FORK,
		  "a process per connection (the default, as dbench)", NULL },
		{ "threads", 0, POPT_ARG_NONE, NULL, OPT_THREADS,
		  "a thread per connection", NULL },
		{ "uring", 0, POPT_ARG_NONE, &o->uring, 0,
		  "io_uring event loops, a thread each, serve every connection (multishot accept "
		  "and receive); --cpus pins loop k", NULL },
		{ "loops", 0, POPT_ARG_STRING, &o->loops, 0,
		  "with --uring: this many event loops (default: one per online CPU)", "N" },
		{ "max-clients", 'm', POPT_ARG_STRING, &o->max, 0,
		  "refuse connections beyond N at a time (default "
		  WIRE_STRINGIFY(SERVER_MAX_CLIENTS) "; 0: no limit)", "N" },
		{ "max-connections", 0, POPT_ARG_STRING | POPT_ARGFLAG_DOC_HIDDEN, &o->max, 0,
		  "the same as --max-clients", "N" },
		{ "timeout", 0, POPT_ARG_STRING, &o->timeout, 0,
		  "drop a peer that takes SECS to finish a frame or take its reply; one idle "
		  "between frames is kept, however long (default "
		  WIRE_STRINGIFY(SERVER_TIMEOUT_SECS) "; 0: never)", "SECS" },
		{ "tcp-options", 'T', POPT_ARG_STRING, &o->tcp_options, 0,
		  "options for accepted TCP sockets (default TCP_NODELAY)", "OPTS" },
		{ NULL, 't', POPT_ARG_STRING | POPT_ARGFLAG_DOC_HIDDEN, &o->tcp_options, 0,
		  "the same as -T (dbench's tbench_srv spells it -t)", "OPTS" },
		{ "cpus", 0, POPT_ARG_STRING, &o->cpus_text, 0,
		  "pin connection k's process or thread to the k-th CPU of LIST, round robin "
		  "(e.g. 0, 0,1, 0-3)", "LIST" },
		{ "quiet", 'q', POPT_ARG_NONE, &o->quiet, 0,
		  "log only problems, not the listening address", NULL },
		{ "version", 'V', POPT_ARG_NONE, NULL, OPT_VERSION, "print the version", NULL },
		POPT_AUTOHELP
		POPT_TABLEEND
	};
	poptContext pc = poptGetContext("tbench_srv", argc, argv, table, 0);
	const char *bad;
	int rc, forks = 0;

	while ((rc = poptGetNextOpt(pc)) > 0) {
		if (rc == OPT_VERSION) {
			printf("%s\n", version_line("tbench_srv"));
			poptFreeContext(pc);
			return 1;
		}
		o->cfg.processes = rc == OPT_FORK;
		forks += rc == OPT_FORK || rc == OPT_THREADS;
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
	if (o->uring && forks)
		return usage_error(pc, "--uring's event loops serve every connection: drop --fork "
				   "and --threads");
	if ((bad = check_numbers(o)))
		return usage_error(pc, bad);
	if (o->unix_path && (o->listen || o->port))
		return usage_error(pc, "--unix listens on a socket path: drop --listen and --port");
	if (o->uring && o->unix_path)
		return usage_error(pc, "--uring serves TCP: drop --unix or --uring");
	if (o->uring && o->mptcp)
		return usage_error(pc, "--uring serves TCP: drop --mptcp or --uring");
	if (o->unix_path && o->mptcp)
		return usage_error(pc, "--mptcp is for TCP: drop --unix or --mptcp");
	o->cfg.mptcp = o->mptcp;
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

/* 1,000 idle peers must not exhaust the default 1,024 descriptors. */
static void raise_limits(const struct server_config *cfg)
{
	unsigned long limit;
	struct errbuf err;

	if (raise_fd_limit(0, &limit, &err) < 0) {
		fprintf(stderr, "tbench_srv: %s; going on with the current limit\n", err.msg);
		return;
	}
	/* With processes, each connection's descriptor is in its own process. */
	if ((!cfg->processes || cfg->uring_loops) && (!cfg->max_clients || limit < cfg->max_clients + SPARE_FDS))
		fprintf(stderr, "tbench_srv: at most %lu open files (ulimit -n): with --threads, "
			"connections past about %lu will be refused; raise the hard limit or "
			"lower --max-clients\n", limit, limit > SPARE_FDS ? limit - SPARE_FDS : 0);
}

static int serve(struct srv_options *o)
{
	const char *spec = o->tcp_options ? o->tcp_options : o->unix_path ? NULL
							    : SOCKOPT_TCP_DEFAULT;
	struct sockopts opts;
	struct errbuf err;
	struct server *s;

	if ((o->unix_path ? sockopts_parse_unix : sockopts_parse_tcp)(spec, &opts, &err) < 0) {
		fprintf(stderr, "tbench_srv: -T %s: %s\n", spec, err.msg);
		return EXIT_USAGE;
	}
	o->cfg.opts = &opts;
	install_signals();
	raise_limits(&o->cfg);
	int rc = server_listen(&o->cfg, &s, &err);
	if (rc < 0) {
		fprintf(stderr, "tbench_srv: %s\n", err.msg);
		return rc == SERVER_BAD_CONFIG ? EXIT_USAGE : EXIT_RUN_FAILED;
	}
	/* After listen(), which says what MPTCP lacks: a value the kernel
	 * refuses (TCP_CONGESTION=NAME) fails here, not per connection. */
	if (!o->unix_path && sockopts_probe(AF_INET, o->mptcp ? IPPROTO_MPTCP : 0, &opts, &err) < 0) {
		fprintf(stderr, "tbench_srv: -T %s: %s\n", spec, err.msg);
		server_free(s);
		return EXIT_RUN_FAILED;
	}
	running = s;
	if (stop_early)   /* the signal came before the handler could see the server */
		server_request_stop(s);
	if (!o->quiet) {
		/* Scripts wait for this line; with --port 0 it is how they learn the port. */
		char shape[64];
		if (o->cfg.uring_loops)
			snprintf(shape, sizeof(shape), "%u io_uring event loops", o->cfg.uring_loops);
		else
			snprintf(shape, sizeof(shape), "%s per connection",
				 o->cfg.processes ? "a process" : "a thread");
		printf("tbench_srv: listening on %s (%s%s%s)\n", server_address(s),
		       server_on_every_address(s) ? "every address; " : "", o->mptcp ? "MPTCP; " : "",
		       shape);
		fflush(stdout);
	}
	rc = server_run(s);
	running = NULL;
	server_free(s);
	return rc == 0 ? EXIT_OK : EXIT_RUN_FAILED;
}

int main(int argc, char **argv)
{
	struct srv_options o = {
		.cfg = { .processes = true, .max_clients = SERVER_MAX_CLIENTS,
			 .timeout_secs = SERVER_TIMEOUT_SECS, .log_prefix = "tbench_srv",
			 .log_fd = 2 },
	};
	int rc = parse_args(argc, (const char **)argv, &o);

	if (rc == 0)
		rc = serve(&o);
	else
		rc = rc > 0 ? EXIT_OK : EXIT_USAGE;
	free_options(&o);
	return rc;
}
