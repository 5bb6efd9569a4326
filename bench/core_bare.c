/* bench_core's bare loops: what tbench's nop and pipe clients do, without
 * tbench around it, for throughput's side-by-side runs (core_throughput.c). */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "clock.h"
#include "core.h"
#include "smb.h"
#include "util.h"
#include "wire.h"

/* ---- the bare loops ---------------------------------------------------- */

enum { B_SETUP, B_WARMUP, B_MEASURE, B_DONE };
static _Atomic int bare_phase;
static _Atomic unsigned bare_ready;

/* Each bare client walks the parsed loadfile's own op array (the array
 * tbench's clients walk), sizes from op_send_bytes() with its client-name
 * extra, exactly the bytes tbench's client of the same number moves. */
/* The clocks a bare loop can read once an operation: tbench's own
 * (now_ns(), the TSC where clock_init() chose it) or clock_gettime(). */

struct bare_arg {
	const struct op *op0;
	size_t n;
	uint32_t name_extra;
	int with_clock;             /* also read a clock once an op: CLOCK_RUN, CLOCK_GETTIME */
	uint64_t clock_sink;
	pthread_t thread;
	uint64_t ops, bytes;        /* measured phase only */
	uint64_t ops_all;           /* every phase: for ops per CPU-second */
	int pipe_to[2], pipe_from[2];
	pthread_t server;
};

/* Same layout as backends/nop.c's struct nop_conn. */
struct nop_bufs {
	uint8_t src[WIRE_LIMIT];
	uint8_t dst[WIRE_LIMIT];
};

#define COMPILER_BARRIER() __asm__ volatile("" ::: "memory")

static int bare_wait_start(void)
{
	int phase;

	atomic_fetch_add(&bare_ready, 1);
	while ((phase = atomic_load(&bare_phase)) == B_SETUP)
		sleep_ns(100000);
	return phase;
}

/* Counting as the driver does: the op that ends after the end is not counted,
 * the counters restart when the measured phase begins. */
#define BARE_COUNT(op, phase, ops, ops_all, bytes, out)                            \
	do {                                                                      \
		int now_ = atomic_load_explicit(&bare_phase, memory_order_relaxed); \
		if (now_ != (phase)) {                                            \
			if (now_ == B_DONE)                                       \
				goto out;                                         \
			(ops_all) += (ops);                                       \
			(ops) = (bytes) = 0;                                      \
			(phase) = now_;                                           \
		}                                                                 \
		(ops)++;                                                          \
		(bytes) += (op)->payload;                                          \
	} while (0)

static void *bare_nop_thread(void *p)
{
	struct bare_arg *a = p;
	struct nop_bufs *b = calloc(1, sizeof(*b));
	const struct op *begin = a->op0, *end = begin + a->n;
	const uint32_t extra = a->name_extra;
	const int with_clock = a->with_clock;
	uint64_t ops = 0, ops_all = 0, bytes = 0, sink = 0;

	if (!b)
		die("out of memory");
	int phase = bare_wait_start();
	for (;;) {
		for (const struct op *op = begin; op < end; op++) {
			if (op->exchanges) {
				uint32_t send = op_send_bytes(op, extra), recv = op->recv;
				memcpy(b->dst, b->src, send);
				COMPILER_BARRIER();
				memcpy(b->src, b->dst, send);
				COMPILER_BARRIER();
				memcpy(b->src, b->dst, recv);
				COMPILER_BARRIER();
				memcpy(b->dst, b->src, recv);
				COMPILER_BARRIER();
			}
			if (with_clock == CLOCK_RUN)
				sink += now_ns();
			else if (with_clock == CLOCK_GETTIME)
				sink += clock_gettime_ns();
			BARE_COUNT(op, phase, ops, ops_all, bytes, out);
		}
	}
out:
	a->clock_sink = sink;
	a->ops = ops;
	a->ops_all = ops_all + ops;
	a->bytes = bytes;
	free(b);
	return NULL;
}

static void write_exact(int fd, const uint8_t *buf, size_t len)
{
	while (len > 0) {
		ssize_t n = write(fd, buf, len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			die("bare pipe: write: %s", strerror(errno));
		buf += n;
		len -= (size_t)n;
	}
}

/* 0 when the peer closed before the first byte. */
static int read_exact(int fd, uint8_t *buf, size_t len)
{
	size_t got = 0;

	while (got < len) {
		ssize_t n = read(fd, buf + got, len - got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			die("bare pipe: read: %s", strerror(errno));
		if (n == 0) {
			if (got == 0)
				return 0;
			die("bare pipe: peer closed mid-frame");
		}
		got += (size_t)n;
	}
	return 1;
}

/* The minimal server: it knows the sizes (it walks the same array in
 * lockstep), reads the frame, writes the reply; one read and one write a
 * frame in the usual case, as tbench's server. No header checks. */
static void *bare_pipe_server(void *p)
{
	struct bare_arg *a = p;
	uint8_t *in = calloc(1, WIRE_LIMIT), *out = calloc(1, WIRE_LIMIT);
	int rfd = a->pipe_to[0], wfd = a->pipe_from[1];

	if (!in || !out)
		die("out of memory");
	/* The connection set-up exchange, as the driver does. */
	if (read_exact(rfd, in, SMB_SETUP_SEND)) {
		write_exact(wfd, out, SMB_SETUP_RECV);
		for (;;) {
			for (const struct op *op = a->op0, *end = op + a->n; op < end; op++) {
				if (!op->exchanges)
					continue;
				if (!read_exact(rfd, in, op_send_bytes(op, a->name_extra)))
					goto out;
				put_be32(out, op->recv - 4);
				write_exact(wfd, out, op->recv);
			}
		}
	}
out:
	free(in);
	free(out);
	return NULL;
}

static void *bare_pipe_thread(void *p)
{
	struct bare_arg *a = p;
	uint8_t *sbuf = calloc(1, WIRE_LIMIT), *rbuf = calloc(1, WIRE_LIMIT);
	const struct op *begin = a->op0, *end = begin + a->n;
	const uint32_t extra = a->name_extra;
	uint64_t ops = 0, ops_all = 0, bytes = 0;

	if (!sbuf || !rbuf)
		die("out of memory");
	if (pipe2(a->pipe_to, O_CLOEXEC) < 0 || pipe2(a->pipe_from, O_CLOEXEC) < 0)
		die("pipe2: %s", strerror(errno));
	/* As backends/pipe.c: room for the largest frame. */
	(void)fcntl(a->pipe_to[1], F_SETPIPE_SZ, 128 * 1024);
	(void)fcntl(a->pipe_from[1], F_SETPIPE_SZ, 128 * 1024);
	int rc = pthread_create(&a->server, NULL, bare_pipe_server, a);
	if (rc)
		die("pthread_create: %s", strerror(rc));
	int wfd = a->pipe_to[1], rfd = a->pipe_from[0];
	write_exact(wfd, sbuf, SMB_SETUP_SEND);
	read_exact(rfd, rbuf, SMB_SETUP_RECV);

	int phase = bare_wait_start();
	for (;;) {
		for (const struct op *op = begin; op < end; op++) {
			if (op->exchanges) {
				uint32_t send = op_send_bytes(op, extra), recv = op->recv;
				put_be32(sbuf, send - 4);
				put_be32(sbuf + 4, recv - 4);
				write_exact(wfd, sbuf, send);
				if (!read_exact(rfd, rbuf, recv))
					die("bare pipe: server closed");
			}
			BARE_COUNT(op, phase, ops, ops_all, bytes, out);
		}
	}
out:
	a->ops = ops;
	a->ops_all = ops_all + ops;
	a->bytes = bytes;
	close(wfd);
	pthread_join(a->server, NULL);
	close(rfd);
	close(a->pipe_to[0]);
	close(a->pipe_from[1]);
	free(sbuf);
	free(rbuf);
	return NULL;
}

double cpu_secs(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 +
	       ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6;
}

struct sample run_bare(const struct settings *s, const struct loadfile *lf,
			      const char *backend, unsigned n, int with_clock)
{
	struct bare_arg *a = calloc(n, sizeof(*a));
	void *(*fn)(void *) = strcmp(backend, "nop") == 0 ? bare_nop_thread : bare_pipe_thread;
	uint64_t ops = 0, ops_all = 0, bytes = 0;
	double cpu0 = cpu_secs();

	if (!a)
		die("out of memory");
	atomic_store(&bare_phase, B_SETUP);
	atomic_store(&bare_ready, 0);
	for (unsigned i = 0; i < n; i++) {
		a[i].op0 = lf->ops;
		a[i].n = lf->n_ops;
		a[i].name_extra = client_name_extra(i);
		a[i].with_clock = with_clock;
		int rc = pthread_create(&a[i].thread, NULL, fn, &a[i]);
		if (rc)
			die("pthread_create: %s", strerror(rc));
	}
	while (atomic_load(&bare_ready) < n)
		sleep_ns(1000000);
	if (s->warmup > 0) {
		atomic_store(&bare_phase, B_WARMUP);
		sleep_ns((uint64_t)(s->warmup * 1e9));
	}
	uint64_t t0 = now_ns();
	atomic_store(&bare_phase, B_MEASURE);
	sleep_ns((uint64_t)(s->secs * 1e9));
	uint64_t t1 = now_ns();
	atomic_store(&bare_phase, B_DONE);
	for (unsigned i = 0; i < n; i++) {
		pthread_join(a[i].thread, NULL);
		ops += a[i].ops;
		ops_all += a[i].ops_all;
		bytes += a[i].bytes;
	}
	double cpu = cpu_secs() - cpu0;
	free(a);
	double secs = (t1 - t0) / 1e9;
	return (struct sample){ ops / secs, bytes / 1e6 / secs, secs, ops_all / cpu, true };
}
