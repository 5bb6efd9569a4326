/* CPU time of a process tree from /proc; see stats_proc.h. */
#include "config.h"
#include "stats_proc.h"
#include "procfs.h"
#include "table.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Its parent and its CPU ticks, its own and its reaped children's. 0, or
 * -1 when the process is gone or the line is not Linux's. */
static int read_stat(pid_t pid, struct proc_entry *e)
{
	char path[64];
	struct proc_stat st;

	snprintf(path, sizeof(path), "/proc/%ld/stat", (long)pid);
	if (proc_stat_read(path, &st) < 0)
		return -1;
	e->pid = pid;
	e->ppid = st.ppid;
	e->user = st.utime + st.cutime;
	e->system = st.stime + st.cstime;
	e->in_tree = 0;
	return 0;
}

/* Every process /proc lists; *n of them. */
static struct proc_entry *all_processes(size_t *n, struct errbuf *err)
{
	DIR *d = opendir("/proc");
	struct proc_entry *v = NULL;
	size_t cap = 0;
	struct dirent *de;

	*n = 0;
	if (!d) {
		err_errno(err, "/proc");
		return NULL;
	}
	while ((de = readdir(d)) != NULL) {
		if (!isdigit((unsigned char)de->d_name[0]))
			continue;
		if (*n == cap)
			v = xrealloc(v, (cap = cap ? 2 * cap : 256) * sizeof(*v));
		if (read_stat((pid_t)strtol(de->d_name, NULL, 10), &v[*n]) == 0)
			(*n)++;
	}
	closedir(d);
	return v ? v : xrealloc(NULL, sizeof(*v));
}

struct proc_entry *proc_tree(pid_t root, size_t *n, struct errbuf *err)
{
	struct proc_entry *v = all_processes(n, err);
	int found = 0;

	if (!v)
		return NULL;
	for (size_t i = 0; i < *n; i++)
		if (v[i].pid == root)
			v[i].in_tree = found = 1;
	if (!found) {
		free(v);
		err_set(err, "no process %ld in /proc", (long)root);
		return NULL;
	}
	/* A child can be listed before its parent: mark until nothing changes. */
	for (int changed = 1; changed;) {
		changed = 0;
		for (size_t i = 0; i < *n; i++)
			for (size_t j = 0; j < *n && !v[i].in_tree; j++)
				if (v[j].in_tree && v[i].ppid == v[j].pid)
					v[i].in_tree = changed = 1;
	}
	return v;
}

int proc_tree_cpu(pid_t root, double cpu_s[2], struct errbuf *err)
{
	long hz = sysconf(_SC_CLK_TCK);
	size_t n;
	struct proc_entry *v = proc_tree(root, &n, err);
	unsigned long long user = 0, system = 0;

	if (!v)
		return -1;
	for (size_t i = 0; i < n; i++)
		if (v[i].in_tree) {
			user += v[i].user;
			system += v[i].system;
		}
	free(v);
	if (hz <= 0)
		return err_set(err, "sysconf(_SC_CLK_TCK): no clock tick");
	cpu_s[0] = (double)user / (double)hz;
	cpu_s[1] = (double)system / (double)hz;
	return 0;
}
