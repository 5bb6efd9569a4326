/* Fuzz target: a server's handling of the frames a peer sends (src/wire.c),
 * the code every server side runs for one connection.
 *
 * The input is the peer's bytes. A peer thread writes them and then closes
 * its sending side, reading replies all along; the server side is the real
 * one: wire_serve_socket() on a socketpair with the timeouts server.c sets
 * on an accepted socket, then wire_serve_pipe() on a pair of pipes as the
 * pipe backend runs it. A model of the protocol, written from docs/protocol.md
 * rather than from wire.c, says which frames must be answered and whether
 * the connection must end cleanly or with an error; every reply byte is
 * checked against it as it arrives. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include "fuzz.h"
#include "wire.h"

/* Generous: a sanitized build on a loaded machine; the peer never stalls. */
enum { TIMEOUT_SECS = 10 };

/* What the protocol says of an input: the reply lengths of the frames to
 * answer, in order, and whether the peer ends cleanly between frames. */
struct model {
	uint32_t *replies;
	size_t n;
	int clean;
};

static int model_input(const uint8_t *data, size_t size, struct model *m)
{
	size_t at = 0;

	m->n = 0;
	m->replies = malloc((size / 8 + 1) * sizeof(*m->replies));
	if (!m->replies)
		return -1;
	for (;;) {
		if (at == size) {
			m->clean = 1;
			return 0;
		}
		m->clean = 0;
		if (size - at < 4)
			return 0;
		uint32_t n = get_be32(data + at);
		if (n < 4 || (uint64_t)n + 4 >= WIRE_LIMIT || size - at - 4 < n)
			return 0;
		uint32_t reply = get_be32(data + at + 4);
		if ((uint64_t)reply + 4 >= WIRE_LIMIT)
			return 0;
		m->replies[m->n++] = reply;
		at += 4 + (size_t)n;
	}
}

/* The peer: its bytes out, the server's replies in, checked as they come. */
struct peer {
	int wfd, rfd;
	int is_socket;              /* shut its sending side, else close it */
	const uint8_t *data;
	size_t size, sent;
	const struct model *m;
	size_t reply, at;           /* the reply being read, and how far into it */
};

static void take_reply_bytes(struct peer *p, const uint8_t *buf, size_t n)
{
	while (n > 0) {
		FUZZ_CHECK(p->reply < p->m->n);   /* no reply the protocol does not owe */
		uint32_t want = p->m->replies[p->reply];
		size_t take = 1;
		if (p->at < 4) {
			uint8_t hdr[4];
			put_be32(hdr, want);
			FUZZ_CHECK(buf[0] == hdr[p->at]);
		} else {   /* the body: zeros */
			take = 4 + (size_t)want - p->at;
			take = take < n ? take : n;
			FUZZ_CHECK(buf[0] == 0 && memcmp(buf, buf + 1, take - 1) == 0);
		}
		buf += take;
		n -= take;
		p->at += take;
		if (p->at == 4 + (size_t)want) {
			p->reply++;
			p->at = 0;
		}
	}
}

static void end_sending(struct peer *p)
{
	if (p->is_socket)
		FUZZ_CHECK(shutdown(p->wfd, SHUT_WR) == 0 || errno == ENOTCONN);
	else
		close(p->wfd);
	p->wfd = -1;
}

/* As much as the peer's fd takes now (its fds never block); at the end, or
 * when the server has stopped reading (EPIPE, ECONNRESET), it ends sending. */
static void send_some(struct peer *p)
{
	while (p->sent < p->size) {
		ssize_t w = p->is_socket
			? send(p->wfd, p->data + p->sent, p->size - p->sent, MSG_NOSIGNAL | MSG_DONTWAIT)
			: write(p->wfd, p->data + p->sent, p->size - p->sent);
		if (w < 0 && (errno == EAGAIN || errno == EINTR))
			return;
		if (w < 0)
			break;
		p->sent += (size_t)w;
	}
	end_sending(p);
}

/* Sends the rest and reads replies until the server's side is closed. */
static void *peer_main(void *arg)
{
	struct peer *p = arg;
	static uint8_t buf[WIRE_LIMIT];   /* one peer at a time */

	for (;;) {
		struct pollfd fds[2] = {
			{ .fd = p->rfd, .events = POLLIN },
			{ .fd = p->wfd, .events = POLLOUT },
		};
		int n = poll(fds, 2, -1);
		if (n < 0 && errno == EINTR)
			continue;
		FUZZ_CHECK(n > 0);
		if (fds[1].revents)
			send_some(p);
		if (fds[0].revents) {
			ssize_t r = read(p->rfd, buf, sizeof(buf));
			if (r > 0)
				take_reply_bytes(p, buf, (size_t)r);
			else if (r == 0 || errno == ECONNRESET)
				break;
			else
				FUZZ_CHECK(errno == EINTR || errno == EAGAIN);
		}
	}
	if (p->wfd >= 0)
		end_sending(p);
	return NULL;
}

/* Whether the whole conversation fits in the kernel's buffers, so the peer
 * can send everything first and read the replies after the server is done:
 * no thread, no context switch per frame, which on a loaded machine is
 * what a fuzzer's speed depends on. The rest take the peer thread. */
static int fits_unthreaded(struct peer *p, size_t room, size_t per_reply)
{
	size_t need = 0;

	for (size_t i = 0; i < p->m->n; i++)
		need += 4 + (size_t)p->m->replies[i] + per_reply;
	if (need > room)
		return 0;
	send_some(p);
	return p->wfd < 0;
}

typedef int serve_fn(int rfd, int wfd, struct errbuf *err);

/* The server on (rfd, wfd) against the peer; closes the server's fds. */
static void converse(struct peer *p, serve_fn *serve, int rfd, int wfd, size_t room,
		     size_t per_reply)
{
	const struct model *m = p->m;
	struct errbuf err = { "" };
	pthread_t thread;
	int alone = fits_unthreaded(p, room, per_reply);

	if (!alone)
		FUZZ_CHECK(pthread_create(&thread, NULL, peer_main, p) == 0);
	int rc = serve(rfd, wfd, &err);
	close(rfd);   /* the peer reads what is left, then the end */
	if (wfd != rfd)
		close(wfd);
	if (alone)
		peer_main(p);
	else
		FUZZ_CHECK(pthread_join(thread, NULL) == 0);
	FUZZ_CHECK(rc == (m->clean ? 0 : -1));
	FUZZ_CHECK(p->reply == m->n && p->at == 0);   /* every reply owed, whole */
	if (rc < 0)
		FUZZ_CHECK(err.msg[0] && memchr(err.msg, 0, sizeof(err.msg)));
}

static int serve_socket_timeout(int rfd, int wfd, struct errbuf *err)
{
	(void)wfd;
	return wire_serve_socket(rfd, TIMEOUT_SECS, err);
}

static int serve_pipe(int rfd, int wfd, struct errbuf *err)
{
	return wire_serve_pipe(rfd, wfd, err);
}

/* The server's end as server.c prepares an accepted socket. */
static void serve_socket(const uint8_t *data, size_t size, const struct model *m)
{
	struct timeval t = { .tv_sec = TIMEOUT_SECS };
	int sv[2], bufsize = 1 << 22;
	socklen_t len = sizeof(bufsize);

	FUZZ_CHECK(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) == 0);
	FUZZ_CHECK(setsockopt(sv[0], SOL_SOCKET, SO_RCVTIMEO, &t, sizeof(t)) == 0);
	FUZZ_CHECK(setsockopt(sv[0], SOL_SOCKET, SO_SNDTIMEO, &t, sizeof(t)) == 0);
	/* Room for replies; the kernel caps it at net.core.wmem_max. Each
	 * reply costs its bytes, a page of rounding and the buffer's overhead. */
	FUZZ_CHECK(setsockopt(sv[0], SOL_SOCKET, SO_SNDBUF, &bufsize, sizeof(bufsize)) == 0);
	FUZZ_CHECK(setsockopt(sv[1], SOL_SOCKET, SO_SNDBUF, &bufsize, sizeof(bufsize)) == 0);
	FUZZ_CHECK(getsockopt(sv[0], SOL_SOCKET, SO_SNDBUF, &bufsize, &len) == 0);
	struct peer p = { .wfd = sv[1], .rfd = sv[1], .is_socket = 1,
			  .data = data, .size = size, .m = m };
	converse(&p, serve_socket_timeout, sv[0], sv[0], (size_t)bufsize / 2, 4096 + 1024);
	close(sv[1]);
}

static void serve_pipes(const uint8_t *data, size_t size, const struct model *m)
{
	int to_server[2], from_server[2];

	FUZZ_CHECK(pipe(to_server) == 0 && pipe(from_server) == 0);
	/* The peer's ends: a write to a full pipe must not block its reading. */
	FUZZ_CHECK(fcntl(to_server[1], F_SETFL, O_NONBLOCK) == 0);
	FUZZ_CHECK(fcntl(from_server[0], F_SETFL, O_NONBLOCK) == 0);
	/* Room for replies: the pipe's buffer, which may not grow. Writes
	 * share pages, so each wastes at most part of one. */
	for (int i = 0; i < 2; i++)
		fcntl(i ? to_server[1] : from_server[1], F_SETPIPE_SZ, 1 << 20);
	int room = fcntl(from_server[1], F_GETPIPE_SZ);
	FUZZ_CHECK(room > 0);
	struct peer p = { .wfd = to_server[1], .rfd = from_server[0],
			  .data = data, .size = size, .m = m };
	converse(&p, serve_pipe, to_server[0], from_server[1], (size_t)room / 2, 4096);
	close(from_server[0]);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static int once;
	struct model m;

	if (!once) {
		signal(SIGPIPE, SIG_IGN);   /* a peer that stops reading is an error return */
		once = 1;
	}
	if (model_input(data, size, &m) < 0)
		return 0;
	serve_socket(data, size, &m);
	serve_pipes(data, size, &m);
	free(m.replies);
	return 0;
}
