/* bench_crr: the bare loop that `tbench -b tcp --reconnect 1` is measured
 * against. Each of N client processes walks the parsed loadfile's op array
 * (as tbench's clients do) and, for every operation with an exchange,
 * connects to SERVER, sends the request tbench would send (tbench's frame:
 * the same sizes, client names included), reads the 4-byte reply header,
 * lets the kernel drop the body (MSG_TRUNC, as tbench's tcp), and closes:
 * what one Connect line plus one exchange of tbench costs, with no harness.
 * TCP_NODELAY on the socket, as tbench's default -T.
 *
 * Prints one CSV row on stdout, for the measured window only:
 *   clients,connections,seconds,conn_per_sec,client_cpu_us_per_conn,client_switches_per_conn
 * (the client processes' user + system CPU and context switches, from
 * getrusage).
 * Not a test: built with `make bench/bench_crr`, run by bench/reconnect.sh. */
#include "config.h"

#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "loadfile.h"
#include "wire.h"

enum { SETUP, WARMUP, MEASURE, DONE };

/* Shared with the client processes; each writes its own counts only. */
struct shared {
	_Atomic int phase;
	_Atomic unsigned ready;
	struct counts {
		_Alignas(64) uint64_t conns;
		double cpu_us, switches;      /* over the measured window */
	} client[];
};

static _Noreturn void die(const char *what)
{
	fprintf(stderr, "bench_crr: %s\n", what);
	exit(1);
}

/* This process's CPU µs and context switches so far. */
static void usage_now(double *cpu_us, double *switches)
{
	struct rusage ru;

	if (getrusage(RUSAGE_SELF, &ru) < 0)
		die("getrusage failed");
	*cpu_us = ru.ru_utime.tv_sec * 1e6 + ru.ru_utime.tv_usec + ru.ru_stime.tv_sec * 1e6 +
		  ru.ru_stime.tv_usec;
	*switches = (double)ru.ru_nvcsw + (double)ru.ru_nivcsw;
}

/* One connect, exchange, close: 0, or -1 with errno. */
static int crr_once(const struct addrinfo *ai, uint8_t *req, uint32_t out, uint32_t in)
{
	uint8_t hdr[4];
	int one = 1, fd = socket(ai->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0);

	if (fd < 0)
		return -1;
	put_be32(req, out - 4);
	put_be32(req + 4, in - 4);
	int ok = setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one)) == 0 &&
		 connect(fd, ai->ai_addr, ai->ai_addrlen) == 0 &&
		 send(fd, req, out, 0) == (ssize_t)out &&
		 recv(fd, hdr, 4, MSG_WAITALL) == 4 && get_be32(hdr) == in - 4 &&
		 (in == 4 || recv(fd, NULL, in - 4, MSG_WAITALL | MSG_TRUNC) == (ssize_t)(in - 4));
	int saved = errno;
	close(fd);
	errno = saved;
	return ok ? 0 : -1;
}

static _Noreturn void client(struct shared *sh, unsigned id, const struct loadfile *lf,
			     const struct addrinfo *ai)
{
	uint8_t *req = calloc(1, WIRE_LIMIT);
	const struct op *end = lf->ops + lf->n_ops;
	const uint32_t extra = client_name_extra(id);
	struct counts *me = &sh->client[id];
	int seen = WARMUP;
	double cpu0 = 0, sw0 = 0, cpu1, sw1;

	if (!req)
		die("out of memory");
	atomic_fetch_add(&sh->ready, 1);
	while (atomic_load(&sh->phase) == SETUP)
		usleep(1000);
	for (;;) {
		for (const struct op *op = lf->ops; op < end; op++) {
			if (!op->exchanges)
				continue;
			if (crr_once(ai, req, op_send_bytes(op, extra), op->recv) < 0) {
				perror("bench_crr: connect, exchange, close");
				_exit(1);
			}
			int now = atomic_load_explicit(&sh->phase, memory_order_relaxed);
			if (now == DONE) {
				usage_now(&cpu1, &sw1);
				me->cpu_us = cpu1 - cpu0;
				me->switches = sw1 - sw0;
				_exit(0);
			}
			if (now != seen) {     /* the measured window starts */
				me->conns = 0;
				usage_now(&cpu0, &sw0);
				seen = now;
			}
			me->conns++;
		}
	}
}

static double now_s(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	struct loadfile lf;
	struct errbuf err;
	struct addrinfo hints = { .ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM }, *ai;

	if (argc != 7) {
		fprintf(stderr, "usage: bench_crr LOADFILE CLIENTS WARMUP SECS SERVER PORT\n");
		return 2;
	}
	unsigned n = (unsigned)atoi(argv[2]);
	double warmup = atof(argv[3]), secs = atof(argv[4]);
	if (n < 1 || n > 4096 || warmup < 0 || secs <= 0)
		die("CLIENTS from 1 to 4096, WARMUP 0 or more, SECS more than 0");
	if (loadfile_read(argv[1], NULL, &lf, &err) < 0)
		die(err.msg);
	if (getaddrinfo(argv[5], argv[6], &hints, &ai) != 0)
		die("SERVER PORT does not resolve");
	size_t size = sizeof(struct shared) + n * sizeof(struct counts);
	struct shared *sh = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (sh == MAP_FAILED)
		die("mmap failed");
	for (unsigned i = 0; i < n; i++) {
		pid_t pid = fork();
		if (pid < 0)
			die("fork failed");
		if (pid == 0)
			client(sh, i, &lf, ai);
	}
	while (atomic_load(&sh->ready) < n)
		usleep(1000);
	atomic_store(&sh->phase, WARMUP);
	usleep((useconds_t)(warmup * 1e6));
	double t0 = now_s();
	atomic_store(&sh->phase, MEASURE);
	usleep((useconds_t)(secs * 1e6));
	double t1 = now_s();
	atomic_store(&sh->phase, DONE);
	int failed = 0;
	for (unsigned i = 0; i < n; i++) {
		int status;
		if (wait(&status) < 0 || !WIFEXITED(status) || WEXITSTATUS(status))
			failed = 1;
	}
	uint64_t conns = 0;
	double cpu = 0, switches = 0;
	for (unsigned i = 0; i < n; i++) {
		conns += sh->client[i].conns;
		cpu += sh->client[i].cpu_us;
		switches += sh->client[i].switches;
	}
	if (failed || !conns)
		die("a client failed");
	/* A connection that ended after the window is not counted, as in tbench. */
	printf("%u,%llu,%.3f,%.1f,%.2f,%.3f\n", n, (unsigned long long)conns, t1 - t0,
	       conns / (t1 - t0), cpu / conns, switches / conns);
	freeaddrinfo(ai);
	loadfile_free(&lf);
	return 0;
}
