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
