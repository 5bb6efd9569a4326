/* --trace in a build without libbpf: every entry says how to get one. */
#include "config.h"
#include "trace.h"

#include <string.h>

#define WITHOUT "--trace: built without libbpf: install libbpf-dev bpftool clang and re-run configure"

int trace_check_privilege(struct errbuf *err)
{
	return err_set(err, WITHOUT);
}

int trace_open(struct trace *t, bool syscalls, struct errbuf *err)
{
	(void)syscalls;
	memset(t, 0, sizeof(*t));
	return err_set(err, WITHOUT);
}

int trace_track(struct trace *t, const pid_t *client_tids, unsigned n, pid_t driver_tid,
		struct errbuf *err)
{
	(void)t, (void)client_tids, (void)n, (void)driver_tid;
	return err_set(err, WITHOUT);
}

void trace_on(struct trace *t)
{
	(void)t;
}

void trace_off(struct trace *t)
{
	(void)t;
}

int trace_collect(struct trace *t, struct trace_result *r, struct errbuf *err)
{
	(void)t, (void)err;
	memset(r, 0, sizeof(*r));
	return 0;
}

void trace_close(struct trace *t)
{
	(void)t;
}
