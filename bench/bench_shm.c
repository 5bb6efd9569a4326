/* bench_shm: tbench's shm backend against a bare futex ping-pong of the
 * same sizes. Each bare client walks the parsed loadfile's op array (as
 * tbench's clients do) with a server thread of its own: the client copies
 * the request into a shared slot, the server copies it out and the reply
 * into the other slot, the client copies that out; each waits on a futex
 * word and is woken only when it sleeps, as backends/shm.c does. Both run
 * as threads; runs are interleaved, the order reversed every repetition.
 * Prints one CSV row per run on stdout:
 *   benchmark,clients,rep,variant,ops_per_sec,mb_per_sec
 * Not a test: built with `make bench/bench_shm`, run by bench/shm.sh. */
#include "config.h"

#include <errno.h>
#include <linux/futex.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "driver.h"
#include "loadfile.h"
#include "registry.h"
#include "wire.h"

static _Noreturn void die(const char *what)
{
	fprintf(stderr, "bench_shm: %s\n", what);
	exit(1);
}

/* ---- the bare ping-pong --------------------------------------------------- */

enum { SETUP, WARMUP, MEASURE, DONE };
static _Atomic int phase;

/* One direction: a frame's bytes, its length as the futex word (0: empty)
 * and whether its reader sleeps. */
struct slot {
	_Alignas(64) _Atomic uint32_t len;
	_Atomic uint32_t sleeping;
	_Alignas(64) uint8_t data[WIRE_LIMIT];
};

struct pair {
	struct slot req, rep;
	const struct loadfile *lf;
	uint32_t extra;
	pthread_t client, server;
	uint64_t ops, bytes;
};

static void put(struct slot *s, const uint8_t *src, uint32_t len)
{
	memcpy(s->data, src, len);
	atomic_store(&s->len, len);
	if (atomic_load(&s->sleeping))
		syscall(SYS_futex, &s->len, FUTEX_WAKE | FUTEX_PRIVATE_FLAG, 1, NULL, NULL, 0);
}

/* Waits for a frame and copies it out; 0 once the run is over. */
static uint32_t take(struct slot *s, uint8_t *dst)
{
	uint32_t len;

	/* The timeout only lets a waiter see the end of the run. */
	struct timespec recheck = { 0, 100000000 };

	while (!(len = atomic_load(&s->len))) {
		atomic_store(&s->sleeping, 1);
		if (!atomic_load(&s->len) && atomic_load(&phase) != DONE)
			syscall(SYS_futex, &s->len, FUTEX_WAIT | FUTEX_PRIVATE_FLAG, 0, &recheck, NULL, 0);
		atomic_store(&s->sleeping, 0);
		if (atomic_load(&phase) == DONE && !atomic_load(&s->len))
			return 0;
	}
	memcpy(dst, s->data, len);
	atomic_store(&s->len, 0);
	return len;
}

static void *bare_server(void *arg)
{
	struct pair *p = arg;
	uint8_t *in = malloc(WIRE_LIMIT), *out = calloc(1, WIRE_LIMIT);

	if (!in || !out)
		die("out of memory");
	for (uint32_t n; (n = take(&p->req, in)) > 0;) {
		uint32_t reply = get_be32(in + 4);
		put_be32(out, reply);
		put(&p->rep, out, reply + 4);
	}
	free(in);
	free(out);
	return NULL;
}

static void *bare_client(void *arg)
{
	struct pair *p = arg;
	uint8_t *req = calloc(1, WIRE_LIMIT), *rep = malloc(WIRE_LIMIT);
	const struct op *end = p->lf->ops + p->lf->n_ops;
	int seen = WARMUP;

	if (!req || !rep)
		die("out of memory");
	while (atomic_load(&phase) == SETUP)
		usleep(1000);
	for (;;) {
		for (const struct op *op = p->lf->ops; op < end; op++) {
			if (op->exchanges) {
				uint32_t send = op_send_bytes(op, p->extra);
				put_be32(req, send - 4);
				put_be32(req + 4, op->recv - 4);
				put(&p->req, req, send);
				if (!take(&p->rep, rep))
					goto out;
			}
			int now = atomic_load_explicit(&phase, memory_order_relaxed);
			if (now == DONE)
				goto out;
			if (now != seen) {
				p->ops = p->bytes = 0;
				seen = now;
			}
			p->ops++;
			p->bytes += op->payload;
		}
	}
out:
	free(req);
	free(rep);
	return NULL;
}

struct sample {
	double ops_per_sec, mb_per_sec;
};

static struct sample run_bare(const struct loadfile *lf, unsigned n, double warmup, double secs)
{
	struct pair *p = aligned_alloc(64, n * sizeof(*p));
	uint64_t ops = 0, bytes = 0;

	if (!p)
		die("out of memory");
	memset(p, 0, n * sizeof(*p));
	atomic_store(&phase, SETUP);
	for (unsigned i = 0; i < n; i++) {
		p[i].lf = lf;
		p[i].extra = client_name_extra(i);
		if (pthread_create(&p[i].server, NULL, bare_server, &p[i]) ||
		    pthread_create(&p[i].client, NULL, bare_client, &p[i]))
			die("pthread_create failed");
	}
	atomic_store(&phase, WARMUP);
	usleep((useconds_t)(warmup * 1e6));
	uint64_t t0 = now_ns();
	atomic_store(&phase, MEASURE);
	usleep((useconds_t)(secs * 1e6));
	uint64_t t1 = now_ns();
	atomic_store(&phase, DONE);
	for (unsigned i = 0; i < n; i++) {
		pthread_join(p[i].client, NULL);
		pthread_join(p[i].server, NULL);
		ops += p[i].ops;
		bytes += p[i].bytes;
	}
	free(p);
	double s = (double)(t1 - t0) / 1e9;
	return (struct sample){ ops / s, bytes / 1e6 / s };
}

/* ---- tbench -b shm, threads ---------------------------------------------- */

static struct sample run_tbench(const struct loadfile *lf, unsigned n, double warmup, double secs)
{
	struct run_config cfg = { .lf = lf, .backend = backend_find("shm"),
				  .warmup_exact = true, .timelimit = secs, .warmup = warmup };
	struct run_result res;

	cfg.bcfg.nclients = n;
	if (!cfg.backend)
		die("no shm backend");
	if (driver_run(&cfg, NULL, &res) != RUN_OK) {
		fprintf(stderr, "bench_shm: tbench -b shm %u: %s\n", n, res.error.msg);
		run_result_free(&res);
		return (struct sample){ -1, -1 };
	}
	struct sample r = { res.ops / res.execute_secs, res.bytes / 1e6 / res.execute_secs };
	run_result_free(&res);
	return r;
}

int main(int argc, char **argv)
{
	struct loadfile lf;
	struct errbuf err;

	if (argc != 6) {
		fprintf(stderr, "usage: bench_shm LOADFILE CLIENTS(1,2,8) REPS WARMUP SECS\n");
		return 2;
	}
	if (loadfile_read(argv[1], NULL, &lf, &err) < 0)
		die(err.msg);
	unsigned reps = (unsigned)atoi(argv[3]);
	double warmup = atof(argv[4]), secs = atof(argv[5]);
	printf("benchmark,clients,rep,variant,ops_per_sec,mb_per_sec\n");
	for (unsigned rep = 0; rep < reps; rep++) {
		char list[256];
		snprintf(list, sizeof(list), "%s", argv[2]);
		for (char *save = NULL, *c = strtok_r(list, ",", &save); c; c = strtok_r(NULL, ",", &save)) {
			unsigned n = (unsigned)atoi(c);
			for (int k = 0; k < 2; k++) {
				bool bare = (k == 0) == (rep % 2 == 0);   /* order reversed every rep */
				struct sample s = bare ? run_bare(&lf, n, warmup, secs)
						       : run_tbench(&lf, n, warmup, secs);
				printf("shm,%u,%u,%s,%.1f,%.2f\n", n, rep, bare ? "bare" : "tbench",
				       s.ops_per_sec, s.mb_per_sec);
				fflush(stdout);
			}
		}
	}
	loadfile_free(&lf);
	return 0;
}
