/* How sure a run's figures are: what else the machine did during the
 * execute phase (steal, other tasks' CPU, runnable tasks outside the run),
 * what the run's tasks went through (migrations, frequency changes), and
 * stalls of every client at once. Sampled at the start and the end of the
 * execute phase, as the cost is; the stall watch is the driver's, at each
 * of its looks. A run past the thresholds (man tbench, NOISE) is disturbed. */
#ifndef TBENCH_NOISE_H
#define TBENCH_NOISE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "cost.h"
#include "procfs.h"

#define NOISE_MAX_CPUS 1024           /* CPUs whose frequency is read */

/* The thresholds: a run past any of them is disturbed. */
#define NOISE_STEAL_PCT 5.0           /* steal, % of the phase's CPU capacity */
#define NOISE_OTHER_CPU_PCT 10.0      /* CPU time of tasks not the run's, % of capacity */
#define NOISE_STALL_S 2.0             /* no client progressed for this long */
#define NOISE_OVERRUN_S 1.0           /* the phase outlasted -t by more than this, */
#define NOISE_OVERRUN_FRACTION 0.1    /* or this fraction of -t, whichever is more */
#define NOISE_MIN_JUDGED_S 1.0        /* shorter phases' CPU shares are too coarse to judge */

struct noise_sample {
	uint64_t at_ns;
	struct system_times sys;
	bool sys_ok, loadavg_ok, outside_ok;
	double loadavg;
	struct task_ns_list outside;        /* the tasks not the run's, and their times */
	double driver_s;                    /* the sampling thread's own CPU time */
	unsigned cpus;                      /* online */
	unsigned freq_cpus;                 /* CPUs whose frequency was read: 0, not exposed */
	uint32_t freq_khz[NOISE_MAX_CPUS];  /* 0 where not read */
};

struct noise {
	struct noise_sample start, end;
	bool started, ended;
	bool outside_known;         /* outside_ns read: the tasks at both samples were */
	uint64_t outside_ns;        /* the other tasks' run time and run-queue wait between */
	/* The stall watch: loadfile lines reached by all clients at the last
	 * look, when they last moved, the last look, the longest gap seen. */
	uint64_t lines, progress_ns, look_ns, longest_stall_ns;
};

enum noise_reason { NOISE_STEAL, NOISE_OTHER_CPU, NOISE_STALL, NOISE_OVERRUN,
		    NOISE_REASONS };
extern const char *const noise_reason_name[NOISE_REASONS];

/* What the samples say, worked out once for every report. */
struct noise_figures {
	bool known;                 /* both samples were taken */
	bool sys_known;             /* /proc/stat read at both */
	double wall_s;
	unsigned cpus;
	double steal_pct, other_cpu_pct;   /* of wall_s × cpus */
	double outside_runnable;    /* tasks not the run's running or waiting to run, on average */
	double loadavg_start, loadavg_end;  /* NaN where not read */
	uint64_t migrations;
	unsigned freq_cpus, freq_changed_cpus;
	double freq_start_mhz, freq_end_mhz;  /* mean over the CPUs read */
	double longest_stall_s;
	double overrun_s, overrun_limit_s;  /* NaN without -t (--run-once, interrupted) */
	unsigned reasons;           /* bit per enum noise_reason */
};

void noise_sample(struct noise_sample *s, uint64_t now, pid_t driver_tid);
/* After the end sample: the other tasks' times between the two, their
 * lists freed. noise_free frees them where no end sample came. */
void noise_finish(struct noise *n);
void noise_free(struct noise *n);
/* The stall watch, at each look of the driver during the execute phase:
 * lines reached by all clients; `waiting`, a client waits by the loadfile's
 * or -R's wish, so that no progress is no stall. */
void noise_start_watch(struct noise *n, uint64_t lines, uint64_t now);
void noise_watch(struct noise *n, uint64_t lines, bool waiting, uint64_t now);
/* timelimit: -t, or 0 when the phase had no time limit to keep. */
void noise_judge(const struct noise *n, const struct cost *c, double timelimit, double execute_s,
		 struct noise_figures *f);
/* The reasons as a sentence: "steal 7.1% of the CPU capacity (over 5%); ...". */
void noise_describe(const struct noise_figures *f, char *out, size_t size);

#endif
