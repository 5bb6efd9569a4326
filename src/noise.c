#include "config.h"
#include "noise.h"

#include <math.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

const char *const noise_reason_name[NOISE_REASONS] = {
	"steal", "other_cpu", "outside_load", "stall", "overrun",
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

void noise_sample(struct noise_sample *s, uint64_t now)
{
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);

	memset(s, 0, sizeof(*s));
	s->at_ns = now;
	s->cpus = cpus > 0 ? (unsigned)cpus : 1;
	s->sys_ok = proc_system_read(&s->sys) == 0;
	s->loadavg_ok = proc_loadavg_read(&s->loadavg) == 0;
	read_frequencies(s);
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

static uint64_t task_clock_ns(const struct task_times *t)
{
	/* Without schedstat, the ticks of user and system time. */
	return t->exec_ns ? t->exec_ns : (uint64_t)((t->user_s + t->sys_s) * 1e9);
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
	uint64_t own_start = task_clock_ns(&c->start.clients) + task_clock_ns(&c->start.servers);
	uint64_t own_end = task_clock_ns(&c->end.clients) + task_clock_ns(&c->end.servers);
	double own_s = own_end > own_start ? (own_end - own_start) / 1e9 : 0;
	double busy_s = (double)(b->busy - a->busy) / hz, steal_s = (double)(b->steal - a->steal) / hz;

	f->steal_pct = 100 * steal_s / capacity_s;
	f->other_cpu_pct = busy_s > own_s ? 100 * (busy_s - own_s) / capacity_s : 0;
	/* Runnable at each sample, less the run's and the driver reading them. */
	double out_a = (double)a->procs_running - 1 - c->start.clients.running - c->start.servers.running;
	double out_b = (double)b->procs_running - 1 - c->end.clients.running - c->end.servers.running;
	f->outside_runnable = ((out_a > 0 ? out_a : 0) + (out_b > 0 ? out_b : 0)) / 2;
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
	if (f->sys_known && f->outside_runnable > f->outside_limit)
		f->reasons |= 1u << NOISE_OUTSIDE_LOAD;
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
	f->outside_limit = f->cpus / 2.0 > 1 ? f->cpus / 2.0 : 1;
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
		else if (i == NOISE_OUTSIDE_LOAD)
			w = snprintf(out + len, size - len, "%s%.1f runnable tasks outside the run (over %g)",
				     sep, f->outside_runnable, f->outside_limit);
		else if (i == NOISE_STALL)
			w = snprintf(out + len, size - len, "%sno client progressed for %.1f s (%g s or more)",
				     sep, f->longest_stall_s, NOISE_STALL_S);
		else
			w = snprintf(out + len, size - len, "%sthe execute phase overran -t by %.1f s (over %g s)",
				     sep, f->overrun_s, f->overrun_limit_s);
		len += w > 0 ? (size_t)w : 0;
	}
}
