#include "config.h"
#include "sockopt.h"

#include <limits.h>
#include <netinet/in.h>
#include <netinet/ip.h>
#include <netinet/tcp.h>
#include <string.h>
#include <sys/socket.h>

/* The options dbench's socklib knows, plus TCP_QUICKACK; flags take no
 * value (or =0/=1), sizes need one. */
static const struct known {
	const char *name;
	int level, opt;
	bool needs_value;
	bool tcp_only;
} known[] = {
	{ "TCP_NODELAY",      IPPROTO_TCP, TCP_NODELAY,   false, true },
	{ "TCP_QUICKACK",     IPPROTO_TCP, TCP_QUICKACK,  false, true },
	{ "SO_KEEPALIVE",     SOL_SOCKET,  SO_KEEPALIVE,  false, false },
	{ "SO_REUSEADDR",     SOL_SOCKET,  SO_REUSEADDR,  false, false },
	{ "SO_BROADCAST",     SOL_SOCKET,  SO_BROADCAST,  false, false },
	{ "SO_SNDBUF",        SOL_SOCKET,  SO_SNDBUF,     true,  false },
	{ "SO_RCVBUF",        SOL_SOCKET,  SO_RCVBUF,     true,  false },
	{ "SO_SNDLOWAT",      SOL_SOCKET,  SO_SNDLOWAT,   true,  false },
	{ "SO_RCVLOWAT",      SOL_SOCKET,  SO_RCVLOWAT,   true,  false },
	{ "IPTOS_LOWDELAY",   IPPROTO_IP,  IP_TOS,        false, true },
	{ "IPTOS_THROUGHPUT", IPPROTO_IP,  IP_TOS,        false, true },
};

const char *sockopts_known(void)
{
	return "TCP_NODELAY, TCP_QUICKACK, SO_KEEPALIVE, SO_REUSEADDR, SO_BROADCAST, "
	       "SO_SNDBUF=N, SO_RCVBUF=N, SO_SNDLOWAT=N, SO_RCVLOWAT=N, "
	       "IPTOS_LOWDELAY, IPTOS_THROUGHPUT";
}

static int parse_value(const struct known *k, const char *val, int *out, struct errbuf *err)
{
	long v;

	if (!val) {
		if (k->needs_value)
			return err_set(err, "%s needs a value, e.g. %s=65536", k->name, k->name);
		*out = k->opt == IP_TOS ? (strcmp(k->name, "IPTOS_LOWDELAY") == 0 ?
					   IPTOS_LOWDELAY : IPTOS_THROUGHPUT) : 1;
		return 0;
	}
	if (parse_long_range(val, 0, INT_MAX, &v) < 0)
		return err_set(err, "%s=%s: the value must be a whole number from 0 to %d",
			       k->name, val, INT_MAX);
	if (!k->needs_value && k->opt != IP_TOS && v > 1)
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
	if (parse_value(k, val, &o->value, err) < 0)
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

int sockopts_apply(int fd, const struct sockopts *o, struct errbuf *err)
{
	for (unsigned i = 0; i < o->n; i++) {
		const struct sockopt *s = &o->v[i];
		if (setsockopt(fd, s->level, s->opt, &s->value, sizeof(s->value)) < 0)
			return err_errno(err, "setting %s=%d", s->name, s->value);
	}
	return 0;
}
