/* The decomposition's model, derived from what each backend declares of
 * its path (struct backend_path): which differences are layers (one path
 * inside the other) and which are different paths set side by side. It
 * takes the backends as an array, the registry's or a test's, so that the
 * facts stay in each backend's entry (docs/design.md). */
#ifndef TBENCH_STATS_MODEL_H
#define TBENCH_STATS_MODEL_H

#include <stddef.h>

#include "backend.h"
#include "util.h"

/* What the difference of two levels is. */
enum path_relation {
	REL_LAYER,              /* one path contains the other: a layer */
	REL_SETTING,            /* one backend at two settings: the same path */
	REL_PATHS,              /* different paths: a difference, not a layer */
	REL_TOTAL,              /* a level alone that is no root: its total */
};

/* "layer", "setting", "different-paths", "total": decompose's kind column. */
const char *relation_name(enum path_relation r);

enum step_kind {
	STEP_STACK,             /* on the stack: the root up to the deepest swept backend */
	STEP_BRANCH,            /* a layer off the stack (drawn beside it) */
	STEP_PATHS,             /* two different paths, side by side */
};

/* A step of the model: level upper minus level lower ("" below the root).
 * A level is a backend, or "backend:off" and "backend:on" for one that
 * runs at each offload setting (its off level is where it extends its
 * parent, its on level, the device's default, where others extend it). */
struct model_step {
	enum step_kind kind;
	char *lower, *upper, *name, *label;
};

struct decomp_model {
	const struct backend *const *backends;  /* NULL-terminated, as given */
	size_t n;
	struct model_step *step;        /* the stack root first, then branches, then paths */
};

/* The model of backends: 0, or -1 with err naming the backend whose
 * declaration is wrong (an unknown name, a cycle, no root). */
int model_build(struct decomp_model *m, const struct backend *const *backends,
		struct errbuf *err);
void model_free(struct decomp_model *m);
/* The stack's levels, "nop,tcp:off,tcp:on", allocated. */
char *model_stack_levels(const struct decomp_model *m);
/* The root's level (the harness), or NULL. */
const char *model_root(const struct decomp_model *m);
/* The model's step from lower to upper, or NULL. */
const struct model_step *model_step_of(const struct decomp_model *m, const char *lower,
				       const char *upper);
/* What upper minus lower is, for any two levels ("backend[:setting]"); with
 * lower "" upper alone: a layer when it is a root. Unknown backends are
 * different paths: nothing says one contains the other. */
enum path_relation model_relation(const struct decomp_model *m, const char *lower,
				  const char *upper);
/* The label of upper minus lower, two levels (or backends) of different
 * paths: "unix − pipe: different paths, not a layer", and where one side's
 * reply bodies reach user space and the other's do not, a note saying so. */
void model_paths_label(const struct decomp_model *m, const char *lower, const char *upper,
		       char *buf, size_t size);
/* Whether the backend of a level drops reply bodies in the kernel unless
 * told --copy-replies (its registry entry's path.drops_replies). */
bool model_drops_replies(const struct decomp_model *m, const char *level);
/* The label of such a pair compared like with like: the dropping side's
 * runs made with --copy-replies (runs.csv's copy_replies=on). */
void model_paths_label_copied(const struct decomp_model *m, const char *lower, const char *upper,
			      char *buf, size_t size);

#endif
