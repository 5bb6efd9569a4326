/* End-to-end runs of the driver with the tcp and unix backends, each with
 * the server it starts for itself: threads and processes, 1 and 4
 * clients. The counted bytes must be exactly clients x one pass of the
 * loadfile, as for the pipe backend in test_driver.
 *
 * Also: with processes a client process holds no listening socket and no
 * socket but its own; tcp's reply bodies are discarded by the kernel
 * (MSG_TRUNC) unless copy_replies; a SERVER that does not resolve is bad
 * input, caught by check(). */
#include "config.h"

#include <dirent.h>
#include <netdb.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "driver.h"
#include "server.h"
#include "testlib.h"
#include "registry.h"
#include "wire.h"

static struct loadfile lf;

static struct run_config config(const char *backend, unsigned n, bool processes)
{
	struct run_config cfg = {
		.lf = &lf, .backend = backend_find(backend), .run_once = true,
	};
	cfg.bcfg.nclients = n;
	cfg.bcfg.processes = processes;
	return cfg;
}

static void check_run(struct run_config *cfg, const char *what)
{
	struct run_result res;
	struct errbuf err;
	unsigned n = cfg->bcfg.nclients;

	if (cfg->backend->check && cfg->backend->check(&cfg->bcfg, &err) < 0) {
		fprintf(stderr, "  %s: check: %s\n", what, err.msg);
		CHECK(0);
		return;
	}
	CHECK(driver_run(cfg, NULL, &res) == RUN_OK);
	if (res.status != RUN_OK)
		fprintf(stderr, "  %s: %s\n", what, res.error.msg);
	CHECK_EQ_U(res.bytes, n * lf.pass_payload);
	for (unsigned i = 0; res.clients && i < n; i++) {
		CHECK_EQ_U(res.clients[i].passes, 1);
		CHECK_EQ_U(res.clients[i].bytes, lf.pass_payload);
	}
	run_result_free(&res);
}

static void run_once(const char *backend, unsigned n, bool processes, const char *opts)
{
	struct run_config cfg = config(backend, n, processes);
	char what[128];

	cfg.bcfg.tcp_options = opts;
	snprintf(what, sizeof(what), "%s %u %s%s%s", backend, n, processes ? "procs" : "threads",
		 opts ? " -T " : "", opts ? opts : "");
	check_run(&cfg, what);
}

/* SERVER given: the backend connects to a server someone else runs. */
static void run_external(const char *listen, const char *unix_path)
{
	struct server_config sc = { .listen = listen, .port = "0", .unix_path = unix_path,
				    .log_prefix = "test_net", .log_fd = 2 };
	struct server *s;
	struct errbuf err;
	char port[16];

	if (server_listen(&sc, &s, &err) < 0 || server_start(s, &err) < 0) {
		fprintf(stderr, "  no server on %s: %s (skipped)\n", listen ? listen : unix_path,
			err.msg);
		server_free(s);
		return;
	}
	struct run_config cfg = config(unix_path ? "unix" : "tcp", 4, false);
	snprintf(port, sizeof(port), "%u", server_port(s));
	cfg.bcfg.server = listen;
	cfg.bcfg.port = port;
	CHECK(!unix_path || backend_option_set(backend_find("unix"), "unix", unix_path, &err) == 0);
	check_run(&cfg, listen ? listen : unix_path);
	server_free(s);
}

/* ---- descriptors of a client process ------------------------------------ */

/* Sockets among this process's descriptors, and how many of them listen. */
static void count_sockets(unsigned *sockets, unsigned *listening)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;

	*sockets = *listening = 0;
	if (!d)
		return;
	while ((e = readdir(d))) {
		int fd = atoi(e->d_name), on = 0;
		socklen_t len = sizeof(on);
		struct stat st;
		if (fd <= 2 || fd == dirfd(d) || fstat(fd, &st) < 0 || !S_ISSOCK(st.st_mode))
			continue;
		(*sockets)++;
		if (getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &on, &len) == 0 && on)
			(*listening)++;
	}
	closedir(d);
}

/* Wraps tcp or unix: open() runs in the client, and says what it holds. */
static const struct backend *inner;

static int fdcheck_start(const struct backend_config *cfg, void **run, struct errbuf *err)
{
	return inner->start(cfg, run, err);
}

static int fdcheck_open(void *run, const struct backend_config *cfg, unsigned client,
			void **conn, struct errbuf *err)
{
	unsigned sockets, listening;

	if (inner->open(run, cfg, client, conn, err) < 0)
		return -1;
	count_sockets(&sockets, &listening);
	/* Threads share the process with the backend's own listening server. */
	if (cfg->processes ? sockets != 1 || listening != 0 : listening != 1) {
		inner->close(*conn);
		return err_set(err, "fdcheck: a client %s holds %u sockets, %u listening",
			       cfg->processes ? "process" : "thread", sockets, listening);
	}
	return 0;
}

static int fdcheck_exchange(void *conn, uint32_t send, uint32_t recv, struct errbuf *err)
{
	return inner->exchange(conn, send, recv, err);
}

static void fdcheck_close(void *conn)
{
	inner->close(conn);
}

static void fdcheck_stop(void *run)
{
	inner->stop(run);
}

static const struct backend fdcheck = {
	.name = "fdcheck", .summary = "tcp or unix, checking the client's descriptors",
	.start = fdcheck_start, .open = fdcheck_open, .exchange = fdcheck_exchange,
	.close = fdcheck_close, .stop = fdcheck_stop,
};

static void descriptors(const char *name, bool processes)
{
	struct run_config cfg = config(name, 4, processes);
	char what[64];

	inner = backend_find(name);
	cfg.backend = &fdcheck;
	snprintf(what, sizeof(what), "%s %s: a client's descriptors", name,
		 processes ? "procs" : "threads");
	check_run(&cfg, what);
}

/* ---- reply bodies: discarded by the kernel, or copied -------------------- */

/* One exchange with a 1,000-byte reply through the backend's own server:
 * was the body copied into the client's buffer? (The server sends zeros.) */
static bool body_copied(const char *name, bool copy_replies)
{
	const struct backend *be = backend_find(name);
	struct backend_config bc = { .nclients = 1, .copy_replies = copy_replies };
	struct errbuf err;
	void *run = NULL, *conn = NULL;
	bool copied = false;

	if (be->start(&bc, &run, &err) < 0 || be->open(run, &bc, 0, &conn, &err) < 0) {
		fprintf(stderr, "  %s: %s\n", name, err.msg);
		CHECK(0);
	} else {
		struct wire_stream *ws = conn;
		memset(ws->buf, 0xaa, 1000);
		CHECK(be->exchange(conn, 47, 1000, &err) == 0);
		copied = ws->buf[4] == 0 && ws->buf[999] == 0;
		CHECK(ws->buf[4] == (copied ? 0 : 0xaa));   /* all copied, or none */
		be->close(conn);
	}
	if (run)
		be->stop(run);
	return copied;
}

static void reply_bodies(void)
{
	CHECK(!body_copied("tcp", false));   /* dbench's MSG_TRUNC */
	CHECK(body_copied("tcp", true));     /* --copy-replies */
	CHECK(body_copied("unix", false));   /* AF_UNIX copies whatever we ask */
}

/* Bad settings are caught by check(), before any run. */
static void bad_settings(void)
{
	const struct backend *tcp = backend_find("tcp"), *unx = backend_find("unix");
	struct backend_config bc = { .nclients = 1, .tcp_options = "TCP_NODELAY,BOGUS" };
	struct errbuf err;

	CHECK(tcp->check(&bc, &err) < 0 && strstr(err.msg, "BOGUS"));
	bc.tcp_options = "SO_SNDBUF";
	CHECK(tcp->check(&bc, &err) < 0 && strstr(err.msg, "needs a value"));
	bc.tcp_options = "TCP_NODELAY";
	CHECK(unx->check(&bc, &err) < 0 && strstr(err.msg, "TCP sockets only"));
	bc.tcp_options = "SO_SNDBUF=65536 SO_RCVBUF=65536";
	CHECK(unx->check(&bc, &err) == 0);
	CHECK(tcp->check(&bc, &err) == 0);
	bc.server = "localhost";
	bc.port = "0";
	CHECK(tcp->check(&bc, &err) < 0 && strstr(err.msg, "--port 0"));

	/* A name that does not resolve is bad input; a resolver that does not
	 * answer (no DNS here) is not, and is left to the run. */
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM }, *ai;
	bc.port = NULL;
	bc.server = "no-such-host.invalid";
	int gai = getaddrinfo(bc.server, WIRE_PORT_STRING, &hints, &ai);
	if (gai == EAI_NONAME) {
		CHECK(tcp->check(&bc, &err) < 0 && strstr(err.msg, "SERVER no-such-host.invalid"));
	} else {
		fprintf(stderr, "  resolving %s gave %s: bad host name not checked\n", bc.server,
			gai ? gai_strerror(gai) : "an address");
		if (gai == 0)
			freeaddrinfo(ai);
	}
}

int main(void)
{
	const char *src = getenv("top_srcdir");
	char path[4096], dir[] = "/tmp/test_net.XXXXXX";
	struct errbuf err;
	static const unsigned counts[] = { 1, 4 };

	signal(SIGPIPE, SIG_IGN);
	snprintf(path, sizeof(path), "%s/loadfiles/tiny.txt", src ? src : ".");
	if (loadfile_read(path, NULL, &lf, &err) < 0) {
		fprintf(stderr, "%s\n", err.msg);
		return 1;
	}
	CHECK(backends[0] == backend_find("tcp"));   /* the default */
	for (int p = 0; p < 2; p++)
		for (size_t i = 0; i < sizeof(counts) / sizeof(counts[0]); i++) {
			run_once("tcp", counts[i], p, NULL);
			run_once("unix", counts[i], p, NULL);
		}
	run_once("tcp", 4, false, "TCP_NODELAY,SO_SNDBUF=131072,SO_RCVBUF=131072");
	run_once("unix", 4, true, "SO_SNDBUF=131072");
	run_once("tcp", 64, false, NULL);
	run_external("127.0.0.1", NULL);
	run_external("::1", NULL);
	for (int p = 0; p < 2; p++) {
		descriptors("tcp", p);
		descriptors("unix", p);
	}
	reply_bodies();
	bad_settings();
	if (mkdtemp(dir)) {   /* last: the unix backend keeps --unix from now on */
		char sock[64];
		snprintf(sock, sizeof(sock), "%s/sock", dir);
		run_external(NULL, sock);
		rmdir(dir);
	}
	loadfile_free(&lf);
	return test_done("test_net");
}
