/* Fuzz target: the loadfile parser (src/loadfile.c) on any bytes.
 *
 * Each input is parsed three times: with dbench's defaults (no options),
 * leniently with a -D directory, and strictly with the same directory.
 * The directory is the input's first line (up to a NUL), so the fuzzer
 * tries long ones, ones holding "client1" and odd bytes as it mutates the
 * text. Besides what the sanitizers catch, a parse must leave a loadfile
 * whose figures agree with its ops, an error must name the file, and what
 * --strict accepts the lenient parse must read the same way. */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "loadfile.h"

static const char NAME[] = "fuzz.txt";

/* Every note is one line about this file. */
static void check_note(void *ctx, const char *msg)
{
	unsigned *notes = ctx;

	FUZZ_CHECK(strncmp(msg, NAME, strlen(NAME)) == 0);
	FUZZ_CHECK(strchr(msg, '\n') == NULL);
	++*notes;
}

/* The summary of a parsed loadfile is what its ops add up to. */
static void check_loadfile(const struct loadfile *lf)
{
	uint64_t payload = 0;
	uint32_t max_send = 0, max_recv = 0;
	uint16_t max_refs = 0;
	int timestamps = 0;

	FUZZ_CHECK(lf->n_ops >= 1 && lf->n_ops <= lf->n_lines);
	FUZZ_CHECK(lf->n_lenient <= lf->n_lines);
	FUZZ_CHECK(strcmp(lf->path, NAME) == 0);
	for (size_t i = 0; i < lf->n_ops; i++) {
		const struct op *op = &lf->ops[i];
		FUZZ_CHECK(op->type < OP_COUNT && op->exchanges <= 1);
		FUZZ_CHECK(op->line >= 1 && op->line <= lf->n_lines);
		FUZZ_CHECK(i == 0 || op->line > lf->ops[i - 1].line);
		FUZZ_CHECK(op->send < WIRE_LIMIT && op->recv < WIRE_LIMIT);
		FUZZ_CHECK(op->payload <= op->send || op->payload <= op->recv);
		payload += op->payload;
		max_send = op->send > max_send ? op->send : max_send;
		max_recv = op->recv > max_recv ? op->recv : max_recv;
		max_refs = op->name_refs > max_refs ? op->name_refs : max_refs;
		timestamps |= op->due_ms != 0;
	}
	FUZZ_CHECK(payload == lf->pass_payload);
	FUZZ_CHECK(max_send == lf->max_send && max_recv == lf->max_recv);
	FUZZ_CHECK(max_refs == lf->max_name_refs);
	FUZZ_CHECK(timestamps == lf->has_timestamps);
	FUZZ_CHECK(loadfile_payload_prefix(lf, lf->n_ops) == lf->pass_payload);
}

/* One parse: 0 with *lf filled in and checked, or -1 with a checked error. */
static int parse(const char *text, size_t len, const struct loadfile_options *opt,
		 struct loadfile *lf)
{
	struct errbuf err;

	memset(&err, 0xa5, sizeof(err));   /* an error message must be written, not left over */
	if (loadfile_parse(NAME, text, len, opt, lf, &err) == 0) {
		check_loadfile(lf);
		return 0;
	}
	FUZZ_CHECK(memchr(err.msg, 0, sizeof(err.msg)) != NULL);
	FUZZ_CHECK(strncmp(err.msg, NAME, strlen(NAME)) == 0);
	FUZZ_CHECK(lf->ops == NULL && lf->path == NULL && lf->n_ops == 0);
	return -1;
}

/* The -D directory: the first line, up to a NUL; NULL when out of memory. */
static char *first_line(const char *text, size_t len)
{
	const char *nl = memchr(text, '\n', len);
	size_t n = nl ? (size_t)(nl - text) : len;
	const char *nul = memchr(text, 0, n);
	char *dir = malloc((nul ? (size_t)(nul - text) : n) + 1);

	if (dir) {
		n = nul ? (size_t)(nul - text) : n;
		memcpy(dir, text, n);
		dir[n] = 0;
	}
	return dir;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* A copy of exactly `size` bytes, so the sanitizer sees any read past the end. */
	char *text = malloc(size ? size : 1);
	char *dir = NULL;
	struct loadfile plain, lenient, strict;
	unsigned lenient_notes = 0, strict_notes = 0;

	if (!text || !(dir = first_line((const char *)data, size))) {
		free(text);
		return 0;
	}
	if (size)
		memcpy(text, data, size);
	const struct loadfile_options lenient_opt = {
		.directory = dir, .note = check_note, .note_ctx = &lenient_notes,
	};
	const struct loadfile_options strict_opt = {
		.directory = dir, .strict = 1, .note = check_note, .note_ctx = &strict_notes,
	};

	if (parse(text, size, NULL, &plain) == 0)
		loadfile_free(&plain);
	int lenient_rc = parse(text, size, &lenient_opt, &lenient);
	if (lenient_rc == 0)
		FUZZ_CHECK(lenient.n_lenient == 0 || lenient_notes > 0);
	if (parse(text, size, &strict_opt, &strict) == 0) {
		/* What --strict accepts, the lenient reading takes the same way. */
		FUZZ_CHECK(strict.n_lenient == 0 && strict_notes == 0);
		FUZZ_CHECK(lenient_rc == 0 && lenient.n_lenient == 0);
		FUZZ_CHECK(lenient.n_ops == strict.n_ops && lenient.n_lines == strict.n_lines);
		FUZZ_CHECK(memcmp(lenient.ops, strict.ops, strict.n_ops * sizeof(*strict.ops)) == 0);
		loadfile_free(&strict);
	}
	if (lenient_rc == 0)
		loadfile_free(&lenient);
	free(dir);
	free(text);
	return 0;
}
