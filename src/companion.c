#include "config.h"
#include "companion.h"

#include <errno.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

static void *companion_thread(void *p)
{
	struct companion *cp = p;

	cp->serve(cp->arg);
	return NULL;
}

int companion_start(struct companion *cp, bool as_process, const char *name, struct errbuf *err)
{
	if (!as_process) {
		int rc = pthread_create(&cp->thread, NULL, companion_thread, cp);
		if (rc) {
			errno = rc;
			return err_errno(err, "starting %s thread (raise ulimit -u?)", name);
		}
		cp->running = true;
		return 0;
	}
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
