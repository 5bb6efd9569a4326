/* splice: TCP over loopback where no payload byte crosses into user space.
 *
 * Each client gets a connected loopback TCP pair and a server of its own (a
 * thread, or a process with --processes). Both ends move frame bodies with
 * splice(2)/vmsplice(2) only; the headers (8 bytes out, 4 bytes back) are
 * the only bytes read() into user memory. Set against `tcp` it shows what
 * the two user-space copies per exchange cost; what remains is TCP/IP, the
 * loopback device and the wake-ups.
 *
 * Sending (either side): vmsplice() puts the header and the body into a
 * pipe, then splice() hands the pipe to the socket. The body comes from
 * zeroed pages mapped once per connection and never written again.
 * Receiving: read() the header, then splice() the body socket -> pipe ->
 * /dev/null.
 *
 * What is and is not zero-copy, as Linux 6.x really does it:
 *  - vmsplice() without SPLICE_F_GIFT takes references on the user pages
 *    and fills pipe buffers with them: no copy. (GIFT would only let a
 *    later SPLICE_F_MOVE steal the pages, which no socket does; and we
 *    reuse the pages, so gifting them would be wrong.)
 *  - splice() pipe -> TCP socket calls sendmsg(MSG_SPLICE_PAGES): TCP adds
 *    the same pages to the skb as fragments (SKBFL_SHARED_FRAG), still no
 *    copy, as long as the route can scatter-gather (lo can). They stay
 *    referenced until the data is acknowledged, not merely until the skb is
 *    built; so a page may be rewritten only after the peer has answered.
 *  - On loopback the skb (a clone sharing those fragments) is handed to the
 *    receiving socket; lo declares checksum offload, so no checksum pass
 *    reads the payload either.
 *  - splice() TCP socket -> pipe takes references on the skb's fragments
 *    (only bytes in an skb's linear head would be copied into a new page;
 *    spliced sends put none there), and splice() pipe -> /dev/null just
 *    drops them. So a request body goes from the client's zero pages to
 *    /dev/null without any CPU copy at all, and a reply body likewise.
 *  - Not zero-copy: the 8- and 4-byte headers, which read() copies out of
 *    the skb into user memory (they go out by reference like the bodies);
 *    and whatever the stack copies on its own: receive queues collapsed
 *    under memory pressure (tcp_collapse), or a route without
 *    scatter-gather (not lo), where TCP falls back to copying the pages.
 *
 * System calls per exchange, when every transfer completes in one call
 * (measured with strace -f -c: see the end of this comment):
 *   client: vmsplice + splice(pipe->sock) + read(4-byte header)
 *           + splice(sock->pipe) + splice(pipe->/dev/null)          = 5
 *   server: read(8-byte header) + splice(sock->pipe)
 *           + splice(pipe->/dev/null) + vmsplice + splice(pipe->sock) = 5
 *   (the sock->pipe->/dev/null pair repeats when a body arrives in pieces,
 *   and is skipped for an empty body, as in the 8-byte set-up frame.)
 *   strace -f -c of `tbench -b splice 2 --run-once` on the default
 *   loadfile (120,000 exchanges incl. the 2 set-ups; Linux 6.18): 240,002
 *   vmsplice, 720,002 splice, 240,005 read: 2 vmsplice, 6 splice and 2
 *   header reads per exchange, plus the open-time probes and 5 reads of
 *   the loadfile. No partial transfers at all with 128 KiB pipes, even
 *   for 65,595-byte bodies, and no read() of more than 8 bytes of a socket.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

#include "backend.h"
#include "companion.h"
#include "sockopt.h"
#include "wire.h"

/* 18 pipe buffers hold a largest frame (a header page and 17 body pages);
 * 128 KiB gives 32. */
enum { PIPE_BYTES = 128 * 1024 };

/* SPLICE_F_MOVE is only a hint that current kernels ignore: splice moves
 * page references, never pages. We pass it where moving is what we mean. */
#define MOVE SPLICE_F_MOVE

/* One side of the connection: everything its thread or process touches. */
struct splice_end {
	int sock;
	int pipe[2];
	int devnull;
	const uint8_t *zeros;
	/* The header is vmspliced by reference: it is rewritten only after the
	 * peer's answer, whose ACK has released the previous one. */
	uint8_t out[WIRE_HEADER];
	uint8_t in[WIRE_HEADER];
};

struct splice_conn {
	struct splice_end client, server;
	uint8_t *zeros;
	size_t zeros_len;
	struct companion server_task;
	char peer[32];
};

/* ---- moving bytes ------------------------------------------------------ */

/* All `len` bytes in the pipe out to `to` (the socket or /dev/null). */
static int pipe_out(struct splice_end *e, int to, size_t len, unsigned flags,
		    const char *what, const char **call)
{
	while (len > 0) {
		ssize_t n = splice(e->pipe[0], NULL, to, NULL, len, flags);
		if (n <= 0) {
			if (n < 0 && errno == EINTR)
				continue;
			if (n == 0)
				errno = EIO;
			*call = what;
			return -1;
		}
		len -= (size_t)n;
	}
	return 0;
}

/* A frame: `hdrlen` bytes of e->out, then `body` zeros. vmsplice stops
 * short when the pipe is full; then the pipe is emptied and it goes on. */
static int send_spliced(struct splice_end *e, size_t hdrlen, size_t body, const char **call)
{
	struct iovec iov[2] = { { e->out, hdrlen }, { (void *)e->zeros, body } };
	struct iovec *v = iov;
	int nv = 2;
	size_t left = hdrlen + body;

	while (left > 0) {
		ssize_t n = vmsplice(e->pipe[1], v, (unsigned long)nv, 0);
		if (n <= 0) {
			if (n < 0 && errno == EINTR)
				continue;
			if (n == 0)
				errno = EIO;
			*call = "vmsplice";
			return -1;
		}
		left -= (size_t)n;
		iov_advance(&v, &nv, (size_t)n);
		/* SPLICE_F_MORE corks the socket while the rest of the frame has
		 * yet to enter the pipe. */
		if (pipe_out(e, e->sock, (size_t)n, MOVE | (left > 0 ? SPLICE_F_MORE : 0),
			     "splice(pipe -> socket)", call) < 0)
			return -1;
	}
	return 0;
}

/* `len` body bytes socket -> pipe -> /dev/null. A socket splice returns
 * what has arrived (and what fits the pipe), so it may take several
 * rounds; the pipe is emptied after each, so the next never blocks on it.
 * -1 with errno 0: the peer closed. */
static int drain_spliced(struct splice_end *e, size_t len, const char **call)
{
	while (len > 0) {
		ssize_t n = splice(e->sock, NULL, e->pipe[1], NULL, len, MOVE);
		if (n <= 0) {
			if (n < 0 && errno == EINTR)
				continue;
			if (n == 0)
				errno = 0;
			*call = "splice(socket -> pipe)";
			return -1;
		}
		len -= (size_t)n;
		if (pipe_out(e, e->devnull, (size_t)n, MOVE, "splice(pipe -> /dev/null)", call) < 0)
			return -1;
	}
	return 0;
}

/* 1: all `len` bytes; 0: the peer closed before the first; -1: error,
 * errno 0 when the peer closed part-way. */
static int read_header(int fd, uint8_t *buf, size_t len)
{
	size_t got = 0;

	while (got < len) {
		ssize_t n = read(fd, buf + got, len - got);
		if (n > 0) {
			got += (size_t)n;
			continue;
		}
		if (n < 0 && errno == EINTR)
			continue;
		if (n == 0) {
			if (got == 0)
				return 0;
			errno = 0;
		}
		return -1;
	}
	return 1;
}

/* ---- the server -------------------------------------------------------- */

/* Frames until the peer closes between two: 0; else -1 with err. */
static int serve_frames(struct splice_end *e, struct errbuf *err)
{
	const char *call = "";

	for (;;) {
		int r = read_header(e->sock, e->in, WIRE_HEADER);
		if (r == 0)
			return 0;
		if (r < 0)
			return errno ? err_errno(err, "reading a frame header")
				     : err_set(err, "peer closed mid-frame header");
		uint32_t n = get_be32(e->in), reply = get_be32(e->in + 4);
		if (wire_check_frame(n, reply, err) < 0)
			return -1;
		if (drain_spliced(e, n - 4, &call) < 0)
			return errno ? err_errno(err, "%s: receiving a %u-byte frame", call, n + 4)
				     : err_set(err, "peer closed mid-frame");
		put_be32(e->out, reply);
		if (send_spliced(e, 4, reply, &call) < 0)
			return err_errno(err, "%s: sending a %u-byte reply", call, reply + 4);
	}
}

/* A server that gives up shuts its end, so its client sees the end of
 * the stream at once instead of waiting for a reply that never comes. */
static void serve(void *arg)
{
	struct splice_conn *c = arg;
	struct errbuf err;

	if (serve_frames(&c->server, &err) < 0)
		fprintf(stderr, "tbench: %s: %s\n", c->peer, err.msg);
	shutdown(c->server.sock, SHUT_RDWR);
}

static void close_end(struct splice_end *e)
{
	int *fds[] = { &e->sock, &e->pipe[0], &e->pipe[1] };

	for (size_t i = 0; i < sizeof(fds) / sizeof(fds[0]); i++)
		if (*fds[i] >= 0) {
			close(*fds[i]);
			*fds[i] = -1;
		}
}

static int start_server(struct splice_conn *c, const struct backend_config *cfg, unsigned client,
			struct errbuf *err)
{
	struct splice_end *e = &c->server;

	c->server_task = (struct companion){
		.serve = serve, .arg = c, .nkeep = 4,
		.keep = { e->sock, e->pipe[0], e->pipe[1], e->devnull },
		.cpus = cfg->server_cpus, .index = client,
	};
	if (companion_start(&c->server_task, backend_solo_processes(cfg), c->peer, err) < 0)
		return -1;
	if (companion_is_process(&c->server_task))
		close_end(&c->server);
	return 0;
}

/* ---- set-up ------------------------------------------------------------ */

/* Frames go to TCP whole (or corked with MSG_MORE): Nagle could only hold
 * back a frame's tail. */
static int no_delay(int fd, struct errbuf *err)
{
	int one = 1;

	if (setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one)) < 0)
		return err_errno(err, "splice: TCP_NODELAY on its loopback connection");
	return 0;
}

/* Zeroed pages for every body, faulted in now so vmsplice references
 * ordinary pages, then made read-only: nothing ever writes them again. */
static int map_zeros(struct splice_conn *c)
{
	long page = sysconf(_SC_PAGESIZE);

	c->zeros_len = ((size_t)WIRE_LIMIT + (size_t)page - 1) / (size_t)page * (size_t)page;
	c->zeros = mmap(NULL, c->zeros_len, PROT_READ | PROT_WRITE,
			MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (c->zeros == MAP_FAILED) {
		c->zeros = NULL;
		return -1;
	}
	memset(c->zeros, 0, c->zeros_len);
	return mprotect(c->zeros, c->zeros_len, PROT_READ);
}

/* One pipe per side serves both directions: each transfer leaves it empty.
 * A bigger pipe saves system calls; if the limit refuses, it still works. */
static int make_pipe(struct splice_end *e)
{
	if (pipe2(e->pipe, O_CLOEXEC) < 0)
		return -1;
	(void)fcntl(e->pipe[1], F_SETPIPE_SZ, PIPE_BYTES);
	return 0;
}

/* Kernels or sandboxes that refuse splice on sockets (EINVAL, ENOSYS,
 * EPERM under seccomp) are caught here with a clear message rather than
 * on the first exchange: 8 bytes through every path the run will use. */
static int probe(struct splice_conn *c, struct errbuf *err)
{
	const char *call = "";

	if (send_spliced(&c->client, 0, 8, &call) < 0 ||
	    drain_spliced(&c->server, 8, &call) < 0)
		return err_set(err, "splice: the kernel refused %s (%s); this backend needs "
			       "vmsplice(2) and splice(2) on TCP sockets: use -b tcp",
			       call, errno ? strerror(errno) : "connection closed");
	return 0;
}

static int setup(struct splice_conn *c, struct errbuf *err)
{
	if (map_zeros(c) < 0)
		return err_errno(err, "splice: mapping %zu zero bytes", c->zeros_len);
	if (loopback_pair("splice", AF_INET, NULL, &c->client.sock, &c->server.sock, err) < 0 ||
	    no_delay(c->client.sock, err) < 0 || no_delay(c->server.sock, err) < 0)
		return -1;
	if (make_pipe(&c->client) < 0 || make_pipe(&c->server) < 0)
		return err_errno(err, "splice: creating the pipes that carry spliced bytes");
	c->client.devnull = c->server.devnull = open("/dev/null", O_WRONLY | O_CLOEXEC);
	if (c->client.devnull < 0)
		return err_errno(err, "splice: opening /dev/null");
	c->client.zeros = c->server.zeros = c->zeros;
	return probe(c, err);
}

static void conn_free(struct splice_conn *c)
{
	close_end(&c->client);
	close_end(&c->server);
	if (c->client.devnull >= 0)
		close(c->client.devnull);
	if (c->zeros)
		munmap(c->zeros, c->zeros_len);
	free(c);
}

static int splice_open(void *run, const struct backend_config *cfg, unsigned client,
		       void **conn, struct errbuf *err)
{
	struct splice_conn *c = calloc(1, sizeof(*c));

	(void)run;
	if (!c)
		return err_set(err, "splice: out of memory");
	snprintf(c->peer, sizeof(c->peer), "splice server %u", client);
	struct splice_end *ends[] = { &c->client, &c->server };
	for (int i = 0; i < 2; i++)
		ends[i]->sock = ends[i]->pipe[0] = ends[i]->pipe[1] = ends[i]->devnull = -1;
	if (setup(c, err) < 0 || start_server(c, cfg, client, err) < 0) {
		conn_free(c);
		return -1;
	}
	*conn = c;
	return 0;
}

/* ---- the client's hot path --------------------------------------------- */

static int splice_exchange(void *conn, uint32_t send, uint32_t recv, struct errbuf *err)
{
	struct splice_conn *c = conn;
	struct splice_end *e = &c->client;
	const char *call = "";

	/* The server judges the sizes; here only what the zero pages can carry. */
	if (send < WIRE_HEADER || recv < 4 || send > WIRE_LIMIT)
		return err_set(err, "splice: a %u-byte request for a %u-byte reply does not fit "
			       "the wire protocol", send, recv);
	put_be32(e->out, send - 4);
	put_be32(e->out + 4, recv - 4);
	if (send_spliced(e, WIRE_HEADER, send - WIRE_HEADER, &call) < 0)
		return err_errno(err, "%s: sending %u bytes to %s", call, send, c->peer);
	int r = read_header(e->sock, e->in, 4);
	if (r <= 0) {
		if (r == 0)
			errno = 0;
		return err_errno(err, "receiving %u-byte reply from %s", recv, c->peer);
	}
	if (get_be32(e->in) != recv - 4)
		return err_set(err, "lost sync with %s: reply length %u, expected %u",
			       c->peer, get_be32(e->in), recv - 4);
	if (drain_spliced(e, recv - 4, &call) < 0)
		return err_errno(err, "%s: receiving %u-byte reply from %s", call, recv, c->peer);
	return 0;
}

/* Shutting the client's end is the server's end-of-stream; it also frees
 * a server stuck mid-reply after the client gave up on it. */
static void splice_close(void *conn)
{
	struct splice_conn *c = conn;

	shutdown(c->client.sock, SHUT_RDWR);
	close_end(&c->client);
	companion_wait(&c->server_task);
	conn_free(c);
}

static void splice_socket_info(void *conn, struct socket_readback *out)
{
	const struct splice_conn *c = conn;

	sockopt_read_back(c->client.sock, out);
}

const struct backend backend_splice = {
	.name = "splice",
	.summary = "loopback TCP per client, bodies moved with splice/vmsplice: no user-space copies",
	.flags = BACKEND_TCP | BACKEND_OFFLOADS | BACKEND_SWEPT,
	/* TCP without tcp's user-space copies: other steps, not fewer of tcp's */
	.path = { .extends = "nop", .layer = "splice", .adds = "TCP/IP with splice(), no user-space copy",
		  .differs_from = "tcp", .drops_replies = true },
	.open = splice_open,
	.exchange = splice_exchange,
	.close = splice_close,
	.socket_info = splice_socket_info,
	.add_settings = backend_no_settings,
};
