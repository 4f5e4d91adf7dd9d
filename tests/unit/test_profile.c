/* test_profile.c: record parsing, stack aggregation, the folded writer,
 * the call tree (per-thread values, pruning) and its JSON export, on
 * synthetic records with pre-registered code objects (no target reads);
 * process records under churn (ends, drops, pid reuse, exec) and the
 * (pid, tid) lookups; kernel words named from a kallsyms fixture (return
 * addresses at pc-1, a switch-out trimmed up to __schedule with <off-CPU>
 * at the root of the kernel part, unknown addresses, hidden symbols); samples
 * without Python frames under <no Python frame> with their kernel frames, and
 * the summary line's counts. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>
#include "output/format.h"
#include "model/profile.h"
#include "model/tree.h"
#include "proc/kallsyms.h"
#include "helpers.h"

#define PID 4242

static void setup_profile(struct tb_profile *p)
{
	tb_profile_init(p);
	th_add_process(p, PID, "python3.11", NULL, 0x030b02f0);
	p->hz = 100;
	p->min_fraction = 0.001;
	/* code objects: 0x1000 main, 0x2000 work, 0x3000 other (no line table: firstlineno) */
	tb_sym_insert(&p->sym, PID, 0x1000, 1, 11, "main", "/app.py", 10, NULL, 0);
	tb_sym_insert(&p->sym, PID, 0x2000, 2, 11, "work", "/app.py", 20, NULL, 0);
	tb_sym_insert(&p->sym, PID, 0x3000, 3, 11, "Klass.other", "/lib/x.py", 30, NULL, 0);
}

/* a record whose fields a test sets itself */
struct rec {
	struct tb_sample_hdr h;
	struct tb_frame f[4];
};

/* frames given innermost first, as the BPF program sends them */
static void add(struct tb_profile *p, uint32_t tid, int n, const uint64_t *codes, uint64_t count)
{
	th_add_stack(p, PID, tid, n, codes, NULL, count, 0, -1);
}

static char *render(int (*w)(const struct tb_profile *, FILE *), const struct tb_profile *p)
{
	return th_render(w, p, NULL);
}

static void test_malformed_records(void **state)
{
	struct tb_profile p;
	struct rec r;

	(void)state;
	setup_profile(&p);
	memset(&r, 0, sizeof(r));
	r.h.pid = PID;
	r.h.tid = 1;
	assert_int_equal(tb_profile_add_record(&p, &r, 3), -1);            /* shorter than a header */
	r.h.depth = 4;
	assert_int_equal(tb_profile_add_record(&p, &r, sizeof(r.h) + 16), -1); /* depth past the end */
	r.h.depth = TB_MAX_FRAMES + 1;
	assert_int_equal(tb_profile_add_record(&p, &r, sizeof(r)), -1);
	assert_int_equal(p.malformed, 3);
	assert_int_equal(p.samples, 0);
	r.h.depth = 0;
	r.h.flags = TB_F_NO_TSTATE;
	assert_int_equal(tb_profile_add_record(&p, &r, sizeof(r.h)), 0);
	assert_int_equal(p.no_python, 1);
	assert_int_equal(p.python_samples, 0);
	r.h.pid = 999; /* not a registered process: counted, not attributed */
	assert_int_equal(tb_profile_add_record(&p, &r, sizeof(r.h)), 0);
	assert_int_equal(p.samples, 2);
	tb_profile_free(&p);
}

static void test_aggregation_and_folded(void **state)
{
	struct tb_profile p;
	const uint64_t s1[] = { 0x2000, 0x1000 }, s2[] = { 0x3000, 0x1000 };
	char *out;

	(void)state;
	setup_profile(&p);
	add(&p, 1, 2, s1, 5);
	add(&p, 1, 2, s2, 2);
	add(&p, 2, 2, s1, 3);
	assert_int_equal(p.nstacks, 3);
	assert_int_equal(p.python_samples, 10);
	assert_int_equal(p.nthreads, 2);
	out = render(tb_write_folded, &p);
	assert_string_equal(out,
		"python3.11 (pid 4242);thread (tid 1);main (/app.py:10);Klass.other (/lib/x.py:30) 2\n"
		"python3.11 (pid 4242);thread (tid 1);main (/app.py:10);work (/app.py:20) 5\n"
		"python3.11 (pid 4242);thread (tid 2);main (/app.py:10);work (/app.py:20) 3\n");
	free(out);
	tb_profile_free(&p);
}

static void test_folded_hostile_names(void **state)
{
	struct tb_profile p;
	const uint64_t s[] = { 0x9000 };
	char *out;

	(void)state;
	setup_profile(&p);
	tb_sym_insert(&p.sym, PID, 0x9000, 9, 11, "a;b\nc 12", "/x;y.py", 1, NULL, 0);
	add(&p, 1, 1, s, 1);
	out = render(tb_write_folded, &p);
	/* one line, no extra frame separators, count still last */
	assert_string_equal(out, "python3.11 (pid 4242);thread (tid 1);a:b?c 12 (/x:y.py:1) 1\n");
	free(out);
	tb_profile_free(&p);
}

static void test_tree_thread_values(void **state)
{
	struct tb_profile p;
	const uint64_t s[] = { 0x2000, 0x1000 };
	char *json;

	(void)state;
	setup_profile(&p);
	add(&p, 1, 2, s, 2);
	add(&p, 2, 2, s, 3);
	p.json_version = 1;
	json = render(tb_write_tree_json, &p);
	assert_non_null(strstr(json, "\"name\":\"all\",\"kind\":\"root\",\"value\":5,\"self\":0,"
				     "\"thread_values\":{\"1\":[2,0],\"2\":[3,0]}"));
	assert_non_null(strstr(json, "\"name\":\"work\",\"kind\":\"frame\",\"filename\":\"/app.py\","
				     "\"lineno\":20,\"location\":[20,20,-1,-1],\"lines\":[[20,5,5]],"
				     "\"value\":5,\"self\":5,\"thread_values\":{\"1\":[2,2],\"2\":[3,3]}"));
	assert_non_null(strstr(json, "\"threads\":{\"1\":{\"pid\":4242"));
	free(json);
	p.json_version = 0; /* the default: version 2, the same values in columns */
	json = render(tb_write_tree_json, &p);
	assert_non_null(strstr(json, "\"threads_order\":[\"1\",\"2\"]"));
	assert_non_null(strstr(json, "\"value\":[5,5,5,5],\"self\":[0,0,0,5],\"thread\":[-1,-1,-1,-1],"
				     "\"thread_values\":[0,2,0,2,0,1,3,0,1,2,0,2,0,1,3,0,"));
	free(json);
	tb_profile_free(&p);
}

static void test_prune_keeps_small_thread(void **state)
{
	struct tb_profile p;
	struct tb_tree t;
	const uint64_t big[] = { 0x2000, 0x1000 }, small[] = { 0x3000, 0x1000 };
	int found_small = 0, found_rare = 0;

	(void)state;
	setup_profile(&p);
	add(&p, 1, 2, big, 1998);
	add(&p, 1, 1, (const uint64_t[]){ 0x3000 }, 1); /* rare stack of the big thread */
	add(&p, 2, 2, small, 1);                         /* the whole of thread 2 */
	tb_tree_build(&t, &p, 0);
	tb_tree_prune(&t, 0.001);
	for (uint32_t i = 1; i < t.nn; i++) {
		const struct tb_tnode *x = &t.n[i];

		if (x->kind != TB_N_FRAME || t.funcs.f[x->key].firstlineno != 30)
			continue;
		if (x->parent && t.n[x->parent].kind == TB_N_FRAME) {
			found_small = 1; /* main -> other of thread 2: 1 of its 1 sample */
			assert_false(x->pruned);
			assert_false(t.n[x->parent].pruned);
		} else {
			found_rare = 1; /* 1 of 1999 samples of thread 1: dropped */
			assert_true(x->pruned);
		}
	}
	assert_true(found_small && found_rare);
	/* dropped weight is not lost from parents */
	assert_int_equal(t.n[0].total, 2000);
	tb_tree_free(&t);
	tb_profile_free(&p);
}

/* The page's preview prunes more (each node kept by the fraction of all or of
 * one of its threads, and only if the page's own pruning kept it); pruning
 * again gives back the page's marks. */
static void test_prune_more_and_back(void **state)
{
	struct tb_profile p;
	struct tb_tree t;
	const uint64_t big[] = { 0x2000, 0x1000 }, small[] = { 0x3000, 0x1000 };
	uint8_t *before;
	uint32_t pruned_before;
	int found_small = 0, found_rare = 0;

	(void)state;
	setup_profile(&p);
	add(&p, 1, 2, big, 1990);
	add(&p, 1, 1, (const uint64_t[]){ 0x3000 }, 9); /* 9 of 1999: kept by 0.1%, not by 1% */
	add(&p, 2, 2, small, 1);                         /* the whole of thread 2 */
	tb_tree_build(&t, &p, 0);
	tb_tree_prune(&t, 0.001);
	pruned_before = t.pruned;
	before = malloc(t.nn);
	assert_non_null(before);
	for (uint32_t i = 0; i < t.nn; i++)
		before[i] = t.n[i].pruned;
	tb_tree_prune_more(&t, 0.01);
	assert_true(t.min_fraction == 0.01);
	for (uint32_t i = 1; i < t.nn; i++) {
		const struct tb_tnode *x = &t.n[i];

		assert_true(x->pruned >= before[i]); /* never less than the page prunes */
		if (x->kind != TB_N_FRAME || t.funcs.f[x->key].firstlineno != 30)
			continue;
		assert_false(before[i]);
		if (x->parent && t.n[x->parent].kind == TB_N_FRAME) {
			found_small = 1; /* all of thread 2: kept */
			assert_false(x->pruned);
		} else {
			found_rare = 1; /* 0.45% of thread 1, 0.45% of all: dropped */
			assert_true(x->pruned);
		}
	}
	assert_true(found_small && found_rare);
	tb_tree_prune(&t, 0.001);
	assert_int_equal(t.pruned, pruned_before);
	for (uint32_t i = 0; i < t.nn; i++)
		assert_int_equal(t.n[i].pruned, before[i]);
	free(before);
	tb_tree_free(&t);
	tb_profile_free(&p);
}

static void test_tree_by_line_and_markers(void **state)
{
	struct tb_profile p;
	struct rec r;
	char *json;

	(void)state;
	setup_profile(&p);
	memset(&r, 0, sizeof(r));
	r.h.pid = PID;
	r.h.tid = 7;
	r.h.depth = 1;
	r.h.flags = TB_F_TRUNCATED;
	r.f[0].code = 0x2000;
	r.f[0].code_id = 2;
	r.f[0].offset = -2;
	assert_int_equal(tb_profile_add_record(&p, &r, sizeof(r.h) + sizeof(r.f[0])), 0);
	p.by_line = 1;
	p.json_version = 1;
	json = render(tb_write_tree_json, &p);
	assert_non_null(strstr(json, "\"name\":\"<truncated>\",\"kind\":\"truncated\",\"value\":1"));
	assert_non_null(strstr(json, "\"by_line\":true"));
	free(json);
	assert_int_equal(p.truncated, 1);
	tb_profile_free(&p);
}

/* one sample without a Python stack: a thread and a count, no code lookup */
static void bare_sample(struct tb_profile *p, uint32_t pid, uint32_t tid)
{
	th_add_stack(p, pid, tid, 0, NULL, NULL, 1, TB_F_NO_TSTATE, -1);
}

static void test_ended_processes_compacted(void **state)
{
	struct tb_profile p;
	char *out;

	(void)state;
	tb_profile_init(&p);
	for (uint32_t pid = 100; pid < 110; pid++)
		th_add_process(&p, pid, "worker", "python3 -m worker", 0x030b02f0);
	for (uint32_t pid = 100; pid < 110; pid += 3)
		bare_sample(&p, pid, pid);          /* 100, 103, 106, 109 sampled */
	for (uint32_t pid = 100; pid < 108; pid++)
		tb_profile_process_ended(&p, pid);  /* 108, 109 still run */
	tb_profile_compact(&p);
	/* the sampled ones, and the running ones, in the order they were found */
	assert_int_equal(p.nprocs, 5);
	assert_int_equal(p.procs[0].pid, 100);
	assert_int_equal(p.procs[1].pid, 103);
	assert_int_equal(p.procs[2].pid, 106);
	assert_int_equal(p.procs[3].pid, 108);
	assert_int_equal(p.procs[4].pid, 109);
	assert_null(p.procs[0].live);
	assert_non_null(p.procs[3].live);
	assert_int_equal(tb_profile_find_process(&p, 101), -1);
	assert_int_equal(tb_profile_find_process(&p, 106), 2);
	assert_int_equal(tb_profile_find_process(&p, 109), 4);
	/* one copy of each string */
	assert_int_equal(p.procs[0].cmdline, p.procs[4].cmdline);
	assert_string_equal(tb_str(&p.pstrs, p.procs[2].cmdline), "python3 -m worker");
	assert_string_equal(tb_str(&p.pstrs, p.procs[2].version), "3.11.2");
	/* an ended process's samples still count; a second end changes nothing */
	assert_int_equal(p.procs[2].samples, 1);
	tb_profile_process_ended(&p, 106);
	assert_int_equal(p.nprocs, 5);
	/* a sample arriving after the end is counted, not attributed */
	bare_sample(&p, 106, 106);
	assert_int_equal(p.procs[2].samples, 1);
	assert_int_equal(p.samples, 5);
	out = render(tb_write_folded, &p);
	free(out);
	tb_profile_free(&p);
}

static void test_pid_reuse_and_exec(void **state)
{
	struct tb_profile p;
	uint32_t old_thread, t;

	(void)state;
	tb_profile_init(&p);
	th_add_process(&p, 77, "first", NULL, 0x030b02f0);
	bare_sample(&p, 77, 77);
	old_thread = p.nthreads - 1;
	tb_profile_process_ended(&p, 77);
	/* the pid comes back: a new record and a new thread */
	th_add_process(&p, 77, "second", NULL, 0x030c00f0);
	assert_int_equal(tb_profile_find_process(&p, 77), 1);
	bare_sample(&p, 77, 77);
	assert_int_equal(p.nthreads, 2);
	assert_int_equal(p.threads[old_thread].samples, 1);
	assert_int_equal(p.threads[1].samples, 1);
	assert_int_equal(p.procs[0].older, 0);
	assert_int_equal(p.procs[1].older, 1);
	/* it execs (no exit in between): the running record ends, its thread too */
	th_add_process(&p, 77, "third", NULL, 0x030d00f0);
	assert_null(p.procs[1].live);
	assert_int_equal(tb_profile_find_process(&p, 77), 2);
	bare_sample(&p, 77, 77);
	assert_int_equal(p.nthreads, 3);
	assert_int_equal(p.procs[2].samples, 1);
	/* one more, never sampled: dropped at its end, the last one is found again */
	th_add_process(&p, 77, "fourth", NULL, 0x030d00f0);
	tb_profile_process_ended(&p, 77);
	tb_profile_compact(&p);
	assert_int_equal(p.nprocs, 3);
	assert_int_equal(tb_profile_find_process(&p, 77), 2);
	assert_string_equal(tb_str(&p.pstrs, p.procs[2].comm), "third");
	assert_int_equal(p.procs[2].older, 2);
	/* a thread of the newest record by (pid, tid): a new one, once more */
	th_add_process(&p, 77, "fifth", NULL, 0x030d00f0);
	bare_sample(&p, 77, 77);
	t = p.nthreads - 1;
	assert_int_equal(t, 3);
	assert_int_equal(p.threads[t].pid, 77);
	tb_profile_free(&p);
}

/* a sample of thread tid whose pthread_self() (threading.get_ident()) is ident */
static void ident_sample(struct tb_profile *p, uint32_t pid, uint32_t tid, uint64_t ident)
{
	struct tb_sample_hdr h = { .pid = pid, .tid = tid, .value = ident, .flags = TB_F_NO_TSTATE };
	struct tb_frame none;

	th_send(p, &h, &none, 1);
}

/* pids above any pid_max: nothing on the machine is read for them */
#define PARENT 5000001u
#define CHILD  5000002u

static void test_fork_child_inherits(void **state)
{
	struct tb_profile p;
	struct tb_tinfo *t;
	int child;

	(void)state;
	tb_profile_init(&p);
	th_add_process(&p, PARENT, "server", "python3 server.py", 0x030c00f0);
	ident_sample(&p, PARENT, PARENT + 7, 0x7f0000001000);
	p.threads[0].name = tb_strtab_intern(&p.strs, "Forker-3");
	p.threads[0].python_name = 1;
	assert_int_equal(tb_profile_add_fork(&p, 99999999, CHILD), -1); /* no such parent */
	child = tb_profile_add_fork(&p, PARENT, CHILD);
	assert_int_equal(child, 1);
	assert_string_equal(tb_str(&p.pstrs, p.procs[child].cmdline), "python3 server.py");
	assert_int_equal(p.procs[child].version_hex, p.procs[0].version_hex);
	assert_int_equal(p.procs[child].live->target.pid, CHILD);
	/* its main thread is the thread that forked: same ident, same name */
	ident_sample(&p, CHILD, CHILD, 0x7f0000001000);
	t = &p.threads[p.nthreads - 1];
	assert_int_equal(t->pid, CHILD);
	assert_string_equal(tb_str(&p.strs, t->name), "Forker-3");
	assert_int_equal(t->python_name, 1);
	/* a thread it starts later is not the parent's, whatever its ident */
	ident_sample(&p, CHILD, CHILD + 1, 0x7f0000001000);
	assert_int_equal(p.threads[p.nthreads - 1].python_name, 0);
	/* the code objects its parent read are its own (a copy of the same memory) */
	{
		const uint64_t codes[] = { 0x1000 };
		uint32_t known = tb_sym_insert(&p.sym, PARENT, 0x1000, 1, 12, "serve", "/srv.py", 3, NULL, 0);
		uint32_t n = p.sym.n;

		th_add_stack(&p, CHILD, CHILD, 1, codes, NULL, 2, 0, -1);
		assert_int_equal(p.sym.n, n);
		assert_int_equal(tb_stack_frames(&p, &p.stacks[p.nstacks - 1])[0].code, known);
		assert_int_equal(p.unresolved_frames, 0);
	}
	/* one the parent does not have (nothing is readable here) leaves no
	 * placeholder under the parent's pid, only under the child's */
	{
		const uint64_t codes[] = { 0x9000 };

		th_add_stack(&p, CHILD, CHILD, 1, codes, NULL, 1, 0, -1);
		assert_int_equal(p.unresolved_frames, 1);
		assert_int_equal(tb_sym_find(&p.sym, PARENT, 0x9000, 9), TB_HMAP_NONE);
		assert_int_not_equal(tb_sym_find(&p.sym, CHILD, 0x9000, 9), TB_HMAP_NONE);
	}
	/* the parent ends and its pid comes back: no longer the child's parent */
	tb_profile_process_ended(&p, CHILD);
	tb_profile_process_ended(&p, PARENT);
	th_add_process(&p, PARENT, "other", NULL, 0x030c00f0);
	ident_sample(&p, PARENT, PARENT + 7, 0x7f0000001000);
	p.threads[p.nthreads - 1].name = tb_strtab_intern(&p.strs, "Impostor");
	p.threads[p.nthreads - 1].python_name = 1;
	child = tb_profile_add_fork(&p, PARENT, CHILD);
	p.procs[child].live->parent_serial = p.procs[0].serial; /* as if forked from the first */
	ident_sample(&p, CHILD, CHILD, 0x7f0000001000);
	assert_int_equal(p.threads[p.nthreads - 1].python_name, 0);
	tb_profile_free(&p);
}

/* A fork storm: 200,000 children (pids wrapping at 32768) that end
 * without a sample, a few sampled; a survivor that keeps its thread. */
static void test_fork_storm_bounded(void **state)
{
	struct tb_profile p;
	uint32_t sampled = 0;

	(void)state;
	tb_profile_init(&p);
	th_add_process(&p, 1, "survivor", NULL, 0x030b02f0);
	bare_sample(&p, 1, 1);
	for (uint32_t i = 1; i < 200000; i++) {
		uint32_t pid = 2 + i % 32766;

		th_add_process(&p, pid, "child", NULL, 0x030b02f0);
		if (i % 1000 == 0) {
			bare_sample(&p, pid, pid);
			sampled++;
		}
		bare_sample(&p, 1, 1);
		tb_profile_process_ended(&p, pid);
		assert_true(p.nprocs <= 2 * (sampled + 2));
	}
	tb_profile_compact(&p);
	assert_int_equal(p.nprocs, 1 + sampled);
	assert_true(p.capprocs <= 4 * (sampled + 2) + 64);
	assert_true(p.npids <= sampled + 1);
	assert_int_equal(p.nthreads, 1 + sampled);
	assert_int_equal(p.threads[0].samples, 200000);
	assert_int_equal(p.procs[0].samples, 200000);
	assert_true(p.thread_index.used <= 2 * (1 + sampled));
	assert_true(p.pstrs.n <= 4 + 2);
	tb_profile_free(&p);
}

/* Many threads of one process, each found again by (pid, tid). */
static void test_thread_lookup(void **state)
{
	struct tb_profile p;

	(void)state;
	tb_profile_init(&p);
	th_add_process(&p, 5, "pool", NULL, 0x030b02f0);
	for (int round = 0; round < 3; round++)
		for (uint32_t tid = 1000; tid < 21000; tid++)
			bare_sample(&p, 5, tid);
	assert_int_equal(p.nthreads, 20000);
	for (uint32_t i = 0; i < p.nthreads; i++)
		assert_int_equal(p.threads[i].samples, 3);
	assert_int_equal(p.procs[0].samples, 60000);
	/* chained to their process, newest first */
	assert_int_equal(p.procs[0].last_thread, 20000);
	assert_int_equal(p.threads[19999].prev_in_proc, 19999);
	assert_int_equal(p.threads[0].prev_in_proc, 0);
	/* capture files may repeat a (pid, tid): the first one stays indexed */
	tb_profile_add_thread(&p, 5, 1000, 1000, "again");
	bare_sample(&p, 5, 1000);
	assert_int_equal(p.threads[0].samples, 4);
	assert_int_equal(p.threads[20000].samples, 0);
	tb_profile_free(&p);
}

/* A record with kernel words: header, nk PCs (leaf first), n frames. */
static int send_kernel(struct tb_profile *p, uint16_t flags, const uint64_t *pcs, uint16_t nk,
		       const uint64_t *codes, int n, uint64_t count)
{
	struct {
		struct tb_sample_hdr h;
		__u64 w[8];
		struct tb_frame f[4];
	} r;
	int rc = 0;

	assert_true(nk <= 8 && n <= 4);
	memset(&r, 0, sizeof(r));
	r.h.pid = PID;
	r.h.tid = 1;
	r.h.time_ns = 1000;
	r.h.flags = flags;
	r.h.nkernel = nk;
	r.h.depth = (uint16_t)n;
	memcpy(r.w, pcs, nk * sizeof(__u64));
	for (int i = 0; i < n; i++) {
		r.w[nk + 2 * i] = codes[i];                               /* tb_frame.code */
		r.w[nk + 2 * i + 1] = (uint64_t)(uint32_t)-2 | (uint64_t)(codes[i] >> 12) << 32 |
				      (uint64_t)TB_FF_NO_OPCODE << 56;       /* offset, code_id, flags */
	}
	for (uint64_t c = 0; c < count && !rc; c++)
		rc = tb_profile_add_record(p, &r, sizeof(r.h) + (nk + 2 * (size_t)n) * 8);
	return rc;
}

static const char KSYMS[] =
	"ffffffff81000000 T _text\n"
	"ffffffff81000100 T entry_SYSCALL_64_after_hwframe\n"
	"ffffffff81100000 T do_syscall_64\n"
	"ffffffff81200000 T ksys_read\n"
	"ffffffff81300000 t read_zero\n"
	"ffffffff81400000 T __traceiter_sched_switch\n"
	"ffffffff81500000 t __schedule\n"
	"ffffffff81600000 T schedule\n"
	"ffffffff81700000 T do_nanosleep\n"
	"ffffffff81800000 T _etext\n"
	"ffffffffc0a00000 t bpf_trampoline_6442\t[bpf]\n";

static void load_ksyms(struct tb_ksyms *k, const char *text)
{
	char path[] = "/tmp/tb-test-ksyms-XXXXXX", err[256];
	int fd = mkstemp(path);
	FILE *f = fdopen(fd, "w");

	assert_non_null(f);
	fputs(text, f);
	fclose(f);
	if (tb_ksyms_load(k, path, err, sizeof(err)))
		fail_msg("%s", err);
	unlink(path);
}

/* The folded line of a stack of thread 1 under main > work, then these frames. */
#define MAIN_WORK(rest) "python3.11 (pid 4242);thread (tid 1);main (/app.py:10);work (/app.py:20);" rest

static void test_kernel_frames(void **state)
{
	const uint64_t mw[] = { 0x2000, 0x1000 };
	/* leaf exact; the return address right after do_syscall_64's last call is
	 * ksys_read's first byte: named at pc-1, do_syscall_64 */
	const uint64_t read[] = { 0xffffffff81300010ull, 0xffffffff81200000ull, 0xffffffff81000180ull };
	const uint64_t sw[] = { 0xffffffffc0a00040ull, 0xffffffff81400020ull, 0xffffffff81500100ull,
				0xffffffff81600010ull, 0xffffffff81700030ull };
	const uint64_t unknown[] = { 0xffffffff80000000ull };
	struct tb_profile p;
	struct tb_ksyms k;
	char *folded;

	(void)state;
	setup_profile(&p);
	load_ksyms(&k, KSYMS);
	tb_profile_set_ksyms(&p, &k, 0);
	p.kernel = 1;
	assert_int_equal(send_kernel(&p, 0, read, 3, mw, 2, 2), 0);
	assert_int_equal(send_kernel(&p, TB_F_OFF_CPU, sw, 5, mw, 2, 1), 0);
	assert_int_equal(send_kernel(&p, 0, unknown, 1, mw, 2, 1), 0);
	assert_int_equal(send_kernel(&p, TB_F_GC, read, 1, mw, 2, 1), 0);
	folded = render(tb_write_folded, &p);
	assert_string_equal(folded,
		MAIN_WORK("<GC> (<synthetic>:0);read_zero_[k] 1\n")
		MAIN_WORK("<off-CPU> (<synthetic>:0);do_nanosleep_[k];schedule_[k] 0\n")
		MAIN_WORK("[unknown]_[k] 1\n")
		MAIN_WORK("entry_SYSCALL_64_after_hwframe_[k];do_syscall_64_[k];read_zero_[k] 2\n"));
	free(folded);
	assert_int_equal(p.kernel_samples, 5);
	assert_int_equal(p.kernel_frames, 3 * 2 + 2 + 1 + 1);
	assert_int_equal(p.python_samples, 4);
	/* one code entry per kernel function, however many addresses in it */
	assert_int_equal(send_kernel(&p, 0, (const uint64_t[]){ 0xffffffff81300020ull }, 1, mw, 2, 1), 0);
	{
		uint32_t kernel = 0;

		for (uint32_t i = 0; i < p.sym.n; i++)
			kernel += p.sym.codes[i].kind == TB_CODE_KERNEL;
		/* read_zero, do_syscall_64, entry, schedule, do_nanosleep, [unknown], and the
		 * trimmed bpf_trampoline_6442, __traceiter_sched_switch, __schedule */
		assert_int_equal(kernel, 9);
	}
	/* too many kernel words, or fewer bytes than they need: malformed */
	{
		struct { struct tb_sample_hdr h; __u64 w[2]; } r;

		memset(&r, 0, sizeof(r));
		r.h.pid = PID;
		r.h.nkernel = TB_MAX_KERNEL + 1;
		assert_int_equal(tb_profile_add_record(&p, &r, sizeof(r)), -1);
		r.h.nkernel = 3;
		assert_int_equal(tb_profile_add_record(&p, &r, sizeof(r)), -1);
	}
	tb_profile_free(&p);
	tb_ksyms_free(&k);

	/* kptr_restrict: every address 0; the kernel part is one [kernel] frame */
	setup_profile(&p);
	load_ksyms(&k, "0000000000000000 T _text\n0000000000000000 T do_syscall_64\n");
	assert_true(k.hidden);
	tb_profile_set_ksyms(&p, &k, 2);
	assert_true(p.kstack.hidden);
	assert_int_equal(send_kernel(&p, 0, read, 3, mw, 2, 3), 0);
	assert_int_equal(send_kernel(&p, TB_F_OFF_CPU, sw, 5, mw, 2, 1), 0);
	folded = render(tb_write_folded, &p);
	assert_string_equal(folded,
		MAIN_WORK("<off-CPU> (<synthetic>:0);[kernel]_[k] 0\n")
		MAIN_WORK("[kernel]_[k] 3\n"));
	free(folded);
	assert_int_equal(p.kernel_frames, 4);
	tb_profile_free(&p);
	tb_ksyms_free(&k);
}

/* A thread without Python frames (a C library's worker): on CPU with kernel
 * frames, under <no Python frame>; off CPU, or with no frame, or in a mode that
 * keeps GIL holders only: counted, not shown.  The summary says so. */
static void test_no_python_frame(void **state)
{
	const uint64_t mw[] = { 0x2000, 0x1000 };
	const uint64_t read[] = { 0xffffffff81300010ull, 0xffffffff81200000ull, 0xffffffff81000180ull };
	struct tb_profile p;
	struct tb_ksyms k;
	char *text = NULL;
	size_t len = 0;
	FILE *f;

	(void)state;
	setup_profile(&p);
	load_ksyms(&k, KSYMS);
	tb_profile_set_ksyms(&p, &k, 0);
	p.kernel = 1;
	assert_int_equal(send_kernel(&p, 0, read, 3, mw, 2, 1), 0);
	assert_int_equal(send_kernel(&p, TB_F_NO_TSTATE, read, 3, NULL, 0, 2), 0);
	assert_int_equal(send_kernel(&p, 0, read, 1, NULL, 0, 1), 0);          /* a thread state, no frame */
	assert_int_equal(send_kernel(&p, TB_F_NO_TSTATE, read, 0, NULL, 0, 1), 0);  /* no frame at all */
	assert_int_equal(send_kernel(&p, TB_F_NO_TSTATE | TB_F_OFF_CPU, read, 3, NULL, 0, 1), 0);
	text = render(tb_write_folded, &p);
	assert_string_equal(text,
		"python3.11 (pid 4242);thread (tid 1);<no Python frame> (<synthetic>:0);"
		"entry_SYSCALL_64_after_hwframe_[k];do_syscall_64_[k];read_zero_[k] 2\n"
		"python3.11 (pid 4242);thread (tid 1);<no Python frame> (<synthetic>:0);read_zero_[k] 1\n"
		MAIN_WORK("entry_SYSCALL_64_after_hwframe_[k];do_syscall_64_[k];read_zero_[k] 1\n"));
	free(text);
	assert_int_equal(p.samples, 5);
	assert_int_equal(p.no_python, 4);
	assert_int_equal(tb_profile_no_python_shown(&p), 3);
	assert_int_equal(p.python_samples, 4);
	f = open_memstream(&text, &len);
	tb_write_summary(&p, f, 0);
	fclose(f);
	if (!strstr(text, "tachyon-bpf: 5 samples (1 with Python frames, 4 without: 3 shown under "
			  "<no Python frame> with their kernel frames), "))
		fail_msg("summary: %s", text);
	free(text);
	/* --mode gil keeps GIL holders: a thread without Python state holds none */
	p.mode = TB_MODE_GIL;
	assert_int_equal(send_kernel(&p, TB_F_NO_TSTATE, read, 3, NULL, 0, 1), 0);
	assert_int_equal(p.no_python, 5);
	assert_int_equal(tb_profile_no_python_shown(&p), 3);
	tb_profile_free(&p);
	tb_ksyms_free(&k);

	/* without --native or --kernel: nothing to show, and the summary says it */
	setup_profile(&p);
	assert_int_equal(send_kernel(&p, TB_F_NO_TSTATE, read, 0, NULL, 0, 2), 0);
	assert_int_equal(send_kernel(&p, 0, read, 0, mw, 2, 1), 0);
	assert_int_equal(p.no_python, 2);
	assert_int_equal(tb_profile_no_python_shown(&p), 0);
	f = open_memstream(&text, &len);
	tb_write_summary(&p, f, 0);
	fclose(f);
	if (!strstr(text, "tachyon-bpf: 3 samples (1 with Python frames, 2 without, not shown: no frames to show "
			  "without --native or --kernel), "))
		fail_msg("summary: %s", text);
	free(text);
	tb_profile_free(&p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_malformed_records),
		cmocka_unit_test(test_aggregation_and_folded),
		cmocka_unit_test(test_folded_hostile_names),
		cmocka_unit_test(test_tree_thread_values),
		cmocka_unit_test(test_prune_keeps_small_thread),
		cmocka_unit_test(test_prune_more_and_back),
		cmocka_unit_test(test_tree_by_line_and_markers),
		cmocka_unit_test(test_ended_processes_compacted),
		cmocka_unit_test(test_pid_reuse_and_exec),
		cmocka_unit_test(test_fork_child_inherits),
		cmocka_unit_test(test_fork_storm_bounded),
		cmocka_unit_test(test_thread_lookup),
		cmocka_unit_test(test_kernel_frames),
		cmocka_unit_test(test_no_python_frame),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
