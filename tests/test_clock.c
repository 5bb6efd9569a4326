/* The run's clock: each way of choosing it (TBENCH_CLOCK unset, tsc,
 * clock_gettime, a bad value), each in a child of its own since the choice
 * is made once per process. Every source must never go back and must agree
 * with CLOCK_MONOTONIC. */
#include "config.h"

#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "clock.h"
#include "testlib.h"
#include "util.h"

/* Bounds for a loaded, shared machine, far above what a sound clock shows
 * (a few ppm, a few µs): a preempted reader can see a pair of readings
 * milliseconds apart, and NTP may slew CLOCK_MONOTONIC by up to 500 ppm. */
#define AGREE_PPM 1000.0
#define AGREE_SLACK_NS 2000000ull
#define SPAN_NS 200000000ull

/* Reads in a tight loop for a while, and for a number of reads too, since a
 * preempted thread may get none of the while: no value below the one before. */
#define MIN_READS 100000u
static void check_monotonic(void)
{
	uint64_t prev = now_ns(), backwards = 0, reads = 0;
	uint64_t end = prev + 50000000u;

	for (uint64_t t = prev; t < end || reads < MIN_READS; prev = t, reads++) {
		t = now_ns();
		backwards += t < prev;
	}
	CHECK_EQ_U(backwards, 0);
}

/* Two threads (on two CPUs when the scheduler allows) pass the latest
 * reading back and forth: one read after seeing the other's must not be
 * earlier, give or take CROSS_SLACK_NS. The slack: rdtsc is not ordered with
 * the load before it, and the run's figures only need CPUs to agree to far
 * better than the driver's 100 ms polls. */
#define CROSS_SLACK_NS 100000ull
static _Atomic uint64_t latest, cross_behind, cross_reads;

/* Until the end and a number of reads between them, as for check_monotonic(). */
static void *pass_readings(void *arg)
{
	uint64_t end = *(const uint64_t *)arg;

	for (;;) {
		uint64_t seen = atomic_load(&latest), t = now_ns();
		if (t + CROSS_SLACK_NS < seen)
			atomic_fetch_add(&cross_behind, 1);
		if (t > seen)
			atomic_compare_exchange_strong(&latest, &seen, t);
		uint64_t reads = atomic_fetch_add(&cross_reads, 1) + 1;
		if (t >= end && reads >= MIN_READS)
			return NULL;
	}
}

static void check_across_threads(void)
{
	pthread_t th;
	uint64_t end = now_ns() + 50000000u;

	atomic_store(&latest, now_ns());
	int rc = pthread_create(&th, NULL, pass_readings, &end);
	CHECK(rc == 0);
	pass_readings(&end);
	if (rc == 0)
		pthread_join(th, NULL);
	CHECK_EQ_U(atomic_load(&cross_behind), 0);
}

/* now_ns() read between two CLOCK_MONOTONIC readings falls between them,
 * give or take the drift the bound allows since the calibration, at the
 * start and SPAN_NS later (clock_check() then checks the rate). */
static void check_agrees(void)
{
	for (int i = 0; i < 2; i++) {
		if (i)
			sleep_ns(SPAN_NS);
		uint64_t before = clock_gettime_ns(), t = now_ns(), after = clock_gettime_ns();
		uint64_t since = before > clock_state.mono0 ? before - clock_state.mono0 : 0;
		uint64_t slack = AGREE_SLACK_NS + (uint64_t)(AGREE_PPM * 1e-6 * (double)since);
		CHECK(t + slack >= before);
		CHECK(t <= after + slack);
		if (t + slack < before || t > after + slack)
			fprintf(stderr, "now_ns() %llu, CLOCK_MONOTONIC %llu..%llu\n",
				(unsigned long long)t, (unsigned long long)before,
				(unsigned long long)after);
	}
}

static void check_source(enum clock_source want)
{
	struct clock_check c;

	clock_check(&c);
	CHECK_EQ_U(c.source, want);
	CHECK(c.why && c.why[0]);
	fprintf(stderr, "  source %s (%s)", clock_source_name(c.source), c.why);
	if (c.source == CLOCK_SOURCE_TSC) {
		fprintf(stderr, ", %.3f MHz, %+.0f ns off CLOCK_MONOTONIC after %.3f s",
			clock_state.tsc_hz / 1e6, c.error_ns, c.elapsed_s);
		if (c.elapsed_s >= 0.1)
			fprintf(stderr, " (%+.3f ppm)", c.error_ppm);
		/* Just after the calibration, a ppm of a few µs is no figure: the
		 * time itself is checked; after the span, the rate. */
		CHECK(fabs(c.error_ns) < AGREE_SLACK_NS + AGREE_PPM * 1e3 * c.elapsed_s);
		CHECK(c.elapsed_s < 0.1 || fabs(c.error_ppm) < AGREE_PPM);
		CHECK(c.elapsed_s > 0);
	} else {
		CHECK(c.error_ppm == 0 && c.elapsed_s == 0);
	}
	fputc('\n', stderr);
}

/* Before clock_init() and with clock_gettime, now_ns() is clock_gettime(). */
static void check_is_clock_gettime(void)
{
	uint64_t before = clock_gettime_ns(), t = now_ns(), after = clock_gettime_ns();

	CHECK(before <= t && t <= after);
}

/* A child's exit status: 1 on a failed check, else PASSED + the source. */
enum { PASSED = 10, ANY_SOURCE = -1 };

static int child(const char *env, int want)
{
	struct errbuf err;

	if (env)
		setenv("TBENCH_CLOCK", env, 1);
	else
		unsetenv("TBENCH_CLOCK");
	check_is_clock_gettime();
	if (env && strcmp(env, "bogus") == 0) {
		CHECK(clock_init(&err) < 0);
		CHECK(strstr(err.msg, "TBENCH_CLOCK=bogus") != NULL);
		CHECK(clock_init(&err) < 0);   /* and the same answer again */
		CHECK(strstr(err.msg, "TBENCH_CLOCK=bogus") != NULL);
		return test_failures ? 1 : PASSED;
	}
	CHECK(clock_init(&err) == 0);
	uint64_t tsc0 = clock_state.tsc0;
	CHECK(clock_init(&err) == 0);   /* once: a second call changes nothing */
	CHECK_EQ_U(clock_state.tsc0, tsc0);
	enum clock_source source = (enum clock_source)clock_state.source;
	if (want != ANY_SOURCE)
		CHECK_EQ_U(source, want);
	check_source(source);
	if (source == CLOCK_SOURCE_GETTIME)
		check_is_clock_gettime();
	check_monotonic();
	check_across_threads();
	check_agrees();
	check_source(source);
	fprintf(stderr, "  %d checks, %d failed\n", test_checks, test_failures);
	return test_failures ? 1 : PASSED + (int)source;
}

/* The source the child used, or -1 when a check failed. */
static int run_child(const char *env, int want)
{
	fprintf(stderr, "TBENCH_CLOCK=%s:\n", env ? env : "(unset)");
	fflush(stderr);
	pid_t pid = fork();
	if (pid < 0) {
		perror("fork");
		exit(1);
	}
	if (pid == 0)
		_exit(child(env, want));
	int status;
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	bool passed = WIFEXITED(status) && WEXITSTATUS(status) >= PASSED;
	CHECK(passed);
	return passed ? WEXITSTATUS(status) - PASSED : -1;
}

int main(void)
{
	run_child("clock_gettime", CLOCK_SOURCE_GETTIME);
	run_child("bogus", ANY_SOURCE);
	/* Unset and auto: whichever the rule picks here, the same both ways. */
	int chosen = run_child(NULL, ANY_SOURCE);
	if (chosen >= 0)
		run_child("auto", chosen);
	/* Forced, where the rule trusts the TSC too: on a machine whose kernel
	 * does not, the TSC may well disagree between CPUs, as it was told. */
	if (chosen == CLOCK_SOURCE_TSC)
		run_child("tsc", CLOCK_SOURCE_TSC);
	else
		fprintf(stderr, "TBENCH_CLOCK=tsc: not checked, the rule does not trust the TSC here\n");
	return test_done("test_clock");
}
