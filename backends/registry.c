/* Every backend, in the order `tbench -b help` lists them. Adding a
 * backend: one file in backends/ and one line here. */
#include "config.h"

#include <stddef.h>
#include <string.h>

#include "registry.h"

extern const struct backend backend_tcp;
extern const struct backend backend_tcp_zc;
extern const struct backend backend_mptcp;
extern const struct backend backend_unix;
extern const struct backend backend_nop;
extern const struct backend backend_pipe;
extern const struct backend backend_socketpair;
extern const struct backend backend_splice;
extern const struct backend backend_shm;
#ifdef HAVE_LIBURING
extern const struct backend backend_uring;
#endif

const struct backend *const backends[] = {
	&backend_tcp,        /* first: the default */
	&backend_tcp_zc,
	&backend_mptcp,
	&backend_unix,
	&backend_pipe,
	&backend_socketpair,
	&backend_splice,
	&backend_shm,
#ifdef HAVE_LIBURING
	&backend_uring,
#endif
	&backend_nop,
	NULL
};

const struct backend *backend_find(const char *name)
{
	for (size_t i = 0; backends[i]; i++)
		if (strcmp(backends[i]->name, name) == 0)
			return backends[i];
	return NULL;
}
