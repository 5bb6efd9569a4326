/* An NBENCH loadfile, parsed once into a read-only array of operations
 * with their wire sizes already computed by the SMB size model. */
#ifndef TBENCH_LOADFILE_H
#define TBENCH_LOADFILE_H

#include <stddef.h>
#include <stdint.h>

#include "smb.h"
#include "util.h"

/* 28 bytes; the array is shared by every client and never written after parsing. */
struct op {
	uint32_t send;       /* request bytes for client "client1" */
	uint32_t recv;       /* reply bytes */
	uint32_t payload;    /* counted bytes (ReadX/WriteX) */
	uint32_t line;       /* loadfile line, for error messages and progress */
	uint32_t sleep_us;   /* Sleep only: microseconds, as dbench */
	uint32_t due_ms;     /* timestamp column: ms into the pass it is due; 0 none */
	uint8_t  type;       /* enum smb_op */
	uint8_t  exchanges;  /* 1, or 0 when no bytes travel (Deltree, Sleep) */
	uint16_t name_refs;  /* extra request bytes per extra digit of "client<i>" */
};

struct loadfile {
	char     *path;
	struct op *ops;            /* a shared mapping, read-only once parsed */
	size_t    n_ops;
	size_t    ops_map_size;    /* its length, for munmap */
	uint32_t  n_lines;         /* lines of the file: dbench counts progress in lines */
	uint32_t  n_lenient;       /* lines skipped or taken leniently, as dbench does */
	uint64_t  pass_payload;    /* counted bytes of one whole pass */
	uint32_t  max_send, max_recv;
	uint16_t  max_name_refs;
	int       has_timestamps;  /* some line starts with a time */
};

/* How to read a loadfile; NULL means dbench's defaults: directory ".",
 * lenient, silent. */
struct loadfile_options {
	const char *directory;     /* dbench's -D, the prefix of every path */
	int strict;                /* refuse every line dbench would skip or guess at */
	/* Called once per kind of leniency with "FILE:LINE: what, what was done". */
	void (*note)(void *ctx, const char *msg);
	void *note_ctx;
};

/* Errors are written to err as "FILE:LINE: what is wrong". */
int loadfile_read(const char *path, const struct loadfile_options *opt,
		  struct loadfile *lf, struct errbuf *err);
int loadfile_parse(const char *name, const char *text, size_t len,
		   const struct loadfile_options *opt, struct loadfile *lf, struct errbuf *err);
void loadfile_free(struct loadfile *lf);

/* Client i (0-based) says "client<i>" where the loadfile says "client1":
 * its paths are digits(i) - 1 characters longer per occurrence. */
static inline uint32_t client_name_extra(unsigned client)
{
	uint32_t digits = 1;
	while (client >= 10) {
		client /= 10;
		digits++;
	}
	return digits - 1;
}

static inline uint32_t op_send_bytes(const struct op *op, uint32_t name_extra)
{
	return op->send + op->name_refs * name_extra;
}

/* Counted bytes of the first n ops (n <= n_ops): for checking partial passes. */
uint64_t loadfile_payload_prefix(const struct loadfile *lf, size_t n);

#endif
