/* CPU lists as taskset and the kernel's cpuset files write them ("0",
 * "0,2", "0-3,6"): parsed once from the command line (tbench --cpus,
 * --server-cpus; tbench_srv --cpus), checked against the CPUs this process
 * may use, and applied with sched_setaffinity: the k-th task goes to the
 * list's entry k mod n. */
#ifndef TBENCH_CPULIST_H
#define TBENCH_CPULIST_H

#include <stddef.h>

#include "util.h"

enum { CPU_LIST_MAX = 1024 };   /* entries, and the highest CPU number + 1 (CPU_SETSIZE) */

struct cpu_list {
	unsigned n;
	unsigned short cpu[CPU_LIST_MAX];   /* in the order written; ranges expanded */
	char text[128];                     /* as given, for the JSON and messages */
};

/* The syntax alone: 0 with *out filled, or -1 with err saying what is wrong
 * (`flag` names the option in it, e.g. "--cpus"). */
int cpu_list_parse(const char *flag, const char *s, struct cpu_list *out, struct errbuf *err);

/* Every CPU of the list must be one this process may run on: -1 with err
 * naming the flag, the CPU and the allowed CPUs otherwise. */
int cpu_list_check_allowed(const char *flag, const struct cpu_list *l, struct errbuf *err);

/* The CPU of the k-th task; -1 when l is NULL or empty (no pinning). */
int cpu_list_pick(const struct cpu_list *l, unsigned k);

/* Pins a task (0: the calling thread) to the k-th task's CPU; 0 (also
 * with no list), or -1 with err naming `who` ("client 3") and the CPU. */
int cpu_list_pin(const struct cpu_list *l, unsigned k, pid_t task, const char *who,
		 struct errbuf *err);

/* The CPUs this process may run on, as a list ("0-3,6"), into buf. */
const char *cpu_allowed_text(char *buf, size_t size);

#endif
