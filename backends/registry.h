/* The registry of backends (backends/registry.c): only the mains, the
 * options and the tests look backends up by name; the driver is handed one. */
#ifndef TBENCH_REGISTRY_H
#define TBENCH_REGISTRY_H

#include "backend.h"

extern const struct backend *const backends[];   /* NULL-terminated; the first is the default */
const struct backend *backend_find(const char *name);

#endif
