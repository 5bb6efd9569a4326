#include "config.h"
#include "noise.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util.h"

const char *const noise_reason_name[NOISE_REASONS] = {
	"steal", "other_cpu", "stall", "overrun",
};

/* A look of the driver this long after the one before: the driver did not
 * run, so neither, likely, did the clients (a stopped or starved machine). */
#define LATE_LOOK_NS 1000000000ull

static void read_frequencies(struct noise_sample *s)
{
	long conf = sysconf(_SC_NPROCESSORS_CONF);
	unsigned n = conf > 0 && conf < NOISE_MAX_CPUS ? (unsigned)conf : NOISE_MAX_CPUS;
	char path[96];

	for (unsigned i = 0; i < n; i++) {
		snprintf(path, sizeof(path), "/sys/devices/system/cpu/cpu%u/cpufreq/scaling_cur_freq", i);
		FILE *f = fopen(path, "re");
		unsigned khz = 0;
		if (!f)
			continue;   /* offline, or no cpufreq */
		if (fscanf(f, "%u", &khz) == 1 && khz > 0) {
			s->freq_khz[i] = khz;
			s->freq_cpus++;
		}
		fclose(f);
	}
}

void noise_sample(struct noise_sample *s, uint64_t now, pid_t driver_tid)
{
	char path[64];
	memset(s, 0, sizeof(*s));
	s->at_ns = now;
	s->cpus = online_cpus();
	s->sys_ok = proc_system_read(&s->sys) == 0;
	s->loadavg_ok = proc_loadavg_read(&s->loadavg) == 0;
	s->outside_ok = proc_outside_tasks(getpid(), &s->outside) == 0;
	struct proc_stat self;
	long hz = sysconf(_SC_CLK_TCK) > 0 ? sysconf(_SC_CLK_TCK) : 100;
	snprintf(path, sizeof(path), "/proc/self/task/%d/stat", (int)driver_tid);
	if (proc_stat_read(path, &self) == 0)
		s->driver_s = (double)(self.utime + self.stime) / hz;
	read_frequencies(s);
}

void noise_finish(struct noise *n)
{
	n->outside_known = n->start.outside_ok && n->end.outside_ok;
	if (n->outside_known)
		n->outside_ns = proc_tasks_grew(&n->start.outside, &n->end.outside);
	noise_free(n);
}

void noise_free(struct noise *n)
{
	free(n->start.outside.t);
	free(n->end.outside.t);
	n->start.outside = n->end.outside = (struct task_ns_list){ 0 };
}

void noise_start_watch(struct noise *n, uint64_t lines, uint64_t now)
{
	n->lines = lines;
	n->progress_ns = n->look_ns = now;
	n->longest_stall_ns = 0;
}

/* A gap counts when no client moved since the last look (and none waits
 * by wish), or when the look itself came late: it lasts from the last
 * look that saw progress. */
void noise_watch(struct noise *n, uint64_t lines, bool waiting, uint64_t now)
{
	bool moved = lines != n->lines || waiting;
	bool late = now - n->look_ns >= LATE_LOOK_NS;

	if ((!moved || late) && now - n->progress_ns > n->longest_stall_ns)
		n->longest_stall_ns = now - n->progress_ns;
	if (moved)
		n->progress_ns = now;
	n->lines = lines;
	n->look_ns = now;
}

/* The run's user and system time: the accounting /proc/stat's busy time
 * comes from. Its task clock (schedstat) leaves out time the busy time
 * has, such as switching, and parts from it by several percent of
 * capacity when the run switches often. */
static double run_cpu_s(const struct cost_sample *c, const struct noise_sample *s)
{
	return task_times_cpu_s(&c->clients) + task_times_cpu_s(&c->servers) + s->driver_s;
}

/* Steal and other tasks' CPU as shares of the capacity. irq and softirq
 * time is left out of "other": much of it is the run's own network work,
 * which the kernel may not charge to the run's tasks. */
static void judge_cpu(const struct noise *n, const struct cost *c, struct noise_figures *f)
{
	const struct system_times *a = &n->start.sys, *b = &n->end.sys;
	long hz = sysconf(_SC_CLK_TCK) > 0 ? sysconf(_SC_CLK_TCK) : 100;
	double capacity_s = f->wall_s * f->cpus;

	f->sys_known = n->start.sys_ok && n->end.sys_ok && capacity_s > 0;
	if (!f->sys_known)
		return;
	double own_s = run_cpu_s(&c->end, &n->end) - run_cpu_s(&c->start, &n->start);
	double busy_s = (double)(b->busy - a->busy) / hz, steal_s = (double)(b->steal - a->steal) / hz;

	f->steal_pct = 100 * steal_s / capacity_s;
	f->other_cpu_pct = busy_s > own_s ? 100 * (busy_s - own_s) / capacity_s : 0;
	/* The other tasks' run time and run-queue wait over the phase: the
	 * number of them that wanted a CPU, on average. procs_running, read at
	 * two instants, is noisy, and also counts tasks the scheduler keeps
	 * queued while they go to sleep (delayed dequeue). Not judged: their
	 * wait grows with the run's own load; other_cpu judges their use. */
	if (n->outside_known)
		f->outside_runnable = n->outside_ns / 1e9 / f->wall_s;
}

static void judge_frequency(const struct noise *n, struct noise_figures *f)
{
	double sum_a = 0, sum_b = 0;

	for (unsigned i = 0; i < NOISE_MAX_CPUS; i++) {
		uint32_t a = n->start.freq_khz[i], b = n->end.freq_khz[i];
		if (!a || !b)
			continue;
		f->freq_cpus++;
		f->freq_changed_cpus += a != b;
		sum_a += a, sum_b += b;
	}
	f->freq_start_mhz = f->freq_cpus ? sum_a / f->freq_cpus / 1e3 : NAN;
	f->freq_end_mhz = f->freq_cpus ? sum_b / f->freq_cpus / 1e3 : NAN;
}

static void judge_reasons(struct noise_figures *f)
{
	bool long_enough = f->wall_s >= NOISE_MIN_JUDGED_S;

	if (f->sys_known && long_enough && f->steal_pct > NOISE_STEAL_PCT)
		f->reasons |= 1u << NOISE_STEAL;
	if (f->sys_known && long_enough && f->other_cpu_pct > NOISE_OTHER_CPU_PCT)
		f->reasons |= 1u << NOISE_OTHER_CPU;
	if (f->longest_stall_s >= NOISE_STALL_S)
		f->reasons |= 1u << NOISE_STALL;
	if (isfinite(f->overrun_s) && f->overrun_s > f->overrun_limit_s)
		f->reasons |= 1u << NOISE_OVERRUN;
}

void noise_judge(const struct noise *n, const struct cost *c, double timelimit, double execute_s,
		 struct noise_figures *f)
{
	memset(f, 0, sizeof(*f));
	f->overrun_s = f->overrun_limit_s = NAN;
	f->known = n->started && n->ended && c->started && c->ended;
	if (!f->known)
		return;
	f->wall_s = (n->end.at_ns - n->start.at_ns) / 1e9;
	f->cpus = n->end.cpus;
	f->loadavg_start = n->start.loadavg_ok ? n->start.loadavg : NAN;
	f->loadavg_end = n->end.loadavg_ok ? n->end.loadavg : NAN;
	uint64_t mig_a = c->start.clients.migrations + c->start.servers.migrations;
	uint64_t mig_b = c->end.clients.migrations + c->end.servers.migrations;
	f->migrations = mig_b > mig_a ? mig_b - mig_a : 0;
	f->longest_stall_s = n->longest_stall_ns / 1e9;
	if (timelimit > 0) {
		f->overrun_s = execute_s > timelimit ? execute_s - timelimit : 0;
		f->overrun_limit_s = timelimit * NOISE_OVERRUN_FRACTION > NOISE_OVERRUN_S ?
				     timelimit * NOISE_OVERRUN_FRACTION : NOISE_OVERRUN_S;
	}
	judge_cpu(n, c, f);
	judge_frequency(n, f);
	judge_reasons(f);
}

void noise_describe(const struct noise_figures *f, char *out, size_t size)
{
	size_t len = 0;

	out[0] = '\0';
	for (int i = 0; i < NOISE_REASONS && len < size; i++) {
		if (!(f->reasons & (1u << i)))
			continue;
		const char *sep = len ? "; " : "";
		int w = 0;
		if (i == NOISE_STEAL)
			w = snprintf(out + len, size - len, "%ssteal %.1f%% of the CPU capacity (over %g%%)",
				     sep, f->steal_pct, NOISE_STEAL_PCT);
		else if (i == NOISE_OTHER_CPU)
			w = snprintf(out + len, size - len, "%sother tasks used %.1f%% of the CPU capacity "
				     "(over %g%%)", sep, f->other_cpu_pct, NOISE_OTHER_CPU_PCT);
		else if (i == NOISE_STALL)
			w = snprintf(out + len, size - len, "%sno client progressed for %.1f s (%g s or more)",
				     sep, f->longest_stall_s, NOISE_STALL_S);
		else
			w = snprintf(out + len, size - len, "%sthe run overran -t by %.1f s (over %g s)",
				     sep, f->overrun_s, f->overrun_limit_s);
		len += w > 0 ? (size_t)w : 0;
	}
}
