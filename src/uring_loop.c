/* See uring_loop.h. A completion's user_data is its connection's address
 * with the kind of operation in the low bits (connections are malloc'd,
 * so aligned); the accept and the stop poll have no connection. A
 * connection is freed only once neither its receive nor its send is in
 * the kernel: an error shuts its socket down, which ends the receive. */
#include "config.h"
#include "uring_loop.h"

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include "wire.h"

enum {
	LOOP_ENTRIES = 256,
	BUF_SIZE = 16384,
	REPLIES_QUEUED = 16,          /* requests a peer may send ahead of their replies */
	TAG_RECV = 0, TAG_SEND = 1, TAG_KIND = 3,
	TAG_ACCEPT = 1, TAG_STOP = 2, TAG_PAUSE = 3, TAG_INBOX = 4,   /* with no connection */
	/* After a failed accept (a full fd table): the pending connection is
	 * still queued, so accepting again at once would fail at once, forever. */
	ACCEPT_PAUSE_MS = 50,
};

struct lconn {
	int fd;
	unsigned long id;
	bool receiving, sending, closing;
	const char *why;              /* why it is closing; NULL: the peer closed */
	char whybuf[ERRBUF_SIZE];
	uint8_t hdr[WIRE_HEADER];     /* the frame's header as it comes in */
	unsigned hdr_have;
	uint32_t left;                /* of the frame's body, still to come */
	uint32_t queue[REPLIES_QUEUED];
	unsigned qhead, qlen;
	uint8_t rhdr[4];              /* the reply in flight: its length word */
	size_t sent;
	struct iovec iov[2];
	struct msghdr msg;
	struct lconn *prev, *next;
};

struct loop {
	const struct uring_loop_config *cfg;
	struct io_uring ring;
	struct uring_bufs bufs;
	struct lconn *conns;
	struct __kernel_timespec pause;   /* read by the kernel when the timeout is submitted */
	struct uring_handoff inbox;       /* written by the kernel when the read completes */
	bool stopping;
};

static struct io_uring_sqe *get_sqe(struct loop *l)
{
	struct io_uring_sqe *sqe;

	while (!(sqe = io_uring_get_sqe(&l->ring)))
		io_uring_submit(&l->ring);
	return sqe;
}

static uint64_t tag(const struct lconn *c, unsigned kind)
{
	return (uint64_t)(uintptr_t)c | kind;
}

static void arm_recv(struct loop *l, struct lconn *c)
{
	uring_prep_recv_multishot(get_sqe(l), c->fd, &l->bufs, 0, tag(c, TAG_RECV));
	c->receiving = true;
}

static void arm_accept(struct loop *l)
{
	struct io_uring_sqe *sqe = get_sqe(l);

	io_uring_prep_multishot_accept(sqe, l->cfg->listen_fd, NULL, NULL, SOCK_CLOEXEC);
	io_uring_sqe_set_data64(sqe, TAG_ACCEPT);
}

static void arm_pause(struct loop *l)
{
	struct io_uring_sqe *sqe = get_sqe(l);

	l->pause = (struct __kernel_timespec){ .tv_nsec = ACCEPT_PAUSE_MS * 1000000L };
	io_uring_prep_timeout(sqe, &l->pause, 0, 0);
	io_uring_sqe_set_data64(sqe, TAG_PAUSE);
}

static void arm_inbox(struct loop *l)
{
	struct io_uring_sqe *sqe = get_sqe(l);

	io_uring_prep_read(sqe, l->cfg->inbox_fd, &l->inbox, sizeof(l->inbox), 0);
	io_uring_sqe_set_data64(sqe, TAG_INBOX);
}

static void arm_stop(struct loop *l)
{
	struct io_uring_sqe *sqe = get_sqe(l);

	io_uring_prep_poll_add(sqe, l->cfg->stop_fd, POLLIN);
	io_uring_sqe_set_data64(sqe, TAG_STOP);
}

/* ---- connections -------------------------------------------------------- */

static struct lconn *conn_add(struct loop *l, int fd, unsigned long id)
{
	struct lconn *c = calloc(1, sizeof(*c));

	if (!c)
		return NULL;
	c->fd = fd;
	c->id = id;
	c->next = l->conns;
	if (l->conns)
		l->conns->prev = c;
	l->conns = c;
	return c;
}

static void conn_free(struct loop *l, struct lconn *c)
{
	if (c->prev)
		c->prev->next = c->next;
	else
		l->conns = c->next;
	if (c->next)
		c->next->prev = c->prev;
	if (l->cfg->ended)
		l->cfg->ended(l->cfg->arg, c->fd, c->id, c->why);
	if (l->cfg->listen_fd >= 0)   /* accepted here: ours; else the caller's */
		close(c->fd);
	free(c);
}

/* The first reason wins; shutting the socket down ends its receive. */
static void conn_fail(struct lconn *c, const char *why)
{
	if (!c->closing && why) {
		snprintf(c->whybuf, sizeof(c->whybuf), "%s", why);
		c->why = c->whybuf;
	}
	c->closing = true;
	shutdown(c->fd, SHUT_RDWR);
}

static void conn_settle(struct loop *l, struct lconn *c)
{
	if (c->closing && !c->receiving && !c->sending)
		conn_free(l, c);
}

/* ---- replies ------------------------------------------------------------ */

/* The reply in flight from byte `sent` on: its length word, then zeros. */
static void send_rest(struct loop *l, struct lconn *c)
{
	uint32_t body = c->queue[c->qhead];
	size_t n = 0;

	if (c->sent < 4)
		c->iov[n++] = (struct iovec){ c->rhdr + c->sent, 4 - c->sent };
	size_t from = c->sent > 4 ? c->sent - 4 : 0;
	c->iov[n++] = (struct iovec){ (void *)(wire_zeros + from), body - from };
	c->msg = (struct msghdr){ .msg_iov = c->iov, .msg_iovlen = n };
	struct io_uring_sqe *sqe = get_sqe(l);
	io_uring_prep_sendmsg(sqe, c->fd, &c->msg, MSG_WAITALL | MSG_NOSIGNAL);
	io_uring_sqe_set_data64(sqe, tag(c, TAG_SEND));
	c->sending = true;
}

static void send_next(struct loop *l, struct lconn *c)
{
	if (c->sending || !c->qlen || c->closing)
		return;
	put_be32(c->rhdr, c->queue[c->qhead]);
	c->sent = 0;
	send_rest(l, c);
}

static void on_send(struct loop *l, struct lconn *c, int res)
{
	char why[ERRBUF_SIZE];

	c->sending = false;
	if (res < 0) {
		snprintf(why, sizeof(why), "sending a %u-byte reply: %s", c->queue[c->qhead],
			 strerror(-res));
		conn_fail(c, why);
	} else if ((c->sent += (size_t)res) < (size_t)c->queue[c->qhead] + 4) {
		if (!c->closing)
			send_rest(l, c);
	} else {
		c->qhead = (c->qhead + 1) % REPLIES_QUEUED;
		c->qlen--;
		send_next(l, c);
	}
	conn_settle(l, c);
}

/* ---- requests ----------------------------------------------------------- */

/* A frame's header byte by byte until its 8 are in, then its body
 * skipped; a whole frame queues its reply. -1 with err: a bad frame. */
static int take_bytes(struct lconn *c, const uint8_t *p, size_t len, struct errbuf *err)
{
	while (len) {
		if (c->hdr_have < WIRE_HEADER) {
			size_t take = WIRE_HEADER - c->hdr_have < len ? WIRE_HEADER - c->hdr_have : len;
			memcpy(c->hdr + c->hdr_have, p, take);
			/* The length alone checked first, as the other servers check it. */
			if (c->hdr_have < 4 && c->hdr_have + take >= 4 &&
			    wire_check_frame(get_be32(c->hdr), 0, err) < 0)
				return -1;
			c->hdr_have += (unsigned)take;
			p += take;
			len -= take;
			if (c->hdr_have < WIRE_HEADER)
				continue;
			uint32_t n = get_be32(c->hdr), reply = get_be32(c->hdr + 4);
			if (wire_check_frame(n, reply, err) < 0)
				return -1;
			c->left = n - 4;
		} else {
			size_t take = c->left < len ? c->left : len;
			c->left -= (uint32_t)take;
			p += take;
			len -= take;
		}
		if (c->left == 0) {
			if (c->qlen == REPLIES_QUEUED)
				return err_set(err, "more than %d requests ahead of their replies",
					       REPLIES_QUEUED);
			c->queue[(c->qhead + c->qlen++) % REPLIES_QUEUED] = get_be32(c->hdr + 4);
			c->hdr_have = 0;
		}
	}
	return 0;
}

static void on_recv(struct loop *l, struct lconn *c, const struct io_uring_cqe *cqe)
{
	struct errbuf err;
	char why[ERRBUF_SIZE];
	bool more = cqe->flags & IORING_CQE_F_MORE;

	if (cqe->res > 0) {
		unsigned bid = uring_cqe_bid(cqe);
		int rc = take_bytes(c, uring_bufs_data(&l->bufs, bid), (size_t)cqe->res, &err);
		uring_bufs_recycle(&l->bufs, bid);
		if (rc < 0)
			conn_fail(c, err.msg);
		send_next(l, c);
	} else if (cqe->res == 0) {
		snprintf(why, sizeof(why), "peer closed mid-frame after %u bytes",
			 c->hdr_have + (c->hdr_have == WIRE_HEADER ? get_be32(c->hdr) - 4 - c->left : 0));
		conn_fail(c, c->hdr_have ? why : NULL);
	} else if (cqe->res == -EINVAL && !more) {
		conn_fail(c, "multishot receive refused (Linux 6.0+)");
	} else if (cqe->res != -ENOBUFS) {
		snprintf(why, sizeof(why), "reading a frame: %s", strerror(-cqe->res));
		conn_fail(c, why);
	}
	if (!more) {
		/* Ended, ENOBUFS among the reasons (every buffer held): again. */
		c->receiving = false;
		if (!c->closing)
			arm_recv(l, c);
	}
	conn_settle(l, c);
}

/* A failed accept ends the multishot one. A connection that went away
 * leaves the next fine: accept again. Anything else (EMFILE, ENFILE,
 * ENOBUFS, ...) pauses first. cfg->accept_failed is told either way. */
static void accept_failed(struct loop *l, int res)
{
	bool pause = res != -EINTR && res != -EAGAIN && res != -ECONNABORTED && res != -EPROTO &&
		     res != -EPERM;

	if (l->cfg->accept_failed)
		l->cfg->accept_failed(l->cfg->arg, -res, pause ? ACCEPT_PAUSE_MS : 0);
	if (l->stopping)
		return;
	if (pause)
		arm_pause(l);
	else
		arm_accept(l);
}

static void serve(struct loop *l, int fd, unsigned long id)
{
	struct lconn *c = conn_add(l, fd, id);

	if (!c) {
		close(fd);
		return;
	}
	arm_recv(l, c);
}

static void on_accept(struct loop *l, const struct io_uring_cqe *cqe)
{
	unsigned long id = 0;

	if (cqe->res < 0) {
		if (!(cqe->flags & IORING_CQE_F_MORE))
			accept_failed(l, cqe->res);
		return;
	}
	if (!(cqe->flags & IORING_CQE_F_MORE) && !l->stopping)
		arm_accept(l);
	if (l->cfg->accepted && l->cfg->accepted(l->cfg->arg, cqe->res, &id) != 0)
		return;   /* refused, or handed to another loop */
	serve(l, cqe->res, id);
}

/* A connection another loop accepted for this one. The inbox's writers
 * live as long as the loops: an end or an error means the server stops. */
static void on_inbox(struct loop *l, const struct io_uring_cqe *cqe)
{
	if (cqe->res != (int)sizeof(l->inbox))
		return;
	serve(l, l->inbox.fd, l->inbox.id);
	if (!l->stopping)
		arm_inbox(l);
}

/* The pause after a failed accept is over. */
static void on_pause(struct loop *l)
{
	if (!l->stopping)
		arm_accept(l);
}

/* ---- the loop ----------------------------------------------------------- */

static void on_cqe(struct loop *l, const struct io_uring_cqe *cqe)
{
	uint64_t t = io_uring_cqe_get_data64(cqe);
	struct lconn *c = (struct lconn *)(uintptr_t)(t & ~(uint64_t)TAG_KIND);

	if (t == TAG_ACCEPT)
		on_accept(l, cqe);
	else if (t == TAG_STOP)
		l->stopping = true;
	else if (t == TAG_PAUSE)
		on_pause(l);
	else if (t == TAG_INBOX)
		on_inbox(l, cqe);
	else if ((t & TAG_KIND) == TAG_SEND)
		on_send(l, c, cqe->res);
	else
		on_recv(l, c, cqe);
}

static int loop_start(struct loop *l, struct errbuf *err)
{
	struct io_uring_params p = { 0 };
	struct uring_ring_got got;
	int rc = uring_ring_init(&l->ring, LOOP_ENTRIES, &p, &got);

	if (rc < 0) {
		errno = -rc;
		return err_errno(err, "uring: io_uring_setup");
	}
	if (l->cfg->got)
		*l->cfg->got = got;
	if (uring_bufs_init(&l->ring, &l->bufs, 0, l->cfg->bufs, BUF_SIZE, err) < 0) {
		io_uring_queue_exit(&l->ring);
		return -1;
	}
	if (l->cfg->stop_fd >= 0)
		arm_stop(l);
	if (l->cfg->inbox_fd >= 0)
		arm_inbox(l);
	if (l->cfg->listen_fd >= 0) {
		arm_accept(l);
	} else {
		struct lconn *c = conn_add(l, l->cfg->conn_fd, 0);
		if (!c) {
			uring_bufs_free(&l->ring, &l->bufs);
			io_uring_queue_exit(&l->ring);
			return err_set(err, "uring: out of memory");
		}
		arm_recv(l, c);
	}
	return 0;
}

/* The ring first: its exit cancels every request, which may name a
 * connection, before the connections go. A connection cut off by the
 * stop ends with no reason given. */
static void loop_end(struct loop *l)
{
	uring_bufs_free(&l->ring, &l->bufs);
	io_uring_queue_exit(&l->ring);
	while (l->conns)
		conn_free(l, l->conns);
}

int uring_loop_run(const struct uring_loop_config *cfg, struct errbuf *err)
{
	struct loop l = { .cfg = cfg };
	int rc = 0;

	if (loop_start(&l, err) < 0)
		return -1;
	/* One connection alone: done when it is gone. */
	while (!l.stopping && (cfg->listen_fd >= 0 || l.conns)) {
		struct io_uring_cqe *cqe;
		unsigned head, seen = 0;
		/* EAGAIN (no resources for now) and EBUSY (completions waiting
		 * to be flushed) ask for completions to be reaped, then again. */
		int n = io_uring_submit_and_wait(&l.ring, 1);
		if (n < 0 && n != -EINTR && n != -EAGAIN && n != -EBUSY) {
			errno = -n;
			rc = err_errno(err, "uring: waiting for completions");
			break;
		}
		io_uring_for_each_cqe(&l.ring, head, cqe) {
			on_cqe(&l, cqe);
			seen++;
		}
		io_uring_cq_advance(&l.ring, seen);
	}
	loop_end(&l);
	return rc;
}
