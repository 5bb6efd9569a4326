/* A small recursive-descent JSON reader; see json.h. */
#include "config.h"
#include "json.h"
#include "table.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct parser {
	const char *start, *p, *end;
	const char *name;
	struct errbuf *err;
};

/* "NAME:LINE:COL: what": the position of the parser's cursor. */
static int fail(struct parser *ps, const char *what)
{
	size_t line = 1, col = 1;
	for (const char *q = ps->start; q < ps->p; q++) {
		if (*q == '\n') {
			line++;
			col = 1;
		} else {
			col++;
		}
	}
	return err_set(ps->err, "%s:%zu:%zu: %s", ps->name, line, col, what);
}

static void skip_space(struct parser *ps)
{
	while (ps->p < ps->end && (*ps->p == ' ' || *ps->p == '\t' || *ps->p == '\n' || *ps->p == '\r'))
		ps->p++;
}

static int literal(struct parser *ps, const char *word, enum json_kind type, struct json_node *n)
{
	size_t len = strlen(word);
	if ((size_t)(ps->end - ps->p) < len || memcmp(ps->p, word, len) != 0)
		return fail(ps, "not a JSON value");
	ps->p += len;
	n->type = type;
	return 0;
}

static int is_digit(char c)
{
	return c >= '0' && c <= '9';
}

/* RFC 8259's number grammar, checked before strtod sees the token. */
static int number(struct parser *ps, struct json_node *n)
{
	const char *s = ps->p, *q = s;
	if (q < ps->end && *q == '-')
		q++;
	if (q < ps->end && *q == '0') {
		q++;
	} else if (q < ps->end && is_digit(*q)) {
		while (q < ps->end && is_digit(*q))
			q++;
	} else {
		return fail(ps, "not a JSON value");
	}
	if (q < ps->end && *q == '.') {
		q++;
		if (q >= ps->end || !is_digit(*q))
			return fail(ps, "bad number: no digit after '.'");
		while (q < ps->end && is_digit(*q))
			q++;
	}
	if (q < ps->end && (*q == 'e' || *q == 'E')) {
		q++;
		if (q < ps->end && (*q == '+' || *q == '-'))
			q++;
		if (q >= ps->end || !is_digit(*q))
			return fail(ps, "bad number: no digit in the exponent");
		while (q < ps->end && is_digit(*q))
			q++;
	}
	n->text = strndup(s, (size_t)(q - s));
	if (!n->text)
		return fail(ps, "out of memory");
	n->type = JSON_NUMBER;
	n->num = strtod(n->text, NULL);
	ps->p = q;
	return 0;
}

static int hex4(struct parser *ps, const char *q, unsigned *out)
{
	unsigned v = 0;
	if (ps->end - q < 4)
		return -1;
	for (int i = 0; i < 4; i++) {
		char c = q[i];
		v <<= 4;
		if (is_digit(c))
			v |= (unsigned)(c - '0');
		else if (c >= 'a' && c <= 'f')
			v |= (unsigned)(c - 'a' + 10);
		else if (c >= 'A' && c <= 'F')
			v |= (unsigned)(c - 'A' + 10);
		else
			return -1;
	}
	*out = v;
	return 0;
}

static size_t put_utf8(char *w, unsigned cp)
{
	if (cp < 0x80) {
		w[0] = (char)cp;
		return 1;
	}
	if (cp < 0x800) {
		w[0] = (char)(0xc0 | cp >> 6);
		w[1] = (char)(0x80 | (cp & 0x3f));
		return 2;
	}
	if (cp < 0x10000) {
		w[0] = (char)(0xe0 | cp >> 12);
		w[1] = (char)(0x80 | (cp >> 6 & 0x3f));
		w[2] = (char)(0x80 | (cp & 0x3f));
		return 3;
	}
	w[0] = (char)(0xf0 | cp >> 18);
	w[1] = (char)(0x80 | (cp >> 12 & 0x3f));
	w[2] = (char)(0x80 | (cp >> 6 & 0x3f));
	w[3] = (char)(0x80 | (cp & 0x3f));
	return 4;
}

/* \uXXXX at q (just past the backslash-u), a surrogate pair joined; a lone
 * surrogate becomes U+FFFD. Returns the characters consumed, 0 if malformed. */
static size_t unicode_escape(struct parser *ps, const char *q, unsigned *cp)
{
	unsigned hi, lo;
	if (hex4(ps, q, &hi) < 0)
		return 0;
	*cp = hi;
	if (hi >= 0xdc00 && hi <= 0xdfff) {
		*cp = 0xfffd;
	} else if (hi >= 0xd800 && hi <= 0xdbff) {
		*cp = 0xfffd;
		if (ps->end - q >= 10 && q[4] == '\\' && q[5] == 'u' && hex4(ps, q + 6, &lo) == 0 &&
		    lo >= 0xdc00 && lo <= 0xdfff) {
			*cp = 0x10000 + ((hi - 0xd800) << 10) + (lo - 0xdc00);
			return 10;
		}
	}
	return 4;
}

static char simple_escape(char c)
{
	switch (c) {
	case '"': return '"';
	case '\\': return '\\';
	case '/': return '/';
	case 'b': return '\b';
	case 'f': return '\f';
	case 'n': return '\n';
	case 'r': return '\r';
	case 't': return '\t';
	default: return 0;
	}
}

/* A string at the cursor (on its opening quote), decoded into *out. The
 * decoded text is never longer than the source, so one allocation of the
 * source's length suffices; U+0000 is refused (the text is a C string). */
static int string(struct parser *ps, char **out)
{
	const char *q = ps->p + 1, *close = q;
	while (close < ps->end && *close != '"')
		close += *close == '\\' && close + 1 < ps->end ? 2 : 1;
	if (close >= ps->end)
		return fail(ps, "unterminated string");
	char *buf = malloc((size_t)(close - q) + 1), *w = buf;
	if (!buf)
		return fail(ps, "out of memory");
	while (q < close) {
		unsigned char c = (unsigned char)*q;
		if (c < 0x20) {
			ps->p = q;
			free(buf);
			return fail(ps, "control character in a string");
		}
		if (c != '\\') {
			*w++ = *q++;
			continue;
		}
		char e = simple_escape(q[1]);
		if (e) {
			*w++ = e;
			q += 2;
			continue;
		}
		unsigned cp = 0;
		size_t used = q[1] == 'u' ? unicode_escape(ps, q + 2, &cp) : 0;
		if (!used || cp == 0) {
			ps->p = q;
			free(buf);
			return fail(ps, used ? "\\u0000 in a string" : "bad escape in a string");
		}
		w += put_utf8(w, cp);
		q += 2 + used;
	}
	*w = '\0';
	*out = buf;
	ps->p = close + 1;
	return 0;
}

static int value(struct parser *ps, struct json_node *n, int depth);

/* Appends a zeroed node to n's children; NULL when out of memory. */
static struct json_node *add_kid(struct json_node *n, size_t *cap)
{
	if (n->nkids == *cap) {
		size_t ncap = *cap ? 2 * *cap : 8;
		struct json_node *k = realloc(n->kids, ncap * sizeof(*k));
		if (!k)
			return NULL;
		n->kids = k;
		*cap = ncap;
	}
	struct json_node *kid = &n->kids[n->nkids++];
	memset(kid, 0, sizeof(*kid));
	return kid;
}

/* An object or array; the cursor is on its opening bracket. */
static int container(struct parser *ps, struct json_node *n, int depth)
{
	int is_object = *ps->p == '{';
	char close = is_object ? '}' : ']';
	size_t cap = 0;

	n->type = is_object ? JSON_OBJECT : JSON_ARRAY;
	if (depth >= JSON_MAX_DEPTH)
		return fail(ps, "nested too deeply");
	ps->p++;
	skip_space(ps);
	if (ps->p < ps->end && *ps->p == close) {
		ps->p++;
		return 0;
	}
	for (;;) {
		struct json_node *kid = add_kid(n, &cap);
		if (!kid)
			return fail(ps, "out of memory");
		skip_space(ps);
		if (is_object) {
			if (ps->p >= ps->end || *ps->p != '"')
				return fail(ps, "expected a member name in quotes");
			if (string(ps, &kid->key) < 0)
				return -1;
			skip_space(ps);
			if (ps->p >= ps->end || *ps->p != ':')
				return fail(ps, "expected ':' after a member name");
			ps->p++;
		}
		if (value(ps, kid, depth + 1) < 0)
			return -1;
		skip_space(ps);
		if (ps->p < ps->end && *ps->p == ',') {
			ps->p++;
			continue;
		}
		if (ps->p < ps->end && *ps->p == close) {
			ps->p++;
			return 0;
		}
		return fail(ps, is_object ? "expected ',' or '}'" : "expected ',' or ']'");
	}
}

static int value(struct parser *ps, struct json_node *n, int depth)
{
	skip_space(ps);
	if (ps->p >= ps->end)
		return fail(ps, "unexpected end of the text");
	switch (*ps->p) {
	case '{':
	case '[':
		return container(ps, n, depth);
	case '"':
		n->type = JSON_STRING;
		return string(ps, &n->text);
	case 't':
		return literal(ps, "true", JSON_TRUE, n);
	case 'f':
		return literal(ps, "false", JSON_FALSE, n);
	case 'n':
		return literal(ps, "null", JSON_NULL, n);
	default:
		return number(ps, n);
	}
}

static void free_kids(struct json_node *n)
{
	for (size_t i = 0; i < n->nkids; i++) {
		free_kids(&n->kids[i]);
		free(n->kids[i].key);
		free(n->kids[i].text);
	}
	free(n->kids);
	n->kids = NULL;
	n->nkids = 0;
}

void json_free(struct json_node *n)
{
	if (!n)
		return;
	free_kids(n);
	free(n->key);
	free(n->text);
	memset(n, 0, sizeof(*n));
}

int json_parse(struct json_node *root, const char *name, const char *text, size_t len,
	       struct errbuf *err)
{
	struct parser ps = { text, text, text + len, name, err };

	memset(root, 0, sizeof(*root));
	if (value(&ps, root, 0) < 0) {
		json_free(root);
		return -1;
	}
	skip_space(&ps);
	if (ps.p != ps.end) {
		fail(&ps, "text after the end of the document");
		json_free(root);
		return -1;
	}
	return 0;
}

int json_read_file(struct json_node *root, const char *path, struct errbuf *err)
{
	size_t len = 0;
	char *text = read_text_file(path, JSON_MAX_FILE, &len, err);
	memset(root, 0, sizeof(*root));
	if (!text)
		return -1;
	int rc = json_parse(root, path, text, len, err);
	free(text);
	return rc;
}

static const struct json_node *member(const struct json_node *n, const char *name, size_t len)
{
	if (n->type == JSON_OBJECT) {
		for (size_t i = 0; i < n->nkids; i++)
			if (strlen(n->kids[i].key) == len && memcmp(n->kids[i].key, name, len) == 0)
				return &n->kids[i];
		return NULL;
	}
	if (n->type != JSON_ARRAY || len == 0 || len > 9)
		return NULL;
	size_t idx = 0;
	for (size_t i = 0; i < len; i++) {
		if (!is_digit(name[i]))
			return NULL;
		idx = idx * 10 + (size_t)(name[i] - '0');
	}
	return idx < n->nkids ? &n->kids[idx] : NULL;
}

const struct json_node *json_get(const struct json_node *n, const char *path)
{
	while (n && *path) {
		const char *dot = strchr(path, '.');
		size_t len = dot ? (size_t)(dot - path) : strlen(path);
		n = member(n, path, len);
		path += len + (dot != NULL);
	}
	return n;
}

const char *json_scalar_text(const struct json_node *n)
{
	if (!n)
		return "";
	switch (n->type) {
	case JSON_STRING:
	case JSON_NUMBER:
		return n->text;
	case JSON_TRUE:
		return "true";
	case JSON_FALSE:
		return "false";
	default:
		return "";
	}
}

void json_write_string(FILE *f, const char *s)
{
	fputc('"', f);
	for (; s && *s; s++) {
		unsigned char c = (unsigned char)*s;
		if (c == '"' || c == '\\')
			fprintf(f, "\\%c", c);
		else if (c < 0x20)
			fprintf(f, "\\u%04x", c);
		else
			fputc(c, f);
	}
	fputc('"', f);
}
