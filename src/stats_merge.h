/* tbench-stats merge: the --json documents of one run made on several
 * client hosts at once, merged into one document of the same shape, as
 * if one tbench had run all their clients: MB/sec, operations, bytes and
 * CPU summed; latency percentiles, mean and maximum recomputed from the
 * sum of the hosts' histograms (result.latency.histogram), as tbench
 * computes them; cost figures per operation weighted by each host's
 * operations. Each host's own figures are kept under "hosts". Runs that
 * cannot be one run (another backend, loadfile, time, client model, start
 * instant) are refused. */
#ifndef TBENCH_STATS_MERGE_H
#define TBENCH_STATS_MERGE_H

#include <stddef.h>
#include <stdio.h>

#include "util.h"

/* Writes the merged document of the n files at paths (n >= 1) to out;
 * names[i] names host i in messages and "hosts" (NULL: the file's name
 * without ".json"). 0, or -1 with err set (the input is at fault). */
int stats_merge(FILE *out, size_t n, const char *const *paths, const char *const *names,
		struct errbuf *err);

#endif
