/* print_layout.c: prints a struct tb_layout (user/cpython/layout.c) as name=value lines, with
 * the names print_offsets.c uses, so check_headers.sh can diff tables against headers (with,
 * for 3.13+, the row's objects read for thread names: the free-threaded build's for a t
 * layout); and the facts of a version's row (versions.c) that the layout tests need.
 * Usage: print_layout builtin VERSION_HEX | print_layout debug FILE (raw _Py_DebugOffsets)
 *        | print_layout version MINOR (exit 2 when the minor is not supported).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cpython/layout.h"
#include "cpython/threadnames.h"
#include "cpython/versions.h"

#define P(name, val) printf("%s=%lu\n", name, (unsigned long)(val))

static void print_layout(const struct tb_layout *l)
{
	const struct tb_py_offsets *b = &l->bpf;

	P("version_hex", l->version_hex);
	P("major", l->major);
	P("minor", l->minor);
	P("micro", l->micro);
	P("free_threaded", l->free_threaded);
	P("bpf.py_version", b->py_version);
	P("bpf.runtime_interp_head", b->runtime_interp_head);
	P("bpf.interp_threads_head", b->interp_threads_head);
	P("bpf.interp_next", b->interp_next);
	P("bpf.tstate_next", b->tstate_next);
	P("bpf.tstate_thread_id", b->tstate_thread_id);
	P("bpf.tstate_frame", b->tstate_frame);
	P("bpf.cframe_current_frame", b->cframe_current_frame);
	P("bpf.frame_code", b->frame_code);
	P("bpf.frame_previous", b->frame_previous);
	P("bpf.frame_instr", b->frame_instr);
	P("bpf.frame_owner", b->frame_owner);
	P("bpf.code_adaptive", b->code_adaptive);
	P("bpf.frame_kind", b->frame_kind);
	P("bpf.bytes_sval", b->bytes_sval);
	P("bpf.code_firstlineno", b->code_firstlineno);
	P("bpf.code_argcount", b->code_argcount);
	P("bpf.code_version", b->code_version);
	P("bpf.object_type", b->object_type);
	P("bpf.owner_skip_min", b->owner_skip_min);
	P("bpf.owner_cstack", b->owner_cstack);
	P("bpf.code_tag_mask", b->code_tag_mask);
	P("bpf.frame_tlbc_index", b->frame_tlbc_index);
	P("bpf.code_tlbc", b->code_tlbc);
	P("code_size", l->code_size);
	P("code_filename", l->code_filename);
	P("code_name", l->code_name);
	P("code_qualname", l->code_qualname);
	P("code_linetable", l->code_linetable);
	P("code_firstlineno", l->code_firstlineno);
	P("code_flags", l->code_flags);
	P("code_argcount", l->code_argcount);
	P("code_version", l->code_version);
	P("code_adaptive", l->code_adaptive);
	P("code_nunits", l->code_nunits);
	P("bytes_size", l->bytes_size);
	P("bytes_sval", l->bytes_sval);
	P("unicode_length", l->unicode_length);
	P("unicode_state", l->unicode_state);
	P("unicode_ascii_data", l->unicode_ascii_data);
	P("unicode_compact_data", l->unicode_compact_data);
	P("unicode_kind_shift", l->unicode_kind_shift);
	P("unicode_compact_bit", l->unicode_compact_bit);
	P("unicode_ascii_bit", l->unicode_ascii_bit);
	P("runtime_gil_locked", l->runtime_gil_locked);
	P("runtime_gil_holder", l->runtime_gil_holder);
	P("interp_ceval_gil", l->interp_ceval_gil);
	P("gil_locked", l->gil_locked);
	P("gil_holder", l->gil_holder);
	P("tstate_native_thread_id", l->tstate_native_thread_id);
	P("gil_enabled", l->gil_enabled);
	P("interp_gc_collecting", l->interp_gc_collecting);
	P("interp_modules", l->interp_modules);
	P("type_flags", l->type_flags);
	P("type_basicsize", l->type_basicsize);
	P("type_dictoffset", l->type_dictoffset);
	P("heaptype_cached_keys", l->heaptype_cached_keys);
}

/* The objects read for thread names, 3.13+ (print_offsets.c measures those). */
static void print_objects(const struct tb_layout *l)
{
	const struct tb_pyversion *v = tb_pyversion(l->minor);
	const struct tb_thread_objects *m;

	if (!v || l->minor < 13)
		return;
	m = l->free_threaded ? (v->ft ? v->ft->threads : NULL) : v->threads;
	if (!m)
		return;
	P("objects.module_dict", m->module_dict);
	P("objects.dict_keys", m->dict_keys);
	P("objects.dict_values", m->dict_values);
	P("objects.dk_size", m->dk_size);
	P("objects.dk_index_bytes", m->dk_index_bytes);
	P("objects.dk_kind", m->dk_kind);
	P("objects.dk_nentries", m->dk_nentries);
	P("objects.dk_indices", m->dk_indices);
	P("objects.entry_size", m->entry_size);
	P("objects.entry_hash", m->entry_hash);
	P("objects.entry_key", m->entry_key);
	P("objects.entry_value", m->entry_value);
	P("objects.uentry_size", m->uentry_size);
	P("objects.uentry_key", m->uentry_key);
	P("objects.uentry_value", m->uentry_value);
	P("objects.values_values", m->values_values);
	P("objects.values_capacity", m->values_capacity);
	P("objects.values_valid", m->values_valid);
	P("objects.obj_dict", 0x10000 + m->obj_dict);
	P("objects.long_size", m->long_size);
	P("objects.long_digit", m->long_digit);
}

int main(int argc, char **argv)
{
	struct tb_layout l;
	char err[256];

	if (argc == 3 && !strcmp(argv[1], "version")) {
		unsigned minor = (unsigned)strtoul(argv[2], NULL, 10);
		const struct tb_pyversion *v = tb_pyversion(minor);

		if (!v) {
			fprintf(stderr, "print_layout: Python 3.%s is not supported\n", argv[2]);
			return 2;
		}
		P("minor", v->minor);
		P("debug_size", tb_debug_offsets_size(minor));
		P("free_threaded_ok", v->ft != NULL);
		P("lnotab_v2", v->lines == TB_LINES_LNOTAB_V2);
		return 0;
	}
	if (argc == 3 && !strcmp(argv[1], "builtin")) {
		if (tb_layout_builtin((uint32_t)strtoul(argv[2], NULL, 0), &l)) {
			fprintf(stderr, "print_layout: no built-in layout for %s\n", argv[2]);
			return 2;
		}
	} else if (argc == 3 && !strcmp(argv[1], "debug")) {
		unsigned char buf[4096];
		FILE *f = fopen(argv[2], "rb");
		size_t n;

		if (!f) {
			perror(argv[2]);
			return 2;
		}
		n = fread(buf, 1, sizeof(buf), f);
		fclose(f);
		if (tb_layout_from_debug_offsets(buf, n, &l, err, sizeof(err))) {
			fprintf(stderr, "print_layout: %s\n", err);
			return 3;
		}
	} else {
		fprintf(stderr, "usage: print_layout builtin VERSION_HEX | print_layout debug FILE | "
			"print_layout version MINOR\n");
		return 2;
	}
	print_layout(&l);
	print_objects(&l);
	return 0;
}
