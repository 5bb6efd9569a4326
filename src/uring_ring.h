/* io_uring rings set up as networking programs set them up, for the uring
 * backend and the event-loop server: the task-work flags the kernel takes
 * (probed, best first, and said), the ring's fd registered, and a ring of
 * provided buffers for multishot receives. Built only with liburing. */
#ifndef TBENCH_URING_RING_H
#define TBENCH_URING_RING_H

#include <liburing.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util.h"

/* What a ring got: the IORING_SETUP_ flags the kernel accepted, whether it
 * refused the first choice, and whether the ring's fd is registered. */
struct uring_ring_got {
	unsigned flags;
	bool fell_back;
	bool registered;
};

/* A ring of `entries`. With IORING_SETUP_SQPOLL in p->flags, p as given;
 * else SINGLE_ISSUER|DEFER_TASKRUN (6.1), else COOP_TASKRUN|TASKRUN_FLAG
 * (5.19), else none, added to p's flags. Then the ring's fd registered
 * where the kernel can (5.18). Run it in the thread that will submit.
 * 0, or liburing's negative errno of the last setup tried. */
int uring_ring_init(struct io_uring *ring, unsigned entries, const struct io_uring_params *p,
		    struct uring_ring_got *got);

/* The task-work and polling flags of `flags` as a comma-separated list
 * ("single_issuer,defer_taskrun"), "none" when there are none. */
void uring_ring_flags_name(unsigned flags, char *out, size_t size);

/* Provided buffers (IORING_REGISTER_PBUF_RING, Linux 5.19): `count` (a
 * power of two) buffers of `size` bytes, group `bgid`, all given to the
 * kernel at the start; a buffer a receive filled goes back with
 * uring_bufs_recycle() as soon as its bytes are read. */
struct uring_bufs {
	struct io_uring_buf_ring *br;
	uint8_t *mem;
	size_t ring_bytes;
	unsigned count, size;
	int bgid;
};
int uring_bufs_init(struct io_uring *ring, struct uring_bufs *b, int bgid, unsigned count,
		    unsigned size, struct errbuf *err);
void uring_bufs_free(struct io_uring *ring, struct uring_bufs *b);
static inline const uint8_t *uring_bufs_data(const struct uring_bufs *b, unsigned bid)
{
	return b->mem + (size_t)bid * b->size;
}
void uring_bufs_recycle(struct uring_bufs *b, unsigned bid);

/* A multishot receive on `fd` (or a registered file index with
 * IOSQE_FIXED_FILE in sqe_flags) into group b's buffers. Its completions
 * carry IORING_CQE_F_BUFFER; one without IORING_CQE_F_MORE ended it
 * (ENOBUFS among them) and the caller arms another. */
void uring_prep_recv_multishot(struct io_uring_sqe *sqe, int fd, const struct uring_bufs *b,
			       unsigned sqe_flags, uint64_t tag);

/* The buffer a receive completion names. */
static inline unsigned uring_cqe_bid(const struct io_uring_cqe *cqe)
{
	return cqe->flags >> IORING_CQE_BUFFER_SHIFT;
}

#endif
