/* symbolize.c: reads code objects out of target processes once, caches
 * them by (pid, address, code id, kind) so that a freed-and-reused address is
 * not taken for the old function, and decodes locations on demand through
 * the shared, indexed line tables (linetabs.c).  Native and kernel functions
 * are entries too (pid 0, their kind, no line table).
 *
 * A code object may be freed between its sample and its read (a module's
 * code when its import ends, read at the next drain of the ring, up to 20 ms
 * later): free() puts its links over the first two words, the rest stays
 * until the memory is reused; the code id the BPF program computed from the
 * fields at the sample says whether they are still the object's.  Reused
 * already, it is a placeholder (<unreadable code 0x...>, or <stale code
 * 0x...> when another code object sits there). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "proc/procmem.h"
#include "cpython/pyread.h"
#include "lib/hash.h"
#include "lib/mem.h"
#include "lib/strtab.h"
#include "model/symbolize.h"

void tb_sym_init(struct tb_symbolizer *s, struct tb_strtab *strs)
{
	memset(s, 0, sizeof(*s));
	s->strs = strs;
	tb_linetabs_init(&s->tables);
}

void tb_sym_free(struct tb_symbolizer *s)
{
	tb_linetabs_free(&s->tables);
	free(s->scratch.d);
	free(s->codes);
	free(s->pids);
	tb_hmap_free(&s->index);
	tb_hmap_free(&s->pid_index);
	memset(s, 0, sizeof(*s));
}

static uint64_t key_hash(pid_t pid, uint64_t addr, uint16_t id, uint8_t kind)
{
	return tb_hash2(addr, ((uint64_t)kind << 48) | ((uint64_t)(uint32_t)pid << 16) | id);
}

struct code_key {
	const struct tb_symbolizer *s;
	pid_t pid;
	uint64_t addr;
	uint16_t code_id;
	uint8_t kind;
};

static int same_code(const void *ctx, uint32_t i)
{
	const struct code_key *k = ctx;
	const struct tb_code *c = &k->s->codes[i];

	return c->pid == k->pid && c->addr == k->addr && c->code_id == k->code_id &&
	       c->kind == k->kind && !c->dead;
}

/* The chain entry of pid (added if new; an entry's pid is its first field). */
static struct tb_sym_pid *pid_entry(struct tb_symbolizer *s, pid_t pid)
{
	uint32_t i = tb_hmap_intern_key(&s->pid_index, s->pids, sizeof(*s->pids), &pid, sizeof(pid),
					s->npids);

	if (i == s->npids) {
		s->pids = tb_grow(s->pids, &s->cappids, s->npids + 1, sizeof(*s->pids), 64);
		s->pids[s->npids++] = (struct tb_sym_pid){ pid, 0, 0 };
	}
	return &s->pids[i];
}

static void placeholder(struct tb_symbolizer *s, struct tb_code *c, const char *what)
{
	char name[64];

	snprintf(name, sizeof(name), "<%s 0x%llx>", what, (unsigned long long)c->addr);
	c->qualname = tb_strtab_intern(s->strs, name);
	c->filename = tb_strtab_intern(s->strs, "<unknown>");
	c->resolved = 0;
	s->unresolved_codes++;
}

/* Point c to the shared copy of its line table (process_kept: the budget of its process). */
static void set_linetable(struct tb_symbolizer *s, struct tb_code *c, int py_minor, const unsigned char *bytes,
			  uint32_t len, uint64_t *process_kept)
{
	const struct tb_linetab *tab;

	c->linetab = tb_linetabs_add(&s->tables, py_minor, bytes, len, process_kept);
	tab = tb_linetabs_get(&s->tables, c->linetab);
	c->linetable = tab ? tab->bytes : NULL;
	c->linetable_len = tab ? tab->len : 0;
	if (len && !tab)
		s->lines_dropped++;
}

static int read_code(struct tb_symbolizer *s, struct tb_code *c, const struct tb_layout *l,
		     uint64_t pycode_type)
{
	unsigned char buf[TB_CODE_READ_MAX];
	uint64_t type, name_p, file_p, table_p;
	int32_t firstlineno, argcount;
	uint32_t version = 0;
	int id_ok, freed = 0;
	char text[4096];
	size_t size = tb_layout_read_size(l, TB_READ_CODE); /* the fields' span, <= sizeof(buf) */

	if (!size || tb_mem_read(c->pid, c->addr, buf, size))
		return -1;
	memcpy(&type, buf + l->bpf.object_type, 8);
	memcpy(&firstlineno, buf + l->code_firstlineno, 4);
	memcpy(&argcount, buf + l->code_argcount, 4);
	if (l->code_version != TB_NO_OFFSET)
		memcpy(&version, buf + l->code_version, 4);
	/* another type: freed since the sample (malloc's links over ob_refcnt and
	 * ob_type), its fields its own if they still give the sample's code id;
	 * else reused for something else.  The code type but another id: reused
	 * for another code object (stale). */
	id_ok = tb_code_id((uint32_t)firstlineno, (uint32_t)argcount, version) == c->code_id;
	freed = pycode_type && type != pycode_type;
	if (freed && !id_ok)
		return -1;
	if (!id_ok) {
		s->stale++;
		return -2;
	}
	memcpy(&name_p, buf + (l->code_qualname != TB_NO_OFFSET ? l->code_qualname : l->code_name), 8);
	memcpy(&file_p, buf + l->code_filename, 8);
	memcpy(&table_p, buf + l->code_linetable, 8);
	if (tb_read_pystr(c->pid, l, name_p, text, sizeof(text)))
		return -1;
	c->qualname = tb_strtab_intern(s->strs, text);
	if (tb_read_pystr(c->pid, l, file_p, text, sizeof(text)))
		return -1;
	c->filename = tb_strtab_intern(s->strs, text);
	c->firstlineno = firstlineno;
	if (!tb_read_pybytes(c->pid, l, table_p, TB_MAX_LINETABLE, &s->scratch))
		set_linetable(s, c, (int)l->minor, s->scratch.d, (uint32_t)s->scratch.n,
			      &pid_entry(s, c->pid)->lines_kept);
	if (l->code_nunits != TB_NO_OFFSET) {
		int64_t units;

		memcpy(&units, buf + l->code_nunits, 8);
		if (units > 0 && units < (1 << 26))
			c->nbytes = (uint32_t)units * 2;
	}
	c->resolved = 1;
	s->freed += freed;
	return 0;
}

/* The live code (pid, addr, code_id, kind), or else TB_HMAP_NONE after
 * indexing s->n for it: the caller appends it. */
static uint32_t lookup(struct tb_symbolizer *s, pid_t pid, uint64_t addr, uint16_t code_id,
		       uint8_t kind)
{
	const struct code_key k = { s, pid, addr, code_id, kind };
	uint32_t i = tb_hmap_intern(&s->index, key_hash(pid, addr, code_id, kind), s->n, same_code, &k);

	return i == s->n ? TB_HMAP_NONE : i;
}

uint32_t tb_sym_find(const struct tb_symbolizer *s, pid_t pid, uint64_t addr, uint16_t code_id)
{
	const struct code_key k = { s, pid, addr, code_id, TB_CODE_PYTHON };

	return tb_hmap_find(&s->index, key_hash(pid, addr, code_id, TB_CODE_PYTHON), same_code, &k);
}

static struct tb_code *append(struct tb_symbolizer *s, pid_t pid, uint64_t addr, uint16_t code_id,
			      int py_minor)
{
	struct tb_sym_pid *e = pid_entry(s, pid);
	struct tb_code *c;

	s->codes = tb_grow(s->codes, &s->cap, s->n + 1, sizeof(*s->codes), 1024);
	c = &s->codes[s->n];
	memset(c, 0, sizeof(*c));
	c->pid = pid;
	c->addr = addr;
	c->code_id = code_id;
	c->py_minor = (uint8_t)py_minor;
	c->pid_prev = e->last;
	e->last = ++s->n;
	return c;
}

uint32_t tb_sym_code(struct tb_symbolizer *s, pid_t pid, const struct tb_layout *l,
		     uint64_t pycode_type, uint64_t addr, uint16_t code_id)
{
	uint32_t found = lookup(s, pid, addr, code_id, TB_CODE_PYTHON);
	struct tb_code *c;
	int rc;

	s->lookups++;
	if (found != TB_HMAP_NONE)
		return found;
	c = append(s, pid, addr, code_id, (int)l->minor);
	s->reads++;
	rc = read_code(s, c, l, pycode_type);
	if (rc)
		placeholder(s, c, rc == -2 ? "stale code" : "unreadable code");
	return s->n - 1;
}

uint32_t tb_sym_insert(struct tb_symbolizer *s, pid_t pid, uint64_t addr, uint16_t code_id,
		       int py_minor, const char *qualname, const char *filename, int32_t firstlineno,
		       const unsigned char *linetable, uint32_t linetable_len)
{
	uint32_t found = lookup(s, pid, addr, code_id, TB_CODE_PYTHON);
	struct tb_code *c;

	if (found != TB_HMAP_NONE)
		return found;
	c = append(s, pid, addr, code_id, py_minor);
	c->qualname = tb_strtab_intern(s->strs, qualname);
	c->filename = tb_strtab_intern(s->strs, filename);
	c->firstlineno = firstlineno;
	/* capture files: no budget per process (what was kept when recording fits the total) */
	set_linetable(s, c, py_minor, linetable, linetable_len, NULL);
	c->resolved = 1;
	return s->n - 1;
}

uint32_t tb_sym_function(struct tb_symbolizer *s, enum tb_code_kind kind, uint64_t key,
			 const char *name, const char *module)
{
	uint32_t found = lookup(s, 0, key, 0, (uint8_t)kind);
	struct tb_code *c;

	if (found != TB_HMAP_NONE)
		return found;
	c = append(s, 0, key, 0, 0);
	c->kind = (uint8_t)kind;
	c->qualname = tb_strtab_intern(s->strs, name);
	c->filename = tb_strtab_intern(s->strs, module);
	c->resolved = 1;
	return s->n - 1;
}

const char *tb_code_kind_name(unsigned kind)
{
	static const char *const names[TB_CODE_KINDS] = { "python", "native", "kernel", "task" };

	return kind < TB_CODE_KINDS ? names[kind] : names[TB_CODE_PYTHON];
}

const char *tb_module_name(unsigned kind, const char *file)
{
	const char *slash = kind == TB_CODE_NATIVE ? strrchr(file, '/') : NULL;

	return slash && slash[1] ? slash + 1 : file;
}

void tb_sym_location(const struct tb_symbolizer *s, uint32_t idx, int32_t offset,
		     struct tb_location *loc)
{
	const struct tb_code *c = &s->codes[idx];

	loc->line = loc->end_line = loc->col = loc->end_col = -1;
	if (!c->resolved)
		return;
	if (offset < 0 || tb_linetabs_lookup(&s->tables, c->linetab, c->firstlineno, offset, loc)) {
		loc->line = loc->end_line = c->firstlineno;
		loc->col = loc->end_col = -1;
	}
}

static int is_live(const void *ctx, uint32_t i)
{
	const struct tb_symbolizer *s = ctx;

	return !s->codes[i].dead;
}

/* Dead codes are never found; they leave the index once they are half of
 * it: each rebuild is paid for by the forgets since the last. */
static void kill_code(struct tb_symbolizer *s, uint32_t i)
{
	if (s->codes[i].dead)
		return;
	s->codes[i].dead = 1;
	s->dead_indexed++;
	s->forgotten++;
}

static void prune_dead(struct tb_symbolizer *s)
{
	if ((uint64_t)s->dead_indexed * 2 > s->index.used) {
		tb_hmap_retain(&s->index, is_live, s);
		s->dead_indexed = 0;
	}
}

void tb_sym_forget_pid(struct tb_symbolizer *s, pid_t pid)
{
	uint32_t e = tb_hmap_find_key(&s->pid_index, s->pids, sizeof(*s->pids), &pid, sizeof(pid));

	if (e == TB_HMAP_NONE)
		return;
	/* walk the pid's own chain: the cost is its code objects, not all of them */
	for (uint32_t i = s->pids[e].last; i; i = s->codes[i - 1].pid_prev)
		kill_code(s, i - 1);
	s->pids[e].last = 0;
	s->pids[e].lines_kept = 0;  /* a process that reuses the pid starts a budget of its own */
	prune_dead(s);
}

void tb_sym_forget_code(struct tb_symbolizer *s, uint32_t idx)
{
	if (idx < s->n && !s->codes[idx].dead && !s->codes[idx].resolved && s->unresolved_codes)
		s->unresolved_codes--; /* its placeholder is shown nowhere */
	if (idx < s->n) {
		kill_code(s, idx);
		prune_dead(s);
	}
}
