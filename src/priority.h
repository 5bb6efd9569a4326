/* The driver's timekeeping above its clients: with thousands of runnable
 * client tasks a task of ordinary priority gets the CPU seconds late, and
 * the progress lines, the phases' ends and the first sample with it. */
#ifndef TBENCH_PRIORITY_H
#define TBENCH_PRIORITY_H

#include <pthread.h>

enum driver_priority {
	PRIORITY_NORMAL,   /* neither was allowed: as dbench's parent */
	PRIORITY_NICE,     /* nice PRIORITY_NICE_VALUE */
	PRIORITY_FIFO,     /* SCHED_FIFO 1 */
};

#define PRIORITY_NICE_VALUE (-10)

/* The calling thread: SCHED_FIFO where allowed (root, CAP_SYS_NICE or
 * RLIMIT_RTPRIO), else a negative nice, else as it was. Never inherited:
 * the clients and servers it starts afterwards run at ordinary priority. */
enum driver_priority priority_raise(void);

/* An attribute for a thread of the driver that should run as the caller
 * does: its own policy, set explicitly (inherit is reset on clone). */
void priority_thread_attr(pthread_attr_t *attr, enum driver_priority p);

const char *priority_name(enum driver_priority p);

#endif
