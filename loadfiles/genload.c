/*
 * genload - writes tbench's NBENCH loadfiles: the default trace, and the
 * bulk shapes of larger-than-MTU requests and replies.
 *
 * dbench's client.txt is someone else's data, so tbench ships its own
 * default trace (docs/loadfile.md).  This program simulates one
 * SMB client working in its home directory "\clients\client1" - documents,
 * spreadsheets, images, mail, two source trees - and prints the session in
 * NBENCH text.  The driver rewrites "client1" to "client<i>" per client, so
 * every path below "\clients" contains "client1" exactly once.
 *
 * The simulation keeps real state (which files exist, their sizes, which
 * handles are open, one pending byte-range lock), so statuses, fnums and
 * read offsets are consistent.  Which operation comes next is drawn at
 * random, steered towards the op mix of docs/loadfile.md (see choose()).
 *
 * Determinism: the only randomness is splitmix64 seeded from --seed, and
 * all arithmetic is integer (no libm, no floating point), so the output is
 * byte-identical on every machine, compiler and libc.
 *
 * The bulk shapes (--shape bulk-write|bulk-read|bulk-mix) copy whole files
 * in requests of --io-size bytes, with no randomness: see bulk_session().
 *
 * Build: cc -std=c11 -Wall -Wextra -O2 -o genload genload.c
 * Usage: genload [--seed N] [--ops N] > default.txt
 *        genload --shape bulk-write [--io-size BYTES] > bulk-write.txt
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define DEFAULT_SEED 20261130u
#define DEFAULT_OPS 60000u
#define MIN_OPS 100u        /* room for the set-up lines and a few ops */
#define MAX_OPS 10000000u
#define MAXOPEN 8           /* handles the client keeps open at once */
#define FILES_PER_DIR 18    /* "*" lists <= 18 files + 5 subdirs + "." ".." = 25 */
#define MAX_FIND_COUNT 26   /* dbench's trace never lists more */
#define FIND_LEVEL 260      /* SMB_FIND_FILE_BOTH_DIRECTORY_INFO */
#define FIND_MAXCNT 1366
#define SLACK 16            /* lines an op may run ahead of its share */
#define FNUM_FIRST 1000u
#define FNUM_LAST 64999u

#define ST_OK "NT_STATUS_OK"
#define ST_NOT_FOUND "NT_STATUS_OBJECT_NAME_NOT_FOUND"
#define ST_NO_SUCH_FILE "NT_STATUS_NO_SUCH_FILE"

enum op {
	OP_READ, OP_CREATE, OP_QPATH, OP_CLOSE, OP_WRITE, OP_FIND, OP_UNLINK,
	OP_QFS, OP_QFILE, OP_SFILE, OP_FLUSH, OP_RENAME, OP_LOCK, OP_UNLOCK,
	NOPS,
	OP_SETUP = NOPS     /* Deltree/Mkdir: counted as lines, not steered */
};

/* Target share of lines in basis points (0.01 %), as docs/loadfile.md gives them.
 * They sum to 10022 because the published figures are rounded; the
 * steering divides by the sum, so each op gets share/sum of the lines. */
static const int64_t share[NOPS] = {
	2700, 1700, 1600, 1300, 860, 610, 350, 290, 270, 140, 120, 70, 6, 6,
};

/* The client's tree below "\clients\client1", parents before children.
 * stem/ext name the files each directory can hold. */
struct dirspec {
	const char *path;
	const char *stem;
	const char *ext[3];
};

static const struct dirspec dirs[] = {
	{ "",                            "notes",  { ".txt" } },
	{ "\\work",                      "todo",   { ".txt", ".lnk" } },
	{ "\\work\\docs",                "report", { ".doc", ".pdf", ".txt" } },
	{ "\\work\\docs\\drafts",        "draft",  { ".doc", ".rtf" } },
	{ "\\work\\sheets",              "budget", { ".xls", ".csv" } },
	{ "\\work\\images",              "img",    { ".jpg", ".png", ".bmp" } },
	{ "\\work\\mail",                "msg",    { ".eml" } },
	{ "\\work\\projects",            "plan",   { ".ppt", ".txt" } },
	{ "\\work\\projects\\orion",     "orion",  { ".c", ".h", ".mk" } },
	{ "\\work\\projects\\vega",      "vega",   { ".c", ".h", ".obj" } },
	{ "\\tmp",                       "scratch", { ".tmp", ".bak" } },
};
#define NDIRS (sizeof(dirs) / sizeof(dirs[0]))
#define NFILES (NDIRS * FILES_PER_DIR)

/* Names Explorer and Office probe for that never exist in our tree. */
static const char *const ghosts[] = { "desktop.ini", "thumbs.db", "autorun.inf" };

/* ReadX/WriteX request sizes: {cumulative per mille, lo, hi, step}.
 * SMB traces are dominated by page-sized (4 KiB) requests; below that come
 * small record and header accesses, above it a tail of bulk copies in
 * 16/32/64 KiB chunks (64 KiB is the SMB1 maximum).  Writes have a fatter
 * 64 KiB tail (files saved whole) and some tiny writes (flags, counters).
 * Reads are then cut at end of file (see do_read).  With the default seed:
 * reads p50 4096, p90 32768, p99 65536, mean ~9.4 KB; writes p50 4096,
 * p90 65536, p99 65536, mean ~23 KB (check-mix.sh prints percentiles). */
struct size_class {
	unsigned cum, lo, hi, step;
};

static const struct size_class read_sizes[] = {
	{ 50,  1, 511, 1 },  { 150, 512, 3584, 512 }, { 680, 4096, 4096, 1 },
	{ 750, 8192, 8192, 1 }, { 810, 12288, 16384, 4096 },
	{ 860, 32768, 32768, 1 }, { 1000, 65536, 65536, 1 },
};

static const struct size_class write_sizes[] = {
	{ 100, 1, 64, 1 },   { 220, 512, 3584, 512 }, { 520, 4096, 4096, 1 },
	{ 600, 8192, 8192, 1 }, { 660, 16384, 16384, 1 },
	{ 720, 32768, 32768, 1 }, { 1000, 65536, 65536, 1 },
};

struct file {
	uint8_t dir, idx;
	bool exists, open;
	uint64_t size;
};

enum mode { H_READ, H_WRITE, H_DIR };

struct handle {
	unsigned fnum;
	int file;           /* index into files[], -1 for a directory */
	enum mode mode;
	uint64_t off;       /* next sequential offset */
};

struct gen {
	uint64_t rng;
	uint64_t lines, count[NOPS + 1];
	struct file files[NFILES];
	struct handle h[MAXOPEN];  /* oldest first */
	int nopen;
	unsigned next_fnum;
	unsigned lock_fnum;        /* 0: no lock pending */
	uint64_t lock_off, lock_len;
};

/* splitmix64 (Steele, Lea, Flood 2014): tiny, well mixed, and the same
 * sequence everywhere, unlike rand(). */
static uint64_t rnd(struct gen *g)
{
	uint64_t z = (g->rng += 0x9e3779b97f4a7c15u);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
	return z ^ (z >> 31);
}

/* Uniform in [0, n); the modulo bias, about n / 2^64, is negligible for
 * our n (all far below 2^40). */
static uint64_t below(struct gen *g, uint64_t n)
{
	return rnd(g) % n;
}

static bool chance(struct gen *g, unsigned percent)
{
	return below(g, 100) < percent;
}

static unsigned pick_size(struct gen *g, const struct size_class *t)
{
	unsigned r = (unsigned)below(g, 1000);

	while (r >= t->cum)
		t++;
	return t->lo + (unsigned)below(g, (t->hi - t->lo) / t->step + 1) * t->step;
}

static void emit(struct gen *g, int op, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
	g->count[op]++;
	g->lines++;
}

/* ---- paths ---- */

static void dir_path(char *buf, size_t n, size_t d)
{
	snprintf(buf, n, "\\clients\\client1%s", dirs[d].path);
}

static void name_path(char *buf, size_t n, size_t d, const char *name)
{
	snprintf(buf, n, "\\clients\\client1%s\\%s", dirs[d].path, name);
}

static size_t n_ext(size_t d)
{
	size_t n = 0;

	while (n < 3 && dirs[d].ext[n])
		n++;
	return n;
}

static const char *file_ext(const struct file *f)
{
	return dirs[f->dir].ext[f->idx % n_ext(f->dir)];
}

static void file_path(char *buf, size_t n, const struct file *f)
{
	char name[64];

	snprintf(name, sizeof(name), "%s%02u%s", dirs[f->dir].stem,
		 (unsigned)f->idx + 1, file_ext(f));
	name_path(buf, n, f->dir, name);
}

/* Direct subdirectories of d: FIND_FIRST "*" lists them too. */
static unsigned n_subdirs(size_t d)
{
	size_t len = strlen(dirs[d].path);
	unsigned n = 0;

	for (size_t i = 0; i < NDIRS; i++) {
		const char *p = dirs[i].path;
		if (i != d && strncmp(p, dirs[d].path, len) == 0 &&
		    p[len] == '\\' && !strchr(p + len + 1, '\\'))
			n++;
	}
	return n;
}

/* ---- choosing files and handles ---- */

enum want { W_CLOSED, W_READABLE, W_MISSING };

static bool file_is(const struct file *f, enum want w)
{
	switch (w) {
	case W_CLOSED:   return f->exists && !f->open;
	case W_READABLE: return f->exists && !f->open && f->size > 0;
	case W_MISSING:  return !f->exists;
	}
	return false;
}

/* A random file in the wanted state, or -1.  Scans from a random start:
 * cheap, and uniform enough for a trace. */
static int pick_file(struct gen *g, enum want w)
{
	size_t start = (size_t)below(g, NFILES);

	for (size_t i = 0; i < NFILES; i++) {
		size_t k = (start + i) % NFILES;
		if (file_is(&g->files[k], w))
			return (int)k;
	}
	return -1;
}

static int count_files(const struct gen *g, enum want w)
{
	int n = 0;

	for (size_t i = 0; i < NFILES; i++)
		n += file_is(&g->files[i], w);
	return n;
}

static bool handle_fits(const struct handle *h, int mask)
{
	return (mask >> h->mode) & 1;
}

#define M_READ (1 << H_READ)
#define M_WRITE (1 << H_WRITE)
#define M_FILE (M_READ | M_WRITE)
#define M_ANY (M_FILE | (1 << H_DIR))

/* An open handle of a wanted mode, or -1.  Clients work on the file they
 * opened last, so the newest handle is preferred three times in four. */
static int pick_handle(struct gen *g, int mask)
{
	int n = 0, match[MAXOPEN];

	for (int i = 0; i < g->nopen; i++)
		if (handle_fits(&g->h[i], mask))
			match[n++] = i;
	if (n == 0)
		return -1;
	if (chance(g, 75))
		return match[n - 1];
	return match[below(g, (uint64_t)n)];
}

static unsigned new_fnum(struct gen *g)
{
	for (;;) {
		unsigned f = g->next_fnum++;
		bool busy = false;

		if (g->next_fnum > FNUM_LAST)
			g->next_fnum = FNUM_FIRST;
		for (int i = 0; i < g->nopen; i++)
			busy |= g->h[i].fnum == f;
		if (!busy)
			return f;
	}
}

/* ---- operations ---- */

static void open_handle(struct gen *g, int file, enum mode mode, uint64_t off)
{
	g->h[g->nopen++] = (struct handle){ new_fnum(g), file, mode, off };
	if (file >= 0)
		g->files[file].open = true;
}

/* An NTCreateX that fails: a file deleted earlier, or an Explorer probe. */
static void create_missing(struct gen *g)
{
	char path[256];
	int f = pick_file(g, W_MISSING);

	if (f < 0 || chance(g, 30)) {
		/* Separate statements: argument evaluation order is unspecified,
		 * and the PRNG must be called in the same order everywhere. */
		size_t d = (size_t)below(g, NDIRS);
		const char *ghost = ghosts[below(g, sizeof(ghosts) / sizeof(ghosts[0]))];
		name_path(path, sizeof(path), d, ghost);
	} else {
		file_path(path, sizeof(path), &g->files[f]);
	}
	emit(g, OP_CREATE, "NTCreateX \"%s\" 0x40 0x1 %u %s", path,
	     new_fnum(g), ST_NOT_FOUND);
}

static void open_dir(struct gen *g)
{
	char path[256];

	dir_path(path, sizeof(path), below(g, NDIRS));
	open_handle(g, -1, H_DIR, 0);
	emit(g, OP_CREATE, "NTCreateX \"%s\" 0x1 0x1 %u %s", path,
	     g->h[g->nopen - 1].fnum, ST_OK);
}

static bool open_read(struct gen *g)
{
	char path[256];
	int f = pick_file(g, W_READABLE);

	if (f < 0)
		return false;
	file_path(path, sizeof(path), &g->files[f]);
	open_handle(g, f, H_READ, 0);
	emit(g, OP_CREATE, "NTCreateX \"%s\" 0x40 0x1 %u %s", path,
	     g->h[g->nopen - 1].fnum, ST_OK);
	return true;
}

/* Writers create new files (CREATE, 0x2), replace old ones (OVERWRITE_IF,
 * 0x5) or append to them (OPEN_IF, 0x3).  New files are chosen in
 * proportion to how many are missing, which keeps about half the tree
 * existing against the steady stream of Unlinks. */
static void open_write(struct gen *g)
{
	char path[256];
	int missing = count_files(g, W_MISSING);
	bool fresh = (int)below(g, NFILES) < missing;
	int f = pick_file(g, fresh ? W_MISSING : W_CLOSED);
	unsigned disp = 0x2;

	if (f < 0)
		f = pick_file(g, fresh ? W_CLOSED : W_MISSING);
	if (g->files[f].exists)
		disp = chance(g, 70) ? 0x5 : 0x3;
	if (disp != 0x3)
		g->files[f].size = 0;
	g->files[f].exists = true;
	file_path(path, sizeof(path), &g->files[f]);
	open_handle(g, f, H_WRITE, g->files[f].size);
	emit(g, OP_CREATE, "NTCreateX \"%s\" 0x44 0x%x %u %s", path, disp,
	     g->h[g->nopen - 1].fnum, ST_OK);
}

static int64_t weight(const struct gen *g, enum op op);

/* Close (13 %) must match the successful NTCreateX (17 %), so about 4 in
 * 17 fail.  Failing with a chance that grows with the number of open
 * handles finds that rate by itself and keeps a few handles open: a fixed
 * rate would let opens and closes drift apart.  Read or write is decided by
 * which of ReadX and WriteX is more due. */
static void do_create(struct gen *g)
{
	int64_t wr = weight(g, OP_READ) + 1, ww = weight(g, OP_WRITE) + 1;

	if ((int)below(g, 100) < 6 * g->nopen)
		create_missing(g);
	else if (chance(g, 8))
		open_dir(g);
	else if ((int64_t)below(g, (uint64_t)(wr + ww)) >= wr || !open_read(g))
		open_write(g);
}

static void do_close(struct gen *g)
{
	int n = 0, cand[MAXOPEN], i;

	/* Older handles tend to be closed first; a locked one waits for its
	 * UnlockX.  feasible() made sure there is a candidate. */
	for (int k = 0; k < g->nopen; k++)
		if (g->h[k].fnum != g->lock_fnum)
			cand[n++] = k;
	for (i = 0; i < n - 1 && !chance(g, 60); i++)
		;
	i = cand[i];
	emit(g, OP_CLOSE, "Close %u %s", g->h[i].fnum, ST_OK);
	if (g->h[i].file >= 0)
		g->files[g->h[i].file].open = false;
	memmove(&g->h[i], &g->h[i + 1], (size_t)(g->nopen - i - 1) * sizeof(g->h[0]));
	g->nopen--;
}

/* Sequential reads.  The client knows the file size from the open, so it
 * usually asks for no more than is left; one time in five it asks for a
 * whole chunk anyway and gets a short read.  At EOF it seeks back to a
 * random page, as database-like files are read. */
static void do_read(struct gen *g)
{
	struct handle *h = &g->h[pick_handle(g, M_READ)];
	uint64_t fsize = g->files[h->file].size;
	unsigned size = pick_size(g, read_sizes);
	uint64_t ret;

	if (h->off >= fsize)
		h->off = below(g, (fsize + 4095) / 4096) * 4096;
	ret = fsize - h->off < size ? fsize - h->off : size;
	if (ret < size && chance(g, 80))
		size = (unsigned)ret;
	emit(g, OP_READ, "ReadX %u %" PRIu64 " %u %" PRIu64 " %s",
	     h->fnum, h->off, size, ret, ST_OK);
	h->off += ret;
}

static void do_write(struct gen *g)
{
	struct handle *h = &g->h[pick_handle(g, M_WRITE)];
	struct file *f = &g->files[h->file];
	unsigned size = pick_size(g, write_sizes);

	emit(g, OP_WRITE, "WriteX %u %" PRIu64 " %u %u %s",
	     h->fnum, h->off, size, size, ST_OK);
	h->off += size;
	if (h->off > f->size)
		f->size = h->off;
}

/* Mostly files that exist, then directories, then names that do not. */
static void do_qpath(struct gen *g)
{
	static const unsigned levels[] = { 1004, 1004, 1005, 258, 1034 };
	char path[256];
	unsigned r = (unsigned)below(g, 100);
	int f;

	if (r < 15) {
		dir_path(path, sizeof(path), below(g, NDIRS));
	} else if (r < 80 && (f = pick_file(g, W_CLOSED)) >= 0) {
		file_path(path, sizeof(path), &g->files[f]);
	} else {
		r = 100;
		f = pick_file(g, W_MISSING);
		if (f >= 0)
			file_path(path, sizeof(path), &g->files[f]);
		else
			name_path(path, sizeof(path), below(g, NDIRS), ghosts[0]);
	}
	emit(g, OP_QPATH, "QUERY_PATH_INFORMATION \"%s\" %u %s", path,
	     levels[below(g, 5)], r == 100 ? ST_NOT_FOUND : ST_OK);
}

static unsigned find_count(const struct gen *g, size_t d, const char *ext)
{
	unsigned n = ext ? 0 : n_subdirs(d) + 2;   /* "*" also lists . and .. */

	for (size_t i = d * FILES_PER_DIR; i < (d + 1) * FILES_PER_DIR; i++)
		if (g->files[i].exists && (!ext || !strcmp(file_ext(&g->files[i]), ext)))
			n++;
	return n < MAX_FIND_COUNT ? n : MAX_FIND_COUNT;
}

/* Directory listings ("*"), filtered ones ("*.ext") and existence checks
 * of one name; an empty result is NT_STATUS_NO_SUCH_FILE. */
static void do_find(struct gen *g)
{
	char pat[256], name[64] = "*";
	size_t d = (size_t)below(g, NDIRS);
	unsigned r = (unsigned)below(g, 100), count;
	const struct file *f = &g->files[d * FILES_PER_DIR + below(g, FILES_PER_DIR)];

	if (r < 50) {
		count = find_count(g, d, NULL);
	} else if (r < 75) {
		const char *ext = dirs[d].ext[below(g, n_ext(d))];
		snprintf(name, sizeof(name), "*%s", ext);
		count = find_count(g, d, ext);
	} else {
		snprintf(name, sizeof(name), "%s%02u%s", dirs[d].stem,
			 (unsigned)f->idx + 1, file_ext(f));
		count = f->exists;
	}
	name_path(pat, sizeof(pat), d, name);
	emit(g, OP_FIND, "FIND_FIRST \"%s\" %u %u %u %s", pat, FIND_LEVEL,
	     FIND_MAXCNT, count, count ? ST_OK : ST_NO_SUCH_FILE);
}

/* Unlink sends attributes 0x6 (hidden + system), as Windows clients do. */
static void do_unlink(struct gen *g)
{
	char path[256];
	int f = chance(g, 85) ? pick_file(g, W_CLOSED) : -1;

	if (f >= 0) {
		file_path(path, sizeof(path), &g->files[f]);
		g->files[f].exists = false;
	} else {
		int m = pick_file(g, W_MISSING);
		if (m >= 0)
			file_path(path, sizeof(path), &g->files[m]);
		else
			name_path(path, sizeof(path), below(g, NDIRS), ghosts[1]);
	}
	emit(g, OP_UNLINK, "Unlink \"%s\" 0x6 %s", path, f >= 0 ? ST_OK : ST_NOT_FOUND);
}

/* A missing file in the same directory as src, of the same type if there
 * is one ("report03.doc" -> "report07.doc"), or -1. */
static int rename_target(const struct gen *g, int src)
{
	size_t d = g->files[src].dir;
	int any = -1;

	for (size_t i = d * FILES_PER_DIR; i < (d + 1) * FILES_PER_DIR; i++) {
		if (g->files[i].exists)
			continue;
		if (file_ext(&g->files[i]) == file_ext(&g->files[src]))
			return (int)i;
		if (any < 0)
			any = (int)i;
	}
	return any;
}

static bool can_rename(const struct gen *g)
{
	for (size_t i = 0; i < NFILES; i++)
		if (file_is(&g->files[i], W_CLOSED) && rename_target(g, (int)i) >= 0)
			return true;
	return false;
}

/* Save-as and backup renames stay inside one directory. */
static void do_rename(struct gen *g)
{
	char from[256], to[256];
	int src, dst;

	do {
		src = pick_file(g, W_CLOSED);
		dst = rename_target(g, src);
	} while (dst < 0);
	file_path(from, sizeof(from), &g->files[src]);
	file_path(to, sizeof(to), &g->files[dst]);
	g->files[dst].exists = true;
	g->files[dst].size = g->files[src].size;
	g->files[src].exists = false;
	emit(g, OP_RENAME, "Rename \"%s\" \"%s\" %s", from, to, ST_OK);
}

static void do_qfs(struct gen *g)
{
	static const unsigned levels[] = { 1, 259, 261, 1007 };

	emit(g, OP_QFS, "QUERY_FS_INFORMATION %u %s", levels[below(g, 4)], ST_OK);
}

static void do_qfile(struct gen *g)
{
	static const unsigned levels[] = { 1004, 1005, 1006, 1034 };
	const struct handle *h = &g->h[pick_handle(g, M_ANY)];

	emit(g, OP_QFILE, "QUERY_FILE_INFORMATION %u %u %s", h->fnum,
	     levels[below(g, 4)], ST_OK);
}

/* Readers touch timestamps (1004); writers also set end of file (1020)
 * at their current offset, truncating what an append left behind. */
static void do_sfile(struct gen *g)
{
	const struct handle *h = &g->h[pick_handle(g, M_FILE)];
	unsigned level = 1004;

	if (h->mode == H_WRITE && chance(g, 50)) {
		level = 1020;
		g->files[h->file].size = h->off;
	}
	emit(g, OP_SFILE, "SET_FILE_INFORMATION %u %u %s", h->fnum, level, ST_OK);
}

static void do_flush(struct gen *g)
{
	emit(g, OP_FLUSH, "Flush %u %s", g->h[pick_handle(g, M_WRITE)].fnum, ST_OK);
}

/* A byte-range lock on one page or one byte of the file, released a few
 * lines later by UnlockX (see choose()). */
static void do_lock(struct gen *g)
{
	const struct handle *h = &g->h[pick_handle(g, M_FILE)];
	uint64_t fsize = g->files[h->file].size;

	g->lock_fnum = h->fnum;
	g->lock_off = below(g, fsize / 4096 + 1) * 4096;
	g->lock_len = chance(g, 50) ? 1 : 4096;
	emit(g, OP_LOCK, "LockX %u %" PRIu64 " %" PRIu64 " %s", g->lock_fnum,
	     g->lock_off, g->lock_len, ST_OK);
}

static void do_unlock(struct gen *g)
{
	emit(g, OP_UNLOCK, "UnlockX %u %" PRIu64 " %" PRIu64 " %s", g->lock_fnum,
	     g->lock_off, g->lock_len, ST_OK);
	g->lock_fnum = 0;
}

/* ---- scheduling ---- */

#define SHARE_SUM 10022   /* sum of share[] */
#define UNLOCK_WEIGHT ((int64_t)SLACK * SHARE_SUM * 500)  /* ~5 % a line */

/* How much op is due: share * (SLACK lines + how far it lags its share).
 * An op SLACK lines ahead of its share is not drawn; one SLACK lines
 * behind is drawn twice as often.  That keeps every op within a few lines
 * of its share while the order stays random. */
static int64_t weight(const struct gen *g, enum op op)
{
	int64_t lag = share[op] * (int64_t)g->lines - (int64_t)g->count[op] * SHARE_SUM;
	int64_t w = (int64_t)SLACK * SHARE_SUM + lag;

	return w > 0 ? w * share[op] : 0;
}

static bool has_handle(const struct gen *g, int mask, bool skip_locked)
{
	for (int i = 0; i < g->nopen; i++)
		if (handle_fits(&g->h[i], mask) &&
		    !(skip_locked && g->h[i].fnum == g->lock_fnum))
			return true;
	return false;
}

static bool feasible(const struct gen *g, enum op op)
{
	switch (op) {
	case OP_READ:   return has_handle(g, M_READ, false);
	case OP_WRITE:
	case OP_FLUSH:  return has_handle(g, M_WRITE, false);
	case OP_QFILE:  return has_handle(g, M_ANY, false);
	case OP_SFILE:  return has_handle(g, M_FILE, false);
	case OP_CLOSE:  return has_handle(g, M_ANY, true);
	case OP_LOCK:   return !g->lock_fnum && has_handle(g, M_FILE, false);
	case OP_UNLOCK: return g->lock_fnum != 0;
	case OP_CREATE: return g->nopen < MAXOPEN;
	case OP_RENAME: return can_rename(g);
	default:        return true;
	}
}

/* Draws the next op among those possible now, each as likely as it is due. */
static enum op choose(struct gen *g)
{
	int64_t w[NOPS], total = 0, r;

	for (enum op o = 0; o < NOPS; o++) {
		w[o] = !feasible(g, o) ? 0 :
		       o == OP_UNLOCK ? UNLOCK_WEIGHT : weight(g, o);
		total += w[o];
	}
	if (total == 0)   /* everything possible is ahead: a harmless filler */
		return OP_QFS;
	r = (int64_t)below(g, (uint64_t)total);
	for (enum op o = 0; o < NOPS; o++) {
		if (r < w[o])
			return o;
		r -= w[o];
	}
	return OP_QFS;
}

static void step(struct gen *g)
{
	static void (*const run[NOPS])(struct gen *) = {
		[OP_READ] = do_read,     [OP_CREATE] = do_create, [OP_QPATH] = do_qpath,
		[OP_CLOSE] = do_close,   [OP_WRITE] = do_write,   [OP_FIND] = do_find,
		[OP_UNLINK] = do_unlink, [OP_QFS] = do_qfs,       [OP_QFILE] = do_qfile,
		[OP_SFILE] = do_sfile,   [OP_FLUSH] = do_flush,   [OP_RENAME] = do_rename,
		[OP_LOCK] = do_lock,     [OP_UNLOCK] = do_unlock,
	};

	run[choose(g)](g);
}

/* ---- the session ---- */

/* Start from a clean tree, so that every pass of the loadfile (and every
 * client) sees the same state. */
static void setup(struct gen *g)
{
	char path[256];

	emit(g, OP_SETUP, "Deltree \"\\clients\\client1\" %s", ST_OK);
	emit(g, OP_SETUP, "Mkdir \"\\clients\" %s", ST_OK);
	for (size_t d = 0; d < NDIRS; d++) {
		dir_path(path, sizeof(path), d);
		emit(g, OP_SETUP, "Mkdir \"%s\" %s", path, ST_OK);
	}
	for (size_t i = 0; i < NFILES; i++)
		g->files[i] = (struct file){ .dir = (uint8_t)(i / FILES_PER_DIR),
					     .idx = (uint8_t)(i % FILES_PER_DIR) };
}

/* Exactly ops lines: the loop stops while the lines still owed (one
 * UnlockX, one Close per open handle) fit, and one QUERY_FS_INFORMATION
 * fills an odd gap. */
static void session(struct gen *g, uint64_t ops)
{
	g->next_fnum = FNUM_FIRST;
	setup(g);
	while (g->lines + (uint64_t)g->nopen + (g->lock_fnum != 0) + 1 < ops)
		step(g);
	if (g->lines + (uint64_t)g->nopen + (g->lock_fnum != 0) < ops)
		do_qfs(g);
	if (g->lock_fnum)
		do_unlock(g);
	while (g->nopen)
		do_close(g);
}

static int parse_u64(const char *s, uint64_t min, uint64_t max, uint64_t *out)
{
	char *end;

	errno = 0;
	*out = strtoull(s, &end, 10);
	return (s[0] < '0' || s[0] > '9' || errno || *end || *out < min || *out > max) ? -1 : 0;
}

/* ---- bulk shapes ---- */

/* Whole files copied in requests of io_size bytes, every ReadX and WriteX
 * asking for and moving exactly io_size (the size rule of
 * docs/loadfile.md): what a file copy puts on the wire, and nothing else,
 * so that a larger-than-MTU exchange is all there is to measure. */
#define BULK_FILES 8          /* files written (and read) per pass */
#define BULK_CHUNKS 16        /* requests per file: each file is 16 x io_size */
#define BULK_READ_PASSES 7    /* bulk-read reads every file 7 times a pass */
#define DEFAULT_IO_SIZE 65536u  /* the SMB1 maximum */
#define MAX_IO_SIZE 65536u

enum shape { SHAPE_DEFAULT, SHAPE_BULK_WRITE, SHAPE_BULK_READ, SHAPE_BULK_MIX, NSHAPES };

static const char *const shape_names[NSHAPES] = {
	"default", "bulk-write", "bulk-read", "bulk-mix",
};

/* One file, opened, written or read from offset 0 to its end, closed.
 * Writers use OVERWRITE_IF (0x5): the first pass creates the file. */
static void bulk_copy(struct gen *g, unsigned file, bool write, unsigned io_size)
{
	char path[256], name[32];
	unsigned fnum = new_fnum(g);

	snprintf(name, sizeof(name), "bulk%02u.dat", file + 1);
	name_path(path, sizeof(path), 0, name);
	emit(g, OP_CREATE, "NTCreateX \"%s\" %s %u %s", path,
	     write ? "0x44 0x5" : "0x40 0x1", fnum, ST_OK);
	for (unsigned c = 0; c < BULK_CHUNKS; c++)
		emit(g, write ? OP_WRITE : OP_READ, "%s %u %" PRIu64 " %u %u %s",
		     write ? "WriteX" : "ReadX", fnum, (uint64_t)c * io_size,
		     io_size, io_size, ST_OK);
	emit(g, OP_CLOSE, "Close %u %s", fnum, ST_OK);
}

/* bulk-write writes the files; bulk-read writes them once and reads them
 * BULK_READ_PASSES times (the reads' replies carry 7/8 of the bytes);
 * bulk-mix reads each file back as soon as it is written. */
static void bulk_session(struct gen *g, enum shape shape, unsigned io_size)
{
	g->next_fnum = FNUM_FIRST;
	emit(g, OP_SETUP, "Deltree \"\\clients\\client1\" %s", ST_OK);
	emit(g, OP_SETUP, "Mkdir \"\\clients\" %s", ST_OK);
	emit(g, OP_SETUP, "Mkdir \"\\clients\\client1\" %s", ST_OK);
	for (unsigned f = 0; f < BULK_FILES; f++) {
		bulk_copy(g, f, true, io_size);
		if (shape == SHAPE_BULK_MIX)
			bulk_copy(g, f, false, io_size);
	}
	for (unsigned pass = 0; shape == SHAPE_BULK_READ && pass < BULK_READ_PASSES; pass++)
		for (unsigned f = 0; f < BULK_FILES; f++)
			bulk_copy(g, f, false, io_size);
}

/* ---- the command line ---- */

struct args {
	enum shape shape;
	uint64_t seed, ops, io_size;
	bool trace_args, io_size_given;    /* --seed/--ops given; --io-size given */
};

static int usage(FILE *f, int rc)
{
	fprintf(f, "usage: genload [--seed N] [--ops N] > loadfile\n"
		"       genload --shape SHAPE [--io-size BYTES] > loadfile\n"
		"  --seed N         PRNG seed (default %u)\n"
		"  --ops N          operation lines, %u..%u (default %u)\n"
		"  --shape SHAPE    default (the trace above), or bulk-write, bulk-read,\n"
		"                   bulk-mix: whole files in requests of --io-size bytes\n"
		"  --io-size BYTES  every ReadX/WriteX size of a bulk shape, 1..%u\n"
		"                   (default %u)\n",
		DEFAULT_SEED, MIN_OPS, MAX_OPS, DEFAULT_OPS, MAX_IO_SIZE, DEFAULT_IO_SIZE);
	return rc;
}

static int parse_shape(const char *s, enum shape *out)
{
	for (int i = 0; i < NSHAPES; i++)
		if (!strcmp(s, shape_names[i])) {
			*out = (enum shape)i;
			return 0;
		}
	return -1;
}

/* 0, or -1 after saying what is wrong. */
static int parse_args(int argc, char **argv, struct args *a)
{
	for (int i = 1; i < argc; i++) {
		const char *opt = argv[i], *val = i + 1 < argc ? argv[i + 1] : NULL;
		int bad;

		if (!val) {
			fprintf(stderr, "genload: %s: unknown option or missing value\n", opt);
			return -1;
		}
		if (!strcmp(opt, "--seed"))
			bad = parse_u64(val, 0, UINT64_MAX, &a->seed);
		else if (!strcmp(opt, "--ops"))
			bad = parse_u64(val, MIN_OPS, MAX_OPS, &a->ops);
		else if (!strcmp(opt, "--io-size"))
			bad = parse_u64(val, 1, MAX_IO_SIZE, &a->io_size);
		else if (!strcmp(opt, "--shape"))
			bad = parse_shape(val, &a->shape);
		else
			bad = -1;
		if (bad) {
			fprintf(stderr, "genload: %s %s: unknown option or bad value\n", opt, val);
			return -1;
		}
		a->trace_args |= !strcmp(opt, "--seed") || !strcmp(opt, "--ops");
		a->io_size_given |= !strcmp(opt, "--io-size");
		i++;
	}
	if (a->shape == SHAPE_DEFAULT ? a->io_size_given : a->trace_args) {
		fprintf(stderr, "genload: --seed and --ops shape the default trace, "
			"--io-size the bulk shapes\n");
		return -1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	static struct gen g;
	struct args a = { SHAPE_DEFAULT, DEFAULT_SEED, DEFAULT_OPS, DEFAULT_IO_SIZE, false, false };

	for (int i = 1; i < argc; i++)
		if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h"))
			return usage(stdout, 0);
	if (parse_args(argc, argv, &a) < 0)
		return usage(stderr, 2);
	/* Few words: some parsers split '#' lines into fields before
	 * skipping them. */
	if (a.shape == SHAPE_DEFAULT) {
		g.rng = a.seed;
		printf("# generated: genload --seed %" PRIu64 " --ops %" PRIu64 "\n", a.seed, a.ops);
		session(&g, a.ops);
	} else {
		printf("# generated: genload --shape %s --io-size %" PRIu64 "\n",
		       shape_names[a.shape], a.io_size);
		bulk_session(&g, a.shape, (unsigned)a.io_size);
	}
	if (fflush(stdout) != 0 || ferror(stdout)) {
		perror("genload: write");
		return 1;
	}
	return 0;
}
