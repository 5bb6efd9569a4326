/* bench_core: the core's side-by-side benchmarks.
 *
 *  throughput  tbench's nop backend against a bare loop doing the same
 *              memcpy()s (and against that loop plus one read of tbench's
 *              clock, or of clock_gettime(), an operation), and its pipe
 *              backend against a bare pipe ping-pong of the same sizes;
 *              interleaved, the order reversed every repetition, same
 *              loadfile, same budget.
 *  parse       loadfile_read() of each file given, median of several runs.
 *  rss         resident memory of the real tbench binary at several client
 *              counts, threads and (optionally) --processes.
 *
 * Raw numbers go to --csv, the tables (medians) to --md. Not a test: built
 * with `make bench`, never part of `make check`. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <dirent.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "backend.h"
#include "clock.h"
#include "driver.h"
#include "loadfile.h"
#include "smb.h"
#include "util.h"
#include "registry.h"

#define MAX_LIST 16

struct settings {
	const char *loadfile;
	unsigned reps;
	double secs, warmup;
	unsigned clients[MAX_LIST], n_clients;
	const char *parse_files[MAX_LIST];
	unsigned n_parse, parse_runs;
	const char *tbench;
	unsigned rss_clients[MAX_LIST], n_rss;
	double rss_secs;
	int rss_processes;
	FILE *csv, *md;
	int do_throughput, do_parse, do_rss;
	int from_csv;          /* --from-csv: tables from a CSV, nothing measured */
};

/* ---- rows of an earlier run's CSV (--from-csv) ---------------------------- */

struct row {
	char kind[16], bench[256], variant[32];
	unsigned clients, rep;
	double v[4];
	int n_v;
};
static struct row *rows;
static size_t n_rows;

static void load_csv(const char *path)
{
	FILE *fp = fopen(path, "r");
	char line[1024];
	size_t cap = 0;

	if (!fp) {
		fprintf(stderr, "bench_core: %s: %s\n", path, strerror(errno));
		exit(1);
	}
	while (fgets(line, sizeof(line), fp)) {
		char *f[9] = { 0 }, *p = line;
		int n = 0;
		line[strcspn(line, "\n")] = 0;
		while (n < 9) {
			f[n++] = p;
			p = strchr(p, ',');
			if (!p)
				break;
			*p++ = 0;
		}
		if (n < 6 || strcmp(f[0], "kind") == 0)
			continue;
		if (n_rows == cap) {
			cap = cap ? cap * 2 : 256;
			rows = realloc(rows, cap * sizeof(*rows));
			if (!rows)
				exit(1);
		}
		struct row *r = &rows[n_rows++];
		memset(r, 0, sizeof(*r));
		snprintf(r->kind, sizeof(r->kind), "%s", f[0]);
		snprintf(r->bench, sizeof(r->bench), "%s", f[1]);
		r->clients = (unsigned)strtoul(f[2], NULL, 10);
		r->rep = (unsigned)strtoul(f[3], NULL, 10);
		snprintf(r->variant, sizeof(r->variant), "%s", f[4]);
		for (int i = 5; i < n && i < 9; i++)
			if (*f[i])
				r->v[r->n_v++] = strtod(f[i], NULL);
	}
	fclose(fp);
}

/* The last row that matches (a repeated measurement replaces an earlier one). */
static const struct row *find_row(const char *kind, const char *bench, unsigned clients,
				  unsigned rep, const char *variant)
{
	const struct row *found = NULL;

	for (size_t i = 0; i < n_rows; i++) {
		const struct row *r = &rows[i];
		if (strcmp(r->kind, kind) == 0 && strcmp(r->bench, bench) == 0 &&
		    r->clients == clients && r->rep == rep &&
		    (!variant || strcmp(r->variant, variant) == 0))
			found = r;
	}
	return found;
}

static void die(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
static void die(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fputs("bench_core: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
	exit(1);
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

static double median(const double *v, unsigned n)
{
	double s[64];

	if (n == 0 || n > 64)
		return 0;
	memcpy(s, v, n * sizeof(*v));
	qsort(s, n, sizeof(*s), cmp_double);
	return n % 2 ? s[n / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
}

/* ---- the bare loops ---------------------------------------------------- */

enum { B_SETUP, B_WARMUP, B_MEASURE, B_DONE };
static _Atomic int bare_phase;
static _Atomic unsigned bare_ready;

/* Each bare client walks the parsed loadfile's own op array (the array
 * tbench's clients walk), sizes from op_send_bytes() with its client-name
 * extra, exactly the bytes tbench's client of the same number moves. */
/* The clocks a bare loop can read once an operation: tbench's own
 * (now_ns(), the TSC where clock_init() chose it) or clock_gettime(). */
enum { CLOCK_NONE, CLOCK_RUN, CLOCK_GETTIME };

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

/* ops_per_cpu: every operation of the run (warm-up too) per CPU-second the
 * process used for it (all threads, user + system, set-up included). Stolen
 * time and other tenants' load do not change it; what the harness adds does. */
struct sample {
	double ops_per_sec, mb_per_sec, secs, ops_per_cpu;
	bool measured;
};

static double cpu_secs(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 +
	       ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6;
}

static struct sample run_bare(const struct settings *s, const struct loadfile *lf,
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

static struct sample run_tbench(const struct settings *s, const struct loadfile *lf,
				const char *backend, unsigned n)
{
	struct run_config cfg = { 0 };
	struct run_result res;

	cfg.lf = lf;
	cfg.backend = backend_find(backend);
	if (!cfg.backend)
		die("no backend %s", backend);
	cfg.bcfg.nclients = n;
	cfg.timelimit = s->secs;
	cfg.warmup = s->warmup;
	cfg.warmup_exact = true;
	double cpu0 = cpu_secs();
	if (driver_run(&cfg, NULL, &res) != RUN_OK) {
		/* Seen under heavy outside load: "client 0 did not stop within 2 s
		 * of the end of the run". Reported, and the pair is repeated. */
		fprintf(stderr, "bench_core: tbench -b %s %u failed: %s\n", backend, n, res.error);
		run_result_free(&res);
		return (struct sample){ -1, -1, 0, -1, true };
	}
	double cpu = cpu_secs() - cpu0;
	uint64_t ops_all = 0;
	for (unsigned i = 0; i < res.nclients; i++)
		ops_all += res.clients[i].ops_all;
	struct sample r = { res.ops / res.execute_secs, res.bytes / 1e6 / res.execute_secs,
			    res.execute_secs, ops_all / cpu, true };
	run_result_free(&res);
	return r;
}

static void csv_sample(const struct settings *s, const char *backend, unsigned n,
		       unsigned rep, const char *variant, const struct sample *x)
{
	if (s->csv)
		fprintf(s->csv, "throughput,%s,%u,%u,%s,%.1f,%.2f,%.3f,%.1f\n", backend, n, rep,
			variant, x->ops_per_sec, x->mb_per_sec, x->secs, x->ops_per_cpu);
}

/* On this shared machine a run is now and then starved for most of its
 * second by other tenants (seen: 3,600 ops/s against 3.5 million). A pair
 * whose ratio is off by more than 3x either way is repeated, up to
 * MAX_RETRIES times; the discarded rows stay in the CSV. */
enum { MAX_RETRIES = 2 };

static int plausible(double ratio)
{
	return ratio > 1 / 3.0 && ratio < 3.0;
}

/* The runs of one repetition: every benchmark has the bare loop and
 * tbench; the nop one also the bare loop with one clock read an operation,
 * of tbench's own clock and of clock_gettime(). */
enum { V_BARE, V_CLOCK, V_GETTIME, V_TBENCH, NV };
static const char *const variant_name[NV] = {
	"bare", "bare+clock", "bare+clock_gettime", "tbench",
};

struct bench {
	const char *backend, *bare;
	double target;           /* tbench against the bare loop */
	bool clocks;             /* also the bare loop with a clock read */
};
static const struct bench benches[] = {
	{ "nop", "memcpy loop", 0.90, true }, { "pipe", "pipe ping-pong", 0.95, false },
};
enum { NB = sizeof(benches) / sizeof(benches[0]) };
#define CLOCK_TARGET 0.95        /* nop against the bare loop plus the same clock read */

/* Per benchmark and client count: each variant's sample of each repetition. */
struct series {
	struct sample v[NV][64];
};

/* The clock tbench and bare+clock read, as the CSV keeps it. */
struct clock_note {
	char what[256];          /* "tsc: why", or empty when not recorded */
	double hz, error_ppm, elapsed_s;
};

static bool variant_runs(const struct bench *b, int v)
{
	return b->clocks || v == V_BARE || v == V_TBENCH;
}

static struct sample run_variant(const struct settings *s, const struct loadfile *lf,
				 const struct bench *b, unsigned n, int v)
{
	static const int clock_of[NV] = { CLOCK_NONE, CLOCK_RUN, CLOCK_GETTIME, CLOCK_NONE };
	return v == V_TBENCH ? run_tbench(s, lf, b->backend, n) :
			       run_bare(s, lf, b->backend, n, clock_of[v]);
}

/* In variant order on even repetitions, reversed on odd ones: none always
 * runs first. */
static void measure_rep(const struct settings *s, const struct loadfile *lf,
			const struct bench *b, unsigned n, unsigned rep, struct sample *out)
{
	for (int i = 0; i < NV; i++) {
		int v = rep % 2 ? NV - 1 - i : i;
		out[v] = variant_runs(b, v) ? run_variant(s, lf, b, n, v) : (struct sample){ 0 };
	}
}

static bool rep_plausible(const struct sample *x)
{
	for (int v = V_BARE + 1; v < NV; v++)
		if (x[v].measured && !plausible(x[v].ops_per_sec / x[V_BARE].ops_per_sec))
			return false;
	return true;
}

/* --from-csv: one repetition's rows; a variant without rows was not measured
 * (older CSVs have no bare+clock_gettime). */
static void rep_from_csv(const struct bench *b, unsigned n, unsigned rep, struct sample *out,
			 unsigned *retried, unsigned *failed)
{
	for (int v = 0; v < NV; v++) {
		const struct row *r = find_row("throughput", b->backend, n, rep + 1, variant_name[v]);
		out[v] = r && r->n_v >= 4 && variant_runs(b, v) ?
			 (struct sample){ r->v[0], r->v[1], r->v[2], r->v[3], true } : (struct sample){ 0 };
	}
	if (!out[V_BARE].measured || !out[V_TBENCH].measured)
		die("--from-csv: no %s %u-client rows for repetition %u", b->backend, n, rep + 1);
	for (size_t i = 0; i < n_rows; i++)
		if (strcmp(rows[i].kind, "throughput") == 0 && strcmp(rows[i].bench, b->backend) == 0 &&
		    rows[i].clients == n && rows[i].rep == rep + 1 &&
		    strcmp(rows[i].variant, "discarded-tbench") == 0) {
			(*retried)++;
			*failed += rows[i].v[0] < 0;
		}
}

/* Runs one repetition, again while one side looks starved by other load;
 * the discarded rows stay in the CSV. */
static void measure_plausible(const struct settings *s, const struct loadfile *lf,
			      const struct bench *b, unsigned n, unsigned rep, struct sample *out,
			      unsigned *retried, unsigned *failed)
{
	for (unsigned attempt = 0;; attempt++) {
		measure_rep(s, lf, b, n, rep, out);
		if (out[V_TBENCH].ops_per_sec < 0 && attempt == MAX_RETRIES)
			die("tbench -b %s %u failed %u times in a row", b->backend, n, attempt + 1);
		if (attempt == MAX_RETRIES || rep_plausible(out))
			return;
		fprintf(stderr, "rep %u %-4s %2u clients: ratio %.3f looks starved, repeating\n",
			rep + 1, b->backend, n, out[V_TBENCH].ops_per_sec / out[V_BARE].ops_per_sec);
		for (int v = 0; v < NV; v++) {
			char name[48];
			snprintf(name, sizeof(name), "discarded-%s", variant_name[v]);
			if (out[v].measured)
				csv_sample(s, b->backend, n, rep + 1, name, &out[v]);
		}
		(*retried)++;
		*failed += out[V_TBENCH].ops_per_sec < 0;
	}
}

static void log_rep(const struct bench *b, unsigned n, unsigned rep, const struct sample *x)
{
	const struct sample *bare = &x[V_BARE];

	fprintf(stderr, "rep %u %-4s %2u clients: bare %9.0f ops/s", rep + 1, b->backend, n,
		bare->ops_per_sec);
	for (int v = V_BARE + 1; v < NV; v++)
		if (x[v].measured)
			fprintf(stderr, "  %s %9.0f (%.3f, per CPU-s %.3f)", variant_name[v],
				x[v].ops_per_sec, x[v].ops_per_sec / bare->ops_per_sec,
				x[v].ops_per_cpu / bare->ops_per_cpu);
	fputc('\n', stderr);
}

/* Median over the repetitions of variant a against variant b, of ops/s or
 * of operations per CPU-second; -1 when either was not measured. */
static double median_ratio(const struct series *x, unsigned reps, int a, int b, bool cpu)
{
	double r[64];

	for (unsigned i = 0; i < reps; i++) {
		const struct sample *p = &x->v[a][i], *q = &x->v[b][i];
		if (!p->measured || !q->measured)
			return -1;
		r[i] = cpu ? p->ops_per_cpu / q->ops_per_cpu : p->ops_per_sec / q->ops_per_sec;
	}
	return median(r, reps);
}

static double median_of(const struct series *x, unsigned reps, int v, bool mb)
{
	double r[64];

	for (unsigned i = 0; i < reps; i++)
		r[i] = mb ? x->v[v][i].mb_per_sec : x->v[v][i].ops_per_sec;
	return median(r, reps);
}

/* A ratio cell: the figure, or – when not measured. */
static void md_ratio(FILE *f, double r)
{
	if (r < 0)
		fprintf(f, " – |");
	else
		fprintf(f, " %.3f |", r);
}

static void md_verdict(FILE *f, double r, double target)
{
	fprintf(f, " %s |", r < 0 ? "–" : r >= target ? "yes" : "**no**");
}

static void md_throughput(const struct settings *s, const struct loadfile *lf,
			  struct series ser[][MAX_LIST], unsigned retried, unsigned failed)
{
	unsigned r = s->reps;

	fprintf(s->md, "## Throughput: tbench against its bare limit\n\n"
		"Loadfile: `%s` (%zu operations) for both sides; %u repetitions, "
		"each run %g s warm-up + %g s measured, interleaved bare, tbench, bare, "
		"tbench … (order reversed every repetition). ops/s = loadfile operations per "
		"second, all clients; MB/s = counted payload (tbench's figure). "
		"**ratio** = median of the per-repetition tbench/bare ratios of ops/s (the "
		"target applies to it). CPU ratio = the same for operations per CPU-second "
		"of the process, all its threads, user + system (not moved by how much CPU "
		"other tenants left us; on a shared machine the fairer verdict). "
		"Repetitions repeated because one side was starved (ratio off by more than 3x) "
		"or the tbench run failed: %u, of them failed: %u.\n\n"
		"| benchmark | clients | bare ops/s | tbench ops/s | bare MB/s | tbench MB/s "
		"| ratio | target | met? | CPU ratio | met? (CPU) |\n"
		"|---|---:|---:|---:|---:|---:|---:|---:|---|---:|---|\n",
		s->loadfile, lf->n_ops, r, s->warmup, s->secs, retried, failed);
	for (unsigned b = 0; b < NB; b++)
		for (unsigned c = 0; c < s->n_clients; c++) {
			const struct series *x = &ser[b][c];
			double m = median_ratio(x, r, V_TBENCH, V_BARE, false);
			double mc = median_ratio(x, r, V_TBENCH, V_BARE, true);
			fprintf(s->md, "| %s vs bare %s | %u | %.0f | %.0f | %.0f | %.0f |",
				benches[b].backend, benches[b].bare, s->clients[c],
				median_of(x, r, V_BARE, false), median_of(x, r, V_TBENCH, false),
				median_of(x, r, V_BARE, true), median_of(x, r, V_TBENCH, true));
			md_ratio(s->md, m);
			fprintf(s->md, " ≥ %.2f |", benches[b].target);
			md_verdict(s->md, m, benches[b].target);
			md_ratio(s->md, mc);
			md_verdict(s->md, mc, benches[b].target);
			fputc('\n', s->md);
		}
	fputc('\n', s->md);
}

static void md_clock(const struct settings *s, struct series ser[][MAX_LIST],
		     const struct clock_note *clk)
{
	unsigned r = s->reps;

	fprintf(s->md, "## The clock read per operation (nop)\n\n");
	if (clk->what[0] && clk->hz > 0)
		fprintf(s->md, "Clock of tbench and of bare+clock: **%s**; TSC %.3f MHz; at the end "
			"(%.0f s after the calibration) its time differed from CLOCK_MONOTONIC by "
			"%.3f ppm of the elapsed time.", clk->what, clk->hz / 1e6, clk->elapsed_s,
			clk->error_ppm);
	else if (clk->what[0])
		fprintf(s->md, "Clock of tbench and of bare+clock: **%s**.", clk->what);
	else
		fprintf(s->md, "Clock of tbench and of bare+clock: not recorded in this CSV.");
	fprintf(s->md, " bare+clock = the bare memcpy loop plus one read of that clock "
		"(now_ns()) per operation, the one clock read per operation the design "
		"requires; bare+clock_gettime = the same with clock_gettime(CLOCK_MONOTONIC) "
		"instead (what that read costs on this machine). Medians of the "
		"per-repetition ratios, ops/s and (CPU) operations per CPU-second.\n\n"
		"| clients | bare+clock ops/s | tbench / bare+clock | target | met? | CPU | met? (CPU) "
		"| bare+clock / bare | CPU | bare+clock_gettime / bare | CPU |\n"
		"|---:|---:|---:|---:|---|---:|---|---:|---:|---:|---:|\n");
	for (unsigned b = 0; b < NB; b++)
		for (unsigned c = 0; benches[b].clocks && c < s->n_clients; c++) {
			const struct series *x = &ser[b][c];
			double m = median_ratio(x, r, V_TBENCH, V_CLOCK, false);
			double mc = median_ratio(x, r, V_TBENCH, V_CLOCK, true);
			fprintf(s->md, "| %u | %.0f |", s->clients[c], median_of(x, r, V_CLOCK, false));
			md_ratio(s->md, m);
			fprintf(s->md, " ≥ %.2f |", CLOCK_TARGET);
			md_verdict(s->md, m, CLOCK_TARGET);
			md_ratio(s->md, mc);
			md_verdict(s->md, mc, CLOCK_TARGET);
			md_ratio(s->md, median_ratio(x, r, V_CLOCK, V_BARE, false));
			md_ratio(s->md, median_ratio(x, r, V_CLOCK, V_BARE, true));
			md_ratio(s->md, median_ratio(x, r, V_GETTIME, V_BARE, false));
			md_ratio(s->md, median_ratio(x, r, V_GETTIME, V_BARE, true));
			fputc('\n', s->md);
		}
	fputc('\n', s->md);
}

/* The clock as it was at the end of the measurements, into the CSV (a
 * comma would split the field: the reason's become semicolons). */
static void clock_note_now(const struct settings *s, struct clock_note *clk)
{
	struct clock_check c;

	clock_check(&c);
	*clk = (struct clock_note){ .hz = clock_state.tsc_hz, .error_ppm = c.error_ppm,
				    .elapsed_s = c.elapsed_s };
	snprintf(clk->what, sizeof(clk->what), "%s: %s", clock_source_name(c.source), c.why);
	for (char *p = clk->what; (p = strchr(p, ',')); )
		*p = ';';
	if (s->csv)
		fprintf(s->csv, "clock,%s,,,,%.0f,%.4f,%.3f,\n", clk->what, clk->hz, clk->error_ppm,
			clk->elapsed_s);
}

/* The last clock row of the CSV; none in CSVs older than it. */
static void clock_note_from_csv(struct clock_note *clk)
{
	*clk = (struct clock_note){ .what = "" };
	for (size_t i = 0; i < n_rows; i++)
		if (strcmp(rows[i].kind, "clock") == 0 && rows[i].n_v >= 3) {
			*clk = (struct clock_note){ .hz = rows[i].v[0], .error_ppm = rows[i].v[1],
						    .elapsed_s = rows[i].v[2] };
			snprintf(clk->what, sizeof(clk->what), "%s", rows[i].bench);
		}
}

static void throughput(const struct settings *s)
{
	static struct series ser[NB][MAX_LIST];
	struct loadfile lf;
	struct errbuf err;
	struct clock_note clk;
	unsigned retried = 0, failed = 0;

	if (loadfile_read(s->loadfile, NULL, &lf, &err) < 0)
		die("%s", err.msg);
	for (unsigned rep = 0; rep < s->reps; rep++)
		for (unsigned b = 0; b < NB; b++)
			for (unsigned c = 0; c < s->n_clients; c++) {
				const struct bench *be = &benches[b];
				unsigned n = s->clients[c];
				struct sample x[NV];
				if (s->from_csv) {
					rep_from_csv(be, n, rep, x, &retried, &failed);
				} else {
					measure_plausible(s, &lf, be, n, rep, x, &retried, &failed);
					log_rep(be, n, rep, x);
					for (int v = 0; v < NV; v++)
						if (x[v].measured)
							csv_sample(s, be->backend, n, rep + 1, variant_name[v], &x[v]);
					if (s->csv)
						fflush(s->csv);
				}
				for (int v = 0; v < NV; v++)
					ser[b][c].v[v][rep] = x[v];
			}
	if (s->from_csv)
		clock_note_from_csv(&clk);
	else
		clock_note_now(s, &clk);
	if (s->md) {
		md_throughput(s, &lf, ser, retried, failed);
		md_clock(s, ser, &clk);
	}
	loadfile_free(&lf);
}

/* ---- parse time ---------------------------------------------------------- */

static void parse_times(const struct settings *s)
{
	if (s->md)
		fprintf(s->md, "## Parse time (loadfile_read: read + parse + size model)\n\n"
			"| loadfile | bytes | operations | runs | median ms | min ms | max ms |\n"
			"|---|---:|---:|---:|---:|---:|---:|\n");
	for (unsigned f = 0; f < s->n_parse; f++) {
		double ms[64];
		size_t n_ops = 0;
		long long size = -1;
		FILE *fp = fopen(s->parse_files[f], "r");

		if (fp) {
			fseek(fp, 0, SEEK_END);
			size = ftell(fp);
			fclose(fp);
		}
		for (unsigned r = 0; r < s->parse_runs; r++) {
			struct loadfile lf;
			struct errbuf err;
			uint64_t t0 = now_ns();
			/* --from-csv: parsed once, for the operation count only. */
			if (r == 0 || !s->from_csv) {
				if (loadfile_read(s->parse_files[f], NULL, &lf, &err) < 0)
					die("%s", err.msg);
				ms[r] = (now_ns() - t0) / 1e6;
				n_ops = lf.n_ops;
				loadfile_free(&lf);
			}
			if (s->from_csv) {
				const struct row *x = find_row("parse", s->parse_files[f], 0, r + 1, "ms");
				if (!x || x->n_v < 1)
					die("--from-csv: no parse row %u for %s", r + 1, s->parse_files[f]);
				ms[r] = x->v[0];
				continue;
			}
			if (s->csv)
				fprintf(s->csv, "parse,%s,,%u,ms,%.3f,,,\n", s->parse_files[f], r + 1, ms[r]);
		}
		double lo = ms[0], hi = ms[0];
		for (unsigned r = 1; r < s->parse_runs; r++) {
			lo = ms[r] < lo ? ms[r] : lo;
			hi = ms[r] > hi ? ms[r] : hi;
		}
		if (!s->from_csv)
			fprintf(stderr, "parse %s: median %.1f ms\n", s->parse_files[f],
				median(ms, s->parse_runs));
		if (s->md)
			fprintf(s->md, "| `%s` | %lld | %zu | %u | %.1f | %.1f | %.1f |\n",
				s->parse_files[f], size, n_ops, s->parse_runs,
				median(ms, s->parse_runs), lo, hi);
	}
	if (s->md)
		fputc('\n', s->md);
}

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

static pid_t ppid_of(pid_t pid)
{
	char path[64], buf[512];
	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	FILE *fp = fopen(path, "r");
	if (!fp)
		return -1;
	size_t n = fread(buf, 1, sizeof(buf) - 1, fp);
	fclose(fp);
	buf[n] = 0;
	char *rp = strrchr(buf, ')');
	int ppid = -1;
	char st;
	if (!rp || sscanf(rp + 1, " %c %d", &st, &ppid) != 2)
		return -1;
	return ppid;
}

/* Rss and Pss summed over root and every process below it (KiB). */
static void tree_memory(pid_t root, long *rss, long *pss, unsigned *procs)
{
	enum { MAXP = 8192 };
	static pid_t pid[MAXP], par[MAXP];
	static char in[MAXP];
	unsigned n = 0;
	DIR *d = opendir("/proc");
	struct dirent *e;

	*rss = *pss = 0;
	*procs = 0;
	if (!d)
		return;
	while ((e = readdir(d)) && n < MAXP) {
		pid_t p = (pid_t)atoi(e->d_name);
		if (p <= 0)
			continue;
		pid[n] = p;
		par[n] = ppid_of(p);
		in[n] = p == root;
		n++;
	}
	closedir(d);
	for (int changed = 1; changed;) {
		changed = 0;
		for (unsigned i = 0; i < n; i++)
			for (unsigned j = 0; !in[i] && j < n; j++)
				if (in[j] && par[i] == pid[j])
					in[i] = 1, changed = 1;
	}
	for (unsigned i = 0; i < n; i++) {
		if (!in[i])
			continue;
		long r = status_kib(pid[i], "smaps_rollup", "Rss:");
		long p = status_kib(pid[i], "smaps_rollup", "Pss:");
		if (r > 0)
			*rss += r;
		if (p > 0)
			*pss += p;
		(*procs)++;
	}
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

static void rss(const struct settings *s)
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

/* ---- command line -------------------------------------------------------- */

static unsigned parse_list(const char *arg, unsigned *out)
{
	unsigned n = 0;
	char *end;

	for (const char *p = arg; *p && n < MAX_LIST; p = *end ? end + 1 : end) {
		unsigned long v = strtoul(p, &end, 10);
		if (end == p || v == 0 || (*end && *end != ','))
			die("bad list '%s'", arg);
		out[n++] = (unsigned)v;
	}
	return n;
}

static void usage(void)
{
	fputs("usage: bench_core [--loadfile F] [--reps N] [--secs S] [--warmup S]\n"
	      "                  [--clients 1,2,16] [--parse FILE]... [--parse-runs N]\n"
	      "                  [--tbench PATH] [--rss-clients 1,64,512] [--rss-secs S]\n"
	      "                  [--rss-processes] [--csv FILE] [--md FILE]\n"
	      "                  [--only throughput|parse|rss] [--from-csv FILE]\n"
	      "                  [--csv-append FILE]\n"
	      "--from-csv FILE: write the --md tables from an earlier run's CSV (same\n"
	      "settings), measuring nothing but the loadfiles' sizes.\n", stderr);
	exit(2);
}

int main(int argc, char **argv)
{
	struct settings s = {
		.reps = 5, .secs = 2, .warmup = 0.5, .parse_runs = 7, .rss_secs = 3,
		.do_throughput = 1, .do_parse = 1, .do_rss = 1,
	};
	const char *only = NULL;

	s.n_clients = parse_list("1,2,16", s.clients);
	s.n_rss = parse_list("1,64,512", s.rss_clients);
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
		if (strcmp(a, "--rss-processes") == 0) {
			s.rss_processes = 1;
			continue;
		}
		if (!v)
			usage();
		i++;
		if (strcmp(a, "--loadfile") == 0)
			s.loadfile = v;
		else if (strcmp(a, "--reps") == 0)
			s.reps = (unsigned)atoi(v);
		else if (strcmp(a, "--secs") == 0)
			s.secs = atof(v);
		else if (strcmp(a, "--warmup") == 0)
			s.warmup = atof(v);
		else if (strcmp(a, "--clients") == 0)
			s.n_clients = parse_list(v, s.clients);
		else if (strcmp(a, "--parse") == 0 && s.n_parse < MAX_LIST)
			s.parse_files[s.n_parse++] = v;
		else if (strcmp(a, "--parse-runs") == 0)
			s.parse_runs = (unsigned)atoi(v);
		else if (strcmp(a, "--tbench") == 0)
			s.tbench = v;
		else if (strcmp(a, "--rss-clients") == 0)
			s.n_rss = parse_list(v, s.rss_clients);
		else if (strcmp(a, "--rss-secs") == 0)
			s.rss_secs = atof(v);
		else if (strcmp(a, "--csv") == 0) {
			if (!(s.csv = fopen(v, "w")))
				die("%s: %s", v, strerror(errno));
			fprintf(s.csv, "kind,benchmark,clients,rep,variant,value,value2,value3,value4\n");
		} else if (strcmp(a, "--md") == 0) {
			if (!(s.md = fopen(v, "w")))
				die("%s: %s", v, strerror(errno));
		} else if (strcmp(a, "--csv-append") == 0) {
			if (!(s.csv = fopen(v, "a")))
				die("%s: %s", v, strerror(errno));
		} else if (strcmp(a, "--only") == 0)
			only = v;
		else if (strcmp(a, "--from-csv") == 0) {
			load_csv(v);
			s.from_csv = 1;
		}
		else
			usage();
	}
	if (s.reps < 1 || s.reps > 64 || s.parse_runs < 1 || s.parse_runs > 64 || s.secs <= 0)
		die("--reps and --parse-runs: 1 to 64; --secs above 0");
	if (only) {
		s.do_throughput = strcmp(only, "throughput") == 0;
		s.do_parse = strcmp(only, "parse") == 0;
		s.do_rss = strcmp(only, "rss") == 0;
	}
	if (!s.loadfile)
		s.loadfile = TBENCH_SRCDIR "/loadfiles/default.txt";
	signal(SIGPIPE, SIG_IGN);
	/* Now, once: tbench's runs and the bare+clock loop read the same clock. */
	struct errbuf err;
	if (clock_init(&err) < 0)
		die("%s", err.msg);

	if (s.do_parse)
		parse_times(&s);
	if (s.do_throughput)
		throughput(&s);
	if (s.do_rss && (s.tbench || s.from_csv))
		rss(&s);
	if (s.csv)
		fclose(s.csv);
	if (s.md)
		fclose(s.md);
	return 0;
}
