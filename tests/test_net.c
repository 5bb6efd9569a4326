/* End-to-end runs of the driver with the tcp and unix backends, each with
 * the server it starts for itself: threads and processes, 1 and 4
 * clients. The counted bytes must be exactly clients x one pass of the
 * loadfile, as for the pipe backend in test_driver. */
#include "config.h"

#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "driver.h"
#include "server.h"
#include "testlib.h"
#include "registry.h"

static struct loadfile lf;

static struct run_config config(const char *backend, unsigned n, bool processes)
{
	struct run_config cfg = {
		.lf = &lf, .backend = backend_find(backend), .quiet = true, .run_once = true,
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
	CHECK(driver_run(cfg, &res) == RUN_OK);
	if (res.status != RUN_OK)
		fprintf(stderr, "  %s: %s\n", what, res.error);
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
	cfg.bcfg.unix_path = unix_path;
	check_run(&cfg, listen ? listen : unix_path);
	server_free(s);
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
}

int main(void)
{
	const char *src = getenv("top_srcdir");
	char path[4096], err[512], dir[] = "/tmp/test_net.XXXXXX";
	static const unsigned counts[] = { 1, 4 };

	signal(SIGPIPE, SIG_IGN);
	snprintf(path, sizeof(path), "%s/loadfiles/tiny.txt", src ? src : ".");
	if (loadfile_read(path, &lf, err, sizeof(err)) < 0) {
		fprintf(stderr, "%s\n", err);
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
	if (mkdtemp(dir)) {
		char sock[64];
		snprintf(sock, sizeof(sock), "%s/sock", dir);
		run_external(NULL, sock);
		rmdir(dir);
	}
	bad_settings();
	loadfile_free(&lf);
	return test_done("test_net");
}
