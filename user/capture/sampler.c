/* sampler.c: loads the embedded BPF program (libbpf skeleton) in the shape
 * the running kernel takes (its helpers probed: bpf_loop, or bounded loops
 * and tail calls), opens a software cpu-clock perf event per online CPU in
 * frequency mode, attaches the program to each, and drains the ring buffer:
 * stacks and wake-ups into the profile, process lifecycle records to the
 * function the session gives (capture/watch.c's). */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "capture/clock.h"
#include "capture/sampler.h"
#include "capture/unwind.h"
#include "tachyon.skel.h"

struct tb_sampler {
	struct tachyon_bpf *skel;
	struct bpf_program *sample_prog; /* attached to the perf events */
	struct ring_buffer *rb;
	struct bpf_link **links;
	int *pfds;
	int ncpus;
	struct tb_profile *prof;
	tb_lifecycle_fn lifecycle;     /* exec, fork and exit records go there */
	void *lifecycle_ctx;
	int note_no_gil;
	struct tb_unwind *unwind;      /* --native */
	int noted_umaps_full;          /* said that umaps is full */
	int bounded;                   /* the bounded shape (no bpf_loop) */
	int quiet;                     /* no notes on stderr */
};

static int silent_print(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	if (level == LIBBPF_WARN && getenv("TB_DEBUG_BPF"))
		return vfprintf(stderr, fmt, ap);
	return 0;
}

void tb_sampler_quiet_libbpf(void)
{
	libbpf_set_print(silent_print);
}

/* --native: the registry follows the lifecycle of processes, and rereads
 * the maps of one whose walk met an unknown pc (a library loaded since). */
static void unwind_record(struct tb_sampler *s, const struct tb_sample_hdr *h)
{
	if (!s->unwind)
		return;
	switch (h->type) {
	case TB_REC_FORK:
		tb_unwind_fork(s->unwind, (pid_t)h->value, (pid_t)h->pid, tb_mono_ns());
		break;
	case TB_REC_EXEC:
	case TB_REC_EXIT:
		tb_unwind_forget(s->unwind, (pid_t)h->pid, tb_mono_ns());
		break;
	case TB_REC_SAMPLE:
		if (h->native_stop == TB_NS_UNKNOWN_MAP)
			tb_unwind_unknown_pc(s->unwind, (pid_t)h->pid, tb_mono_ns());
		break;
	}
}

static int on_record(void *ctx, void *data, size_t size)
{
	struct tb_sampler *s = ctx;
	const struct tb_sample_hdr *h = data;

	if (size >= sizeof(*h) &&
	    (h->type == TB_REC_EXEC || h->type == TB_REC_FORK || h->type == TB_REC_EXIT)) {
		if (s->lifecycle)
			s->lifecycle(s->lifecycle_ctx, h);
	} else {
		tb_profile_add_record(s->prof, data, size); /* checks size and depth */
	}
	if (size >= sizeof(*h))
		unwind_record(s, h);
	return 0;
}

/* The registry's view of the maps (capture/unwind.h). */
static int set_file(void *ctx, uint32_t slot, const struct tb_ufile *f)
{
	struct tb_sampler *s = ctx;

	return bpf_map__update_elem(s->skel->maps.ufiles, &slot, sizeof(slot), f, sizeof(*f), BPF_ANY);
}

static int set_ranges(void *ctx, uint32_t pid, const struct tb_umaps *m)
{
	struct tb_sampler *s = ctx;

	if (!m)
		return bpf_map__delete_elem(s->skel->maps.umaps, &pid, sizeof(pid), 0);
	if (!bpf_map__update_elem(s->skel->maps.umaps, &pid, sizeof(pid), m, sizeof(*m), BPF_ANY))
		return 0;
	if (errno == E2BIG && !s->noted_umaps_full) {
		s->noted_umaps_full = 1;
		fprintf(stderr, "tachyon-bpf: --native: the mappings of %u processes at once fill the kernel's map "
			"(preallocated before Linux 6.1): pid %u and the next ones have no native frames\n",
			bpf_map__max_entries(s->skel->maps.umaps), pid);
	}
	return -1;
}

/* A table's rows into urows through a mapping of just their pages (the
 * array is never mapped whole: its 32 MiB would count as the agent's). */
static int set_rows(void *ctx, uint32_t first, const struct tb_urow *rows, uint32_t n)
{
	struct tb_sampler *s = ctx;
	size_t page = (size_t)sysconf(_SC_PAGESIZE), at = (size_t)first * sizeof(*rows);
	size_t off = at & ~(page - 1), len = at - off + (size_t)n * sizeof(*rows);
	void *m = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, bpf_map__fd(s->skel->maps.urows),
		       (off_t)off);

	if (m == MAP_FAILED)
		return -1;
	memcpy((char *)m + (at - off), rows, (size_t)n * sizeof(*rows));
	munmap(m, len);
	return 0;
}

/* Start the registry (after load). */
static void open_unwind(struct tb_sampler *s, const struct tb_sampler_opts *o)
{
	struct tb_unwind_maps maps = { s, 0, TB_MAX_UFILES, set_rows, set_file, set_ranges };
	struct tb_unwind_opts uo = { TB_UNWIND_GRACE_NS, TB_UNWIND_REFRESH_NS, TB_UNWIND_WAIT_NS, 1, o->quiet };

	maps.max_rows = bpf_map__max_entries(s->skel->maps.urows);
	s->unwind = tb_unwind_new(&maps, &uo);
	s->prof->ncodes.resolver = tb_unwind_resolver(s->unwind);
}

static int open_perf_event(int cpu, unsigned hz)
{
	struct perf_event_attr attr;

	memset(&attr, 0, sizeof(attr));
	attr.size = sizeof(attr);
	attr.type = PERF_TYPE_SOFTWARE;
	attr.config = PERF_COUNT_SW_CPU_CLOCK;
	attr.freq = 1;
	attr.sample_freq = hz;
	return (int)syscall(__NR_perf_event_open, &attr, -1, cpu, -1, PERF_FLAG_FD_CLOEXEC);
}

/* Does the running kernel let a perf-event program call this helper? */
static int has_helper(enum bpf_func_id id)
{
	return libbpf_probe_bpf_helper(BPF_PROG_TYPE_PERF_EVENT, id, NULL) == 1;
}

/* Does the kernel let a perf-event program use a hash map that is not
 * preallocated (6.1)?  A program of two instructions that refers to one. */
static int takes_lazy_hash(void)
{
	LIBBPF_OPTS(bpf_map_create_opts, mopts, .map_flags = BPF_F_NO_PREALLOC);
	int map = bpf_map_create(BPF_MAP_TYPE_HASH, NULL, 4, 8, 1, &mopts), prog;
	struct bpf_insn insns[4] = {
		{ .code = BPF_LD | BPF_DW | BPF_IMM, .dst_reg = BPF_REG_1, .src_reg = BPF_PSEUDO_MAP_FD },
		{ 0 },
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0 },
		{ .code = BPF_JMP | BPF_EXIT },
	};

	if (map < 0)
		return 0;
	insns[0].imm = map;
	prog = bpf_prog_load(BPF_PROG_TYPE_PERF_EVENT, NULL, "GPL", insns, 4, NULL);
	close(map);
	if (prog < 0)
		return 0;
	close(prog);
	return 1;
}

/* The programs that run: the floor alone (--bench-floor), the walk with
 * bpf_loop (5.17+), or without it the bounded walk and the programs it
 * tail-calls; tb_switch* in wall mode. */
static void choose_programs(struct tb_sampler *s, const struct tb_sampler_opts *o, int bounded)
{
	typeof(s->skel->progs) *p = &s->skel->progs;
	int wall = o->wall && !o->floor;

	s->sample_prog = o->floor ? p->tb_floor : bounded ? p->tb_sample_bounded : p->tb_sample;
	bpf_program__set_autoload(p->tb_floor, o->floor);
	bpf_program__set_autoload(p->tb_sample, !o->floor && !bounded);
	bpf_program__set_autoload(p->tb_sample_bounded, !o->floor && bounded);
	bpf_program__set_autoload(p->tb_sample_native, !o->floor && bounded && o->native_depth);
	bpf_program__set_autoload(p->tb_sample_python, !o->floor && bounded);
	bpf_program__set_autoload(p->tb_switch, wall && !bounded);
	bpf_program__set_autoload(p->tb_switch_bounded, wall && bounded);
	bpf_program__set_autoload(p->tb_switch_native, wall && bounded && o->native_depth);
	bpf_program__set_autoload(p->tb_switch_python, wall && bounded);
	/* reached by tail call only */
	bpf_program__set_autoattach(p->tb_switch_native, false);
	bpf_program__set_autoattach(p->tb_switch_python, false);
}

/* The bounded walk's native programs: one per TB_BOUNDED_NATIVE frames and
 * the step that finds the depth reached. */
static unsigned bounded_native_programs(const struct tb_sampler_opts *o)
{
	return o->native_depth ? o->native_depth / TB_BOUNDED_NATIVE + 1 : 0;
}

/* Without bpf_loop, a depth not asked for (the default, 1024) is the
 * deepest the Python programs left after the native ones reach (896 with
 * --native's default 128 native frames): nothing to say then; a depth
 * given is kept and said to be cut (note_bounded_depth). */
static unsigned bounded_depth(const struct tb_sampler_opts *o)
{
	unsigned native = bounded_native_programs(o), reach;

	if (o->max_depth_given || native >= TB_TAIL_CALLS)
		return o->max_depth;
	reach = (TB_TAIL_CALLS - native) * TB_BOUNDED_FRAMES;
	reach = reach > TB_SHIM_SLACK ? reach - TB_SHIM_SLACK : 1;
	return reach < o->max_depth ? reach : o->max_depth;
}

/* Without bpf_loop the walk takes at most TB_TAIL_CALLS programs after the
 * first (native frames: one per TB_BOUNDED_NATIVE and the step that finds
 * the depth reached, then one for the thread's state; Python frames: one
 * per TB_BOUNDED_FRAMES, shims included): one line when the depths asked
 * for need more, so that a cut stack is not a surprise. */
static void note_bounded_depth(const struct tb_sampler_opts *o)
{
	unsigned native = bounded_native_programs(o);
	unsigned python = (o->max_depth + TB_SHIM_SLACK + TB_BOUNDED_FRAMES - 1) / TB_BOUNDED_FRAMES;

	if (native + python <= TB_TAIL_CALLS)
		return;
	if (o->native_depth)
		fprintf(stderr, "tachyon-bpf: this kernel has no bpf_loop (Linux 5.17): a sample's walk spans at most "
			"%u programs of %u Python or %u native frames; --max-depth %u with --native-depth %u "
			"needs %u: the deepest stacks are cut (marked <truncated>)\n", TB_TAIL_CALLS + 1,
			TB_BOUNDED_FRAMES, TB_BOUNDED_NATIVE, o->max_depth, o->native_depth, native + python + 1);
	else
		fprintf(stderr, "tachyon-bpf: this kernel has no bpf_loop (Linux 5.17): a sample's walk spans at most "
			"%u programs of %u frames; --max-depth %u needs %u: the deepest stacks are cut "
			"(marked <truncated>)\n", TB_TAIL_CALLS + 1, TB_BOUNDED_FRAMES, o->max_depth, python + 1);
}

/* A bounded walk goes on in the programs of its array: slot 0 the native
 * phase's, slot 1 the Python phase's (MORE_* in the BPF program). */
static int link_tail(struct bpf_map *map, struct bpf_program *native, struct bpf_program *python)
{
	struct bpf_program *progs[2] = { native, python };

	for (__u32 key = 0; key < 2; key++) {
		int fd = bpf_program__fd(progs[key]);

		if (fd >= 0 && bpf_map__update_elem(map, &key, sizeof(key), &fd, sizeof(fd), BPF_ANY))
			return -1;
	}
	return 0; /* (a program not loaded: not in wall mode, or no --native) */
}

static const char *explain(int e)
{
	if ((e == EPERM || e == EACCES) && geteuid() == 0)
		return "refused by the kernel (verifier or missing CAP_BPF/CAP_PERFMON)";
	if (e == EPERM || e == EACCES)
		return "permission denied: run as root (CAP_BPF and CAP_PERFMON are needed)";
	return strerror(e);
}

struct tb_sampler *tb_sampler_open(const struct tb_sampler_opts *o, struct tb_profile *prof,
				   tb_lifecycle_fn lifecycle, void *ctx, char *err, size_t errlen)
{
	struct tb_sampler *s = calloc(1, sizeof(*s));
	const char *force = getenv("TB_BPF_BOUNDED");
	int rc, bounded, lazy_hash = takes_lazy_hash();

	if (!s)
		return NULL;
	s->prof = prof;
	s->lifecycle = lifecycle;
	s->lifecycle_ctx = ctx;
	s->note_no_gil = o->note_no_gil;
	s->quiet = o->quiet;
	tb_sampler_quiet_libbpf();
	if (access("/sys/kernel/btf/vmlinux", R_OK)) {
		snprintf(err, errlen, "this kernel has no BTF (/sys/kernel/btf/vmlinux: %s): tachyon-bpf needs a "
			 "kernel built with CONFIG_DEBUG_INFO_BTF (its programs are typed and relocated by it)",
			 strerror(errno));
		goto fail;
	}
	s->skel = tachyon_bpf__open();
	if (!s->skel) {
		snprintf(err, errlen, "cannot open the BPF program: %s", explain(errno));
		goto fail;
	}
	s->skel->rodata->max_depth = o->max_depth;
	s->skel->rodata->read_opcodes = (__u32)o->read_opcodes;
	s->skel->rodata->bench_walk = (__u32)o->bench_walk;
	s->skel->rodata->bench_task_reads = o->bench_task_reads;
	s->skel->rodata->follow_mode = (__u32)o->follow_mode;
	s->skel->rodata->wall_mode = o->wall ? 1 : 0;
	s->skel->rodata->cgroup_filter = o->cgroup ? 1 : 0;
	s->skel->rodata->kernel_stacks = o->kernel ? 1 : 0;
	s->skel->rodata->async_aware = o->async_aware && !o->floor ? 1 : 0;
	s->skel->rodata->native_depth = o->floor ? 0 : o->native_depth;
	if (s->skel->rodata->native_depth) {
		bpf_map__set_max_entries(s->skel->maps.urows,
					 (__u32)(((uint64_t)o->native_table_mb << 20) / sizeof(struct tb_urow)));
		/* before 6.1 a perf-event program's hash maps are preallocated: fewer
		 * processes' mappings (16 KiB each) then */
		if (!lazy_hash)
			bpf_map__set_max_entries(s->skel->maps.umaps, TB_PREALLOC_UMAPS);
	} else { /* nothing to unwind: the smallest maps */
		bpf_map__set_max_entries(s->skel->maps.ufiles, 1);
		bpf_map__set_max_entries(s->skel->maps.umaps, 1);
	}
	bpf_map__set_max_entries(s->skel->maps.events, o->ringbuf_mb << 20);
	if (!lazy_hash)
		bpf_map__set_map_flags(s->skel->maps.umaps, 0);
	s->skel->rodata->has_task_pt_regs = has_helper(BPF_FUNC_task_pt_regs) &&
					    has_helper(BPF_FUNC_get_current_task_btf);
	/* TB_BPF_BOUNDED=1: the bounded shape where bpf_loop exists too (tests, benchmarks) */
	bounded = !has_helper(BPF_FUNC_loop) || (force && !strcmp(force, "1"));
	s->bounded = bounded;
	choose_programs(s, o, bounded);
	if (bounded && !o->floor) {
		struct tb_sampler_opts fit = *o;

		fit.max_depth = bounded_depth(o);
		s->skel->rodata->max_depth = fit.max_depth;
		prof->max_depth = fit.max_depth;
		note_bounded_depth(&fit);
	}
	rc = tachyon_bpf__load(s->skel);
	if (rc) {
		int e = -rc > 0 ? -rc : errno;

		snprintf(err, errlen, "cannot load the BPF program: %s%s", explain(e),
			 e == EPERM || e == EACCES ? "" : " (set TB_DEBUG_BPF=1 for the verifier log)");
		goto fail;
	}
	if (bounded && (link_tail(s->skel->maps.sample_more, s->skel->progs.tb_sample_native,
				  s->skel->progs.tb_sample_python) ||
			link_tail(s->skel->maps.switch_more, s->skel->progs.tb_switch_native,
				  s->skel->progs.tb_switch_python))) {
		snprintf(err, errlen, "cannot link the BPF walk's programs: %s", explain(errno));
		goto fail;
	}
	if (s->skel->rodata->native_depth)
		open_unwind(s, o);
	if (o->cgroup) {
		int fd = open(o->cgroup, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		__u32 key = 0;

		if (fd < 0 || bpf_map__update_elem(s->skel->maps.cgroup_map, &key, sizeof(key), &fd,
						   sizeof(fd), BPF_ANY)) {
			snprintf(err, errlen, "%s: cannot use this cgroup: %s", o->cgroup, strerror(errno));
			if (fd >= 0)
				close(fd);
			goto fail;
		}
		close(fd);
	}
	s->ncpus = libbpf_num_possible_cpus();
	s->links = calloc((size_t)s->ncpus, sizeof(*s->links));
	s->pfds = calloc((size_t)s->ncpus, sizeof(int));
	if (!s->links || !s->pfds)
		goto fail;
	for (int cpu = 0; cpu < s->ncpus; cpu++) {
		s->pfds[cpu] = -1;
		if (o->cpu >= 0 && cpu != o->cpu)
			continue;
		s->pfds[cpu] = open_perf_event(cpu, o->hz);
		if (s->pfds[cpu] < 0) {
			if (errno == ENODEV || errno == EINVAL)
				continue; /* CPU offline */
			snprintf(err, errlen, "cannot open a cpu-clock perf event on CPU %d: %s", cpu,
				 explain(errno));
			goto fail;
		}
		s->links[cpu] = bpf_program__attach_perf_event(s->sample_prog, s->pfds[cpu]);
		if (!s->links[cpu]) {
			snprintf(err, errlen, "cannot attach to the perf event on CPU %d: %s", cpu,
				 explain(errno));
			goto fail;
		}
	}
	if (!o->floor && tachyon_bpf__attach(s->skel)) {
		snprintf(err, errlen, "cannot attach the scheduler tracepoints: %s", explain(errno));
		goto fail;
	}
	s->rb = ring_buffer__new(bpf_map__fd(s->skel->maps.events), on_record, s, NULL);
	if (!s->rb) {
		snprintf(err, errlen, "cannot open the ring buffer: %s", explain(errno));
		goto fail;
	}
	return s;
fail:
	tb_sampler_close(s);
	return NULL;
}

/* --native, a target known at the start: its tables built before its first sample
 * (bounded: TB_UNWIND_WAIT_NS), said on stderr. */
static void wait_tables(struct tb_sampler *s, pid_t pid)
{
	uint64_t t0 = tb_mono_ns();
	uint32_t files, pending;

	if (tb_unwind_add_process(s->unwind, pid, t0) || tb_unwind_wait(s->unwind, pid, &files, &pending) ||
	    s->quiet)
		return;
	if (!pending)
		fprintf(stderr, "tachyon-bpf: pid %d: unwind tables for %u files ready in %.2f s\n", (int)pid, files,
			(double)(tb_mono_ns() - t0) / 1e9);
	else
		fprintf(stderr, "tachyon-bpf: pid %d: unwind tables for %u of %u files ready after %.2f s; until the "
			"others are, their native frames are one <native tables not ready> frame\n", (int)pid,
			files - pending, files, (double)(tb_mono_ns() - t0) / 1e9);
}

int tb_sampler_add(struct tb_sampler *s, const struct tb_target *t, int wait)
{
	struct tb_proc p;
	__u32 key = (__u32)t->pid;
	char version[32];

	if (wait && s->unwind)
		wait_tables(s, t->pid);
	tb_target_to_proc(t, &p);
	if (bpf_map__update_elem(s->skel->maps.procs, &key, sizeof(key), &p, sizeof(p), BPF_ANY))
		return -1;
	/* --mode gil keeps the samples of GIL holders. A free-threaded process has no GIL
	 * (unless something enables it at run time: then it is read as on a default build):
	 * its threads run Python at once, as holders do, so its samples are kept (flagged
	 * TB_F_NO_GIL by the BPF program, kept by the profile's mode). */
	if (s->note_no_gil && t->layout.free_threaded)
		fprintf(stderr, "tachyon-bpf: --mode gil: pid %d (%s) has no GIL: its threads run Python in parallel, "
			"so all its on-CPU samples are kept\n", (int)t->pid,
			tb_layout_version_str(&t->layout, version, sizeof(version)));
	/* its native frames are walked once its tables are loaded */
	if (s->unwind && !wait)
		tb_unwind_add_process(s->unwind, t->pid, tb_mono_ns());
	return 0;
}

int tb_sampler_follow(struct tb_sampler *s, pid_t pid)
{
	__u32 key = (__u32)pid, one = 1;

	return bpf_map__update_elem(s->skel->maps.followed, &key, sizeof(key), &one, sizeof(one), BPF_ANY);
}

void tb_sampler_remove(struct tb_sampler *s, pid_t pid)
{
	__u32 key = (__u32)pid;

	bpf_map__delete_elem(s->skel->maps.procs, &key, sizeof(key), 0);
	if (s->unwind) {
		bpf_map__delete_elem(s->skel->maps.umaps, &key, sizeof(key), 0);
		tb_unwind_forget(s->unwind, pid, tb_mono_ns());
	}
}

int tb_sampler_poll(struct tb_sampler *s, int timeout_ms)
{
	int n = ring_buffer__poll(s->rb, timeout_ms);

	/* records are mostly submitted without a wake-up: drain anyway */
	if (n >= 0) {
		int m = ring_buffer__consume(s->rb);

		n = m > 0 ? n + m : n;
	}
	if (s->unwind)
		tb_unwind_poll(s->unwind, tb_mono_ns());
	return n;
}

uint64_t tb_sampler_counter(struct tb_sampler *s, int idx)
{
	__u32 key = (__u32)idx;
	__u64 *vals = calloc((size_t)s->ncpus, sizeof(__u64));
	uint64_t sum = 0;

	if (!vals)
		return 0;
	if (!bpf_map__lookup_elem(s->skel->maps.counters, &key, sizeof(key), vals,
				  sizeof(__u64) * (size_t)s->ncpus, 0))
		for (int i = 0; i < s->ncpus; i++)
			sum += vals[i];
	free(vals);
	return sum;
}

const char *tb_sampler_shape(const struct tb_sampler *s)
{
	return s->bounded ? "bounded loops and tail calls: no bpf_loop in this kernel" : "bpf_loop";
}

struct tb_unwind *tb_sampler_unwind(struct tb_sampler *s)
{
	return s->unwind;
}

int tb_sampler_prog_id(struct tb_sampler *s)
{
	struct bpf_prog_info info;
	__u32 len = sizeof(info);
	int fd = bpf_program__fd(s->sample_prog);

	memset(&info, 0, sizeof(info));
	if (fd < 0 || bpf_obj_get_info_by_fd(fd, &info, &len))
		return -1;
	return (int)info.id;
}

void tb_sampler_close(struct tb_sampler *s)
{
	if (!s)
		return;
	if (s->rb)
		ring_buffer__free(s->rb);
	if (s->unwind) {
		s->prof->ncodes.resolver = NULL;
		tb_unwind_free(s->unwind);
	}
	for (int i = 0; s->links && i < s->ncpus; i++)
		bpf_link__destroy(s->links[i]);
	for (int i = 0; s->pfds && i < s->ncpus; i++)
		if (s->pfds[i] >= 0)
			close(s->pfds[i]);
	free(s->links);
	free(s->pfds);
	tachyon_bpf__destroy(s->skel);
	free(s);
}
