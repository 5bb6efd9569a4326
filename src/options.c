#include "config.h"
#include "options.h"
#include "registry.h"

#include <errno.h>
#include <popt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum { MAX_CLIENTS = 65536, DEFAULT_TIMELIMIT = 600 };
enum { OPT_VERSION = 1 };

const char *options_default_loadfile(void)
{
	static const char installed[] = TBENCH_DATADIR "/default.txt";
	static const char source[] = TBENCH_SRCDIR "/loadfiles/default.txt";

	return access(installed, R_OK) == 0 ? installed : source;
}

void options_list_backends(FILE *f)
{
	fprintf(f, "Backends (-b NAME):\n");
	for (size_t i = 0; backends[i]; i++)
		fprintf(f, "  %-12s %s\n", backends[i]->name, backends[i]->summary);
}

static int usage_error(poptContext pc, const char *fmt, const char *arg)
{
	fprintf(stderr, "tbench: ");
	fprintf(stderr, fmt, arg);
	fprintf(stderr, "\nTry 'tbench --help' for more information.\n");
	poptFreeContext(pc);
	return -1;
}

static int parse_clients(const char *s, unsigned *out)
{
	char *end;
	errno = 0;
	long v = strtol(s, &end, 10);

	if (errno || *end || end == s || v < 1 || v > MAX_CLIENTS)
		return -1;
	*out = (unsigned)v;
	return 0;
}

/* Values popt parsed that must still be in range. */
static const char *check_ranges(const struct options *o, double timelimit, double warmup)
{
	if (timelimit <= 0 && timelimit != -1)
		return "-t/--timelimit must be more than 0 seconds";
	if (warmup < 0 && warmup != -1)
		return "--warmup must be 0 seconds or more";
	if (o->run.target_rate < 0)
		return "-R/--target-rate must be 0 (unlimited) or more MB/sec";
	return NULL;
}

int options_parse(int argc, const char **argv, struct options *o)
{
	double timelimit = -1, warmup = -1;
	int processes = 0, run_once = 0, show_exec = 0, quiet = 0;
	struct poptOption table[] = {
		{ "backend", 'b', POPT_ARG_STRING, &o->backend_name, 0,
		  "transport to measure ('-b help' lists them)", "NAME" },
		{ "loadfile", 'c', POPT_ARG_STRING, &o->loadfile, 0,
		  "NBENCH loadfile to replay (default: the built-in one)", "FILE" },
		{ "timelimit", 't', POPT_ARG_DOUBLE, &timelimit, 0,
		  "seconds of the execute phase (default 600)", "SECS" },
		{ "warmup", 0, POPT_ARG_DOUBLE, &warmup, 0,
		  "seconds of warm-up before it (default: timelimit / 5)", "SECS" },
		{ "target-rate", 'R', POPT_ARG_DOUBLE, &o->run.target_rate, 0,
		  "throttle each client to this many MB/sec (default: unlimited)", "MB" },
		{ "processes", 0, POPT_ARG_NONE, &processes, 0,
		  "fork the clients (and the servers a backend brings) instead of threads", NULL },
		{ "run-once", 0, POPT_ARG_NONE, &run_once, 0,
		  "each client replays the loadfile once, then the run ends", NULL },
		{ "show-execute-time", 0, POPT_ARG_NONE, &show_exec, 0,
		  "print a line each time a client completes a pass (mmtests)", NULL },
		{ "quiet", 'q', POPT_ARG_NONE, &quiet, 0, "no progress lines", NULL },
		{ "json", 0, POPT_ARG_STRING, &o->json_path, 0,
		  "also write every figure of the run to FILE as JSON", "FILE" },
		{ "port", 0, POPT_ARG_STRING, &o->run.bcfg.port, 0,
		  "TCP port of the server (default 7003)", "PORT" },
		{ "unix", 0, POPT_ARG_STRING, &o->run.bcfg.unix_path, 0,
		  "unix backend: socket of a running tbench_srv --unix", "PATH" },
		{ "tcp-options", 'T', POPT_ARG_STRING, &o->run.bcfg.tcp_options, 0,
		  "socket options, e.g. TCP_NODELAY,SO_SNDBUF=65536", "OPTS" },
		{ "version", 'V', POPT_ARG_NONE, NULL, OPT_VERSION, "print the version", NULL },
		POPT_AUTOHELP
		POPT_TABLEEND
	};
	poptContext pc = poptGetContext("tbench", argc, argv, table, 0);
	int rc;

	poptSetOtherOptionHelp(pc, "[OPTIONS] NCLIENTS [SERVER]");
	while ((rc = poptGetNextOpt(pc)) > 0) {
		if (rc == OPT_VERSION) {
			printf("tbench %s\n", PACKAGE_VERSION);
			poptFreeContext(pc);
			return 1;
		}
	}
	if (rc < -1) {
		char what[256];
		snprintf(what, sizeof(what), "%s: %s", poptBadOption(pc, POPT_BADOPTION_NOALIAS),
			 poptStrerror(rc));
		return usage_error(pc, "%s", what);
	}
	if (o->backend_name && strcmp(o->backend_name, "help") == 0) {
		o->list_backends = true;
		poptFreeContext(pc);
		return 1;
	}
	const char *nclients = poptGetArg(pc);
	const char *server = poptGetArg(pc);
	if (!nclients)
		return usage_error(pc, "%s", "missing NCLIENTS: how many clients to run, e.g. 'tbench 8'");
	if (poptPeekArg(pc))
		return usage_error(pc, "unexpected argument '%s' after NCLIENTS [SERVER]", poptPeekArg(pc));
	if (parse_clients(nclients, &o->run.bcfg.nclients) < 0) {
		char what[128];
		snprintf(what, sizeof(what), "NCLIENTS must be a whole number from 1 to %d, not '%.40s'",
			 MAX_CLIENTS, nclients);
		return usage_error(pc, "%s", what);
	}
	const char *bad = check_ranges(o, timelimit, warmup);
	if (bad)
		return usage_error(pc, "%s", bad);

	/* Like tbench: 600 s by default, warm-up a fifth of it. --run-once
	 * ends with the pass, unless a time limit is given too. */
	o->run.run_once = run_once;
	if (timelimit == -1)
		timelimit = run_once ? 0 : DEFAULT_TIMELIMIT;
	o->run.timelimit = timelimit;
	o->run.warmup = warmup != -1 ? warmup : run_once ? 0 : timelimit / 5;
	o->run.show_execute_time = show_exec;
	o->run.quiet = quiet;
	o->run.bcfg.processes = processes;
	if (server && !(o->run.bcfg.server = strdup(server)))
		return usage_error(pc, "%s", "out of memory");
	poptFreeContext(pc);
	return 0;
}

/* popt allocated the option strings; SERVER was copied out of its context. */
void options_free(struct options *o)
{
	free((char *)o->backend_name);
	free((char *)o->loadfile);
	free((char *)o->json_path);
	free((char *)o->run.bcfg.server);
	free((char *)o->run.bcfg.port);
	free((char *)o->run.bcfg.unix_path);
	free((char *)o->run.bcfg.tcp_options);
	memset(o, 0, sizeof(*o));
}
