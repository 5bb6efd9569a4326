#include "config.h"
#include "wire.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

const uint8_t wire_zeros[WIRE_LIMIT];

/* Header and zero filler in one system call. */
static int send_frame(int fd, const uint8_t *hdr, size_t hdrlen, size_t total)
{
	struct iovec iov[2] = {
		{ (void *)hdr, hdrlen },
		{ (void *)wire_zeros, total - hdrlen },
	};
	int n_iov = 2;
	struct iovec *v = iov;

	while (n_iov > 0) {
		ssize_t n = writev(fd, v, n_iov);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		iov_advance(&v, &n_iov, (size_t)n);
	}
	return 0;
}

int wire_exchange(int wfd, int rfd, uint8_t *buf, uint32_t send, uint32_t recv,
		  const char *peer, struct errbuf *err)
{
	uint8_t hdr[WIRE_HEADER];
	size_t got = 0;

	put_be32(hdr, send - 4);
	put_be32(hdr + 4, recv - 4);
	if (send_frame(wfd, hdr, send < WIRE_HEADER ? send : WIRE_HEADER, send) < 0)
		return err_errno(err, "sending %u bytes to %s", send, peer);

	/* Usually the whole reply arrives in one read; the header is checked as
	 * soon as it is in, so a peer out of step is caught, not waited for. */
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

int wire_stream_exchange(void *conn, uint32_t send, uint32_t recv, struct errbuf *err)
{
	struct wire_stream *c = conn;

	return wire_exchange(c->fd, c->fd, c->buf, send, recv, c->peer, err);
}

void wire_stream_close(void *conn)
{
	struct wire_stream *c = conn;

	close(c->fd);
	free(c);
}

/* One complete frame is at `in`: answer it. */
static int answer(int wfd, const uint8_t *in, uint32_t n, struct errbuf *err)
{
	uint8_t hdr[4];

	if (n < 4)
		return err_set(err, "frame of %u bytes is too short to hold the reply length", n);
	uint32_t r = get_be32(in + 4);
	if ((uint64_t)r + 4 >= WIRE_LIMIT)
		return err_set(err, "reply of %u bytes asked for, over the limit of %d", r,
			       WIRE_LIMIT - 5);
	put_be32(hdr, r);
	if (send_frame(wfd, hdr, 4, (size_t)r + 4) < 0)
		return err_errno(err, "sending %u-byte reply", r + 4);
	return 0;
}

int wire_serve(int rfd, int wfd, struct errbuf *err)
{
	uint8_t *in = malloc(WIRE_LIMIT);
	size_t have = 0;
	int rc = -1;

	if (!in)
		return err_set(err, "out of memory for the frame buffer");
	for (;;) {
		if (have >= 4) {
			uint32_t n = get_be32(in);
			if ((uint64_t)n + 4 >= WIRE_LIMIT) {
				err_set(err, "frame of %u bytes is over the limit of %d", n,
					WIRE_LIMIT - 5);
				break;
			}
			if (have >= n + 4) {
				if (answer(wfd, in, n, err) < 0)
					break;
				have -= n + 4;
				memmove(in, in + n + 4, have);
				continue;
			}
		}
		ssize_t got = read(rfd, in + have, WIRE_LIMIT - have);
		if (got < 0 && errno == EINTR)
			continue;
		if (got < 0) {
			err_errno(err, "reading a frame");
			break;
		}
		if (got == 0) {
			if (have == 0)
				rc = 0;
			else
				err_set(err, "peer closed mid-frame after %zu bytes", have);
			break;
		}
		have += (size_t)got;
	}
	free(in);
	return rc;
}
