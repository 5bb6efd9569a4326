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
	} v[SOCKOPT_MAX];
};

/* spec may be NULL or empty (no options). -1 with err naming the bad option.
 * For TCP sockets every option; for AF_UNIX ones the TCP and IP options
 * are refused. */
int sockopts_parse_tcp(const char *spec, struct sockopts *out, struct errbuf *err);
int sockopts_parse_unix(const char *spec, struct sockopts *out, struct errbuf *err);

/* -1 with err naming the option that the kernel refused. */
int sockopts_apply(int fd, const struct sockopts *o, struct errbuf *err);

/* "TCP_NODELAY, SO_SNDBUF=N, ..." for help and error text. */
const char *sockopts_known(void);

#endif
