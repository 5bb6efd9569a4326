/* tbench-stats merge: the --json documents of one run made on several
 * client hosts at once, as one (src/stats_merge.c). */
#include "config.h"
#include "stats_cmd.h"
#include "stats_merge.h"

#include <stdio.h>
#include <stdlib.h>

#define MERGE_USAGE "usage: tbench-stats merge [--names H1,H2,..] A.json B.json ..."

void cmd_merge(int argc, char **argv)
{
	const char **files = xrealloc(NULL, (size_t)argc * sizeof(*files));
	const char *names_arg = NULL;
	struct strlist names = { 0, NULL };
	struct errbuf err;
	int nfiles = 0;

	const struct poptOption table[] = {
		{ "names", 0, POPT_ARG_STRING, &names_arg, 0, NULL, NULL },
		POPT_TABLEEND
	};
	nfiles = stats_options("merge", argc, argv, table, NULL, NULL, files, argc);
	if (names_arg)
		names = strlist_split(names_arg);
	if (nfiles == 0)
		die(EXIT_USAGE, "merge: no JSON documents to merge (" MERGE_USAGE ")");
	if (names.n && names.n != (size_t)nfiles)
		die(EXIT_USAGE, "merge: --names must name every file, in order (" MERGE_USAGE ")");
	if (stats_merge(stdout, (size_t)nfiles, files, names.n ? (const char *const *)names.v : NULL,
			&err) < 0)
		die(EXIT_USAGE, "merge: %s", err.msg);
	strlist_free(&names);
	free(files);
}
