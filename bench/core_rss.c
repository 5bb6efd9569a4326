/* bench_core's resident memory: the real tbench binary at several client
 * counts, its peak (VmHWM) and its process tree's Rss and Pss. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "clock.h"
#include "core.h"
#include "stats_proc.h"
#include "util.h"

/* ---- resident memory ----------------------------------------------------- */

static long status_kib(pid_t pid, const char *file, const char *key)
{
	char path[64], line[256];
	size_t klen = strlen(key);
	long v = -1;

	snprintf(path, sizeof(path), "/proc/%d/%s", (int)pid, file);
	FILE *fp = fopen(path, "r");
	if (!fp)
		return -1;
	while (fgets(line, sizeof(line), fp))
		if (strncmp(line, key, klen) == 0) {
			v = strtol(line + klen, NULL, 10);
			break;
		}
	fclose(fp);
	return v;
}

/* Rss and Pss summed over root and every process below it (KiB). */
static void tree_memory(pid_t root, long *rss, long *pss, unsigned *procs)
{
	struct errbuf err;
	size_t n;
	struct proc_entry *v = proc_tree(root, &n, &err);

	*rss = *pss = 0;
	*procs = 0;
	if (!v)
		return;   /* gone: it ended between two samples */
	for (size_t i = 0; i < n; i++) {
		if (!v[i].in_tree)
			continue;
		long r = status_kib(v[i].pid, "smaps_rollup", "Rss:");
		long p = status_kib(v[i].pid, "smaps_rollup", "Pss:");
		if (r > 0)
			*rss += r;
		if (p > 0)
			*pss += p;
		(*procs)++;
	}
	free(v);
}

struct mem {
	long maxrss, rss, pss, hwm;
	unsigned procs;
};

static struct mem measure_rss(const struct settings *s, const char *backend, unsigned n,
			      int processes)
{
	char ncl[16], secs[32];
	struct mem m = { 0 };

	snprintf(ncl, sizeof(ncl), "%u", n);
	snprintf(secs, sizeof(secs), "%g", s->rss_secs);
	/* Closed by a successful exec: before it, /proc/PID is this process's copy. */
	int sync[2];
	if (pipe2(sync, O_CLOEXEC) < 0)
		die("pipe2: %s", strerror(errno));
	pid_t pid = fork();
	if (pid < 0)
		die("fork: %s", strerror(errno));
	if (pid == 0) {
		close(sync[0]);
		int fd = open("/dev/null", O_WRONLY);
		if (fd >= 0)
			dup2(fd, STDOUT_FILENO);
		const char *argv[] = { s->tbench, "-b", backend, ncl, "-t", secs, "--warmup", "1",
				       "-q", processes ? "--processes" : "--threads", NULL };
		execv(s->tbench, (char *const *)argv);
		_exit(127);
	}
	close(sync[1]);
	char c;
	while (read(sync[0], &c, 1) < 0 && errno == EINTR)
		;
	close(sync[0]);
	/* VmHWM, polled until the process is gone: wait4's ru_maxrss would
	 * also count this (big) process's pages the child had before exec().
	 * The whole tree's Rss and Pss are summed every 250 ms; the largest
	 * sums are kept (a fixed sampling time misses the peak under load). */
	uint64_t next_tree = now_ns();
	int status;
	struct rusage ru;
	for (;;) {
		pid_t w = wait4(pid, &status, WNOHANG, &ru);
		if (w == pid)
			break;
		if (w < 0 && errno != EINTR)
			die("wait4: %s", strerror(errno));
		long hwm = status_kib(pid, "status", "VmHWM:");
		if (hwm > m.hwm)
			m.hwm = hwm;
		if (now_ns() >= next_tree) {
			long rss_sum, pss_sum;
			unsigned procs;
			tree_memory(pid, &rss_sum, &pss_sum, &procs);
			if (pss_sum > m.pss) {
				m.rss = rss_sum;
				m.pss = pss_sum;
				m.procs = procs;
			}
			next_tree = now_ns() + 250000000u;
		}
		sleep_ns(20000000);
	}
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		/* Seen under heavy outside load: the driver's 2 s stop grace ran out. */
		fprintf(stderr, "bench_core: %s -b %s %u%s failed (status %d)\n", s->tbench,
			backend, n, processes ? " --processes" : "", status);
		m.hwm = m.pss = -1;
	}
	m.maxrss = ru.ru_maxrss;
	return m;
}

void rss(const struct settings *s)
{
	static const char *const be[] = { "nop", "pipe" };
	struct mem m[2][2][MAX_LIST];

	for (int proc = 0; proc <= s->rss_processes; proc++)
		for (unsigned b = 0; b < 2; b++)
			for (unsigned c = 0; c < s->n_rss; c++) {
				struct mem *x = &m[proc][b][c];
				if (s->from_csv) {
					char name[32];
					snprintf(name, sizeof(name), "%s%s", be[b], proc ? "-processes" : "");
					const struct row *r = find_row("rss", name, s->rss_clients[c], 1, NULL);
					if (!r || r->n_v < 4)
						die("--from-csv: no rss row for %s %u", name, s->rss_clients[c]);
					*x = (struct mem){ (long)r->v[0], (long)r->v[2], (long)r->v[3],
							   (long)r->v[1], 0 };
					continue;
				}
				for (int attempt = 0; attempt < 3; attempt++) {
					*x = measure_rss(s, be[b], s->rss_clients[c], proc);
					if (x->hwm >= 0)
						break;
				}
				fprintf(stderr, "rss %-4s %3u clients%s: VmHWM %ld KiB, tree rss %ld pss %ld KiB in %u processes\n",
					be[b], s->rss_clients[c], proc ? " --processes" : "",
					x->hwm, x->rss, x->pss, x->procs);
				if (s->csv)
					fprintf(s->csv, "rss,%s%s,%u,1,kib,%ld,%ld,%ld,%ld\n", be[b],
						proc ? "-processes" : "", s->rss_clients[c],
						x->maxrss, x->hwm, x->rss, x->pss);
			}
	if (!s->md || s->n_rss < 2)
		return;
	unsigned lo = s->rss_clients[0], hi = s->rss_clients[s->n_rss - 1];
	fprintf(s->md, "## Resident memory\n\n"
		"`tbench -b B N -t %g --warmup 1 -q`, default loadfile, run as a child of "
		"bench_core. Threads (the default, and what the target is for): peak resident "
		"memory of the process, VmHWM from /proc/PID/status polled every 20 ms until it "
		"exits (not wait4's ru_maxrss, which would include the parent's pages from "
		"before exec); at 1 client the peak is set by start-up (the mapped 3.3 MB "
		"loadfile), which makes the per-client figure a few KiB low. --processes (for "
		"information): Pss summed over the whole process tree (smaps_rollup) every 250 ms, "
		"the largest sum kept, so pages shared after fork() count once. "
		"Per extra client = (mem(%u) − mem(%u)) / %u; target ≤ 256 KiB.\n\n| backend | mode |",
		s->rss_secs, hi, lo, hi - lo);
	for (unsigned c = 0; c < s->n_rss; c++)
		fprintf(s->md, " %u clients |", s->rss_clients[c]);
	fprintf(s->md, " per extra client KiB | target | met? |\n|---|---|");
	for (unsigned c = 0; c < s->n_rss + 3; c++)
		fprintf(s->md, "---:|");
	fputc('\n', s->md);
	/* kind 0: threads VmHWM (the target), 1: processes, largest tree Pss */
	for (int kind = 0; kind <= s->rss_processes; kind++)
		for (unsigned b = 0; b < 2; b++) {
			static const char *const what[] = { "threads, peak (VmHWM) KiB",
				"--processes, tree Pss (largest sample) KiB" };
			const struct mem *v = m[kind][b];
			long val[MAX_LIST];
			for (unsigned c = 0; c < s->n_rss; c++)
				val[c] = kind == 0 ? v[c].hwm : v[c].pss;
			fprintf(s->md, "| %s | %s |", be[b], what[kind]);
			for (unsigned c = 0; c < s->n_rss; c++)
				fprintf(s->md, " %ld |", val[c]);
			double per = (double)(val[s->n_rss - 1] - val[0]) / (hi - lo);
			fprintf(s->md, " %.1f | %s | %s |\n", per, kind == 0 ? "≤ 256" : "(info)",
				per <= 256 ? "yes" : kind ? "no" : "**no**");
		}
	fputc('\n', s->md);
}
