/* uring: tcp driven through io_uring (liburing). Each exchange is one
 * io_uring_submit_and_wait(): the request's send linked (IOSQE_IO_LINK) to
 * the reply's receive; set against tcp, what it removes is most of the
 * system calls (tcp makes three an exchange: send, header, body).
 *
 * With SERVER it talks to any tbench_srv there (dbench's or ours), on port
 * 7003 or --port; it connects as the tcp backend does. Without, each
 * client brings its own server over TCP on 127.0.0.1 (a thread, or a
 * process with client processes) that uses io_uring as well: it answers a
 * request with the reply's send linked to the receive of the next one, so
 * both ends change. -T options (default TCP_NODELAY) apply to both ends.
 *
 * As tcp, reply bodies are dropped by the kernel (recv with MSG_TRUNC) unless
 * --copy-replies. --uring LIST, commas between (parsed with the options):
 *   sqpoll     IORING_SETUP_SQPOLL: a kernel thread per ring submits
 *   files      the socket as a registered file
 *   buffers    registered buffers: sends are WRITE_FIXED (SEND_ZC with a
 *              fixed buffer), copied replies READ_FIXED
 *   zc=BYTES   IORING_OP_SEND_ZC for sends of at least BYTES
 * Without sqpoll the ring is SINGLE_ISSUER|DEFER_TASKRUN where the kernel
 * has them (6.1), completions then run when the task waits. A kernel or
 * settings it cannot serve fail check(): exit 2, naming what is missing.
 *
 * A connection owns its ring (and its own server, if any): --reconnect's
 * close and open make a new socket, ring and server, so its Connect line
 * also times io_uring's set-up, and the own server's start. */
#include "config.h"

#include <errno.h>
#include <liburing.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "backend.h"
#include "companion.h"
#include "schema.h"
#include "sockopt.h"
#include "tcp.h"   /* connects to SERVER for us */
#include "uring_loop.h"
#include "uring_ring.h"
#include "wire.h"

/* --uring LIST: what the rings and sockets use. */
struct uring_settings {
	bool sqpoll, files, buffers;
	bool multishot;       /* its own servers receive with multishot into provided buffers */
	unsigned loops;       /* --uring-server loop: event loops of one shared server; 0: conn */
	uint32_t zc_min;      /* IORING_OP_SEND_ZC for sends of at least this; 0: never */
	/* What a trial ring got from this kernel (check()), for --json. */
	bool probed;
	struct uring_ring_got got;
};
static struct uring_settings settings;

enum {
	RING_ENTRIES = 8,
	SERVER_BUFS = 64,                 /* provided buffers of a multishot server's ring */
	MAX_LOOPS = 1024,
	SQPOLL_IDLE_MS = 1000,
	CONNECT_TRIES = 5,
	BUF_SEND = 0, BUF_RECV = 1,       /* registered buffer indexes */
};

struct uring_run {
	struct sockopts sockopts;         /* own server: -T for both ends */
	void *tcp_run;                    /* SERVER: the tcp backend's run connects */
};

/* One end's ring and socket: the client's and its server's alike. */
struct uring_io {
	struct io_uring ring;
	bool ring_ready;
	int fd;                           /* the socket */
	int target;                       /* what SQEs name: fd, or 0 when registered */
	unsigned sqe_flags;               /* IOSQE_FIXED_FILE when registered */
	struct uring_settings opts;
	unsigned notifs;                  /* SEND_ZC notifications still to come */
	bool link_next;                   /* the entry being queued links to the next */
	uint64_t tag_next;                /* and its user_data */
	uint8_t *sbuf, *rbuf;             /* WIRE_LIMIT each; sbuf zeros after a header */
};

struct uring_conn {
	struct uring_io io;
	int server_fd;                    /* own server's socket; -1 once a process has it */
	struct companion server;
	struct uring_settings opts;
	bool discard_replies;
	char peer[224];
};

/* ---- rings ------------------------------------------------------------- */

static int setup_error(int rc, const struct uring_settings *o, struct errbuf *err)
{
	errno = -rc;
	if (rc == -ENOSYS)
		return err_errno(err, "uring: this kernel has no io_uring (io_uring_setup; "
				 "CONFIG_IO_URING, Linux 5.1+): use -b tcp");
	if (rc == -EPERM)
		return err_errno(err, "uring: io_uring_setup refused%s: see sysctl "
				 "kernel.io_uring_disabled", o->sqpoll ? " (SQPOLL may need "
				 "CAP_SYS_NICE before Linux 5.11)" : "");
	return err_errno(err, "uring: io_uring_setup%s", o->sqpoll ? " with SQPOLL" : "");
}

/* With SQPOLL every ring of a process shares one kernel thread, that of a
 * ring kept for it alone (IORING_SETUP_ATTACH_WQ): a thread per ring would
 * mean two busy pollers a client. A forked server makes its own. */
static struct {
	pthread_mutex_t lock;
	pid_t pid;                        /* the process the anchor belongs to */
	struct io_uring ring;
} sq_anchor = { .lock = PTHREAD_MUTEX_INITIALIZER };

static int sqpoll_init(struct io_uring *ring, struct uring_ring_got *got)
{
	struct io_uring_params p = { .flags = IORING_SETUP_SQPOLL, .sq_thread_idle = SQPOLL_IDLE_MS };
	int rc = 0;

	pthread_mutex_lock(&sq_anchor.lock);
	if (sq_anchor.pid != getpid()) {
		rc = io_uring_queue_init_params(1, &sq_anchor.ring, &p);
		if (rc == 0)
			sq_anchor.pid = getpid();
	}
	if (rc == 0) {
		p = (struct io_uring_params){
			.flags = IORING_SETUP_SQPOLL | IORING_SETUP_ATTACH_WQ,
			.sq_thread_idle = SQPOLL_IDLE_MS, .wq_fd = (unsigned)sq_anchor.ring.ring_fd,
		};
		rc = uring_ring_init(ring, RING_ENTRIES, &p, got);
	}
	pthread_mutex_unlock(&sq_anchor.lock);
	return rc;
}

/* The flags the kernel takes, best first (uring_ring.c); `got` says which. */
static int ring_init(struct io_uring *ring, const struct uring_settings *o,
		     struct uring_ring_got *got, struct errbuf *err)
{
	struct io_uring_params p = { 0 };
	int rc = o->sqpoll ? sqpoll_init(ring, got) : uring_ring_init(ring, RING_ENTRIES, &p, got);

	return rc < 0 ? setup_error(rc, o, err) : 0;
}

static const struct { int op; const char *name, *since; } needed_ops[] = {
	{ IORING_OP_SEND, "IORING_OP_SEND", "5.6" },
	{ IORING_OP_RECV, "IORING_OP_RECV", "5.6" },
	{ IORING_OP_SEND_ZC, "IORING_OP_SEND_ZC", "6.0" },
	{ IORING_OP_WRITE_FIXED, "IORING_OP_WRITE_FIXED", "5.1" },
	{ IORING_OP_READ_FIXED, "IORING_OP_READ_FIXED", "5.1" },
};

static bool op_needed(int op, const struct uring_settings *o)
{
	if (op == IORING_OP_SEND_ZC)
		return o->zc_min > 0;
	if (op == IORING_OP_WRITE_FIXED || op == IORING_OP_READ_FIXED)
		return o->buffers;
	return true;
}

/* Whether this kernel runs every operation the settings use. */
static int probe_ops(struct io_uring *ring, const struct uring_settings *o, struct errbuf *err)
{
	struct io_uring_probe *probe = io_uring_get_probe_ring(ring);

	if (!probe)
		return err_set(err, "uring: this kernel cannot say which io_uring operations it "
			       "has (IORING_REGISTER_PROBE, Linux 5.6+): use -b tcp");
	for (size_t i = 0; i < sizeof(needed_ops) / sizeof(needed_ops[0]); i++)
		if (op_needed(needed_ops[i].op, o) && !io_uring_opcode_supported(probe, needed_ops[i].op)) {
			io_uring_free_probe(probe);
			return err_set(err, "uring: this kernel lacks %s (Linux %s+)%s", needed_ops[i].name,
				       needed_ops[i].since, o->zc_min || o->buffers ?
				       ": drop it from --uring" : ": use -b tcp");
		}
	io_uring_free_probe(probe);
	return 0;
}

/* The socket and the buffers registered, as the settings ask. */
static int register_io(struct uring_io *io, struct errbuf *err)
{
	int rc;

	if (io->opts.files) {
		if ((rc = io_uring_register_files(&io->ring, &io->fd, 1)) < 0) {
			errno = -rc;
			return err_errno(err, "uring: registering the socket (files)");
		}
		io->target = 0;
		io->sqe_flags = IOSQE_FIXED_FILE;
	}
	if (io->opts.buffers) {
		struct iovec bufs[2] = { { io->sbuf, WIRE_LIMIT }, { io->rbuf, WIRE_LIMIT } };
		if ((rc = io_uring_register_buffers(&io->ring, bufs, 2)) < 0) {
			errno = -rc;
			return err_errno(err, "uring: registering buffers (buffers; RLIMIT_MEMLOCK?)");
		}
	}
	return 0;
}

static void io_free(struct uring_io *io)
{
	if (io->ring_ready)
		io_uring_queue_exit(&io->ring);
	io->ring_ready = false;
	free(io->sbuf);
	free(io->rbuf);
	io->sbuf = io->rbuf = NULL;
}

/* Run in the thread that will use it: the ring may be SINGLE_ISSUER. */
static int io_init(struct uring_io *io, int fd, const struct uring_settings *o, struct errbuf *err)
{
	*io = (struct uring_io){ .fd = fd, .target = fd, .opts = *o };
	io->sbuf = calloc(1, WIRE_LIMIT);
	io->rbuf = calloc(1, WIRE_LIMIT);
	if (!io->sbuf || !io->rbuf) {
		io_free(io);
		return err_set(err, "uring: out of memory");
	}
	struct uring_ring_got got;
	if (ring_init(&io->ring, o, &got, err) < 0) {
		io_free(io);
		return -1;
	}
	io->ring_ready = true;
	if (register_io(io, err) < 0) {
		io_free(io);
		return -1;
	}
	return 0;
}

/* ---- submitting -------------------------------------------------------- */

/* An exchange queues at most three entries of RING_ENTRIES and submits
 * them all before it waits, so the queue has room; with SQPOLL the kernel
 * thread may still be taking the last ones. */
static struct io_uring_sqe *next_sqe(struct uring_io *io, uint64_t tag, bool link)
{
	struct io_uring_sqe *sqe;

	while (!(sqe = io_uring_get_sqe(&io->ring)))
		if (!io->opts.sqpoll || io_uring_sqring_wait(&io->ring) < 0)
			io_uring_submit(&io->ring);
	io->link_next = link;
	io->tag_next = tag;
	return sqe;
}

/* After the prep function, which fills in the rest. */
static void set_flags(struct uring_io *io, struct io_uring_sqe *sqe)
{
	io_uring_sqe_set_data64(sqe, io->tag_next);
	io_uring_sqe_set_flags(sqe, io->sqe_flags | (io->link_next ? IOSQE_IO_LINK : 0));
}

/* `len` bytes of sbuf from `off`: SEND_ZC above the threshold, WRITE_FIXED
 * with registered buffers, else SEND. MSG_WAITALL: the kernel finishes a
 * short send itself; a short one breaks the link, and run_steps resumes. */
static void prep_send(struct uring_io *io, size_t off, size_t len, uint64_t tag, bool link)
{
	struct io_uring_sqe *sqe = next_sqe(io, tag, link);
	uint8_t *p = io->sbuf + off;
	bool zc = io->opts.zc_min && len >= io->opts.zc_min;

	if (zc && io->opts.buffers)
		io_uring_prep_send_zc_fixed(sqe, io->target, p, len, MSG_WAITALL, 0, BUF_SEND);
	else if (zc)
		io_uring_prep_send_zc(sqe, io->target, p, len, MSG_WAITALL, 0);
	else if (io->opts.buffers)
		io_uring_prep_write_fixed(sqe, io->target, p, (unsigned)len, 0, BUF_SEND);
	else
		io_uring_prep_send(sqe, io->target, p, len, MSG_WAITALL);
	set_flags(io, sqe);
}

/* Into rbuf from `off`; READ_FIXED with registered buffers, except a body
 * to drop (MSG_TRUNC needs recv). */
static void prep_recv(struct uring_io *io, size_t off, size_t len, int flags, uint64_t tag,
		      bool link)
{
	struct io_uring_sqe *sqe = next_sqe(io, tag, link);
	uint8_t *p = io->rbuf + off;

	if (io->opts.buffers && !(flags & MSG_TRUNC))
		io_uring_prep_read_fixed(sqe, io->target, p, (unsigned)len, 0, BUF_RECV);
	else
		io_uring_prep_recv(sqe, io->target, p, len, flags);
	set_flags(io, sqe);
}

/* One completion taken; 1 if it is a result, 0 for a SEND_ZC notification. */
static unsigned take_cqe(struct uring_io *io, struct io_uring_cqe *cqe, int *res, unsigned nres)
{
	unsigned counted = 0;

	if (cqe->flags & IORING_CQE_F_NOTIF) {
		io->notifs--;
	} else {
		if (cqe->user_data < nres)
			res[cqe->user_data] = cqe->res;
		if (cqe->flags & IORING_CQE_F_MORE)
			io->notifs++;
		counted = 1;
	}
	io_uring_cqe_seen(&io->ring, cqe);
	return counted;
}

/* The next completion, waiting for it only when none is there. */
static int next_cqe(struct uring_io *io, struct io_uring_cqe **cqe)
{
	int rc;

	do {
		rc = io_uring_peek_cqe(&io->ring, cqe);
		if (rc == -EAGAIN)
			rc = io_uring_wait_cqe(&io->ring, cqe);
	} while (rc == -EINTR);
	if (rc < 0)
		errno = -rc;
	return rc < 0 ? -1 : 0;
}

/* Submits what is queued and waits for `n` results (res[tag]): the one
 * system call of an exchange. -1 with errno when the ring itself fails. */
static int submit_wait(struct uring_io *io, unsigned n, int *res, unsigned nres)
{
	int rc = io_uring_submit_and_wait(&io->ring, n);
	struct io_uring_cqe *cqe;

	if (rc < 0 && rc != -EINTR) {
		errno = -rc;
		return -1;
	}
	for (unsigned got = 0; got < n; got += take_cqe(io, cqe, res, nres))
		if (next_cqe(io, &cqe) < 0)
			return -1;
	return 0;
}

/* A SEND_ZC's buffer is the kernel's until its notification: sbuf is
 * written again only after. */
static int wait_notifs(struct uring_io *io)
{
	struct io_uring_cqe *cqe;

	while (io->notifs) {
		if (next_cqe(io, &cqe) < 0)
			return -1;
		take_cqe(io, cqe, NULL, 0);
	}
	return 0;
}

/* ---- transfers --------------------------------------------------------- */

/* Linked transfers, each resumed where the last submission left it: one
 * submission does them all, unless one came up short. A step is done at
 * `min` bytes of its `len`. */
enum { MAX_STEPS = 3 };
struct step {
	bool send;
	int flags;                        /* recv's */
	size_t off, len, min, done;
};

static bool step_done(const struct step *s)
{
	return s->done >= s->min;
}

/* A result: 1 go on, -1 failed (errno; 0: the peer closed). An entry
 * cancelled by a short one before it, EINTR and EAGAIN are resubmitted. */
static int account(struct step *s, int res)
{
	if (res == -ECANCELED || res == -EINTR || res == -EAGAIN)
		return 1;
	if (res < 0 || (res == 0 && !s->send)) {
		errno = -res;
		return -1;
	}
	s->done += (size_t)res;
	return 1;
}

/* Queues the steps not done yet, each linked to the next. */
static unsigned queue_steps(struct uring_io *io, struct step *st, unsigned n)
{
	unsigned queued = 0, last = n;

	for (unsigned i = 0; i < n; i++)
		if (!step_done(&st[i]))
			last = i;
	for (unsigned i = 0; i < n; i++) {
		struct step *s = &st[i];
		if (step_done(s))
			continue;
		if (s->send)
			prep_send(io, s->off + s->done, s->len - s->done, i, i != last);
		else
			prep_recv(io, s->off + s->done, s->len - s->done, s->flags, i, i != last);
		queued++;
	}
	return queued;
}

/* Every step done: 0; else -1 with errno (0: the peer closed) and *failed
 * the step that failed. */
static int run_steps(struct uring_io *io, struct step *st, unsigned n, unsigned *failed)
{
	int res[MAX_STEPS];
	unsigned queued;

	while ((queued = queue_steps(io, st, n)) > 0) {
		for (unsigned i = 0; i < n; i++)
			res[i] = -ECANCELED;
		if (submit_wait(io, queued, res, n) < 0) {
			*failed = 0;
			return -1;
		}
		for (unsigned i = 0; i < n; i++)
			if (!step_done(&st[i]) && account(&st[i], res[i]) < 0) {
				*failed = i;
				return -1;
			}
	}
	return 0;
}

/* ---- the client -------------------------------------------------------- */

static int exchange_failed(const struct uring_conn *c, const struct step *st, unsigned failed,
			   uint32_t send, uint32_t recv, struct errbuf *err)
{
	if (st[failed].send)
		return err_errno(err, "sending %u bytes to %s", send, c->peer);
	size_t got = 0;
	for (unsigned i = 1; i <= failed; i++)
		got += st[i].done;
	if (errno == 0)
		return err_set(err, "receiving %u-byte reply from %s (got %zu): closed", recv,
			       c->peer, got);
	return err_errno(err, "receiving %u-byte reply from %s (got %zu)", recv, c->peer, got);
}

static int uring_exchange(void *conn, uint32_t send, uint32_t recv, struct errbuf *err)
{
	struct uring_conn *c = conn;
	struct uring_io *io = &c->io;
	struct step st[MAX_STEPS] = { { .send = true, .len = send, .min = send } };
	unsigned n = 2, failed;

	if (wait_notifs(io) < 0)
		return err_errno(err, "uring: waiting for a zero-copy send to %s", c->peer);
	put_be32(io->sbuf, send - 4);
	put_be32(io->sbuf + 4, recv - 4);
	if (c->discard_replies) {
		/* As tcp: the length, then the body, which the kernel drops. The
		 * body without MSG_WAITALL: a MSG_WAITALL|MSG_TRUNC receive that
		 * io_uring resumes after a short read was seen never to complete
		 * (always under SQPOLL, now and then without); run_steps()
		 * resumes it instead, which it can as the last of the chain. */
		st[1] = (struct step){ .len = 4, .min = 4, .flags = MSG_WAITALL };
		st[2] = (struct step){ .off = 4, .len = recv - 4, .min = recv - 4,
				       .flags = MSG_TRUNC };
		n = 3;
	} else {
		st[1] = (struct step){ .len = recv, .min = recv, .flags = MSG_WAITALL };
	}
	int rc = run_steps(io, st, n, &failed);
	/* Checked after a failure too: "lost sync" says more than a short read. */
	if (st[1].done >= 4 && get_be32(io->rbuf) != recv - 4)
		return err_set(err, "lost sync with %s: reply length %u, expected %u",
			       c->peer, get_be32(io->rbuf), recv - 4);
	return rc < 0 ? exchange_failed(c, st, failed, send, recv, err) : 0;
}

/* ---- the server -------------------------------------------------------- */

/* A whole frame at the front of rbuf: its length; more is needed: 0; a bad
 * one: -1 with err. */
static long frame_in(const uint8_t *buf, size_t have, struct errbuf *err)
{
	if (have < 4)
		return 0;
	uint32_t n = get_be32(buf);
	if (wire_check_frame(n, 0, err) < 0)    /* the length alone, before reading on */
		return -1;
	if (have < (size_t)n + 4)
		return 0;
	return wire_check_frame(n, get_be32(buf + 4), err) < 0 ? -1 : (long)n + 4;
}

/* Why a server's steps failed: 0 for a client that closed between frames. */
static int serve_failed(const struct step *st, unsigned failed, size_t have, struct errbuf *err)
{
	if (st[failed].send)
		return err_errno(err, "sending %zu-byte reply", st[failed].len);
	if (errno)
		return err_errno(err, "reading a frame");
	return have ? err_set(err, "peer closed mid-frame after %zu bytes", have) : 0;
}

/* Answers frames until the client closes: 0; -1 with err. The reply is
 * linked to the receive of what comes next, so a request that arrives
 * whole costs one submission; rbuf keeps `have` bytes, a frame's start. */
static int serve_io(struct uring_io *io, struct errbuf *err)
{
	size_t have = 0;
	unsigned failed;

	for (;;) {
		long len;
		while ((len = frame_in(io->rbuf, have, err)) == 0) {
			struct step more = { .off = have, .len = WIRE_LIMIT - have, .min = 1 };
			if (run_steps(io, &more, 1, &failed) < 0)
				return serve_failed(&more, 0, have, err);
			have += more.done;
		}
		if (len < 0)
			return -1;
		uint32_t reply = get_be32(io->rbuf + 4);
		have -= (size_t)len;
		memmove(io->rbuf, io->rbuf + len, have);
		if (wait_notifs(io) < 0)
			return err_errno(err, "waiting for a zero-copy send");
		put_be32(io->sbuf, reply);
		struct step st[2] = {
			{ .send = true, .len = (size_t)reply + 4, .min = (size_t)reply + 4 },
			{ .off = have, .len = WIRE_LIMIT - have, .min = 1 },
		};
		if (run_steps(io, st, 2, &failed) < 0)
			return serve_failed(st, failed, have + st[1].done, err);
		have += st[1].done;
	}
}

static void loop_conn_ended(void *arg, int fd, unsigned long id, const char *why)
{
	const struct uring_conn *c = arg;

	(void)fd;
	(void)id;
	if (why)
		fprintf(stderr, "tbench: %s: %s\n", c->peer, why);
}

/* multishot: the event loop's code with this one connection. The client
 * side keeps its linked receives: it has one request in flight, whose
 * reply it either drops in the kernel (MSG_TRUNC, which a receive into
 * provided buffers cannot do) or reads whole with MSG_WAITALL in the same
 * submission as the send; a multishot receive would add completions to
 * reap per reply, not remove a system call. */
static void serve_multishot(struct uring_conn *c)
{
	struct uring_loop_config lc = {
		.inbox_fd = -1,
		.listen_fd = -1, .conn_fd = c->server_fd, .stop_fd = -1, .bufs = SERVER_BUFS,
		.ended = loop_conn_ended, .arg = c,
	};
	struct errbuf err;

	if (uring_loop_run(&lc, &err) < 0)
		fprintf(stderr, "tbench: %s: %s\n", c->peer, err.msg);
}

static void serve(void *arg)
{
	struct uring_conn *c = arg;
	struct uring_io io;
	struct errbuf err;

	if (c->opts.multishot) {
		serve_multishot(c);
	} else if (io_init(&io, c->server_fd, &c->opts, &err) == 0) {
		if (serve_io(&io, &err) < 0)
			fprintf(stderr, "tbench: %s: %s\n", c->peer, err.msg);
		io_free(&io);
	} else {
		fprintf(stderr, "tbench: %s: %s\n", c->peer, err.msg);
	}
	/* The client sees the end of the stream at once, not a reply that never comes. */
	shutdown(c->server_fd, SHUT_RDWR);
}

/* ---- connections ------------------------------------------------------- */

/* SERVER: connected as the tcp backend connects (its run resolved SERVER
 * and holds -T); its connection is a struct wire_stream (wire.h). */
static int connect_server(struct uring_run *r, const struct backend_config *cfg,
			  unsigned client, struct uring_conn *c, struct errbuf *err)
{
	void *tcp_conn;
	int rc, tries = 0;

	/* With --reconnect, connect() right after the last connection's ring
	 * was closed was seen to fail with EINTR now and then, no signal
	 * handled (the ring's tear-down notifying the task, we think); tcp's
	 * connect() has SO_SNDTIMEO set, so it is not restarted: tried again. */
	while ((rc = tcp_open(r->tcp_run, cfg, client, &tcp_conn, err)) < 0 &&
	       errno == EINTR && ++tries < CONNECT_TRIES)
		;
	if (rc < 0)
		return -1;
	struct wire_stream *ws = tcp_conn;
	snprintf(c->peer, sizeof(c->peer), "uring %s", ws->peer);
	int fd = ws->fd;
	free(ws);
	return fd;
}

static int own_server(struct uring_run *r, const struct backend_config *cfg, unsigned client,
		      struct uring_conn *c, struct errbuf *err)
{
	int fd;

	snprintf(c->peer, sizeof(c->peer), "uring server %u", client);
	if (loopback_pair("uring", cfg->family, &r->sockopts, &fd, &c->server_fd, err) < 0)
		return -1;
	c->server = (struct companion){
		.serve = serve, .arg = c, .nkeep = 1, .keep = { c->server_fd },
		.cpus = cfg->server_cpus, .index = client,
	};
	if (companion_start(&c->server, backend_solo_processes(cfg), c->peer, err) < 0) {
		close(fd);
		close(c->server_fd);
		c->server_fd = -1;
		return -1;
	}
	if (companion_is_process(&c->server)) {
		close(c->server_fd);
		c->server_fd = -1;
	}
	return fd;
}

/* Shutting the client's end is its server's end of the stream; it also
 * frees a server stuck mid-reply after the client gave up. */
static void disconnect(struct uring_conn *c)
{
	shutdown(c->io.fd, SHUT_RDWR);
	close(c->io.fd);
	companion_wait(&c->server);
	if (c->server_fd >= 0)
		close(c->server_fd);
	free(c);
}

static int uring_open(void *run, const struct backend_config *cfg, unsigned client,
		      void **conn, struct errbuf *err)
{
	struct uring_run *r = run;
	struct uring_conn *c = calloc(1, sizeof(*c));

	if (!c)
		return err_set(err, "uring: out of memory");
	c->server_fd = -1;
	c->discard_replies = !cfg->copy_replies;
	c->opts = settings;        /* what its own server reads */
	int fd = r->tcp_run ? connect_server(r, cfg, client, c, err)
			    : own_server(r, cfg, client, c, err);
	if (fd < 0) {
		free(c);
		return -1;
	}
	/* The client's ring after the fork: a forked server holds none of it. */
	if (io_init(&c->io, fd, &settings, err) < 0) {
		disconnect(c);
		return -1;
	}
	*conn = c;
	return 0;
}

static void uring_close(void *conn)
{
	struct uring_conn *c = conn;

	io_free(&c->io);
	disconnect(c);
}

/* ---- the run ----------------------------------------------------------- */

/* Whether this kernel and liburing can do what the settings ask: a trial
 * ring with the same flags, and the operations probed. */
static int check_kernel(struct uring_settings *o, struct errbuf *err)
{
	struct io_uring ring;
	char flags[96];

	if (ring_init(&ring, o, &o->got, err) < 0)
		return -1;
	o->probed = true;
	uring_ring_flags_name(o->got.flags, flags, sizeof(flags));
	if (o->got.fell_back && !o->sqpoll)
		fprintf(stderr, "tbench: uring: this kernel refused IORING_SETUP_SINGLE_ISSUER|"
			"DEFER_TASKRUN (Linux 6.1+): rings are set up with %s\n", flags);
	if (!o->got.registered)
		fprintf(stderr, "tbench: uring: this kernel cannot register a ring's fd "
			"(Linux 5.18+): each submission looks it up\n");
	int rc = probe_ops(&ring, o, err);
	/* Provided buffer rings came in 5.19, multishot receives in 6.0. */
	struct uring_bufs trial;
	if (rc == 0 && (o->multishot || o->loops) && uring_bufs_init(&ring, &trial, 0, 1, 64, err) == 0)
		uring_bufs_free(&ring, &trial);
	else if (rc == 0 && (o->multishot || o->loops))
		rc = -1;
	io_uring_queue_exit(&ring);
	return rc;
}

static int uring_check(const struct backend_config *cfg, struct errbuf *err)
{
	struct sockopts so;
	const char *spec = cfg->tcp_options ? cfg->tcp_options : SOCKOPT_TCP_DEFAULT;

	if (cfg->server && settings.loops)
		return err_set(err, "uring: --uring-server loop starts a server of tbench's own, "
			       "SERVER names another: drop one");
	if (cfg->server || settings.loops) {
		struct errbuf why;
		if (tcp_check_as(&tcp_plain, cfg, &why) < 0)
			return err_set(err, "uring: %s", why.msg);
		if (cfg->no_own_server && !cfg->server)
			return err_set(err, "uring: --no-own-server: --uring-server loop is a server of "
				       "tbench's own: give SERVER instead, or drop --no-own-server");
	} else {
		if (cfg->port)
			return err_set(err, "uring: --port %s without SERVER: each client's own "
				       "server listens on a port of its own (give SERVER, e.g. "
				       "127.0.0.1, to use a tbench_srv there)", cfg->port);
		if (cfg->no_own_server)
			return err_set(err, "uring: --no-own-server: without SERVER each client brings "
				       "its own server: give SERVER, or drop --no-own-server");
		if (sockopts_parse_tcp(spec, &so, err) < 0) {
			struct errbuf why = *err;
			return err_set(err, "uring: -T %s: %s", spec, why.msg);
		}
	}
	return check_kernel(&settings, err);
}

static void uring_stop(void *run)
{
	struct uring_run *r = run;

	if (r->tcp_run)
		tcp_stop(r->tcp_run);
	free(r);
}

static void uring_socket_info(void *conn, struct socket_readback *out)
{
	const struct uring_conn *c = conn;

	sockopt_read_back(c->io.fd, out);
}

/* --uring-server loop: tcp's connections to a server of tbench's own made
 * of event loops (server_uring.c); following the client model, a forked
 * process of its own with client processes, so no client inherits its rings. */
static struct tcp_flavour loop_server = { .name = "uring" };

static int uring_start(const struct backend_config *cfg, void **run, struct errbuf *err)
{
	struct uring_run *r = calloc(1, sizeof(*r));
	const char *spec = cfg->tcp_options ? cfg->tcp_options : SOCKOPT_TCP_DEFAULT;
	int rc;

	if (!r)
		return err_set(err, "uring: out of memory");
	loop_server.uring_loops = settings.loops;
	if (cfg->server)
		rc = tcp_start_as(&tcp_plain, cfg, &r->tcp_run, err);
	else if (settings.loops)
		rc = tcp_start_as(&loop_server, cfg, &r->tcp_run, err);
	else
		rc = sockopts_parse_tcp(spec, &r->sockopts, err);
	/* A value the kernel refuses (TCP_CONGESTION=NAME) fails the run here, once. */
	if (rc == 0 && !r->tcp_run &&
	    sockopts_probe(cfg->family == AF_INET6 ? AF_INET6 : AF_INET, 0, &r->sockopts, err) < 0) {
		struct errbuf why = *err;
		rc = err_set(err, "uring: -T: %s", why.msg);
	}
	if (rc < 0) {
		uring_stop(r);
		return -1;
	}
	*run = r;
	return 0;
}

/* --uring LIST, commas between. */
static int parse_settings(void *to, const char *text, struct errbuf *err)
{
	struct uring_settings *u = to;
	char list[256], *save = NULL;
	long zc;

	*u = (struct uring_settings){ .loops = u->loops };
	if (strlen(text) >= sizeof(list))
		return err_set(err, "--uring: the list is too long (sqpoll, files, buffers, multishot, "
			       "zc=BYTES)");
	strcpy(list, text);
	for (char *t = strtok_r(list, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
		if (strcmp(t, "sqpoll") == 0)
			u->sqpoll = true;
		else if (strcmp(t, "files") == 0)
			u->files = true;
		else if (strcmp(t, "buffers") == 0)
			u->buffers = true;
		else if (strcmp(t, "multishot") == 0)
			u->multishot = true;
		else if (strncmp(t, "zc=", 3) == 0 && parse_long_range(t + 3, 1, WIRE_LIMIT, &zc) == 0)
			u->zc_min = (uint32_t)zc;
		else
			return err_set(err, "--uring: '%.20s' is not a setting (known: sqpoll, files, "
				       "buffers, multishot, zc=BYTES from 1 to %d; commas between)", t,
				       WIRE_LIMIT);
	}
	return 0;
}

/* --uring-server conn|loop|loop=N. */
static int parse_server(void *to, const char *text, struct errbuf *err)
{
	struct uring_settings *u = to;
	long n;

	if (strcmp(text, "conn") == 0) {
		u->loops = 0;
	} else if (strcmp(text, "loop") == 0) {
		u->loops = online_cpus();
	} else if (strncmp(text, "loop=", 5) == 0 && parse_long_range(text + 5, 1, MAX_LOOPS, &n) == 0) {
		u->loops = (unsigned)n;
	} else {
		return err_set(err, "--uring-server: '%.20s' is not a server shape (conn: one per "
			       "client; loop or loop=N: N event loops from 1 to %d, by default one "
			       "per online CPU)", text, MAX_LOOPS);
	}
	return 0;
}

static const struct backend_option uring_options[] = {
	{ "uring", "LIST", "sqpoll, files (registered), buffers (registered), multishot (own "
	  "servers: multishot receives into provided buffers), zc=BYTES (IORING_OP_SEND_ZC from "
	  "BYTES), commas between", parse_settings, false },
	{ "uring-server", "SHAPE", "without SERVER: conn (a server per client, the default), "
	  "loop or loop=N (N io_uring event loops serving every client; N: online CPUs)",
	  parse_server, false },
	{ NULL, NULL, NULL, NULL, false }
};

static void uring_add_settings(struct json_object *into, const void *to)
{
	const struct uring_settings *u = to;
	struct json_object *o = json_object_new_object();
	char name[80];

	json_put(o, SK_SQPOLL, json_object_new_boolean(u->sqpoll));
	json_put(o, SK_FILES, json_object_new_boolean(u->files));
	json_put(o, SK_BUFFERS, json_object_new_boolean(u->buffers));
	json_put(o, SK_ZC_MIN, json_object_new_uint64(u->zc_min));
	/* null: uring did not run, so no ring was made. */
	if (u->probed)
		uring_ring_flags_name(u->got.flags, name, sizeof(name));
	json_put(o, SK_RING_FLAGS, u->probed ? json_string(name) : NULL);
	json_put(o, SK_REGISTERED_RING, u->probed ? json_object_new_boolean(u->got.registered) : NULL);
	json_put(o, SK_MULTISHOT, json_object_new_boolean(u->multishot));
	json_put(o, SK_SERVER_SHAPE, json_string(u->loops ? "loop" : "conn"));
	json_put(o, SK_LOOPS, json_object_new_uint64(u->loops));
	json_put(into, SK_URING, o);
}

const struct backend backend_uring = {
	.name = "uring",
	.summary = "TCP through io_uring (send and receive linked) to tbench_srv at SERVER, "
		   "or to io_uring servers of its own",
	.flags = BACKEND_TAKES_SERVER | BACKEND_TCP | BACKEND_RECONNECTS | BACKEND_FAMILY |
		 BACKEND_SOCKOPTS | BACKEND_COPY_REPLIES,
	/* io_uring's submissions in place of tcp's system calls: beside tcp */
	.path = { .extends = "nop", .layer = "uring", .adds = "TCP/IP through io_uring",
		  .differs_from = "tcp", .drops_replies = true },
	.check = uring_check,
	.start = uring_start,
	.open = uring_open,
	.exchange = uring_exchange,
	.close = uring_close,
	.stop = uring_stop,
	.socket_info = uring_socket_info,
	.options = uring_options,
	.settings = &settings,
	.add_settings = uring_add_settings,
};
