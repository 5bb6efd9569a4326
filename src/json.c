/* The JSON reader, on json-c's parser; see json.h. json-c parses (strict
 * RFC 8259, nesting limited); this file turns its tree into json_node's,
 * which keep each number's text as written for the CSV cells. */
#include "config.h"
#include "json.h"

#include <errno.h>
#include <stdbool.h>
#include <json-c/json.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* "NAME:LINE:COL: what", the position being the byte offset into text. */
static int fail_at(const char *name, const char *text, size_t offset, const char *what,
		   struct errbuf *err)
{
	size_t line = 1, col = 1;

	for (size_t i = 0; i < offset; i++) {
		if (text[i] == '\n') {
			line++;
			col = 1;
		} else {
			col++;
		}
	}
	return err_set(err, "%s:%zu:%zu: %s", name, line, col, what);
}

static int convert(struct json_node *n, struct json_object *o);

static size_t digits(const char *t, size_t i, size_t len)
{
	while (i < len && t[i] >= '0' && t[i] <= '9')
		i++;
	return i;
}

/* The end of the number at t[i], or where it breaks RFC 8259's grammar
 * (*bad set), which json-c's parser bends: it takes "1.". */
static size_t number_end(const char *t, size_t i, size_t len, bool *bad)
{
	i += i < len && t[i] == '-';
	size_t d = digits(t, i, len);
	*bad = d == i || (d > i + 1 && t[i] == '0');
	i = d;
	if (!*bad && i < len && t[i] == '.') {
		d = digits(t, i + 1, len);
		*bad = d == i + 1;
		i = *bad ? i + 1 : d;
	}
	if (!*bad && i < len && (t[i] == 'e' || t[i] == 'E')) {
		i++;
		i += i < len && (t[i] == '+' || t[i] == '-');
		d = digits(t, i, len);
		*bad = d == i;
		i = d;
	}
	return i;
}

/* What json-c lets through in a text it parsed: a number RFC 8259 does
 * not allow, a control character in a string. -1 with err naming the
 * place, else 0. */
static int strict_check(const char *name, const char *t, size_t len, struct errbuf *err)
{
	bool bad = false;

	for (size_t i = 0; i < len; i++) {
		if (t[i] == '"') {
			for (i++; i < len && t[i] != '"'; i++) {
				if ((unsigned char)t[i] < 0x20)
					return fail_at(name, t, i, "control character in a string", err);
				i += t[i] == '\\';
			}
		} else if (t[i] == '-' || (t[i] >= '0' && t[i] <= '9')) {
			size_t end = number_end(t, i, len, &bad);
			if (bad)
				return fail_at(name, t, i, "bad number: RFC 8259 wants a digit after its '.'", err);
			i = end - 1;
		}
	}
	return 0;
}

static int convert_kids(struct json_node *n, struct json_object *o)
{
	size_t i = 0;

	n->nkids = n->type == JSON_ARRAY ? json_object_array_length(o)
					 : (size_t)json_object_object_length(o);
	n->kids = n->nkids ? calloc(n->nkids, sizeof(*n->kids)) : NULL;
	if (n->nkids && !n->kids)
		return -1;
	if (n->type == JSON_ARRAY) {
		for (i = 0; i < n->nkids; i++)
			if (convert(&n->kids[i], json_object_array_get_idx(o, i)) < 0)
				return -1;
		return 0;
	}
	json_object_object_foreach(o, key, value) {
		n->kids[i].key = strdup(key);
		if (!n->kids[i].key || convert(&n->kids[i], value) < 0)
			return -1;
		i++;
	}
	return 0;
}

/* o as a json_node: -1 when out of memory, or (errno EINVAL) for a string
 * holding \u0000, which a C string cannot. */
static int convert(struct json_node *n, struct json_object *o)
{
	switch (json_object_get_type(o)) {
	case json_type_null:
		n->type = JSON_NULL;
		return 0;
	case json_type_boolean:
		n->type = json_object_get_boolean(o) ? JSON_TRUE : JSON_FALSE;
		return 0;
	case json_type_int:
	case json_type_double:
		n->type = JSON_NUMBER;
		n->num = json_object_get_double(o);
		n->text = strdup(json_object_get_string(o));   /* the number as written */
		return n->text ? 0 : -1;
	case json_type_string:
		n->type = JSON_STRING;
		if (strlen(json_object_get_string(o)) != (size_t)json_object_get_string_len(o)) {
			errno = EINVAL;
			return -1;
		}
		n->text = strdup(json_object_get_string(o));
		return n->text ? 0 : -1;
	case json_type_array:
		n->type = JSON_ARRAY;
		return convert_kids(n, o);
	case json_type_object:
		n->type = JSON_OBJECT;
		return convert_kids(n, o);
	}
	return -1;
}

/* json-c's tree of text[0..len), or NULL with err set. The text is copied
 * with a terminator, which ends a number at the very end of it. */
static struct json_object *parse(const char *name, const char *text, size_t len,
				 struct errbuf *err)
{
	struct json_tokener *tok = json_tokener_new_ex(JSON_MAX_DEPTH);
	char *copy = malloc(len + 1);
	struct json_object *o = NULL;

	if (!tok || !copy || len >= INT32_MAX) {
		err_set(err, "%s: %s", name, len >= INT32_MAX ? "too large" : "out of memory");
		goto out;
	}
	memcpy(copy, text, len);
	copy[len] = '\0';
	json_tokener_set_flags(tok, JSON_TOKENER_STRICT);
	o = json_tokener_parse_ex(tok, copy, (int)len + 1);
	size_t end = json_tokener_get_parse_end(tok);
	enum json_tokener_error why = json_tokener_get_error(tok);
	if (why != json_tokener_success) {
		fail_at(name, copy, end > len ? len : end, why == json_tokener_error_depth ?
			"nested too deeply" : json_tokener_error_desc(why), err);
		json_object_put(o);
		o = NULL;
		goto out;
	}
	while (end < len && copy[end] && strchr(" \t\r\n", copy[end]))
		end++;
	if (end < len)   /* a NUL ended json-c's text before ours */
		fail_at(name, copy, end, "text after the end of the document", err);
	if (end < len || strict_check(name, copy, len, err) < 0) {
		json_object_put(o);
		o = NULL;
	}
out:
	free(copy);
	if (tok)
		json_tokener_free(tok);
	return o;
}

int json_parse(struct json_node *root, const char *name, const char *text, size_t len,
	       struct errbuf *err)
{
	struct json_object *o = parse(name, text, len, err);

	memset(root, 0, sizeof(*root));
	if (!o)
		return -1;
	errno = 0;
	int rc = convert(root, o);
	json_object_put(o);
	if (rc < 0) {
		json_free(root);
		return err_set(err, "%s: %s", name, errno == EINVAL ? "\\u0000 in a string" : "out of memory");
	}
	return 0;
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
		if (name[i] < '0' || name[i] > '9')
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
