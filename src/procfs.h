/* Reading a task's /proc/.../stat line: what tbench needs of it. */
#ifndef TBENCH_PROCFS_H
#define TBENCH_PROCFS_H

#include <sys/types.h>

struct proc_stat {
	char state;
	pid_t ppid;
	unsigned long long utime, stime;     /* clock ticks of the task */
	unsigned long long cutime, cstime;   /* of its reaped children */
};

/* path: "/proc/PID/stat" or "/proc/PID/task/TID/stat". The fields after
 * the command, which is in parentheses and may hold anything. 0, or -1
 * when the task is gone or the line is not Linux's. */
int proc_stat_read(const char *path, struct proc_stat *st);

#endif
