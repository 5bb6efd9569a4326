#include "config.h"
#include "cost.h"
#include "procfs.h"
#include "schema.h"
#include "taskstats.h"

#include <errno.h>
#include <math.h>
#include <sched.h>
#include <sys/mount.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

const char *const cost_perf_name[PERF_N] = {
	SK_TASK_CLOCK_US, SK_CONTEXT_SWITCHES, SK_CPU_MIGRATIONS, SK_CYCLES, SK_INSTRUCTIONS, SK_SYSCALLS,
};
const char *const cost_net_name[NET_N] = {
	SK_SEGMENTS_OUT, SK_SEGMENTS_IN, SK_RETRANSMITS, SK_DELAYED_ACKS,
	SK_DEV_TX_PACKETS, SK_DEV_TX_BYTES, SK_DEV_RX_PACKETS, SK_DEV_RX_BYTES,
};

/* --- perf_event_open --------------------------------------------------- */

static long tracepoint_id(const char *event)
{
	static const char *const roots[] = { "/sys/kernel/tracing", "/sys/kernel/debug/tracing" };
	char path[160];

	for (size_t i = 0; i < sizeof(roots) / sizeof(roots[0]); i++) {
		snprintf(path, sizeof(path), "%s/events/%s/id", roots[i], event);
		FILE *f = fopen(path, "r");
		long id = -1;
		if (!f)
			continue;
		if (fscanf(f, "%ld", &id) != 1)
			id = -1;
		fclose(f);
		if (id >= 0)
			return id;
	}
	return -1;
}

/* Where tracefs is not mounted, root mounts it in a mount namespace of
 * tbench's own: the host's mounts stay as they are. Runs before tbench
 * starts any thread. */
static int mount_tracefs_privately(void)
{
	if (geteuid() != 0 || unshare(CLONE_NEWNS) < 0)
		return -1;
	if (mount("none", "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0)
		return -1;
	return mount("tracefs", "/sys/kernel/tracing", "tracefs", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL);
}

static void open_counter(struct cost *c, enum cost_perf which, uint32_t type, uint64_t config)
{
	struct perf_event_attr a = {
		.type = type, .size = sizeof(a), .config = config,
		.inherit = 1, .exclude_hv = 1,
	};

	c->perf_fd[which] = (int)syscall(SYS_perf_event_open, &a, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
	/* kernel.perf_event_paranoid may allow user space only: the task clock
	 * still counts all the time, cycles and instructions count user space
	 * (said so); the others happen in the kernel and would read 0. */
	if (c->perf_fd[which] < 0 && errno == EACCES &&
	    (which == PERF_TASK_CLOCK || type == PERF_TYPE_HARDWARE)) {
		a.exclude_kernel = 1;
		c->perf_fd[which] = (int)syscall(SYS_perf_event_open, &a, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
		if (c->perf_fd[which] >= 0 && which != PERF_TASK_CLOCK)
			snprintf(c->perf_why[which], sizeof(c->perf_why[which]),
				 "user space only (kernel.perf_event_paranoid)");
	}
	if (c->perf_fd[which] >= 0)
		return;
	if (type == PERF_TYPE_HARDWARE && (errno == ENOENT || errno == EOPNOTSUPP || errno == ENODEV))
		snprintf(c->perf_why[which], sizeof(c->perf_why[which]),
			 "not available on this machine (no hardware PMU)");
	else
		snprintf(c->perf_why[which], sizeof(c->perf_why[which]), "perf_event_open: %s%s",
			 strerror(errno), errno == EACCES || errno == EPERM ?
			 " (kernel.perf_event_paranoid, or run as root)" : "");
}

/* The counters /proc has too: counted there where perf_event_open is
 * not asked for or refused. */
static bool proc_counts(int which)
{
	return which == PERF_TASK_CLOCK || which == PERF_CONTEXT_SWITCHES || which == PERF_CPU_MIGRATIONS;
}

static void fall_back_to_proc(struct cost *c)
{
	for (int i = 0; i < PERF_N; i++)
		if (c->perf_fd[i] < 0 && proc_counts(i)) {
			c->from_proc[i] = true;
			c->perf_why[i][0] = '\0';
		}
}

/* Every task of the sample answered by taskstats. */
static bool sample_raw(const struct cost_sample *s)
{
	return s->clients.raw_tasks == s->clients.tasks && s->servers.raw_tasks == s->servers.tasks &&
	       s->harness.raw_tasks == s->harness.tasks;
}

bool cost_split_raw(const struct cost *c)
{
	return c->taskstats && c->started && c->ended && sample_raw(&c->start) && sample_raw(&c->end);
}

const char *cost_split_source(const struct cost *c)
{
	return cost_split_raw(c) ? "taskstats" : "/proc";
}

const char *cost_perf_source(const struct cost *c, int i)
{
	return c->perf_fd[i] >= 0 ? "perf_event_open" : c->from_proc[i] ? "/proc" : NULL;
}

void cost_open(struct cost *c, const char *dev, bool perf)
{
	memset(c, 0, sizeof(*c));
	snprintf(c->dev, sizeof(c->dev), "%s", dev ? dev : "lo");
	struct taskstats_sock probe;
	taskstats_open(&probe);
	c->taskstats = probe.fd >= 0;
	taskstats_close(&probe);
	if (!perf) {
		for (int i = 0; i < PERF_N; i++) {
			c->perf_fd[i] = -1;
			snprintf(c->perf_why[i], sizeof(c->perf_why[i]),
				 "not counted: --perf counts it (and slows a run: results/bench-cost-overhead.md)");
		}
		fall_back_to_proc(c);
		return;
	}
	open_counter(c, PERF_TASK_CLOCK, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_TASK_CLOCK);
	open_counter(c, PERF_CONTEXT_SWITCHES, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CONTEXT_SWITCHES);
	open_counter(c, PERF_CPU_MIGRATIONS, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_MIGRATIONS);
	open_counter(c, PERF_CYCLES, PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES);
	open_counter(c, PERF_INSTRUCTIONS, PERF_TYPE_HARDWARE, PERF_COUNT_HW_INSTRUCTIONS);
	long id = tracepoint_id("raw_syscalls/sys_enter");
	if (id < 0 && mount_tracefs_privately() == 0)
		id = tracepoint_id("raw_syscalls/sys_enter");
	if (id >= 0) {
		open_counter(c, PERF_SYSCALLS, PERF_TYPE_TRACEPOINT, (uint64_t)id);
	} else {
		c->perf_fd[PERF_SYSCALLS] = -1;
		snprintf(c->perf_why[PERF_SYSCALLS], sizeof(c->perf_why[PERF_SYSCALLS]),
			 "raw_syscalls:sys_enter not readable (tracefs not mounted, or not root)");
	}
	fall_back_to_proc(c);
}

void cost_close(struct cost *c)
{
	for (int i = 0; i < PERF_N; i++)
		if (c->perf_fd[i] >= 0)
			close(c->perf_fd[i]);
	memset(c->perf_fd, -1, sizeof(c->perf_fd));
}

/* An inherited counter reads as the sum over every task it follows. */
static void read_perf(const struct cost *c, struct cost_sample *s)
{
	for (int i = 0; i < PERF_N; i++) {
		uint64_t v = 0;
		if (c->perf_fd[i] >= 0 && read(c->perf_fd[i], &v, sizeof(v)) != (ssize_t)sizeof(v))
			v = 0;
		s->perf[i] = v;
	}
}

/* --- tasks, from /proc --------------------------------------------------- */

static double ticks_s(unsigned long long ticks)
{
	static long hz;

	if (!hz)
		hz = sysconf(_SC_CLK_TCK) > 0 ? sysconf(_SC_CLK_TCK) : 100;
	return (double)ticks / (double)hz;
}

static void add_switches(struct task_times *t, pid_t pid, pid_t tid)
{
	char path[96], buf[256];
	unsigned long long v;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/status", (int)pid, (int)tid);
	FILE *f = fopen(path, "r");
	while (f && fgets(buf, sizeof(buf), f)) {
		if (sscanf(buf, "voluntary_ctxt_switches: %llu", &v) == 1)
			t->vol_cs += v;
		else if (sscanf(buf, "nonvoluntary_ctxt_switches: %llu", &v) == 1)
			t->invol_cs += v;
	}
	if (f)
		fclose(f);
}

static void add_run_time(struct task_times *t, pid_t pid, pid_t tid)
{
	char path[96], buf[256];
	unsigned long long v;

	/* Run time in ns, as the task clock counts it (CONFIG_SCHED_INFO). */
	snprintf(path, sizeof(path), "/proc/%d/task/%d/schedstat", (int)pid, (int)tid);
	FILE *f = fopen(path, "r");
	if (f && fscanf(f, "%llu", &v) == 1)
		t->exec_ns += v;
	if (f)
		fclose(f);
	snprintf(path, sizeof(path), "/proc/%d/task/%d/sched", (int)pid, (int)tid);
	f = fopen(path, "r");
	while (f && fgets(buf, sizeof(buf), f))
		if (sscanf(buf, "se.nr_migrations : %llu", &v) == 1)
			t->migrations += v;
	if (f)
		fclose(f);
}

/* Adds one task's CPU time and switches to a group: /proc's ticks, and
 * taskstats' as charged where the kernel answers (task_times_delta picks). */
static void add_task(struct task_times *t, struct taskstats_sock *ts, pid_t pid, pid_t tid)
{
	char path[96];
	struct proc_stat st;
	struct task_ticks raw;

	/* Taskstats first: a task gone before /proc is read is in neither. */
	bool answered = taskstats_read(ts, tid, &raw);
	snprintf(path, sizeof(path), "/proc/%d/task/%d/stat", (int)pid, (int)tid);
	if (proc_stat_read(path, &st) < 0)
		return;   /* gone already */
	t->user_s += ticks_s(st.utime);
	t->sys_s += ticks_s(st.stime);
	if (answered) {
		t->raw_user_s += (double)raw.user_us / 1e6;
		t->raw_sys_s += (double)raw.sys_us / 1e6;
		t->raw_tasks++;
		t->vol_cs += raw.vol_cs;
		t->invol_cs += raw.invol_cs;
	} else {
		add_switches(t, pid, tid);
	}
	/* A process that has come and gone between two samples (a server's
	 * process per connection, with --reconnect) is in neither; its time
	 * is in its parent's, once reaped. Only the group leader holds it. */
	if (pid == tid) {
		t->reaped_user_s += ticks_s(st.cutime);
		t->reaped_sys_s += ticks_s(st.cstime);
	}
	t->tasks++;
	t->running += st.state == 'R';
	add_run_time(t, pid, tid);
}

struct sort_ctx {
	struct cost_sample *s;
	struct taskstats_sock *ts;
};

/* A task into clients or servers. */
static void sort_task(pid_t pid, pid_t tid, bool client, void *ctx)
{
	struct sort_ctx *sc = ctx;

	add_task(client ? &sc->s->clients : &sc->s->servers, sc->ts, pid, tid);
}

/* --- network counters of this namespace ----------------------------------- */

/* "Tcp: ... OutSegs ..." header and value lines: the value named `field`. */
static bool proc_net_field(const char *file, const char *section, const char *field, uint64_t *out)
{
	char head[4096], vals[4096];
	FILE *f = fopen(file, "r");
	bool found = false;

	if (!f)
		return false;
	size_t len = strlen(section);
	while (!found && fgets(head, sizeof(head), f) && fgets(vals, sizeof(vals), f)) {
		if (strncmp(head, section, len) != 0 || strncmp(vals, section, len) != 0)
			continue;
		char *hs, *vs, *h = strtok_r(head + len, " \n", &hs), *v = strtok_r(vals + len, " \n", &vs);
		for (; h && v; h = strtok_r(NULL, " \n", &hs), v = strtok_r(NULL, " \n", &vs))
			if (strcmp(h, field) == 0) {
				*out = strtoull(v, NULL, 10);
				found = true;
				break;
			}
	}
	fclose(f);
	return found;
}

/* The device's counters as this network namespace sees them: from
 * /proc/self/net/dev, not sysfs, which shows the namespace that mounted it. */
static bool dev_stats(const char *dev, uint64_t v[4])
{
	char line[512];
	size_t len = strlen(dev);
	FILE *f = fopen("/proc/self/net/dev", "r");
	bool found = false;

	if (!f)
		return false;
	while (!found && fgets(line, sizeof(line), f)) {
		char *p = line + strspn(line, " ");
		if (strncmp(p, dev, len) != 0 || p[len] != ':')
			continue;
		unsigned long long rb, rp, tb, tp;
		found = sscanf(p + len + 1, "%llu %llu %*u %*u %*u %*u %*u %*u %llu %llu",
			       &rb, &rp, &tb, &tp) == 4;
		v[0] = tp, v[1] = tb, v[2] = rp, v[3] = rb;
	}
	fclose(f);
	return found;
}

static void read_net(const struct cost *c, struct cost_sample *s)
{
	s->net_ok[NET_SEGS_OUT] = proc_net_field("/proc/net/snmp", "Tcp:", "OutSegs", &s->net[NET_SEGS_OUT]);
	s->net_ok[NET_SEGS_IN] = proc_net_field("/proc/net/snmp", "Tcp:", "InSegs", &s->net[NET_SEGS_IN]);
	s->net_ok[NET_RETRANS] = proc_net_field("/proc/net/snmp", "Tcp:", "RetransSegs", &s->net[NET_RETRANS]);
	s->net_ok[NET_DELAYED_ACKS] = proc_net_field("/proc/net/netstat", "TcpExt:", "DelayedACKs",
						     &s->net[NET_DELAYED_ACKS]);
	/* In enum order: tx packets, tx bytes, rx packets, rx bytes. */
	bool dev = dev_stats(c->dev, &s->net[NET_DEV_TX_PACKETS]);
	for (int i = NET_DEV_TX_PACKETS; i <= NET_DEV_RX_BYTES; i++)
		s->net_ok[i] = dev;
}

/* A task's user and system time are whole clock ticks: with thousands of
 * tasks each runs a fraction of a tick, and their sum falls far short (a
 * hundredth of it at 1,000 nop threads). /proc's are worse: the kernel
 * rescales each task's by its own ticks, and one with none in system time
 * is all user (every group "user" at 2,000 tcp threads); taskstats' are
 * the ticks as charged. The group's run time is schedstat's nanoseconds;
 * the ticks only split it, over the same interval: split at each sample,
 * the difference of two splits could go below zero (seen at 512 threads).
 * The reaped children's time is the kernel's, summed in ns, and added as
 * it is. */
void task_times_delta(const struct task_times *a, const struct task_times *b, bool raw,
		      double *user_s, double *sys_s)
{
	double tick_user = raw ? fmax(b->raw_user_s - a->raw_user_s, 0) : fmax(b->user_s - a->user_s, 0);
	double tick_sys = raw ? fmax(b->raw_sys_s - a->raw_sys_s, 0) : fmax(b->sys_s - a->sys_s, 0);
	double run_s = fmax((double)b->exec_ns - (double)a->exec_ns, 0) / 1e9;

	if (b->exec_ns == 0) {   /* no schedstat (CONFIG_SCHED_INFO): the ticks as they are */
		*user_s = tick_user;
		*sys_s = tick_sys;
	} else {
		double ticks = tick_user + tick_sys;
		*user_s = ticks > 0 ? run_s * tick_user / ticks : run_s;
		*sys_s = run_s - *user_s;
	}
	*user_s += b->reaped_user_s - a->reaped_user_s;
	*sys_s += b->reaped_sys_s - a->reaped_sys_s;
}

double task_times_cpu_s(const struct task_times *t)
{
	double live = t->exec_ns ? t->exec_ns / 1e9 : t->user_s + t->sys_s;

	return live + t->reaped_user_s + t->reaped_sys_s;
}

void cost_sample(struct cost *c, struct cost_sample *s, const pid_t *client_tids, unsigned n,
		 pid_t driver_tid, bool end)
{
	memset(s, 0, sizeof(*s));
	read_perf(c, s);
	read_net(c, s);
	/* Open for this sample only: a process forked meanwhile would inherit
	 * the socket (the clients are forked before the first sample, and a
	 * server's processes per connection by a server process of its own). */
	struct taskstats_sock ticks = { .fd = -1 };
	if (c->taskstats)
		taskstats_open(&ticks);
	struct sort_ctx sc = { s, &ticks };
	/* The walk over every task's /proc files is the sampling's own cost,
	 * on the driver's thread at the end (tenths of a second at 20,000
	 * tasks): the driver is read on the interval's side of it. */
	if (end)
		add_task(&s->harness, &ticks, getpid(), driver_tid);
	proc_run_tasks(client_tids, n, driver_tid, sort_task, &sc);
	if (!end)
		add_task(&s->harness, &ticks, getpid(), driver_tid);
	taskstats_close(&ticks);
	/* The main thread's reaped children are client processes, counted as
	 * clients' where they are counted at all. */
	s->harness.reaped_user_s = s->harness.reaped_sys_s = 0;
	const struct task_times *cl = &s->clients, *sv = &s->servers;
	if (c->from_proc[PERF_TASK_CLOCK])
		s->perf[PERF_TASK_CLOCK] = cl->exec_ns + sv->exec_ns;
	if (c->from_proc[PERF_CONTEXT_SWITCHES])
		s->perf[PERF_CONTEXT_SWITCHES] = cl->vol_cs + cl->invol_cs + sv->vol_cs + sv->invol_cs;
	if (c->from_proc[PERF_CPU_MIGRATIONS])
		s->perf[PERF_CPU_MIGRATIONS] = cl->migrations + sv->migrations;
}
