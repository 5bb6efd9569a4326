#include "config.h"
#include "wire.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include "clock.h"

const uint8_t wire_zeros[WIRE_LIMIT];

/* With a timeout, a transfer that has begun must end within it: a peer that
 * trickles bytes is as much a problem as one that sends none. Asked only
 * after a short transfer, so the usual whole one costs no clock read. */
static bool too_slow(uint64_t timeout_ns, uint64_t *deadline)
{
	if (!timeout_ns)
		return false;
	uint64_t now = now_ns();
	if (!*deadline)
		*deadline = now + timeout_ns;
	return now > *deadline;
}

/* Header and zero filler in one system call (more only when the peer's
 * buffer is full). errno ETIMEDOUT: the peer takes too long. */
static int send_frame(int fd, const uint8_t *hdr, size_t hdrlen, size_t total,
		      uint64_t timeout_ns)
{
	struct iovec iov[2] = {
		{ (void *)hdr, hdrlen },
		{ (void *)wire_zeros, total - hdrlen },
	};
	int n_iov = 2;
	struct iovec *v = iov;
	uint64_t deadline = 0;

	for (;;) {
		ssize_t n = writev(fd, v, n_iov);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		iov_advance(&v, &n_iov, (size_t)n);
		if (n_iov == 0)
			return 0;
		if (too_slow(timeout_ns, &deadline)) {
			errno = ETIMEDOUT;
			return -1;
		}
	}
}

void wire_put_request(uint8_t *hdr, uint32_t send, uint32_t recv)
{
	put_be32(hdr, send - 4);
	put_be32(hdr + 4, recv - 4);
}

int wire_send_request(int fd, uint32_t send, uint32_t recv, const char *peer, struct errbuf *err)
{
	uint8_t hdr[WIRE_HEADER];

	wire_put_request(hdr, send, recv);
	if (send_frame(fd, hdr, send < WIRE_HEADER ? send : WIRE_HEADER, send, 0) < 0)
		return err_errno(err, "sending %u bytes to %s", send, peer);
	return 0;
}

/* Usually the whole reply arrives in one read; the header is checked as
 * soon as it is in, so a peer out of step is caught, not waited for. */
static int receive_reply(int rfd, uint8_t *buf, uint32_t recv, const char *peer,
			 struct errbuf *err)
{
	size_t got = 0;

	while (got < recv) {
		ssize_t n = read(rfd, buf + got, recv - got);
		if (n <= 0) {
			if (n < 0 && errno == EINTR)
				continue;
			if (n == 0)
				errno = 0;
			return err_errno(err, "receiving %u-byte reply from %s (got %zu)",
					 recv, peer, got);
		}
		if (got < 4 && got + (size_t)n >= 4 && get_be32(buf) != recv - 4)
			return err_set(err, "lost sync with %s: reply length %u, expected %u",
				       peer, get_be32(buf), recv - 4);
		got += (size_t)n;
	}
	return 0;
}

int wire_exchange(int wfd, int rfd, uint8_t *buf, uint32_t send, uint32_t recv,
		  const char *peer, struct errbuf *err)
{
	if (wire_send_request(wfd, send, recv, peer, err) < 0)
		return -1;
	return receive_reply(rfd, buf, recv, peer, err);
}

/* All `len` bytes (MSG_WAITALL returns short only on a signal). -1 with
 * errno, 0 when the peer closed; *got says how many came. */
static int recv_all(int fd, uint8_t *buf, size_t len, int flags, size_t *got)
{
	*got = 0;
	while (*got < len) {
		ssize_t n = recv(fd, buf + *got, len - *got, flags);
		if (n > 0) {
			*got += (size_t)n;
			continue;
		}
		if (n < 0 && errno == EINTR)
			continue;
		if (n == 0)
			errno = 0;
		return -1;
	}
	return 0;
}

static int receive_reply_discard(int fd, uint8_t *buf, uint32_t recv, const char *peer,
				 struct errbuf *err)
{
	size_t got, body = recv - 4;

	if (recv_all(fd, buf, 4, MSG_WAITALL, &got) < 0)
		return err_errno(err, "receiving %u-byte reply from %s (got %zu)", recv, peer, got);
	if (get_be32(buf) != body)
		return err_set(err, "lost sync with %s: reply length %u, expected %zu",
			       peer, get_be32(buf), body);
	/* `buf` stays untouched on TCP; it is there for a kernel that copies. */
	if (body > 0 && recv_all(fd, buf, body, MSG_WAITALL | MSG_TRUNC, &got) < 0)
		return err_errno(err, "receiving %u-byte reply from %s (got %zu)", recv, peer,
				 4 + got);
	return 0;
}

int wire_exchange_discard(int fd, uint8_t *buf, uint32_t send, uint32_t recv,
			  const char *peer, struct errbuf *err)
{
	if (wire_send_request(fd, send, recv, peer, err) < 0)
		return -1;
	return receive_reply_discard(fd, buf, recv, peer, err);
}

int wire_stream_receive(struct wire_stream *c, uint32_t recv, struct errbuf *err)
{
	if (c->discard_replies)
		return receive_reply_discard(c->fd, c->buf, recv, c->peer, err);
	return receive_reply(c->fd, c->buf, recv, c->peer, err);
}

int wire_stream_exchange(void *conn, uint32_t send, uint32_t recv, struct errbuf *err)
{
	struct wire_stream *c = conn;

	if (wire_send_request(c->fd, send, recv, c->peer, err) < 0)
		return -1;
	return wire_stream_receive(c, recv, err);
}

void wire_stream_close(void *conn)
{
	struct wire_stream *c = conn;

	close(c->fd);
	free(c);
}

/* ---- server side ------------------------------------------------------ */

/* The length word alone, checked before the rest of the frame is read. */
static int check_length(uint32_t n, struct errbuf *err)
{
	if ((uint64_t)n + 4 >= WIRE_LIMIT)
		return err_set(err, "frame of %u bytes is over the limit of %d", n, WIRE_LIMIT - 5);
	if (n < 4)
		return err_set(err, "frame of %u bytes is too short to hold the reply length", n);
	return 0;
}

int wire_check_frame(uint32_t n, uint32_t reply, struct errbuf *err)
{
	if (check_length(n, err) < 0)
		return -1;
	if ((uint64_t)reply + 4 >= WIRE_LIMIT)
		return err_set(err, "reply of %u bytes asked for, over the limit of %d", reply,
			       WIRE_LIMIT - 5);
	return 0;
}

/* Where a server's bytes come from. */
struct serve_in {
	ssize_t (*take)(int fd, void *buf, size_t len);
	int fd;
	unsigned timeout_secs;       /* 0: none */
};

static ssize_t take_socket(int fd, void *buf, size_t len)
{
	return recv(fd, buf, len, MSG_WAITALL);
}

static ssize_t take_pipe(int fd, void *buf, size_t len)
{
	return read(fd, buf, len);
}

/* All `len` bytes: 1. The peer closed before the first: 0. Else -1 with
 * errno (0: closed part-way; EAGAIN: nothing within the timeout, or the
 * rest not within it; ETIMEDOUT: started but too slow); *got says how
 * many came. */
static int take_all(const struct serve_in *in, uint8_t *buf, size_t len, size_t *got)
{
	uint64_t deadline = 0, timeout_ns = in->timeout_secs * 1000000000ull;

	*got = 0;
	while (*got < len) {
		ssize_t n = in->take(in->fd, buf + *got, len - *got);
		if (n > 0) {
			*got += (size_t)n;
			if (*got < len && too_slow(timeout_ns, &deadline)) {
				errno = ETIMEDOUT;
				return -1;
			}
			continue;
		}
		if (n < 0 && errno == EINTR)
			continue;
		if (n == 0) {
			if (*got == 0)
				return 0;
			errno = 0;
		}
		return -1;
	}
	return 1;
}

/* Why a frame could not be read, `have` bytes into it. */
static int take_failed(const struct serve_in *in, size_t have, struct errbuf *err)
{
	if (errno == 0)
		return err_set(err, "peer closed mid-frame after %zu bytes", have);
	if (errno == EAGAIN || errno == EWOULDBLOCK || errno == ETIMEDOUT)
		return err_set(err, "too slow: %zu bytes of a frame in over %u s (--timeout)",
			       have, in->timeout_secs);
	return err_errno(err, "reading a frame");
}

static int serve(const struct serve_in *in, int wfd, uint8_t *buf, struct errbuf *err)
{
	uint64_t timeout_ns = in->timeout_secs * 1000000000ull;
	size_t got;

	for (;;) {
		int r = take_all(in, buf, 4, &got);
		/* A quiet peer between whole frames is kept, as dbench's server
		 * keeps it: a loadfile's Sleep or timestamps may hold a client
		 * for minutes. Only a frame begun and not finished is late. */
		if (r < 0 && got == 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			continue;
		if (r == 0)
			return 0;
		if (r < 0)
			return take_failed(in, got, err);
		uint32_t n = get_be32(buf);
		if (check_length(n, err) < 0)
			return -1;
		r = take_all(in, buf + 4, n, &got);
		if (r <= 0) {
			if (r == 0)
				errno = 0;   /* closed right after the length */
			return take_failed(in, 4 + got, err);
		}
		uint32_t reply = get_be32(buf + 4);
		if (wire_check_frame(n, reply, err) < 0)
			return -1;
		put_be32(buf, reply);
		if (send_frame(wfd, buf, 4, (size_t)reply + 4, timeout_ns) < 0) {
			if (errno == EAGAIN || errno == EWOULDBLOCK || errno == ETIMEDOUT)
				return err_set(err, "too slow taking a %u-byte reply (--timeout %u s)",
					       reply + 4, in->timeout_secs);
			return err_errno(err, "sending %u-byte reply", reply + 4);
		}
	}
}

/* One buffer per connection, the largest frame: a connection never costs more. */
static int serve_with_buffer(const struct serve_in *in, int wfd, struct errbuf *err)
{
	uint8_t *buf = malloc(WIRE_LIMIT);

	if (!buf)
		return err_set(err, "out of memory for the frame buffer");
	int rc = serve(in, wfd, buf, err);
	free(buf);
	return rc;
}

int wire_serve_socket(int fd, unsigned timeout_secs, struct errbuf *err)
{
	struct serve_in in = { take_socket, fd, timeout_secs };

	return serve_with_buffer(&in, fd, err);
}

int wire_serve_pipe(int rfd, int wfd, struct errbuf *err)
{
	struct serve_in in = { take_pipe, rfd, 0 };

	return serve_with_buffer(&in, wfd, err);
}
