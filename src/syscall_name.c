#include "config.h"
#include "syscall_name.h"

#include <stdio.h>
#include <sys/syscall.h>

struct syscall_entry {
	long nr;
	const char *name;
};

/* The calls the backends, the clients and the servers make, and a few a
 * process makes around them: named from the C library's numbers. */
static const struct syscall_entry known[] = {
	{ SYS_read, "read" }, { SYS_write, "write" }, { SYS_readv, "readv" },
	{ SYS_writev, "writev" }, { SYS_sendto, "sendto" }, { SYS_recvfrom, "recvfrom" },
	{ SYS_sendmsg, "sendmsg" }, { SYS_recvmsg, "recvmsg" }, { SYS_splice, "splice" },
	{ SYS_vmsplice, "vmsplice" }, { SYS_futex, "futex" }, { SYS_poll, "poll" },
	{ SYS_ppoll, "ppoll" }, { SYS_pselect6, "pselect6" }, { SYS_epoll_pwait, "epoll_pwait" },
	{ SYS_io_uring_enter, "io_uring_enter" }, { SYS_nanosleep, "nanosleep" },
	{ SYS_clock_nanosleep, "clock_nanosleep" }, { SYS_clock_gettime, "clock_gettime" },
	{ SYS_sched_yield, "sched_yield" }, { SYS_getrusage, "getrusage" },
	{ SYS_accept4, "accept4" }, { SYS_connect, "connect" },
	{ SYS_socket, "socket" }, { SYS_close, "close" }, { SYS_shutdown, "shutdown" },
	{ SYS_setsockopt, "setsockopt" }, { SYS_getsockopt, "getsockopt" },
	{ SYS_openat, "openat" }, { SYS_mmap, "mmap" }, { SYS_munmap, "munmap" },
	{ SYS_exit, "exit" }, { SYS_exit_group, "exit_group" }, { SYS_wait4, "wait4" },
	{ SYS_kill, "kill" }, { SYS_tgkill, "tgkill" }, { SYS_rt_sigreturn, "rt_sigreturn" },
	{ SYS_gettid, "gettid" }, { SYS_getpid, "getpid" }, { SYS_prctl, "prctl" },
	{ SYS_sched_setaffinity, "sched_setaffinity" },
#ifdef __x86_64__   /* the older calls newer architectures do not have */
	{ SYS_poll, "poll" }, { SYS_select, "select" }, { SYS_epoll_wait, "epoll_wait" },
	{ SYS_accept, "accept" },
#endif
};

const char *syscall_name(unsigned nr, char *buf, size_t size)
{
	for (size_t i = 0; i < sizeof(known) / sizeof(known[0]); i++)
		if (known[i].nr == (long)nr)
			return known[i].name;
	snprintf(buf, size, "syscall %u", nr);
	return buf;
}
