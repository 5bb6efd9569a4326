/* The command line of tbench (popt): defaults, parsing and validation. */
#ifndef TBENCH_OPTIONS_H
#define TBENCH_OPTIONS_H

#include <stdio.h>

#include "driver.h"

struct options {
	struct run_config run;       /* lf and backend are filled in by main */
	const char *backend_name;
	const char *loadfile;
	const char *json_path;
	bool list_backends;
};

/* 0: run; 1: done already (--help, --version, -b help), exit 0; -1: bad usage, exit 2. */
int options_parse(int argc, const char **argv, struct options *o);
/* The loadfile used without -c: installed copy, else the source tree's. */
const char *options_default_loadfile(void);
void options_list_backends(FILE *f);
void options_free(struct options *o);

#endif
