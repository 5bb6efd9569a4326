#include "config.h"
#include "taskstats.h"

#include <errno.h>
#include <linux/genetlink.h>
#include <linux/netlink.h>
#include <linux/taskstats.h>
#include <stddef.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

/* A request: the headers and one attribute of at most 16 bytes. */
struct genl_request {
	struct nlmsghdr nl;
	struct genlmsghdr genl;
	struct nlattr attr;
	char value[16];
};

static bool send_request(struct taskstats_sock *ts, uint16_t type, uint8_t cmd,
			 uint16_t attr, const void *value, size_t len)
{
	struct genl_request r;

	if (len > sizeof(r.value))
		return false;
	memset(&r, 0, sizeof(r));
	r.attr.nla_type = attr;
	r.attr.nla_len = (uint16_t)(NLA_HDRLEN + len);
	memcpy(r.value, value, len);
	r.nl.nlmsg_len = (uint32_t)(NLMSG_HDRLEN + GENL_HDRLEN + NLA_ALIGN(r.attr.nla_len));
	r.nl.nlmsg_type = type;
	r.nl.nlmsg_flags = NLM_F_REQUEST;
	r.nl.nlmsg_seq = ++ts->seq;
	r.genl.cmd = cmd;
	r.genl.version = 1;
	ssize_t n;
	do
		n = send(ts->fd, &r, r.nl.nlmsg_len, 0);
	while (n < 0 && errno == EINTR);
	return n == (ssize_t)r.nl.nlmsg_len;
}

/* The reply of family `type` to the last request into buf; its attributes
 * and their length. NULL on an error, a cut reply or none within the
 * socket's timeout. */
static const struct nlattr *receive_reply(struct taskstats_sock *ts, uint16_t type, char *buf,
					  size_t size, size_t *len)
{
	for (;;) {
		ssize_t n = recv(ts->fd, buf, size, MSG_TRUNC);
		if (n < 0 && errno == EINTR)
			continue;
		const struct nlmsghdr *nl = (const struct nlmsghdr *)buf;
		if (n < (ssize_t)NLMSG_HDRLEN || (size_t)n > size || !NLMSG_OK(nl, (unsigned)n))
			return NULL;
		if (nl->nlmsg_seq != ts->seq)
			continue;   /* an answer to an earlier request given up on */
		if (nl->nlmsg_type != type || nl->nlmsg_len < NLMSG_HDRLEN + GENL_HDRLEN)
			return NULL;
		*len = nl->nlmsg_len - NLMSG_HDRLEN - GENL_HDRLEN;
		return (const struct nlattr *)((const char *)NLMSG_DATA(nl) + GENL_HDRLEN);
	}
}

/* The attribute `type` among `len` bytes of them, or NULL. */
static const struct nlattr *find_attr(const struct nlattr *a, size_t len, uint16_t type)
{
	while (len >= NLA_HDRLEN && a->nla_len >= NLA_HDRLEN && a->nla_len <= len) {
		if ((a->nla_type & NLA_TYPE_MASK) == type)
			return a;
		size_t step = NLA_ALIGN(a->nla_len);
		if (step >= len)
			break;
		len -= step;
		a = (const struct nlattr *)((const char *)a + step);
	}
	return NULL;
}

static const void *attr_data(const struct nlattr *a)
{
	return (const char *)a + NLA_HDRLEN;
}

void taskstats_open(struct taskstats_sock *ts)
{
	char buf[1024] __attribute__((aligned(NLMSG_ALIGNTO)));
	size_t len;

	memset(ts, 0, sizeof(*ts));
	ts->fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_GENERIC);
	if (ts->fd < 0)
		return;
	/* The kernel answers within the send; a reply lost all the same must
	 * not hold up the driver, which reads the tasks at the phase's end. */
	struct timeval timeout = { .tv_sec = 1 };
	const struct nlattr *a = NULL, *id = NULL;
	if (setsockopt(ts->fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof(timeout)) == 0 &&
	    send_request(ts, GENL_ID_CTRL, CTRL_CMD_GETFAMILY, CTRL_ATTR_FAMILY_NAME,
			 TASKSTATS_GENL_NAME, sizeof(TASKSTATS_GENL_NAME)))
		a = receive_reply(ts, GENL_ID_CTRL, buf, sizeof(buf), &len);
	if (a)
		id = find_attr(a, len, CTRL_ATTR_FAMILY_ID);
	if (id && id->nla_len >= NLA_HDRLEN + sizeof(uint16_t)) {
		memcpy(&ts->family, attr_data(id), sizeof(ts->family));
		/* The family may exist and still refuse this process (CAP_NET_ADMIN):
		 * ask for itself once, so that a refusal is known now. */
		struct task_ticks self;
		if (taskstats_read(ts, getpid(), &self))
			return;
	}
	taskstats_close(ts);
}

void taskstats_close(struct taskstats_sock *ts)
{
	if (ts->fd >= 0)
		close(ts->fd);
	ts->fd = -1;
}

_Static_assert(sizeof(struct taskstats) + 64 < 2048, "taskstats_read: its buffer holds a reply");

bool taskstats_read(struct taskstats_sock *ts, pid_t tid, struct task_ticks *out)
{
	char buf[2048] __attribute__((aligned(NLMSG_ALIGNTO)));
	size_t len;
	uint32_t pid = (uint32_t)tid;

	if (ts->fd < 0 || !send_request(ts, ts->family, TASKSTATS_CMD_GET, TASKSTATS_CMD_ATTR_PID,
					&pid, sizeof(pid)))
		return false;
	const struct nlattr *a = receive_reply(ts, ts->family, buf, sizeof(buf), &len);
	const struct nlattr *aggr = a ? find_attr(a, len, TASKSTATS_TYPE_AGGR_PID) : NULL;
	const struct nlattr *st = aggr ? find_attr(attr_data(aggr), aggr->nla_len - NLA_HDRLEN,
						   TASKSTATS_TYPE_STATS) : NULL;
	/* An older kernel's struct may be shorter: what it has, the rest zero. */
	struct taskstats t;
	memset(&t, 0, sizeof(t));
	if (!st || (size_t)st->nla_len - NLA_HDRLEN < offsetof(struct taskstats, nivcsw) + sizeof(t.nivcsw))
		return false;
	size_t have = st->nla_len - NLA_HDRLEN;
	memcpy(&t, attr_data(st), have < sizeof(t) ? have : sizeof(t));
	*out = (struct task_ticks){ .user_us = t.ac_utime, .sys_us = t.ac_stime,
				    .vol_cs = t.nvcsw, .invol_cs = t.nivcsw };
	return true;
}
