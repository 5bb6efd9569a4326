/* tbench --netns: unshare a network namespace (and a user namespace when
 * not root), bring its loopback up, and set and read back its offloads
 * through the ethtool ioctl, by the kernel's feature names. */
#include "config.h"
#include "netns.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/ethtool.h>
#include <linux/sockios.h>
#include <net/if.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#define LOOPBACK "lo"

/* An offload as `ethtool -K DEV tso|gso|gro` means it: the kernel features
 * whose names start with `prefix` and end with `suffix` (suffix NULL: the
 * name is `prefix` exactly). */
struct offload_group {
	const char *name, *flags, *prefix, *suffix;
};

enum { GROUP_TSO, GROUP_GSO, GROUP_GRO, GROUP_N };

static const struct offload_group groups[GROUP_N] = {
	[GROUP_TSO] = { "TSO", "--offload or --tso", "tx-tcp", "-segmentation" },  /* tcp, tcp6, ecn, ... */
	[GROUP_GSO] = { "GSO", "--offload or --gso", "tx-generic-segmentation", NULL },
	[GROUP_GRO] = { "GRO", "--gro", "rx-gro", NULL },
};

/* A device's features as the kernel names and reports them. */
struct features {
	int fd;                              /* a socket in the device's namespace */
	const char *dev;
	unsigned count;
	char (*names)[ETH_GSTRING_LEN];
	struct ethtool_gfeatures *state;     /* count bits in blocks of 32 */
};

static bool group_has(const struct offload_group *g, const char *name)
{
	size_t np = strlen(g->prefix), nn = strlen(name);

	if (!g->suffix)
		return strcmp(name, g->prefix) == 0;
	size_t ns = strlen(g->suffix);
	return nn >= np + ns && strncmp(name, g->prefix, np) == 0 &&
	       strcmp(name + nn - ns, g->suffix) == 0;
}

static int ethtool_call(const struct features *f, void *cmd)
{
	struct ifreq ifr;

	memset(&ifr, 0, sizeof(ifr));
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", f->dev);
	ifr.ifr_data = cmd;
	return ioctl(f->fd, SIOCETHTOOL, &ifr);
}

static bool feature_active(const struct features *f, unsigned i)
{
	const struct ethtool_get_features_block *b = &f->state->features[i / 32];

	return b->active >> (i % 32) & 1;
}

/* Changeable, as ethtool prints it without "[fixed]". */
static bool feature_changeable(const struct features *f, unsigned i)
{
	const struct ethtool_get_features_block *b = &f->state->features[i / 32];

	return (b->available >> (i % 32) & 1) && !(b->never_changed >> (i % 32) & 1);
}

static int features_read_state(struct features *f, struct errbuf *err)
{
	f->state->cmd = ETHTOOL_GFEATURES;
	f->state->size = (f->count + 31) / 32;
	if (ethtool_call(f, f->state) < 0)
		return err_errno(err, "%s: reading its features (ETHTOOL_GFEATURES)", f->dev);
	return 0;
}

static int features_count(struct features *f, struct errbuf *err)
{
	union {   /* the header and the one count asked for */
		struct ethtool_sset_info info;
		uint8_t bytes[sizeof(struct ethtool_sset_info) + sizeof(uint32_t)];
	} q = { .info = { .cmd = ETHTOOL_GSSET_INFO, .sset_mask = 1ULL << ETH_SS_FEATURES } };

	if (ethtool_call(f, &q) < 0)
		return err_errno(err, "%s: asking how many features it has (ETHTOOL_GSSET_INFO)", f->dev);
	if (!(q.info.sset_mask & 1ULL << ETH_SS_FEATURES) || q.info.data[0] == 0)
		return err_set(err, "%s: the kernel names none of its features (ETHTOOL_GSSET_INFO)", f->dev);
	f->count = q.info.data[0];
	return 0;
}

static void features_free(struct features *f)
{
	free(f->names);
	free(f->state);
	f->names = NULL;
	f->state = NULL;
}

/* Names and state of every feature of `dev`. */
static int features_load(struct features *f, int fd, const char *dev, struct errbuf *err)
{
	*f = (struct features){ .fd = fd, .dev = dev };
	if (features_count(f, err) < 0)
		return -1;
	struct ethtool_gstrings *s = calloc(1, sizeof(*s) + (size_t)f->count * ETH_GSTRING_LEN);
	f->state = calloc(1, sizeof(*f->state) +
			  (f->count + 31) / 32 * sizeof(struct ethtool_get_features_block));
	f->names = calloc(f->count, ETH_GSTRING_LEN);
	if (!s || !f->state || !f->names) {
		free(s);
		features_free(f);
		return err_set(err, "%s: out of memory for %u feature names", dev, f->count);
	}
	*s = (struct ethtool_gstrings){ .cmd = ETHTOOL_GSTRINGS, .string_set = ETH_SS_FEATURES,
					.len = f->count };
	int rc = ethtool_call(f, s);
	if (rc < 0)
		err_errno(err, "%s: reading its feature names (ETHTOOL_GSTRINGS)", dev);
	for (unsigned i = 0; rc == 0 && i < f->count; i++)
		memcpy(f->names[i], s->data + (size_t)i * ETH_GSTRING_LEN, ETH_GSTRING_LEN - 1);
	free(s);
	if (rc == 0)
		rc = features_read_state(f, err);
	if (rc < 0)
		features_free(f);
	return rc;
}

/* 1 when every feature of the group that is on or could be is on, 0 when
 * none is, -1 when they differ or the device has none of them. */
static int group_value(const struct features *f, const struct offload_group *g)
{
	unsigned present = 0, relevant = 0, active = 0;

	for (unsigned i = 0; i < f->count; i++) {
		if (!group_has(g, f->names[i]))
			continue;
		present++;
		if (feature_changeable(f, i) || feature_active(f, i))
			relevant++;
		active += feature_active(f, i);
	}
	if (!present)
		return -1;
	return active == 0 ? 0 : active == relevant ? 1 : -1;
}

static void fill_state(const struct features *f, struct netns_state *st)
{
	st->tso = group_value(f, &groups[GROUP_TSO]);
	st->gso = group_value(f, &groups[GROUP_GSO]);
	st->gro = group_value(f, &groups[GROUP_GRO]);
}

static int socket_in_namespace(struct errbuf *err)
{
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);

	if (fd < 0)
		return err_errno(err, "--netns: a socket to configure the loopback with");
	return fd;
}

static int read_mtu(int fd, const char *dev, struct errbuf *err)
{
	struct ifreq ifr;

	memset(&ifr, 0, sizeof(ifr));
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", dev);
	if (ioctl(fd, SIOCGIFMTU, &ifr) < 0)
		return err_errno(err, "%s: reading its MTU (SIOCGIFMTU)", dev);
	return ifr.ifr_mtu;
}

/* --mtu: set, then read back; the kernel may refuse or round. */
static int mtu_set(int fd, const char *dev, int mtu, struct netns_state *st, struct errbuf *err)
{
	struct ifreq ifr;

	memset(&ifr, 0, sizeof(ifr));
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", dev);
	ifr.ifr_mtu = mtu;
	if (mtu && ioctl(fd, SIOCSIFMTU, &ifr) < 0)
		return err_errno(err, "--mtu %d: setting %s's MTU (SIOCSIFMTU)%s", mtu, dev,
				 errno == EINVAL ? "; the device refuses that size" : "");
	st->mtu = read_mtu(fd, dev, err);
	if (st->mtu < 0)
		return -1;
	if (mtu && st->mtu != mtu)
		return err_set(err, "--mtu %d: %s's MTU reads back as %d", mtu, dev, st->mtu);
	return 0;
}

int netns_read_offloads(const char *dev, struct netns_state *st, struct errbuf *err)
{
	struct features f;
	int fd = socket_in_namespace(err);

	if (fd < 0)
		return -1;
	int mtu = read_mtu(fd, dev, err);
	if (mtu > 0)
		st->mtu = mtu;
	int rc = features_load(&f, fd, dev, err);
	if (rc == 0) {
		fill_state(&f, st);
		snprintf(st->device, sizeof(st->device), "%s", dev);
		features_free(&f);
	}
	close(fd);
	return rc;
}

static const enum offload_want *group_want(const struct netns_options *o, int g)
{
	return g == GROUP_TSO ? &o->tso : g == GROUP_GSO ? &o->gso : &o->gro;
}

/* Every changeable feature of the asked groups to on or off, in one call. */
static int offloads_write(struct features *f, const struct netns_options *o, struct errbuf *err)
{
	unsigned blocks = (f->count + 31) / 32;
	struct ethtool_sfeatures *s = calloc(1, sizeof(*s) + blocks * sizeof(s->features[0]));

	if (!s)
		return err_set(err, "%s: out of memory for its features", f->dev);
	*s = (struct ethtool_sfeatures){ .cmd = ETHTOOL_SFEATURES, .size = blocks };
	for (int g = 0; g < GROUP_N; g++) {
		enum offload_want want = *group_want(o, g);
		for (unsigned i = 0; want != OFFLOAD_KEEP && i < f->count; i++) {
			if (!group_has(&groups[g], f->names[i]) || !feature_changeable(f, i))
				continue;
			s->features[i / 32].valid |= 1u << (i % 32);
			if (want == OFFLOAD_ON)
				s->features[i / 32].requested |= 1u << (i % 32);
		}
	}
	int rc = ethtool_call(f, s);
	if (rc < 0)
		err_errno(err, "%s: setting its offloads (ETHTOOL_SFEATURES)%s", f->dev,
			  errno == EPERM ? "; this needs CAP_NET_ADMIN in the run's namespace" : "");
	free(s);
	return rc < 0 ? -1 : 0;
}

/* What the kernel made of it: each asked group must read back as asked;
 * where not, the error names the first feature that stayed as it was. */
static int offloads_check(const struct features *f, const struct netns_options *o,
			  struct errbuf *err)
{
	for (int g = 0; g < GROUP_N; g++) {
		enum offload_want want = *group_want(o, g);
		if (want == OFFLOAD_KEEP || group_value(f, &groups[g]) == (int)want)
			continue;
		const char *asked = want == OFFLOAD_ON ? "on" : "off", *name = NULL;
		for (unsigned i = 0; !name && i < f->count; i++)
			if (group_has(&groups[g], f->names[i]) && feature_active(f, i) != (want == OFFLOAD_ON) &&
			    (feature_changeable(f, i) || feature_active(f, i)))
				name = f->names[i];
		if (!name)
			return err_set(err, "%s %s: %s cannot turn it %s (its %s%s features are fixed "
				       "or absent); leave %s as it is (no %s)", groups[g].name, asked,
				       f->dev, asked, groups[g].prefix, groups[g].suffix ? "*" : "",
				       groups[g].name, groups[g].flags);
		return err_set(err, "%s %s: %s's %s is still %s after setting it %s: the kernel would "
			       "not change it (`ethtool -k %s` in a namespace of your own shows why); "
			       "leave %s as it is (no %s)", groups[g].name, asked, f->dev, name,
			       want == OFFLOAD_ON ? "off" : "on", asked, f->dev, groups[g].name,
			       groups[g].flags);
	}
	return 0;
}

static int offloads_set(int fd, const struct netns_options *o, struct netns_state *st,
			struct errbuf *err)
{
	struct features f;

	if (features_load(&f, fd, LOOPBACK, err) < 0)
		return -1;
	int rc = 0;
	if (o->tso != OFFLOAD_KEEP || o->gso != OFFLOAD_KEEP || o->gro != OFFLOAD_KEEP) {
		rc = offloads_write(&f, o, err);
		if (rc == 0)
			rc = features_read_state(&f, err);
		if (rc == 0)
			rc = offloads_check(&f, o, err);
	}
	fill_state(&f, st);
	features_free(&f);
	return rc;
}

static int loopback_up(int fd, struct errbuf *err)
{
	struct ifreq ifr;

	memset(&ifr, 0, sizeof(ifr));
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", LOOPBACK);
	if (ioctl(fd, SIOCGIFFLAGS, &ifr) < 0)
		return err_errno(err, "--netns: reading the flags of the namespace's %s", LOOPBACK);
	if (ifr.ifr_flags & IFF_UP)
		return 0;
	ifr.ifr_flags |= IFF_UP;
	if (ioctl(fd, SIOCSIFFLAGS, &ifr) < 0)
		return err_errno(err, "--netns: bringing the namespace's %s up%s", LOOPBACK,
				 errno == EPERM ? " (no CAP_NET_ADMIN in the new namespace: a security "
				 "module may restrict unprivileged user namespaces, e.g. sysctl "
				 "kernel.apparmor_restrict_unprivileged_userns=0, or run as root)" : "");
	return 0;
}

static int write_file(const char *path, const char *text, bool may_be_absent, struct errbuf *err)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC);

	if (fd < 0 && may_be_absent && errno == ENOENT)
		return 0;
	if (fd < 0)
		return err_errno(err, "--netns: opening %s%s", path, errno == EACCES ?
				 " (the process is not dumpable, e.g. setuid: run it as the user)" : "");
	ssize_t n = write(fd, text, strlen(text));
	int saved = errno;
	close(fd);
	errno = saved;
	if (n != (ssize_t)strlen(text))
		return n < 0 ? err_errno(err, "--netns: writing \"%s\" to %s", text, path)
			     : err_set(err, "--netns: %s took %zd of %zu bytes", path, n, strlen(text));
	return 0;
}

/* Our uid and gid are root in the new user namespace: it owns the network
 * namespace, so we may configure it. */
static int map_ids(uid_t uid, gid_t gid, struct errbuf *err)
{
	char line[64];

	if (write_file("/proc/self/setgroups", "deny", true, err) < 0)
		return -1;
	snprintf(line, sizeof(line), "0 %u 1", (unsigned)uid);
	if (write_file("/proc/self/uid_map", line, false, err) < 0)
		return -1;
	snprintf(line, sizeof(line), "0 %u 1", (unsigned)gid);
	return write_file("/proc/self/gid_map", line, false, err);
}

static int unshare_failed(int flags, struct errbuf *err)
{
	const char *what = flags & CLONE_NEWUSER ? "user and network namespaces" : "a network namespace";
	const char *hint = "";

	if (errno == EINVAL)
		hint = " (the process already runs threads: a bug in tbench)";
	else if (errno == ENOSPC)
		hint = " (no namespaces left: sysctl user.max_user_namespaces, "
		       "user.max_net_namespaces; 0 disables them)";
	else if (errno == EPERM && (flags & CLONE_NEWUSER))
		hint = " (user namespaces are closed to unprivileged users here: sysctl "
		       "kernel.unprivileged_userns_clone=1, or a container's seccomp policy "
		       "forbids unshare, or the process is in a chroot; or run as root)";
	return err_errno(err, "--netns: creating %s%s", what, hint);
}

/* Root makes a network namespace alone; anyone else (or root without
 * CAP_SYS_ADMIN, as in a container) a user namespace that owns it. */
static int enter_namespaces(struct netns_state *st, struct errbuf *err)
{
	uid_t uid = geteuid();
	gid_t gid = getegid();

	if (uid == 0 && unshare(CLONE_NEWNET) == 0)
		return 0;
	if (uid == 0 && errno != EPERM)
		return unshare_failed(CLONE_NEWNET, err);
	if (unshare(CLONE_NEWUSER | CLONE_NEWNET) < 0)
		return unshare_failed(CLONE_NEWUSER | CLONE_NEWNET, err);
	st->user_ns = true;
	return map_ids(uid, gid, err);
}

int netns_enter(const struct netns_options *o, struct netns_state *st, struct errbuf *err)
{
	*st = (struct netns_state){ .tso = -1, .gso = -1, .gro = -1, .mtu = -1 };
	if (!o->enter) {
		if (o->tso != OFFLOAD_KEEP || o->gso != OFFLOAD_KEEP || o->gro != OFFLOAD_KEEP ||
		    o->mtu || o->nsysctl)
			return err_set(err, "--offload, --tso, --gso, --gro, --mtu and --sysctl need "
				       "--netns: they are set in the run's own namespace, never the host's");
		return 0;
	}
	if (enter_namespaces(st, err) < 0)
		return -1;
	st->entered = true;
	snprintf(st->device, sizeof(st->device), "%s", LOOPBACK);
	int fd = socket_in_namespace(err);
	if (fd < 0)
		return -1;
	int rc = loopback_up(fd, err);
	if (rc == 0)
		rc = mtu_set(fd, LOOPBACK, o->mtu, st, err);
	if (rc == 0)
		rc = offloads_set(fd, o, st, err);
	close(fd);
	if (rc == 0)
		rc = netns_sysctls_set(o, st, err);
	return rc;
}
