/* See uring_ring.h. */
#include "config.h"
#include "uring_ring.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>

/* The task-work flags, best first: with SINGLE_ISSUER|DEFER_TASKRUN
 * completions run only when the submitting task waits, with no
 * interrupting task work; COOP_TASKRUN at least spares the interrupt. */
static const unsigned taskrun_tiers[] = {
	IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_DEFER_TASKRUN,
	IORING_SETUP_COOP_TASKRUN | IORING_SETUP_TASKRUN_FLAG,
	0,
};

int uring_ring_init(struct io_uring *ring, unsigned entries, const struct io_uring_params *p,
		    struct uring_ring_got *got)
{
	size_t tiers = sizeof(taskrun_tiers) / sizeof(taskrun_tiers[0]);
	int rc = -EINVAL;

	*got = (struct uring_ring_got){ 0 };
	/* The SQPOLL thread submits: no tier applies. */
	if (p->flags & IORING_SETUP_SQPOLL)
		tiers = 1;
	for (size_t i = 0; i < tiers && rc == -EINVAL; i++) {
		struct io_uring_params q = *p;
		if (!(p->flags & IORING_SETUP_SQPOLL))
			q.flags |= taskrun_tiers[i];
		rc = io_uring_queue_init_params(entries, ring, &q);
		if (rc == 0)
			got->flags = q.flags;
		else
			got->fell_back = true;
	}
	if (rc < 0)
		return rc;
	/* Without it every io_uring_enter() looks the ring's fd up. */
	got->registered = io_uring_register_ring_fd(ring) == 1;
	return 0;
}

void uring_ring_flags_name(unsigned flags, char *out, size_t size)
{
	static const struct { unsigned flag; const char *name; } names[] = {
		{ IORING_SETUP_SQPOLL, "sqpoll" },
		{ IORING_SETUP_SINGLE_ISSUER, "single_issuer" },
		{ IORING_SETUP_DEFER_TASKRUN, "defer_taskrun" },
		{ IORING_SETUP_COOP_TASKRUN, "coop_taskrun" },
		{ IORING_SETUP_TASKRUN_FLAG, "taskrun_flag" },
	};
	size_t n = 0;

	out[0] = '\0';
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if ((flags & names[i].flag) && n < size)
			n += (size_t)snprintf(out + n, size - n, "%s%s", n ? "," : "", names[i].name);
	if (!n)
		snprintf(out, size, "none");
}

int uring_bufs_init(struct io_uring *ring, struct uring_bufs *b, int bgid, unsigned count,
		    unsigned size, struct errbuf *err)
{
	struct io_uring_buf_reg reg = { .ring_entries = count, .bgid = (uint16_t)bgid };
	int rc;

	*b = (struct uring_bufs){ .count = count, .size = size, .bgid = bgid };
	b->ring_bytes = count * sizeof(struct io_uring_buf);
	/* Page-aligned, as the kernel wants the ring. */
	void *m = mmap(NULL, b->ring_bytes + (size_t)count * size, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (m == MAP_FAILED)
		return err_errno(err, "uring: %u provided buffers of %u bytes", count, size);
	b->br = m;
	b->mem = (uint8_t *)m + b->ring_bytes;
	reg.ring_addr = (uint64_t)(uintptr_t)b->br;
	if ((rc = io_uring_register_buf_ring(ring, &reg, 0)) < 0) {
		munmap(m, b->ring_bytes + (size_t)count * size);
		b->br = NULL;
		errno = -rc;
		if (rc == -EINVAL)
			return err_set(err, "uring: this kernel lacks provided buffer rings "
				       "(IORING_REGISTER_PBUF_RING, Linux 5.19+): drop multishot");
		return err_errno(err, "uring: registering provided buffers (RLIMIT_MEMLOCK?)");
	}
	io_uring_buf_ring_init(b->br);
	for (unsigned i = 0; i < count; i++)
		io_uring_buf_ring_add(b->br, b->mem + (size_t)i * size, size, (unsigned short)i,
				      io_uring_buf_ring_mask(count), (int)i);
	io_uring_buf_ring_advance(b->br, (int)count);
	return 0;
}

void uring_bufs_free(struct io_uring *ring, struct uring_bufs *b)
{
	if (!b->br)
		return;
	io_uring_unregister_buf_ring(ring, b->bgid);
	munmap(b->br, b->ring_bytes + (size_t)b->count * b->size);
	b->br = NULL;
}

void uring_bufs_recycle(struct uring_bufs *b, unsigned bid)
{
	io_uring_buf_ring_add(b->br, b->mem + (size_t)bid * b->size, b->size, (unsigned short)bid,
			      io_uring_buf_ring_mask(b->count), 0);
	io_uring_buf_ring_advance(b->br, 1);
}

void uring_prep_recv_multishot(struct io_uring_sqe *sqe, int fd, const struct uring_bufs *b,
			       unsigned sqe_flags, uint64_t tag)
{
	io_uring_prep_recv_multishot(sqe, fd, NULL, 0, 0);
	sqe->buf_group = (uint16_t)b->bgid;
	io_uring_sqe_set_flags(sqe, sqe_flags | IOSQE_BUFFER_SELECT);
	io_uring_sqe_set_data64(sqe, tag);
}
