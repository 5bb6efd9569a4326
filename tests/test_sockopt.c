/* -T's socket options: the parser (flags, sizes, TCP_CONGESTION's name),
 * applying them to real sockets, a congestion control the kernel does not
 * have refused with the available ones named, and the read-back --json
 * records. */
#include "config.h"

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "backend.h"
#include "sockopt.h"
#include "testlib.h"

static void test_parse(void)
{
	struct sockopts o;
	struct errbuf err = { "" };

	CHECK(sockopts_parse_tcp("TCP_NODELAY,SO_SNDBUF=65536 TCP_CONGESTION=cubic", &o, &err) == 0);
	CHECK_EQ_U(o.n, 3);
	CHECK(o.v[1].value == 65536 && o.v[1].text[0] == '\0');
	CHECK(o.v[2].opt == TCP_CONGESTION && strcmp(o.v[2].text, "cubic") == 0);
	const char *bad[] = { "TCP_CONGESTION", "TCP_CONGESTION=", "TCP_CONGESTION=a/b",
			      "TCP_CONGESTION=sixteen_chars_xx", "TCP_NODELAY=2", "SO_SNDBUF",
			      "SO_NOSUCH", "SO_RCVBUF=-1" };
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		int rc = sockopts_parse_tcp(bad[i], &o, &err);
		CHECK(rc < 0);
		if (rc == 0)
			fprintf(stderr, "accepted: '%s'\n", bad[i]);
	}
	CHECK(sockopts_parse_tcp("TCP_CONGESTION=no/such", &o, &err) < 0);
	CHECK(strstr(err.msg, "congestion control") != NULL);
	CHECK(sockopts_parse_unix("TCP_CONGESTION=cubic", &o, &err) < 0);
	CHECK(sockopts_parse_unix("SO_SNDBUF=4096", &o, &err) == 0);
}

/* Whether this kernel has the congestion control, by its own list. */
static bool kernel_has(const char *name)
{
	char list[300];

	snprintf(list, sizeof(list), " %s ", sockopts_available_cc());
	char want[40];
	snprintf(want, sizeof(want), " %s ", name);
	return strstr(list, want) != NULL;
}

static void test_apply_and_read_back(void)
{
	struct sockopts o;
	struct socket_readback rb;
	struct errbuf err = { "" };
	const char *cc = kernel_has("reno") ? "reno" : "cubic";
	char spec[64];

	snprintf(spec, sizeof(spec), "TCP_NODELAY,SO_SNDBUF=32768,TCP_CONGESTION=%s", cc);
	CHECK(sockopts_parse_tcp(spec, &o, &err) == 0);
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	CHECK(fd >= 0);
	CHECK(sockopts_apply(fd, &o, &err) == 0);
	sockopt_read_back(fd, &rb);
	CHECK(rb.known && rb.family == AF_INET && rb.nodelay == 1);
	CHECK(strcmp(rb.cc, cc) == 0);
	CHECK(rb.sndbuf == 2 * 32768);   /* Linux doubles what it is given */
	CHECK(rb.rcvbuf > 0);
	close(fd);

	CHECK(sockopts_parse_tcp("TCP_CONGESTION=nosuchcc", &o, &err) == 0);
	CHECK(sockopts_probe(AF_INET, 0, &o, &err) < 0);
	CHECK(strstr(err.msg, "nosuchcc") && strstr(err.msg, sockopts_available_cc()));

	int sv[2];
	CHECK(socketpair(AF_UNIX, SOCK_STREAM, 0, sv) == 0);
	sockopt_read_back(sv[0], &rb);
	CHECK(rb.known && rb.family == AF_UNIX && rb.nodelay == -1 && rb.cc[0] == '\0');
	close(sv[0]);
	close(sv[1]);
	sockopt_read_back(-1, &rb);
	CHECK(!rb.known);
}

int main(void)
{
	test_parse();
	test_apply_and_read_back();
	return test_done("test_sockopt");
}
