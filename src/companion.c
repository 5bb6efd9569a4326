#include "config.h"
#include "companion.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <sched.h>
#include <signal.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "sockopt.h"

static void *companion_thread(void *p)
{
	struct companion *cp = p;

	cp->serve(cp->arg);
	return NULL;
}

/* A thread is pinned as it is created (--server-cpus). */
static int start_thread(struct companion *cp, const char *name, struct errbuf *err)
{
	int cpu = cpu_list_pick(cp->cpus, cp->index);
	pthread_attr_t attr;
	cpu_set_t set;

	pthread_attr_init(&attr);
	CPU_ZERO(&set);
	if (cpu >= 0)
		CPU_SET(cpu, &set);
	int rc = cpu >= 0 ? pthread_attr_setaffinity_np(&attr, sizeof(set), &set) : 0;
	if (rc == 0)
		rc = pthread_create(&cp->thread, &attr, companion_thread, cp);
	pthread_attr_destroy(&attr);
	if (rc) {
		errno = rc;
		return err_errno(err, "starting %s thread%s", name, cpu >= 0 ?
				 " pinned by --server-cpus" : " (raise ulimit -u?)");
	}
	cp->running = true;
	return 0;
}

int companion_start(struct companion *cp, bool as_process, const char *name, struct errbuf *err)
{
	if (!as_process)
		return start_thread(cp, name, err);
	pid_t parent = getpid();
	pid_t pid = fork();
	if (pid < 0)
		return err_errno(err, "forking %s (raise ulimit -u?)", name);
	if (pid == 0) {
		/* No server outlives its client, even one killed with SIGKILL. */
		if (die_with_parent(parent, SIGKILL) < 0)
			_exit(1);
		signal(SIGINT, SIG_IGN);   /* the parent coordinates Ctrl-C */
		signal(SIGPIPE, SIG_IGN);  /* a vanished client is an error to log */
		close_fds_except(cp->keep, cp->nkeep);
		cp->serve(cp->arg);
		_exit(0);
	}
	cp->pid = pid;
	cp->running = true;
	/* Pinned from here, so that a CPU it may not use is an error of the open. */
	if (cpu_list_pin(cp->cpus, cp->index, pid, name, err) < 0) {
		kill(pid, SIGKILL);
		companion_wait(cp);
		return -1;
	}
	return 0;
}

void companion_wait(struct companion *cp)
{
	if (!cp->running)
		return;
	if (cp->pid > 0)
		while (waitpid(cp->pid, NULL, 0) < 0 && errno == EINTR)
			;
	else
		pthread_join(cp->thread, NULL);
	cp->running = false;
}

/* ---- a loopback TCP pair ------------------------------------------------ */

static socklen_t loopback_addr(int family, struct sockaddr_storage *ss, const char **name)
{
	memset(ss, 0, sizeof(*ss));
	if (family == AF_INET6) {
		struct sockaddr_in6 *a6 = (struct sockaddr_in6 *)ss;
		*a6 = (struct sockaddr_in6){ .sin6_family = AF_INET6, .sin6_addr = IN6ADDR_LOOPBACK_INIT };
		*name = "::1";
		return sizeof(*a6);
	}
	struct sockaddr_in *a4 = (struct sockaddr_in *)ss;
	*a4 = (struct sockaddr_in){ .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	*name = "127.0.0.1";
	return sizeof(*a4);
}

static unsigned addr_port(const struct sockaddr_storage *ss)
{
	return ntohs(ss->ss_family == AF_INET6 ? ((const struct sockaddr_in6 *)ss)->sin6_port
					      : ((const struct sockaddr_in *)ss)->sin_port);
}

static int apply(int fd, const struct sockopts *o)
{
	struct errbuf why;

	return o ? sockopts_apply(fd, o, &why) : 0;
}

/* Whether the accepted socket is the other end of ours: anyone on the host
 * may connect to the ephemeral port between listen() and our connect(). */
static int our_own(int cfd, int sfd)
{
	struct sockaddr_storage mine, theirs;
	socklen_t l1 = sizeof(mine), l2 = sizeof(theirs);

	if (getsockname(cfd, (struct sockaddr *)&mine, &l1) < 0 ||
	    getpeername(sfd, (struct sockaddr *)&theirs, &l2) < 0)
		return -1;
	if (addr_port(&mine) != addr_port(&theirs)) {
		errno = ECONNREFUSED;   /* someone else got in first */
		return -1;
	}
	return 0;
}

int loopback_pair(const char *who, int family, const struct sockopts *o, int *cfd, int *sfd,
		  struct errbuf *err)
{
	struct sockaddr_storage a;
	const char *host;
	socklen_t len = loopback_addr(family, &a, &host);
	int lfd = socket(a.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);

	*cfd = *sfd = -1;
	if (lfd < 0)
		return err_errno(err, "%s: creating a socket for its own server", who);
	if (apply(lfd, o) < 0 || bind(lfd, (struct sockaddr *)&a, len) < 0 ||
	    listen(lfd, 1) < 0 || getsockname(lfd, (struct sockaddr *)&a, &len) < 0) {
		err_errno(err, "%s: listening on %s for its own server", who, host);
		goto fail;
	}
	*cfd = socket(a.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (*cfd < 0 || apply(*cfd, o) < 0 || connect(*cfd, (struct sockaddr *)&a, len) < 0) {
		err_errno(err, "%s: connecting to its own server on %s port %u", who, host,
			  addr_port(&a));
		goto fail;
	}
	*sfd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
	if (*sfd < 0 || apply(*sfd, o) < 0 || our_own(*cfd, *sfd) < 0) {
		err_errno(err, "%s: accepting its own client on %s port %u", who, host, addr_port(&a));
		goto fail;
	}
	close(lfd);
	return 0;
fail:
	close(lfd);
	if (*cfd >= 0)
		close(*cfd);
	if (*sfd >= 0)
		close(*sfd);
	*cfd = *sfd = -1;
	return -1;
}
