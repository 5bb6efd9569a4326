/* SMB operation types and the size model of dbench 4.0's tbench.
 *
 * The size model says how many bytes each operation sends and receives,
 * so every backend carries exactly what tbench would have put on the wire. */
#ifndef TBENCH_SMB_H
#define TBENCH_SMB_H

#include <stddef.h>
#include <stdint.h>

enum smb_op {
	OP_NTCREATEX, OP_CLOSE, OP_RENAME, OP_UNLINK, OP_DELTREE, OP_MKDIR,
	OP_RMDIR, OP_QPATHINFO, OP_QFILEINFO, OP_QFSINFO, OP_SFILEINFO,
	OP_FIND, OP_WRITEX, OP_READX, OP_LOCKX, OP_UNLOCKX, OP_FLUSH, OP_SLEEP,
	OP_CONNECT,     /* not in loadfiles: a new connection every --reconnect N operations */
	OP_COUNT
};

/* The exchange that opens every connection (dbench's nb_setup). */
enum { SMB_SETUP_SEND = 8, SMB_SETUP_RECV = 8 };

/* dbench 4.0's tbench_srv refuses frames with n + 4 >= 70000. */
enum { WIRE_LIMIT = 70000 };

/* Name in the loadfile ("QUERY_PATH_INFORMATION") and in reports ("Qpathinfo"). */
const char *smb_keyword(enum smb_op op);
const char *smb_report_name(enum smb_op op);
int smb_op_from_token(const char *word, size_t len, enum smb_op *op);

/* Bytes of one exchange. Path lengths are in characters; `count` is the
 * FIND_FIRST entry count, `size`/`ret_size` the ReadX/WriteX sizes. */
struct smb_args {
	uint32_t len1, len2;    /* path lengths (len2: Rename's new name) */
	uint32_t count;         /* FIND_FIRST */
	uint32_t size, ret_size; /* ReadX / WriteX */
};
struct smb_sizes {
	uint32_t send, recv, payload;
	int exchanges;          /* 0 for Deltree and Sleep: no bytes travel */
};
struct smb_sizes smb_size(enum smb_op op, const struct smb_args *a);

#endif
