/* The clock every timestamp of a run is read from: CLOCK_MONOTONIC
 * nanoseconds, either from clock_gettime() or, where the CPU's time-stamp
 * counter can be trusted, from the TSC converted with a calibration taken
 * once at start. Both give values comparable with CLOCK_MONOTONIC (the
 * driver compares a client's timestamps with its own), so code that reads
 * the clock need not know which one it got.
 *
 * The TSC is used when all of these hold (clock_init()):
 *   - an x86-64 build;
 *   - /proc/cpuinfo's flags have constant_tsc (the rate does not follow the
 *     CPU's frequency) and nonstop_tsc (it keeps counting in idle states);
 *   - the flags have tsc_reliable (the platform vouches that the CPUs' TSCs
 *     agree), or the kernel's clocksource is "tsc" (the kernel checked that
 *     itself and watches it; it switches clocksource when the TSC fails).
 * Elsewhere, and with TBENCH_CLOCK=clock_gettime in the environment, the
 * clock is clock_gettime(CLOCK_MONOTONIC). TBENCH_CLOCK=tsc uses the TSC on
 * any x86-64 machine whatever the flags say; TBENCH_CLOCK=auto (or unset)
 * applies the rule.
 *
 * The TSC is read with rdtsc, which the CPU may execute a little before or
 * after its neighbours (by at most its out-of-order window, tens of ns);
 * rdtscp or a fence would order it but costs as much as clock_gettime()
 * itself. Latencies are kept in buckets 1.6% wide, so only operations of
 * a few microseconds or less (the nop backend's) can see the difference.
 *
 * The state is written once, by clock_init() before any other thread or
 * process starts, and only read after that (forked clients inherit it). */
#ifndef TBENCH_CLOCK_H
#define TBENCH_CLOCK_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <time.h>

struct errbuf;

enum clock_source { CLOCK_SOURCE_GETTIME, CLOCK_SOURCE_TSC };

/* mono0 + (tsc - tsc0) * mult >> CLOCK_TSC_SHIFT, mult fixed at start. */
enum { CLOCK_TSC_SHIFT = 32 };
struct clock_state {
	_Atomic int source;          /* published last: the fields below are set */
	uint64_t tsc0, mono0, mult;
	double tsc_hz;
	char why[120];               /* what decided the source, for the report */
};
extern struct clock_state clock_state;

/* Chooses the source and calibrates the TSC (about 30 ms). Once per process,
 * before any thread or child that reads the clock starts; later calls only
 * return the first one's result. -1 with err: TBENCH_CLOCK holds a value
 * other than auto, tsc or clock_gettime. */
int clock_init(struct errbuf *err);

/* The TSC-derived time against CLOCK_MONOTONIC now, since the calibration. */
struct clock_check {
	enum clock_source source;
	const char *why;
	double error_ppm;            /* (TSC-derived - CLOCK_MONOTONIC) / elapsed; 0 with clock_gettime */
	double error_ns, elapsed_s;  /* the same, apart */
};
void clock_check(struct clock_check *out);

const char *clock_source_name(enum clock_source s);

static inline uint64_t clock_gettime_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

#if defined(__x86_64__)
/* A "memory" clobber: the compiler keeps the read where the code has it,
 * as it would a call to clock_gettime(). */
static inline uint64_t clock_read_tsc(void)
{
	uint32_t lo, hi;

	__asm__ __volatile__("rdtsc" : "=a"(lo), "=d"(hi) : : "memory");
	return (uint64_t)hi << 32 | lo;
}

__extension__ typedef unsigned __int128 clock_u128;

static inline uint64_t clock_tsc_to_ns(const struct clock_state *c, uint64_t tsc)
{
	/* 128 bits: no overflow however long the run. A CPU whose counter is a
	 * little behind the one calibrated on can read below tsc0. */
	if (tsc >= c->tsc0)
		return c->mono0 + (uint64_t)((clock_u128)(tsc - c->tsc0) * c->mult >> CLOCK_TSC_SHIFT);
	return c->mono0 - (uint64_t)((clock_u128)(c->tsc0 - tsc) * c->mult >> CLOCK_TSC_SHIFT);
}
#endif

/* CLOCK_MONOTONIC nanoseconds, from the source clock_init() chose: the
 * clock of every timestamp of a run. */
static inline uint64_t now_ns(void)
{
#if defined(__x86_64__)
	if (atomic_load_explicit(&clock_state.source, memory_order_acquire) == CLOCK_SOURCE_TSC)
		return clock_tsc_to_ns(&clock_state, clock_read_tsc());
#endif
	return clock_gettime_ns();
}

#endif
