/* Building a JSON document as a tree (json-c) and writing it once: what
 * json-c lacks for tbench's documents. A figure is a number written with
 * the printf format its precision needs ("%.6f"), kept as that text. */
#ifndef TBENCH_JSON_BUILD_H
#define TBENCH_JSON_BUILD_H

#include <json-c/json.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

/* v written with fmt (one double conversion); null when v is not finite. */
struct json_object *json_fixed(const char *fmt, double v);
/* A string; null for NULL. */
struct json_object *json_string(const char *s);
/* A histogram's bucket, [low, high, count], kept on one line when the
 * document is indented: a latency object has dozens. */
struct json_object *json_bucket(uint64_t low, uint64_t high, uint64_t count);
/* Adds key: v to the object o (v NULL: null). */
void json_put(struct json_object *o, const char *key, struct json_object *v);
/* The document, indented, and a newline: 0, or -1 with errno ENOMEM when
 * json-c could not make its text. Write errors are f's (ferror). */
int json_write_doc(FILE *f, struct json_object *doc);

#endif
