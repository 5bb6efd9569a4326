/* NBENCH loadfile parser: one operation per line, blank-separated fields,
 * quoted paths, the expected NT status last. Everything that can be wrong
 * with the input is found here, before any client starts. */
#include "config.h"
#include "loadfile.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

enum { MAX_FIELDS = 8 };

/* Fields after the keyword: P = path, N = number. The NT status follows. */
static const struct {
	const char *types;
	const char *names[4];
} fields[OP_COUNT] = {
	[OP_NTCREATEX] = { "PNNN", { "fname", "create_options", "disposition", "fnum" } },
	[OP_CLOSE]     = { "N",    { "fnum" } },
	[OP_RENAME]    = { "PP",   { "old", "new" } },
	[OP_UNLINK]    = { "PN",   { "fname", "attr" } },
	[OP_DELTREE]   = { "P",    { "dname" } },
	[OP_MKDIR]     = { "P",    { "dname" } },
	[OP_RMDIR]     = { "P",    { "dname" } },
	[OP_QPATHINFO] = { "PN",   { "fname", "level" } },
	[OP_QFILEINFO] = { "NN",   { "fnum", "level" } },
	[OP_QFSINFO]   = { "N",    { "level" } },
	[OP_SFILEINFO] = { "NN",   { "fnum", "level" } },
	[OP_FIND]      = { "PNNN", { "pattern", "level", "maxcnt", "count" } },
	[OP_WRITEX]    = { "NNNN", { "fnum", "offset", "size", "ret_size" } },
	[OP_READX]     = { "NNNN", { "fnum", "offset", "size", "ret_size" } },
	[OP_LOCKX]     = { "NNN",  { "fnum", "offset", "size" } },
	[OP_UNLOCKX]   = { "NNN",  { "fnum", "offset", "size" } },
	[OP_FLUSH]     = { "N",    { "fnum" } },
	[OP_SLEEP]     = { "N",    { "milliseconds" } },
};

struct token {
	const char *s;
	size_t len;
};

struct parser {
	const char *name;
	unsigned line;
	char *err;
	size_t errlen;
};

static int fail(struct parser *p, const char *fmt, ...)
{
	int n = snprintf(p->err, p->errlen, "%s:%u: ", p->name, p->line);
	va_list ap;

	va_start(ap, fmt);
	if (n >= 0 && (size_t)n < p->errlen)
		vsnprintf(p->err + n, p->errlen - n, fmt, ap);
	va_end(ap);
	return -1;
}

/* Splits one line into blank-separated tokens; "..." is one token. */
static int tokenize(struct parser *p, const char *s, const char *end,
		    struct token *tok, int *ntok)
{
	int n = 0;

	while (s < end) {
		if (*s == ' ' || *s == '\t' || *s == '\r') {
			s++;
			continue;
		}
		if (n == MAX_FIELDS)
			return fail(p, "too many fields (at most %d)", MAX_FIELDS);
		if (*s == '"') {
			const char *q = memchr(s + 1, '"', end - s - 1);
			if (!q)
				return fail(p, "unterminated quote");
			tok[n++] = (struct token){ s + 1, q - s - 1 };
			s = q + 1;
		} else {
			const char *t = s;
			while (t < end && *t != ' ' && *t != '\t' && *t != '\r')
				t++;
			tok[n++] = (struct token){ s, t - s };
			s = t;
		}
	}
	*ntok = n;
	return 0;
}

/* Decimal or 0x-hex, the whole token, no sign: strtoull without the copy. */
static int parse_number(const struct token *t, uint64_t *out)
{
	const char *s = t->s, *end = t->s + t->len;
	unsigned base = 10;
	uint64_t v = 0;

	if (t->len > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
		base = 16;
		s += 2;
	}
	if (s == end)
		return -1;
	for (; s < end; s++) {
		unsigned d;
		if (*s >= '0' && *s <= '9')
			d = (unsigned)(*s - '0');
		else if (base == 16 && (*s | 0x20) >= 'a' && (*s | 0x20) <= 'f')
			d = (unsigned)((*s | 0x20) - 'a' + 10);
		else
			return -1;
		if (v > (UINT64_MAX - d) / base)
			return -1;
		v = v * base + d;
	}
	*out = v;
	return 0;
}

static unsigned count_client_name(const struct token *t)
{
	static const char name[] = "client1";
	const size_t nlen = sizeof(name) - 1;
	unsigned n = 0;

	for (size_t i = 0; i + nlen <= t->len; i++) {
		if (memcmp(t->s + i, name, nlen) == 0) {
			n++;
			i += nlen - 1;
		}
	}
	return n;
}

static int is_status(const struct token *t)
{
	return t->len > 10 && memcmp(t->s, "NT_STATUS_", 10) == 0;
}

static int usage_error(struct parser *p, enum smb_op op, const char *what)
{
	const char *types = fields[op].types;
	char form[160];
	int n = snprintf(form, sizeof(form), "%s", smb_keyword(op));

	for (int i = 0; types[i] && n > 0 && (size_t)n < sizeof(form); i++)
		n += snprintf(form + n, sizeof(form) - n,
			      types[i] == 'P' ? " \"%s\"" : " %s", fields[op].names[i]);
	return fail(p, "%s: %s (expected: %s STATUS)", smb_keyword(op), what, form);
}

/* Turns the tokens of one line into an op. */
static int parse_op(struct parser *p, const struct token *tok, int ntok, struct op *op)
{
	enum smb_op type;
	struct smb_args a = { 0 };
	uint64_t num[4] = { 0 };
	unsigned npath = 0, nnum = 0, refs = 0;

	if (smb_op_from_token(tok[0].s, tok[0].len, &type) < 0)
		return fail(p, "unknown operation '%.*s'",
			    (int)(tok[0].len > 40 ? 40 : tok[0].len), tok[0].s);
	const char *word = smb_keyword(type);

	const char *types = fields[type].types;
	int nf = (int)strlen(types);
	for (int i = 0; i < nf; i++) {
		const struct token *t = &tok[i + 1];
		char what[96];
		if (i + 1 >= ntok || (i + 2 == ntok && is_status(t) && type != OP_SLEEP)) {
			snprintf(what, sizeof(what), "missing field '%s'", fields[type].names[i]);
			return usage_error(p, type, what);
		}
		if (types[i] == 'P') {
			refs += count_client_name(t);
			if (npath++ == 0)
				a.len1 = (uint32_t)t->len;
			else
				a.len2 = (uint32_t)t->len;
		} else if (parse_number(t, &num[nnum++]) < 0) {
			snprintf(what, sizeof(what), "field '%s' is not a number: '%.*s'",
				 fields[type].names[i], (int)(t->len > 40 ? 40 : t->len), t->s);
			return usage_error(p, type, what);
		}
	}

	int rest = ntok - 1 - nf;
	if (rest == 0 && type != OP_SLEEP)
		return usage_error(p, type, "missing the NT status");
	if (rest > 1)
		return usage_error(p, type, "too many fields");
	if (rest == 1 && !is_status(&tok[ntok - 1]))
		return fail(p, "%s: last field must be an NT status (NT_STATUS_...), got '%.*s'",
			    word, (int)(tok[ntok - 1].len > 40 ? 40 : tok[ntok - 1].len),
			    tok[ntok - 1].s);

	if (type == OP_FIND)
		a.count = num[2] > UINT32_MAX / 90 ? UINT32_MAX / 90 : (uint32_t)num[2];
	if (type == OP_WRITEX || type == OP_READX) {
		if (num[2] >= WIRE_LIMIT || num[3] >= WIRE_LIMIT)
			return fail(p, "%s: size %llu over the wire limit of %d bytes",
				    word, (unsigned long long)(num[2] > num[3] ? num[2] : num[3]),
				    WIRE_LIMIT - 1);
		a.size = (uint32_t)num[2];
		a.ret_size = (uint32_t)num[3];
	}

	struct smb_sizes sz = smb_size(type, &a);
	if (sz.send >= WIRE_LIMIT || sz.recv >= WIRE_LIMIT)
		return fail(p, "%s: exchange of %u bytes sent, %u received is over the wire limit of %d bytes",
			    word, sz.send, sz.recv, WIRE_LIMIT - 1);
	if (type == OP_SLEEP && num[0] > 3600 * 1000)
		return fail(p, "Sleep: %llu ms is longer than an hour", (unsigned long long)num[0]);

	*op = (struct op){
		.send = sz.send, .recv = sz.recv, .payload = sz.payload,
		.line = p->line, .sleep_ms = type == OP_SLEEP ? (uint32_t)num[0] : 0,
		.type = (uint8_t)type, .exchanges = (uint8_t)sz.exchanges,
		.name_refs = (uint16_t)(2 * refs),
	};
	return 0;
}

static void account(struct loadfile *lf, const struct op *op)
{
	lf->pass_payload += op->payload;
	if (op->send > lf->max_send)
		lf->max_send = op->send;
	if (op->recv > lf->max_recv)
		lf->max_recv = op->recv;
	if (op->name_refs > lf->max_name_refs)
		lf->max_name_refs = op->name_refs;
}

int loadfile_parse(const char *name, const char *text, size_t len,
		   struct loadfile *lf, char *err, size_t errlen)
{
	struct parser p = { name, 0, err, errlen };
	const char *s = text, *end = text + len;
	size_t lines = 1;

	memset(lf, 0, sizeof(*lf));
	for (const char *q = text; (q = memchr(q, '\n', end - q)); q++)
		lines++;
	lf->ops = malloc(lines * sizeof(*lf->ops));
	lf->path = strdup(name);
	if (!lf->ops || !lf->path) {
		loadfile_free(lf);
		snprintf(err, errlen, "%s: out of memory", name);
		return -1;
	}

	while (s < end) {
		const char *nl = memchr(s, '\n', end - s);
		const char *eol = nl ? nl : end;
		struct token tok[MAX_FIELDS];
		int ntok = 0;

		const char *first = s;
		p.line++;
		while (first < eol && (*first == ' ' || *first == '\t' || *first == '\r'))
			first++;
		if (first == eol || *first == '#') {   /* blank or comment: free text */
			s = eol + 1;
			continue;
		}
		if (tokenize(&p, first, eol, tok, &ntok) < 0)
			goto bad;
		s = eol + 1;
		if (parse_op(&p, tok, ntok, &lf->ops[lf->n_ops]) < 0)
			goto bad;
		account(lf, &lf->ops[lf->n_ops++]);
	}
	if (lf->n_ops == 0) {
		snprintf(err, errlen, "%s:%u: no operations: the loadfile is empty or only comments",
			 name, p.line ? p.line : 1);
		goto bad;
	}
	return 0;
bad:
	loadfile_free(lf);
	return -1;
}

/* The file is mapped, not copied: parsing reads it once, straight from the
 * page cache. */
int loadfile_read(const char *path, struct loadfile *lf, char *err, size_t errlen)
{
	struct stat st;
	int rc = -1;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0) {
		snprintf(err, errlen, "%s: cannot open loadfile: %s", path, strerror(errno));
		return -1;
	}
	if (fstat(fd, &st) < 0) {
		snprintf(err, errlen, "%s: cannot stat loadfile: %s", path, strerror(errno));
	} else if (!S_ISREG(st.st_mode)) {
		snprintf(err, errlen, "%s: not a regular file", path);
	} else if (st.st_size == 0) {
		rc = loadfile_parse(path, "", 0, lf, err, errlen);
	} else {
		void *text = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE | MAP_POPULATE, fd, 0);
		if (text == MAP_FAILED) {
			snprintf(err, errlen, "%s: cannot map loadfile: %s", path, strerror(errno));
		} else {
			rc = loadfile_parse(path, text, (size_t)st.st_size, lf, err, errlen);
			munmap(text, (size_t)st.st_size);
		}
	}
	close(fd);
	return rc;
}

void loadfile_free(struct loadfile *lf)
{
	free(lf->ops);
	free(lf->path);
	memset(lf, 0, sizeof(*lf));
}

uint64_t loadfile_payload_prefix(const struct loadfile *lf, size_t n)
{
	uint64_t sum = 0;

	for (size_t i = 0; i < n && i < lf->n_ops; i++)
		sum += lf->ops[i].payload;
	return sum;
}
