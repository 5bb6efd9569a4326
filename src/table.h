/* Tables of text cells: the CSV files that tbench-stats reads (runs.csv,
 * summary.csv) and writes. Columns are found by the names in the header. */
#ifndef TBENCH_TABLE_H
#define TBENCH_TABLE_H

#include <stddef.h>
#include <stdio.h>

#include "util.h"

struct table {
	char *name;             /* the file's name, for messages */
	size_t ncols, nrows;
	char **head;            /* ncols column names */
	char ***rows;           /* rows[r][c]; every row has ncols cells */
	size_t *line;           /* the line each row starts on, for messages */
};

/* CSV (RFC 4180: quoted cells may hold commas, "" and line breaks; \n or
 * \r\n line ends) with a header line; blank lines and lines starting with
 * '#' are skipped. A row with another number of cells than the header is an
 * error naming NAME:LINE. 0, or -1 with err set. */
int table_parse(struct table *t, const char *name, const char *text, size_t len,
		struct errbuf *err);
int table_read(struct table *t, const char *path, struct errbuf *err);
void table_free(struct table *t);
/* The index of the column called name, -1 when there is none. */
int table_col(const struct table *t, const char *name);

/* Comma-separated names such as "backend,clients,offload"; empty items dropped. */
struct strlist {
	size_t n;
	char **v;
};
struct strlist strlist_split(const char *s);
void strlist_free(struct strlist *l);
/* Frees n strings and the array holding them (NULL: nothing). */
void strv_free(char **v, size_t n);

/* CSV out: a cell quoted only when it must be; a number in %.6g, nothing
 * for NaN or infinity; a whole row of cells and its line end. */
void csv_put_field(FILE *f, const char *s);
void csv_put_num(FILE *f, double v);
void csv_put_row(FILE *f, char *const *cells, size_t n);
/* A cell as a number: NaN when empty or not wholly a number. */
double csv_num(const char *s);

#endif
