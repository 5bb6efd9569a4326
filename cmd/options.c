/* The command line of tbench (popt): dbench 4.0's options (and those of the
 * dbench mmtests builds) with their meaning, ours beside them; defaults,
 * parsing and validation. Nothing here starts anything. */
#include "config.h"
#include "options.h"

#include <errno.h>
#include <math.h>
#include <popt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "registry.h"
#include "version.h"
#include "wire.h"

enum { MAX_CLIENTS = 65536, DEFAULT_TIMELIMIT = 600, DEFAULT_TIMEOUT = 60, TIMEOUT_MS_PER_TASK = 20 };
/* --inject-ns: up to a second an exchange, far more than any study needs. */
enum { MAX_INJECT_NS = 1000000000 };
enum { OPT_VERSION = 1, OPT_WARMUP, OPT_FS_ONLY, OPT_TRUNC_IO, OPT_TIMEOUT, OPT_TIMELIMIT,
       OPT_SYSCTL };

const char *options_default_loadfile(bool *dbench)
{
	static const char dbench_file[] = DBENCH_LOADFILE;
	static const char installed[] = TBENCH_DATADIR "/default.txt";
	static const char source[] = TBENCH_SRCDIR "/loadfiles/default.txt";

	*dbench = dbench_file[0] && access(dbench_file, R_OK) == 0;
	if (*dbench)
		return dbench_file;
	return access(installed, R_OK) == 0 ? installed : source;
}

void options_list_backends(FILE *f)
{
	fprintf(f, "Backends (-b NAME):\n");
	for (size_t i = 0; backends[i]; i++)
		fprintf(f, "  %-12s %s\n", backends[i]->name, backends[i]->summary);
}

static int usage_error(poptContext pc, const char *what)
{
	fprintf(stderr, "tbench: %s\nTry 'tbench --help' for more information.\n", what);
	poptFreeContext(pc);
	return -1;
}

/* The long names of TABLE and the tables it includes, into NAMES (at most
 * MAX); how many there are then. */
static size_t long_names(const struct poptOption *table, const char **names, size_t n, size_t max)
{
	for (; table->longName || table->shortName || table->arg; table++) {
		if (table->argInfo == POPT_ARG_INCLUDE_TABLE && table->arg)
			n = long_names(table->arg, names, n, max);
		else if (table->longName && n < max)
			names[n++] = table->longName;
	}
	return n;
}

/* "--threds: unknown option" and, where an option is near it, what it may have meant. */
static int bad_option(poptContext pc, const struct poptOption *table, int rc)
{
	enum { MAX_NAMES = 256 };
	const char *bad = poptBadOption(pc, POPT_BADOPTION_NOALIAS), *names[MAX_NAMES];
	char word[64], what[256];
	size_t n = long_names(table, names, 0, MAX_NAMES);
	const char *near = NULL;

	if (strncmp(bad, "--", 2) == 0) {
		snprintf(word, sizeof(word), "%s", bad + 2);
		word[strcspn(word, "=")] = '\0';
		near = nearest_name(word, names, n);
	}
	if (near)
		snprintf(what, sizeof(what), "%s: %s (did you mean --%s?)", bad, poptStrerror(rc), near);
	else
		snprintf(what, sizeof(what), "%s: %s", bad, poptStrerror(rc));
	return usage_error(pc, what);
}


/* Values popt parsed that must still be in range. */
static const char *check_ranges(const struct options *o, double timelimit, int timelimit_given,
				double warmup, int warmup_given, long per_process, long reconnect)
{
	const struct run_config *r = &o->run;

	if (timelimit_given && (!isfinite(timelimit) || timelimit <= 0))
		return "-t/--timelimit must be a number of seconds more than 0";
	if (warmup_given && (!isfinite(warmup) || warmup < 0))
		return "--warmup must be a number of seconds, 0 or more";
	if (!isfinite(r->target_rate) || r->target_rate < 0)
		return "-R/--target-rate must be 0 (unlimited) or more MB/sec";
	if (!isfinite(r->timeout) || r->timeout < 0)
		return "--timeout must be a number of seconds, 0 (none) or more";
	if (per_process < 1 || per_process > MAX_CLIENTS)
		return "--clients-per-process must be a whole number from 1 to 65536";
	if (reconnect < 0 || reconnect > 1000000000)
		return "--reconnect must be a whole number of operations, 1 or more";
	return NULL;
}

/* dbench's file-system options mean nothing to tbench: noted, as dbench's
 * own tbench ignores them. */
static void note_fs_only(const char *name)
{
	fprintf(stderr, "tbench: note: %s means nothing without a file system: ignored, "
		"as dbench's tbench does\n", name);
}

/* --timeout's default: 60 s, or 20 ms a task (a client and its server
 * each) a CPU where that is longer: with thousands of tasks a CPU the
 * scheduler was seen to leave one unrun for over a minute while the others
 * went on (results/bench-scale-10000-part3.md). */
static double default_timeout(unsigned nclients)
{
	unsigned cpus = online_cpus();
	double scaled = TIMEOUT_MS_PER_TASK * 2.0 * nclients / cpus / 1000;

	if (scaled <= DEFAULT_TIMEOUT)
		return DEFAULT_TIMEOUT;
	fprintf(stderr, "tbench: note: --timeout %.0f s by default for %u clients on %u CPUs\n",
		ceil(scaled), nclients, cpus);
	return ceil(scaled);
}

struct raw {
	double timelimit, warmup;
	int warmup_given, timeout_given, timelimit_given, threads, processes, run_once, show_exec, quiet, strict, copy_replies;
	int per_client, sync_open, sync_dirs, unused, cost, netns, perf, no_own_server, trace,
	    trace_syscalls;
	char *offload[4];            /* --offload, --tso, --gso, --gro */
	long per_process, trunc_io, reconnect;
	char *server_opt;
};

/* --offload and --tso/--gso/--gro: on or off, and only with --netns:
 * tbench never changes the host's devices; nor its sysctls (--sysctl). */
static int parse_offloads(struct raw *w, struct netns_options *n, struct errbuf *err)
{
	static const char *const names[] = { "--offload", "--tso", "--gso", "--gro" };
	enum offload_want want[4];

	for (int i = 0; i < 4; i++) {
		want[i] = OFFLOAD_KEEP;
		if (!w->offload[i])
			continue;
		if (!w->netns)
			return err_set(err, "%s needs --netns: tbench never changes the host's devices",
				       names[i]);
		if (strcmp(w->offload[i], "on") && strcmp(w->offload[i], "off"))
			return err_set(err, "%s takes on or off, not '%.20s'", names[i], w->offload[i]);
		want[i] = strcmp(w->offload[i], "on") == 0 ? OFFLOAD_ON : OFFLOAD_OFF;
	}
	if (n->nsysctl && !w->netns)
		return err_set(err, "--sysctl needs --netns: tbench never changes the host's sysctls");
	n->enter = w->netns;
	n->tso = want[1] != OFFLOAD_KEEP ? want[1] : want[0];
	n->gso = want[2] != OFFLOAD_KEEP ? want[2] : want[0];
	n->gro = want[3];
	return 0;
}

/* The backends' own options, one popt entry each, so that --help lists
 * them; their values are handed to the backends once popt is done. */
static int backend_options_table(struct backend_args *ba)
{
	size_t n = 0, k = 0;

	for (size_t i = 0; backends[i]; i++)
		for (const struct backend_option *bo = backends[i]->options; bo && bo->flag; bo++)
			n++;
	ba->n = n;
	ba->popt = calloc(n + 1, sizeof(*ba->popt));
	ba->value = calloc(n + 1, sizeof(*ba->value));
	ba->help = calloc(n + 1, sizeof(*ba->help));
	ba->owner = calloc(n + 1, sizeof(*ba->owner));
	ba->option = calloc(n + 1, sizeof(*ba->option));
	if (!ba->popt || !ba->value || !ba->help || !ba->owner || !ba->option)
		return -1;
	for (size_t i = 0; backends[i]; i++) {
		for (const struct backend_option *bo = backends[i]->options; bo && bo->flag; bo++, k++) {
			if (asprintf(&ba->help[k], "%s: %s", backends[i]->name, bo->help) < 0) {
				ba->help[k] = NULL;
				return -1;
			}
			ba->owner[k] = backends[i];
			ba->option[k] = bo;
			ba->popt[k] = (struct poptOption){ bo->flag, 0, POPT_ARG_STRING, &ba->value[k], 0,
							   ba->help[k], bo->arg };
		}
	}
	return 0;   /* calloc ended the table with POPT_TABLEEND's zeros */
}

/* Each backend option given, to its backend; a bad value names its flag. */
static int parse_backend_options(const struct backend_args *ba, struct errbuf *err)
{
	for (size_t k = 0; k < ba->n; k++)
		if (ba->value[k] && ba->option[k]->parse(ba->owner[k]->settings, ba->value[k], err) < 0)
			return -1;
	return 0;
}

/* Help lines that say which backends an option is for, from the backends'
 * flags, so that adding a backend changes no line here. */
struct help_texts {
	char backend[128], copy_replies[192], family[224], no_own_server[192];
};

static void help_texts(struct help_texts *h)
{
	char names[128];

	snprintf(h->backend, sizeof(h->backend), "transport to measure ('-b help' lists them, "
		 "'-b list' for scripts; default %s)", backends[0]->name);
	snprintf(h->copy_replies, sizeof(h->copy_replies), "%s: copy reply bodies to user space "
		 "(default: the kernel drops them, as dbench)",
		 backend_names_with(BACKEND_COPY_REPLIES, names, sizeof(names)));
	snprintf(h->family, sizeof(h->family), "%s: IPv4 or IPv6 (own servers on 127.0.0.1 or ::1; "
		 "SERVER's addresses of that family)",
		 backend_names_with(BACKEND_FAMILY, names, sizeof(names)));
	snprintf(h->no_own_server, sizeof(h->no_own_server), "%s: no SERVER and none listening on "
		 "localhost is an error, as dbench (default: tbench starts its own)",
		 backend_names_with(BACKEND_TAKES_SERVER | BACKEND_OWN_SERVER, names, sizeof(names)));
}

/* A --sysctl, its text kept by the options (freed with them). */
static int add_sysctl(poptContext pc, struct netns_options *n)
{
	char *text = poptGetOptArg(pc);
	struct errbuf err;

	if (!text)
		return usage_error(pc, "--sysctl: out of memory");
	if (netns_sysctl_add(n, text, &err) == 0)
		return 0;
	free(text);
	return usage_error(pc, err.msg);
}

/* NCLIENTS and SERVER, the ranges, and the run's settings from them. */
static int finish(poptContext pc, struct options *o, struct raw *w);

int options_parse(int argc, const char **argv, struct options *o)
{
	struct raw raw = { .per_process = 1 }, *w = &raw;
	struct help_texts h;

	o->run.timeout = DEFAULT_TIMEOUT;
	if (backend_options_table(&o->backend_args) < 0) {
		fprintf(stderr, "tbench: out of memory reading the command line\n");
		return -1;
	}
	help_texts(&h);
	struct poptOption ours[] = {
		{ "backend", 'b', POPT_ARG_STRING, &o->backend_name, 0, h.backend, "NAME" },
		{ "threads", 0, POPT_ARG_NONE, &w->threads, 0,
		  "run clients (and the servers a backend brings) as threads of one process", NULL },
		{ "processes", 0, POPT_ARG_NONE, &w->processes, 0,
		  "run each client in a process of its own, as dbench (the default)", NULL },
		{ "warmup", 0, POPT_ARG_DOUBLE, &w->warmup, OPT_WARMUP,
		  "warm up exactly this long (default: timelimit/5 whole seconds, and until "
		  "every client has counted bytes)", "SECS" },
		{ "run-once", 0, POPT_ARG_NONE, &w->run_once, 0,
		  "each client replays the loadfile once, then the run ends", NULL },
		{ "show-execute-time", 0, POPT_ARG_NONE, &w->show_exec, 0,
		  "print a line per pass of each client when the run ends (mmtests)", NULL },
		{ "timeout", 0, POPT_ARG_DOUBLE, &o->run.timeout, OPT_TIMEOUT,
		  "fail the run when an exchange takes longer (default 60, more with thousands of "
		  "clients a CPU; 0: never)", "SECS" },
		{ "strict", 0, POPT_ARG_NONE, &w->strict, 0,
		  "refuse loadfile lines dbench would skip or guess at", NULL },
		{ "reconnect", 0, POPT_ARG_LONG, &w->reconnect, 0,
		  "a new connection every N operations, timed as Connect (1: as netperf's TCP_CRR)", "N" },
		{ "copy-replies", 0, POPT_ARG_NONE, &w->copy_replies, 0, h.copy_replies, NULL },
		{ "netns", 0, POPT_ARG_NONE, &w->netns, 0,
		  "run in a network namespace of its own (and a user namespace when not root)", NULL },
		{ "offload", 0, POPT_ARG_STRING, &w->offload[0], 0,
		  "with --netns: TSO and GSO of its loopback on or off", "on|off" },
		{ "tso", 0, POPT_ARG_STRING, &w->offload[1], 0, "with --netns: TSO on or off", "on|off" },
		{ "gso", 0, POPT_ARG_STRING, &w->offload[2], 0, "with --netns: GSO on or off", "on|off" },
		{ "gro", 0, POPT_ARG_STRING, &w->offload[3], 0, "with --netns: GRO on or off", "on|off" },
		{ "sysctl", 0, POPT_ARG_STRING, NULL, OPT_SYSCTL,
		  "with --netns: set a net.* sysctl in its namespace and read it back (repeatable)",
		  "NAME=VALUE" },
		{ "mtu", 0, POPT_ARG_STRING, &o->knob_args.mtu, 0,
		  "with --netns: the MTU of its loopback, set and read back", "N" },
		{ "cpus", 0, POPT_ARG_STRING, &o->knob_args.cpus, 0,
		  "pin client i (process or thread) to the i-th CPU of LIST, round robin "
		  "(e.g. 0, 0,1, 0-3)", "LIST" },
		{ "server-cpus", 0, POPT_ARG_STRING, &o->knob_args.server_cpus, 0,
		  "pin the server tbench brings for client i to the i-th CPU of LIST", "LIST" },
		{ "family", 0, POPT_ARG_STRING, &o->knob_args.family, 0, h.family, "ipv4|ipv6" },
		{ "start-at", 0, POPT_ARG_STRING, &o->knob_args.start_at, 0,
		  "set up, then start the warm-up at this instant (seconds since the epoch, "
		  "fractions allowed); more than 1 s late fails the run", "EPOCH" },
		{ "inject-ns", 0, POPT_ARG_STRING, &o->knob_args.inject_ns, 0,
		  "calibration aid, not a workload: each client spins NS nanoseconds after every "
		  "exchange, a known cost an A/B study should find (default 0: none)", "NS" },
		{ "perf", 0, POPT_ARG_NONE, &w->perf, 0,
		  "with --cost or --json: perf_event_open counters too (task clock, switches, "
		  "migrations, cycles, instructions, syscalls); they slow a run down", NULL },
		{ "cost", 0, POPT_ARG_NONE, &w->cost, 0,
		  "after the Throughput line, what an operation cost: CPU, switches, perf and "
		  "network counters", NULL },
		{ "trace", 0, POPT_ARG_NONE, &w->trace, 0,
		  "after the Throughput line, where the run's tasks spent the execute phase, from "
		  "BPF: on-CPU time (split by system call from samples), run queue, blocked, "
		  "wake-ups, softirqs (root)", NULL },
		{ "trace-syscalls", 0, POPT_ARG_NONE, &w->trace_syscalls, 0,
		  "--trace, with every system call followed: counted, and timed exactly; a "
		  "larger cost", NULL },
		{ "quiet", 'q', POPT_ARG_NONE, &w->quiet, 0, "no progress lines", NULL },
		{ "json", 0, POPT_ARG_STRING, &o->json_path, 0,
		  "also write every figure of the run to FILE as JSON", "FILE" },
		{ "server", 0, POPT_ARG_STRING, &w->server_opt, 0, "the SERVER argument, as an option", "HOST" },
		{ "port", 0, POPT_ARG_STRING, &o->run.bcfg.port, 0,
		  "TCP port of the server (default " WIRE_PORT_STRING ")", "PORT" },
		{ "no-own-server", 0, POPT_ARG_NONE, &w->no_own_server, 0, h.no_own_server, NULL },
		{ "version", 'V', POPT_ARG_NONE, NULL, OPT_VERSION, "print the version", NULL },
		POPT_TABLEEND
	};
	struct poptOption dbench[] = {
		{ "timelimit", 't', POPT_ARG_DOUBLE, &w->timelimit, OPT_TIMELIMIT,
		  "seconds of the execute phase (default 600)", "SECS" },
		{ "loadfile", 'c', POPT_ARG_STRING, &o->loadfile, 0,
		  "NBENCH loadfile (default: dbench's client.txt, else tbench's own)", "FILE" },
		{ "directory", 'D', POPT_ARG_STRING, &o->directory, 0,
		  "directory prefixed to every path, as dbench sizes them (default .)", "DIR" },
		{ "tcp-options", 'T', POPT_ARG_STRING, &o->run.bcfg.tcp_options, 0,
		  "socket options, e.g. TCP_NODELAY,SO_SNDBUF=65536", "OPTS" },
		{ "target-rate", 'R', POPT_ARG_DOUBLE, &o->run.target_rate, 0,
		  "throttle each client to this many MB/sec (default: unlimited)", "MB" },
		{ "sync", 's', POPT_ARG_NONE, &w->sync_open, 0, "dbench's O_SYNC: only marks the Throughput line", NULL },
		{ "sync-dir", 'S', POPT_ARG_NONE, &w->sync_dirs, 0, "dbench's sync dirs: only marks the Throughput line", NULL },
		{ "fsync", 'F', POPT_ARG_NONE, &w->unused, OPT_FS_ONLY, "dbench's fsync on write: ignored", NULL },
		{ "xattr", 'x', POPT_ARG_NONE, &w->unused, OPT_FS_ONLY, "dbench's xattrs: ignored", NULL },
		{ "no-resolve", 0, POPT_ARG_NONE, &w->unused, OPT_FS_ONLY, "dbench's: ignored", NULL },
		{ "clients-per-process", 0, POPT_ARG_LONG, &w->per_process, 0,
		  "clients in each process (threads of it); NCLIENTS counts processes", "N" },
		{ "one-byte-write-fix", 0, POPT_ARG_NONE, &w->unused, OPT_FS_ONLY, "dbench's: ignored", NULL },
		{ "stat-check", 0, POPT_ARG_NONE, &w->unused, OPT_FS_ONLY, "dbench's: ignored", NULL },
		{ "fake-io", 0, POPT_ARG_NONE, &w->unused, OPT_FS_ONLY, "dbench's: ignored", NULL },
		{ "trunc-io", 0, POPT_ARG_LONG, &w->trunc_io, OPT_TRUNC_IO, "dbench's: ignored", "N" },
		{ "skip-cleanup", 0, POPT_ARG_NONE, &w->unused, OPT_FS_ONLY, "dbench's: ignored", NULL },
		{ "per-client-results", 0, POPT_ARG_NONE, &w->per_client, 0,
		  "an operation table for each client too", NULL },
		POPT_TABLEEND
	};
	struct poptOption table[] = {
		{ NULL, 0, POPT_ARG_INCLUDE_TABLE, ours, 0, "tbench's options:", NULL },
		{ NULL, 0, POPT_ARG_INCLUDE_TABLE, o->backend_args.popt, 0, "the backends' own options:",
		  NULL },
		{ NULL, 0, POPT_ARG_INCLUDE_TABLE, dbench, 0, "dbench 4.0's options:", NULL },
		POPT_AUTOHELP
		POPT_TABLEEND
	};
	poptContext pc = poptGetContext("tbench", argc, argv, table, 0);
	int rc;

	poptSetOtherOptionHelp(pc, "[OPTIONS] NCLIENTS [SERVER]");
	while ((rc = poptGetNextOpt(pc)) > 0) {
		if (rc == OPT_VERSION) {
			printf("%s\n", version_line("tbench"));
			poptFreeContext(pc);
			return 1;
		}
		if (rc == OPT_WARMUP)
			w->warmup_given = 1;
		if (rc == OPT_TIMEOUT)
			w->timeout_given = 1;
		if (rc == OPT_TIMELIMIT)
			w->timelimit_given = 1;
		if (rc == OPT_FS_ONLY)
			note_fs_only(poptBadOption(pc, POPT_BADOPTION_NOALIAS));
		if (rc == OPT_TRUNC_IO)   /* its value, not its name, is the last word popt read */
			note_fs_only("--trunc-io");
		if (rc == OPT_SYSCTL && add_sysctl(pc, &o->netns) < 0)
			return -1;
	}
	if (rc < -1)
		return bad_option(pc, table, rc);
	rc = finish(pc, o, w);
	free(w->server_opt);
	for (int i = 0; i < 4; i++)
		free(w->offload[i]);
	if (rc == 0)
		poptFreeContext(pc);
	return rc;
}

static int parse_clients(const char *s, unsigned *out)
{
	long v;

	if (parse_long_range(s, 1, MAX_CLIENTS, &v) < 0)
		return -1;
	*out = (unsigned)v;
	return 0;
}

/* --cpus, --server-cpus: lists of CPUs this process may use. */
static const char *parse_cpus(const char *flag, const char *text, struct cpu_list *l)
{
	static struct errbuf err;

	if (cpu_list_parse(flag, text, l, &err) < 0 || cpu_list_check_allowed(flag, l, &err) < 0)
		return err.msg;
	return NULL;
}

/* The sweep's knobs: placement, address family, MTU, a common start, an
 * injected cost. */
static const char *parse_knobs(struct options *o, bool netns)
{
	const struct knob_args *k = &o->knob_args;
	struct run_config *r = &o->run;
	const char *bad;
	long mtu, inject_ns;
	char *end;

	if (k->cpus && (bad = parse_cpus("--cpus", k->cpus, &o->cpus)))
		return bad;
	if (k->server_cpus && (bad = parse_cpus("--server-cpus", k->server_cpus, &o->server_cpus)))
		return bad;
	r->cpus = k->cpus ? &o->cpus : NULL;
	r->bcfg.server_cpus = k->server_cpus ? &o->server_cpus : NULL;
	if (k->family && strcmp(k->family, "ipv4") && strcmp(k->family, "ipv6"))
		return "--family takes ipv4 or ipv6";
	r->bcfg.family = !k->family ? AF_UNSPEC : strcmp(k->family, "ipv4") == 0 ? AF_INET : AF_INET6;
	if (k->mtu && !netns)
		return "--mtu needs --netns: tbench never changes the host's devices";
	if (k->mtu && parse_long_range(k->mtu, 68, 65536, &mtu) < 0)
		return "--mtu must be a whole number of bytes from 68 to 65536";
	o->netns.mtu = k->mtu ? (int)mtu : 0;
	if (k->inject_ns && parse_long_range(k->inject_ns, 0, MAX_INJECT_NS, &inject_ns) < 0)
		return "--inject-ns must be a whole number of nanoseconds from 0 (none) to 1000000000";
	r->inject_ns = k->inject_ns ? (uint64_t)inject_ns : 0;
	if (k->start_at) {
		errno = 0;
		r->start_at = strtod(k->start_at, &end);
		if (errno || end == k->start_at || *end || !isfinite(r->start_at) || r->start_at <= 0)
			return "--start-at takes seconds since the Unix epoch, e.g. $(($(date +%s) + 10))";
	}
	return NULL;
}

static int finish(poptContext pc, struct options *o, struct raw *w)
{
	struct run_config *r = &o->run;
	char what[160];

	if (o->backend_name && (strcmp(o->backend_name, "help") == 0 ||
				strcmp(o->backend_name, "list") == 0)) {
		o->list_backends = o->backend_name[0] == 'h';
		o->list_capabilities = !o->list_backends;
		poptFreeContext(pc);
		return 1;
	}
	const char *nclients = poptGetArg(pc);
	const char *server = poptGetArg(pc);
	if (!nclients)
		return usage_error(pc, "missing NCLIENTS: how many clients to run, e.g. 'tbench 8'");
	if (poptPeekArg(pc)) {
		snprintf(what, sizeof(what), "unexpected argument '%.40s' after NCLIENTS [SERVER]",
			 poptPeekArg(pc));
		return usage_error(pc, what);
	}
	if (parse_clients(nclients, &r->bcfg.nclients) < 0) {
		snprintf(what, sizeof(what), "NCLIENTS must be a whole number from 1 to %d, not '%.40s'",
			 MAX_CLIENTS, nclients);
		return usage_error(pc, what);
	}
	const char *bad = check_ranges(o, w->timelimit, w->timelimit_given, w->warmup, w->warmup_given,
				       w->per_process, w->reconnect);
	if (bad)
		return usage_error(pc, bad);
	if (w->threads && w->processes)
		return usage_error(pc, "--threads and --processes: choose one");
	if ((unsigned long)r->bcfg.nclients * (unsigned long)w->per_process > MAX_CLIENTS)
		return usage_error(pc, "NCLIENTS x --clients-per-process is over 65536 clients");
	struct errbuf err;
	if (parse_offloads(w, &o->netns, &err) < 0 || parse_backend_options(&o->backend_args, &err) < 0)
		return usage_error(pc, err.msg);
	if (server && w->server_opt)
		return usage_error(pc, "SERVER given twice: as an argument and as --server");

	/* As dbench: 600 s by default, a warm-up of at least a fifth of it in
	 * whole seconds. --run-once ends with the pass, unless -t is given too. */
	r->run_once = w->run_once;
	if (!w->timelimit_given)
		w->timelimit = w->run_once ? 0 : DEFAULT_TIMELIMIT;
	r->timelimit = w->timelimit;
	r->warmup_exact = w->warmup_given || w->run_once;
	r->warmup = w->warmup_given ? w->warmup : w->run_once ? 0 : floor(w->timelimit / 5);
	r->bcfg.clients_per_process = (unsigned)w->per_process;
	r->reconnect = (unsigned)w->reconnect;
	r->bcfg.nclients *= (unsigned)w->per_process;
	if (!w->timeout_given)
		r->timeout = default_timeout(r->bcfg.nclients);
	r->bcfg.processes = !w->threads;
	r->bcfg.copy_replies = w->copy_replies;
	r->bcfg.no_own_server = w->no_own_server;
	r->show_execute_time = w->show_exec;
	o->report.quiet = w->quiet;
	o->cost = w->cost;
	o->trace = w->trace || w->trace_syscalls;
	o->trace_syscalls = w->trace_syscalls;
	r->cost = w->cost || o->json_path || w->perf;
	r->perf = w->perf;
	o->strict = w->strict;
	o->report.sync_open = w->sync_open;
	o->report.sync_dirs = w->sync_dirs;
	o->report.per_client = w->per_client;
	if (!server)
		server = w->server_opt;
	if (server && !(r->bcfg.server = strdup(server)))
		return usage_error(pc, "out of memory");
	if ((bad = parse_knobs(o, w->netns)))
		return usage_error(pc, bad);
	return 0;
}

/* popt allocated the option strings; SERVER was copied out of its context. */
void options_free(struct options *o)
{
	free((char *)o->backend_name);
	free((char *)o->loadfile);
	free((char *)o->directory);
	free((char *)o->json_path);
	free((char *)o->run.bcfg.server);
	free((char *)o->run.bcfg.port);
	free((char *)o->run.bcfg.tcp_options);
	for (size_t k = 0; k < o->backend_args.n; k++) {
		free(o->backend_args.value[k]);
		free(o->backend_args.help[k]);
	}
	free(o->backend_args.popt);
	free(o->backend_args.value);
	free(o->backend_args.help);
	free(o->backend_args.owner);
	free(o->backend_args.option);
	free(o->knob_args.cpus);
	free(o->knob_args.server_cpus);
	free(o->knob_args.family);
	free(o->knob_args.mtu);
	free(o->knob_args.start_at);
	free(o->knob_args.inject_ns);
	for (unsigned i = 0; i < o->netns.nsysctl; i++)
		free(o->netns.sysctl[i].name);
	memset(o, 0, sizeof(*o));
}
