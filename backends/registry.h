/* The registry of backends (backends/registry.c): only the mains, the
 * options and the tests look backends up by name; the driver is handed one. */
#ifndef TBENCH_REGISTRY_H
#define TBENCH_REGISTRY_H

#include "backend.h"

extern const struct backend *const backends[];   /* NULL-terminated; the first is the default */
const struct backend *backend_find(const char *name);
/* `tbench -b list`: "NAME CAP,CAP,..." a line ("NAME -" with none). */
void backend_print_list(FILE *f);
const char *backend_names_with(unsigned flags, char *buf, size_t size);
int backend_option_set(const struct backend *be, const char *flag, const char *text,
		       struct errbuf *err);

#endif
