/* Everything the user reads: tbench's progress lines, operation table and
 * Throughput line (parsed by mmtests and LKP), and the --json document. */
#ifndef TBENCH_REPORT_H
#define TBENCH_REPORT_H

#include <stdio.h>

#include "driver.h"

void report_progress(FILE *f, const char *phase, unsigned nclients, unsigned long long ops_per_client,
		     double mb_per_sec, double secs, double latency_ms);
void report_cleanup(FILE *f, unsigned nclients, double secs);
void report_summary(FILE *f, const struct run_config *cfg, const struct run_result *res);
int report_json(const char *path, const struct run_config *cfg, const struct run_result *res,
		int argc, const char *const *argv, struct errbuf *err);

double result_mb_per_sec(const struct run_result *res);

#endif
