#include "config.h"
#include "sockopt.h"

#include <errno.h>
#include <limits.h>
#include <netinet/in.h>
#include <netinet/ip.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "backend.h"

/* The options dbench's socklib knows, plus TCP_QUICKACK and
 * TCP_CONGESTION; flags take no value (or =0/=1), sizes need one, and
 * TCP_CONGESTION a name. */
static const struct known {
	const char *name;
	int level, opt;
	bool needs_value;
	bool tcp_only;
	bool is_string;
} known[] = {
	{ "TCP_NODELAY",      IPPROTO_TCP, TCP_NODELAY,   false, true, false },
	{ "TCP_QUICKACK",     IPPROTO_TCP, TCP_QUICKACK,  false, true, false },
	{ "SO_KEEPALIVE",     SOL_SOCKET,  SO_KEEPALIVE,  false, false, false },
	{ "SO_REUSEADDR",     SOL_SOCKET,  SO_REUSEADDR,  false, false, false },
	{ "SO_BROADCAST",     SOL_SOCKET,  SO_BROADCAST,  false, false, false },
	{ "SO_SNDBUF",        SOL_SOCKET,  SO_SNDBUF,     true,  false, false },
	{ "SO_RCVBUF",        SOL_SOCKET,  SO_RCVBUF,     true,  false, false },
	{ "SO_SNDLOWAT",      SOL_SOCKET,  SO_SNDLOWAT,   true,  false, false },
	{ "SO_RCVLOWAT",      SOL_SOCKET,  SO_RCVLOWAT,   true,  false, false },
	{ "IPTOS_LOWDELAY",   IPPROTO_IP,  IP_TOS,        false, true, false },
	{ "IPTOS_THROUGHPUT", IPPROTO_IP,  IP_TOS,        false, true, false },
	{ "TCP_CONGESTION",   IPPROTO_TCP, TCP_CONGESTION, true, true, true },
};

#define AVAILABLE_CC "/proc/sys/net/ipv4/tcp_available_congestion_control"

const char *sockopts_known(void)
{
	return "TCP_NODELAY, TCP_QUICKACK, SO_KEEPALIVE, SO_REUSEADDR, SO_BROADCAST, "
	       "SO_SNDBUF=N, SO_RCVBUF=N, SO_SNDLOWAT=N, SO_RCVLOWAT=N, "
	       "IPTOS_LOWDELAY, IPTOS_THROUGHPUT, TCP_CONGESTION=NAME";
}

/* A congestion control's name as the kernel spells them: letters, digits,
 * '_' and '-', shorter than TCP_CA_NAME_MAX (16). */
static int parse_name(const struct known *k, const char *val, char *out, size_t size,
		      struct errbuf *err)
{
	size_t n = strspn(val, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-");

	if (n == 0 || val[n] != '\0' || n >= size)
		return err_set(err, "%s=%s: give the name of a congestion control, 1 to %zu letters, "
			       "digits, '_' or '-' (this kernel has: %s)", k->name, val, size - 1,
			       sockopts_available_cc());
	memcpy(out, val, n + 1);
	return 0;
}

/* IP_TOS and TCP_NODELAY are both 1: the level tells them apart. */
static bool is_tos(const struct known *k)
{
	return k->level == IPPROTO_IP && k->opt == IP_TOS;
}

static int parse_value(const struct known *k, const char *val, int *out, struct errbuf *err)
{
	long v;

	if (!val) {
		if (k->needs_value)
			return err_set(err, "%s needs a value, e.g. %s=65536", k->name, k->name);
		*out = is_tos(k) ? (strcmp(k->name, "IPTOS_LOWDELAY") == 0 ?
					   IPTOS_LOWDELAY : IPTOS_THROUGHPUT) : 1;
		return 0;
	}
	if (parse_long_range(val, 0, INT_MAX, &v) < 0)
		return err_set(err, "%s=%s: the value must be a whole number from 0 to %d",
			       k->name, val, INT_MAX);
	if (!k->needs_value && !is_tos(k) && v > 1)
		return err_set(err, "%s=%s: a flag takes no value, or 0 or 1", k->name, val);
	*out = (int)v;
	return 0;
}

/* One "NAME" or "NAME=VALUE" token. */
static int parse_one(char *tok, bool tcp, struct sockopts *out, struct errbuf *err)
{
	char *val = strchr(tok, '=');
	const struct known *k = NULL;

	if (val)
		*val++ = '\0';
	for (size_t i = 0; i < sizeof(known) / sizeof(known[0]); i++)
		if (strcmp(known[i].name, tok) == 0)
			k = &known[i];
	if (!k)
		return err_set(err, "unknown socket option '%s' (known: %s)", tok, sockopts_known());
	if (k->tcp_only && !tcp)
		return err_set(err, "%s applies to TCP sockets only", k->name);
	if (out->n == SOCKOPT_MAX)
		return err_set(err, "more than %d socket options", SOCKOPT_MAX);
	struct sockopt *o = &out->v[out->n];
	memset(o, 0, sizeof(*o));
	if (k->is_string && !val)
		return err_set(err, "%s needs a value, e.g. %s=cubic", k->name, k->name);
	if (k->is_string ? parse_name(k, val, o->text, sizeof(o->text), err) < 0
			 : parse_value(k, val, &o->value, err) < 0)
		return -1;
	o->name = k->name;
	o->level = k->level;
	o->opt = k->opt;
	out->n++;
	return 0;
}

static int parse_all(const char *spec, bool tcp, struct sockopts *out, struct errbuf *err)
{
	char copy[512], *save = NULL;

	out->n = 0;
	if (!spec)
		return 0;
	if (strlen(spec) >= sizeof(copy))
		return err_set(err, "socket options: '%.40s...' is too long", spec);
	strcpy(copy, spec);
	for (char *t = strtok_r(copy, ", \t", &save); t; t = strtok_r(NULL, ", \t", &save))
		if (parse_one(t, tcp, out, err) < 0)
			return -1;
	return 0;
}

int sockopts_parse_tcp(const char *spec, struct sockopts *out, struct errbuf *err)
{
	return parse_all(spec, true, out, err);
}

int sockopts_parse_unix(const char *spec, struct sockopts *out, struct errbuf *err)
{
	return parse_all(spec, false, out, err);
}

const char *sockopts_available_cc(void)
{
	static _Thread_local char list[256];
	FILE *f = fopen(AVAILABLE_CC, "re");

	snprintf(list, sizeof(list), "unknown: " AVAILABLE_CC " unreadable");
	if (f) {
		if (fgets(list, sizeof(list), f))
			list[strcspn(list, "\n")] = '\0';
		fclose(f);
	}
	return list;
}

static int apply_failed(const struct sockopt *s, struct errbuf *err)
{
	if (!s->text[0])
		return err_errno(err, "setting %s=%d", s->name, s->value);
	if (errno == ENOENT)
		return err_set(err, "setting %s=%s: this kernel has no such congestion control "
			       "(available: %s)", s->name, s->text, sockopts_available_cc());
	return err_errno(err, "setting %s=%s (available: %s%s)", s->name, s->text,
			 sockopts_available_cc(), errno == EPERM ? "; without CAP_NET_ADMIN only "
			 "those of net.ipv4.tcp_allowed_congestion_control" : "");
}

int sockopts_apply(int fd, const struct sockopts *o, struct errbuf *err)
{
	for (unsigned i = 0; i < o->n; i++) {
		const struct sockopt *s = &o->v[i];
		int rc = s->text[0] ? setsockopt(fd, s->level, s->opt, s->text, (socklen_t)strlen(s->text))
				    : setsockopt(fd, s->level, s->opt, &s->value, sizeof(s->value));
		if (rc < 0)
			return apply_failed(s, err);
	}
	return 0;
}

int sockopts_probe(int family, int protocol, const struct sockopts *o, struct errbuf *err)
{
	int fd = socket(family, SOCK_STREAM | SOCK_CLOEXEC, protocol);

	if (fd < 0)
		return err_errno(err, "creating a socket to try the socket options on");
	int rc = sockopts_apply(fd, o, err);
	close(fd);
	return rc;
}

static int get_int(int fd, int level, int opt)
{
	int v;
	socklen_t len = sizeof(v);

	return getsockopt(fd, level, opt, &v, &len) == 0 ? v : -1;
}

void sockopt_read_back(int fd, struct socket_readback *out)
{
	struct sockaddr_storage ss;
	socklen_t len = sizeof(ss);

	memset(out, 0, sizeof(*out));
	out->nodelay = -1;
	if (getsockname(fd, (struct sockaddr *)&ss, &len) < 0)
		return;
	out->known = true;
	out->family = ss.ss_family;
	out->sndbuf = get_int(fd, SOL_SOCKET, SO_SNDBUF);
	out->rcvbuf = get_int(fd, SOL_SOCKET, SO_RCVBUF);
	if (ss.ss_family != AF_INET && ss.ss_family != AF_INET6)
		return;
	out->nodelay = get_int(fd, IPPROTO_TCP, TCP_NODELAY);
	len = sizeof(out->cc) - 1;
	if (getsockopt(fd, IPPROTO_TCP, TCP_CONGESTION, out->cc, &len) < 0)
		out->cc[0] = '\0';
	out->cc[sizeof(out->cc) - 1] = '\0';
}
