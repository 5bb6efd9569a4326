/* tcp-zc: tcp whose requests of at least a threshold go out with
 * MSG_ZEROCOPY (SO_ZEROCOPY): the kernel pins the pages of the request and
 * sends from them instead of copying them into the socket buffer.
 * Everything else is tcp's (backends/tcp.h): SERVER, --port, -T, its own
 * server without SERVER, the replies; tcp-zc minus tcp is what the send
 * copy costs, or what pinning and completions cost instead.
 *
 * The rule of the send buffer: pinned bytes must not change until the
 * kernel says it is done with them, by a completion on the socket's error
 * queue. A request's filler is wire_zeros, which nobody ever writes; its
 * 8-byte header goes in one of ZC_SLOTS slots of the connection, and a slot
 * is written again only after the completion of the send that used it has
 * been read. Completions are read without blocking when the slot the next
 * send needs is still marked in flight: by then the kernel has usually
 * finished with it long ago, and one read collects the many completions it
 * merged meanwhile. Only a slot whose send is really not done makes the
 * exchange wait (poll for POLLERR), counted as a completion wait.
 *
 * Counted (--json "backend_counters", --cost): requests sent with
 * MSG_ZEROCOPY; of those, completed zero-copy and copied after all
 * (SO_EE_CODE_ZEROCOPY_COPIED: always so to a receiver on the same host,
 * loopback or veth, where the kernel copies before delivering); requests
 * sent as plain copies (below the threshold, or MSG_ZEROCOPY refused for
 * lack of option memory); completion waits. The kernel merges adjacent
 * completions into one with the first one's code, so when some sends are
 * copied and others not, the split between the two is approximate.
 *
 * The threshold, in bytes of the whole request: --zerocopy-threshold,
 * else $TBENCH_ZEROCOPY_THRESHOLD, else ZC_DEFAULT_THRESHOLD. With
 * --reconnect, reading a connection's last completions before it closes is
 * part of its Connect time. */
#include "config.h"

#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>
#include <linux/errqueue.h>   /* after time.h: it needs struct timespec */

#include "clock.h"
#include "schema.h"
#include "tcp.h"

/* Where MSG_ZEROCOPY pays off: at no request size from 4 KB to 64 KB on the
 * machine of results/bench-tcp-zc.md, whose only paths are loopback and veth,
 * where the kernel copies anyway. So by default no request reaches it
 * (every request is under WIRE_LIMIT) and start() says so. */
#define ZC_DEFAULT_THRESHOLD WIRE_LIMIT
#define ZC_THRESHOLD_ENV "TBENCH_ZEROCOPY_THRESHOLD"

enum {
	ZC_SLOTS = 64,          /* request headers the kernel may hold at once */
	ZC_DRAIN_MS = 2000,     /* at close, how long completions still in flight are awaited */
};

enum zc_counter { ZC_SENDS, ZC_DONE, ZC_COPIED, ZC_PLAIN, ZC_WAITS, ZC_N };
static const char *const zc_counter_names[] = {
	[ZC_SENDS] = "zerocopy_sends", [ZC_DONE] = "zerocopy_completed",
	[ZC_COPIED] = "zerocopy_copied", [ZC_PLAIN] = "copied_sends",
	[ZC_WAITS] = "completion_waits", [ZC_N] = NULL,
};
_Static_assert((int)ZC_N <= (int)BACKEND_COUNTERS, "tcp-zc counts more than the driver keeps");

struct zc_conn {
	struct wire_stream s;        /* first: tcp's stream; the replies come in through it */
	uint32_t threshold;
	uint32_t next_id;            /* the kernel's number for our next zero-copy send */
	uint32_t in_flight;          /* zero-copy sends not completed yet */
	uint64_t n[ZC_N];
	struct zc_slot {
		uint8_t hdr[WIRE_HEADER];
		bool busy;               /* its send is not completed: hands off */
	} slot[ZC_SLOTS];
};

static const struct tcp_flavour zc_flavour = { .name = "tcp-zc", .local_server_first = true };

/* --zerocopy-threshold, kept as given: the environment's value stands in
 * for it, and both are checked (naming which) when the run starts. */
static struct zc_settings {
	const char *threshold;
} settings;

static int parse_threshold(void *to, const char *text, struct errbuf *err)
{
	(void)err;
	((struct zc_settings *)to)->threshold = text;
	return 0;
}

static const struct backend_option zc_options[] = {
	{ "zerocopy-threshold", "BYTES", "send requests of at least BYTES with MSG_ZEROCOPY "
	  "(default: none)", parse_threshold, false },
	{ NULL, NULL, NULL, NULL, false }
};

/* The threshold from the command line or the environment: -1 when bad. */
static int threshold(uint32_t *out, struct errbuf *err)
{
	const char *text = settings.threshold ? settings.threshold : getenv(ZC_THRESHOLD_ENV);
	const char *what = settings.threshold ? "--zerocopy-threshold" : ZC_THRESHOLD_ENV;
	long v;

	*out = ZC_DEFAULT_THRESHOLD;
	if (!text || !*text)
		return 0;
	if (parse_long_range(text, 1, WIRE_LIMIT, &v) < 0)
		return err_set(err, "tcp-zc: %s %s: give the smallest request to send zero-copy, "
			       "in bytes from 1 to %d", what, text, WIRE_LIMIT);
	*out = (uint32_t)v;
	return 0;
}

/* The threshold the run used (or would use): null when it is not a
 * valid one, which stops the run before it starts. */
static void zc_add_settings(struct json_object *into, const void *to)
{
	struct errbuf err;
	uint32_t t;

	(void)to;       /* threshold() reads the settings and the environment */
	json_put(into, SK_ZEROCOPY_THRESHOLD, threshold(&t, &err) < 0 ? NULL : json_object_new_uint64(t));
}

/* Zero-copy needs Linux 4.14's SO_ZEROCOPY: without it, exit 2 and say so. */
static int zc_check(const struct backend_config *cfg, struct errbuf *err)
{
	int one = 1;
	uint32_t t;

	if (tcp_check_as(&zc_flavour, cfg, err) < 0 || threshold(&t, err) < 0)
		return -1;
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return 0;   /* not a question of support: start() will say what is wrong */
	int rc = setsockopt(fd, SOL_SOCKET, SO_ZEROCOPY, &one, sizeof(one));
	int saved = errno;
	close(fd);
	if (rc < 0 && (saved == ENOPROTOOPT || saved == EINVAL || saved == EOPNOTSUPP))
		return err_set(err, "tcp-zc: this kernel has no MSG_ZEROCOPY (SO_ZEROCOPY: %s): it "
			       "needs Linux 4.14 or later; use -b tcp", strerror(saved));
	return 0;
}

static int zc_start(const struct backend_config *cfg, void **run, struct errbuf *err)
{
	uint32_t t;

	if (threshold(&t, err) < 0)
		return -1;
	if (!settings.threshold && !getenv(ZC_THRESHOLD_ENV))
		fprintf(stderr, "tbench: tcp-zc: no request is sent zero-copy by default (it paid off "
			"at no size on loopback, where the kernel copies anyway): set "
			ZC_THRESHOLD_ENV "=BYTES, e.g. 10000 for a path through a NIC\n");
	return tcp_start_as(&zc_flavour, cfg, run, err);
}

static int zc_open(void *run, const struct backend_config *cfg, unsigned client, void **conn,
		   struct errbuf *err)
{
	struct zc_conn *z = calloc(1, sizeof(*z));
	int one = 1;

	(void)client;   /* the driver puts "client N:" before our errors */
	if (!z)
		return err_set(err, "tcp-zc: out of memory");
	if (threshold(&z->threshold, err) < 0 || tcp_open_stream(run, cfg, &z->s, err) < 0) {
		free(z);
		return -1;
	}
	if (setsockopt(z->s.fd, SOL_SOCKET, SO_ZEROCOPY, &one, sizeof(one)) < 0) {
		err_errno(err, "tcp-zc: turning on SO_ZEROCOPY for %s", z->s.peer);
		wire_stream_close(&z->s);
		return -1;
	}
	*conn = z;
	return 0;
}

/* Completions of sends lo..hi (the kernel's numbers, which wrap): their
 * slots may be written again. */
static void completed(struct zc_conn *z, uint32_t lo, uint32_t hi, bool copied)
{
	uint32_t n = hi - lo + 1;

	z->n[copied ? ZC_COPIED : ZC_DONE] += n;
	z->in_flight -= n <= z->in_flight ? n : z->in_flight;
	/* At most ZC_SLOTS sends are ever in flight, each in a slot of its own. */
	for (uint32_t k = 0; k < n && k < ZC_SLOTS; k++)
		z->slot[(lo + k) % ZC_SLOTS].busy = false;
}

/* One message of the error queue: 1 when read, 0 when it is empty. */
static int read_completion(struct zc_conn *z, struct errbuf *err)
{
	union {
		char buf[CMSG_SPACE(sizeof(struct sock_extended_err) + sizeof(struct sockaddr_in6))];
		struct cmsghdr align;
	} control;
	struct msghdr m = { .msg_control = control.buf, .msg_controllen = sizeof(control.buf) };

	while (recvmsg(z->s.fd, &m, MSG_ERRQUEUE | MSG_DONTWAIT) < 0) {
		if (errno == EAGAIN || errno == EWOULDBLOCK)
			return 0;
		if (errno != EINTR)
			return err_errno(err, "tcp-zc: reading zero-copy completions of %s", z->s.peer);
	}
	for (struct cmsghdr *c = CMSG_FIRSTHDR(&m); c; c = CMSG_NXTHDR(&m, c)) {
		if (!(c->cmsg_level == SOL_IP && c->cmsg_type == IP_RECVERR) &&
		    !(c->cmsg_level == SOL_IPV6 && c->cmsg_type == IPV6_RECVERR))
			continue;
		struct sock_extended_err ee;
		memcpy(&ee, CMSG_DATA(c), sizeof(ee));
		if (ee.ee_origin == SO_EE_ORIGIN_ZEROCOPY && ee.ee_errno == 0)
			completed(z, ee.ee_info, ee.ee_data, ee.ee_code & SO_EE_CODE_ZEROCOPY_COPIED);
	}
	return 1;
}

/* Every completion queued now, without blocking. */
static int harvest(struct zc_conn *z, struct errbuf *err)
{
	int rc = 1;

	while (z->in_flight > 0 && (rc = read_completion(z, err)) > 0)
		;
	return rc < 0 ? -1 : 0;
}

/* Waits, harvesting, until `slot` is free (NULL: until nothing is in
 * flight); timeout_ms -1: as long as it takes, as a blocking receive would. */
static int wait_for(struct zc_conn *z, const struct zc_slot *slot, int timeout_ms,
		    struct errbuf *err)
{
	uint64_t end = now_ns() + (uint64_t)(timeout_ms < 0 ? 0 : timeout_ms) * 1000000u;

	if (harvest(z, err) < 0)
		return -1;
	while (slot ? slot->busy : z->in_flight > 0) {
		struct pollfd p = { .fd = z->s.fd, .events = 0 };   /* POLLERR: a completion is in */
		uint64_t now = now_ns();
		if (timeout_ms >= 0 && now >= end)
			return err_set(err, "tcp-zc: %u zero-copy sends to %s not completed after %d ms",
				       z->in_flight, z->s.peer, timeout_ms);
		int rc = poll(&p, 1, timeout_ms < 0 ? -1 : (int)((end - now) / 1000000u) + 1);
		if (rc < 0 && errno != EINTR)
			return err_errno(err, "tcp-zc: waiting for zero-copy completions of %s", z->s.peer);
		if (rc > 0 && (p.revents & (POLLHUP | POLLNVAL)) && !(p.revents & POLLERR))
			return err_set(err, "tcp-zc: %s closed with %u zero-copy sends not completed",
				       z->s.peer, z->in_flight);
		if (harvest(z, err) < 0)
			return -1;
	}
	return 0;
}

/* The rest of a request whose zero-copy send was cut short (a signal):
 * copied, as its slot stays pinned anyway. */
static int send_rest(struct zc_conn *z, struct iovec *iov, int n_iov, size_t done,
		     struct errbuf *err)
{
	struct iovec *v = iov;

	iov_advance(&v, &n_iov, done);
	while (n_iov > 0) {
		ssize_t n = writev(z->s.fd, v, n_iov);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return err_errno(err, "tcp-zc: sending to %s", z->s.peer);
		iov_advance(&v, &n_iov, (size_t)n);
	}
	return 0;
}

/* The request from its slot's header and wire_zeros, MSG_ZEROCOPY. */
static int zc_send(struct zc_conn *z, uint32_t send, uint32_t recv, struct errbuf *err)
{
	struct zc_slot *slot = &z->slot[z->next_id % ZC_SLOTS];
	ssize_t n;

	if (slot->busy) {
		if (harvest(z, err) < 0)
			return -1;
		if (slot->busy) {
			z->n[ZC_WAITS]++;
			if (wait_for(z, slot, -1, err) < 0)
				return -1;
		}
	}
	wire_put_request(slot->hdr, send, recv);
	struct iovec iov[2] = {
		{ slot->hdr, WIRE_HEADER },
		{ (void *)wire_zeros, send - WIRE_HEADER },
	};
	struct msghdr m = { .msg_iov = iov, .msg_iovlen = 2 };
	while ((n = sendmsg(z->s.fd, &m, MSG_ZEROCOPY)) < 0 && errno == EINTR)
		;
	if (n < 0 && errno == ENOBUFS) {
		/* No option memory for the completion: this one goes as a copy. */
		z->n[ZC_PLAIN]++;
		return wire_send_request(z->s.fd, send, recv, z->s.peer, err);
	}
	if (n < 0)
		return err_errno(err, "tcp-zc: sending %u bytes to %s", send, z->s.peer);
	slot->busy = true;
	z->next_id++;
	z->in_flight++;
	z->n[ZC_SENDS]++;
	return (size_t)n < send ? send_rest(z, iov, 2, (size_t)n, err) : 0;
}

static int zc_exchange(void *conn, uint32_t send, uint32_t recv, struct errbuf *err)
{
	struct zc_conn *z = conn;

	if (send < z->threshold || send <= WIRE_HEADER) {
		z->n[ZC_PLAIN]++;
		return wire_stream_exchange(&z->s, send, recv, err);
	}
	if (zc_send(z, send, recv, err) < 0)
		return -1;
	return wire_stream_receive(&z->s, recv, err);
}

/* Completions still in flight are awaited a little, so that the counts
 * are whole; a peer that vanished leaves them pending (sends minus the
 * completed and the copied). */
static void zc_counters(void *conn, uint64_t sum[BACKEND_COUNTERS])
{
	struct zc_conn *z = conn;
	struct errbuf err;

	if (z->in_flight > 0)
		wait_for(z, NULL, ZC_DRAIN_MS, &err);
	for (int i = 0; i < ZC_N; i++)
		sum[i] += z->n[i];
}

const struct backend backend_tcp_zc = {
	.name = "tcp-zc",
	.summary = "tcp with MSG_ZEROCOPY sends of large requests: tcp minus the send copy",
	.flags = BACKEND_TAKES_SERVER | BACKEND_TCP | BACKEND_RECONNECTS | BACKEND_FAMILY |
		 BACKEND_SOCKOPTS | BACKEND_OWN_SERVER | BACKEND_COPY_REPLIES,
	/* tcp's path with pinning and completions in place of the send copy */
	.path = { .extends = "nop", .layer = "tcp_zc", .adds = "TCP/IP with MSG_ZEROCOPY sends",
		  .differs_from = "tcp", .drops_replies = true },
	.check = zc_check,
	.start = zc_start,
	.open = zc_open,
	.exchange = zc_exchange,
	.close = wire_stream_close,   /* the stream is the start of our conn */
	.stop = tcp_stop,
	.counters = zc_counters,
	.counter_names = zc_counter_names,
	.socket_info = tcp_socket_info,   /* the stream is the start of our conn */
	.options = zc_options,
	.settings = &settings,
	.add_settings = zc_add_settings,
};
