/* symbolize.c: reads code objects out of target processes once, caches
 * them by (pid, address, code id) so that a freed-and-reused address is
 * not taken for the old function, and decodes locations on demand. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "proc/procmem.h"
#include "cpython/pyread.h"
#include "lib/strtab.h"
#include "model/symbolize.h"

void tb_sym_init(struct tb_symbolizer *s, struct tb_strtab *strs)
{
	memset(s, 0, sizeof(*s));
	s->strs = strs;
}

void tb_sym_free(struct tb_symbolizer *s)
{
	for (uint32_t i = 0; i < s->n; i++)
		free(s->codes[i].linetable);
	free(s->codes);
	free(s->slots);
	memset(s, 0, sizeof(*s));
}

static uint64_t key_hash(pid_t pid, uint64_t addr, uint16_t id)
{
	uint64_t k[2] = { addr, ((uint64_t)(uint32_t)pid << 16) | id };

	return tb_hash_bytes(k, sizeof(k), 7);
}

static void grow_slots(struct tb_symbolizer *s)
{
	uint32_t n = s->nslots ? s->nslots * 2 : 4096;

	free(s->slots);
	s->slots = calloc(n, sizeof(uint32_t));
	if (!s->slots)
		abort();
	s->nslots = n;
	for (uint32_t i = 0; i < s->n; i++) {
		const struct tb_code *c = &s->codes[i];
		uint32_t j;

		if (c->dead)
			continue;
		j = (uint32_t)key_hash(c->pid, c->addr, c->code_id) & (n - 1);
		while (s->slots[j])
			j = (j + 1) & (n - 1);
		s->slots[j] = i + 1;
	}
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

static int read_code(struct tb_symbolizer *s, struct tb_code *c, const struct tb_layout *l,
		     uint64_t pycode_type)
{
	unsigned char buf[512];
	uint64_t type, name_p, file_p, table_p;
	int32_t firstlineno, argcount;
	uint32_t version = 0;
	char text[4096];
	size_t tlen;

	if (l->code_size > sizeof(buf) || tb_mem_read(c->pid, c->addr, buf, l->code_size))
		return -1;
	memcpy(&type, buf + l->bpf.object_type, 8);
	if (pycode_type && type != pycode_type)
		return -1;
	memcpy(&firstlineno, buf + l->code_firstlineno, 4);
	memcpy(&argcount, buf + l->code_argcount, 4);
	if (l->code_version != TB_NO_OFFSET)
		memcpy(&version, buf + l->code_version, 4);
	if (tb_code_id((uint32_t)firstlineno, (uint32_t)argcount, version) != c->code_id) {
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
	if (!tb_read_pybytes(c->pid, l, table_p, TB_MAX_LINETABLE, &c->linetable, &tlen))
		c->linetable_len = (uint32_t)tlen;
	if (l->code_nunits != TB_NO_OFFSET) {
		int64_t units;

		memcpy(&units, buf + l->code_nunits, 8);
		if (units > 0 && units < (1 << 26))
			c->nbytes = (uint32_t)units * 2;
	}
	c->resolved = 1;
	return 0;
}

/* Find (pid, addr, code_id); *slot receives the index slot to fill if absent. */
static int lookup(struct tb_symbolizer *s, pid_t pid, uint64_t addr, uint16_t code_id, uint32_t *slot)
{
	uint32_t j;

	if ((s->n + 1) * 2 >= s->nslots)
		grow_slots(s);
	j = (uint32_t)key_hash(pid, addr, code_id) & (s->nslots - 1);
	for (; s->slots[j]; j = (j + 1) & (s->nslots - 1)) {
		const struct tb_code *c = &s->codes[s->slots[j] - 1];

		if (c->pid == pid && c->addr == addr && c->code_id == code_id && !c->dead)
			return (int)(s->slots[j] - 1);
	}
	*slot = j;
	return -1;
}

static struct tb_code *append(struct tb_symbolizer *s, uint32_t slot, pid_t pid, uint64_t addr,
			      uint16_t code_id, int py_minor)
{
	struct tb_code *c;

	if (s->n == s->cap) {
		s->cap = s->cap ? s->cap * 2 : 1024;
		s->codes = realloc(s->codes, s->cap * sizeof(*s->codes));
		if (!s->codes)
			abort();
	}
	c = &s->codes[s->n];
	memset(c, 0, sizeof(*c));
	c->pid = pid;
	c->addr = addr;
	c->code_id = code_id;
	c->py_minor = (uint8_t)py_minor;
	s->slots[slot] = ++s->n;
	return c;
}

uint32_t tb_sym_code(struct tb_symbolizer *s, pid_t pid, const struct tb_layout *l,
		     uint64_t pycode_type, uint64_t addr, uint16_t code_id)
{
	uint32_t slot;
	int found = lookup(s, pid, addr, code_id, &slot);
	struct tb_code *c;
	int rc;

	s->lookups++;
	if (found >= 0)
		return (uint32_t)found;
	c = append(s, slot, pid, addr, code_id, (int)l->minor);
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
	uint32_t slot;
	int found = lookup(s, pid, addr, code_id, &slot);
	struct tb_code *c;

	if (found >= 0)
		return (uint32_t)found;
	c = append(s, slot, pid, addr, code_id, py_minor);
	c->qualname = tb_strtab_intern(s->strs, qualname);
	c->filename = tb_strtab_intern(s->strs, filename);
	c->firstlineno = firstlineno;
	if (linetable && linetable_len) {
		c->linetable = malloc(linetable_len);
		if (!c->linetable)
			abort();
		memcpy(c->linetable, linetable, linetable_len);
		c->linetable_len = linetable_len;
	}
	c->resolved = 1;
	return s->n - 1;
}

void tb_sym_location(const struct tb_symbolizer *s, uint32_t idx, int32_t offset,
		     struct tb_location *loc)
{
	const struct tb_code *c = &s->codes[idx];

	loc->line = loc->end_line = loc->col = loc->end_col = -1;
	if (!c->resolved)
		return;
	if (offset < 0 || !c->linetable ||
	    tb_linetable_lookup(c->py_minor, c->linetable, c->linetable_len, c->firstlineno,
				offset, loc)) {
		loc->line = loc->end_line = c->firstlineno;
		loc->col = loc->end_col = -1;
	}
}

void tb_sym_forget_pid(struct tb_symbolizer *s, pid_t pid)
{
	int any = 0;

	for (uint32_t i = 0; i < s->n; i++) {
		if (s->codes[i].pid == pid && !s->codes[i].dead) {
			s->codes[i].dead = 1;
			any = 1;
		}
	}
	if (any) { /* rebuild the index without them */
		s->nslots /= 2;
		grow_slots(s);
	}
}
