/* CPU time of a process tree, from Linux's /proc: what tbench-sweep reads
 * around each run for a server outside tbench (tbench_srv forks a process
 * per connection, so the server is a tree, not a process). */
#ifndef TBENCH_STATS_PROC_H
#define TBENCH_STATS_PROC_H

#include <sys/types.h>

#include "util.h"

/* User and system CPU seconds of process root and of every process below
 * it: those alive (or not yet reaped) with their own time, those reaped
 * through the time their parents collected. It only grows, so the
 * difference of two readings is what the tree used between them.
 * 0, or -1 with err set (no such process, no /proc). */
int proc_tree_cpu(pid_t root, double cpu_s[2], struct errbuf *err);

#endif
