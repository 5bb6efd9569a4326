#include "config.h"
#include "procfs.h"

#include <ctype.h>
#include <dirent.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

int proc_stat_read(const char *path, struct proc_stat *st)
{
	char buf[1024];
	FILE *f = fopen(path, "re");
	int ppid;

	if (!f)
		return -1;
	size_t n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = 0;
	const char *p = strrchr(buf, ')');
	if (!p || sscanf(p + 1, " %c %d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu %llu %llu",
			 &st->state, &ppid, &st->utime, &st->stime, &st->cutime, &st->cstime) != 6)
		return -1;
	st->ppid = (pid_t)ppid;
	return 0;
}

int proc_system_read(struct system_times *t)
{
	char line[512];
	unsigned long long v[8] = { 0 };
	FILE *f = fopen("/proc/stat", "re");
	int found = 0;

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		if (strncmp(line, "cpu ", 4) == 0)
			/* user nice system idle iowait irq softirq steal (guest is in user) */
			found += sscanf(line + 4, "%llu %llu %llu %llu %llu %llu %llu %llu", &v[0], &v[1],
					&v[2], &v[3], &v[4], &v[5], &v[6], &v[7]) == 8;
		else
			found += sscanf(line, "procs_running %u", &t->procs_running) == 1;
	}
	fclose(f);
	t->busy = v[0] + v[1] + v[2];
	t->idle = v[3] + v[4];
	t->irq = v[5] + v[6];
	t->steal = v[7];
	return found == 2 ? 0 : -1;
}

struct proc_entry {
	pid_t pid, ppid;
	bool in_tree;
};

static int by_pid(const void *a, const void *b)
{
	pid_t x = ((const struct proc_entry *)a)->pid, y = ((const struct proc_entry *)b)->pid;
	return (x > y) - (x < y);
}

/* Marks root and its descendants in e, sorted by PID; a child can have a
 * lower PID than its parent (PIDs wrap), hence passes until none changes. */
static void mark_tree(struct proc_entry *e, size_t n, pid_t root)
{
	for (bool changed = true; changed;) {
		changed = false;
		for (size_t i = 0; i < n; i++) {
			if (e[i].in_tree)
				continue;
			struct proc_entry key = { .pid = e[i].ppid };
			const struct proc_entry *parent = bsearch(&key, e, n, sizeof(*e), by_pid);
			if (e[i].pid == root || (parent && parent->in_tree))
				changed = e[i].in_tree = true;
		}
	}
}

/* Every process with its parent, sorted by PID; NULL when /proc cannot be read. */
static struct proc_entry *read_processes(size_t *n)
{
	DIR *d = opendir("/proc");
	struct proc_entry *e = NULL;
	size_t max = 0;
	char path[300];
	struct proc_stat st;

	*n = 0;
	for (struct dirent *p; d && (p = readdir(d));) {
		if (!isdigit((unsigned char)p->d_name[0]))
			continue;
		snprintf(path, sizeof(path), "/proc/%s/stat", p->d_name);
		if (proc_stat_read(path, &st) < 0)
			continue;   /* gone already */
		if (*n == max) {
			struct proc_entry *more = realloc(e, (max = max ? 2 * max : 512) * sizeof(*e));
			if (!more)
				break;
			e = more;
		}
		e[(*n)++] = (struct proc_entry){ .pid = (pid_t)atoi(p->d_name), .ppid = st.ppid };
	}
	if (d)
		closedir(d);
	if (e && *n)
		qsort(e, *n, sizeof(*e), by_pid);
	return d ? e : NULL;
}

/* Appends the tasks of one process with their run time and run-queue wait. */
static int add_tasks(pid_t pid, struct task_ns_list *out, size_t *max)
{
	char path[320];

	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	DIR *d = opendir(path);
	for (struct dirent *t; d && (t = readdir(d));) {
		unsigned long long run, wait;
		if (!isdigit((unsigned char)t->d_name[0]))
			continue;
		snprintf(path, sizeof(path), "/proc/%d/task/%s/schedstat", (int)pid, t->d_name);
		FILE *f = fopen(path, "re");
		int got = f ? fscanf(f, "%llu %llu", &run, &wait) : 0;
		if (f)
			fclose(f);
		if (got != 2)
			continue;
		if (out->n == *max) {
			struct task_ns *more = realloc(out->t, (*max = *max ? 2 * *max : 1024) * sizeof(*more));
			if (!more) {
				closedir(d);
				return -1;
			}
			out->t = more;
		}
		out->t[out->n++] = (struct task_ns){ .tid = (pid_t)atoi(t->d_name), .ns = run + wait };
	}
	if (d)
		closedir(d);
	return 0;
}

static int by_tid(const void *a, const void *b)
{
	pid_t x = ((const struct task_ns *)a)->tid, y = ((const struct task_ns *)b)->tid;
	return (x > y) - (x < y);
}

int proc_outside_tasks(pid_t root, struct task_ns_list *out)
{
	size_t n, max = 0;
	struct proc_entry *e = read_processes(&n);

	*out = (struct task_ns_list){ 0 };
	if (!e)
		return -1;
	mark_tree(e, n, root);
	/* Kernel threads (kthreadd's) are left out: much of their work, softirq
	 * and writeback, is done for the run. */
	mark_tree(e, n, 2);
	for (size_t i = 0; i < n; i++)
		if (!e[i].in_tree && add_tasks(e[i].pid, out, &max) < 0) {
			free(e);
			return -1;
		}
	free(e);
	if (out->n)
		qsort(out->t, out->n, sizeof(*out->t), by_tid);
	return 0;
}

uint64_t proc_tasks_grew(const struct task_ns_list *before, const struct task_ns_list *after)
{
	uint64_t grew = 0;

	for (size_t i = 0; i < after->n; i++) {
		const struct task_ns *b = before->n ? bsearch(&after->t[i], before->t, before->n,
							       sizeof(*before->t), by_tid) : NULL;
		if (!b)
			grew += after->t[i].ns;   /* began after the first look */
		else if (after->t[i].ns > b->ns)
			grew += after->t[i].ns - b->ns;
	}
	return grew;
}

int proc_loadavg_read(double *one_minute)
{
	FILE *f = fopen("/proc/loadavg", "re");

	if (!f)
		return -1;
	int n = fscanf(f, "%lf", one_minute);
	fclose(f);
	return n == 1 ? 0 : -1;
}

static bool is_client(pid_t tid, const pid_t *clients, unsigned n)
{
	for (unsigned i = 0; i < n; i++)
		if (clients[i] == tid)
			return true;
	return false;
}

/* Calls fn for every task (thread) of process pid. */
static void for_each_task(pid_t pid, void (*fn)(pid_t pid, pid_t tid, void *ctx), void *ctx)
{
	char path[64];
	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	DIR *d = opendir(path);

	if (!d)
		return;
	for (struct dirent *e; (e = readdir(d));)
		if (isdigit((unsigned char)e->d_name[0]))
			fn(pid, (pid_t)atoi(e->d_name), ctx);
	closedir(d);
}

struct tree {
	pid_t *pid;
	unsigned n, max;
};

/* Appends the children of one task (/proc/PID/task/TID/children). */
static void add_children(pid_t pid, pid_t tid, void *ctx)
{
	struct tree *t = ctx;
	char path[96];
	int child;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/children", (int)pid, (int)tid);
	FILE *f = fopen(path, "r");
	while (f && t->n < t->max && fscanf(f, "%d", &child) == 1)
		t->pid[t->n++] = (pid_t)child;
	if (f)
		fclose(f);
}

struct sort_tasks {
	const pid_t *clients;
	unsigned n;
	pid_t driver, self;
	void (*fn)(pid_t pid, pid_t tid, bool client, void *ctx);
	void *ctx;
};

/* The driver's thread and the caller's own are neither clients nor servers. */
static void sort_task(pid_t pid, pid_t tid, void *ctx)
{
	struct sort_tasks *t = ctx;

	if (tid != t->driver && tid != t->self)
		t->fn(pid, tid, is_client(tid, t->clients, t->n), t->ctx);
}

int proc_run_tasks(const pid_t *clients, unsigned n, pid_t driver,
		   void (*fn)(pid_t pid, pid_t tid, bool client, void *ctx), void *ctx)
{
	struct tree tree = { malloc((1 << 17) * sizeof(pid_t)), 0, 1 << 17 };
	struct sort_tasks sort = { clients, n, driver, (pid_t)syscall(SYS_gettid), fn, ctx };

	if (!tree.pid)
		return -1;
	tree.pid[tree.n++] = getpid();
	for (unsigned i = 0; i < tree.n; i++)
		for_each_task(tree.pid[i], add_children, &tree);
	for (unsigned i = 0; i < tree.n; i++)
		for_each_task(tree.pid[i], sort_task, &sort);
	free(tree.pid);
	return 0;
}
