/* The decomposition's model from the backends' declarations; see
 * stats_model.h. Nothing here names a backend: the tree is what each
 * entry's path.extends says, the pairs what its path.differs_from says. */
#include "config.h"
#include "stats_model.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *relation_name(enum path_relation r)
{
	static const char *const names[] = {
		[REL_LAYER] = "layer", [REL_SETTING] = "setting",
		[REL_PATHS] = "different-paths", [REL_TOTAL] = "total",
	};
	return names[r];
}

/* The backend called by the first len characters of name, or NULL. */
static const struct backend *backend_called(const struct backend *const *bs, const char *name,
					    size_t len)
{
	for (size_t i = 0; bs[i]; i++)
		if (strlen(bs[i]->name) == len && strncmp(bs[i]->name, name, len) == 0)
			return bs[i];
	return NULL;
}

static const struct backend *named(const struct backend *const *bs, const char *name)
{
	return name ? backend_called(bs, name, strlen(name)) : NULL;
}

static const struct backend *parent_of(const struct backend *const *bs, const struct backend *b)
{
	return named(bs, b->path.extends);
}

/* A backend whose offloads are stepped has two levels, off and on. */
static bool steps_offloads(const struct backend *b)
{
	return (b->flags & BACKEND_OFFLOADS) != 0;
}

/* Where b extends its parent (setting "off") or others extend it ("on"). */
static char *level_of(const struct backend *b, const char *setting)
{
	char buf[256];
	if (steps_offloads(b))
		snprintf(buf, sizeof(buf), "%s:%s", b->name, setting);
	else
		snprintf(buf, sizeof(buf), "%s", b->name);
	return xstrdup(buf);
}

/* How many levels b's top is above the root's. */
static size_t depth_of(const struct backend *const *bs, const struct backend *b)
{
	size_t d = 0;
	for (const struct backend *x = b; x; x = parent_of(bs, x))
		d += steps_offloads(x) + (x->path.extends != NULL);
	return d;
}

static size_t count_of(const struct backend *const *bs)
{
	size_t n = 0;
	while (bs[n])
		n++;
	return n;
}

/* Every name a declaration gives is a backend's, and every chain of
 * extends ends at a root within as many steps as there are backends. */
static int check_declarations(const struct backend *const *bs, struct errbuf *err)
{
	size_t n = count_of(bs);
	for (size_t i = 0; bs[i]; i++) {
		const struct backend *b = bs[i], *x = b;
		if (b->path.extends && !parent_of(bs, b))
			return err_set(err, "backend %s: path.extends names no backend: %s", b->name,
				       b->path.extends);
		if (b->path.differs_from && !named(bs, b->path.differs_from))
			return err_set(err, "backend %s: path.differs_from names no backend: %s",
				       b->name, b->path.differs_from);
		for (size_t hops = 0; x && x->path.extends; hops++, x = parent_of(bs, x))
			if (hops > n)
				return err_set(err, "backend %s: path.extends goes round in a circle",
					       b->name);
		if (x && !x->path.adds)
			return err_set(err, "backend %s: extends %s, which neither extends another nor "
				       "is a root (path.adds)", b->name, x->name);
	}
	return 0;
}

static void add_step(struct decomp_model *m, enum step_kind kind, char *lower, char *upper,
		     const char *name, const char *label)
{
	m->step = xrealloc(m->step, (m->n + 1) * sizeof(*m->step));
	m->step[m->n++] = (struct model_step){ kind, lower, upper, xstrdup(name), xstrdup(label) };
}

/* "tcp, TSO/GSO off" for tcp:off: a level as a label shows it. */
static void level_words(char *buf, size_t size, const char *level)
{
	const char *colon = strchr(level, ':');
	if (colon && (strcmp(colon + 1, "off") == 0 || strcmp(colon + 1, "on") == 0))
		snprintf(buf, size, "%.*s, TSO/GSO %s", (int)(colon - level), level, colon + 1);
	else
		snprintf(buf, size, "%s", level);
}

/* b's own steps: onto its parent's top (or the root alone), and from its
 * off level to its on level where it steps offloads. */
static void add_backend_steps(struct decomp_model *m, const struct backend *b, enum step_kind kind)
{
	const struct backend *parent = parent_of(m->backends, b);
	char label[512], lower[128], upper[128];
	char *bottom = level_of(b, "off");

	if (parent) {
		char *below = level_of(parent, "on");
		level_words(lower, sizeof(lower), below);
		level_words(upper, sizeof(upper), bottom);
		snprintf(label, sizeof(label), "%s (%s − %s)", b->path.adds, upper, lower);
		add_step(m, kind, below, bottom, b->path.layer ? b->path.layer : b->name, label);
	} else {
		snprintf(label, sizeof(label), "%s (%s)", b->path.adds, b->name);
		add_step(m, kind, xstrdup(""), bottom, b->path.layer ? b->path.layer : b->name, label);
	}
	if (!steps_offloads(b))
		return;
	char name[128];
	/* the stack's offload step keeps the plain name; one beside it, its backend's */
	snprintf(name, sizeof(name), kind == STEP_STACK ? "offload" : "offload-%s", b->name);
	snprintf(label, sizeof(label), "TSO/GSO on − off (%s)", b->name);
	add_step(m, kind, level_of(b, "off"), level_of(b, "on"), name, label);
}

/* The stack: from the root up to the swept backend of the most levels
 * (the first of equals); chain[] gets its backends, root first. */
static size_t stack_chain(const struct backend *const *bs, const struct backend **chain)
{
	const struct backend *tip = NULL;
	size_t best = 0, n = 0;
	for (size_t i = 0; bs[i]; i++) {
		size_t d = depth_of(bs, bs[i]);
		bool in_tree = bs[i]->path.extends || bs[i]->path.adds;
		if (in_tree && (bs[i]->flags & BACKEND_SWEPT) && (!tip || d > best)) {
			tip = bs[i];
			best = d;
		}
	}
	for (const struct backend *x = tip; x; x = parent_of(bs, x))
		chain[n++] = x;
	for (size_t i = 0; i < n / 2; i++) {
		const struct backend *t = chain[i];
		chain[i] = chain[n - 1 - i];
		chain[n - 1 - i] = t;
	}
	return n;
}

static bool listed(const struct backend *const *chain, size_t n, const struct backend *b)
{
	for (size_t i = 0; i < n; i++)
		if (chain[i] == b)
			return true;
	return false;
}

static void add_paths_step(struct decomp_model *m, const struct backend *b)
{
	const struct backend *other = named(m->backends, b->path.differs_from);
	char name[128], label[512];

	snprintf(name, sizeof(name), "%s-%s", b->name, other->name);
	model_paths_label(m, other->name, b->name, label, sizeof(label));
	add_step(m, STEP_PATHS, level_of(other, "on"), level_of(b, "on"), name, label);
}

int model_build(struct decomp_model *m, const struct backend *const *backends,
		struct errbuf *err)
{
	memset(m, 0, sizeof(*m));
	m->backends = backends;
	if (check_declarations(backends, err) < 0)
		return -1;
	size_t nb = count_of(backends);
	const struct backend **chain = xrealloc(NULL, (nb ? nb : 1) * sizeof(*chain));
	size_t nchain = stack_chain(backends, chain);
	for (size_t i = 0; i < nchain; i++)
		add_backend_steps(m, chain[i], STEP_STACK);
	for (size_t i = 0; backends[i]; i++)
		if (backends[i]->path.extends && !listed(chain, nchain, backends[i]))
			add_backend_steps(m, backends[i], STEP_BRANCH);
	for (size_t i = 0; backends[i]; i++)
		if (backends[i]->path.differs_from)
			add_paths_step(m, backends[i]);
	free(chain);
	return 0;
}

void model_free(struct decomp_model *m)
{
	for (size_t i = 0; i < m->n; i++) {
		free(m->step[i].lower);
		free(m->step[i].upper);
		free(m->step[i].name);
		free(m->step[i].label);
	}
	free(m->step);
	memset(m, 0, sizeof(*m));
}

char *model_stack_levels(const struct decomp_model *m)
{
	size_t len = 1;
	for (size_t i = 0; i < m->n; i++)
		len += strlen(m->step[i].upper) + 1;
	char *levels = xrealloc(NULL, len), *end = levels;
	*levels = '\0';
	for (size_t i = 0; i < m->n && m->step[i].kind == STEP_STACK; i++)
		end += sprintf(end, "%s%s", i ? "," : "", m->step[i].upper);
	return levels;
}

const char *model_root(const struct decomp_model *m)
{
	return m->n && m->step[0].kind == STEP_STACK ? m->step[0].upper : NULL;
}

const struct model_step *model_step_of(const struct decomp_model *m, const char *lower,
				       const char *upper)
{
	for (size_t i = 0; i < m->n; i++)
		if (strcmp(m->step[i].lower, lower) == 0 && strcmp(m->step[i].upper, upper) == 0)
			return &m->step[i];
	return NULL;
}

/* The backend of a level, "tcp" of "tcp:off", or NULL. */
static const struct backend *backend_of(const struct decomp_model *m, const char *level)
{
	return backend_called(m->backends, level, strcspn(level, ":"));
}

static bool contains(const struct decomp_model *m, const struct backend *outer,
		     const struct backend *inner)
{
	for (const struct backend *x = parent_of(m->backends, outer); x; x = parent_of(m->backends, x))
		if (x == inner)
			return true;
	return false;
}

enum path_relation model_relation(const struct decomp_model *m, const char *lower,
				  const char *upper)
{
	const struct backend *a = backend_of(m, lower), *b = backend_of(m, upper);
	if (!*lower)
		return b && b->path.adds && !b->path.extends ? REL_LAYER : REL_TOTAL;
	if (!a || !b)
		return REL_PATHS;
	if (a == b) {
		const char *sa = strchr(lower, ':'), *sb = strchr(upper, ':');
		bool offload_step = steps_offloads(a) && sa && sb &&
			((strcmp(sa, ":off") == 0 && strcmp(sb, ":on") == 0) ||
			 (strcmp(sa, ":on") == 0 && strcmp(sb, ":off") == 0));
		return offload_step ? REL_LAYER : REL_SETTING;
	}
	return contains(m, a, b) || contains(m, b, a) ? REL_LAYER : REL_PATHS;
}

void model_paths_label(const struct decomp_model *m, const char *lower, const char *upper,
		       char *buf, size_t size)
{
	const struct backend *a = backend_of(m, lower), *b = backend_of(m, upper);
	int n = snprintf(buf, size, "%s − %s: different paths, not a layer", upper, lower);
	if (!a || !b || a->path.drops_replies == b->path.drops_replies || n < 0 || (size_t)n >= size)
		return;
	const struct backend *drops = a->path.drops_replies ? a : b, *copies = drops == a ? b : a;
	snprintf(buf + n, size - (size_t)n, "; %s's reply bodies stay in the kernel (unless "
		 "--copy-replies), %s's are copied", drops->name, copies->name);
}

bool model_drops_replies(const struct decomp_model *m, const char *level)
{
	const struct backend *b = backend_of(m, level);
	return b && b->path.drops_replies;
}

void model_paths_label_copied(const struct decomp_model *m, const char *lower, const char *upper,
			      char *buf, size_t size)
{
	const struct backend *a = backend_of(m, lower), *b = backend_of(m, upper);
	const char *drops = a && a->path.drops_replies ? a->name : b ? b->name : upper;
	snprintf(buf, size, "%s − %s: different paths, not a layer; like with like: both copy reply "
		 "bodies (%s with --copy-replies)", b ? b->name : upper, a ? a->name : lower, drops);
}
