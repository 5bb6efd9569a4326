/* A dozen lines of test harness: CHECK() reports the failing expression with
 * its file and line and counts it; test_done() is the exit status automake
 * reads (0 pass, 1 fail). */
#ifndef TBENCH_TESTLIB_H
#define TBENCH_TESTLIB_H

#include <stdio.h>

static int test_failures, test_checks;

#define CHECK(cond) do { \
	test_checks++; \
	if (!(cond)) { \
		test_failures++; \
		fprintf(stderr, "%s:%d: FAILED: %s\n", __FILE__, __LINE__, #cond); \
	} \
} while (0)

#define CHECK_EQ_U(a, b) do { \
	unsigned long long a_ = (a), b_ = (b); \
	test_checks++; \
	if (a_ != b_) { \
		test_failures++; \
		fprintf(stderr, "%s:%d: FAILED: %s == %s (%llu != %llu)\n", \
			__FILE__, __LINE__, #a, #b, a_, b_); \
	} \
} while (0)

/* |a - b| <= tol; needs <math.h>. */
#define CHECK_NEAR(a, b, tol) do { \
	double a_ = (a), b_ = (b); \
	test_checks++; \
	if (!(fabs(a_ - b_) <= (tol))) { \
		test_failures++; \
		fprintf(stderr, "%s:%d: FAILED: %s = %.9g, want %.9g (+-%g)\n", \
			__FILE__, __LINE__, #a, a_, b_, (double)(tol)); \
	} \
} while (0)

/* Two strings equal; needs <string.h>. */
#define CHECK_STR(a, b) do { \
	const char *a_ = (a), *b_ = (b); \
	test_checks++; \
	if (!a_ || !b_ || strcmp(a_, b_) != 0) { \
		test_failures++; \
		fprintf(stderr, "%s:%d: FAILED: %s is '%s', want '%s'\n", \
			__FILE__, __LINE__, #a, a_ ? a_ : "(null)", b_ ? b_ : "(null)"); \
	} \
} while (0)

static inline int test_done(const char *name)
{
	printf("%s: %d checks, %d failed\n", name, test_checks, test_failures);
	return test_failures ? 1 : 0;
}

#endif
