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

/* The machine's CPU time from /proc/stat's "cpu" line, in clock ticks
 * (USER_HZ), every CPU summed, and its runnable tasks at the moment read. */
struct system_times {
	unsigned long long busy;     /* user + nice + system: tasks' CPU time */
	unsigned long long irq;      /* irq + softirq */
	unsigned long long idle;     /* idle + iowait */
	unsigned long long steal;    /* taken by the hypervisor for others */
	unsigned procs_running;
};

/* 0, or -1 when /proc/stat cannot be read or is not Linux's. */
int proc_system_read(struct system_times *t);
/* /proc/loadavg's one-minute average: 0, or -1. */
int proc_loadavg_read(double *one_minute);

#endif
