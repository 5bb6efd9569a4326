/* shm: each client and a server of its own (a thread, or a process with
 * client processes) share an anonymous MAP_SHARED mapping holding two
 * single-producer byte rings, one each way. The client copies the request
 * (tbench's wire frame) into one ring; the server copies it out, checks it
 * and copies the reply into the other; the client copies that out. Each
 * side waits on a futex in the mapping, optionally spinning first
 * (--spin microseconds), and a writer calls FUTEX_WAKE only when
 * its reader is asleep: the only system calls of an exchange are the
 * wake-up's. It is the floor under pipe: the cost of waking the peer and of
 * moving bytes between cores, with no kernel data path.
 *
 * A side that leaves says so and wakes the other. Only a server process
 * can vanish without a word (a client takes its server with it: a thread
 * of its process, or a process killed with its thread by the companion's
 * PR_SET_PDEATHSIG), so only its client's waits are bounded: it looks at
 * the hang-up of a pipe only that server held every SHM_RECHECK_MS, or
 * every millisecond a client of the run, as ten thousand sleepers woken
 * every 100 ms would take the CPUs from those that have work. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/futex.h>
#include <poll.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "backend.h"
#include "clock.h"
#include "companion.h"
#include "schema.h"
#include "wire.h"

enum {
	SHM_RING = 128 * 1024,     /* a power of two with room for the largest frame */
	SHM_RECHECK_MS = 100,      /* a client looks at its server process this often, at least */
	CACHE_LINE = 64,
};
_Static_assert((long)SHM_RING >= (long)WIRE_LIMIT && (SHM_RING & (SHM_RING - 1)) == 0,
	       "a ring holds the largest frame, and indexes by mask");

/* One direction. tail and head count every byte ever written and read;
 * `posted` is the futex word, bumped at each publication; `sleeping` says
 * the reader is in (or about to enter) FUTEX_WAIT, so the writer must wake
 * it. Writer's and reader's fields sit on cache lines of their own. */
struct ring {
	_Alignas(CACHE_LINE) _Atomic uint64_t tail;
	_Atomic uint32_t posted;
	_Alignas(CACHE_LINE) _Atomic uint64_t head;
	_Atomic uint32_t sleeping;
	_Alignas(CACHE_LINE) uint8_t data[SHM_RING];
};

/* The mapping both sides see. */
struct shm_area {
	struct ring to_server, to_client;
	_Atomic uint32_t client_gone, server_gone;
	int futex_private;              /* FUTEX_PRIVATE_FLAG when both are threads */
	char server_error[200];         /* why the server gave up, for the client's error */
};

struct shm_conn {
	struct shm_area *area;
	struct companion server;
	uint64_t spin_ns;
	struct timespec recheck;        /* between looks at a server process; 0: never looks */
	int alive[2];                   /* process server: it alone holds [1]; its death hangs up [0] */
	char peer[32];
	uint8_t buf[WIRE_LIMIT];        /* the client's copy of each reply */
};

/* Which side waits: the server watches its client and the other way round. */
enum side { CLIENT, SERVER };

/* ---- settings ---------------------------------------------------------- */

static struct shm_settings {
	unsigned spin_us;         /* --spin: spinning before a futex wait */
} settings;

static int parse_spin(void *to, const char *text, struct errbuf *err)
{
	enum { SPIN_MAX_US = 1000000 };
	struct shm_settings *s = to;
	long us;

	if (parse_long_range(text, 0, SPIN_MAX_US, &us) < 0)
		return err_set(err, "--spin takes whole microseconds from 0 to %d, not '%.20s'",
			       SPIN_MAX_US, text);
	s->spin_us = (unsigned)us;
	return 0;
}

static const struct backend_option shm_options[] = {
	{ "spin", "USEC", "spin this long for the peer before sleeping on the futex (default 0)",
	  parse_spin, false },
	{ NULL, NULL, NULL, NULL, false }
};

static void shm_add_settings(struct json_object *into, const void *settings)
{
	const struct shm_settings *s = settings;

	json_put(into, SK_SPIN_US, json_object_new_uint64(s->spin_us));
}

static int shm_check(const struct backend_config *cfg, struct errbuf *err)
{
	if (cfg->port || cfg->tcp_options)
		return err_set(err, "shm: %s is for socket backends: shm has no socket (drop it)",
			       cfg->port ? "--port" : "-T");
	return 0;
}

/* ---- futex ------------------------------------------------------------- */

static void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#elif defined(__aarch64__)
	__asm__ volatile("yield");
#endif
}

/* 0 when woken or the word had changed; -1 with errno ETIMEDOUT (after
 * `limit`, or never when it is NULL) or another error (EINTR too: the
 * caller loops). */
static int futex_wait(_Atomic uint32_t *word, uint32_t seen, int private_flag,
		      const struct timespec *limit)
{
	if (syscall(SYS_futex, word, FUTEX_WAIT | private_flag, seen, limit, NULL, 0) == 0 ||
	    errno == EAGAIN)
		return 0;
	return -1;
}

static void futex_wake(_Atomic uint32_t *word, int private_flag)
{
	/* Cannot fail on a valid word in our own mapping. */
	(void)syscall(SYS_futex, word, FUTEX_WAKE | private_flag, 1, NULL, NULL, 0);
}

/* ---- rings ------------------------------------------------------------- */

static uint64_t ring_bytes(struct ring *r)
{
	return atomic_load_explicit(&r->tail, memory_order_acquire) -
	       atomic_load_explicit(&r->head, memory_order_relaxed);
}

/* The writer's side: `len` bytes of `src` at `pos` (a count of all bytes
 * written), wrapping at the end of the data. */
static void ring_copy_in(struct ring *r, uint64_t pos, const uint8_t *src, size_t len)
{
	size_t at = pos & (SHM_RING - 1), first = SHM_RING - at < len ? SHM_RING - at : len;

	memcpy(r->data + at, src, first);
	memcpy(r->data, src + first, len - first);
}

static void ring_copy_out(const struct ring *r, uint64_t pos, uint8_t *dst, size_t len)
{
	size_t at = pos & (SHM_RING - 1), first = SHM_RING - at < len ? SHM_RING - at : len;

	memcpy(dst, r->data + at, first);
	memcpy(dst + first, r->data, len - first);
}

/* A frame into the ring: `hdrlen` bytes of header, then zeros up to `total`.
 * The reader wakes only if it sleeps: the store of `sleeping` in
 * ring_wait() and our load of it are both sequentially consistent, so
 * either it sees the new tail or we see it asleep. -1: no room, which only
 * a peer out of step can cause (each side reads a whole frame before it
 * answers). */
static int ring_put_frame(struct ring *r, const uint8_t *hdr, size_t hdrlen, size_t total,
			  int private_flag)
{
	uint64_t tail = atomic_load_explicit(&r->tail, memory_order_relaxed);
	uint64_t head = atomic_load_explicit(&r->head, memory_order_acquire);

	if (total > SHM_RING - (tail - head))
		return -1;
	ring_copy_in(r, tail, hdr, hdrlen);
	ring_copy_in(r, tail + hdrlen, wire_zeros, total - hdrlen);
	atomic_store_explicit(&r->tail, tail + total, memory_order_release);
	atomic_fetch_add(&r->posted, 1);
	if (atomic_load(&r->sleeping))
		futex_wake(&r->posted, private_flag);
	return 0;
}

/* Takes `len` bytes the reader has waited for. */
static void ring_take(struct ring *r, uint8_t *dst, size_t len)
{
	uint64_t head = atomic_load_explicit(&r->head, memory_order_relaxed);

	ring_copy_out(r, head, dst, len);
	atomic_store_explicit(&r->head, head + len, memory_order_release);
}

static void peek_be32(const struct ring *r, uint8_t *out)
{
	ring_copy_out(r, atomic_load_explicit(&r->head, memory_order_relaxed), out, 4);
}

/* ---- waiting ----------------------------------------------------------- */

/* Wakes whoever waits on either ring: a side that leaves says so. */
static void say_gone(struct shm_area *a, _Atomic uint32_t *flag)
{
	atomic_store(flag, 1);
	atomic_fetch_add(&a->to_server.posted, 1);
	atomic_fetch_add(&a->to_client.posted, 1);
	futex_wake(&a->to_server.posted, a->futex_private);
	futex_wake(&a->to_client.posted, a->futex_private);
}

/* Is the peer still there? Asked between waits, so a server process that
 * died is noticed within its client's recheck. */
static bool peer_gone(const struct shm_conn *c, enum side me, bool slept_long)
{
	if (me == SERVER)
		return atomic_load(&c->area->client_gone);
	if (atomic_load(&c->area->server_gone))
		return true;
	if (!slept_long || c->alive[0] < 0)
		return false;
	struct pollfd p = { .fd = c->alive[0], .events = POLLIN };
	return poll(&p, 1, 0) == 1 && (p.revents & (POLLHUP | POLLERR));
}

/* Until `need` bytes are in the ring: 0; -1 when the peer is gone (errno
 * 0) or the futex failed (errno set). */
static int ring_wait(struct shm_conn *c, struct ring *r, size_t need, enum side me)
{
	if (ring_bytes(r) >= need)
		return 0;
	if (c->spin_ns) {
		uint64_t until = now_ns() + c->spin_ns;
		do {
			for (int i = 0; i < 64; i++) {
				if (ring_bytes(r) >= need)
					return 0;
				cpu_relax();
			}
		} while (now_ns() < until && !peer_gone(c, me, false));
	}
	for (;;) {
		atomic_store(&r->sleeping, 1);
		uint32_t seen = atomic_load(&r->posted);
		if (ring_bytes(r) >= need)
			break;
		bool timed_out = false;
		const struct timespec *limit = me == CLIENT && c->alive[0] >= 0 ? &c->recheck : NULL;
		if (!peer_gone(c, me, false) &&
		    futex_wait(&r->posted, seen, c->area->futex_private, limit) < 0) {
			if (errno != ETIMEDOUT && errno != EINTR)
				return -1;
			timed_out = errno == ETIMEDOUT;
		}
		if (ring_bytes(r) >= need)
			break;
		if (peer_gone(c, me, timed_out)) {
			atomic_store(&r->sleeping, 0);
			errno = 0;
			return -1;
		}
	}
	atomic_store(&r->sleeping, 0);
	return 0;
}

/* ---- the server -------------------------------------------------------- */

/* One frame in, its reply out. 1: a frame answered; 0: the client left
 * between frames; -1 with err. */
static int serve_one(struct shm_conn *c, uint8_t *buf, struct errbuf *err)
{
	struct shm_area *a = c->area;

	if (ring_wait(c, &a->to_server, 4, SERVER) < 0)
		return errno ? err_errno(err, "waiting for a request") : 0;
	peek_be32(&a->to_server, buf);
	uint32_t n = get_be32(buf);
	if (wire_check_frame(n, 0, err) < 0)    /* the length alone, before waiting for it */
		return -1;
	if (ring_wait(c, &a->to_server, (size_t)n + 4, SERVER) < 0)
		return errno ? err_errno(err, "waiting for a request")
			     : err_set(err, "client left mid-frame");
	ring_take(&a->to_server, buf, (size_t)n + 4);
	uint32_t reply = get_be32(buf + 4);
	if (wire_check_frame(n, reply, err) < 0)
		return -1;
	put_be32(buf, reply);
	if (ring_put_frame(&a->to_client, buf, 4, (size_t)reply + 4, a->futex_private) < 0)
		return err_set(err, "no room for a %u-byte reply: the client is out of step",
			       reply + 4);
	return 1;
}

static void serve(void *arg)
{
	struct shm_conn *c = arg;
	uint8_t *buf = malloc(WIRE_LIMIT);
	struct errbuf err;
	int rc = -1;

	if (!buf)
		err_set(&err, "out of memory for the frame buffer");
	else
		while ((rc = serve_one(c, buf, &err)) == 1)
			;
	if (rc < 0) {
		snprintf(c->area->server_error, sizeof(c->area->server_error), "%.199s", err.msg);
		fprintf(stderr, "tbench: %s: %s\n", c->peer, err.msg);
	}
	free(buf);
	say_gone(c->area, &c->area->server_gone);
}

/* ---- the client -------------------------------------------------------- */

static void close_alive(struct shm_conn *c)
{
	for (int i = 0; i < 2; i++)
		if (c->alive[i] >= 0)
			close(c->alive[i]);
	c->alive[0] = c->alive[1] = -1;
}

static void free_conn(struct shm_conn *c)
{
	close_alive(c);
	if (c->area && munmap(c->area, sizeof(*c->area)) < 0)
		perror("tbench: shm: munmap");
	free(c);
}

static int shm_connect(void *run, const struct backend_config *cfg, unsigned client,
		    void **conn, struct errbuf *err)
{
	struct shm_conn *c = calloc(1, sizeof(*c));
	bool apart = backend_solo_processes(cfg);   /* the server a process of its own */

	(void)run;
	if (!c)
		return err_set(err, "shm: out of memory");
	c->alive[0] = c->alive[1] = -1;
	c->spin_ns = (uint64_t)settings.spin_us * 1000;
	unsigned recheck_ms = cfg->nclients > SHM_RECHECK_MS ? cfg->nclients : SHM_RECHECK_MS;
	c->recheck = (struct timespec){ recheck_ms / 1000, recheck_ms % 1000 * 1000000L };
	snprintf(c->peer, sizeof(c->peer), "shm server %u", client);
	/* Before the server starts, so a forked one shares it. */
	void *m = mmap(NULL, sizeof(struct shm_area), PROT_READ | PROT_WRITE,
		       MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (m == MAP_FAILED) {
		err_errno(err, "shm: mapping %zu bytes for the rings to its server",
			  sizeof(struct shm_area));
		free(c);
		return -1;
	}
	c->area = m;
	c->area->futex_private = apart ? 0 : FUTEX_PRIVATE_FLAG;
	if (apart && pipe2(c->alive, O_CLOEXEC) < 0) {
		err_errno(err, "shm: creating the pipe that tells its server died");
		goto fail;
	}
	c->server = (struct companion){
		.serve = serve, .arg = c, .nkeep = apart ? 1 : 0, .keep = { c->alive[1] },
		.cpus = cfg->server_cpus, .index = client,
	};
	if (companion_start(&c->server, apart, c->peer, err) < 0)
		goto fail;
	if (companion_is_process(&c->server)) {
		close(c->alive[1]);
		c->alive[1] = -1;
	}
	*conn = c;
	return 0;
fail:
	free_conn(c);
	return -1;
}

static int server_failed(const struct shm_conn *c, uint32_t recv, struct errbuf *err)
{
	if (errno)
		return err_errno(err, "waiting for the %u-byte reply of %s", recv, c->peer);
	if (c->area->server_error[0])
		return err_set(err, "%s gave up: %s", c->peer, c->area->server_error);
	return err_set(err, "%s died before its %u-byte reply (killed?)", c->peer, recv);
}

static int shm_exchange(void *conn, uint32_t send, uint32_t recv, struct errbuf *err)
{
	struct shm_conn *c = conn;
	struct shm_area *a = c->area;
	uint8_t hdr[WIRE_HEADER];

	put_be32(hdr, send - 4);
	put_be32(hdr + 4, recv - 4);
	if (atomic_load_explicit(&a->server_gone, memory_order_relaxed)) {
		errno = 0;
		return server_failed(c, recv, err);
	}
	if (ring_put_frame(&a->to_server, hdr, send < WIRE_HEADER ? send : WIRE_HEADER, send,
			   a->futex_private) < 0)
		return err_set(err, "sending %u bytes to %s: its ring is full (out of step)",
			       send, c->peer);
	/* The length as soon as it is in: a peer out of step is caught, not waited for. */
	if (ring_wait(c, &a->to_client, 4, CLIENT) < 0)
		return server_failed(c, recv, err);
	peek_be32(&a->to_client, c->buf);
	if (get_be32(c->buf) != recv - 4)
		return err_set(err, "lost sync with %s: reply length %u, expected %u", c->peer,
			       get_be32(c->buf), recv - 4);
	if (ring_wait(c, &a->to_client, recv, CLIENT) < 0)
		return server_failed(c, recv, err);
	ring_take(&a->to_client, c->buf, recv);
	return 0;
}

static void shm_disconnect(void *conn)
{
	struct shm_conn *c = conn;

	say_gone(c->area, &c->area->client_gone);
	companion_wait(&c->server);
	free_conn(c);
}

const struct backend backend_shm = {
	.name = "shm",
	.summary = "a shared-memory ring per client to its own server, futex wake-ups: "
		   "the floor under pipe",
	/* nop's steps and the rings' futex wake-ups; no kernel data path, so
	 * not a part of pipe's */
	.path = { .extends = "nop", .layer = "shm", .adds = "futex wake-ups and moving bytes, no kernel data path",
		  .differs_from = "pipe" },
	.check = shm_check,
	.open = shm_connect,
	.exchange = shm_exchange,
	.close = shm_disconnect,
	.options = shm_options,
	.settings = &settings,
	.add_settings = shm_add_settings,
};
