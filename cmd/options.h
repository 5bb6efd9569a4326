/* The command line of tbench (popt): defaults, parsing and validation. */
#ifndef TBENCH_OPTIONS_H
#define TBENCH_OPTIONS_H

#include <stdio.h>

#include "backend.h"
#include "cpulist.h"
#include "netns.h"
#include "report.h"
#include "run.h"

/* The backends' own options (struct backend_option) as popt sees them:
 * entry k is option[k] of backend owner[k], its value value[k] (or NULL). */
struct poptOption;
struct backend_args {
	size_t n;
	struct poptOption *popt;
	char **value, **help;
	const struct backend **owner;
	const struct backend_option **option;
};

struct options {
	struct run_config run;       /* lf and backend are filled in by main */
	struct report_options report;
	struct netns_options netns;  /* --netns, --offload, --tso, --gso, --gro, --mtu, --sysctl */
	const char *backend_name;
	const char *loadfile;
	const char *directory;       /* -D */
	const char *json_path;
	bool strict;                 /* --strict: the loadfile as dbench's without leniency */
	bool cost;                   /* --cost: print what an operation cost */
	bool trace;                  /* --trace: trace the run's tasks with BPF, print it */
	bool trace_syscalls;         /* --trace-syscalls: and follow every system call */
	bool list_backends;          /* -b help: the backends for a reader */
	bool list_capabilities;      /* -b list: the backends for a script */
	struct backend_args backend_args;
	struct cpu_list cpus, server_cpus;   /* --cpus, --server-cpus, parsed */
	struct knob_args {           /* as given; popt's copies */
		char *cpus, *server_cpus, *family, *mtu, *start_at, *inject_ns;
	} knob_args;
};

/* 0: run; 1: done already (--help, --version, -b help, -b list), exit 0; -1: bad usage, exit 2. */
int options_parse(int argc, const char **argv, struct options *o);
/* The loadfile used without -c: dbench's client.txt where the system has
 * it (*dbench set), else our own, installed or in the source tree. */
const char *options_default_loadfile(bool *dbench);
void options_list_backends(FILE *f);
void options_free(struct options *o);

#endif
