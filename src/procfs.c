#include "config.h"
#include "procfs.h"

#include <stdio.h>
#include <string.h>

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

int proc_loadavg_read(double *one_minute)
{
	FILE *f = fopen("/proc/loadavg", "re");

	if (!f)
		return -1;
	int n = fscanf(f, "%lf", one_minute);
	fclose(f);
	return n == 1 ? 0 : -1;
}
