/* What the fuzz targets share with the replay main and with libFuzzer:
 * the entry point, and a check that stops the run the way a sanitizer
 * does, so a broken invariant is a crash input like any other. */
#ifndef TBENCH_FUZZ_H
#define TBENCH_FUZZ_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

/* libFuzzer's entry point: one input, always 0. */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define FUZZ_CHECK(cond) do { \
	if (!(cond)) { \
		fprintf(stderr, "%s:%d: fuzz invariant broken: %s\n", __FILE__, __LINE__, #cond); \
		abort(); \
	} \
} while (0)

#endif
