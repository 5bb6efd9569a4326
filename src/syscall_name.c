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
	{ SYS_vmsplice, "vmsplice" }, { SYS_futex, "futex" },
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

/* The calls of each group but the last (other), by the C library's numbers:
 * the ones a backend moves its bytes or waits with. */
static const struct {
	long nr;
	enum syscall_group group;
} grouped[] = {
	{ SYS_sendto, SYSCALL_GROUP_SEND_RECV }, { SYS_recvfrom, SYSCALL_GROUP_SEND_RECV },
	{ SYS_sendmsg, SYSCALL_GROUP_SEND_RECV }, { SYS_recvmsg, SYSCALL_GROUP_SEND_RECV },
	{ SYS_sendmmsg, SYSCALL_GROUP_SEND_RECV }, { SYS_recvmmsg, SYSCALL_GROUP_SEND_RECV },
	{ SYS_read, SYSCALL_GROUP_READ_WRITE }, { SYS_write, SYSCALL_GROUP_READ_WRITE },
	{ SYS_readv, SYSCALL_GROUP_READ_WRITE }, { SYS_writev, SYSCALL_GROUP_READ_WRITE },
	{ SYS_pread64, SYSCALL_GROUP_READ_WRITE }, { SYS_pwrite64, SYSCALL_GROUP_READ_WRITE },
	{ SYS_splice, SYSCALL_GROUP_SPLICE }, { SYS_vmsplice, SYSCALL_GROUP_SPLICE },
	{ SYS_tee, SYSCALL_GROUP_SPLICE },
	{ SYS_futex, SYSCALL_GROUP_FUTEX },
#ifdef SYS_futex_waitv
	{ SYS_futex_waitv, SYSCALL_GROUP_FUTEX },
#endif
	{ SYS_io_uring_enter, SYSCALL_GROUP_IO_URING_ENTER },
};

enum syscall_group syscall_group(unsigned nr)
{
	for (size_t i = 0; i < sizeof(grouped) / sizeof(grouped[0]); i++)
		if (grouped[i].nr == (long)nr)
			return grouped[i].group;
	return SYSCALL_GROUP_OTHER;
}

const char *syscall_group_key(unsigned group)
{
	static const char *const keys[] = {
#define SYSCALL_GROUP_KEY(a, b, c, id, key, label) key,
		TRACE_SYSCALL_GROUPS(SYSCALL_GROUP_KEY, _, _, _)
#undef SYSCALL_GROUP_KEY
	};
	return group < SYSCALL_GROUPS ? keys[group] : NULL;
}
