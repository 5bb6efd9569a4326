/* --trace's user side: loads the BPF programs (trace.bpf.c, through the
 * skeleton bpftool made of them), starts the sampler on every CPU, tells
 * them the run's tasks and the execute phase's bounds, and sums their
 * per-CPU totals at the end. */
#include "config.h"
#include "trace.h"
#include "procfs.h"
#include "trace.skel.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <linux/perf_event.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#ifndef PIDFD_THREAD
#define PIDFD_THREAD O_EXCL
#endif
#ifndef CAP_PERFMON
#define CAP_PERFMON 38
#endif
#ifndef CAP_BPF
#define CAP_BPF 39
#endif

static bool has_cap(const struct __user_cap_data_struct data[2], int cap)
{
	return data[cap / 32].effective & (1u << (cap % 32));
}

int trace_check_privilege(struct errbuf *err)
{
	struct __user_cap_header_struct head = { .version = _LINUX_CAPABILITY_VERSION_3, .pid = 0 };
	struct __user_cap_data_struct data[2];

	if (syscall(SYS_capget, &head, data) < 0)
		return err_errno(err, "--trace: reading this process's capabilities");
	if (has_cap(data, CAP_SYS_ADMIN) || (has_cap(data, CAP_BPF) && has_cap(data, CAP_PERFMON)))
		return 0;
	return err_set(err, "--trace loads BPF programs, which needs root (or CAP_BPF and "
		       "CAP_PERFMON): run tbench as root, or without --trace");
}

static uint64_t monotonic_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* libbpf's own messages go nowhere unless asked for: its failures come
 * back as return values, said in our words. */
static int libbpf_message(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	if (!getenv("TBENCH_TRACE_DEBUG") || level == LIBBPF_DEBUG)
		return 0;
	return vfprintf(stderr, fmt, ap);
}

/* The sampler on each CPU: a software clock event that runs on_sample
 * TRACE_SAMPLE_HZ times a second. An offline CPU has none. */
static int start_samplers(struct trace *t, struct errbuf *err)
{
	struct perf_event_attr attr = {
		.type = PERF_TYPE_SOFTWARE, .size = sizeof(attr), .config = PERF_COUNT_SW_CPU_CLOCK,
		.sample_period = 1000000000ull / TRACE_SAMPLE_HZ,
	};

	t->ncpus = libbpf_num_possible_cpus();
	if (t->ncpus <= 0)
		return err_set(err, "--trace: the number of possible CPUs is not known");
	t->samplers = calloc((size_t)t->ncpus, sizeof(*t->samplers));
	if (!t->samplers)
		return err_set(err, "--trace: out of memory for %d CPUs' samplers", t->ncpus);
	for (int cpu = 0; cpu < t->ncpus; cpu++) {
		int fd = (int)syscall(SYS_perf_event_open, &attr, -1, cpu, -1, PERF_FLAG_FD_CLOEXEC);
		if (fd < 0 && errno == ENODEV)
			continue;
		if (fd < 0)
			return err_errno(err, "--trace: perf_event_open of CPU %d's sampling clock", cpu);
		t->samplers[cpu] = bpf_program__attach_perf_event(t->skel->progs.on_sample, fd);
		if (!t->samplers[cpu]) {
			close(fd);
			return err_errno(err, "--trace: attaching the sampler to CPU %d", cpu);
		}
	}
	return 0;
}

static int load(struct trace *t, bool syscalls, struct errbuf *err)
{
	t->skel = trace_bpf__open();
	if (!t->skel)
		return err_errno(err, "--trace: opening the BPF programs failed");
	t->skel->rodata->follow_syscalls = syscalls;
	bpf_program__set_autoload(t->skel->progs.on_sys_enter, syscalls);
	bpf_program__set_autoload(t->skel->progs.on_sys_exit, syscalls);
	if (trace_bpf__load(t->skel) < 0)
		return err_errno(err, "--trace: loading the BPF programs failed (a kernel without "
				 "BTF or BPF, or a lockdown? TBENCH_TRACE_DEBUG=1 shows libbpf's log)");
	int rc = trace_bpf__attach(t->skel);
	if (rc < 0) {
		errno = -rc;
		return err_errno(err, "--trace: attaching the BPF programs to the scheduler's tracepoints failed");
	}
	return start_samplers(t, err);
}

int trace_open(struct trace *t, bool syscalls, struct errbuf *err)
{
	memset(t, 0, sizeof(*t));
	if (trace_check_privilege(err) < 0)
		return -1;
	libbpf_set_print(libbpf_message);
	t->syscalls = syscalls;
	if (load(t, syscalls, err) < 0) {
		trace_close(t);
		return -1;
	}
	return 0;
}

struct track_ctx {
	struct trace *t;
	int slot_fd, task_fd;
	int failed;              /* errno of the first failed insert */
};

/* A descriptor of the thread tid (task storage is keyed by one). */
static int thread_pidfd(pid_t tid)
{
	int fd = (int)syscall(SYS_pidfd_open, tid, PIDFD_THREAD);

	/* Before Linux 6.9 only a process's leader has one. */
	if (fd < 0 && errno == EINVAL)
		fd = (int)syscall(SYS_pidfd_open, tid, 0);
	return fd;
}

/* Gives the task the next slot: its record there, the slot in its storage. */
static void track_task(pid_t pid, pid_t tid, bool client, void *ctx)
{
	struct track_ctx *c = ctx;
	__u32 slot = c->t->skel->bss->slots_used;
	struct trace_task task = {
		.nr = TRACE_SYSCALL_UNKNOWN, .side = client ? TRACE_SIDE_CLIENT : TRACE_SIDE_SERVER,
		.state = TRACE_UNSEEN, .in_syscall = 2,
	};
	int fd;

	(void)pid;
	if (slot >= TRACE_MAX_TASKS) {
		c->failed = c->failed ? c->failed : ENOSPC;
		return;
	}
	if ((fd = thread_pidfd(tid)) < 0) {
		if (errno != ESRCH && !c->failed)   /* ESRCH: gone already, nothing to count */
			c->failed = errno;
		return;
	}
	int rc = bpf_map_update_elem(c->task_fd, &slot, &task, BPF_ANY);
	if (rc == 0)
		rc = bpf_map_update_elem(c->slot_fd, &fd, &slot, BPF_NOEXIST);
	if (rc < 0 && errno != EEXIST && !c->failed)
		c->failed = errno;
	close(fd);
	if (rc < 0)
		return;
	c->t->skel->bss->slots_used = slot + 1;
	c->t->tasks[task.side]++;
}

int trace_track(struct trace *t, const pid_t *client_tids, unsigned n, pid_t driver_tid,
		struct errbuf *err)
{
	struct track_ctx c = { t, bpf_map__fd(t->skel->maps.task_slot), bpf_map__fd(t->skel->maps.tasks), 0 };

	if (proc_run_tasks(client_tids, n, driver_tid, track_task, &c) < 0)
		return err_set(err, "--trace: out of memory listing the run's tasks");
	if (c.failed) {
		errno = c.failed;
		return err_errno(err, "--trace: adding the run's tasks to the BPF map (more than %d?)",
				 TRACE_MAX_TASKS);
	}
	return 0;
}

/* Element key of a per-CPU array, summed over every CPU into out, which
 * holds `words` __u64s (every value of these maps is made of them). */
static int sum_percpu(int fd, __u32 key, __u64 *out, size_t words, __u64 *buf, int cpus)
{
	size_t stride = (words * sizeof(__u64) + 7) / 8;

	if (bpf_map_lookup_elem(fd, &key, buf) < 0)
		return -1;
	for (int c = 0; c < cpus; c++)
		for (size_t w = 0; w < words; w++)
			out[w] += buf[c * stride + w];
	return 0;
}

/* The programs' runs and sampled time so far, each summed over the CPUs;
 * false when they could not be read (the probes line is then left out). */
static bool read_probes(const struct trace *t, struct trace_prog_time out[TRACE_PROGS])
{
	int fd = bpf_map__fd(t->skel->maps.probes), cpus = libbpf_num_possible_cpus();
	__u64 *buf = cpus > 0 ? calloc((size_t)cpus, sizeof(struct trace_prog_time)) : NULL;
	bool ok = buf != NULL;

	memset(out, 0, TRACE_PROGS * sizeof(*out));
	for (__u32 k = 0; ok && k < TRACE_PROGS; k++)
		ok = sum_percpu(fd, k, (__u64 *)&out[k], sizeof(*out) / sizeof(__u64), buf, cpus) == 0;
	free(buf);
	return ok;
}

/* Each program's mean timed run times its runs in the phase. */
static bool probe_estimate(const struct trace *t, double *ns)
{
	bool any = false;

	*ns = 0;
	if (!t->probe_read)
		return false;
	for (int k = 0; k < TRACE_PROGS; k++) {
		const struct trace_prog_time *a = &t->probe_on[k], *b = &t->probe_off[k];
		__u64 runs = b->runs - a->runs, timed = b->timed - a->timed;
		if (timed == 0)
			continue;
		*ns += (double)(b->timed_ns - a->timed_ns) / (double)timed * (double)runs;
		any = true;
	}
	return any;
}

void trace_on(struct trace *t)
{
	t->probe_read = read_probes(t, t->probe_on);
	t->on_ns = monotonic_ns();
	t->skel->bss->t_on = t->on_ns;
	t->on = true;
}

void trace_off(struct trace *t)
{
	if (!t->on || t->off)
		return;
	t->off_ns = monotonic_ns();
	t->skel->bss->t_off = t->off_ns;
	t->off = true;
	t->probe_read = read_probes(t, t->probe_off) && t->probe_read;
}

static int read_totals(struct trace *t, struct trace_result *r, int cpus, __u64 *buf)
{
	int fd = bpf_map__fd(t->skel->maps.totals);

	if (sum_percpu(fd, 0, (__u64 *)&r->totals, sizeof(r->totals) / sizeof(__u64), buf, cpus) < 0)
		return -1;
	fd = bpf_map__fd(t->skel->maps.syscalls);
	for (__u32 k = 0; k < TRACE_SIDES * TRACE_SYSCALLS; k++)
		if (sum_percpu(fd, k, (__u64 *)&r->syscall[k / TRACE_SYSCALLS][k % TRACE_SYSCALLS],
			       sizeof(struct trace_syscall) / sizeof(__u64), buf, cpus) < 0)
			return -1;
	fd = bpf_map__fd(t->skel->maps.wake_hist);
	for (__u32 k = 0; k < TRACE_SIDES * TRACE_HIST; k++)
		if (sum_percpu(fd, k, &r->wake_hist[k / TRACE_HIST][k % TRACE_HIST], 1, buf, cpus) < 0)
			return -1;
	fd = bpf_map__fd(t->skel->maps.samples);
	for (__u32 k = 0; k < TRACE_SIDES * TRACE_SAMPLE_SLOTS; k++)
		if (sum_percpu(fd, k, &r->samples[k / TRACE_SAMPLE_SLOTS][k % TRACE_SAMPLE_SLOTS], 1,
			       buf, cpus) < 0)
			return -1;
	return 0;
}

static double sample_total(const __u64 n[TRACE_SAMPLE_SLOTS])
{
	double total = 0;

	for (int k = 0; k < TRACE_SAMPLE_SLOTS; k++)
		total += (double)n[k];
	return total;
}

/* Without the system call programs: each side's on-CPU time split into
 * user space and each call by its samples; with none, the kernel outside
 * calls holds it all. */
static void split_by_samples(struct trace_result *r)
{
	for (int side = 0; side < TRACE_SIDES; side++) {
		struct trace_side *s = &r->totals.side[side];
		const __u64 *n = r->samples[side];
		double total = sample_total(n);
		if (total == 0) {
			r->syscall[side][TRACE_SYSCALL_UNKNOWN].ns = s->cpu_ns;
			continue;
		}
		s->user_ns = (__u64)((double)s->cpu_ns * (double)n[TRACE_SAMPLE_USER] / total);
		for (int nr = 0; nr < TRACE_SYSCALLS; nr++)
			r->syscall[side][nr].ns = (__u64)((double)s->cpu_ns * (double)n[nr] / total);
	}
}

/* With them: the time between a call's exit and the next one's entry is
 * not all user space. The kernel's way out of a call after its exit
 * tracepoint (a preemption there among it) and in before its entry one
 * are there too. User space is what the samples found there; the rest is
 * the kernel's, outside calls. */
static void user_from_samples(struct trace_result *r)
{
	for (int side = 0; side < TRACE_SIDES; side++) {
		struct trace_side *s = &r->totals.side[side];
		double total = sample_total(r->samples[side]);
		if (total == 0)
			continue;
		__u64 user = (__u64)((double)s->cpu_ns * (double)r->samples[side][TRACE_SAMPLE_USER] / total);
		if (user >= s->user_ns)
			continue;
		r->syscall[side][TRACE_SYSCALL_UNKNOWN].ns += s->user_ns - user;
		s->user_ns = user;
	}
}

/* The part of [from, off] after on. */
static uint64_t open_part(const struct trace *t, uint64_t from)
{
	if (from < t->on_ns)
		from = t->on_ns;
	return t->off_ns > from ? t->off_ns - from : 0;
}

/* A task still there when the trace went off: its state's time up to off. */
static void close_task(const struct trace *t, const struct trace_task *task, struct trace_result *r)
{
	struct trace_side *s = &r->totals.side[task->side < TRACE_SIDES ? task->side : 0];

	switch (task->state) {
	case TRACE_RUNNING:
		s->cpu_ns += open_part(t, task->seg);
		if (!t->syscalls)
			break;
		if (task->in_syscall == 0)
			s->user_ns += open_part(t, task->seg);
		else
			r->syscall[task->side][task->in_syscall == 1 ? task->nr : TRACE_SYSCALL_UNKNOWN].ns +=
				open_part(t, task->seg);
		break;
	case TRACE_RUNQ:
		s->runq_ns += open_part(t, task->since);
		break;
	case TRACE_BLOCKED:
	case TRACE_UNSEEN:   /* no event in the whole window: asleep throughout */
		s->blocked_ns += open_part(t, task->since);
		break;
	default:
		break;
	}
}

static int close_open_tasks(const struct trace *t, struct trace_result *r)
{
	int fd = bpf_map__fd(t->skel->maps.tasks);
	__u32 used = t->skel->bss->slots_used;
	struct trace_task task;

	for (__u32 slot = 0; slot < used && slot < TRACE_MAX_TASKS; slot++) {
		if (bpf_map_lookup_elem(fd, &slot, &task) < 0)
			return -1;
		close_task(t, &task, r);
	}
	return 0;
}

int trace_collect(struct trace *t, struct trace_result *r, struct errbuf *err)
{
	int cpus = libbpf_num_possible_cpus();

	memset(r, 0, sizeof(*r));
	if (!t->on || !t->off)
		return 0;
	if (cpus <= 0)
		return err_set(err, "--trace: the number of possible CPUs is not known");
	/* Room for the largest value, one per CPU. */
	__u64 *buf = calloc((size_t)cpus, sizeof(struct trace_totals));
	if (!buf)
		return err_set(err, "--trace: out of memory for %d CPUs' totals", cpus);
	int rc = read_totals(t, r, cpus, buf);
	free(buf);
	if (rc < 0 || close_open_tasks(t, r) < 0)
		return err_errno(err, "--trace: reading the BPF maps");
	r->syscalls_followed = t->syscalls;
	if (t->syscalls)
		user_from_samples(r);
	else
		split_by_samples(r);
	memcpy(r->tasks, t->tasks, sizeof(r->tasks));
	r->on_ns = t->on_ns;
	r->off_ns = t->off_ns;
	r->wall_s = (t->off_ns - t->on_ns) / 1e9;
	r->probe_known = probe_estimate(t, &r->probe_ns);
	r->known = true;
	return 0;
}

void trace_close(struct trace *t)
{
	for (int cpu = 0; t->samplers && cpu < t->ncpus; cpu++)
		bpf_link__destroy(t->samplers[cpu]);
	free(t->samplers);
	t->samplers = NULL;
	if (t->skel)
		trace_bpf__destroy(t->skel);
	t->skel = NULL;
}
