/* What a run's operations cost and what the kernel did for them, over the
 * execute phase: CPU time and context switches of the clients and of the
 * servers a backend brings (from /proc, for threads and processes alike),
 * perf_event_open counters of the whole run, and the network namespace's
 * TCP and device counters. Sampled at the start and the end of the execute
 * phase only: the hot loop does nothing for it. */
#ifndef TBENCH_COST_H
#define TBENCH_COST_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

/* CPU and switches of a group of tasks. */
struct task_times {
	double user_s, sys_s;           /* /proc's ticks, rescaled task by task */
	double raw_user_s, raw_sys_s;   /* taskstats' ticks as charged, of raw_tasks of the tasks */
	unsigned raw_tasks;
	uint64_t vol_cs, invol_cs;
	uint64_t exec_ns, migrations;   /* schedstat's run time, sched's se.nr_migrations */
	unsigned tasks;
	unsigned running;               /* tasks runnable when read (state R) */
	double reaped_user_s, reaped_sys_s;   /* of children reaped (a server's, --reconnect) */
};

enum cost_perf {
	PERF_TASK_CLOCK, PERF_CONTEXT_SWITCHES, PERF_CPU_MIGRATIONS,
	PERF_CYCLES, PERF_INSTRUCTIONS, PERF_SYSCALLS, PERF_N
};

enum cost_net {
	NET_SEGS_OUT, NET_SEGS_IN, NET_RETRANS, NET_DELAYED_ACKS,
	NET_DEV_TX_PACKETS, NET_DEV_TX_BYTES, NET_DEV_RX_PACKETS, NET_DEV_RX_BYTES, NET_N
};

/* A group's user and system seconds from sample a to sample b; raw: split
 * by taskstats' ticks (cost_split_raw), else by /proc's. */
void task_times_delta(const struct task_times *a, const struct task_times *b, bool raw,
		      double *user_s, double *sys_s);
/* A group's CPU seconds so far: schedstat's run time, else the ticks,
 * with the reaped children's. */
double task_times_cpu_s(const struct task_times *t);

struct cost_sample {
	struct task_times clients, servers;
	struct task_times harness;      /* the driver's thread: its polls, ticks, watchdog, reaping
					 * and these samples; no client's or server's work */
	uint64_t perf[PERF_N];
	uint64_t net[NET_N];
	bool net_ok[NET_N];
};

/* Open before the run starts any thread or process: the perf counters
 * count this process and every task it creates afterwards. */
struct cost {
	int perf_fd[PERF_N];            /* -1 where not counted by perf_event_open */
	bool from_proc[PERF_N];         /* counted from /proc instead (no perf_event_open) */
	char perf_why[PERF_N][96];      /* why neither */
	char dev[16];                   /* the device whose counters are read */
	bool taskstats;                 /* the kernel told this process a task's raw ticks */
	struct cost_sample start, end;
	bool started, ended;
};

/* perf: open the perf_event_open counters too. Inherited by every task,
 * they cost each context switch of the run some time: opt-in. Without
 * them (or where the kernel refuses them) the task clock, the switches
 * and the migrations are summed from /proc over the run's tasks, which
 * costs the run nothing. */
void cost_open(struct cost *c, const char *dev, bool perf);
/* `client_tids`: the tasks that run clients; every other task of this
 * process and its descendants is a server, but the driver's thread and the
 * calling one (the driver, or its sampler). `end`: the sample that closes
 * the interval (the driver's thread is then read before the others). */
void cost_sample(struct cost *c, struct cost_sample *s, const pid_t *client_tids, unsigned n,
		 pid_t driver_tid, bool end);
void cost_close(struct cost *c);

/* Names for reports, in enum order. */
extern const char *const cost_perf_name[PERF_N];
/* Counter i is known: "perf_event_open", "/proc", or NULL (see perf_why). */
const char *cost_perf_source(const struct cost *c, int i);
extern const char *const cost_net_name[NET_N];
/* Whether taskstats answered for every task in both samples: its ticks
 * split the CPU time then, /proc's where not. */
bool cost_split_raw(const struct cost *c);
/* What split the CPU time into user and system: "taskstats" or "/proc". */
const char *cost_split_source(const struct cost *c);

#endif
