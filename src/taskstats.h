/* A task's raw user and system time from the kernel's taskstats (generic
 * netlink): the clock ticks as they were charged, not /proc's per-task
 * rescaling, which gives a task of a tick or two all its time as user. */
#ifndef TBENCH_TASKSTATS_H
#define TBENCH_TASKSTATS_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

struct taskstats_sock {
	int fd;            /* -1 when taskstats cannot be asked (no CAP_NET_ADMIN, no family) */
	uint16_t family;
	uint32_t seq;
};

struct task_ticks {
	uint64_t user_us, sys_us;        /* whole ticks, in microseconds */
	uint64_t vol_cs, invol_cs;
};

/* Opens the socket and finds the family; fd stays -1 where either fails. */
void taskstats_open(struct taskstats_sock *ts);
void taskstats_close(struct taskstats_sock *ts);
/* One task's figures; false when it is gone or the kernel refused. */
bool taskstats_read(struct taskstats_sock *ts, pid_t tid, struct task_ticks *out);

#endif
