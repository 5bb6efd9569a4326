/* A client's private server: a thread of this process, or a forked process
 * with processes. The pipe, socketpair and splice backends each bring one
 * per client; this is the one place that starts and reaps them. */
#ifndef TBENCH_COMPANION_H
#define TBENCH_COMPANION_H

#include <pthread.h>
#include <stdbool.h>
#include <sys/types.h>

#include "cpulist.h"
#include "util.h"

enum { COMPANION_MAX_FDS = 8 };

struct companion {
	void (*serve)(void *arg);             /* the server's whole life */
	void *arg;
	/* A forked server closes every descriptor but these (and 0-2): the
	 * client's ends, or the client would never see its own close. */
	int keep[COMPANION_MAX_FDS];
	size_t nkeep;
	/* --server-cpus: pinned to the list's entry `index` (the client's
	 * number) before it serves; NULL: not pinned. */
	const struct cpu_list *cpus;
	unsigned index;
	pid_t pid;                            /* > 0: a process */
	pthread_t thread;
	bool running;
};

/* `name` ("pipe server 3") is for errors. After a process start the caller
 * closes its own copies of the server's fds (companion_is_process()). A
 * forked server dies with the thread that started it. */
int companion_start(struct companion *cp, bool as_process, const char *name, struct errbuf *err);
static inline bool companion_is_process(const struct companion *cp) { return cp->pid > 0; }
/* Waits for the server to end: the caller has already closed the client's
 * side, which is the server's end-of-stream. */
void companion_wait(struct companion *cp);

struct sockopts;
/* A connected TCP pair on the loopback of `family` (AF_INET6: ::1, else
 * 127.0.0.1) for a client and its companion server: a listener on an
 * ephemeral port for one accept, which must be our own connect. `o` (or
 * NULL) is applied to all three sockets before listen() and connect(),
 * where buffer sizes set the window scale. `who` starts the messages. */
int loopback_pair(const char *who, int family, const struct sockopts *o, int *cfd, int *sfd,
		  struct errbuf *err);

#endif
