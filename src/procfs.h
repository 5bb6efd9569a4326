/* Reading a task's /proc/.../stat line: what tbench needs of it. */
#ifndef TBENCH_PROCFS_H
#define TBENCH_PROCFS_H

#include <stdbool.h>
#include <stdint.h>
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
 * (USER_HZ), every CPU summed, and its procs_running at the moment read
 * (which kernels with delayed dequeue inflate with tasks about to sleep). */
struct system_times {
	unsigned long long busy;     /* user + nice + system: tasks' CPU time */
	unsigned long long irq;      /* irq + softirq */
	unsigned long long idle;     /* idle + iowait */
	unsigned long long steal;    /* taken by the hypervisor for others */
	unsigned procs_running;
};

/* 0, or -1 when /proc/stat cannot be read or is not Linux's. */
int proc_system_read(struct system_times *t);
/* Tasks (threads) and the time each has run or waited to run
 * (/proc/PID/task/TID/schedstat), sorted by TID. */
struct task_ns {
	pid_t tid;
	uint64_t ns;
};
struct task_ns_list {
	struct task_ns *t;
	size_t n;
};
/* Every user-space task that is neither process root nor one of its
 * descendants: 0, or -1 when /proc cannot be read (out->t to free). */
int proc_outside_tasks(pid_t root, struct task_ns_list *out);
/* What the tasks of after ran or waited since before, a task that began
 * in between counted whole; a task gone in between drops out. */
uint64_t proc_tasks_grew(const struct task_ns_list *before, const struct task_ns_list *after);
/* /proc/loadavg's one-minute average: 0, or -1. */
int proc_loadavg_read(double *one_minute);

/* The run's tasks: this process and all its descendants, walked down from
 * here, so that only the run's own are read whatever else runs. fn gets
 * each task (thread), and whether it is one of the n clients' tasks; the
 * driver's thread and the caller's own are left out. 0, or -1 out of memory. */
int proc_run_tasks(const pid_t *clients, unsigned n, pid_t driver,
		   void (*fn)(pid_t pid, pid_t tid, bool client, void *ctx), void *ctx);

#endif
