/* Small helpers shared by every part: error buffers, sleeps, full reads
 * and writes that retry on EINTR and short transfers, allocation that
 * cannot fail, whole files read as text. */
#ifndef TBENCH_UTIL_H
#define TBENCH_UTIL_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

/* Exit codes: the run worked, the run failed, bad usage or input. */
enum { EXIT_OK = 0, EXIT_RUN_FAILED = 1, EXIT_USAGE = 2 };

/* Every error message of the suite: written once, where it happens, with
 * err_set() or err_errno(), and handed up; no library code exits or keeps
 * a message of its own. */
enum { ERRBUF_SIZE = 512 };
struct errbuf {
	char msg[ERRBUF_SIZE];
};

__attribute__((format(printf, 2, 3)))
int err_set(struct errbuf *e, const char *fmt, ...);          /* always returns -1 */
__attribute__((format(printf, 2, 3)))
int err_errno(struct errbuf *e, const char *fmt, ...);        /* appends ": strerror(errno)" */

void sleep_ns(uint64_t ns);

struct iovec;
/* Steps an iovec array past `n` bytes that a writev or vmsplice took. */
void iov_advance(struct iovec **v, int *nv, size_t n);

/* 0 on success; -1 with errno set (errno 0: the peer closed, for read_full). */
int write_full(int fd, const void *buf, size_t len);
int read_full(int fd, void *buf, size_t len);

/* A whole decimal number from min to max, nothing before or after it:
 * 0 with *out set, or -1 (out of range, empty, or not a number). */
int parse_long_range(const char *s, long min, long max, long *out);

/* In a child right after fork(): the kernel sends it `sig` when the thread
 * that forked it ends, so no child outlives its parent, even one killed
 * with SIGKILL. -1 if that could not be set, or the parent is gone already. */
int die_with_parent(pid_t parent, int sig);

/* Of NAMES (n of them), the one a mistyped WORD most likely meant: the
 * nearest by edit distance, if within a third of its length (at least 2
 * edits); NULL when none is that near. For "did you mean" in errors. */
const char *nearest_name(const char *word, const char *const *names, size_t n);

/* The CPUs online, 1 if the system cannot say. */
unsigned online_cpus(void);

/* A process about to run `clients` client threads and, maybe, their
 * servers' (two sleepers each on futexes of its own, FUTEX_PRIVATE_FLAG):
 * their hash table is made that large. Best effort. */
void futex_hash_for_clients(unsigned clients);

/* A parent of thousands of children asks the kernel about them only after
 * one ended, as each question costs a system call or a walk of them all.
 * watch_child_ends() sets this process's SIGCHLD handler (the old one into
 * `old` unless NULL; -1 with errno); child_ended() says whether a child
 * ended since its last call or the watch began, clearing first, so an end
 * during the caller's look is seen at its next. */
int watch_child_ends(struct sigaction *old);
bool child_ended(void);

/* Closes every descriptor from 3 up except the n in `keep`: a forked
 * server holds only its own. */
void close_fds_except(const int *keep, size_t n);

/* Raises the soft limit on open descriptors to the hard one, and the hard
 * one to `want` where that is more and allowed. 0 with the limit now in
 * force in *limit; -1 with err. */
int raise_fd_limit(unsigned long want, unsigned long *limit, struct errbuf *err);
/* Descriptors a run holds besides its connections': std streams, pipes,
 * /proc files, logs. */
enum { FDS_RUN_SPARE = 64 };

/* Quotes untrusted text for a message: printable ASCII as it is, other
 * bytes as \xNN, cut to `max` input bytes with "..." after. Returns out. */
char *str_escape(char *out, size_t outlen, const char *s, size_t len, size_t max);

/* Allocation where running out of memory can only end the program: it
 * does, with a message naming the program, and EXIT_RUN_FAILED. */
void *xrealloc(void *p, size_t n);
char *xstrdup(const char *s);

/* A file read whole (at most max bytes), NUL-terminated; *len is its size.
 * NULL with err naming the file when it cannot be read. */
char *read_text_file(const char *path, size_t max, size_t *len, struct errbuf *err);

static inline void put_be32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24); p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);  p[3] = (uint8_t)v;
}

static inline uint32_t get_be32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

#endif
