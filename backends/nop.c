/* nop: no transport at all, only the memcpy()s of the sizes TCP would have
 * carried, both ways, as in David Miller's variant of tbench. It is the
 * harness's ceiling: every other backend's cost is measured against it. */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "backend.h"
#include "smb.h"

struct nop_conn {
	uint8_t src[WIRE_LIMIT];
	uint8_t dst[WIRE_LIMIT];
};

static int nop_open(void *run, const struct backend_config *cfg, unsigned client,
		    void **conn, struct errbuf *err)
{
	(void)run; (void)cfg; (void)client;
	*conn = calloc(1, sizeof(struct nop_conn));
	if (!*conn)
		return err_set(err, "nop: out of memory");
	return 0;
}

/* The request into the server and back, then the reply the same way. */
static int nop_exchange(void *conn, uint32_t send, uint32_t recv, struct errbuf *err)
{
	struct nop_conn *c = conn;

	(void)err;
	memcpy(c->dst, c->src, send);
	memcpy(c->src, c->dst, send);
	memcpy(c->src, c->dst, recv);
	memcpy(c->dst, c->src, recv);
	return 0;
}

static void nop_close(void *conn)
{
	free(conn);
}

const struct backend backend_nop = {
	.name = "nop",
	.summary = "memcpy() of each request and reply, no transport: the harness's ceiling",
	.flags = BACKEND_SWEPT | BACKEND_YARDSTICK,
	.path = { .layer = "harness", .adds = "harness" },
	.open = nop_open,
	.exchange = nop_exchange,
	.close = nop_close,
	.add_settings = backend_no_settings,
};
