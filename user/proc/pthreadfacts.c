/* pthreadfacts.c: reads _thread_db_sizeof_pthread (a u32) and
 * _thread_db_pthread_tid (a descriptor {bits, count, offset}, three u32) from
 * the libc.so.6 a process maps: the file's .dynsym and the bytes at those
 * addresses in the file (its PT_LOAD segments), never the process's memory.
 * The last file read is remembered by device, inode, size and mtime. */
#define _GNU_SOURCE
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include "proc/elfsym.h"
#include "proc/pthreadfacts.h"
#include "proc/targetfile.h"

#define LIBC_MAX_BYTES (64u << 20)
/* sanity bounds: glibc's struct pthread is 0x700 to 0x900 bytes on 2.3x */
#define PTHREAD_SIZE_MIN 256
#define PTHREAD_SIZE_MAX 16384

/* Is base the name of glibc's C library: libc.so.6, or libc-2.X.so before 2.34? */
static int is_libc_name(const char *base)
{
	unsigned a, b;
	int end = 0;

	return strcmp(base, "libc.so.6") == 0 ||
	       (sscanf(base, "libc-%u.%u.so%n", &a, &b, &end) == 2 && end && base[end] == '\0');
}

/* The first mapping at offset 0 of a libc file: its range and path; 0 found. */
static int find_libc(pid_t pid, uint64_t *start, uint64_t *end, char *path, size_t pathlen)
{
	char maps[64], line[PATH_MAX + 128];
	FILE *f;
	int found = -1;

	snprintf(maps, sizeof(maps), "/proc/%d/maps", (int)pid);
	if (!(f = fopen(maps, "re")))
		return -1;
	while (found && fgets(line, sizeof(line), f)) {
		uint64_t s, e, off;
		int pos = 0;
		const char *name, *base;

		if (sscanf(line, "%" SCNx64 "-%" SCNx64 " %*s %" SCNx64 " %*s %*s %n", &s, &e, &off, &pos) < 3 ||
		    !pos || off)
			continue;
		line[strcspn(line, "\n")] = '\0';
		name = line + pos;
		base = strrchr(name, '/');
		if (name[0] != '/' || !is_libc_name(base + 1))
			continue;
		*start = s;
		*end = e;
		snprintf(path, pathlen, "%s", name);
		found = 0;
	}
	fclose(f);
	return found;
}

/* len bytes at vaddr of the file (inside one PT_LOAD's file bytes); 0 ok. */
static int read_vaddr(struct tb_elf *e, uint64_t vaddr, void *buf, size_t len)
{
	size_t nphdr = 0;

	if (elf_getphdrnum(e->elf, &nphdr))
		return -1;
	for (size_t i = 0; i < nphdr && i < 256; i++) {
		GElf_Phdr ph;

		if (!gelf_getphdr(e->elf, (int)i, &ph) || ph.p_type != PT_LOAD || vaddr < ph.p_vaddr ||
		    vaddr - ph.p_vaddr > ph.p_filesz || ph.p_filesz - (vaddr - ph.p_vaddr) < len)
			continue;
		return pread(e->fd, buf, len, (off_t)(ph.p_offset + (vaddr - ph.p_vaddr))) == (ssize_t)len ? 0 : -1;
	}
	return -1;
}

/* A u32 array symbol of exactly n words, read; 0 ok. */
static int read_u32s(struct tb_elf *e, const char *name, uint32_t *out, unsigned n)
{
	uint64_t value, size;

	if (tb_elf_symbol(e, name, &value, &size) || size != n * sizeof(uint32_t))
		return -1;
	return read_vaddr(e, value, out, n * sizeof(uint32_t));
}

static struct {
	dev_t dev;
	ino_t ino;
	off_t size;
	struct timespec mtime;
	struct tb_pthread_facts facts;
	int valid;
} last;

int tb_pthread_facts(pid_t pid, struct tb_pthread_facts *f)
{
	char path[PATH_MAX];
	uint64_t start, end;
	uint32_t size, tid[3];
	struct stat st;
	struct tb_elf e;
	const char *why;
	int fd, rc;

	memset(f, 0, sizeof(*f));
	if (find_libc(pid, &start, &end, path, sizeof(path)))
		return -1;
	if ((fd = tb_open_mapped(pid, start, end, path, LIBC_MAX_BYTES, &st, &why)) < 0)
		return -1;
	if (last.valid && last.dev == st.st_dev && last.ino == st.st_ino && last.size == st.st_size &&
	    last.mtime.tv_sec == st.st_mtim.tv_sec && last.mtime.tv_nsec == st.st_mtim.tv_nsec) {
		close(fd);
		*f = last.facts;
		return 0;
	}
	if (tb_elf_open_fd(fd, &e))
		return -1;
	/* tid: 32 bits, one of them, at an offset inside the struct */
	rc = read_u32s(&e, "_thread_db_sizeof_pthread", &size, 1) || read_u32s(&e, "_thread_db_pthread_tid", tid, 3) ||
	     size < PTHREAD_SIZE_MIN || size > PTHREAD_SIZE_MAX || tid[0] != 32 || tid[1] != 1 ||
	     tid[2] > size - 4 || (tid[2] & 3) ? -1 : 0;
	tb_elf_close(&e);
	if (rc)
		return -1;
	f->size = size;
	f->tid_offset = tid[2];
	last.dev = st.st_dev;
	last.ino = st.st_ino;
	last.size = st.st_size;
	last.mtime = st.st_mtim;
	last.facts = *f;
	last.valid = 1;
	return 0;
}
