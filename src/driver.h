/* The shared child driver: N clients replay the parsed loadfile through a
 * backend, in three phases (warm-up, execute, cleanup), and count what they
 * did per client and per operation type. */
#ifndef TBENCH_DRIVER_H
#define TBENCH_DRIVER_H

#include "run.h"

/* The run cfg asks for, told to obs as it goes (NULL: to nobody), its
 * figures and its error in res; returns res->status. */
enum run_status driver_run(const struct run_config *cfg, const struct run_observer *obs,
			   struct run_result *res);
void run_result_free(struct run_result *res);

/* Async-signal-safe: ends the run early, as Ctrl-C does. */
void driver_request_stop(void);

#endif
