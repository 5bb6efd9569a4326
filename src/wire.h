/* The tbench wire protocol (dbench 4.0's tbench_srv).
 *
 * A request is `send` bytes: big-endian send-4, big-endian recv-4, filler.
 * The reply is `recv` bytes: big-endian recv-4, then recv-4 bytes. */
#ifndef TBENCH_WIRE_H
#define TBENCH_WIRE_H

#include <stdbool.h>
#include <stdint.h>

#include "smb.h"
#include "util.h"

/* dbench's port, as a number and as text for getaddrinfo and help. */
#define WIRE_PORT 7003
#define WIRE_STRINGIFY_(x) #x
#define WIRE_STRINGIFY(x) WIRE_STRINGIFY_(x)
#define WIRE_PORT_STRING WIRE_STRINGIFY(WIRE_PORT)

enum { WIRE_HEADER = 8 };

/* Read-only zeros every writer may send from, so no client or server needs
 * its own send buffer. */
extern const uint8_t wire_zeros[WIRE_LIMIT];

/* ---- client side: one request and its reply --------------------------- */

/* A request's 8-byte header; the whole request (header, zero filler) sent
 * with one writev (more only when the socket buffer is full). */
void wire_put_request(uint8_t *hdr, uint32_t send, uint32_t recv);
int wire_send_request(int fd, uint32_t send, uint32_t recv, const char *peer,
		      struct errbuf *err);

/* The reply is copied into `buf` (WIRE_LIMIT bytes), read as it comes: any
 * file descriptors (pipes, sockets). `peer` names the other end in errors
 * ("pipe server 3"). */
int wire_exchange(int wfd, int rfd, uint8_t *buf, uint32_t send, uint32_t recv,
		  const char *peer, struct errbuf *err);

/* As dbench's tbench on TCP: the 4-byte reply header with MSG_WAITALL, then
 * the body with MSG_WAITALL|MSG_TRUNC, which TCP discards without copying
 * it to user space. (AF_UNIX ignores MSG_TRUNC on streams and copies.) */
int wire_exchange_discard(int fd, uint8_t *buf, uint32_t send, uint32_t recv,
			  const char *peer, struct errbuf *err);

/* A client's stream socket to a server of the wire protocol: the conn of
 * the tcp and unix backends, which differ only in how they connect. */
struct wire_stream {
	int fd;
	bool discard_replies;    /* wire_exchange_discard(), else wire_exchange() */
	const char *peer;
	uint8_t buf[WIRE_LIMIT];
};
int wire_stream_exchange(void *conn, uint32_t send, uint32_t recv, struct errbuf *err);
/* The reply alone, for a backend that sends its requests its own way. */
int wire_stream_receive(struct wire_stream *c, uint32_t recv, struct errbuf *err);
void wire_stream_close(void *conn);

/* ---- server side ------------------------------------------------------ */

/* Whether a frame is one the protocol accepts: `n` is its length word (the
 * bytes after it), `reply` the reply length it asks for. -1 with err saying
 * what is wrong. Every server checks its frames with this. */
int wire_check_frame(uint32_t n, uint32_t reply, struct errbuf *err);

/* Answer frames until the peer closes, as dbench's tbench_srv: the 4-byte
 * length, then the rest of the frame, then the reply in one write.
 * 0 when the peer closed between frames; -1 with err saying why the
 * connection had to end (bad frame, peer gone mid-frame, too slow).
 *
 * On a socket: recv(MSG_WAITALL). With timeout_secs > 0 the socket's
 * SO_RCVTIMEO and SO_SNDTIMEO must be set to it (server.c does); then a
 * peer that takes longer than that to finish a frame it started or to
 * take a reply is dropped. One quiet between whole frames is kept. */
int wire_serve_socket(int fd, unsigned timeout_secs, struct errbuf *err);
/* On a pair of pipes (or any fds): read(), no timeout. */
int wire_serve_pipe(int rfd, int wfd, struct errbuf *err);

#endif
