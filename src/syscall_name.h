/* System call names by number, for reports: the common ones of this
 * architecture (x86_64), "syscall N" for the others. */
#ifndef TBENCH_SYSCALL_NAME_H
#define TBENCH_SYSCALL_NAME_H

#include <stddef.h>

#include "schema.h"

/* The name, or "syscall NR" written into buf. */
const char *syscall_name(unsigned nr, char *buf, size_t size);

/* The groups of schema.h's TRACE_SYSCALL_GROUPS, in its order. */
enum syscall_group {
#define SYSCALL_GROUP_ENUM(a, b, c, id, key, label) SYSCALL_GROUP_##id,
	TRACE_SYSCALL_GROUPS(SYSCALL_GROUP_ENUM, _, _, _)
#undef SYSCALL_GROUP_ENUM
	SYSCALL_GROUPS
};

/* The group of system call nr: SYSCALL_GROUP_OTHER for any not listed. */
enum syscall_group syscall_group(unsigned nr);
/* A group's key in --json (schema.h), or NULL past the last. */
const char *syscall_group_key(unsigned group);

#endif
