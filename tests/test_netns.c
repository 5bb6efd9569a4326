/* tbench --netns, each case in a forked child so this process stays in the
 * host's namespace: a private namespace with only its loopback, up, with
 * offloads set and read back, as root and as `nobody` (skipped where the
 * kernel closes user namespaces to unprivileged users); a tcp run with its
 * own server on that loopback; --sysctl set and read back there, as root
 * and as `nobody`, a name it lacks or keeps read-only refused, what
 * --sysctl takes; offloads and sysctls without --netns refused; and the
 * host's loopback offloads, its tcp_autocorking and namespace as they were. */
#include "config.h"

#include <errno.h>
#include <grp.h>
#include <net/if.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "driver.h"
#include "netns.h"
#include "registry.h"
#include "testlib.h"

enum { EXIT_SKIP = 77, NOBODY = 65534 };

static struct loadfile lf;
static ino_t host_netns;
static int skipped;

static ino_t netns_inode(void)
{
	struct stat sb;

	return stat("/proc/self/ns/net", &sb) == 0 ? sb.st_ino : 0;
}

static struct netns_options all_offloads(enum offload_want w)
{
	return (struct netns_options){ .enter = true, .tso = w, .gso = w, .gro = w };
}

/* Runs `fn` in a child: its exit status 0 passes, 77 skips (it says why). */
static void in_child(const char *what, void (*fn)(const void *), const void *arg)
{
	int status;

	fflush(stdout);
	pid_t pid = fork();
	if (pid == 0) {
		test_failures = 0;
		fn(arg);
		fflush(stdout);
		_exit(test_failures ? 1 : 0);
	}
	CHECK(pid > 0 && waitpid(pid, &status, 0) == pid);
	bool exited = pid > 0 && WIFEXITED(status);
	if (exited && WEXITSTATUS(status) == EXIT_SKIP) {
		printf("  %s: SKIPPED\n", what);
		skipped++;
		return;
	}
	CHECK(exited && WEXITSTATUS(status) == 0);
	if (exited && WEXITSTATUS(status) == 0)
		printf("  %s: ok\n", what);
	else if (exited)
		printf("  %s: FAILED, exit status %d\n", what, WEXITSTATUS(status));
	else
		printf("  %s: FAILED, %s\n", what, pid > 0 && WIFSIGNALED(status) ?
		       strsignal(WTERMSIG(status)) : "not waited for");
}

static bool lo_up(void)
{
	struct ifreq ifr = { .ifr_name = "lo" };
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	bool up = fd >= 0 && ioctl(fd, SIOCGIFFLAGS, &ifr) == 0 && (ifr.ifr_flags & IFF_UP);

	if (fd >= 0)
		close(fd);
	return up;
}

/* The namespace has nothing but its own loopback. */
static bool only_loopback(void)
{
	struct if_nameindex *ifs = if_nameindex();
	bool only = ifs && ifs[0].if_name && strcmp(ifs[0].if_name, "lo") == 0 && !ifs[1].if_name;

	if (ifs)
		if_freenameindex(ifs);
	return only;
}

static void enter_ok(const struct netns_options *o, struct netns_state *st)
{
	struct errbuf err = { "" };
	bool root = geteuid() == 0;   /* inside a user namespace of its own, everyone is */
	int rc = netns_enter(o, st, &err);

	if (rc < 0)
		fprintf(stderr, "  netns_enter: %s\n", err.msg);
	CHECK(rc == 0);
	CHECK(st->entered);
	CHECK(st->user_ns == !root);
	CHECK(strcmp(st->device, "lo") == 0);
	CHECK(netns_inode() != host_netns);
	CHECK(only_loopback());
	CHECK(lo_up());
}

static void check_offload(const char *name, int got, enum offload_want want)
{
	if (want == OFFLOAD_KEEP)
		CHECK(got == 0 || got == 1);
	else if (got != (int)want) {
		CHECK(got == (int)want);
		fprintf(stderr, "  %s read back %d, asked %d\n", name, got, (int)want);
	}
}

/* `ethtool -k lo` as this process's namespace sees it, "" without ethtool:
 * a reader independent of the one under test. */
static void ethtool_features(char *buf, size_t len)
{
	FILE *p = popen("ethtool -k lo 2>/dev/null", "r");
	size_t n = p ? fread(buf, 1, len - 1, p) : 0;

	if (p)
		pclose(p);
	buf[n] = '\0';
}

/* ethtool's line "NAME: on|off" agrees with a read-back of 0 or 1. */
static void ethtool_agrees(const char *k, const char *name, int value)
{
	char line[96];

	if (value < 0)
		return;
	snprintf(line, sizeof(line), "\n%s: %s", name, value ? "on" : "off");
	if (!strstr(k, line)) {
		CHECK(strstr(k, line) != NULL);
		fprintf(stderr, "  ethtool -k lo has no line \"%s\"\n", line + 1);
	}
}

/* Enters with the offloads asked; the read-back and a second, independent
 * read agree with them. */
static void offloads_case(const void *arg)
{
	const struct netns_options *o = arg;
	struct netns_state st, again = { .tso = -2 };
	struct errbuf err = { "" };

	enter_ok(o, &st);
	check_offload("tso", st.tso, o->tso);
	check_offload("gso", st.gso, o->gso);
	check_offload("gro", st.gro, o->gro);
	CHECK(netns_read_offloads("lo", &again, &err) == 0);
	CHECK(again.tso == st.tso && again.gso == st.gso && again.gro == st.gro);

	char k[16384];
	ethtool_features(k, sizeof(k));
	if (!*k) {
		printf("  SKIPPED a check: no ethtool to read the offloads back independently\n");
		return;
	}
	ethtool_agrees(k, "tcp-segmentation-offload", st.tso);
	ethtool_agrees(k, "generic-segmentation-offload", st.gso);
	ethtool_agrees(k, "generic-receive-offload", st.gro);
}

/* A whole run of the tcp backend, 2 clients as processes, in the namespace:
 * nothing listens on its loopback, so tcp starts tbench's own server there. */
static void tcp_run_case(const void *arg)
{
	struct netns_state st;
	struct run_result res;
	struct run_config cfg = {
		.lf = &lf, .backend = backend_find("tcp"), .run_once = true,
		.warmup_exact = true,  /* no warm-up: every byte counts */
		.bcfg = { .nclients = 2, .processes = true },
	};

	enter_ok(arg, &st);
	CHECK(cfg.backend != NULL);
	if (!cfg.backend)
		return;
	CHECK(driver_run(&cfg, NULL, &res) == RUN_OK);
	if (res.status != RUN_OK)
		fprintf(stderr, "  tcp run in the namespace: %s\n", res.error.msg);
	CHECK_EQ_U(res.bytes, 2 * lf.pass_payload);
	run_result_free(&res);
}

/* Why unprivileged user namespaces cannot be had here, or NULL if they can:
 * asked of the kernel directly, in a child, so a failure of netns_enter is
 * never mistaken for a kernel that refuses. */
static const char *userns_refused(void)
{
	int status;
	pid_t pid = fork();

	if (pid == 0)
		_exit(unshare(CLONE_NEWUSER | CLONE_NEWNET) == 0 ? 0 : errno);
	if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status))
		return "could not ask the kernel";
	return WEXITSTATUS(status) ? strerror(WEXITSTATUS(status)) : NULL;
}

/* As `nobody` would run tbench. Changing uid without exec leaves the
 * process not dumpable, its /proc/self files root's: a process that nobody
 * started is dumpable, so this one is made so again. */
static bool become_nobody(void)
{
	if (geteuid() != 0)
		return true;
	return setgroups(0, NULL) == 0 && setgid(NOBODY) == 0 && setuid(NOBODY) == 0 &&
	       prctl(PR_SET_DUMPABLE, 1, 0, 0, 0) == 0;
}

struct unprivileged {
	void (*then)(const void *);
	const struct netns_options *o;
};

/* A case as an unprivileged user: a struct unprivileged. */
static void unprivileged_case(const void *arg)
{
	void (*then)(const void *) = ((const struct unprivileged *)arg)->then;
	const struct netns_options *o = ((const struct unprivileged *)arg)->o;

	CHECK(become_nobody());
	if (test_failures)
		return;
	const char *why = userns_refused();
	if (why) {
		printf("  SKIPPED as uid %u: the kernel refuses user namespaces (%s); see "
		       "sysctl kernel.unprivileged_userns_clone, user.max_user_namespaces\n",
		       (unsigned)geteuid(), why);
		fflush(stdout);
		_exit(EXIT_SKIP);
	}
	printf("  as uid %u, in a user namespace of its own:\n", (unsigned)geteuid());
	then(o);
}

/* A sysctl that every network namespace has its own of, and that tbench's
 * runs are known to vary: its value as this process's namespace has it,
 * -1 when it cannot be read. */
#define AUTOCORKING "net.ipv4.tcp_autocorking"
#define AUTOCORKING_PATH "/proc/sys/net/ipv4/tcp_autocorking"

static int autocorking(void)
{
	FILE *f = fopen(AUTOCORKING_PATH, "r");
	int v = -1;

	if (f && fscanf(f, "%d", &v) != 1)
		v = -1;
	if (f)
		fclose(f);
	return v;
}

/* --sysctl: written in the run's namespace and read back, by the state
 * and by a reader of this test's own. */
static void sysctl_case(const void *arg)
{
	const struct netns_options *o = arg;
	struct netns_state st;

	enter_ok(o, &st);
	CHECK_EQ_U(st.nsysctl, 1);
	CHECK(strcmp(st.sysctl[0].name, AUTOCORKING) == 0);
	CHECK(strcmp(st.sysctl[0].read, o->sysctl[0].value) == 0);
	CHECK(autocorking() == atoi(o->sysctl[0].value));
}

/* A name the namespace lacks, or one it keeps read-only (host-wide), fails
 * the entry, naming it. */
static void sysctl_refused_case(const void *arg)
{
	const char *text = arg;
	struct netns_options o = all_offloads(OFFLOAD_KEEP);
	struct netns_state st;
	struct errbuf err = { "" };
	char copy[128], name[128];

	snprintf(copy, sizeof(copy), "%s", text);
	snprintf(name, sizeof(name), "%.*s", (int)strcspn(text, "="), text);
	CHECK(netns_sysctl_add(&o, copy, &err) == 0);
	CHECK(netns_enter(&o, &st, &err) == -1);
	if (!strstr(err.msg, name)) {
		CHECK(strstr(err.msg, name) != NULL);
		fprintf(stderr, "  %s: the error does not name it: %s\n", text, err.msg);
	}
}

/* What --sysctl takes, and what it refuses before anything starts. */
static void sysctl_parse(void)
{
	static const char *const bad[] = {
		AUTOCORKING, "kernel.pid_max=4096", "net..ipv4=1", "net.ipv4.=1", "net/ipv4/x=1",
		"net.ipv4.x=", "net.ipv4.x=1\n", "net.ipv4.x y=1", "net.=1", "=1",
	};
	struct netns_options o = all_offloads(OFFLOAD_KEEP);
	struct errbuf err;
	char text[64];

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		snprintf(text, sizeof(text), "%s", bad[i]);
		err.msg[0] = '\0';
		CHECK(netns_sysctl_add(&o, text, &err) == -1);
		CHECK(strstr(err.msg, "--sysctl") != NULL);
		CHECK_EQ_U(o.nsysctl, 0);
	}
	char ok[] = AUTOCORKING "=0", again[] = AUTOCORKING "=1", vector[] = "net.ipv4.tcp_rmem=4096 8192 16384";
	CHECK(netns_sysctl_add(&o, ok, &err) == 0);
	CHECK(netns_sysctl_add(&o, vector, &err) == 0);
	CHECK(netns_sysctl_add(&o, again, &err) == -1 && strstr(err.msg, "twice"));
	CHECK_EQ_U(o.nsysctl, 2);
	CHECK(strcmp(o.sysctl[0].name, AUTOCORKING) == 0 && strcmp(o.sysctl[0].value, "0") == 0);
	CHECK(strcmp(o.sysctl[1].value, "4096 8192 16384") == 0);
}

/* Without --netns: nothing happens, and offloads and sysctls are refused. */
static void no_netns_case(const void *arg)
{
	struct netns_options o = { .enter = false, .tso = OFFLOAD_KEEP, .gso = OFFLOAD_KEEP,
				   .gro = OFFLOAD_KEEP };
	struct netns_state st;
	struct errbuf err = { "" };

	(void)arg;
	CHECK(netns_enter(&o, &st, &err) == 0);
	CHECK(!st.entered && !st.user_ns && st.tso == -1);
	CHECK(netns_inode() == host_netns);
	o.gro = OFFLOAD_OFF;
	CHECK(netns_enter(&o, &st, &err) == -1);
	CHECK(strstr(err.msg, "--netns") != NULL);
	CHECK(netns_inode() == host_netns);
	char sysctl[] = AUTOCORKING "=1";
	o.gro = OFFLOAD_KEEP;
	CHECK(netns_sysctl_add(&o, sysctl, &err) == 0);
	CHECK(netns_enter(&o, &st, &err) == -1);
	CHECK(strstr(err.msg, "--sysctl") != NULL);
}

static void root_cases(const struct netns_options *sysctl)
{
	const struct netns_options off = all_offloads(OFFLOAD_OFF), on = all_offloads(OFFLOAD_ON),
		keep = all_offloads(OFFLOAD_KEEP),
		tso_on_gso_off = { .enter = true, .tso = OFFLOAD_ON, .gso = OFFLOAD_OFF,
				   .gro = OFFLOAD_KEEP };

	if (geteuid() != 0) {
		printf("  SKIPPED the root cases: not run as root\n");
		skipped++;
		return;
	}
	in_child("root, offloads off", offloads_case, &off);
	in_child("root, offloads on", offloads_case, &on);
	in_child("root, offloads as they are", offloads_case, &keep);
	in_child("root, tso on, gso off", offloads_case, &tso_on_gso_off);
	in_child("root, a tcp run with offloads off", tcp_run_case, &off);
	in_child("root, --sysctl " AUTOCORKING, sysctl_case, sysctl);
	in_child("root, --sysctl of a name the kernel lacks", sysctl_refused_case,
		 "net.ipv4.no_such_sysctl=1");
	in_child("root, --sysctl of a host-wide one", sysctl_refused_case, "net.core.rmem_max=65536");
}

int main(void)
{
	const char *src = getenv("top_srcdir");
	const struct netns_options off = all_offloads(OFFLOAD_OFF), on = all_offloads(OFFLOAD_ON);
	struct netns_state before, after;
	struct errbuf err = { "" };
	static char path[4096], k_before[16384], k_after[16384];

	signal(SIGPIPE, SIG_IGN);   /* as tbench does: a closed peer is an error */
	snprintf(path, sizeof(path), "%s/loadfiles/tiny.txt", src ? src : ".");
	if (loadfile_read(path, NULL, &lf, &err) < 0) {
		fprintf(stderr, "%s\n", err.msg);
		return 1;
	}
	host_netns = netns_inode();
	CHECK(host_netns != 0);
	CHECK(netns_read_offloads("lo", &before, &err) == 0);
	ethtool_features(k_before, sizeof(k_before));

	/* --sysctl asks for the other value than the host's: a write that
	 * reached the host would show. */
	int host_autocorking = autocorking();
	struct netns_options sysctl = all_offloads(OFFLOAD_KEEP);
	char sysctl_text[] = AUTOCORKING "=0";
	sysctl_text[sizeof(sysctl_text) - 2] = host_autocorking == 0 ? '1' : '0';
	CHECK(netns_sysctl_add(&sysctl, sysctl_text, &err) == 0);
	sysctl_parse();

	in_child("without --netns", no_netns_case, NULL);
	root_cases(&sysctl);
	in_child("unprivileged, offloads off", unprivileged_case,
		 &(struct unprivileged){ offloads_case, &off });
	in_child("unprivileged, offloads on", unprivileged_case,
		 &(struct unprivileged){ offloads_case, &on });
	in_child("unprivileged, a tcp run with offloads on", unprivileged_case,
		 &(struct unprivileged){ tcp_run_case, &on });
	in_child("unprivileged, --sysctl " AUTOCORKING, unprivileged_case,
		 &(struct unprivileged){ sysctl_case, &sysctl });

	/* The host's loopback is as it was. */
	CHECK(netns_read_offloads("lo", &after, &err) == 0);
	CHECK(before.tso == after.tso && before.gso == after.gso && before.gro == after.gro);
	ethtool_features(k_after, sizeof(k_after));
	if (*k_before)
		CHECK(strcmp(k_before, k_after) == 0);
	else
		printf("  SKIPPED a check: no ethtool to compare the host's lo features before and after\n");
	CHECK(netns_inode() == host_netns);
	CHECK(autocorking() == host_autocorking);   /* the host's sysctl is as it was */
	loadfile_free(&lf);
	if (skipped)
		printf("test_netns: %d case(s) skipped, see above\n", skipped);
	return test_done("test_netns");
}
