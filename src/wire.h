/* The tbench wire protocol (dbench 4.0's tbench_srv).
 *
 * A request is `send` bytes: big-endian send-4, big-endian recv-4, filler.
 * The reply is `recv` bytes: big-endian recv-4, then recv-4 bytes. */
#ifndef TBENCH_WIRE_H
#define TBENCH_WIRE_H

#include <stdint.h>

#include "smb.h"
#include "util.h"

enum { WIRE_HEADER = 8, WIRE_PORT = 7003 };

/* Read-only zeros every writer may send from, so no client or server needs
 * its own send buffer. */
extern const uint8_t wire_zeros[WIRE_LIMIT];

/* Client side: one request and its reply. `buf` holds WIRE_LIMIT bytes for
 * the reply; `peer` names the other end in errors ("pipe server 3"). */
int wire_exchange(int wfd, int rfd, uint8_t *buf, uint32_t send, uint32_t recv,
		  const char *peer, struct errbuf *err);

/* A client's stream socket to a server of the wire protocol: the conn of
 * the tcp and unix backends, which differ only in how they connect. */
struct wire_stream {
	int fd;
	const char *peer;
	uint8_t buf[WIRE_LIMIT];
};
int wire_stream_exchange(void *conn, uint32_t send, uint32_t recv, struct errbuf *err);
void wire_stream_close(void *conn);

/* Server side: answer frames from rfd on wfd until the peer closes.
 * 0 when the peer closed between frames; -1 with err saying why the
 * connection had to end (oversized, truncated or malformed frame). */
int wire_serve(int rfd, int wfd, struct errbuf *err);

#endif
