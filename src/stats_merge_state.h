/* A merge of several hosts' --json documents in progress, shared by the
 * two halves of tbench-stats merge: stats_merge.c reads the documents,
 * checks that they are one run and sums what must be exact;
 * stats_merge_write.c writes the merged document. Private to the two. */
#ifndef TBENCH_STATS_MERGE_STATE_H
#define TBENCH_STATS_MERGE_STATE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "histogram.h"
#include "json.h"

struct host {
	const char *path;
	char *name;
	struct json_node doc;
};

struct merge {
	struct host *h;
	size_t n;
	struct histogram hist;          /* every host's execute phase */
	int status;                     /* 0 ok, 1 failed, 2 interrupted */
	char *error;                    /* "HOST: why; HOST: why"; NULL when all were ok */
	uint64_t clients, procs, payload, payload_all, ops;
};

/* The text of a scalar at path ("" when absent), a number at path (NaN
 * when absent, null or not a number), a whole non-negative number read
 * from its text so that no digit is lost (0, or -1 when it is not one). */
const char *merge_text_at(const struct json_node *doc, const char *path);
double merge_num_at(const struct json_node *doc, const char *path);
int merge_u64_of(const struct json_node *n, uint64_t *out);

/* The merged document of m, whose hosts gather() found to be one run:
 * 0, or -1 with err set (out of memory). */
int merge_put_document(FILE *f, const struct merge *m, struct errbuf *err);

#endif
