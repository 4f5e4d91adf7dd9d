/* threadnames.c: Python thread names, read from a live target as py-spy does (nothing is
 * stopped):  _PyRuntime -> main interpreter -> sys.modules["threading"] -> its __dict__
 * ["_active"] (dict: int ident -> Thread) -> each Thread's instance attribute "_name".
 *
 * Instance attributes live per version in: 3.10 a dict at tp_dictoffset (combined, or split
 * with the type's shared keys); 3.11 values pointer / dict pointer before the object header;
 * 3.12 a tagged dict-or-values word before the header; 3.13+ a managed dict pointer before
 * the header, else values inline at tp_basicsize with keys from ht_cached_keys.
 * Offsets: struct tb_layout (interp_modules, type_*; from _Py_DebugOffsets on 3.13+) and
 * the version's struct tb_thread_objects (its row in versions.c; the free-threaded build's
 * own, whose objects have a 16 bytes larger header and the managed dict right before it).
 *
 * The target keeps running: every pointer, count and string is untrusted. Loops and copies
 * are bounded, int keys are cross-checked against their cached hash, strings and ints
 * against their types, and a budget of reads and bytes bounds the time spent.
 */
#include <stdlib.h>
#include <string.h>

#include "proc/procmem.h"
#include "cpython/pyread.h"
#include "cpython/threadnames.h"
#include "cpython/versions.h"

#define NO TB_NO_OFFSET

#define MAX_READS        20000      /* process_vm_readv calls per call of tb_python_thread_names */
#define MAX_BYTES        (16u << 20) /* and bytes copied */
#define MAX_INTERPS      256        /* interpreters list walked to find the main one */
#define MAX_DICT_ENTRIES (1 << 16)  /* entries copied out of one dict */
#define MAX_TYPE_READ    1024       /* bytes of a type object read */
#define MAX_TYPES        8          /* type objects cached per call */
#define OBJ_HEAD_MAX     64         /* bytes of a dict or int header read: the fields used fit */
#define ATTEMPTS         3          /* re-reads when _active changed during the walk */

/* type flags, identical in 3.10-3.15 */
#define TPF_INLINE_VALUES    (1ul << 2)  /* 3.13+ */
#define TPF_MANAGED_DICT     (1ul << 4)  /* 3.11+ */
#define TPF_HEAPTYPE         (1ul << 9)
#define TPF_LONG_SUBCLASS    (1ul << 24)
#define TPF_UNICODE_SUBCLASS (1ul << 28)

#define PYHASH_MODULUS (((uint64_t)1 << 61) - 1)  /* hash(n) = n mod this, n >= 0 */
#define LONG_SHIFT 30                              /* PyLong_SHIFT, 30-bit digits */

struct type_info {
	uint64_t addr;
	uint64_t flags;
	int64_t basicsize, dictoffset;
	uint64_t cached_keys;        /* heap types: ht_cached_keys, else 0 */
};

/* One call's state. */
struct walk {
	pid_t pid;
	const struct tb_layout *l;
	const struct tb_thread_objects *m;
	int reads_left;
	size_t bytes_left;
	uint64_t str_type, int_type; /* type objects verified by their flags */
	struct type_info types[MAX_TYPES];
	int ntypes;
	/* the last shared keys searched: index of the attribute found there (shared keys
	 * only grow, so the index holds for every instance of the type during a call) */
	uint64_t shared_keys, shared_n, shared_index;
	const char *shared_name;
};

/* A dict's entries, copied out in one read. */
struct dict_view {
	unsigned char *ent;
	uint64_t n;                  /* entries copied (dk_nentries) */
	unsigned esize, hoff, koff, voff;
	int has_hash;
	uint64_t values;             /* split table: address of values[], else 0 */
	uint64_t nvalues;            /* split table: valid indexes into values[] */
};

static uint64_t get_u64(const unsigned char *b, unsigned off)
{
	uint64_t v;

	memcpy(&v, b + off, sizeof(v));
	return v;
}

static uint32_t get_u32(const unsigned char *b, unsigned off)
{
	uint32_t v;

	memcpy(&v, b + off, sizeof(v));
	return v;
}

/* All reads go through here: counted against the budget. */
static int rd(struct walk *w, uint64_t addr, void *buf, size_t len)
{
	if (w->reads_left <= 0 || len > w->bytes_left || addr < 4096)
		return -1;
	w->reads_left--;
	w->bytes_left -= len;
	return tb_mem_read(w->pid, addr, buf, len);
}

static int rd_ptr(struct walk *w, uint64_t addr, uint64_t *out)
{
	if (rd(w, addr, out, sizeof(*out)))
		return -1;
	return *out < 4096 || *out % 8 ? -1 : 0;  /* objects are 8-aligned */
}

/* ------------------------------------------------------------------ types */

static unsigned max4(unsigned a, unsigned b, unsigned c, unsigned d)
{
	unsigned ab = a > b ? a : b, cd = c > d ? c : d;

	return ab > cd ? ab : cd;
}

/* The fields of the type object at addr (cached per call). */
static const struct type_info *type_get(struct walk *w, uint64_t addr)
{
	const struct tb_layout *l = w->l;
	unsigned char buf[MAX_TYPE_READ];
	unsigned need = max4(l->type_flags, l->type_basicsize, l->type_dictoffset, l->heaptype_cached_keys) + 8u;
	struct type_info *t;

	for (int i = 0; i < w->ntypes; i++)
		if (w->types[i].addr == addr)
			return &w->types[i];
	if (addr < 4096 || addr % 8 || rd(w, addr, buf, need))
		return NULL;
	t = &w->types[w->ntypes < MAX_TYPES ? w->ntypes++ : MAX_TYPES - 1];
	t->addr = addr;
	t->flags = get_u64(buf, l->type_flags);
	t->basicsize = (int64_t)get_u64(buf, l->type_basicsize);
	t->dictoffset = (int64_t)get_u64(buf, l->type_dictoffset);
	t->cached_keys = t->flags & TPF_HEAPTYPE ? get_u64(buf, l->heaptype_cached_keys) : 0;
	if (t->basicsize < 16 || t->basicsize > (1 << 20) || t->basicsize % 8) {
		t->addr = 0;  /* not a type object: do not cache */
		return NULL;
	}
	return t;
}

/* Is the object at addr (whose ob_type is type) an instance of a type with this flag?
 * The first type seen with the flag is remembered in *known and then required. */
static int type_has(struct walk *w, uint64_t type, uint64_t flag, uint64_t *known)
{
	const struct type_info *t;

	if (*known)
		return type == *known;
	t = type_get(w, type);
	if (!t || !(t->flags & flag))
		return 0;
	*known = type;
	return 1;
}

/* ---------------------------------------------------------------- strings */

/* Is the object at addr the compact ASCII str equal to name (<= 32 bytes)? */
static int str_is(struct walk *w, uint64_t addr, const char *name)
{
	const struct tb_layout *l = w->l;
	unsigned char h[128];
	size_t len = strlen(name);
	uint64_t length;
	uint32_t state;

	if (len > 32 || l->unicode_ascii_data + len > sizeof(h) || rd(w, addr, h, l->unicode_ascii_data + len))
		return 0;
	if (w->str_type && get_u64(h, l->bpf.object_type) != w->str_type)
		return 0;
	length = get_u64(h, l->unicode_length);
	state = get_u32(h, l->unicode_state);
	if (length != len || !((state >> l->unicode_compact_bit) & 1) || !((state >> l->unicode_ascii_bit) & 1) ||
	    ((state >> l->unicode_kind_shift) & 7) != 1 || memcmp(h + l->unicode_ascii_data, name, len))
		return 0;
	/* a match that is not a str (garbage that looks like one) is no match */
	return type_has(w, get_u64(h, l->bpf.object_type), TPF_UNICODE_SUBCLASS, &w->str_type);
}

/* ------------------------------------------------------------------ dicts */

static void dict_view_free(struct dict_view *d)
{
	free(d->ent);
	d->ent = NULL;
	d->n = 0;
}

/* Bytes of the index table and the entry layout of a keys object header h. */
static int keys_geometry(const struct tb_thread_objects *m, const unsigned char *h, uint64_t *table, uint64_t *size,
			 struct dict_view *d)
{
	int unicode = 0;

	if (!m->keys_log2) { /* 3.10: dk_size, index width from the size */
		uint64_t s = get_u64(h, m->dk_size);

		if (s < 8 || s > (1u << 26) || (s & (s - 1)))
			return -1;
		*size = s;
		*table = s * (s <= 0xff ? 1 : s <= 0xffff ? 2 : 4);
	} else {
		unsigned log2 = h[m->dk_size], ib = h[m->dk_index_bytes], kind = h[m->dk_kind];

		if (log2 < 3 || log2 > 26 || ib != log2 + (log2 < 8 ? 0 : log2 < 16 ? 1 : 2) || kind > 2)
			return -1;
		*size = (uint64_t)1 << log2;
		*table = (uint64_t)1 << ib;
		unicode = kind != 0; /* DICT_KEYS_UNICODE, DICT_KEYS_SPLIT */
	}
	d->esize = unicode ? m->uentry_size : m->entry_size;
	d->koff = unicode ? m->uentry_key : m->entry_key;
	d->voff = unicode ? m->uentry_value : m->entry_value;
	d->hoff = m->entry_hash;
	d->has_hash = !unicode;
	return 0;
}

/* Copy the entries of the keys object at keys. */
static int keys_read(struct walk *w, uint64_t keys, struct dict_view *d)
{
	const struct tb_thread_objects *m = w->m;
	unsigned char h[64];
	uint64_t table, size;
	int64_t n;

	memset(d, 0, sizeof(*d));
	if (keys % 8 || rd(w, keys, h, m->dk_indices) || keys_geometry(m, h, &table, &size, d))
		return -1;
	n = (int64_t)get_u64(h, m->dk_nentries);
	if (n < 0 || (uint64_t)n > (size << 1) / 3 || n > MAX_DICT_ENTRIES)
		return -1;
	d->n = (uint64_t)n;
	d->ent = malloc(n ? (size_t)n * d->esize : 1);
	if (!d->ent)
		return -1;
	if (n && rd(w, keys + m->dk_indices + table, d->ent, (size_t)n * d->esize)) {
		dict_view_free(d);
		return -1;
	}
	return 0;
}

/* Attach a split table's values (a PyDictValues at pv) to the view of its keys. */
static int values_attach(struct walk *w, uint64_t pv, int check_valid, struct dict_view *d)
{
	const struct tb_thread_objects *m = w->m;
	unsigned char h[8];

	d->values = pv + m->values_values;
	d->nvalues = d->n;
	if (m->values_capacity == NO)
		return 0;
	if (rd(w, pv, h, sizeof(h)) || (check_valid && !h[m->values_valid]))
		return -1;
	if (h[m->values_capacity] < d->nvalues)
		d->nvalues = h[m->values_capacity];
	return 0;
}

static int dict_read(struct walk *w, uint64_t dict, struct dict_view *d)
{
	const struct tb_thread_objects *m = w->m;
	unsigned char h[OBJ_HEAD_MAX];
	uint64_t keys, values;

	memset(d, 0, sizeof(*d));
	if (dict < 4096 || dict % 8 || rd(w, dict, h, m->dict_values + 8u))
		return -1;
	keys = get_u64(h, m->dict_keys);
	values = get_u64(h, m->dict_values);
	if (keys_read(w, keys, d))
		return -1;
	if (values && values_attach(w, values, 0, d)) {
		dict_view_free(d);
		return -1;
	}
	return 0;
}

/* The value of entry i (0 when deleted or unreadable). */
static uint64_t entry_value(struct walk *w, const struct dict_view *d, uint64_t i)
{
	uint64_t v;

	if (!d->values)
		return get_u64(d->ent + i * d->esize, d->voff);
	if (i >= d->nvalues || rd(w, d->values + 8 * i, &v, sizeof(v)))
		return 0;
	return v;
}

static int value_ok(uint64_t v)
{
	return v >= 4096 && v % 8 == 0;
}

/* Find the str key name in the dict view: 0, *value and *index; 1 when absent; -1 on errors. */
static int view_find(struct walk *w, const struct dict_view *d, const char *name, uint64_t *value,
		     uint64_t *index)
{
	for (uint64_t i = 0; i < d->n; i++) {
		uint64_t key = get_u64(d->ent + i * d->esize, d->koff);

		if (key < 4096 || !str_is(w, key, name))
			continue;
		*value = entry_value(w, d, i);
		*index = i;
		return value_ok(*value) ? 0 : -1;
	}
	return w->reads_left > 0 ? 1 : -1;
}

static int dict_find(struct walk *w, uint64_t dict, const char *name, uint64_t *value)
{
	struct dict_view d;
	uint64_t index;
	int rc;

	if (dict_read(w, dict, &d))
		return -1;
	rc = view_find(w, &d, name, value, &index);
	dict_view_free(&d);
	return rc;
}

/* Find name in split values at pv whose keys are the type's shared keys. */
static int values_find(struct walk *w, uint64_t keys, uint64_t pv, int check_valid, const char *name,
		       uint64_t *value)
{
	struct dict_view d;
	uint64_t index;
	int rc;

	if (keys && keys == w->shared_keys && !strcmp(name, w->shared_name)) { /* no search */
		memset(&d, 0, sizeof(d));
		d.n = w->shared_n;
		if (values_attach(w, pv, check_valid, &d))
			return -1;
		*value = entry_value(w, &d, w->shared_index);
		return value_ok(*value) ? 0 : -1;
	}
	if (keys_read(w, keys, &d))
		return -1;
	rc = values_attach(w, pv, check_valid, &d) ? -1 : view_find(w, &d, name, value, &index);
	if (rc == 0) {
		w->shared_keys = keys;
		w->shared_n = d.n;
		w->shared_index = index;
		w->shared_name = name;
	}
	dict_view_free(&d);
	return rc;
}

/* ---------------------------------------------------- instance attributes */

#define PRE 32  /* pre-header bytes kept before an object (3.11+): values, dict, GC head */

/* Find instance attribute name of the object at obj: as dict_find. */
static int attr_find(struct walk *w, uint64_t obj, const char *name, uint64_t *value)
{
	const struct tb_thread_objects *m = w->m;
	const struct type_info *tp;
	struct type_info t;             /* a copy: the cache slot may be reused */
	unsigned char pre[PRE + OBJ_HEAD_MAX];
	/* from the lowest pre-header word used (3.10: none) to the end of ob_type */
	int lo = m->inst == TB_INST_DICTOFFSET ? 0 : m->obj_values < m->obj_dict ? m->obj_values : m->obj_dict;
	unsigned from = (unsigned)(PRE + lo), to = PRE + w->l->bpf.object_type + 8u;
	uint64_t word, dict;

	if (rd(w, obj - PRE + from, pre + from, to - from))
		return -1;
	tp = type_get(w, get_u64(pre, PRE + w->l->bpf.object_type));
	if (!tp)
		return -1;
	t = *tp;
	if (m->inst == TB_INST_DICTOFFSET || !(t.flags & TPF_MANAGED_DICT)) {
		if (t.dictoffset <= 0 || t.dictoffset > (1 << 20) || t.dictoffset % 8 ||
		    rd_ptr(w, obj + (uint64_t)t.dictoffset, &dict))
			return -1;
		return dict_find(w, dict, name, value);
	}
	word = get_u64(pre, PRE + m->obj_dict);
	switch (m->inst) {
	case TB_INST_VALUES_PTR: {
		uint64_t pv = get_u64(pre, PRE + m->obj_values);

		if (pv)
			return values_find(w, t.cached_keys, pv, 0, name, value);
		return dict_find(w, word, name, value);
	}
	case TB_INST_TAGGED:
		if (word & 1)
			return values_find(w, t.cached_keys, word + 1, 0, name, value);
		return dict_find(w, word, name, value);
	default: /* TB_INST_INLINE */
		if (word)
			return dict_find(w, word, name, value);
		if (!(t.flags & TPF_INLINE_VALUES))
			return -1;
		return values_find(w, t.cached_keys, obj + (uint64_t)t.basicsize, 1, name, value);
	}
}

/* ------------------------------------------------------------ ints, names */

/* The non-negative int object at addr as a uint64_t (idents fit in 64 bits). */
static int read_ident(struct walk *w, uint64_t addr, uint64_t *out)
{
	const struct tb_thread_objects *m = w->m;
	unsigned char b[OBJ_HEAD_MAX];
	int64_t ndigits;
	uint64_t v = 0;

	if (rd(w, addr, b, m->long_digit + 12u) ||
	    !type_has(w, get_u64(b, w->l->bpf.object_type), TPF_LONG_SUBCLASS, &w->int_type))
		return -1;
	if (m->long_tagged) {
		uint64_t tag = get_u64(b, m->long_size);

		if ((tag & 3) > 1)   /* negative, or not a sign */
			return -1;
		ndigits = (tag & 3) == 1 ? 0 : (int64_t)(tag >> 3);
	} else {
		ndigits = (int64_t)get_u64(b, m->long_size);
	}
	if (ndigits < 0 || ndigits > 3)
		return -1;
	for (int i = 0; i < ndigits; i++) {
		uint32_t d = get_u32(b, m->long_digit + 4u * i);

		if (d >> LONG_SHIFT || (i == 2 && d >> (64 - 2 * LONG_SHIFT)))
			return -1;
		v |= (uint64_t)d << (LONG_SHIFT * i);
	}
	*out = v;
	return 0;
}

/* Most bytes tb_read_pystr copies: header and TB_MAX_NAME_CHARS UCS-4 characters. */
#define PYSTR_MAX_BYTES (128u + 4u * TB_MAX_NAME_CHARS)

/* thread._name as UTF-8. */
static int thread_name(struct walk *w, uint64_t thread, char *out, size_t outlen)
{
	uint64_t name, type;

	if (attr_find(w, thread, "_name", &name) || rd_ptr(w, name + w->l->bpf.object_type, &type) ||
	    !type_has(w, type, TPF_UNICODE_SUBCLASS, &w->str_type) || w->reads_left < 2 ||
	    w->bytes_left < PYSTR_MAX_BYTES)
		return -1;
	w->reads_left -= 2; /* tb_read_pystr: header and data */
	w->bytes_left -= PYSTR_MAX_BYTES;
	return tb_read_pystr(w->pid, w->l, name, out, outlen);
}

/* ----------------------------------------------------------------- the walk */

/* The main interpreter: the last of the list (new interpreters are prepended). */
static int main_interp(struct walk *w, uint64_t runtime, uint64_t *interp)
{
	uint64_t p, next;

	if (rd_ptr(w, runtime + w->l->bpf.runtime_interp_head, &p))
		return -1;
	for (int i = 0; i < MAX_INTERPS; i++) {
		if (rd(w, p + w->l->bpf.interp_next, &next, sizeof(next)))
			return -1;
		if (!next) {
			*interp = p;
			return 0;
		}
		if (next < 4096 || next % 8)
			return -1;
		p = next;
	}
	return -1;
}

/* threading._active: 0 and its address, 1 when threading is not imported, -1 on errors. */
static int find_active(struct walk *w, uint64_t runtime, uint64_t *active)
{
	uint64_t interp, modules, threading, mdict;
	int rc;

	if (main_interp(w, runtime, &interp) || rd_ptr(w, interp + w->l->interp_modules, &modules))
		return -1;
	rc = dict_find(w, modules, "threading", &threading);
	if (rc)
		return rc;
	if (rd_ptr(w, threading + w->m->module_dict, &mdict))
		return -1;
	return dict_find(w, mdict, "_active", active);
}

static int have_ident(const struct tb_pyname *out, int n, uint64_t ident)
{
	for (int i = 0; i < n; i++)
		if (out[i].ident == ident)
			return 1;
	return 0;
}

/* One entry of _active into out[*n], when it reads back consistently. */
static void add_thread(struct walk *w, const struct dict_view *d, uint64_t i, struct tb_pyname *out, int *n)
{
	const unsigned char *e = d->ent + i * d->esize;
	uint64_t key = get_u64(e, d->koff), thread = entry_value(w, d, i), ident;

	if (key < 4096 || thread < 4096 || thread % 8 || read_ident(w, key, &ident))
		return;
	/* hash(int) is the value mod 2**61 - 1: a torn or stale entry fails this */
	if (d->has_hash && get_u64(e, d->hoff) != ident % PYHASH_MODULUS)
		return;
	if (have_ident(out, *n, ident) || thread_name(w, thread, out[*n].name, sizeof(out[*n].name)))
		return;
	out[*n].ident = ident;
	(*n)++;
}

/* Did the dict at addr change (size, version, keys or values; not its refcount) since h? */
static int dict_changed(struct walk *w, uint64_t addr, const unsigned char *h, size_t len)
{
	unsigned char now[OBJ_HEAD_MAX];
	unsigned skip = w->l->bpf.object_type + 8u;  /* the PyObject header */

	return rd(w, addr, now, len) || memcmp(now + skip, h + skip, len - skip) != 0;
}

/* One pass: the names, or -1; *stable says _active did not change meanwhile. */
static int read_names(struct walk *w, uint64_t runtime, struct tb_pyname *out, int max, int *stable)
{
	const struct tb_thread_objects *m = w->m;
	unsigned char h[OBJ_HEAD_MAX];
	size_t hlen = m->dict_values + 8u;
	struct dict_view d;
	uint64_t active;
	int n = 0, rc;

	*stable = 1;
	rc = find_active(w, runtime, &active);
	if (rc)
		return rc > 0 ? 0 : -1;
	if (rd(w, active, h, hlen) || dict_read(w, active, &d))
		return -1;
	for (uint64_t i = 0; i < d.n && n < max && w->reads_left > 0; i++)
		add_thread(w, &d, i, out, &n);
	dict_view_free(&d);
	*stable = !dict_changed(w, active, h, hlen);
	return n;
}

/* Do the fields read of dicts, ints and object headers fit their buffers, and does the object
 * header (ob_type) agree with the layout's? */
static int objects_fit(const struct tb_thread_objects *m, const struct tb_layout *l)
{
	return l->bpf.object_type + 8u <= m->module_dict && m->dict_keys + 8u <= OBJ_HEAD_MAX &&
	       m->dict_values + 8u <= OBJ_HEAD_MAX && l->bpf.object_type + 8u <= m->dict_keys &&
	       m->long_digit + 12u <= OBJ_HEAD_MAX && l->bpf.object_type + 8u <= m->long_size &&
	       m->obj_dict >= -PRE && m->obj_values >= -PRE && l->bpf.object_type + 8u <= OBJ_HEAD_MAX;
}

int tb_python_thread_names(pid_t pid, const struct tb_layout *l, uint64_t runtime_addr,
			   struct tb_pyname *out, int max)
{
	const struct tb_pyversion *v;
	struct walk w;
	int n = -1, stable = 0;

	if (!l || !out || max < 0 || l->major != 3 || !(v = tb_pyversion(l->minor)))
		return -1;
	memset(&w, 0, sizeof(w));
	w.pid = pid;
	w.l = l;
	w.m = l->free_threaded ? (v->ft ? v->ft->threads : NULL) : v->threads;
	if (!w.m || !objects_fit(w.m, l) || l->interp_modules == NO || l->type_flags == NO || l->type_basicsize == NO ||
	    l->type_dictoffset == NO || l->heaptype_cached_keys == NO ||
	    l->heaptype_cached_keys + 8u > MAX_TYPE_READ || l->type_flags + 8u > MAX_TYPE_READ ||
	    l->type_basicsize + 8u > MAX_TYPE_READ || l->type_dictoffset + 8u > MAX_TYPE_READ ||
	    l->unicode_ascii_data > 64 || l->unicode_length + 8u > l->unicode_ascii_data ||
	    l->unicode_state + 4u > l->unicode_ascii_data)
		return -1;
	w.reads_left = MAX_READS;
	w.bytes_left = MAX_BYTES;
	for (int attempt = 0; attempt < ATTEMPTS && !stable; attempt++) {
		int reads = w.reads_left;
		size_t bytes = w.bytes_left;

		n = read_names(&w, runtime_addr, out, max, &stable);
		/* retry only with budget for a whole pass: a cut-short pass would lose names */
		if (n < 0 || w.reads_left < reads - w.reads_left || w.bytes_left < bytes - w.bytes_left)
			break;
	}
	return n;
}
