/* The loadfile parser: the size model against hand-computed values, the
 * client-name and directory rules, dbench 4.0's way of reading a line (and
 * its leniencies), and every way the input can be wrong under --strict. */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "loadfile.h"
#include "testlib.h"

static struct loadfile lf;
static struct errbuf err;
static unsigned notes;
static char last_note[1024];

static void count_note(void *ctx, const char *msg)
{
	(void)ctx;
	notes++;
	snprintf(last_note, sizeof(last_note), "%s", msg);
}

/* No directory: the size model's path lengths are the paths' own. */
static const struct loadfile_options bare = { .directory = "", .note = count_note };
static const struct loadfile_options strict = { .directory = "", .strict = 1 };

static int parse_with(const char *text, const struct loadfile_options *opt)
{
	notes = 0;
	last_note[0] = 0;
	return loadfile_parse("t.txt", text, strlen(text), opt, &lf, &err);
}

/* The first op of the text; the parse must succeed. */
static struct op first_with(const char *text, const struct loadfile_options *opt)
{
	struct op op = { 0 };

	if (parse_with(text, opt) < 0) {
		fprintf(stderr, "unexpected parse error: %s\n", err.msg);
		CHECK(0);
		return op;
	}
	op = lf.ops[0];
	loadfile_free(&lf);
	return op;
}

static struct op one(const char *line)
{
	return first_with(line, &bare);
}

static void check_sizes(const char *line, unsigned send, unsigned recv, unsigned payload)
{
	struct op op = one(line);

	if (op.send != send || op.recv != recv || op.payload != payload)
		fprintf(stderr, "  for: %s\n", line);
	CHECK_EQ_U(op.send, send);
	CHECK_EQ_U(op.recv, recv);
	CHECK_EQ_U(op.payload, payload);
}

static void test_size_model(void)
{
	/* \clients\client1\~dmtmp is 23 characters */
	check_sizes("NTCreateX \"\\clients\\client1\\~dmtmp\" 0x1 0x2 9937 NT_STATUS_OK",
		    70 + 2 + 46 + 2, 39 + 48, 0);
	check_sizes("Close 9937 NT_STATUS_OK", 47, 39, 0);
	check_sizes("Rename \"\\a\\old\" \"\\a\\newer\" NT_STATUS_OK", 39 + 8 + 12 + 16, 39, 0);
	check_sizes("Unlink \"\\clients\\client1\\x.PPT\" 0x6 NT_STATUS_OK", 39 + 2 + 44 + 2, 39, 0);
	check_sizes("Mkdir \"\\clients\" NT_STATUS_OK", 39 + 2 + 16 + 2, 39, 0);
	check_sizes("Rmdir \"\\d\" NT_STATUS_OK", 39 + 2 + 4 + 2, 39, 0);
	check_sizes("QUERY_PATH_INFORMATION \"\\clients\\client1\\~dmtmp\" 1004 NT_STATUS_OBJECT_NAME_NOT_FOUND",
		    39 + 16 + 46, 39 + 32, 0);
	check_sizes("QUERY_FILE_INFORMATION 9938 258 NT_STATUS_OK", 59, 71, 0);
	check_sizes("QUERY_FS_INFORMATION 1 NT_STATUS_OK", 59, 71, 0);
	check_sizes("SET_FILE_INFORMATION 10005 1004 NT_STATUS_OK", 71, 47, 0);
	check_sizes("FIND_FIRST \"\\clients\\client1\\FILLER.*\" 260 1366 0 NT_STATUS_NO_SUCH_FILE",
		    39 + 20 + 50, 39, 0);
	check_sizes("FIND_FIRST \"\\x\" 260 1366 26 NT_STATUS_OK", 39 + 20 + 4, 39 + 90 * 26, 0);
	check_sizes("WriteX 9938 0 65536 65536 NT_STATUS_OK", 39 + 20 + 65536, 55, 65536);
	check_sizes("ReadX 10003 0 4096 4096 NT_STATUS_OK", 59, 39 + 20 + 4096, 4096);
	check_sizes("ReadX 10003 4096 4096 100 NT_STATUS_OK", 59, 39 + 20 + 100, 100);
	check_sizes("LockX 10430 2147483538 1 NT_STATUS_OK", 51, 39, 0);
	check_sizes("UnlockX 10430 2147483538 1 NT_STATUS_OK", 51, 39, 0);
	check_sizes("Flush 10012 NT_STATUS_OK", 41, 39, 0);

	struct op op = one("Deltree \"\\clients\\client1\" NT_STATUS_OK");
	CHECK_EQ_U(op.exchanges, 0);
	op = one("Sleep 25 NT_STATUS_OK");   /* microseconds, as dbench */
	CHECK_EQ_U(op.exchanges, 0);
	CHECK_EQ_U(op.sleep_us, 25);
	op = one("Close 1 NT_STATUS_OK");
	CHECK_EQ_U(op.exchanges, 1);
}

/* dbench sizes a path as -D's directory (default ".") plus the path. */
static void test_directory(void)
{
	const char *line = "Unlink \"\\clients\\client1\\x.PPT\" 0x6 NT_STATUS_OK";
	struct op op = first_with(line, NULL);
	CHECK_EQ_U(op.send, 39 + 2 + 2 * (1 + 22) + 2);
	struct loadfile_options mnt = { .directory = "/mnt/x" };
	op = first_with(line, &mnt);
	CHECK_EQ_U(op.send, 39 + 2 + 2 * (6 + 22) + 2);
	/* Both of Rename's paths get it. */
	op = first_with("Rename \"\\a\" \"\\b\" NT_STATUS_OK", &mnt);
	CHECK_EQ_U(op.send, 39 + 8 + 2 * 8 + 2 * 8);
	/* "client1" in the directory grows with the client's name too. */
	struct loadfile_options named = { .directory = "/client1" };
	op = first_with(line, &named);
	CHECK_EQ_U(op.name_refs, 4);
}

static void test_client_name_rule(void)
{
	CHECK_EQ_U(client_name_extra(0), 0);
	CHECK_EQ_U(client_name_extra(1), 0);
	CHECK_EQ_U(client_name_extra(9), 0);
	CHECK_EQ_U(client_name_extra(10), 1);
	CHECK_EQ_U(client_name_extra(99), 1);
	CHECK_EQ_U(client_name_extra(100), 2);
	CHECK_EQ_U(client_name_extra(1000), 3);

	/* One "client1" in a path: client 10's request is 2 bytes longer. */
	struct op op = one("NTCreateX \"\\clients\\client1\\~dmtmp\" 0x1 0x2 9937 NT_STATUS_OK");
	CHECK_EQ_U(op_send_bytes(&op, client_name_extra(3)), 120);
	CHECK_EQ_U(op_send_bytes(&op, client_name_extra(10)), 122);
	CHECK_EQ_U(op_send_bytes(&op, client_name_extra(123)), 124);
	/* Two paths, one occurrence each, both grow. */
	op = one("Rename \"\\clients\\client1\\a\" \"\\clients\\client1\\b\" NT_STATUS_OK");
	CHECK_EQ_U(op_send_bytes(&op, 1) - op_send_bytes(&op, 0), 4);
	/* No client name, no growth; the recv side never grows. */
	op = one("Unlink \"\\other\\x\" 0x6 NT_STATUS_OK");
	CHECK_EQ_U(op_send_bytes(&op, 2), op.send);
}

/* Lines as dbench 4.0 reads them. */
static void test_dbench_reading(void)
{
	/* Timestamps: seconds into the pass, when the line is due. */
	struct op op = one("12.5 Close 1 NT_STATUS_OK");
	CHECK_EQ_U(op.due_ms, 12500);
	CHECK_EQ_U(op.send, 47);
	/* Numbers in any base strtol takes; a hex status. */
	op = one("ReadX 1 0 0x1000 010 0x0");
	CHECK_EQ_U(op.payload, 8);
	/* A missing field reads the status, as dbench's ival() does. */
	op = one("ReadX 1 0 4096 NT_STATUS_OK");
	CHECK_EQ_U(op.payload, 0);
	CHECK(notes == 1 && strstr(last_note, "missing field 'ret_size'"));
	/* Extra fields before the status are ignored. */
	op = one("Close 1 2 3 NT_STATUS_OK");
	CHECK_EQ_U(op.send, 47);
	CHECK(notes == 1 && strstr(last_note, "t.txt:1: Close: extra fields"));
	/* A number with junk after it counts what strtol reads. */
	op = one("WriteX 1 0 12x 12 NT_STATUS_OK");
	CHECK_EQ_U(op.payload, 12);
	CHECK(notes == 1 && strstr(last_note, "'size' is not a number: '12x', taken as 12"));
	/* An unquoted path loses its first slash to dbench's " /" rule and
	 * then is no path at all; a quoted one keeps it. */
	op = one("Unlink \\clients\\x 0x6 NT_STATUS_OK");
	CHECK_EQ_U(op.send, 39 + 2 + 0 + 2);
	op = one("Unlink \"\\a \\b\" 0x6 NT_STATUS_OK");   /* " \\" inside quotes too: "/a b" */
	CHECK_EQ_U(op.send, 39 + 2 + 2 * 4 + 2);
	/* Quotes toggle: "a b"c is one token. */
	op = one("Mkdir \"\\a b\"c NT_STATUS_OK");
	CHECK_EQ_U(op.send, 39 + 2 + 2 * 5 + 2);
	/* Skipped as dbench skips them, each kind noted once. */
	CHECK(parse_with("Sleep 7\nFrob 1 NT_STATUS_OK\nFrob 2 NT_STATUS_OK\nJunk x\n"
			 "Close\nClose 1 NT_STATUS_OK\n", &bare) == 0);
	CHECK_EQ_U(lf.n_ops, 1);
	CHECK_EQ_U(lf.ops[0].line, 6);
	CHECK_EQ_U(lf.n_lines, 6);
	CHECK_EQ_U(lf.n_lenient, 5);
	CHECK_EQ_U(notes, 3);   /* badly formed status (twice: one note), Frob once, one token */
	loadfile_free(&lf);
	/* Comments, blank lines, CR LF and tabs. */
	CHECK(parse_with("# c\r\nClose 1 NT_STATUS_OK\r\n\r\n\tReadX 1 0 10 10 NT_STATUS_OK\n", &bare) == 0);
	CHECK_EQ_U(lf.n_ops, 2);
	CHECK_EQ_U(lf.ops[1].line, 4);
	CHECK_EQ_U(lf.pass_payload, 10);
	CHECK_EQ_U(loadfile_payload_prefix(&lf, 1), 0);
	CHECK_EQ_U(lf.n_lenient, 0);
	loadfile_free(&lf);
}

/* Bad input: parse fails and the message starts "t.txt:LINE: " and says what. */
static void bad_with(const char *text, const struct loadfile_options *opt, unsigned line, const char *what)
{
	char prefix[32];
	int rc = parse_with(text, opt);

	snprintf(prefix, sizeof(prefix), "t.txt:%u: ", line);
	CHECK(rc == -1);
	if (rc == 0) {
		fprintf(stderr, "  accepted: %s\n", text);
		loadfile_free(&lf);
		return;
	}
	if (strncmp(err.msg, prefix, strlen(prefix)) != 0 || !strstr(err.msg, what)) {
		fprintf(stderr, "  input: %s\n  got: %s\n  want: %s...%s\n", text, err.msg, prefix, what);
		CHECK(0);
	}
	CHECK(lf.ops == NULL);
}

static void bad(const char *text, unsigned line, const char *what)
{
	bad_with(text, &strict, line, what);
}

static void test_errors(void)
{
	/* Errors whatever the mode. */
	bad_with("Close 1 NT_STATUS_OK\nWriteX 1 0 70000 70000 NT_STATUS_OK\n", NULL, 2, "over the wire limit");
	bad_with("ReadX 1 0 100 99999 NT_STATUS_OK\n", NULL, 1, "over the wire limit");
	bad_with("FIND_FIRST \"\\x\" 260 1366 1000 NT_STATUS_OK\n", NULL, 1, "over the wire limit");
	bad_with("", NULL, 1, "no operations");
	bad_with("# nothing but a comment, with \"quotes and more than eight words in it\n\n", NULL, 2, "no operations");
	bad_with("Sleep 5\n", NULL, 1, "no operations");
	bad_with("SMBopenX 1 2\n", NULL, 1, "dbench 1 loadfile");

	{   /* a path no frame can carry, whatever the mode (and no 32-bit wrap) */
		size_t n = WIRE_LIMIT + 16;
		char *line = malloc(n + 64);
		CHECK(line != NULL);
		if (line) {
			int k = snprintf(line, n + 64, "Mkdir \"\\");
			memset(line + k, 'a', n);
			snprintf(line + k + n, 64, "\" NT_STATUS_OK\n");
			bad_with(line, NULL, 1, "over the wire limit");
			free(line);
		}
	}

	/* What dbench takes leniently, --strict refuses. */
	bad("Frobnicate 1 NT_STATUS_OK\n", 1, "unknown operation 'Frobnicate'");
	bad("# comment\n\nClose NT_STATUS_OK\n", 3, "missing field 'fnum'");
	bad("Close\n", 1, "a line needs an operation and a status");
	bad("Close 12\n", 1, "badly formed status '12'");
	bad("Close 12 OK\n", 1, "badly formed status 'OK'");
	bad("Close abc NT_STATUS_OK\n", 1, "field 'fnum' is not a number: 'abc'");
	bad("Close 12x NT_STATUS_OK\n", 1, "not a number");
	bad("WriteX 1 0 -5 0 NT_STATUS_OK\n", 1, "field 'size' is -5");
	bad("Close 1 2 NT_STATUS_OK\n", 1, "extra fields");
	bad("ReadX 1 0 4096 NT_STATUS_OK\n", 1, "missing field 'ret_size'");
	bad("Unlink clients 0x6 NT_STATUS_OK\n", 1, "not a path starting with");
	bad("Close 1 NT_STATUS_OK\nClose 1 2 3 4 5 6 7 8 9 NT_STATUS_OK\n", 2, "extra fields");
	bad("Sleep forever NT_STATUS_OK\n", 1, "not a number");
	/* Untrusted bytes are shown escaped and cut short. */
	bad("Fro\x01\x7fob 1 NT_STATUS_OK\n", 1, "unknown operation 'Fro\\x01\\x7fob'");
	bad("Close 1234567890123456789012345678901234567890123456789012345678901234567890 NT_STATUS_OK\n",
	    1, "'1234567890123456789012345678901234567890...'");

	CHECK(loadfile_read("/nonexistent/loadfile.txt", NULL, &lf, &err) == -1);
	CHECK(strstr(err.msg, "/nonexistent/loadfile.txt: cannot open loadfile: No such file") != NULL);
}

static void test_whole_files(void)
{
	const char *src = getenv("top_srcdir");
	char path[4096];

	snprintf(path, sizeof(path), "%s/loadfiles/tiny.txt", src ? src : ".");
	CHECK(loadfile_read(path, &strict, &lf, &err) == 0);
	CHECK(lf.n_ops > 10);
	loadfile_free(&lf);
	snprintf(path, sizeof(path), "%s/loadfiles/default.txt", src ? src : ".");
	CHECK(loadfile_read(path, &strict, &lf, &err) == 0);
	CHECK(lf.n_ops > 10000);
	CHECK(lf.max_send < WIRE_LIMIT && lf.max_recv < WIRE_LIMIT);
	loadfile_free(&lf);
}

/* The shipped bulk loadfiles, read by the parser itself: every ReadX and
 * WriteX moves the io size (64 KiB), so its wire bytes are the size rule of
 * docs/loadfile.md: WriteX 59 + size out and 55 back, ReadX 59 out and
 * 59 + size back.  Per pass 8 files of 16 requests are written; bulk-read
 * then reads them 7 times, bulk-mix once. */
static void check_bulk(const char *name, unsigned want_writes, unsigned want_reads)
{
	const char *src = getenv("top_srcdir");
	const uint32_t io = 65536;
	unsigned writes = 0, reads = 0;
	char path[4096];

	snprintf(path, sizeof(path), "%s/loadfiles/%s", src ? src : ".", name);
	if (loadfile_read(path, &strict, &lf, &err) < 0) {
		fprintf(stderr, "%s\n", err.msg);
		CHECK(0);
		return;
	}
	for (size_t i = 0; i < lf.n_ops; i++) {
		const struct op *op = &lf.ops[i];
		if (op->type == OP_WRITEX) {
			writes++;
			CHECK(op->send == 59 + io && op->recv == 55 && op->payload == io);
		} else if (op->type == OP_READX) {
			reads++;
			CHECK(op->send == 59 && op->recv == 59 + io && op->payload == io);
		} else {
			CHECK(op->payload == 0);
		}
	}
	CHECK_EQ_U(writes, want_writes);
	CHECK_EQ_U(reads, want_reads);
	CHECK_EQ_U(lf.pass_payload, (uint64_t)(writes + reads) * io);
	loadfile_free(&lf);
}

static void test_bulk_files(void)
{
	check_bulk("bulk-write.txt", 8 * 16, 0);
	check_bulk("bulk-read.txt", 8 * 16, 7 * 8 * 16);
	check_bulk("bulk-mix.txt", 8 * 16, 8 * 16);
}

int main(void)
{
	test_size_model();
	test_directory();
	test_client_name_rule();
	test_dbench_reading();
	test_errors();
	test_whole_files();
	test_bulk_files();
	return test_done("test_loadfile");
}
