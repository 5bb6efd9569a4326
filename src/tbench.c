/* tbench: replay an NBENCH loadfile through a backend and report MB/sec. */
#include "config.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "driver.h"
#include "options.h"
#include "report.h"
#include "registry.h"

static void on_stop_signal(int sig)
{
	(void)sig;
	driver_request_stop();
}

static void install_signals(void)
{
	struct sigaction sa = { .sa_handler = on_stop_signal, .sa_flags = SA_RESTART };

	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);   /* a closed peer is an error to report, not a death */
}

/* Everything the options name must exist before any client starts. */
static int prepare(struct options *o, struct loadfile *lf)
{
	char err[1024];
	const char *name = o->backend_name ? o->backend_name : backends[0]->name;

	o->run.backend = backend_find(name);
	if (!o->run.backend) {
		fprintf(stderr, "tbench: -b %s: no such backend\n", name);
		options_list_backends(stderr);
		return -1;
	}
	if (o->run.bcfg.server && !(o->run.backend->flags & BACKEND_TAKES_SERVER)) {
		fprintf(stderr, "tbench: backend %s brings its own server: drop SERVER '%s'\n",
			name, o->run.bcfg.server);
		return -1;
	}
	struct errbuf why;
	if (o->run.backend->check && o->run.backend->check(&o->run.bcfg, &why) < 0) {
		fprintf(stderr, "tbench: %s\n", why.msg);
		return -1;
	}
	const char *path = o->loadfile ? o->loadfile : options_default_loadfile();
	if (loadfile_read(path, lf, err, sizeof(err)) < 0) {
		fprintf(stderr, "tbench: %s\n", err);
		return -1;
	}
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

int main(int argc, char **argv)
{
	struct options o = { 0 };
	struct loadfile lf;
	struct run_result res;
	struct errbuf err;

	int rc = options_parse(argc, (const char **)argv, &o);
	if (rc != 0) {
		if (o.list_backends)
			options_list_backends(stdout);
		options_free(&o);
		return rc > 0 ? EXIT_OK : EXIT_USAGE;
	}
	if (prepare(&o, &lf) < 0) {
		options_free(&o);
		return EXIT_USAGE;
	}
	install_signals();

	enum run_status status = driver_run(&o.run, &res);
	/* A failed run prints no Throughput line that a parser could take for a result. */
	if (status != RUN_FAILED)
		report_summary(stdout, &o.run, &res);
	if (o.json_path && report_json(o.json_path, &o.run, &res, argc,
				       (const char *const *)argv, &err) < 0) {
		fprintf(stderr, "tbench: %s\n", err.msg);
		status = RUN_FAILED;
	}
	if (status == RUN_FAILED)
		fprintf(stderr, "tbench: run failed: %s\n", res.error);
	else if (status == RUN_INTERRUPTED)
		fprintf(stderr, "tbench: interrupted after %.1f s of execute phase: "
			"the figures above cover that much\n", res.execute_secs);
	run_result_free(&res);
	loadfile_free(&lf);
	options_free(&o);
	return status == RUN_OK ? EXIT_OK : EXIT_RUN_FAILED;
}
