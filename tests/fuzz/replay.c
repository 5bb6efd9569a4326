/* The test suite's way into a fuzz target: a main() that feeds it files,
 * so the same target code runs under gcc and the ASan+UBSan build with no
 * libFuzzer. With no arguments it replays this target's seed corpus and
 * every crash input kept as a regression:
 *   tests/fuzz/corpus-TARGET/  and  tests/fuzz/regressions-TARGET/
 * (the latter may not exist yet). Arguments: files or directories instead.
 * A broken invariant or a sanitizer error aborts, so the test fails. */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "fuzz.h"
#include "util.h"

/* Exactly the file's bytes, in a buffer of that size, as libFuzzer gives them. */
static int replay_file(const char *path)
{
	FILE *f = fopen(path, "rb");
	long size;
	uint8_t *data = NULL;

	if (!f) {
		fprintf(stderr, "replay: cannot open %s: %s\n", path, strerror(errno));
		return -1;
	}
	if (fseek(f, 0, SEEK_END) < 0 || (size = ftell(f)) < 0 || fseek(f, 0, SEEK_SET) < 0 ||
	    !(data = malloc(size ? (size_t)size : 1)) ||
	    fread(data, 1, (size_t)size, f) != (size_t)size) {
		fprintf(stderr, "replay: cannot read %s: %s\n", path, strerror(errno));
		free(data);
		fclose(f);
		return -1;
	}
	fclose(f);
	LLVMFuzzerTestOneInput(data, (size_t)size);
	free(data);
	return 0;
}

static int not_hidden(const struct dirent *e)
{
	return e->d_name[0] != '.';
}

/* Every file of a directory, in name order; -1 on an error. `missing_ok`:
 * a directory that does not exist has no inputs. */
static int replay_path(const char *path, int missing_ok, unsigned *count)
{
	struct stat st;
	struct dirent **names;

	if (stat(path, &st) < 0) {
		if (errno == ENOENT && missing_ok)
			return 0;
		fprintf(stderr, "replay: %s: %s\n", path, strerror(errno));
		return -1;
	}
	if (!S_ISDIR(st.st_mode)) {
		++*count;
		return replay_file(path);
	}
	int n = scandir(path, &names, not_hidden, alphasort);
	if (n < 0) {
		fprintf(stderr, "replay: cannot list %s: %s\n", path, strerror(errno));
		return -1;
	}
	int rc = 0;
	for (int i = 0; i < n; i++) {
		char file[4096];
		snprintf(file, sizeof(file), "%s/%s", path, names[i]->d_name);
		if (rc == 0 && replay_path(file, 0, count) < 0)
			rc = -1;
		free(names[i]);
	}
	free(names);
	return rc;
}

int main(int argc, char **argv)
{
	static const char corpus[] = TBENCH_SRCDIR "/tests/fuzz/corpus-" FUZZ_TARGET;
	static const char regressions[] = TBENCH_SRCDIR "/tests/fuzz/regressions-" FUZZ_TARGET;
	unsigned count = 0, seeds;

	if (argc > 1) {
		for (int i = 1; i < argc; i++)
			if (replay_path(argv[i], 0, &count) < 0)
				return EXIT_USAGE;
		printf("replay %s: %u inputs, no failure\n", FUZZ_TARGET, count);
		return EXIT_OK;
	}
	if (replay_path(corpus, 0, &count) < 0)
		return EXIT_RUN_FAILED;
	seeds = count;
	if (seeds == 0) {
		fprintf(stderr, "replay: no inputs in %s: the seed corpus is missing\n", corpus);
		return EXIT_RUN_FAILED;
	}
	if (replay_path(regressions, 1, &count) < 0)
		return EXIT_RUN_FAILED;
	printf("replay %s: %u seeds and %u regression inputs, no failure\n", FUZZ_TARGET, seeds,
	       count - seeds);
	return EXIT_OK;
}
