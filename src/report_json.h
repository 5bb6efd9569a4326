/* The --json document of a run (report_json.c): its settings, figures and
 * histograms, for the sweep scripts and tbench-stats. */
#ifndef TBENCH_REPORT_JSON_H
#define TBENCH_REPORT_JSON_H

#include <stdio.h>

#include "report.h"
#include "run.h"

/* The file is created before the run (so that a bad path is found before
 * anything starts) and written whole at the end. */
struct json_out {
	char *path, *tmp;
	FILE *f;
};
int report_json_open(struct json_out *j, const char *path, struct errbuf *err);
int report_json_write(struct json_out *j, const struct run_config *cfg,
		      const struct report_options *ro, const struct run_result *res,
		      int argc, const char *const *argv, struct errbuf *err);
void report_json_discard(struct json_out *j);

#endif
