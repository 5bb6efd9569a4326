#include "config.h"
#include "smb.h"

#include <string.h>

static const struct {
	const char *keyword, *report;
} names[OP_COUNT] = {
	[OP_NTCREATEX] = { "NTCreateX", "NTCreateX" },
	[OP_CLOSE]     = { "Close", "Close" },
	[OP_RENAME]    = { "Rename", "Rename" },
	[OP_UNLINK]    = { "Unlink", "Unlink" },
	[OP_DELTREE]   = { "Deltree", "Deltree" },
	[OP_MKDIR]     = { "Mkdir", "Mkdir" },
	[OP_RMDIR]     = { "Rmdir", "Rmdir" },
	[OP_QPATHINFO] = { "QUERY_PATH_INFORMATION", "Qpathinfo" },
	[OP_QFILEINFO] = { "QUERY_FILE_INFORMATION", "Qfileinfo" },
	[OP_QFSINFO]   = { "QUERY_FS_INFORMATION", "Qfsinfo" },
	[OP_SFILEINFO] = { "SET_FILE_INFORMATION", "Sfileinfo" },
	[OP_FIND]      = { "FIND_FIRST", "Find" },
	[OP_WRITEX]    = { "WriteX", "WriteX" },
	[OP_READX]     = { "ReadX", "ReadX" },
	[OP_LOCKX]     = { "LockX", "LockX" },
	[OP_UNLOCKX]   = { "UnlockX", "UnlockX" },
	[OP_FLUSH]     = { "Flush", "Flush" },
	[OP_SLEEP]     = { "Sleep", "Sleep" },
	[OP_CONNECT]   = { "Connect", "Connect" },
};

const char *smb_keyword(enum smb_op op) { return names[op].keyword; }
const char *smb_report_name(enum smb_op op) { return names[op].report; }

int smb_op_from_token(const char *word, size_t len, enum smb_op *op)
{
	for (int i = 0; i < OP_CONNECT; i++) {   /* the loadfile's operations only */
		if (strlen(names[i].keyword) == len && memcmp(word, names[i].keyword, len) == 0) {
			*op = (enum smb_op)i;
			return 0;
		}
	}
	return -1;
}

/* The size model table of docs/protocol.md, one case per row. */
struct smb_sizes smb_size(enum smb_op op, const struct smb_args *a)
{
	struct smb_sizes s = { 0, 0, 0, 1 };

	switch (op) {
	case OP_UNLINK: case OP_MKDIR: case OP_RMDIR:
		s.send = 39 + 2 + 2 * a->len1 + 2;  s.recv = 39; break;
	case OP_NTCREATEX:
		s.send = 70 + 2 + 2 * a->len1 + 2;  s.recv = 39 + 12 * 4; break;
	case OP_CLOSE:
		s.send = 39 + 8;                    s.recv = 39; break;
	case OP_RENAME:
		s.send = 39 + 8 + 2 * a->len1 + 2 * a->len2; s.recv = 39; break;
	case OP_FLUSH:
		s.send = 39 + 2;                    s.recv = 39; break;
	case OP_QPATHINFO:
		s.send = 39 + 16 + 2 * a->len1;     s.recv = 39 + 32; break;
	case OP_QFILEINFO: case OP_QFSINFO:
		s.send = 39 + 20;                   s.recv = 39 + 32; break;
	case OP_SFILEINFO:
		s.send = 39 + 32;                   s.recv = 39 + 8; break;
	case OP_FIND:
		s.send = 39 + 20 + 2 * a->len1;     s.recv = 39 + 90 * a->count; break;
	case OP_WRITEX:
		s.send = 39 + 20 + a->size;         s.recv = 39 + 16;
		s.payload = a->size; break;
	case OP_READX:
		s.send = 39 + 20;                   s.recv = 39 + 20 + a->ret_size;
		s.payload = a->ret_size; break;
	case OP_LOCKX: case OP_UNLOCKX:
		s.send = 39 + 12;                   s.recv = 39; break;
	case OP_DELTREE: case OP_SLEEP: case OP_CONNECT: case OP_COUNT:
		s.exchanges = 0; break;
	}
	return s;
}
