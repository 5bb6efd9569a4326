/* The loadfile parser: the size model against hand-computed values, the
 * client-name rule, and every way the input can be wrong. */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "loadfile.h"
#include "testlib.h"

static struct loadfile lf;
static char err[512];

static int parse(const char *text)
{
	return loadfile_parse("t.txt", text, strlen(text), &lf, err, sizeof(err));
}

/* One line in, its op out; the parse must succeed. */
static struct op one(const char *line)
{
	struct op op = { 0 };

	if (parse(line) < 0) {
		fprintf(stderr, "unexpected parse error: %s\n", err);
		CHECK(0);
		return op;
	}
	CHECK_EQ_U(lf.n_ops, 1);
	op = lf.ops[0];
	loadfile_free(&lf);
	return op;
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
	op = one("Sleep 25 NT_STATUS_OK");
	CHECK_EQ_U(op.exchanges, 0);
	CHECK_EQ_U(op.sleep_ms, 25);
	op = one("Sleep 7");
	CHECK_EQ_U(op.sleep_ms, 7);
	op = one("Close 1 NT_STATUS_OK");
	CHECK_EQ_U(op.exchanges, 1);
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

/* Bad input: parse fails and the message starts "t.txt:LINE: " and says what. */
static void bad(const char *text, unsigned line, const char *what)
{
	char prefix[32];
	int rc = parse(text);

	snprintf(prefix, sizeof(prefix), "t.txt:%u: ", line);
	CHECK(rc == -1);
	if (rc == 0) {
		fprintf(stderr, "  accepted: %s\n", text);
		loadfile_free(&lf);
		return;
	}
	if (strncmp(err, prefix, strlen(prefix)) != 0 || !strstr(err, what)) {
		fprintf(stderr, "  input: %s\n  got: %s\n  want: %s...%s\n", text, err, prefix, what);
		CHECK(0);
	}
	CHECK(lf.ops == NULL);
}

static void test_errors(void)
{
	bad("Frobnicate 1 NT_STATUS_OK\n", 1, "unknown operation 'Frobnicate'");
	bad("# comment\n\nClose NT_STATUS_OK\n", 3, "missing field 'fnum'");
	bad("Close\n", 1, "missing field 'fnum'");
	bad("Close 12\n", 1, "missing the NT status");
	bad("Close 12 OK\n", 1, "last field must be an NT status");
	bad("Close abc NT_STATUS_OK\n", 1, "field 'fnum' is not a number: 'abc'");
	bad("Close 12x NT_STATUS_OK\n", 1, "not a number");
	bad("Close -1 NT_STATUS_OK\n", 1, "not a number");
	bad("Close 1 2 NT_STATUS_OK\n", 1, "too many fields");
	bad("ReadX 1 0 4096 NT_STATUS_OK\n", 1, "missing field 'ret_size'");
	bad("Unlink \"\\clients\\x 0x6 NT_STATUS_OK\n", 1, "unterminated quote");
	bad("Close 1 NT_STATUS_OK\nWriteX 1 0 70000 70000 NT_STATUS_OK\n", 2, "over the wire limit");
	bad("ReadX 1 0 100 99999 NT_STATUS_OK\n", 1, "over the wire limit");
	bad("FIND_FIRST \"\\x\" 260 1366 1000 NT_STATUS_OK\n", 1, "over the wire limit");
	bad("", 1, "no operations");
	bad("# nothing but a comment, with \"quotes and more than eight words in it\n\n", 2, "no operations");
	bad("Close 1 NT_STATUS_OK\nClose 1 2 3 4 5 6 7 8 9 NT_STATUS_OK\n", 2, "too many fields");
	bad("Sleep forever NT_STATUS_OK\n", 1, "not a number");

	CHECK(loadfile_read("/nonexistent/loadfile.txt", &lf, err, sizeof(err)) == -1);
	CHECK(strstr(err, "/nonexistent/loadfile.txt: cannot open loadfile") != NULL);
}

static void test_whole_files(void)
{
	const char *src = getenv("top_srcdir");
	char path[4096];

	CHECK(parse("# c\r\nClose 1 NT_STATUS_OK\r\n\r\n\tReadX 1 0 10 10 NT_STATUS_OK\n") == 0);
	CHECK_EQ_U(lf.n_ops, 2);
	CHECK_EQ_U(lf.ops[1].line, 4);
	CHECK_EQ_U(lf.pass_payload, 10);
	CHECK_EQ_U(loadfile_payload_prefix(&lf, 1), 0);
	loadfile_free(&lf);

	snprintf(path, sizeof(path), "%s/loadfiles/tiny.txt", src ? src : ".");
	CHECK(loadfile_read(path, &lf, err, sizeof(err)) == 0);
	CHECK(lf.n_ops > 10);
	loadfile_free(&lf);
	snprintf(path, sizeof(path), "%s/loadfiles/default.txt", src ? src : ".");
	CHECK(loadfile_read(path, &lf, err, sizeof(err)) == 0);
	CHECK(lf.n_ops > 10000);
	CHECK(lf.max_send < WIRE_LIMIT && lf.max_recv < WIRE_LIMIT);
	loadfile_free(&lf);
}

int main(void)
{
	test_size_model();
	test_client_name_rule();
	test_errors();
	test_whole_files();
	return test_done("test_loadfile");
}
