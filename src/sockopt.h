/* Socket options named on the command line (-T/--tcp-options), the way
 * dbench's tbench takes them: "TCP_NODELAY,SO_SNDBUF=65536", separated by
 * commas or blanks. Parsed once before a run, applied to every socket. */
#ifndef TBENCH_SOCKOPT_H
#define TBENCH_SOCKOPT_H

#include <stdbool.h>

#include "util.h"

/* dbench's default for both tbench and tbench_srv. */
#define SOCKOPT_TCP_DEFAULT "TCP_NODELAY"

enum { SOCKOPT_MAX = 16 };

struct sockopts {
	unsigned n;
	struct sockopt {
		const char *name;    /* "SO_SNDBUF", static */
		int level, opt, value;
		char text[16];       /* a string option's value ("cubic"); "" for the others */
	} v[SOCKOPT_MAX];
};

/* spec may be NULL or empty (no options). -1 with err naming the bad option.
 * For TCP sockets every option; for AF_UNIX ones the TCP and IP options
 * are refused. */
int sockopts_parse_tcp(const char *spec, struct sockopts *out, struct errbuf *err);
int sockopts_parse_unix(const char *spec, struct sockopts *out, struct errbuf *err);

/* -1 with err naming the option that the kernel refused (for
 * TCP_CONGESTION, with the congestion controls it has). */
int sockopts_apply(int fd, const struct sockopts *o, struct errbuf *err);

/* Applies the options to a throw-away stream socket of the family and
 * protocol: a value the kernel refuses is found before anything starts. */
int sockopts_probe(int family, int protocol, const struct sockopts *o, struct errbuf *err);

struct socket_readback;
/* What a connected socket has: family, congestion control, TCP_NODELAY,
 * buffer sizes. out->known false when the socket could not be asked. */
void sockopt_read_back(int fd, struct socket_readback *out);

/* "TCP_NODELAY, SO_SNDBUF=N, ..." for help and error text. */
const char *sockopts_known(void);
/* The kernel's congestion controls ("reno cubic"), for error text. */
const char *sockopts_available_cc(void);

#endif
