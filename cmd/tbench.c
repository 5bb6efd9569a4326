/* tbench: replay an NBENCH loadfile through a backend and report MB/sec,
 * as dbench's tbench does; the backends and the extras are options. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "clock.h"
#include "driver.h"
#include "netns.h"
#include "options.h"
#include "registry.h"
#include "report.h"
#include "report_json.h"

static void on_stop_signal(int sig)
{
	driver_request_stop();
	signal(sig, SIG_DFL);   /* a second Ctrl-C ends tbench at once */
}

static void install_signals(void)
{
	struct sigaction sa = { .sa_handler = on_stop_signal, .sa_flags = SA_RESTART };

	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);   /* a closed peer is an error to report, not a death */
}

/* Descriptors 0-2 are held open from the start, so that no socket of a run
 * can become "standard output" when tbench was started with one closed.
 * Returns whether standard output was closed: the results would be lost. */
static bool hold_std_fds(void)
{
	bool stdout_closed = false;

	for (int fd = 0; fd <= 2; fd++) {
		if (fcntl(fd, F_GETFD) >= 0)
			continue;
		stdout_closed |= fd == STDOUT_FILENO;
		if (open("/dev/null", O_RDWR) < 0)
			_exit(EXIT_RUN_FAILED);
	}
	return stdout_closed;
}

static void print_note(void *ctx, const char *msg)
{
	(void)ctx;
	fprintf(stderr, "tbench: %s\n", msg);
}

static int read_loadfile(struct options *o, struct loadfile *lf)
{
	struct loadfile_options lo = {
		.directory = o->directory ? o->directory : ".", .strict = o->strict,
		.note = print_note,
	};
	bool dbench = false;
	const char *path = o->loadfile ? o->loadfile : options_default_loadfile(&dbench);
	struct errbuf err;

	if (loadfile_read(path, &lo, lf, &err) < 0) {
		fprintf(stderr, "tbench: %s\n", err.msg);
		return -1;
	}
	if (!o->loadfile && !dbench)
		fprintf(stderr, "tbench: note: no -c, and no dbench client.txt on this system: %s is "
			"tbench's own loadfile, whose figures are not dbench's\n", path);
	if (lf->n_lenient)
		fprintf(stderr, "tbench: %s: %u lines skipped or taken leniently, as dbench does "
			"(--strict refuses them)\n", path, lf->n_lenient);
	uint32_t longest = lf->max_send + lf->max_name_refs * client_name_extra(o->run.bcfg.nclients - 1);
	if (longest >= WIRE_LIMIT) {
		fprintf(stderr, "tbench: %s: with %u clients the longest request is %u bytes, "
			"over the wire limit of %d: use fewer clients\n",
			path, o->run.bcfg.nclients, longest, WIRE_LIMIT - 1);
		return -1;
	}
	o->run.lf = lf;
	return 0;
}

/* An option the backend cannot follow: bad usage, naming those that can. */
static int refuse_backend(const char *name, const char *flag, const char *why, unsigned flag_bit)
{
	fprintf(stderr, "tbench: %s: backend %s %s; use one that can: ", flag, name, why);
	for (size_t i = 0; backends[i]; i++)
		if (backends[i]->flags & flag_bit)
			fprintf(stderr, "%s ", backends[i]->name);
	fprintf(stderr, "\n");
	return -1;
}

/* Another backend's option that would be misleading to ignore (--unix
 * with tcp would still measure tcp): bad usage, naming its backend. */
static int refuse_others_options(const struct options *o)
{
	const struct backend_args *ba = &o->backend_args;

	for (size_t k = 0; k < ba->n; k++)
		if (ba->value[k] && ba->owner[k] != o->run.backend && ba->option[k]->others_refuse) {
			fprintf(stderr, "tbench: --%s is for the %s backend: add -b %s, or drop it\n",
				ba->option[k]->flag, ba->owner[k]->name, ba->owner[k]->name);
			return -1;
		}
	return 0;
}

enum { MAX_BACKENDS_LISTED = 64 };

/* Everything the options name must exist before any client starts. */
static int prepare(struct options *o, struct loadfile *lf)
{
	const char *name = o->backend_name ? o->backend_name : backends[0]->name;

	o->run.backend = backend_find(name);
	o->run.all_backends = backends;
	if (!o->run.backend) {
		const char *names[MAX_BACKENDS_LISTED];
		size_t n = 0;

		for (; backends[n] && n < MAX_BACKENDS_LISTED; n++)
			names[n] = backends[n]->name;
		const char *near = nearest_name(name, names, n);
		fprintf(stderr, "tbench: -b %s: no such backend%s%s%s\n", name,
			near ? " (did you mean " : "", near ? near : "", near ? "?)" : "");
		options_list_backends(stderr);
		return -1;
	}
	if (o->run.bcfg.server && !(o->run.backend->flags & BACKEND_TAKES_SERVER)) {
		fprintf(stderr, "tbench: backend %s brings its own server: drop SERVER '%s'\n",
			name, o->run.bcfg.server);
		return -1;
	}
	if (o->run.bcfg.no_own_server && !(o->run.backend->flags & BACKEND_TAKES_SERVER)) {
		fprintf(stderr, "tbench: --no-own-server: backend %s always brings its own server: "
			"drop --no-own-server, or use -b tcp (dbench's tbench)\n", name);
		return -1;
	}
	if (o->run.bcfg.family && !(o->run.backend->flags & BACKEND_FAMILY))
		return refuse_backend(name, "--family", "does not choose its address family",
				      BACKEND_FAMILY);
	if (o->run.reconnect && !(o->run.backend->flags & BACKEND_RECONNECTS))
		return refuse_backend(name, "--reconnect", "cannot open a new connection on its own",
				      BACKEND_RECONNECTS);
	if (refuse_others_options(o) < 0)
		return -1;
	struct errbuf why;
	if (o->run.backend->check && o->run.backend->check(&o->run.bcfg, &why) < 0) {
		fprintf(stderr, "tbench: %s\n", why.msg);
		return -1;
	}
	return read_loadfile(o, lf);
}

/* --json is created before anything starts: a bad path is bad usage. */
static int open_json(const struct options *o, struct json_out *json)
{
	struct errbuf err;

	if (!o->json_path || report_json_open(json, o->json_path, &err) == 0)
		return 0;
	fprintf(stderr, "tbench: %s\n", err.msg);
	return -1;
}

/* --trace: the BPF programs loaded before anything starts; missing
 * privilege or a build without libbpf is bad usage. */
static int open_trace(struct options *o, struct trace *trace)
{
	struct errbuf err;

	memset(trace, 0, sizeof(*trace));
	if (!o->trace)
		return 0;
	if (trace_open(trace, o->trace_syscalls, &err) < 0) {
		fprintf(stderr, "tbench: %s\n", err.msg);
		return -1;
	}
	o->run.trace = trace;
	return 0;
}

/* Results that could not be shown make the run a failure, said in the
 * JSON too. */
static void check_stdout(struct run_result *res, bool closed, bool json)
{
	int write_errno = report_write_error(stdout);

	if ((!write_errno && !closed) || res->status != RUN_OK)   /* a failure says its own */
		return;
	res->status = RUN_FAILED;
	if (write_errno)
		err_set(&res->error, "writing the results to standard output: %s",
			 strerror(write_errno));
	else
		err_set(&res->error, "standard output was closed: the results "
			 "were not shown%s", json ? " (they are in the --json file)" : "");
}

/* --json written, as a whole; one that cannot be fails the run with its
 * own message (or beside the message of a run that failed already). */
static void write_json(struct json_out *json, const struct options *o, struct run_result *res,
		       int argc, char **argv)
{
	struct errbuf err;

	if (!o->json_path || report_json_write(json, &o->run, &o->report, res, argc,
					       (const char *const *)argv, &err) == 0)
		return;
	if (res->status != RUN_OK) {
		fprintf(stderr, "tbench: %s\n", err.msg);
		return;
	}
	res->status = RUN_FAILED;
	res->error = err;
}

/* Why the run failed, or that it measured nothing; report_notes then
 * gives the partial figures of an execute phase cut short. */
static void report_end(const struct run_result *res)
{
	if (res->status == RUN_FAILED)
		fprintf(stderr, "tbench: run failed: %s\n", res->error.msg[0] ? res->error.msg : "no reason given");
	else if (res->status == RUN_INTERRUPTED && !res->executed)
		fprintf(stderr, "tbench: interrupted during the %s: nothing was measured\n",
			res->released ? "warm-up" : "set-up of the clients");
}

/* The end of a run: its notes, the JSON, then the table of a whole run,
 * each output checked. */
static void report_run(const struct options *o, struct json_out *json, struct run_result *res,
		       bool stdout_closed, char **argv, int argc)
{
	/* The notes on stderr come before the table: mmtests keeps stdout and
	 * stderr in one log and takes every line after " Operation" for an
	 * operation, so a note after the table breaks its extraction. */
	fflush(stdout);
	enum run_status measured = res->status;
	/* Results that cannot be shown or kept fail the run before its table:
	 * a harness takes a Throughput line for a result. */
	check_stdout(res, stdout_closed, o->json_path != NULL);
	bool json_regular = o->json_path && json->tmp;   /* a file that can be written again */
	write_json(json, o, res, argc, argv);
	report_end(res);
	if (res->status == measured) {   /* else the one message above is the news */
		report_notes(stderr, &o->run, &o->report, res);
		report_disturbed(stderr, &o->run, res);
	}
	/* Only a whole run prints its table, as dbench: harnesses take every
	 * table they find for a result. A run cut short gives its partial
	 * figures on stderr (report_notes) and its table in --json. */
	bool whole = res->executed && res->status == RUN_OK;
	if (whole)
		report_summary(stdout, &o->run, &o->report, res);
	if (whole && o->cost) {
		report_cost(stdout, &o->run, &o->report, res);
		report_noise(stdout, &o->run, res);
	}
	if (whole && o->trace)
		report_trace(stdout, &o->run, res);
	check_stdout(res, false, o->json_path != NULL);
	if (whole && res->status != RUN_OK) {   /* the table itself could not be written */
		report_end(res);
		if (json_regular && open_json(o, json) == 0)   /* its status said ok */
			write_json(json, o, res, argc, argv);
	}
}

/* A client and its own server hold up to FDS_PER_CLIENT descriptors, all in
 * one process with --threads: the limit raised to that where allowed. When
 * it is not enough, a client's "Too many open files" says how to raise it,
 * and a listening server of tbench's own runs apart (server_apart()). */
enum { FDS_PER_CLIENT = 4 };

static void raise_fds(const struct run_config *cfg)
{
	unsigned long per = cfg->bcfg.processes ? run_per_process(cfg) : cfg->bcfg.nclients;
	unsigned long limit;
	struct errbuf err;

	if (raise_fd_limit(FDS_RUN_SPARE + FDS_PER_CLIENT * per, &limit, &err) < 0)
		fprintf(stderr, "tbench: note: %s\n", err.msg);
}

int main(int argc, char **argv)
{
	struct options o = { 0 };
	struct loadfile lf = { 0 };
	struct run_result res;
	struct json_out json = { 0 };
	struct trace trace = { 0 };
	struct netns_state netns;
	struct errbuf err;

	bool stdout_closed = hold_std_fds();
	install_signals();   /* first: a Ctrl-C while the loadfile is read is not lost */
	int rc = options_parse(argc, (const char **)argv, &o);
	if (rc != 0) {
		if (o.list_backends)
			options_list_backends(stdout);
		if (o.list_capabilities)
			backend_print_list(stdout);
		options_free(&o);
		return rc > 0 ? EXIT_OK : EXIT_USAGE;
	}
	/* $TBENCH_CLOCK is bad usage too; the clock is chosen once, here. */
	if (clock_init(&err) < 0) {
		fprintf(stderr, "tbench: %s\n", err.msg);
		options_free(&o);
		return EXIT_USAGE;
	}
	/* The namespace first, while tbench is one thread: everything after runs in it. */
	if (netns_enter(&o.netns, &netns, &err) < 0) {
		fprintf(stderr, "tbench: --netns: %s\n", err.msg);
		options_free(&o);
		return EXIT_RUN_FAILED;
	}
	if (!netns.entered)
		netns_read_offloads("lo", &netns, &err);   /* for the record; unknown stays -1 */
	o.report.netns = &netns;
	if (prepare(&o, &lf) < 0 || open_trace(&o, &trace) < 0 || open_json(&o, &json) < 0) {
		trace_close(&trace);
		loadfile_free(&lf);
		options_free(&o);
		return EXIT_USAGE;
	}
	raise_fds(&o.run);
	report_header(stdout, &o.run, &o.report);

	struct report_live live = { .out = stdout, .err = stderr, .quiet = o.report.quiet,
				    .timelimit = o.run.run_once ? 0 : o.run.timelimit,   /* a cap then */
				    .err_is_tty = isatty(STDERR_FILENO) };
	struct run_observer observer = report_live_observer(&live);
	driver_run(&o.run, &observer, &res);
	report_run(&o, &json, &res, stdout_closed, argv, argc);
	enum run_status status = res.status;
	run_result_free(&res);
	trace_close(&trace);
	loadfile_free(&lf);
	options_free(&o);
	return status == RUN_OK ? EXIT_OK : EXIT_RUN_FAILED;
}
