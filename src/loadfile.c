/* NBENCH loadfile parser. Reads a line the way dbench 4.0's child does, so
 * that every loadfile dbench runs, we run, with the same bytes on the wire:
 * backslashes become slashes and " /" becomes " "; blank-separated tokens
 * where a double quote toggles quoting; at most 19 tokens; a first token
 * starting with a digit is a timestamp; the last token is the NT status;
 * numbers are strtol(s, NULL, 0); a path counts as -D's directory plus the
 * path when it starts with '/', and as nothing otherwise.
 *
 * What dbench skips or guesses at (unknown operations, malformed status or
 * numbers, missing or extra fields) is noted once per kind and taken as
 * dbench takes it; with `strict` it is an error instead. Everything else
 * that can be wrong is found here, before any client starts. */
#include "config.h"
#include "loadfile.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

enum { MAX_TOKENS = 19, MAX_FIELDS = 4, MAX_NOTED_NAMES = 32, SHOWN = 40 };

/* Fields after the keyword: P = path, N = number. The NT status follows. */
static const struct {
	const char *types;
	const char *names[MAX_FIELDS];
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
	[OP_SLEEP]     = { "N",    { "microseconds" } },
};

/* The kinds of leniency, each noted once per file. */
enum lenient {
	LENIENT_FEW_TOKENS, LENIENT_STATUS, LENIENT_MISSING, LENIENT_EXTRA,
	LENIENT_NUMBER, LENIENT_NEGATIVE, LENIENT_PATH, LENIENT_KINDS
};

struct token {
	const char *s;
	size_t len;
};

struct parser {
	const char *name;
	const struct loadfile_options *opt;
	size_t dirlen;
	unsigned dir_refs;          /* "client1" in the directory itself */
	unsigned line;
	int line_lenient;           /* this line was taken leniently */
	unsigned noted;             /* bit per enum lenient */
	char noted_names[MAX_NOTED_NAMES][SHOWN + 1];
	unsigned n_noted_names;
	char *scratch;              /* the current line, rewritten as dbench does */
	size_t scratch_len;
	struct errbuf *err;
};

static const struct loadfile_options defaults = { .directory = "." };

static int fail(struct parser *p, const char *fmt, ...)
{
	int n = snprintf(p->err->msg, sizeof(p->err->msg), "%s:%u: ", p->name, p->line);
	va_list ap;

	va_start(ap, fmt);
	if (n >= 0 && (size_t)n < sizeof(p->err->msg))
		vsnprintf(p->err->msg + n, sizeof(p->err->msg) - n, fmt, ap);
	va_end(ap);
	return -1;
}

static const char *shown(const struct token *t, char *buf, size_t size)
{
	return str_escape(buf, size, t->s, t->len, SHOWN);
}

/* A leniency: an error when strict, else noted once per kind and taken. */
static int lenient(struct parser *p, enum lenient kind, const char *fmt, ...)
{
	char msg[sizeof(p->err->msg)];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (p->opt->strict)
		return fail(p, "%s (--strict)", msg);
	p->line_lenient = 1;
	if (!(p->noted & 1u << kind) && p->opt->note) {
		char line[sizeof(msg) + 160];
		snprintf(line, sizeof(line), "%s:%u: %s (as dbench does; later lines like it "
			 "are not shown; --strict refuses them)", p->name, p->line, msg);
		p->opt->note(p->opt->note_ctx, line);
	}
	p->noted |= 1u << kind;
	return 0;
}

/* dbench's unknown-operation message, once per name. */
static void note_unknown(struct parser *p, const struct token *t)
{
	char name[SHOWN * 4 + 4];

	shown(t, name, sizeof(name));
	p->line_lenient = 1;
	for (unsigned i = 0; i < p->n_noted_names; i++)
		if (strncmp(p->noted_names[i], name, SHOWN) == 0)
			return;
	if (p->n_noted_names < MAX_NOTED_NAMES) {
		char *slot = p->noted_names[p->n_noted_names++];
		size_t n = strlen(name) < SHOWN ? strlen(name) : SHOWN;
		memcpy(slot, name, n);
		slot[n] = 0;
	}
	if (p->opt->note) {
		char line[sizeof(name) + 512];
		snprintf(line, sizeof(line), "%s:%u: unknown operation %s, skipped",
			 p->name, p->line, name);
		p->opt->note(p->opt->note_ctx, line);
	}
}

/* Copies the line into scratch as dbench rewrites it: '\' -> '/', then
 * " /" -> " " (one slash per blank). Returns the new length. */
static size_t rewrite_line(struct parser *p, const char *s, size_t len)
{
	size_t n = 0;

	for (size_t i = 0; i < len; i++) {
		char c = s[i] == '\\' ? '/' : s[i];
		p->scratch[n++] = c;
		if (c == ' ' && i + 1 < len && (s[i + 1] == '/' || s[i + 1] == '\\'))
			i++;
	}
	return n;
}

static int is_blank(char c)
{
	return c == ' ' || c == '\t' || c == '\r';
}

/* Splits scratch into tokens in place: a double quote toggles quoting and
 * is dropped, as dbench's next_token does. At most MAX_TOKENS are kept. */
static int tokenize(char *s, size_t len, struct token *tok)
{
	char *end = s + len, *out = s;
	int n = 0;

	while (n < MAX_TOKENS) {
		while (s < end && is_blank(*s))
			s++;
		if (s == end)
			break;
		char *start = out;
		for (int quoted = 0; s < end && (quoted || !is_blank(*s)); s++) {
			if (*s == '"')
				quoted = !quoted;
			else
				*out++ = *s;
		}
		tok[n++] = (struct token){ start, (size_t)(out - start) };
		/* Tokens are written back to back: out never passes s. */
	}
	return n;
}

static unsigned count_client_name(const char *s, size_t len)
{
	static const char name[] = "client1";
	const size_t nlen = sizeof(name) - 1;
	unsigned n = 0;

	for (size_t i = 0; i + nlen <= len; i++) {
		if (memcmp(s + i, name, nlen) == 0) {
			n++;
			i += nlen - 1;
		}
	}
	return n;
}

static int starts_with(const struct token *t, const char *prefix)
{
	size_t n = strlen(prefix);
	return t->len >= n && memcmp(t->s, prefix, n) == 0;
}

/* strtol(s, NULL, 0) as dbench's ival(), noting a token that is not all number. */
static int number(struct parser *p, enum smb_op type, int field, const struct token *t, long *out)
{
	char buf[64], shownbuf[SHOWN * 4 + 4];
	size_t n = t->len < sizeof(buf) - 1 ? t->len : sizeof(buf) - 1;
	char *end;

	memcpy(buf, t->s, n);
	buf[n] = 0;
	errno = 0;
	*out = strtol(buf, &end, 0);
	if (end == buf || *end || n < t->len || errno)
		return lenient(p, LENIENT_NUMBER, "%s: field '%s' is not a number: '%s', taken as %ld",
			       smb_keyword(type), fields[type].names[field],
			       shown(t, shownbuf, sizeof(shownbuf)), *out);
	return 0;
}

/* Sizes and counts cannot be negative on the wire: dbench's would wrap. */
static int not_negative(struct parser *p, enum smb_op type, int field, long *v)
{
	if (*v >= 0)
		return 0;
	long was = *v;
	*v = 0;
	return lenient(p, LENIENT_NEGATIVE, "%s: field '%s' is %ld, taken as 0",
		       smb_keyword(type), fields[type].names[field], was);
}

static int usage_form(struct parser *p, enum smb_op op, enum lenient kind, const char *what)
{
	const char *types = fields[op].types;
	char form[160];
	int n = snprintf(form, sizeof(form), "%s", smb_keyword(op));

	for (int i = 0; types[i] && n > 0 && (size_t)n < sizeof(form); i++)
		n += snprintf(form + n, sizeof(form) - n,
			      types[i] == 'P' ? " \"%s\"" : " %s", fields[op].names[i]);
	return lenient(p, kind, "%s: %s (expected: %s STATUS)", smb_keyword(op), what, form);
}

/* A path field: -D's directory plus the path when it starts with '/', as
 * dbench sizes it; any other token is an empty name. */
static int path_field(struct parser *p, enum smb_op type, int field, const struct token *t,
		      uint32_t *len, unsigned *refs)
{
	char buf[SHOWN * 4 + 4];

	if (t->len && t->s[0] == '/') {
		if (p->dirlen + t->len >= WIRE_LIMIT)   /* never a valid frame; and no 32-bit wrap */
			return fail(p, "%s: field '%s' is a path of %zu bytes, over the wire limit of %d",
				    smb_keyword(type), fields[type].names[field], p->dirlen + t->len,
				    WIRE_LIMIT - 1);
		*len = (uint32_t)(p->dirlen + t->len);
		*refs += p->dir_refs + count_client_name(t->s, t->len);
		return 0;
	}
	*len = 0;
	return lenient(p, LENIENT_PATH, "%s: field '%s' is not a path starting with '\\': '%s', "
		       "taken as an empty name", smb_keyword(type), fields[type].names[field],
		       shown(t, buf, sizeof(buf)));
}

/* The fields of one operation: tok[0] is the keyword, tok[ntok - 1] the
 * status. As in dbench, a missing field reads the status or nothing. */
static int parse_fields(struct parser *p, enum smb_op type, const struct token *tok, int ntok,
			struct smb_args *a, long num[MAX_FIELDS], unsigned *refs)
{
	static const struct token none = { "", 0 };
	const char *types = fields[type].types;
	int nf = (int)strlen(types), npath = 0, nnum = 0;

	if (ntok - 2 < nf) {
		char what[96];
		snprintf(what, sizeof(what), "missing field '%s', taken as %s",
			 fields[type].names[ntok - 2], types[ntok - 2] == 'P' ? "an empty name" : "0");
		if (usage_form(p, type, LENIENT_MISSING, what) < 0)
			return -1;
	} else if (ntok - 2 > nf && usage_form(p, type, LENIENT_EXTRA,
					      "extra fields before the status, ignored") < 0) {
		return -1;
	}
	for (int i = 0; i < nf; i++) {
		const struct token *t = i + 1 < ntok ? &tok[i + 1] : &none;
		int rc;
		if (types[i] == 'P')
			rc = path_field(p, type, i, t, npath++ ? &a->len2 : &a->len1, refs);
		else if (i + 1 >= ntok - 1 && !starts_with(t, "0x"))
			rc = (num[nnum++] = 0);   /* dbench's ival() of the status or of nothing */
		else
			rc = number(p, type, i, t, &num[nnum++]);
		if (rc < 0)
			return -1;
	}
	return 0;
}

/* The sizes a WriteX/ReadX/FIND_FIRST/Sleep line puts on the wire. */
static int parse_sizes(struct parser *p, enum smb_op type, long num[MAX_FIELDS],
		       struct smb_args *a, uint32_t *sleep_us)
{
	const char *word = smb_keyword(type);

	if (type == OP_FIND) {
		if (not_negative(p, type, 3, &num[2]) < 0)
			return -1;
		a->count = num[2] > (long)(UINT32_MAX / 90) ? UINT32_MAX / 90 : (uint32_t)num[2];
	}
	if (type == OP_WRITEX || type == OP_READX) {
		if (not_negative(p, type, 2, &num[2]) < 0 || not_negative(p, type, 3, &num[3]) < 0)
			return -1;
		if (num[2] >= WIRE_LIMIT || num[3] >= WIRE_LIMIT)
			return fail(p, "%s: size %ld over the wire limit of %d bytes",
				    word, num[2] > num[3] ? num[2] : num[3], WIRE_LIMIT - 1);
		a->size = (uint32_t)num[2];
		a->ret_size = (uint32_t)num[3];
	}
	if (type == OP_SLEEP) {
		if (not_negative(p, type, 0, &num[0]) < 0)
			return -1;
		if (num[0] > 3600L * 1000000)
			return fail(p, "Sleep: %ld microseconds is longer than an hour", num[0]);
		*sleep_us = (uint32_t)num[0];
	}
	return 0;
}

/* Turns the tokens of one line into an op. Returns 1 when dbench would
 * skip the line, 0 with *op filled in, -1 on error. */
static int parse_op(struct parser *p, struct token *tok, int ntok, struct op *op)
{
	char buf[SHOWN * 4 + 4];
	uint32_t due_ms = 0, sleep_us = 0;
	enum smb_op type;

	if (tok[0].len && isdigit((unsigned char)tok[0].s[0])) {   /* a timestamp: seconds into the pass */
		char num[64];
		size_t n = tok[0].len < sizeof(num) - 1 ? tok[0].len : sizeof(num) - 1;
		memcpy(num, tok[0].s, n);
		num[n] = 0;
		double secs = strtod(num, NULL);
		if (!(secs >= 0 && secs < 4e6))
			return fail(p, "timestamp '%s' is not a time in seconds", shown(&tok[0], buf, sizeof(buf)));
		due_ms = (uint32_t)(secs * 1000);
		tok++, ntok--;
	}
	if (ntok < 2)
		return lenient(p, LENIENT_FEW_TOKENS, "a line needs an operation and a status, skipped") < 0 ? -1 : 1;
	if (!starts_with(&tok[ntok - 1], "NT_STATUS_") && !starts_with(&tok[ntok - 1], "0x"))
		return lenient(p, LENIENT_STATUS, "badly formed status '%s' (not NT_STATUS_... or 0x...), "
			       "line skipped", shown(&tok[ntok - 1], buf, sizeof(buf))) < 0 ? -1 : 1;
	if (smb_op_from_token(tok[0].s, tok[0].len, &type) < 0) {
		if (p->opt->strict)
			return fail(p, "unknown operation '%s' (--strict)", shown(&tok[0], buf, sizeof(buf)));
		note_unknown(p, &tok[0]);
		return 1;
	}

	struct smb_args a = { 0 };
	long num[MAX_FIELDS] = { 0 };
	unsigned refs = 0;
	if (parse_fields(p, type, tok, ntok, &a, num, &refs) < 0 ||
	    parse_sizes(p, type, num, &a, &sleep_us) < 0)
		return -1;
	struct smb_sizes sz = smb_size(type, &a);
	if (sz.send >= WIRE_LIMIT || sz.recv >= WIRE_LIMIT)
		return fail(p, "%s: exchange of %u bytes sent, %u received is over the wire limit of %d bytes",
			    smb_keyword(type), sz.send, sz.recv, WIRE_LIMIT - 1);
	if (2 * refs > UINT16_MAX)
		return fail(p, "%s: too many \"client1\" in its paths", smb_keyword(type));

	*op = (struct op){
		.send = sz.send, .recv = sz.recv, .payload = sz.payload,
		.line = p->line, .sleep_us = sleep_us, .due_ms = due_ms,
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
	if (op->due_ms)
		lf->has_timestamps = 1;
}

/* One line: blank, comment, skipped (1), an op (0), or an error (-1). */
static int parse_line(struct parser *p, const char *s, size_t len, struct op *op)
{
	struct token tok[MAX_TOKENS];

	p->line_lenient = 0;
	int ntok = tokenize(p->scratch, rewrite_line(p, s, len), tok);
	if (ntok == 0 || (tok[0].len && tok[0].s[0] == '#'))
		return 1;
	if (ntok < 2)
		return lenient(p, LENIENT_FEW_TOKENS, "a line needs an operation and a status, skipped") < 0 ? -1 : 1;
	if (starts_with(&tok[0], "SMB"))
		return fail(p, "this is a dbench 1 loadfile (lines start with SMB): use an NBENCH "
			    "loadfile such as dbench 4's client.txt");
	return parse_op(p, tok, ntok, op);
}

static int parser_init(struct parser *p, const char *name, const char *text, size_t len,
		       const struct loadfile_options *opt, struct errbuf *err)
{
	size_t longest = 0;

	memset(p, 0, sizeof(*p));
	p->name = name;
	p->opt = opt ? opt : &defaults;
	p->err = err;
	const char *dir = p->opt->directory ? p->opt->directory : ".";
	p->dirlen = strlen(dir);
	p->dir_refs = count_client_name(dir, p->dirlen);
	for (const char *s = text, *end = text + len; s < end;) {
		const char *nl = memchr(s, '\n', (size_t)(end - s));
		const char *eol = nl ? nl : end;
		if ((size_t)(eol - s) > longest)
			longest = (size_t)(eol - s);
		s = eol + 1;
	}
	p->scratch = malloc(longest + 1);
	return p->scratch ? 0 : -1;
}

/* The array is a shared mapping, not heap: fork() copies no page table of
 * it, so starting a thousand client processes does not copy it a thousand
 * times, and no client can write it (it is made read-only). */
static int map_ops(struct loadfile *lf, size_t n)
{
	size_t size = n * sizeof(*lf->ops);
	void *p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		return -1;
	lf->ops = p;
	lf->ops_map_size = size;
	return 0;
}

int loadfile_parse(const char *name, const char *text, size_t len,
		   const struct loadfile_options *opt, struct loadfile *lf, struct errbuf *err)
{
	struct parser p;
	const char *s = text, *end = text + len;
	size_t lines = 1;

	memset(lf, 0, sizeof(*lf));
	for (const char *q = text; (q = memchr(q, '\n', (size_t)(end - q))); q++)
		lines++;
	if (map_ops(lf, lines) < 0)
		return err_errno(err, "%s: mapping room for %zu operations", name, lines);
	lf->path = strdup(name);
	if (parser_init(&p, name, text, len, opt, err) < 0 || !lf->path) {
		free(p.scratch);
		loadfile_free(lf);
		return err_set(err, "%s: out of memory", name);
	}
	while (s < end) {
		const char *nl = memchr(s, '\n', (size_t)(end - s));
		const char *eol = nl ? nl : end;

		p.line++;
		int rc = parse_line(&p, s, (size_t)(eol - s), &lf->ops[lf->n_ops]);
		if (rc < 0)
			goto bad;
		lf->n_lenient += (uint32_t)p.line_lenient;
		if (rc == 0)
			account(lf, &lf->ops[lf->n_ops++]);
		s = eol + 1;
	}
	lf->n_lines = p.line;
	if (lf->n_ops == 0) {
		p.line = p.line ? p.line : 1;
		fail(&p, "no operations: the loadfile is empty, only comments, or only lines skipped");
		goto bad;
	}
	free(p.scratch);
	if (mprotect(lf->ops, lf->ops_map_size, PROT_READ) < 0) {
		err_errno(err, "%s: making the parsed operations read-only", name);
		loadfile_free(lf);
		return -1;
	}
	return 0;
bad:
	free(p.scratch);
	loadfile_free(lf);
	return -1;
}

/* The file is mapped, not copied: parsing reads it once, straight from the
 * page cache. */
int loadfile_read(const char *path, const struct loadfile_options *opt,
		  struct loadfile *lf, struct errbuf *err)
{
	struct stat st;
	int rc = -1;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	memset(lf, 0, sizeof(*lf));
	if (fd < 0)
		return err_errno(err, "%s: cannot open loadfile", path);
	if (fstat(fd, &st) < 0) {
		err_errno(err, "%s: cannot stat loadfile", path);
	} else if (!S_ISREG(st.st_mode)) {
		err_set(err, "%s: not a regular file", path);
	} else if (st.st_size == 0) {
		rc = loadfile_parse(path, "", 0, opt, lf, err);
	} else {
		void *text = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE | MAP_POPULATE, fd, 0);
		if (text == MAP_FAILED) {
			err_errno(err, "%s: cannot map loadfile", path);
		} else {
			rc = loadfile_parse(path, text, (size_t)st.st_size, opt, lf, err);
			munmap(text, (size_t)st.st_size);
		}
	}
	close(fd);
	return rc;
}

void loadfile_free(struct loadfile *lf)
{
	if (lf->ops)
		munmap(lf->ops, lf->ops_map_size);
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
