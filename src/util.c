#include "config.h"
#include "util.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

int err_set(struct errbuf *e, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(e->msg, sizeof(e->msg), fmt, ap);
	va_end(ap);
	return -1;
}

int err_errno(struct errbuf *e, const char *fmt, ...)
{
	int saved = errno;
	va_list ap;

	va_start(ap, fmt);
	int n = vsnprintf(e->msg, sizeof(e->msg), fmt, ap);
	va_end(ap);
	if (n >= 0 && (size_t)n < sizeof(e->msg))
		snprintf(e->msg + n, sizeof(e->msg) - n, ": %s",
			 saved ? strerror(saved) : "connection closed by peer");
	errno = saved;
	return -1;
}

void sleep_ns(uint64_t ns)
{
	struct timespec ts = { (time_t)(ns / 1000000000u), (long)(ns % 1000000000u) };

	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

void iov_advance(struct iovec **v, int *nv, size_t n)
{
	while (*nv > 0 && n >= (*v)->iov_len) {
		n -= (*v)->iov_len;
		(*v)++;
		(*nv)--;
	}
	if (*nv > 0) {
		(*v)->iov_base = (char *)(*v)->iov_base + n;
		(*v)->iov_len -= n;
	}
}

int write_full(int fd, const void *buf, size_t len)
{
	const char *p = buf;

	while (len > 0) {
		ssize_t n = write(fd, p, len);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

int read_full(int fd, void *buf, size_t len)
{
	char *p = buf;

	while (len > 0) {
		ssize_t n = read(fd, p, len);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		if (n == 0) {
			errno = 0;
			return -1;
		}
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

int parse_long_range(const char *s, long min, long max, long *out)
{
	char *end;

	/* strtol would skip leading blanks: " 7" is not what anyone typed on purpose. */
	if (!s || !(isdigit((unsigned char)*s) || *s == '-' || *s == '+'))
		return -1;
	errno = 0;
	long v = strtol(s, &end, 10);
	if (errno || end == s || *end || v < min || v > max)
		return -1;
	*out = v;
	return 0;
}

char *str_escape(char *out, size_t outlen, const char *s, size_t len, size_t max)
{
	size_t n = 0, i;

	if (outlen < 8)
		return outlen ? (*out = 0, out) : out;
	for (i = 0; i < len && i < max; i++) {
		unsigned char c = (unsigned char)s[i];
		int printable = c >= 0x20 && c < 0x7f;
		if (n + (printable ? 1 : 4) + 4 > outlen)   /* room for "..." and the NUL */
			break;
		if (printable)
			out[n++] = (char)c;
		else
			n += (size_t)snprintf(out + n, outlen - n, "\\x%02x", c);
	}
	if (i < len) {
		memcpy(out + n, "...", 3);
		n += 3;
	}
	out[n] = 0;
	return out;
}

int die_with_parent(pid_t parent, int sig)
{
	/* The check after the prctl closes the race with a parent that died
	 * before it: then we were re-parented and no signal will come. */
	if (prctl(PR_SET_PDEATHSIG, sig) < 0 || getppid() != parent)
		return -1;
	return 0;
}

static volatile sig_atomic_t a_child_ended;

static void on_child_end(int sig)
{
	(void)sig;
	a_child_ended = 1;
}

int watch_child_ends(struct sigaction *old)
{
	struct sigaction sa = { .sa_handler = on_child_end, .sa_flags = SA_RESTART | SA_NOCLDSTOP };

	sigemptyset(&sa.sa_mask);
	a_child_ended = 1;   /* a child started before the handler is looked for once */
	return sigaction(SIGCHLD, &sa, old);
}

bool child_ended(void)
{
	if (!a_child_ended)
		return false;
	a_child_ended = 0;
	return true;
}

#ifndef PR_FUTEX_HASH
#define PR_FUTEX_HASH 78
#define PR_FUTEX_HASH_SET_SLOTS 1
#endif
enum { FUTEX_HASH_MAX_SLOTS = 1 << 17 };   /* a power of two, as the kernel wants */

/* Edit distance (insertions, deletions, substitutions) of A and B, up to
 * NAME_MAX_COMPARED characters each: a row of the dynamic programme at a time. */
enum { NAME_MAX_COMPARED = 64 };

static size_t edit_distance(const char *a, const char *b)
{
	size_t la = strnlen(a, NAME_MAX_COMPARED), lb = strnlen(b, NAME_MAX_COMPARED);
	size_t row[NAME_MAX_COMPARED + 1];

	for (size_t j = 0; j <= lb; j++)
		row[j] = j;
	for (size_t i = 1; i <= la; i++) {
		size_t diag = row[0];
		row[0] = i;
		for (size_t j = 1; j <= lb; j++) {
			size_t up = row[j], best = diag + (a[i - 1] != b[j - 1]);
			if (up + 1 < best)
				best = up + 1;
			if (row[j - 1] + 1 < best)
				best = row[j - 1] + 1;
			diag = up;
			row[j] = best;
		}
	}
	return row[lb];
}

const char *nearest_name(const char *word, const char *const *names, size_t n)
{
	size_t limit = strnlen(word, NAME_MAX_COMPARED) / 3, best_d = SIZE_MAX;
	const char *best = NULL;

	if (limit < 2)
		limit = 2;
	for (size_t i = 0; i < n; i++) {
		size_t d = names[i] ? edit_distance(word, names[i]) : SIZE_MAX;
		if (d < best_d) {
			best_d = d;
			best = names[i];
		}
	}
	return best_d <= limit ? best : NULL;
}

unsigned online_cpus(void)
{
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);

	return cpus > 0 ? (unsigned)cpus : 1;
}

/* Since Linux 6.16 a process's private futexes hash into a table of its
 * own, sized by the CPUs rather than the threads: 16 chains on 2 CPUs,
 * where thousands of sleepers make every wait and wake walk a chain of
 * hundreds under its lock. Below four waiters a CPU the kernel's size is
 * left alone; older kernels (one table for all) refuse the call. */
void futex_hash_for_clients(unsigned clients)
{
	unsigned long waiters = 2UL * clients, slots = 16;

	if (waiters <= 4UL * online_cpus())
		return;
	while (slots < waiters && slots < FUTEX_HASH_MAX_SLOTS)
		slots <<= 1;
	(void)prctl(PR_FUTEX_HASH, PR_FUTEX_HASH_SET_SLOTS, slots, 0UL, 0UL);
}

static int compare_ints(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;

	return (x > y) - (x < y);
}

void close_fds_except(const int *keep, size_t n)
{
	int sorted[16];
	unsigned next = 3;

	if (n > sizeof(sorted) / sizeof(sorted[0]))
		n = sizeof(sorted) / sizeof(sorted[0]);
	memcpy(sorted, keep, n * sizeof(*keep));
	qsort(sorted, n, sizeof(*sorted), compare_ints);
	for (size_t i = 0; i < n; i++) {
		if (sorted[i] < (int)next)
			continue;
		if ((unsigned)sorted[i] > next)
			(void)close_range(next, (unsigned)sorted[i] - 1, 0);
		next = (unsigned)sorted[i] + 1;
	}
	(void)close_range(next, UINT_MAX, 0);   /* Linux 5.9 and later */
}

int raise_fd_limit(unsigned long want, unsigned long *limit, struct errbuf *err)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) < 0)
		return err_errno(err, "reading the limit on open files");
	if (rl.rlim_max != RLIM_INFINITY && want > rl.rlim_max) {
		/* Allowed with CAP_SYS_RESOURCE, up to fs.nr_open; else as it was. */
		struct rlimit more = { want, want };
		if (setrlimit(RLIMIT_NOFILE, &more) == 0)
			rl = more;
	}
	if (rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		if (setrlimit(RLIMIT_NOFILE, &rl) < 0)
			return err_errno(err, "raising the limit on open files to %llu",
					 (unsigned long long)rl.rlim_max);
	}
	*limit = rl.rlim_cur == RLIM_INFINITY ? ULONG_MAX : (unsigned long)rl.rlim_cur;
	return 0;
}

void *xrealloc(void *p, size_t n)
{
	p = realloc(p, n ? n : 1);
	if (!p) {
		fprintf(stderr, "%s: out of memory\n", program_invocation_short_name);
		exit(EXIT_RUN_FAILED);
	}
	return p;
}

char *xstrdup(const char *s)
{
	return strcpy(xrealloc(NULL, strlen(s) + 1), s);
}

char *read_text_file(const char *path, size_t max, size_t *len, struct errbuf *err)
{
	struct stat st;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		err_errno(err, "%s", path);
		return NULL;
	}
	if (fstat(fd, &st) < 0) {
		err_errno(err, "%s", path);
		close(fd);
		return NULL;
	}
	if (!S_ISREG(st.st_mode) || (size_t)st.st_size > max) {
		err_set(err, "%s: not a regular file of at most %zu MiB", path, max >> 20);
		close(fd);
		return NULL;
	}
	char *buf = xrealloc(NULL, (size_t)st.st_size + 1);
	if (read_full(fd, buf, (size_t)st.st_size) < 0) {
		if (errno)
			err_errno(err, "%s: reading", path);
		else
			err_set(err, "%s: the file shrank while it was read", path);
		free(buf);
		close(fd);
		return NULL;
	}
	close(fd);
	*len = (size_t)st.st_size;
	buf[*len] = '\0';
	return buf;
}
