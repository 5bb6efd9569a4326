/* Bad input to the server (src/server.c, the engine of tbench_srv):
 * oversized, truncated, zero-length, too-short and random frames, a reply
 * length over the limit, a thousand connections opened and dropped, too
 * many connections at once. Each bad connection must cost one log line
 * naming it, and a normal client must still be served afterwards.
 *
 * Hostile peers: half a frame, bytes trickled one at a time (dropped
 * after the timeout, a normal client served meanwhile and after), and
 * quiet ones between frames (kept);
 * a thousand bad peers against the log's rate limit. Listening on every
 * address by default; a background server in a process of its own dies
 * with its caller, removing its socket. */
#include "config.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <unistd.h>

#include "clock.h"
#include "server.h"
#include "testlib.h"
#include "wire.h"

static int log_fd;
static uint8_t buf[WIRE_LIMIT];

static struct server *start_cfg(struct server_config *cfg)
{
	struct server *s;
	struct errbuf err;

	cfg->log_prefix = "test_server";
	cfg->log_fd = log_fd;
	if (server_listen(cfg, &s, &err) < 0 || server_start(s, &err) < 0) {
		fprintf(stderr, "starting the server: %s\n", err.msg);
		exit(1);
	}
	return s;
}

static struct server *start(bool processes, unsigned max, const char *unix_path)
{
	struct server_config cfg = {
		.listen = "127.0.0.1", .port = "0", .unix_path = unix_path,
		.processes = processes, .max_clients = max,
	};

	return start_cfg(&cfg);
}

/* A connected socket to `host` (an IPv4 or IPv6 address) port `port`; -1 if refused. */
static int dial_ip(const char *host, unsigned port)
{
	struct sockaddr_in6 a6 = { .sin6_family = AF_INET6, .sin6_port = htons((uint16_t)port) };
	struct sockaddr_in a4 = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port) };
	bool v6 = strchr(host, ':') != NULL;
	int fd = socket(v6 ? AF_INET6 : AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	if (fd < 0 || (v6 ? inet_pton(AF_INET6, host, &a6.sin6_addr)
			  : inet_pton(AF_INET, host, &a4.sin_addr)) != 1) {
		perror("a socket for the test server");
		exit(1);
	}
	if (connect(fd, v6 ? (struct sockaddr *)&a6 : (struct sockaddr *)&a4,
		    v6 ? sizeof(a6) : sizeof(a4)) < 0) {
		close(fd);
		return -1;
	}
	return fd;
}

static int dial(const struct server *s, const char *unix_path)
{
	int fd;

	if (unix_path) {
		struct sockaddr_un sun = { .sun_family = AF_UNIX };
		snprintf(sun.sun_path, sizeof(sun.sun_path), "%s", unix_path);
		fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
		if (fd >= 0 && connect(fd, (struct sockaddr *)&sun, sizeof(sun)) < 0) {
			close(fd);
			fd = -1;
		}
	} else {
		fd = dial_ip("127.0.0.1", server_port(s));
	}
	if (fd < 0) {
		perror("connecting to the test server");
		exit(1);
	}
	return fd;
}

/* The server closed the connection within `secs` (of silence from it). */
static bool closed_within(int fd, int secs)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };
	char c[256];

	for (;;) {
		if (poll(&p, 1, secs * 1000) <= 0)
			return false;
		ssize_t n = read(fd, c, sizeof(c));
		if (n == 0 || (n < 0 && errno == ECONNRESET))
			return true;
		if (n < 0)
			return false;
	}
}

/* A bad connection is closed promptly; 10 s allows for a loaded machine
 * forking sanitized processes, and a server that never closes it still fails. */
static bool closed_by_server(int fd)
{
	return closed_within(fd, 10);
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

static void max_clients(bool processes)
{
	struct server *s = start(processes, 2, NULL);
	struct errbuf err;
	int a = dial(s, NULL), b = dial(s, NULL);

	/* Both answered: both are being served before the third knocks. */
	CHECK(wire_exchange(a, a, buf, 8, 8, "a", &err) == 0);
	CHECK(wire_exchange(b, b, buf, 8, 8, "b", &err) == 0);
	int c = dial(s, NULL);
	CHECK(closed_by_server(c));
	logged_one("127.0.0.1:", "refused: already serving 2 connections (--max-clients 2)");
	CHECK(wire_exchange(b, b, buf, 47, 39, "b", &err) == 0);
	close(a);
	close(b);
	close(c);
	server_free(s);
	new_log();
}

/* Stopping closes live connections too, promptly. */
static void stop_with_clients(bool processes)
{
	struct server *s = start(processes, 0, NULL);
	struct errbuf err;
	int fd = dial(s, NULL);

	CHECK(wire_exchange(fd, fd, buf, 8, 8, "idle", &err) == 0);
	uint64_t t = now_ns();
	server_free(s);
	CHECK(now_ns() - t < 4000000000u);   /* a hang takes far longer; 4 s allows for load */
	CHECK(closed_by_server(fd));
	close(fd);
	new_log();
}

static void listen_errors(void)
{
	struct server_config cfg = { .listen = "127.0.0.1", .port = "0", .log_prefix = "t",
				     .log_fd = log_fd };
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

/* ---- hostile peers -------------------------------------------------------- */

/* One byte every 200 ms: a frame that would take 20 s to arrive. */
static bool trickle_dropped(int fd)
{
	static const uint8_t header[] = { 0, 0, 0, 64 };
	struct pollfd p = { .fd = fd, .events = POLLIN };

	for (int i = 0; i < 100; i++) {
		if (send(fd, &header[i % 4], 1, MSG_NOSIGNAL) < 0)
			return true;   /* already closed (and reset) by the server */
		if (poll(&p, 1, 200) > 0)
			return closed_within(fd, 1);
	}
	return false;
}

/* Peers that stall inside a frame (half a frame) or trickle are dropped
 * after the timeout; peers quiet between whole frames (before the first,
 * or after one) are kept, however long, and served when they go on; a
 * normal client is served meanwhile and after. 3 s, so that a normal
 * client starved on a loaded machine is not dropped too. */
static void slow_peers(bool processes)
{
	struct server_config cfg = {
		.listen = "127.0.0.1", .port = "0", .processes = processes, .timeout_secs = 3,
	};
	struct server *s = start_cfg(&cfg);
	struct errbuf err;
	uint8_t half[14] = { 0 };
	int idle = dial(s, NULL), quiet = dial(s, NULL), partial = dial(s, NULL);

	CHECK(wire_exchange(quiet, quiet, buf, 8, 8, "quiet peer", &err) == 0);
	frame(half, 100, 4);
	CHECK(write_full(partial, half, sizeof(half)) == 0);
	normal_client(s, NULL);          /* while the others hold a connection */
	/* Bounds of several timeouts: the drop must come, load may delay it. */
	CHECK(closed_within(partial, 15));
	int slow = dial(s, NULL);
	CHECK(trickle_dropped(slow));
	normal_client(s, NULL);
	/* Quiet for two timeouts and more by now (the half frame's and the
	 * trickle's): still served. */
	int rc = wire_exchange(idle, idle, buf, 47, 39, "idle peer", &err);
	if (rc < 0)
		fprintf(stderr, "  slow peers (%s): the peer idle since it connected: %s\n",
			processes ? "processes" : "threads", err.msg);
	CHECK(rc == 0);
	rc = wire_exchange(quiet, quiet, buf, 59, 65595, "quiet peer", &err);
	if (rc < 0)
		fprintf(stderr, "  slow peers (%s): the peer quiet after a frame: %s\n",
			processes ? "processes" : "threads", err.msg);
	CHECK(rc == 0);
	server_free(s);
	const char *t = new_log();
	const char *second = strstr(t, "too slow: ");
	bool ok = count_lines(t) == 2 && strstr(t, "too slow: 14 bytes of a frame") && second &&
		  strstr(second + 1, "too slow: ") && strstr(t, "; closed it");
	if (!ok)
		fprintf(stderr, "  slow peers (%s): wanted 2 lines (too slow x2), got:\n%s",
			processes ? "processes" : "threads", t);
	CHECK(ok);
	close(idle);
	close(quiet);
	close(partial);
	close(slow);
}

/* "K more log lines suppressed": the sum of K over the text. */
static unsigned suppressed_in(const char *t, unsigned *summaries)
{
	unsigned sum = 0, k;

	*summaries = 0;
	for (const char *p = t; (p = strstr(p, "test_server: ")); p++)
		if (sscanf(p, "test_server: %u more log lines suppressed", &k) == 1) {
			sum += k;
			(*summaries)++;
		}
	return sum;
}

static unsigned count_matches(const char *t, const char *what)
{
	unsigned n = 0;

	for (const char *p = t; (p = strstr(p, what)); p++)
		n++;
	return n;
}

/* Peers with oversized frames: each is a line, or is counted in a
 * summary; never more than the limit a second. A thousand of them against
 * threads; fewer against processes, where each costs a fork, enough to
 * cross several seconds with the counters shared between processes. */
static void log_rate_limit(bool processes)
{
	struct server *s = start(processes, 0, NULL);
	unsigned peers = processes ? 300 : 1000, summaries;
	uint8_t b[8];

	frame(b, 100000, 4);
	uint64_t t0 = now_ns();
	for (unsigned i = 0; i < peers; i++) {
		int fd = dial(s, NULL);
		CHECK(write_full(fd, b, sizeof(b)) == 0);
		CHECK(closed_by_server(fd));
		close(fd);
	}
	normal_client(s, NULL);
	server_free(s);   /* says what it suppressed last */
	double secs = (now_ns() - t0) / 1e9;
	const char *t = new_log();
	unsigned printed = count_matches(t, "over the limit of");
	unsigned suppressed = suppressed_in(t, &summaries);
	fprintf(stderr, "  %u bad peers (%s) in %.1f s: %u lines, %u suppressed in %u summaries\n",
		peers, processes ? "processes" : "threads", secs, printed, suppressed, summaries);
	CHECK_EQ_U(printed + suppressed, peers);
	/* The run touched at most whole seconds + 2 of the limiter's seconds:
	 * more peers than that many seconds admit must have been suppressed. A
	 * slow machine may send fewer; then no suppression without a summary. */
	unsigned admitted = SERVER_LOG_LINES_PER_SEC * ((unsigned)secs + 2);
	CHECK(printed <= admitted);
	if (peers > admitted) {
		CHECK(suppressed > 0);
		CHECK(summaries >= 1);
	} else {
		CHECK((suppressed > 0) == (summaries > 0));
		fprintf(stderr, "  too few peers a second to exercise the limit (%u in %.1f s)\n",
			peers, secs);
	}
	CHECK_EQ_U(count_lines(t), printed + summaries);
}

/* With no --listen: every address, IPv4 and (where the host has it) IPv6. */
static void every_address(void)
{
	struct server_config cfg = { .port = "0" };
	struct server *s = start_cfg(&cfg);
	struct errbuf err;
	const char *addr = server_address(s);

	CHECK(server_on_every_address(s));
	bool v6 = strncmp(addr, "[::]:", 5) == 0;
	CHECK(v6 || strncmp(addr, "0.0.0.0:", 8) == 0);
	fprintf(stderr, "  every address: %s\n", addr);
	int fd = dial_ip("127.0.0.1", server_port(s));
	CHECK(fd >= 0 && wire_exchange(fd, fd, buf, 47, 39, "127.0.0.1", &err) == 0);
	close(fd);
	if (v6) {
		fd = dial_ip("::1", server_port(s));
		CHECK(fd >= 0 && wire_exchange(fd, fd, buf, 47, 39, "::1", &err) == 0);
		close(fd);
	} else {
		fprintf(stderr, "  no IPv6 here: ::1 not tried\n");
	}
	server_free(s);
	CHECK(*new_log() == '\0');
}

/* A process that started a server with processes is killed with SIGKILL:
 * its server process must end too, removing its socket and directory. */
static void dies_with_parent(const char *top)
{
	char dir[200], path[220];
	int ready[2];
	struct stat st;

	snprintf(dir, sizeof(dir), "%s/private", top);
	snprintf(path, sizeof(path), "%s/sock", dir);
	CHECK(mkdir(dir, 0700) == 0 && pipe(ready) == 0);
	pid_t pid = fork();
	if (pid == 0) {
		struct server_config cfg = { .unix_path = path, .private_dir = dir,
					     .processes = true };
		start_cfg(&cfg);
		if (write(ready[1], "x", 1) != 1)
			_exit(1);
		for (;;)
			pause();
	}
	char c;
	CHECK(pid > 0 && read(ready[0], &c, 1) == 1);
	CHECK(stat(path, &st) == 0);
	close(dial(NULL, path));
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	/* The server process needs a moment to notice; 10 s allows for load. */
	for (int i = 0; i < 200 && stat(dir, &st) == 0; i++)
		sleep_ns(50000000);
	CHECK(stat(path, &st) < 0 && errno == ENOENT);
	CHECK(stat(dir, &st) < 0 && errno == ENOENT);
	if (stat(dir, &st) == 0) {
		unlink(path);
		rmdir(dir);
	}
	close(ready[0]);
	close(ready[1]);
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

	for (int processes = 0; processes < 2; processes++) {
		struct server *s = start(processes, 0, NULL);
		fprintf(stderr, "  %s per connection, on %s\n", processes ? "process" : "thread",
			server_address(s));
		normal_client(s, NULL);
		bad_frames(s, NULL, "127.0.0.1:");
		random_bytes(s, NULL, "127.0.0.1:");
		thousand_drops(s, NULL);
		normal_client(s, NULL);
		server_free(s);
		stop_with_clients(processes);
	}
	max_clients(false);
	max_clients(true);
	listen_errors();
	unix_socket(dir);
	for (int processes = 0; processes < 2; processes++) {
		slow_peers(processes);
		log_rate_limit(processes);
	}
	every_address();
	dies_with_parent(dir);
	rmdir(dir);
	return test_done("test_server");
}
