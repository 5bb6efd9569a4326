#include "config.h"
#include "cpulist.h"

#include <ctype.h>
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* One CPU number at *p: digits only, below CPU_LIST_MAX. */
static int parse_cpu(const char **p, unsigned *out)
{
	unsigned long v = 0;
	const char *s = *p;

	if (!isdigit((unsigned char)*s))
		return -1;
	for (; isdigit((unsigned char)*s); s++) {
		v = v * 10 + (unsigned long)(*s - '0');
		if (v >= CPU_LIST_MAX)
			return -1;
	}
	*p = s;
	*out = (unsigned)v;
	return 0;
}

static int add_range(struct cpu_list *l, unsigned lo, unsigned hi)
{
	for (unsigned c = lo; c <= hi; c++) {
		if (l->n == CPU_LIST_MAX)
			return -1;
		l->cpu[l->n++] = (unsigned short)c;
	}
	return 0;
}

int cpu_list_parse(const char *flag, const char *s, struct cpu_list *out, struct errbuf *err)
{
	const char *p = s;

	memset(out, 0, sizeof(*out));
	if (strlen(s) >= sizeof(out->text))
		return err_set(err, "%s '%.40s...': too long (at most %zu characters)", flag, s,
			       sizeof(out->text) - 1);
	snprintf(out->text, sizeof(out->text), "%s", s);
	for (;;) {
		unsigned lo, hi;
		if (parse_cpu(&p, &lo) < 0)
			break;
		hi = lo;
		if (*p == '-' && (p++, parse_cpu(&p, &hi) < 0 || hi < lo))
			break;
		if (add_range(out, lo, hi) < 0)
			return err_set(err, "%s %s: more than %d CPUs", flag, s, CPU_LIST_MAX);
		if (*p == '\0')
			return 0;
		if (*p++ != ',')
			break;
	}
	char allowed[256];
	return err_set(err, "%s '%s': not a CPU list: give CPU numbers and ranges, comma-separated, "
		       "e.g. 0 or 0,1 or 0-3 (allowed here: %s)", flag, s,
		       cpu_allowed_text(allowed, sizeof(allowed)));
}

/* "0-3,6" from a set. */
static const char *format_set(const cpu_set_t *set, char *buf, size_t size)
{
	size_t used = 0;

	buf[0] = '\0';
	for (int c = 0; c < CPU_SETSIZE; c++) {
		if (!CPU_ISSET(c, set) || (c > 0 && CPU_ISSET(c - 1, set)))
			continue;
		int last = c;
		while (last + 1 < CPU_SETSIZE && CPU_ISSET(last + 1, set))
			last++;
		int n = last > c ? snprintf(buf + used, size - used, "%s%d-%d", used ? "," : "", c, last)
				 : snprintf(buf + used, size - used, "%s%d", used ? "," : "", c);
		if (n < 0 || (size_t)n >= size - used)
			break;
		used += (size_t)n;
	}
	return buf;
}

const char *cpu_allowed_text(char *buf, size_t size)
{
	cpu_set_t set;

	if (sched_getaffinity(0, sizeof(set), &set) < 0) {
		snprintf(buf, size, "unknown (sched_getaffinity: %s)", strerror(errno));
		return buf;
	}
	return format_set(&set, buf, size);
}

int cpu_list_check_allowed(const char *flag, const struct cpu_list *l, struct errbuf *err)
{
	cpu_set_t set;
	char allowed[256];

	if (sched_getaffinity(0, sizeof(set), &set) < 0)
		return err_errno(err, "%s: reading the CPUs this process may use (sched_getaffinity)",
				 flag);
	for (unsigned i = 0; i < l->n; i++)
		if (!CPU_ISSET(l->cpu[i], &set))
			return err_set(err, "%s %s: CPU %u is not one this process may use (allowed: %s)",
				       flag, l->text, l->cpu[i], format_set(&set, allowed, sizeof(allowed)));
	return 0;
}

int cpu_list_pick(const struct cpu_list *l, unsigned k)
{
	return l && l->n ? l->cpu[k % l->n] : -1;
}

int cpu_list_pin(const struct cpu_list *l, unsigned k, pid_t task, const char *who,
		 struct errbuf *err)
{
	int cpu = cpu_list_pick(l, k);
	cpu_set_t set;

	if (cpu < 0)
		return 0;
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	/* A task is one thread, in the kernel's terms: the others keep theirs. */
	if (sched_setaffinity(task, sizeof(set), &set) < 0)
		return err_errno(err, "pinning %s to CPU %d (%s)", who, cpu, l->text);
	return 0;
}
