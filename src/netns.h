/* tbench --netns: the run in a network namespace of its own (and a user
 * namespace of its own when not root), with its loopback up and its
 * offloads set as asked and read back. The host is never touched. */
#ifndef TBENCH_NETNS_H
#define TBENCH_NETNS_H

#include <stdbool.h>

#include "util.h"

/* An offload setting: as it is, off, or on. */
enum offload_want { OFFLOAD_KEEP = -1, OFFLOAD_OFF = 0, OFFLOAD_ON = 1 };

struct netns_options {
	bool enter;                      /* --netns */
	enum offload_want tso, gso, gro; /* --offload sets tso and gso; --tso/--gso/--gro apart */
	int mtu;                         /* --mtu: the loopback's MTU; 0: as it is */
};

/* What the run had: read back from the kernel after setting. */
struct netns_state {
	bool entered, user_ns;           /* a private net namespace; a user namespace too */
	int tso, gso, gro;               /* lo's offloads as read back: 0 off, 1 on, -1 unknown
	                                  * (not entered, or the features of a group differ) */
	char device[16];                 /* "lo" */
	int mtu;                         /* the device's MTU as read back; -1 unknown */
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

/* Offloads and MTU of a device in the current namespace, read back into
 * st's tso, gso, gro, mtu and device (nothing else changed); needs no
 * privilege. */
int netns_read_offloads(const char *dev, struct netns_state *st, struct errbuf *err);

#endif
