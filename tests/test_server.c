/* Bad input to the server (src/server.c, the engine of tbench_srv):
 * oversized, truncated, zero-length, too-short and random frames, a reply
 * length over the limit, a thousand connections opened and dropped, too
 * many connections at once. Each bad connection must cost one log line
 * naming it, and a normal client must still be served afterwards. */
#include "config.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <unistd.h>

#include "server.h"
#include "testlib.h"
#include "wire.h"

static int log_fd;
static uint8_t buf[WIRE_LIMIT];

static struct server *start(bool fork, unsigned max, const char *unix_path)
{
	struct server_config cfg = {
		.port = "0", .unix_path = unix_path, .fork = fork, .max_connections = max,
		.log_prefix = "test_server", .log_fd = log_fd,
	};
	struct server *s;
	struct errbuf err;

	if (server_listen(&cfg, &s, &err) < 0 || server_start(s, &err) < 0) {
		fprintf(stderr, "starting the server: %s\n", err.msg);
		exit(1);
	}
	return s;
}

static int dial(const struct server *s, const char *unix_path)
{
	int fd = socket(unix_path ? AF_UNIX : AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	int rc;

	if (unix_path) {
		struct sockaddr_un sun = { .sun_family = AF_UNIX };
		snprintf(sun.sun_path, sizeof(sun.sun_path), "%s", unix_path);
		rc = connect(fd, (struct sockaddr *)&sun, sizeof(sun));
	} else {
		struct sockaddr_in sin = { .sin_family = AF_INET,
					   .sin_port = htons((uint16_t)server_port(s)) };
		sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
		rc = connect(fd, (struct sockaddr *)&sin, sizeof(sin));
	}
	if (fd < 0 || rc < 0) {
		perror("connecting to the test server");
		exit(1);
	}
	return fd;
}

/* The server must close a bad connection by itself, promptly. */
static bool closed_by_server(int fd)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };
	char c[256];

	for (;;) {
		if (poll(&p, 1, 3000) <= 0)
			return false;
		ssize_t n = read(fd, c, sizeof(c));
		if (n == 0 || (n < 0 && errno == ECONNRESET))
			return true;
		if (n < 0)
			return false;
	}
}

/* Send raw bytes (optionally half-closing after), expect the server to hang up. */
static void bad(const struct server *s, const char *path, const void *data, size_t len,
		bool half_close, const char *what)
{
	int fd = dial(s, path);

	CHECK(write_full(fd, data, len) == 0);
	if (half_close)
		shutdown(fd, SHUT_WR);
	if (!closed_by_server(fd))
		fprintf(stderr, "  %s: the server did not close the connection\n", what);
	CHECK(closed_by_server(fd));
	close(fd);
}

static void frame(uint8_t *p, uint32_t n, uint32_t r)
{
	put_be32(p, n);
	put_be32(p + 4, r);
}

static void normal_client(const struct server *s, const char *path)
{
	static const uint32_t sizes[][2] = { { 8, 8 }, { 47, 39 }, { 65595, 55 }, { 59, 65595 },
					     { WIRE_LIMIT - 1, WIRE_LIMIT - 1 } };
	struct errbuf err;
	int fd = dial(s, path);

	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		int rc = wire_exchange(fd, fd, buf, sizes[i][0], sizes[i][1], "test server", &err);
		if (rc < 0)
			fprintf(stderr, "  normal client: %s\n", err.msg);
		CHECK(rc == 0);
	}
	close(fd);
}

/* The log lines written since the last call. */
static char *new_log(void)
{
	static char text[1 << 16];
	static off_t seen;
	ssize_t n = pread(log_fd, text, sizeof(text) - 1, seen);

	n = n < 0 ? 0 : n;
	text[n] = '\0';
	seen += n;
	return text;
}

static unsigned count_lines(const char *t)
{
	unsigned n = 0;

	for (; *t; t++)
		n += *t == '\n';
	return n;
}

/* Exactly one new line, naming the connection, its peer and the reason. */
static void logged_one(const char *peer, const char *reason)
{
	const char *t = new_log();
	bool ok = count_lines(t) == 1 && strstr(t, "test_server: connection ") &&
		  strstr(t, peer) && strstr(t, reason);

	if (!ok)
		fprintf(stderr, "  wanted one line with '%s' and '%s', got:\n%s", peer, reason, t);
	CHECK(ok);
}

static void bad_frames(const struct server *s, const char *path, const char *peer)
{
	uint8_t b[64] = { 0 };

	frame(b, 100000, 4);
	bad(s, path, b, 8, false, "oversized");
	logged_one(peer, "frame of 100000 bytes is over the limit");

	frame(b, 100, 10);   /* 100 bytes promised, 20 sent, then the peer closes */
	bad(s, path, b, 28, true, "truncated");
	logged_one(peer, "peer closed mid-frame after 28 bytes");

	frame(b, 0, 0);      /* zero-length: no room for the reply length */
	bad(s, path, b, 4, false, "zero-length");
	logged_one(peer, "frame of 0 bytes is too short");

	frame(b, 3, 0);
	bad(s, path, b, 7, false, "too short");
	logged_one(peer, "frame of 3 bytes is too short");

	frame(b, 4, 100000);
	bad(s, path, b, 8, false, "reply over the limit");
	logged_one(peer, "reply of 100000 bytes asked for, over the limit");

	frame(b, 0xffffffff, 0xffffffff);
	bad(s, path, b, 8, false, "length 2^32-1");
	logged_one(peer, "over the limit");
}

/* Random bytes: with a fixed seed the first word is a huge length. */
static void random_bytes(const struct server *s, const char *path, const char *peer)
{
	uint8_t junk[4096];

	srand(7003);
	for (size_t i = 0; i < sizeof(junk); i++)
		junk[i] = (uint8_t)rand();
	junk[0] |= 0x80;
	bad(s, path, junk, sizeof(junk), false, "random bytes");
	logged_one(peer, "over the limit");
}

/* Clean closes between frames are no error: no log lines for them. */
static void thousand_drops(const struct server *s, const char *path)
{
	for (int i = 0; i < 1000; i++)
		close(dial(s, path));
	normal_client(s, path);   /* served after the thousand, so they were all accepted */
	const char *t = new_log();
	if (*t)
		fprintf(stderr, "  unexpected log after 1000 drops:\n%s", t);
	CHECK(*t == '\0');
}

static void max_connections(void)
{
	struct server *s = start(false, 2, NULL);
	struct errbuf err;
	int a = dial(s, NULL), b = dial(s, NULL);

	/* Both answered: both are being served before the third knocks. */
	CHECK(wire_exchange(a, a, buf, 8, 8, "a", &err) == 0);
	CHECK(wire_exchange(b, b, buf, 8, 8, "b", &err) == 0);
	int c = dial(s, NULL);
	CHECK(closed_by_server(c));
	logged_one("127.0.0.1:", "refused: already serving 2 connections (--max-connections 2)");
	CHECK(wire_exchange(b, b, buf, 47, 39, "b", &err) == 0);
	close(a);
	close(b);
	close(c);
	server_free(s);
	new_log();
}

/* Stopping closes live connections too, promptly. */
static void stop_with_clients(bool fork)
{
	struct server *s = start(fork, 0, NULL);
	struct errbuf err;
	int fd = dial(s, NULL);

	CHECK(wire_exchange(fd, fd, buf, 8, 8, "idle", &err) == 0);
	uint64_t t = now_ns();
	server_free(s);
	CHECK(now_ns() - t < 2000000000u);
	CHECK(closed_by_server(fd));
	close(fd);
	new_log();
}

static void listen_errors(void)
{
	struct server_config cfg = { .port = "0", .log_prefix = "t", .log_fd = log_fd };
	struct server *s, *t;
	struct errbuf err;
	char port[16];

	CHECK(server_listen(&cfg, &s, &err) == 0);
	snprintf(port, sizeof(port), "%u", server_port(s));
	cfg.port = port;
	CHECK(server_listen(&cfg, &t, &err) == -1);
	CHECK(strstr(err.msg, "in use") && strstr(err.msg, "--port"));
	server_free(s);
	cfg.port = "70000";
	CHECK(server_listen(&cfg, &t, &err) == SERVER_BAD_CONFIG);
	cfg.port = "0";
	cfg.listen = "not an address";
	CHECK(server_listen(&cfg, &t, &err) == SERVER_BAD_CONFIG);
	cfg.listen = "[::1]";
	if (server_listen(&cfg, &s, &err) == 0) {
		CHECK(strncmp(server_address(s), "[::1]:", 6) == 0);
		server_free(s);
	} else {
		fprintf(stderr, "  no IPv6 loopback here: %s\n", err.msg);
	}
}

static void unix_socket(const char *dir)
{
	char path[100], peer[160];
	struct errbuf err;
	struct server *s, *t;

	snprintf(path, sizeof(path), "%s/sock", dir);
	snprintf(peer, sizeof(peer), "unix socket %s", path);

	/* A socket file left behind by a dead server is taken over. */
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	snprintf(sun.sun_path, sizeof(sun.sun_path), "%s", path);
	int stale = socket(AF_UNIX, SOCK_STREAM, 0);
	CHECK(bind(stale, (struct sockaddr *)&sun, sizeof(sun)) == 0);
	close(stale);

	s = start(false, 0, path);
	bad_frames(s, path, peer);
	normal_client(s, path);

	struct server_config cfg = { .unix_path = path, .log_prefix = "t", .log_fd = log_fd };
	CHECK(server_listen(&cfg, &t, &err) == -1);
	CHECK(strstr(err.msg, "already listening") != NULL);
	server_free(s);
	CHECK(access(path, F_OK) < 0);   /* removed at the stop */

	FILE *f = fopen(path, "w");
	fclose(f);
	CHECK(server_listen(&cfg, &t, &err) == -1);
	CHECK(strstr(err.msg, "is not a socket") != NULL);
	unlink(path);
	new_log();
}

int main(void)
{
	char logname[] = "/tmp/test_server.XXXXXX", dir[] = "/tmp/test_server.d.XXXXXX";

	signal(SIGPIPE, SIG_IGN);
	log_fd = mkstemp(logname);
	if (log_fd < 0 || !mkdtemp(dir)) {
		perror("making temporary files");
		return 1;
	}
	unlink(logname);

	for (int fork = 0; fork < 2; fork++) {
		struct server *s = start(fork, 0, NULL);
		fprintf(stderr, "  %s per connection, on %s\n", fork ? "process" : "thread",
			server_address(s));
		normal_client(s, NULL);
		bad_frames(s, NULL, "127.0.0.1:");
		random_bytes(s, NULL, "127.0.0.1:");
		thousand_drops(s, NULL);
		normal_client(s, NULL);
		server_free(s);
		stop_with_clients(fork);
	}
	max_connections();
	listen_errors();
	unix_socket(dir);
	rmdir(dir);
	return test_done("test_server");
}
