/* elffacts.c: reads the CPython runtime's symbols and version from a mapped
 * ELF file (proc/elfsym.c, pread-based and bounded) and keeps what it found
 * in a small table keyed by the file's identity, so that under
 * --all-python every exec of the same binary, python or not, and every
 * retry of a discovery costs an open and an fstat instead of a read of its
 * symbol tables.  The ctime in the key cannot be set by a user: a file
 * cannot pass for another one that later takes its inode. */
#include <stddef.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "cpython/elffacts.h"
#include "proc/elfsym.h"
#include "proc/targetfile.h"

#define CACHE_SLOTS 64

struct slot {
	dev_t dev;
	ino_t ino;
	off_t size;
	struct timespec mtime, ctime;
	int used;
	struct tb_elffacts f;
};

static struct slot cache[CACHE_SLOTS];
static unsigned next_slot;   /* replaced round-robin */

/* the symbols looked up when the file holds the runtime */
static const struct {
	const char *name;
	unsigned bit;
	size_t field;
} symbols[] = {
	{ "PyCode_Type", TB_EF_PYCODE_TYPE, offsetof(struct tb_elffacts, pycode_type) },
	{ "_Py_NoneStruct", TB_EF_NONE, offsetof(struct tb_elffacts, none) },
	{ "Py_Version", TB_EF_PY_VERSION, offsetof(struct tb_elffacts, py_version) },
};

static int same_file(const struct slot *s, const struct stat *st)
{
	return s->used && s->dev == st->st_dev && s->ino == st->st_ino && s->size == st->st_size &&
	       s->mtime.tv_sec == st->st_mtim.tv_sec && s->mtime.tv_nsec == st->st_mtim.tv_nsec &&
	       s->ctime.tv_sec == st->st_ctim.tv_sec && s->ctime.tv_nsec == st->st_ctim.tv_nsec;
}

/* Unchanged since st was taken (so what was read may be remembered)? */
static int unchanged(int fd, const struct stat *st)
{
	struct slot s = { st->st_dev, st->st_ino, st->st_size, st->st_mtim, st->st_ctim, 1, { 0 } };
	struct stat now;

	return !fstat(fd, &now) && same_file(&s, &now);
}

/* Read the facts from fd (taken over).  0 ok, -1 not ELF or unreadable;
 * *keep: no read failed (libelf's error is clear) and the file did not
 * change meanwhile. */
static int read_facts(int fd, const struct stat *st, struct tb_elffacts *f, int *keep)
{
	struct tb_elf e;
	uint64_t v;

	memset(f, 0, sizeof(*f));
	*keep = 0;
	if (tb_elf_open_fd(fd, &e))
		return -1;
	f->first_load_vaddr = e.first_load_vaddr;
	elf_errno(); /* clears it */
	if (!tb_elf_symbol(&e, "_PyRuntime", &v, NULL) || !tb_elf_section(&e, ".PyRuntime", &v, NULL)) {
		f->have |= TB_EF_RUNTIME;
		f->runtime = v;
		for (size_t i = 0; i < sizeof(symbols) / sizeof(symbols[0]); i++)
			if (!tb_elf_symbol(&e, symbols[i].name, &v, NULL)) {
				f->have |= symbols[i].bit;
				memcpy((char *)f + symbols[i].field, &v, sizeof(v));
			}
		/* 3.10 has no Py_Version: its PY_VERSION string instead */
		if (!(f->have & TB_EF_PY_VERSION) && !tb_elf_find_version_string(&e, 10, &f->micro_3_10))
			f->have |= TB_EF_MICRO_3_10;
	}
	*keep = elf_errno() == 0 && unchanged(e.fd, st);
	tb_elf_close(&e);
	return 0;
}

int tb_elffacts_of_mapping(pid_t pid, uint64_t start, uint64_t end, const char *path,
			   struct tb_elffacts *f)
{
	struct stat st;
	const char *why;
	struct slot *s;
	int fd = tb_open_mapped(pid, start, end, path, TB_ELFFACTS_MAX_FILE, &st, &why), rc, keep;

	if (fd < 0)
		return -1;
	for (unsigned i = 0; i < CACHE_SLOTS; i++)
		if (same_file(&cache[i], &st)) {
			close(fd);
			*f = cache[i].f;
			return 0;
		}
	rc = read_facts(fd, &st, f, &keep);
	/* files without the runtime too (the shell, at every exec); not one
	 * that changed while it was read, nor a read that failed */
	if (rc == 0 && keep) {
		s = &cache[next_slot++ % CACHE_SLOTS];
		*s = (struct slot){ st.st_dev, st.st_ino, st.st_size, st.st_mtim, st.st_ctim, 1, *f };
	}
	return rc;
}
