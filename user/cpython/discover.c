/* discover.c: finds the CPython runtime of a process from its mappings:
 * which mapped ELF file (python executable or libpython) defines
 * _PyRuntime, where it is loaded, which version it is (Py_Version, the
 * debug-offsets cookie, or the PY_VERSION string for 3.10) and its layout. */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "cpython/discover.h"
#include "cpython/elffacts.h"
#include "cpython/versions.h"
#include "proc/arch.h"
#include "proc/procmem.h"
#include "proc/pthreadfacts.h"

#define MAX_CANDIDATES 64

struct mapping {
	uint64_t start, end, offset;
	char path[PATH_MAX];
};

static int read_small_file(const char *path, char *buf, size_t len)
{
	FILE *f = fopen(path, "re");
	size_t n;

	if (!f)
		return -1;
	n = fread(buf, 1, len - 1, f);
	fclose(f);
	buf[n] = '\0';
	return (int)n;
}

void tb_read_proc_names(pid_t pid, char *comm, size_t commlen, char *cmdline, size_t cmdlen)
{
	char path[64];
	int n;

	snprintf(path, sizeof(path), "/proc/%d/comm", (int)pid);
	if (comm && commlen) {
		comm[0] = '\0';
		if (read_small_file(path, comm, commlen) > 0)
			comm[strcspn(comm, "\n")] = '\0';
	}
	if (!cmdline || !cmdlen)
		return;
	cmdline[0] = '\0';
	snprintf(path, sizeof(path), "/proc/%d/cmdline", (int)pid);
	n = read_small_file(path, cmdline, cmdlen);
	for (int i = 0; i < n - 1; i++)
		if (cmdline[i] == '\0')
			cmdline[i] = ' ';
}

static const char *base_name(const char *p)
{
	const char *s = strrchr(p, '/');

	return s ? s + 1 : p;
}

/* python3.11, libpython3.12.so.1.0, python3.14t; not extension modules
 * (_json.cpython-312-x86_64-linux-gnu.so), which are many and never hold
 * the runtime. */
static int looks_like_python(const char *base)
{
	return (strncmp(base, "python", 6) == 0 || strncmp(base, "libpython", 9) == 0) &&
	       !strstr(base, ".cpython-");
}

/* The version a file's name gives: python2.7, libpython3.9.so.1.0,
 * python3.14t -> 2 and 7, ... 0 if it names one, else -1. */
static int version_of_name(const char *base, unsigned *major, unsigned *minor)
{
	const char *s = base + (strncmp(base, "lib", 3) == 0 ? 3 : 0);
	char *end;

	if (strncmp(s, "python", 6) != 0 || s[6] < '2' || s[6] > '9' || s[7] != '.')
		return -1;
	*major = (unsigned)(s[6] - '0');
	*minor = (unsigned)strtoul(s + 8, &end, 10);
	return end == s + 8 || *minor > 99 ? -1 : 0;
}

/* "CPython 2.7 is not supported" for a process whose files name a version
 * outside the range (a runtime not found, or its version not read: CPython
 * before 3.10 defines no Py_Version and no debug offsets); 0 if said in err. */
static int say_unsupported_by_name(pid_t pid, const struct mapping *maps, int n, char *err, size_t errlen)
{
	for (int i = 0; i < n; i++) {
		unsigned major, minor;

		if (version_of_name(base_name(maps[i].path), &major, &minor) ||
		    (major == 3 && minor >= TB_PY_MIN_MINOR && minor <= TB_PY_MAX_MINOR))
			continue;
		snprintf(err, errlen, "pid %d: CPython %u.%u (%s) is not supported: tachyon-bpf reads CPython 3.%u to 3.%u",
			 (int)pid, major, minor, maps[i].path, TB_PY_MIN_MINOR, TB_PY_MAX_MINOR);
		return 0;
	}
	return -1;
}

/* The first mapping (offset 0) of each file whose name looks like python,
 * and the main executable's, in map order. */
static int read_candidates(pid_t pid, struct mapping *out, int max, int *exists)
{
	char path[64], line[PATH_MAX + 128];
	FILE *f;
	int n = 0, first = 1;

	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	f = fopen(path, "re");
	*exists = f != NULL;
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f) && n < max) {
		struct mapping m;
		int pos = 0;

		if (sscanf(line, "%" SCNx64 "-%" SCNx64 " %*s %" SCNx64 " %*s %*s %n",
			   &m.start, &m.end, &m.offset, &pos) < 3 || pos == 0)
			continue;
		snprintf(m.path, sizeof(m.path), "%s", line + pos);
		m.path[strcspn(m.path, "\n")] = '\0';
		if (m.path[0] != '/' || m.offset != 0)
			continue;
		/* The executable is the first file mapping; take it in case python
		 * is embedded under another name. */
		if (looks_like_python(base_name(m.path)) || first) {
			int dup = 0;

			for (int i = 0; i < n; i++)
				dup |= strcmp(out[i].path, m.path) == 0;
			if (!dup)
				out[n++] = m;
		}
		first = 0;
	}
	fclose(f);
	return n;
}

static int detect_version(pid_t pid, const struct tb_elffacts *f, uint64_t bias, uint32_t *hex)
{
	uint32_t v;

	if (f->have & TB_EF_PY_VERSION) {
		if (tb_mem_read(pid, f->py_version + bias, &v, sizeof(v)))
			return 1; /* not mapped yet: the loader is still at work */
		if ((v >> 24) == 3) {
			*hex = v;
			return 0;
		}
	}
	if (f->have & TB_EF_MICRO_3_10) {
		*hex = 0x030a0000u | (f->micro_3_10 << 8) | 0xf0;
		return 0;
	}
	return -1;
}

static int load_layout(struct tb_target *t, uint32_t hex, char *err, size_t errlen)
{
	unsigned minor = (hex >> 16) & 0xff;
	size_t dsize = tb_debug_offsets_size(minor);

	if (dsize) {
		unsigned char buf[4096];

		if (dsize > sizeof(buf) || tb_mem_read(t->pid, t->runtime_addr, buf, dsize)) {
			snprintf(err, errlen, "pid %d: the Python runtime is not readable (yet)", (int)t->pid);
			return 1;
		}
		/* the loader maps the whole file first, the data segment over it later: until
		 * then _PyRuntime's address holds other bytes of the file (no cookie yet) */
		if (memcmp(buf, "xdebugpy", 8) != 0) {
			snprintf(err, errlen, "pid %d: no \"xdebugpy\" cookie at _PyRuntime+0 (its data is not mapped yet, or it is not CPython 3.13+)",
				 (int)t->pid);
			return 1;
		}
		return tb_layout_from_debug_offsets(buf, dsize, &t->layout, err, errlen);
	}
	if (tb_layout_builtin(hex, &t->layout)) {
		snprintf(err, errlen, "pid %d: unsupported Python version %u.%u.%u (supported: 3.%u to 3.%u)",
			 (int)t->pid, (hex >> 24) & 0xff, minor, (hex >> 8) & 0xff, TB_PY_MIN_MINOR, TB_PY_MAX_MINOR);
		return -1;
	}
	return 0;
}

/* Where pthread_self() and the thread id are, from the target's glibc. Where
 * the thread pointer is not pthread_self() (arm64) the BPF program cannot
 * match a thread to its state without it: 1 (not yet: libc is mapped by the
 * loader after the executable) with why. */
static int read_pthread_facts(struct tb_target *t, char *err, size_t errlen)
{
	struct tb_pthread_facts f;

	if (tb_pthread_facts(t->pid, &f) == 0) {
		t->tls_to_pthread = tb_arch.tp_is_pthread ? 0 : f.size;
		t->pthread_tid_offset = f.tid_offset;
		return 0;
	}
	if (tb_arch.tp_is_pthread)
		return 0;
	snprintf(err, errlen, "pid %d: no glibc libc.so.6 (with _thread_db_sizeof_pthread) mapped (yet): "
		 "its threads' pthread_self() is unknown on %s", (int)t->pid, tb_arch.name);
	return 1;
}

int tb_discover(pid_t pid, struct tb_target *t, char *err, size_t errlen)
{
	struct mapping maps[MAX_CANDIDATES];
	int exists, n;

	memset(t, 0, sizeof(*t));
	t->pid = pid;
	n = read_candidates(pid, maps, MAX_CANDIDATES, &exists);
	if (n < 0) {
		snprintf(err, errlen, "pid %d: %s", (int)pid,
			 errno == ENOENT || !exists ? "no such process" : strerror(errno));
		return -1;
	}
	tb_read_proc_names(pid, t->comm, sizeof(t->comm), t->cmdline, sizeof(t->cmdline));
	tb_procname_read(pid, t->comm, t->name, sizeof(t->name));
	for (int i = 0; i < n; i++) {
		struct tb_elffacts f;
		uint64_t bias;
		uint32_t hex;
		int rc;

		if (tb_elffacts_of_mapping(pid, maps[i].start, maps[i].end, maps[i].path, &f) ||
		    !(f.have & TB_EF_RUNTIME))
			continue;
		bias = maps[i].start - f.first_load_vaddr;
		t->runtime_addr = f.runtime + bias;
		snprintf(t->elf_path, sizeof(t->elf_path), "%s", maps[i].path);
		t->shared_lib = strstr(base_name(maps[i].path), ".so") != NULL;
		if (f.have & TB_EF_PYCODE_TYPE)
			t->pycode_type = f.pycode_type + bias;
		if (f.have & TB_EF_NONE)
			t->none_addr = f.none + bias;
		rc = detect_version(pid, &f, bias, &hex);
		if (rc > 0) {
			snprintf(err, errlen, "pid %d: the Python runtime is not readable (yet)", (int)pid);
			return 1;
		}
		if (rc) {
			if (say_unsupported_by_name(pid, maps, n, err, errlen))
				snprintf(err, errlen, "pid %d: %s defines _PyRuntime but its version could not be read "
					 "(not CPython 3.%u to 3.%u, the versions tachyon-bpf reads?)",
					 (int)pid, maps[i].path, TB_PY_MIN_MINOR, TB_PY_MAX_MINOR);
			return -1;
		}
		rc = load_layout(t, hex, err, errlen);
		return rc ? rc : read_pthread_facts(t, err, errlen);
	}
	if (say_unsupported_by_name(pid, maps, n, err, errlen) == 0)
		return -1;
	snprintf(err, errlen, "pid %d (%s): not a Python process (no CPython runtime in its mappings)",
		 (int)pid, t->comm);
	return 1;
}

void tb_target_to_proc(const struct tb_target *t, struct tb_proc *p)
{
	const struct tb_layout *l = &t->layout;

	memset(p, 0, sizeof(*p));
	p->runtime_addr = t->runtime_addr;
	p->pycode_type = t->pycode_type;
	p->none_addr = t->none_addr;
	p->tls_to_pthread = t->tls_to_pthread;
	p->off = l->bpf;
	/* the spans of the fields read, each within its buffer (tb_layout_check_reads) */
	p->off.frame_read_size = (__u8)tb_layout_read_size(l, TB_READ_FRAME);
	p->off.code_read_size = (__u8)tb_layout_read_size(l, TB_READ_CODE_HEAD);
	p->off.tstate_read_size = (__u8)tb_layout_read_size(l, TB_READ_TSTATE);
	p->off.tstate_interp = l->tstate_interp;
	p->off.tstate_exc_info = l->tstate_exc_info;
	p->off.stackitem_exc_value = l->stackitem_exc_value;
	p->off.runtime_gil = l->runtime_gil_holder != TB_NO_OFFSET ? (__u16)(l->runtime_gil_holder - 8) :
								       TB_NO_OFFSET;
	p->off.gil_holder = l->runtime_gil_holder != TB_NO_OFFSET ? 8 : l->gil_holder;
	p->off.gil_locked = l->runtime_gil_locked != TB_NO_OFFSET ?
		(__u16)(l->runtime_gil_locked - l->runtime_gil_holder + 8) : l->gil_locked;
	p->off.interp_ceval_gil = l->interp_ceval_gil;
	p->off.gil_enabled = l->gil_enabled; /* free-threaded: the GIL is read only while enabled */
	p->off.interp_gc_collecting = l->interp_gc_collecting;
}
