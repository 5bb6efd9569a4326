#include "config.h"
#include "companion.h"

#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

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
