/* CPU time of a process tree, from Linux's /proc: what tbench-sweep reads
 * around each run for a server outside tbench (tbench_srv forks a process
 * per connection, so the server is a tree, not a process). */
#ifndef TBENCH_STATS_PROC_H
#define TBENCH_STATS_PROC_H

#include <stddef.h>
#include <sys/types.h>

#include "util.h"

/* A process /proc lists: its parent, its CPU ticks (its own and its reaped
 * children's), and whether it is in the tree asked for. */
struct proc_entry {
	pid_t pid, ppid;
	unsigned long long user, system;
	int in_tree;
};

/* Every process /proc lists, *n of them (to free()), with root and every
 * process below it marked in_tree. NULL with err set when root is not
 * there or /proc cannot be read. */
struct proc_entry *proc_tree(pid_t root, size_t *n, struct errbuf *err);

/* User and system CPU seconds of process root and of every process below
 * it: those alive (or not yet reaped) with their own time, those reaped
 * through the time their parents collected. It only grows, so the
 * difference of two readings is what the tree used between them.
 * 0, or -1 with err set (no such process, no /proc). */
int proc_tree_cpu(pid_t root, double cpu_s[2], struct errbuf *err);

#endif
