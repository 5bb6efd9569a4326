/* tbench --netns: the run in a network namespace of its own (and a user
 * namespace of its own when not root), with its loopback up and its
 * offloads set as asked and read back. The host is never touched. */
#ifndef TBENCH_NETNS_H
#define TBENCH_NETNS_H

#include <stdbool.h>

#include "util.h"

/* An offload setting: as it is, off, or on. */
enum offload_want { OFFLOAD_KEEP = -1, OFFLOAD_OFF = 0, OFFLOAD_ON = 1 };

enum { NETNS_MAX_SYSCTLS = 16, NETNS_SYSCTL_NAME = 96, NETNS_SYSCTL_VALUE = 128 };

/* --sysctl NAME=VALUE: a net.* sysctl of the run's own namespace. */
struct netns_sysctl {
	char *name;                      /* the option's text, cut at '=' (free this one) */
	const char *value;               /* what follows the '=' */
};

struct netns_options {
	bool enter;                      /* --netns */
	enum offload_want tso, gso, gro; /* --offload sets tso and gso; --tso/--gso/--gro apart */
	int mtu;                         /* --mtu: the loopback's MTU; 0: as it is */
	unsigned nsysctl;                /* --sysctl, in the order given */
	struct netns_sysctl sysctl[NETNS_MAX_SYSCTLS];
};

/* A --sysctl as asked and as the kernel read it back, blanks squeezed. */
struct netns_sysctl_state {
	char name[NETNS_SYSCTL_NAME], asked[NETNS_SYSCTL_VALUE], read[NETNS_SYSCTL_VALUE];
};

/* What the run had: read back from the kernel after setting. */
struct netns_state {
	bool entered, user_ns;           /* a private net namespace; a user namespace too */
	int tso, gso, gro;               /* lo's offloads as read back: 0 off, 1 on, -1 unknown
	                                  * (not entered, or the features of a group differ) */
	char device[16];                 /* "lo" */
	int mtu;                         /* the device's MTU as read back; -1 unknown */
	unsigned nsysctl;                /* --sysctl's, set and read back */
	struct netns_sysctl_state sysctl[NETNS_MAX_SYSCTLS];
};

/* Must run while the process has a single thread, before anything is
 * started: every thread and process started afterwards is in the
 * namespace, which goes away with the last of them. Without o->enter it
 * only fills *st (entered false) and refuses offloads (bad usage). 0 with
 * *st filled in; -1 with err naming what the kernel refused and what to do
 * (e.g. "user namespaces are closed to unprivileged users here: sysctl
 * kernel.unprivileged_userns_clone=1 ..."), the process maybe already in
 * the new namespace: it should exit. An offload that does not read back as
 * asked is an error naming the feature. */
int netns_enter(const struct netns_options *o, struct netns_state *st, struct errbuf *err);

/* --sysctl's TEXT (NAME=VALUE, taken over: freed with the options) as
 * o's next sysctl: a net.* name of letters, digits, '_' and '-' between
 * dots, a value of printable characters, at most NETNS_MAX_SYSCTLS, each
 * name once. -1 with err naming --sysctl: bad usage. */
int netns_sysctl_add(struct netns_options *o, char *text, struct errbuf *err);

/* In the run's namespace (entered): each of o's sysctls written through
 * /proc/sys, which shows the opener's namespace, and read back into st.
 * A name the namespace lacks, one it keeps read-only (host-wide) and a
 * value that reads back otherwise are errors naming the sysctl. */
int netns_sysctls_set(const struct netns_options *o, struct netns_state *st, struct errbuf *err);

/* Offloads and MTU of a device in the current namespace, read back into
 * st's tso, gso, gro, mtu and device (nothing else changed); needs no
 * privilege. */
int netns_read_offloads(const char *dev, struct netns_state *st, struct errbuf *err);

#endif
