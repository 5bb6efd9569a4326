/* Every backend, in the order `tbench -b help` lists them. Adding a
 * backend: one file in backends/ and one line here. */
#include "config.h"

#include <stddef.h>
#include <stdio.h>
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

void backend_no_settings(struct json_object *into, const void *settings)
{
	(void)into;
	(void)settings;
}

const struct backend *backend_find(const char *name)
{
	for (size_t i = 0; backends[i]; i++)
		if (strcmp(backends[i]->name, name) == 0)
			return backends[i];
	return NULL;
}

/* The capabilities as `tbench -b list` names them, in its order. */
static const struct {
	unsigned flag;
	const char *name;
} capabilities[] = {
	{ BACKEND_TAKES_SERVER, "server" },
	{ BACKEND_OWN_SERVER, "own-server" },
	{ BACKEND_TCP, "tcp" },
	{ BACKEND_RECONNECTS, "reconnect" },
	{ BACKEND_FAMILY, "family" },
	{ BACKEND_OFFLOADS, "offloads" },
	{ BACKEND_SOCKOPTS, "sockopts" },
	{ BACKEND_WIRE, "wire" },
	{ BACKEND_MULTIPATH, "multipath" },
	{ BACKEND_SWEPT, "default" },
	{ BACKEND_COPY_REPLIES, "copy-replies" },
	{ BACKEND_YARDSTICK, "yardstick" },
};

/* `tbench -b list`: a line per backend, its name, a space and its
 * capabilities with commas between ("-" when none), for scripts to read. */
void backend_print_list(FILE *f)
{
	for (size_t i = 0; backends[i]; i++) {
		const char *sep = " ";

		fputs(backends[i]->name, f);
		for (size_t c = 0; c < sizeof(capabilities) / sizeof(capabilities[0]); c++) {
			if (!(backends[i]->flags & capabilities[c].flag))
				continue;
			fprintf(f, "%s%s", sep, capabilities[c].name);
			sep = ",";
		}
		fputs(*sep == ' ' ? " -\n" : "\n", f);
	}
}

/* The names of the backends with every flag of `flags`, ", " between,
 * for help texts that must not name backends themselves. */
const char *backend_names_with(unsigned flags, char *buf, size_t size)
{
	size_t used = 0;

	buf[0] = '\0';
	for (size_t i = 0; backends[i] && used < size; i++)
		if ((backends[i]->flags & flags) == flags)
			used += (size_t)snprintf(buf + used, size - used, "%s%s", used ? ", " : "",
						 backends[i]->name);
	return buf;
}

/* One of a backend's own options, set as the command line would. */
int backend_option_set(const struct backend *be, const char *flag, const char *text,
		       struct errbuf *err)
{
	for (const struct backend_option *o = be->options; o && o->flag; o++)
		if (strcmp(o->flag, flag) == 0)
			return o->parse(be->settings, text, err);
	return err_set(err, "--%s: backend %s has no such option", flag, be->name);
}
