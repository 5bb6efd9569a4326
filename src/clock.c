/* Choosing the clock and calibrating the TSC against CLOCK_MONOTONIC. */
#include "config.h"
#include "clock.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"

struct clock_state clock_state;

static bool initialised;
static int init_result;
static struct errbuf init_error;   /* the first call's failure, for the later ones */

const char *clock_source_name(enum clock_source s)
{
	return s == CLOCK_SOURCE_TSC ? "tsc" : "clock_gettime";
}

static enum clock_source current_source(void)
{
	return (enum clock_source)atomic_load_explicit(&clock_state.source, memory_order_acquire);
}

#if defined(__x86_64__)

/* Is `word` one of the space-separated words of `list`? */
static bool has_word(const char *list, const char *word)
{
	size_t n = strlen(word);

	for (const char *p = list; (p = strstr(p, word)); p += n)
		if ((p == list || p[-1] == ' ' || p[-1] == '\t') &&
		    (p[n] == ' ' || p[n] == '\t' || p[n] == '\n' || p[n] == 0))
			return true;
	return false;
}

/* The first line of `path` that starts with `key` (or the first line, key
 * NULL), into buf; false if there is none or the file cannot be read. */
static bool read_line(const char *path, const char *key, char *buf, size_t len)
{
	FILE *f = fopen(path, "r");
	bool found = false;

	if (!f)
		return false;
	while (!found && fgets(buf, (int)len, f))
		found = !key || strncmp(buf, key, strlen(key)) == 0;
	fclose(f);
	buf[strcspn(buf, "\n")] = 0;
	return found;
}

/* The rule of clock.h, with the reason in clock_state.why. */
static bool tsc_trusted(void)
{
	static char flags[8192];
	char clocksource[64] = "";
	char *why = clock_state.why;
	size_t len = sizeof(clock_state.why);

	if (!read_line("/proc/cpuinfo", "flags", flags, sizeof(flags))) {
		snprintf(why, len, "no flags line in /proc/cpuinfo");
		return false;
	}
	static const char *const needed[] = { "constant_tsc", "nonstop_tsc" };
	for (size_t i = 0; i < sizeof(needed) / sizeof(needed[0]); i++)
		if (!has_word(flags, needed[i])) {
			snprintf(why, len, "no %s in /proc/cpuinfo's flags", needed[i]);
			return false;
		}
	read_line("/sys/devices/system/clocksource/clocksource0/current_clocksource", NULL,
		  clocksource, sizeof(clocksource));
	if (has_word(flags, "tsc_reliable")) {
		snprintf(why, len, "constant_tsc, nonstop_tsc, tsc_reliable");
		return true;
	}
	if (strcmp(clocksource, "tsc") == 0) {
		snprintf(why, len, "constant_tsc, nonstop_tsc, clocksource tsc");
		return true;
	}
	snprintf(why, len, "constant_tsc, nonstop_tsc, but no tsc_reliable and clocksource %.24s",
		 clocksource[0] ? clocksource : "unknown");
	return false;
}

/* One (TSC, CLOCK_MONOTONIC) pair: the TSC read on both sides of
 * clock_gettime(), the midpoint kept, from the try with the narrowest
 * bracket (a try the scheduler interrupted is wide). */
static void read_pair(uint64_t *tsc, uint64_t *mono)
{
	uint64_t best = UINT64_MAX;

	for (int i = 0; i < 64; i++) {
		uint64_t before = clock_read_tsc();
		uint64_t m = clock_gettime_ns();
		uint64_t after = clock_read_tsc();
		if (after >= before && after - before < best) {
			best = after - before;
			*tsc = before + (after - before) / 2;
			*mono = m;
		}
	}
}

enum { CALIBRATION_NS = 30000000 };

/* Two pairs CALIBRATION_NS apart give the rate; the second is the origin. */
static bool calibrate(void)
{
	uint64_t tsc1 = 0, mono1 = 0, tsc2 = 0, mono2 = 0;

	read_pair(&tsc1, &mono1);
	sleep_ns(CALIBRATION_NS);
	read_pair(&tsc2, &mono2);
	double ticks = (double)(tsc2 - tsc1), ns = (double)(mono2 - mono1);
	/* 10 MHz to 100 GHz: anything else is a counter that did not count. */
	if (tsc2 <= tsc1 || mono2 <= mono1 || ticks / ns < 0.01 || ticks / ns > 100) {
		snprintf(clock_state.why, sizeof(clock_state.why),
			 "TSC calibration failed (%.0f ticks in %.0f ns)", ticks, ns);
		return false;
	}
	clock_state.tsc0 = tsc2;
	clock_state.mono0 = mono2;
	clock_state.mult = (uint64_t)(((clock_u128)(mono2 - mono1) << CLOCK_TSC_SHIFT) /
				      (tsc2 - tsc1));
	clock_state.tsc_hz = ticks / ns * 1e9;
	return true;
}

#endif

/* NULL, "auto", "tsc" or "clock_gettime" into a source to try; -1 otherwise. */
static int wanted_source(const char *env, bool *forced)
{
	*forced = env && strcmp(env, "auto") != 0 && env[0];
	if (!*forced)
		return CLOCK_SOURCE_TSC;
	if (strcmp(env, "tsc") == 0)
		return CLOCK_SOURCE_TSC;
	if (strcmp(env, "clock_gettime") == 0)
		return CLOCK_SOURCE_GETTIME;
	return -1;
}

static int choose(struct errbuf *err)
{
	const char *env = getenv("TBENCH_CLOCK");
	bool forced;
	int want = wanted_source(env, &forced);

	if (want < 0)
		return err_set(err, "environment TBENCH_CLOCK=%s: expected auto, tsc or "
			       "clock_gettime (or leave it unset)", env);
	if (want == CLOCK_SOURCE_GETTIME) {
		snprintf(clock_state.why, sizeof(clock_state.why), "TBENCH_CLOCK=clock_gettime");
		return 0;
	}
#if defined(__x86_64__)
	if (forced)
		snprintf(clock_state.why, sizeof(clock_state.why), "TBENCH_CLOCK=tsc");
	/* calibrate() says why when it fails. */
	if ((forced || tsc_trusted()) && calibrate())
		atomic_store_explicit(&clock_state.source, CLOCK_SOURCE_TSC, memory_order_release);
#else
	snprintf(clock_state.why, sizeof(clock_state.why), "no TSC: not an x86-64 build");
#endif
	return 0;
}

int clock_init(struct errbuf *err)
{
	if (!initialised) {
		initialised = true;
		init_result = choose(err);
		if (init_result < 0)
			init_error = *err;
		return init_result;
	}
	if (init_result < 0)
		*err = init_error;
	return init_result;
}

void clock_check(struct clock_check *out)
{
	*out = (struct clock_check){ .source = current_source(), .why = clock_state.why };
#if defined(__x86_64__)
	if (out->source != CLOCK_SOURCE_TSC)
		return;
	uint64_t tsc, mono;
	read_pair(&tsc, &mono);
	out->error_ns = (double)(int64_t)(clock_tsc_to_ns(&clock_state, tsc) - mono);
	out->elapsed_s = (double)(mono - clock_state.mono0) / 1e9;
	if (out->elapsed_s > 0)
		out->error_ppm = out->error_ns / (out->elapsed_s * 1e3);
#endif
}
