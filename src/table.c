/* CSV tables for the statistics tools; see table.h. */
#include "config.h"
#include "table.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Tables larger than this are refused: a sweep of thousands of runs is a
 * few megabytes. */
#define TABLE_MAX_FILE ((size_t)256 << 20)

/* ---- parsing ------------------------------------------------------------- */

struct cells {
	size_t n, cap;
	char **v;
};

static void cells_push(struct cells *c, char *s)
{
	if (c->n == c->cap)
		c->v = xrealloc(c->v, (c->cap = c->cap ? 2 * c->cap : 16) * sizeof(*c->v));
	c->v[c->n++] = s;
}

static void cells_free(struct cells *c)
{
	for (size_t i = 0; i < c->n; i++)
		free(c->v[i]);
	free(c->v);
	memset(c, 0, sizeof(*c));
}

struct cursor {
	const char *p, *end;
	size_t line;
};

/* Where the cell starting at p ends: the ',' or line end after it (a
 * quoted cell may hold both). */
static const char *cell_end(const char *p, const char *end)
{
	if (p < end && *p == '"') {
		for (p++; p < end; p++) {
			if (*p != '"')
				continue;
			if (p + 1 < end && p[1] == '"') {
				p++;
				continue;
			}
			p++;
			break;
		}
	}
	while (p < end && *p != ',' && *p != '\n')
		p++;
	return p;
}

/* One cell at the cursor, which is left on the ',' or line end after it. */
static char *parse_cell(struct cursor *cur)
{
	const char *p = cur->p, *stop = cell_end(cur->p, cur->end);
	char *out = xrealloc(NULL, (size_t)(stop - p) + 1), *w = out;

	if (p < stop && *p == '"') {
		for (p++; p < stop; p++) {
			if (*p == '"' && p + 1 < stop && p[1] == '"') {
				*w++ = '"';
				p++;
			} else if (*p == '"') {
				p++;
				break;
			} else {
				if (*p == '\n')
					cur->line++;
				*w++ = *p;
			}
		}
	}
	/* Unquoted text, or whatever follows a closing quote; a \r before the line end is dropped. */
	int at_eol = stop == cur->end || *stop == '\n';
	for (; p < stop; p++)
		if (!(*p == '\r' && p + 1 == stop && at_eol))
			*w++ = *p;
	*w = '\0';
	cur->p = stop;
	return out;
}

/* One record: its cells into c; the cursor is left past its line end. */
static void parse_record(struct cursor *cur, struct cells *c)
{
	for (;;) {
		cells_push(c, parse_cell(cur));
		if (cur->p < cur->end && *cur->p == ',') {
			cur->p++;
			continue;
		}
		if (cur->p < cur->end) {      /* the '\n' */
			cur->p++;
			cur->line++;
		}
		return;
	}
}

/* Skips blank and comment lines; 0 at the end of the text. */
static int next_record(struct cursor *cur)
{
	while (cur->p < cur->end) {
		const char *eol = memchr(cur->p, '\n', (size_t)(cur->end - cur->p));
		const char *stop = eol ? eol : cur->end;
		int blank = stop == cur->p || (stop == cur->p + 1 && *cur->p == '\r');
		if (!blank && *cur->p != '#')
			return 1;
		cur->p = eol ? eol + 1 : cur->end;
		cur->line++;
	}
	return 0;
}

static void add_row(struct table *t, char **cells, size_t line, size_t *cap)
{
	if (t->nrows == *cap) {
		*cap = *cap ? 2 * *cap : 64;
		t->rows = xrealloc(t->rows, *cap * sizeof(*t->rows));
		t->line = xrealloc(t->line, *cap * sizeof(*t->line));
	}
	t->rows[t->nrows] = cells;
	t->line[t->nrows++] = line;
}

int table_parse(struct table *t, const char *name, const char *text, size_t len,
		struct errbuf *err)
{
	struct cursor cur = { text, text + len, 1 };
	size_t cap = 0;

	memset(t, 0, sizeof(*t));
	t->name = xstrdup(name);
	while (next_record(&cur)) {
		struct cells c = { 0, 0, NULL };
		size_t line = cur.line;
		parse_record(&cur, &c);
		if (!t->head && cur.p[-1] != '\n') {   /* a header always has its line end */
			err_set(err, "%s:%zu: the header ends at column %zu ('%s') without a line end: "
				"the file was cut short; write it again", name, line, c.n, c.v[c.n - 1]);
			cells_free(&c);
			table_free(t);
			return -1;
		}
		if (!t->head) {
			t->head = c.v;
			t->ncols = c.n;
			continue;
		}
		if (c.n != t->ncols) {
			err_set(err, "%s:%zu: %zu fields, the header has %zu", name, line, c.n, t->ncols);
			cells_free(&c);
			table_free(t);
			return -1;
		}
		add_row(t, c.v, line, &cap);
	}
	if (!t->head) {
		err_set(err, "%s: empty (no header line)", name);
		table_free(t);
		return -1;
	}
	return 0;
}

int table_read(struct table *t, const char *path, struct errbuf *err)
{
	size_t len = 0;
	char *text = read_text_file(path, TABLE_MAX_FILE, &len, err);

	memset(t, 0, sizeof(*t));
	if (!text)
		return -1;
	int rc = table_parse(t, path, text, len, err);
	free(text);
	return rc;
}

void strv_free(char **v, size_t n)
{
	if (!v)
		return;
	for (size_t i = 0; i < n; i++)
		free(v[i]);
	free(v);
}

void table_free(struct table *t)
{
	for (size_t r = 0; r < t->nrows; r++)
		strv_free(t->rows[r], t->ncols);
	free(t->rows);
	free(t->line);
	strv_free(t->head, t->ncols);
	free(t->name);
	memset(t, 0, sizeof(*t));
}

int table_col(const struct table *t, const char *name)
{
	for (size_t i = 0; i < t->ncols; i++)
		if (strcmp(t->head[i], name) == 0)
			return (int)i;
	return -1;
}

/* ---- names and cells ------------------------------------------------------ */

struct strlist strlist_split(const char *s)
{
	struct strlist l = { 0, NULL };
	while (*s) {
		size_t len = strcspn(s, ",");
		if (len) {
			l.v = xrealloc(l.v, (l.n + 1) * sizeof(*l.v));
			l.v[l.n] = xrealloc(NULL, len + 1);
			memcpy(l.v[l.n], s, len);
			l.v[l.n++][len] = '\0';
		}
		s += len + (s[len] == ',');
	}
	return l;
}

void strlist_free(struct strlist *l)
{
	strv_free(l->v, l->n);
	l->v = NULL;
	l->n = 0;
}

void csv_put_field(FILE *f, const char *s)
{
	if (!strpbrk(s, ",\"\r\n")) {
		fputs(s, f);
		return;
	}
	fputc('"', f);
	for (; *s; s++) {
		if (*s == '"')
			fputc('"', f);
		fputc(*s, f);
	}
	fputc('"', f);
}

void csv_put_num(FILE *f, double v)
{
	if (isfinite(v))
		fprintf(f, "%.6g", v);
}

void csv_put_row(FILE *f, char *const *cells, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		if (i)
			fputc(',', f);
		csv_put_field(f, cells[i]);
	}
	fputc('\n', f);
}

double csv_num(const char *s)
{
	char *end;
	if (!*s)
		return NAN;
	errno = 0;
	double v = strtod(s, &end);
	if (end == s || *end || errno == ERANGE)
		return NAN;
	return v;
}
