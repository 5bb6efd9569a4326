/* The JSON reader (json-c underneath) for the documents tbench writes (--json):
 * objects, arrays, strings, numbers, true, false, null. The text is parsed
 * once into a tree; values are looked up by a dotted path ("result.cpu.user_s").
 * Hostile input gives an error naming the line and column, never a crash:
 * every read is bounds-checked and nesting is limited. A member named
 * twice in an object: the last. */
#ifndef TBENCH_JSON_H
#define TBENCH_JSON_H

#include <stddef.h>
#include <stdio.h>

#include "util.h"

enum json_kind { JSON_NULL, JSON_FALSE, JSON_TRUE, JSON_NUMBER, JSON_STRING, JSON_ARRAY, JSON_OBJECT };

struct json_node {
	enum json_kind type;
	char *key;                  /* member name inside an object, else NULL */
	char *text;                 /* a string's value, a number as written; else NULL */
	double num;                 /* a number's value */
	size_t nkids;               /* members of an object, elements of an array */
	struct json_node *kids;
};

enum { JSON_MAX_DEPTH = 64 };
/* Files larger than this are refused: tbench's own are a few kilobytes. */
#define JSON_MAX_FILE ((size_t)64 << 20)

/* Parses text[0..len) into *root (free with json_free). NAME is used in
 * messages ("NAME:LINE:COL: ..."). 0, or -1 with err set. */
int json_parse(struct json_node *root, const char *name, const char *text, size_t len,
	       struct errbuf *err);
int json_read_file(struct json_node *root, const char *path, struct errbuf *err);
void json_free(struct json_node *n);

/* The value at a dotted path of member names ("settings.clients"); a
 * component that is all digits indexes an array. NULL when absent. */
const struct json_node *json_get(const struct json_node *n, const char *path);

/* A scalar as a CSV cell would hold it: a string's text, a number as
 * written, "true"/"false"; "" for null, objects, arrays and NULL. */
const char *json_scalar_text(const struct json_node *n);

#endif
