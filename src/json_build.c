/* Building and writing JSON through json-c; see json_build.h. */
#include "config.h"
#include "json_build.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>

struct json_object *json_fixed(const char *fmt, double v)
{
	char text[400];   /* "%.6f" of the largest double: 316 characters */

	if (!isfinite(v))
		return NULL;
	snprintf(text, sizeof(text), fmt, v);
	return json_object_new_double_s(v, text);
}

struct json_object *json_string(const char *s)
{
	return s ? json_object_new_string(s) : NULL;
}

static int bucket_on_one_line(struct json_object *a, struct printbuf *pb, int level, int flags)
{
	(void)level;
	(void)flags;
	for (size_t i = 0; i < json_object_array_length(a); i++)
		sprintbuf(pb, "%s%" PRIu64, i ? ", " : "[",
			  json_object_get_uint64(json_object_array_get_idx(a, i)));
	return sprintbuf(pb, "]") < 0 ? -1 : 0;
}

struct json_object *json_bucket(uint64_t low, uint64_t high, uint64_t count)
{
	struct json_object *a = json_object_new_array_ext(3);

	if (!a)
		return NULL;
	json_object_array_add(a, json_object_new_uint64(low));
	json_object_array_add(a, json_object_new_uint64(high));
	json_object_array_add(a, json_object_new_uint64(count));
	json_object_set_serializer(a, bucket_on_one_line, NULL, NULL);
	return a;
}

void json_put(struct json_object *o, const char *key, struct json_object *v)
{
	json_object_object_add(o, key, v);
}

int json_write_doc(FILE *f, struct json_object *doc)
{
	int flags = JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_SPACED | JSON_C_TO_STRING_NOSLASHESCAPE;
	const char *text = json_object_to_json_string_ext(doc, flags);

	if (!text) {
		errno = ENOMEM;
		return -1;
	}
	fputs(text, f);
	fputc('\n', f);
	return 0;
}
