/* System call names by number, for reports: the common ones of this
 * architecture (x86_64), "syscall N" for the others. */
#ifndef TBENCH_SYSCALL_NAME_H
#define TBENCH_SYSCALL_NAME_H

#include <stddef.h>

/* The name, or "syscall NR" written into buf. */
const char *syscall_name(unsigned nr, char *buf, size_t size);

#endif
