/* The shm and uring backends beyond test_backends' run-once passes:
 * timed runs (shm also spinning first), a server that refuses a frame
 * (named in the error), an shm server process killed mid-run (the client
 * fails within a bound instead of sleeping on the futex for ever), and an
 * shm client process that dies (its server goes too). The settings
 * (--spin, --uring) are set through the backends' options, as the command
 * line sets them; their messages are tests/uring.sh's. uring's parts are skipped when it was built without
 * liburing, and say so. */
#include "config.h"

#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "clock.h"
#include "driver.h"
#include "registry.h"
#include "testlib.h"
#include "wire.h"

static struct loadfile lf;
static const char *spin = "0", *uring = "";   /* as given to --spin and --uring */

/* A backend's own option, as the command line would set it. */
static void set_option(const char *name, const char *flag, const char *text)
{
	struct errbuf err;

	CHECK(backend_option_set(backend_find(name), flag, text, &err) == 0);
	if (strcmp(flag, "spin") == 0)
		spin = text;
	else
		uring = text;
}

static struct run_config config(const struct backend *be, unsigned n, bool processes)
{
	struct run_config cfg = {
		.lf = &lf, .backend = be, .warmup_exact = true,
	};
	cfg.bcfg.nclients = n;
	cfg.bcfg.processes = processes;
	return cfg;
}

/* Stopped by the clock; every client got through part of the loadfile. */
static void run_timed(const char *name, unsigned n, bool processes)
{
	struct run_config cfg = config(backend_find(name), n, processes);
	struct run_result res;

	cfg.timelimit = 1;
	cfg.warmup = 0.2;
	CHECK(driver_run(&cfg, NULL, &res) == RUN_OK);
	if (res.status != RUN_OK)
		fprintf(stderr, "  %s timed: %s\n", name, res.error.msg);
	CHECK(res.bytes > 0);
	for (unsigned i = 0; res.clients && i < n; i++)
		CHECK(res.clients[i].ops_all > 0);
	printf("  %s, %u %s, spin %s us, uring '%s': %.1f MB/sec\n", name, n,
	       processes ? "procs" : "threads", spin, uring, 1e-6 * (double)res.bytes / res.execute_secs);
	run_result_free(&res);
}

/* ---- a server that refuses a frame -------------------------------------- */

static const struct backend *inner;
static _Atomic int calls;

static int refuse_open(void *run, const struct backend_config *cfg, unsigned client,
		       void **conn, struct errbuf *err)
{
	return inner->open(run, cfg, client, conn, err);
}

/* The 30th exchange asks for a reply over the wire limit. */
static int refuse_exchange(void *conn, uint32_t send, uint32_t recv, struct errbuf *err)
{
	if (++calls == 30)
		recv = WIRE_LIMIT;
	return inner->exchange(conn, send, recv, err);
}

static void refuse_close(void *conn)
{
	inner->close(conn);
}

static int refuse_start(const struct backend_config *cfg, void **run, struct errbuf *err)
{
	return inner->start ? inner->start(cfg, run, err) : 0;
}

static void refuse_stop(void *run)
{
	if (inner->stop)
		inner->stop(run);
}

static const struct backend refusing = {
	.name = "refusing", .summary = "a real backend asked for a reply over the limit",
	.start = refuse_start, .open = refuse_open, .exchange = refuse_exchange,
	.close = refuse_close, .stop = refuse_stop,
};

static void server_refuses(const char *name, bool processes, const char *says)
{
	struct run_config cfg = config(&refusing, 4, processes);
	struct run_result res;
	char peer[64];

	inner = backend_find(name);
	calls = 0;
	cfg.timelimit = 600;
	uint64_t t = now_ns();
	CHECK(driver_run(&cfg, NULL, &res) == RUN_FAILED);
	/* Not the 600 s limit, however loaded the machine: the bound catches a hang. */
	CHECK((now_ns() - t) / 1e9 < 300);
	snprintf(peer, sizeof(peer), "%s server ", name);
	CHECK(strstr(res.error.msg, peer) != NULL);
	CHECK(strstr(res.error.msg, says) != NULL);
	fprintf(stderr, "  %s %s refusal reported as: %s\n", name,
		processes ? "procs" : "threads", res.error.msg);
	run_result_free(&res);
}

/* ---- shm peers that die --------------------------------------------------- */

/* The one child of this process: the shm server of the conn just opened. */
static pid_t only_child(void)
{
	char path[64], buf[256] = "";
	snprintf(path, sizeof(path), "/proc/self/task/%d/children", (int)getpid());
	FILE *fp = fopen(path, "r");

	if (!fp || !fgets(buf, sizeof(buf), fp)) {
		if (fp)
			fclose(fp);
		return -1;
	}
	fclose(fp);
	return (pid_t)strtol(buf, NULL, 10);
}

/* The server process killed: the next exchange fails, naming it, well
 * before the futex would have woken it for a reply that never comes. */
static void shm_server_killed(void)
{
	const struct backend *be = backend_find("shm");
	struct backend_config bcfg = { .nclients = 1, .processes = true };
	struct errbuf err;
	void *conn = NULL;

	CHECK(be->open(NULL, &bcfg, 5, &conn, &err) == 0);   /* shm has no run */
	if (!conn)
		return;
	CHECK(be->exchange(conn, 47, 39, &err) == 0);
	pid_t server = only_child();
	CHECK(server > 0);
	if (server > 0)
		kill(server, SIGKILL);
	uint64_t t = now_ns();
	CHECK(be->exchange(conn, 47, 39, &err) < 0);
	CHECK((now_ns() - t) / 1e9 < 60);   /* a hang only: the recheck comes in 0.1 s */
	CHECK(strstr(err.msg, "shm server 5") != NULL && strstr(err.msg, "died") != NULL);
	fprintf(stderr, "  killed shm server reported as: %s\n", err.msg);
	be->close(conn);
}

/* A client process that dies without closing: its server (a grandchild,
 * reaped here as we are its subreaper) must end by itself. */
static void shm_client_dies(void)
{
	int fds[2];

	CHECK(prctl(PR_SET_CHILD_SUBREAPER, 1) == 0);
	CHECK(pipe(fds) == 0);
	pid_t client = fork();
	if (client == 0) {
		const struct backend *be = backend_find("shm");
		struct backend_config bcfg = { .nclients = 1, .processes = true };
		struct errbuf err;
		void *conn = NULL;
		pid_t server = -1;
		if (be->open(NULL, &bcfg, 0, &conn, &err) == 0 &&
		    be->exchange(conn, 47, 39, &err) == 0)
			server = only_child();
		if (write(fds[1], &server, sizeof(server)) != sizeof(server))
			_exit(2);
		_exit(0);   /* no close(): as if killed */
	}
	pid_t server = -1;
	CHECK(read(fds[0], &server, sizeof(server)) == sizeof(server));
	CHECK(server > 0);
	CHECK(waitpid(client, NULL, 0) == client);
	alarm(120);   /* a hang fails the test; dying with the client takes far less */
	CHECK(server > 0 && waitpid(server, NULL, 0) == server);
	alarm(0);
	close(fds[0]);
	close(fds[1]);
	printf("  shm server ended with its dead client\n");
}

int main(void)
{
	const char *src = getenv("top_srcdir");
	char path[4096];
	struct errbuf err;

	signal(SIGPIPE, SIG_IGN);
	snprintf(path, sizeof(path), "%s/loadfiles/tiny.txt", src ? src : ".");
	if (loadfile_read(path, NULL, &lf, &err) < 0) {
		fprintf(stderr, "%s\n", err.msg);
		return 1;
	}
	run_timed("shm", 4, false);
	run_timed("shm", 4, true);
	set_option("shm", "spin", "20");
	run_timed("shm", 2, false);
	run_timed("shm", 2, true);
	set_option("shm", "spin", "0");
	server_refuses("shm", false, "gave up: reply of");
	server_refuses("shm", true, "gave up: reply of");
	shm_server_killed();
	shm_client_dies();
	if (!backend_find("uring")) {
		printf("SKIP: uring parts: built without liburing (apt-get install liburing-dev, "
		       "configure again)\n");
		loadfile_free(&lf);
		return test_done("test_shm_uring");
	}
	run_timed("uring", 4, false);
	run_timed("uring", 4, true);
	set_option("uring", "uring", "files,buffers,zc=4096");
	run_timed("uring", 2, false);
	run_timed("uring", 2, true);
	set_option("uring", "uring", "");
	server_refuses("uring", false, "closed");
	server_refuses("uring", true, "closed");
	loadfile_free(&lf);
	return test_done("test_shm_uring");
}
