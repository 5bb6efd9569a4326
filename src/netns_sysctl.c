/* tbench --sysctl: net.* sysctls of the run's own network namespace, set
 * and read back through /proc/sys. A process sees there the sysctls of the
 * network namespace it is in when it opens the file, so once the run has
 * entered its own, the host's are out of reach: the kernel shows a
 * host-wide net.* setting in the host's namespace alone, or read-only. */
#include "config.h"
#include "netns.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#define SYSCTL_ROOT "/proc/sys/"
#define NET_PREFIX "net."

/* Letters, digits, '_' and '-' between single dots: no path of another
 * kind can be made of it. */
static bool name_ok(const char *name)
{
	for (const char *p = name; *p; p++) {
		bool dot = *p == '.';
		if (dot ? p[1] == '.' || p[1] == '\0' : !(isalnum((unsigned char)*p) || *p == '_' || *p == '-'))
			return false;
	}
	return true;
}

static bool value_ok(const char *value)
{
	for (const char *p = value; *p; p++)
		if (!isprint((unsigned char)*p) && *p != '\t')
			return false;
	return *value != '\0';
}

int netns_sysctl_add(struct netns_options *o, char *text, struct errbuf *err)
{
	char *eq = strchr(text, '=');

	if (!eq)
		return err_set(err, "--sysctl %.60s: expected NAME=VALUE, e.g. "
			       "net.ipv4.tcp_autocorking=0", text);
	*eq = '\0';
	if (strncmp(text, NET_PREFIX, strlen(NET_PREFIX)) != 0)
		return err_set(err, "--sysctl %.60s: only net.* sysctls, which are set in the run's "
			       "own network namespace; tbench never changes the host's", text);
	if (!name_ok(text) || strlen(text) >= NETNS_SYSCTL_NAME)
		return err_set(err, "--sysctl %.60s: a sysctl's name is words of letters, digits, "
			       "'_' and '-' between dots, under %d characters", text, NETNS_SYSCTL_NAME);
	if (!value_ok(eq + 1) || strlen(eq + 1) >= NETNS_SYSCTL_VALUE)
		return err_set(err, "--sysctl %.60s: the value must be printable, 1 to %d characters",
			       text, NETNS_SYSCTL_VALUE - 1);
	for (unsigned i = 0; i < o->nsysctl; i++)
		if (strcmp(o->sysctl[i].name, text) == 0)
			return err_set(err, "--sysctl %.60s: given twice; give it once", text);
	if (o->nsysctl == NETNS_MAX_SYSCTLS)
		return err_set(err, "--sysctl: at most %d of them", NETNS_MAX_SYSCTLS);
	o->sysctl[o->nsysctl++] = (struct netns_sysctl){ text, eq + 1 };
	return 0;
}

/* Runs of blanks as one space, none at the ends: the kernel reads a
 * vector ("4096 131072 6291456") back tab-separated, with a newline. */
static void squeeze_blanks(const char *in, char *out, size_t len)
{
	size_t n = 0;

	for (const char *p = in; *p && n + 1 < len; p++) {
		if (!isspace((unsigned char)*p))
			out[n++] = *p;
		else if (n && !isspace((unsigned char)p[1]) && p[1])
			out[n++] = ' ';
	}
	out[n] = '\0';
}

static int sysctl_open(const char *name, const char *path, int flags, struct errbuf *err)
{
	int fd = open(path, flags | O_CLOEXEC);

	if (fd >= 0)
		return fd;
	if (errno == ENOENT)
		return err_set(err, "--sysctl %s: no such sysctl in the run's network namespace (%s): "
			       "the kernel lacks it, or it is host-wide and only the host's namespace "
			       "has it; only per-namespace net.* sysctls can be set", name, path);
	if (errno == EACCES || errno == EPERM)
		return err_errno(err, "--sysctl %s: %s cannot be written in the run's namespace (a "
				 "read-only or host-wide setting)", name, path);
	return err_errno(err, "--sysctl %s: opening %s", name, path);
}

static int sysctl_write(const char *name, const char *path, const char *value, struct errbuf *err)
{
	int fd = sysctl_open(name, path, O_WRONLY, err);

	if (fd < 0)
		return -1;
	ssize_t n = write(fd, value, strlen(value));
	int saved = errno;
	close(fd);
	errno = saved;
	if (n < 0)
		return err_errno(err, "--sysctl %s=%s: writing %s%s", name, value, path,
				 errno == EINVAL ? " (the kernel refuses that value)" : "");
	if ((size_t)n != strlen(value))
		return err_set(err, "--sysctl %s=%s: %s took %zd of %zu bytes", name, value, path, n,
			       strlen(value));
	return 0;
}

static int sysctl_read(const char *name, const char *path, char *out, size_t len,
		       struct errbuf *err)
{
	char raw[NETNS_SYSCTL_VALUE * 2];
	int fd = sysctl_open(name, path, O_RDONLY, err);

	if (fd < 0)
		return -1;
	ssize_t n = read(fd, raw, sizeof(raw) - 1);
	int saved = errno;
	close(fd);
	errno = saved;
	if (n < 0)
		return err_errno(err, "--sysctl %s: reading it back from %s", name, path);
	raw[n] = '\0';
	squeeze_blanks(raw, out, len);
	return 0;
}

/* Each written, then read back: a value the kernel clamped or rounded
 * fails the run, as an offload that would not change does. */
int netns_sysctls_set(const struct netns_options *o, struct netns_state *st, struct errbuf *err)
{
	char path[sizeof(SYSCTL_ROOT) + NETNS_SYSCTL_NAME];

	for (unsigned i = 0; i < o->nsysctl; i++) {
		const struct netns_sysctl *want = &o->sysctl[i];
		struct netns_sysctl_state *got = &st->sysctl[i];

		snprintf(path, sizeof(path), SYSCTL_ROOT "%s", want->name);
		for (char *p = path + strlen(SYSCTL_ROOT); *p; p++)
			*p = *p == '.' ? '/' : *p;
		snprintf(got->name, sizeof(got->name), "%s", want->name);
		squeeze_blanks(want->value, got->asked, sizeof(got->asked));
		if (sysctl_write(want->name, path, want->value, err) < 0 ||
		    sysctl_read(want->name, path, got->read, sizeof(got->read), err) < 0)
			return -1;
		st->nsysctl = i + 1;
		if (strcmp(got->read, got->asked) != 0)
			return err_set(err, "--sysctl %s=%s reads back as '%s' in the run's namespace: "
				       "the kernel kept another value (out of its range?); ask for one "
				       "it keeps", want->name, want->value, got->read);
	}
	return 0;
}
