/* The CPU-list parser of --cpus and --server-cpus: what it accepts, what
 * it refuses with a message naming the flag, the k-th pick, the check
 * against the allowed CPUs, and pinning the calling thread for real. */
#include "config.h"

#include <sched.h>
#include <string.h>

#include "cpulist.h"
#include "testlib.h"

static void check_parses(const char *text, unsigned n, const unsigned *want)
{
	struct cpu_list l;
	struct errbuf err;

	CHECK(cpu_list_parse("--cpus", text, &l, &err) == 0);
	CHECK_EQ_U(l.n, n);
	for (unsigned i = 0; i < n && i < l.n; i++)
		CHECK_EQ_U(l.cpu[i], want[i]);
	CHECK(strcmp(l.text, text) == 0);
}

static void check_refused(const char *text)
{
	struct cpu_list l;
	struct errbuf err = { "" };

	int rc = cpu_list_parse("--server-cpus", text, &l, &err);

	CHECK(rc < 0);
	CHECK(strstr(err.msg, "--server-cpus") != NULL);
	if (rc == 0)
		fprintf(stderr, "accepted: '%s'\n", text);
}

static void test_syntax(void)
{
	check_parses("0", 1, (const unsigned[]){ 0 });
	check_parses("0,1", 2, (const unsigned[]){ 0, 1 });
	check_parses("0-3", 4, (const unsigned[]){ 0, 1, 2, 3 });
	check_parses("5,0-2,7", 5, (const unsigned[]){ 5, 0, 1, 2, 7 });
	check_parses("1,1", 2, (const unsigned[]){ 1, 1 });
	check_parses("1023", 1, (const unsigned[]){ 1023 });
	const char *bad[] = { "", ",", "0,", ",0", "1-", "-1", "3-1", "a", "0x1", "1 ", " 1",
			      "1024", "0-1024", "1;2", "+1", "1--2", "99999999999999999999" };
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		check_refused(bad[i]);
}

static void test_pick(void)
{
	struct cpu_list l;
	struct errbuf err;

	CHECK(cpu_list_pick(NULL, 3) == -1);
	CHECK(cpu_list_parse("--cpus", "4,6-7", &l, &err) == 0);
	CHECK(cpu_list_pick(&l, 0) == 4);
	CHECK(cpu_list_pick(&l, 2) == 7);
	CHECK(cpu_list_pick(&l, 3) == 4);
	CHECK(cpu_list_pick(&l, 7) == 6);
}

/* The first allowed CPU pins; one past the allowed set is refused, with
 * the allowed CPUs in the message. */
static void test_allowed_and_pin(void)
{
	cpu_set_t set, now;
	struct cpu_list l;
	struct errbuf err = { "" };
	char text[16], allowed[256];
	int first = -1, missing = -1;

	CHECK(sched_getaffinity(0, sizeof(set), &set) == 0);
	for (int c = 0; c < CPU_LIST_MAX; c++) {
		if (CPU_ISSET(c, &set) && first < 0)
			first = c;
		if (!CPU_ISSET(c, &set) && missing < 0)
			missing = c;
	}
	CHECK(first >= 0);
	snprintf(text, sizeof(text), "%d", first);
	CHECK(cpu_list_parse("--cpus", text, &l, &err) == 0);
	CHECK(cpu_list_check_allowed("--cpus", &l, &err) == 0);
	CHECK(cpu_list_pin(&l, 5, 0, "client 5", &err) == 0);
	CHECK(sched_getaffinity(0, sizeof(now), &now) == 0);
	CHECK(CPU_COUNT(&now) == 1 && CPU_ISSET(first, &now));
	CHECK(sched_setaffinity(0, sizeof(set), &set) == 0);   /* back as it was */
	CHECK(cpu_list_pin(NULL, 0, 0, "client 0", &err) == 0);

	snprintf(text, sizeof(text), "%d", missing);
	CHECK(cpu_list_parse("--cpus", text, &l, &err) == 0);
	CHECK(cpu_list_check_allowed("--cpus", &l, &err) < 0);
	CHECK(strstr(err.msg, "--cpus") && strstr(err.msg, cpu_allowed_text(allowed, sizeof(allowed))));
}

int main(void)
{
	test_syntax();
	test_pick();
	test_allowed_and_pin();
	return test_done("test_cpulist");
}
