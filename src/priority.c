/* The driver's priority: see priority.h. */
#include "config.h"

#include <sched.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "priority.h"

enum driver_priority priority_raise(void)
{
	struct sched_param fifo = { .sched_priority = 1 }, normal = { 0 };
	pid_t tid = (pid_t)syscall(SYS_gettid);

	if (sched_setscheduler(0, SCHED_FIFO | SCHED_RESET_ON_FORK, &fifo) == 0)
		return PRIORITY_FIFO;
	/* RESET_ON_FORK also puts a negative nice back to 0 in children. */
	if (sched_setscheduler(0, SCHED_OTHER | SCHED_RESET_ON_FORK, &normal) == 0 &&
	    setpriority(PRIO_PROCESS, (id_t)tid, PRIORITY_NICE_VALUE) == 0)
		return PRIORITY_NICE;
	return PRIORITY_NORMAL;
}

void priority_thread_attr(pthread_attr_t *attr, enum driver_priority p)
{
	struct sched_param fifo = { .sched_priority = 1 };

	pthread_attr_init(attr);
	if (p == PRIORITY_FIFO && pthread_attr_setinheritsched(attr, PTHREAD_EXPLICIT_SCHED) == 0 &&
	    pthread_attr_setschedpolicy(attr, SCHED_FIFO) == 0)
		pthread_attr_setschedparam(attr, &fifo);
}

const char *priority_name(enum driver_priority p)
{
	static const char *const names[] = {
		[PRIORITY_NORMAL] = "normal", [PRIORITY_NICE] = "nice", [PRIORITY_FIFO] = "fifo",
	};
	return names[p];
}
