/* uwcheck.c: unwinds a live thread with user/proc/unwind_ref.c and with
 * elfutils' libdwfl (the oracle), and compares them PC by PC.
 *
 *   uwcheck [-n SAMPLES] [-i MS] [-v] PID [TID]
 *
 * Each sample stops the thread (PTRACE_SEIZE + PTRACE_INTERRUPT: a thread
 * that stopped itself stays stopped), takes its registers, walks it both
 * ways and lets it go.  Tables are built once per mapped file (cfi.c) and
 * the evaluator ranges of python files tag frames (evalrange.c); the vDSO
 * is read from the process.  libdwfl gets the process's maps less libffi's
 * remapped trampoline page (see maps_for_dwfl).  Prints per sample
 *   sample K ours N stop REASON dwfl M verdict equal|ours_shorter|dwfl_shorter|differ at I
 * and with -v every frame: "frame I PC FLAGS DWFL_PC NAME" (FLAGS: r return
 * address, t tagged (evaluator), f frame pointer).  Exit 1 on setup errors. */
#define _GNU_SOURCE
#include <elfutils/libdwfl.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "cpython/evalrange.h"
#include "proc/procmem.h"
#include "proc/unwind_ref.h"

#define MAX_MAPS 1024
#define MAX_FRAMES 256

struct file {
	char path[4096];
	struct tb_cfi cfi;
	struct tb_eval_ranges eval;
	struct tb_uw_file uw;
	int ok;
};

static struct file *files[MAX_MAPS];
static int nfiles;
static struct tb_uw_range ranges[MAX_MAPS];
static uint32_t nranges;

static void die(const char *what)
{
	fprintf(stderr, "uwcheck: %s: %s\n", what, strerror(errno));
	exit(1);
}

/* bias of a mapping at start with file offset off: from the PT_LOAD holding off */
static int mapping_bias(Elf *elf, uint64_t start, uint64_t off, uint64_t *bias)
{
	size_t n;

	if (elf_getphdrnum(elf, &n))
		return -1;
	for (size_t i = 0; i < n; i++) {
		GElf_Phdr ph;
		uint64_t pg_off, pg_vaddr;

		if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_LOAD)
			continue;
		pg_off = ph.p_offset & ~0xfffull;
		pg_vaddr = ph.p_vaddr & ~0xfffull;
		if (off >= pg_off && off < ph.p_offset + ph.p_filesz) {
			*bias = start - (pg_vaddr + (off - pg_off));
			return 0;
		}
	}
	return -1;
}

static void load_tables(struct file *f, Elf *elf)
{
	char err[256];

	if (tb_cfi_build(elf, NULL, &f->cfi, err, sizeof(err))) {
		fprintf(stderr, "uwcheck: %s: %s\n", f->path, err);
		return;
	}
	f->uw.rows = f->cfi.rows;
	f->uw.nrows = f->cfi.nrows;
	f->uw.base = f->cfi.base;
	f->uw.flags = f->cfi.flags;
	if (!tb_eval_ranges(elf, &f->cfi, &f->eval, err, sizeof(err))) {
		f->uw.tags = f->eval.r;
		f->uw.ntags = f->eval.n;
	}
	f->ok = 1;
}

static struct file *file_for(pid_t pid, const char *path, uint64_t start, uint64_t end,
			     uint64_t off, uint64_t *bias)
{
	char p[4200];
	struct file *f = NULL;
	Elf *elf = NULL;
	void *image = NULL;
	int fd = -1;

	for (int i = 0; i < nfiles; i++)
		if (strcmp(files[i]->path, path) == 0)
			f = files[i];
	if (strcmp(path, "[vdso]") == 0) {
		image = malloc(end - start);
		if (!image || tb_mem_read(pid, start, image, end - start))
			return NULL;
		elf = elf_memory(image, end - start);
	} else if (path[0] == '/') {
		snprintf(p, sizeof(p), "/proc/%d/map_files/%" PRIx64 "-%" PRIx64, (int)pid, start, end);
		if ((fd = open(p, O_RDONLY | O_CLOEXEC)) < 0)
			return NULL;
		elf = elf_begin(fd, ELF_C_READ, NULL);
	} else {
		return NULL;
	}
	if (!elf || mapping_bias(elf, start, off, bias)) {
		f = NULL;
	} else if (!f && nfiles < MAX_MAPS) {
		f = calloc(1, sizeof(*f));
		snprintf(f->path, sizeof(f->path), "%s", path);
		load_tables(f, elf);
		files[nfiles++] = f;
	}
	if (elf)
		elf_end(elf);
	if (fd >= 0)
		close(fd);
	free(image);
	return f && f->ok ? f : NULL;
}

static void read_maps(pid_t pid)
{
	char path[64], line[4300];
	FILE *m;

	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	if (!(m = fopen(path, "re")))
		die(path);
	while (fgets(line, sizeof(line), m) && nranges < MAX_MAPS) {
		uint64_t start, end, off;
		char perms[8], name[4200] = "";
		struct file *f;

		if (sscanf(line, "%" SCNx64 "-%" SCNx64 " %7s %" SCNx64 " %*s %*s %4199[^\n]", &start,
			   &end, perms, &off, name) < 4 || perms[2] != 'x')
			continue;
		ranges[nranges] = (struct tb_uw_range){ { start, end }, 0, NULL };
		if ((f = file_for(pid, name, start, end, off, &ranges[nranges].bias)))
			ranges[nranges].file = &f->uw;
		nranges++;
	}
	fclose(m);
}

/* ------------------------------------------------------------ libdwfl */

/* The process's maps for libdwfl, less the mappings of a file below its
 * offset-0 mapping: libffi maps its trampoline page again just below itself,
 * which libdwfl (0.188) takes for the module's start, misplacing it. */
static FILE *maps_for_dwfl(pid_t pid)
{
	char path[64], line[4300], *text = NULL;
	char first[MAX_MAPS][256];
	uint64_t first_start[MAX_MAPS];
	int nfirst = 0;
	size_t len = 0;
	FILE *m, *out;

	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	for (int pass = 0; pass < 2; pass++) {
		if (!(m = fopen(path, "re")))
			die(path);
		out = pass ? open_memstream(&text, &len) : NULL;
		while (fgets(line, sizeof(line), m)) {
			uint64_t start, off;
			char name[256] = "";
			int keep = 1;

			if (sscanf(line, "%" SCNx64 "-%*x %*s %" SCNx64 " %*s %*s %255s",
				   &start, &off, name) < 2)
				continue;
			for (int i = 0; i < nfirst; i++)
				if (strcmp(first[i], name) == 0 && start < first_start[i])
					keep = 0;
			if (!pass && off == 0 && name[0] == '/' && nfirst < MAX_MAPS) {
				snprintf(first[nfirst], sizeof(first[0]), "%s", name);
				first_start[nfirst++] = start;
			}
			if (pass && keep)
				fputs(line, out);
		}
		fclose(m);
		if (pass)
			fclose(out);
	}
	return fmemopen(text, len, "r");
}

struct dwfl_frames {
	uint64_t pc[MAX_FRAMES];
	int n;
};

static int on_dwfl_frame(Dwfl_Frame *frame, void *arg)
{
	struct dwfl_frames *d = arg;
	Dwarf_Addr pc;
	bool activation;

	if (!dwfl_frame_pc(frame, &pc, &activation) || d->n == MAX_FRAMES)
		return DWARF_CB_ABORT;
	d->pc[d->n++] = pc;
	return DWARF_CB_OK;
}

static const char *name_of(Dwfl *dwfl, uint64_t pc, int is_ra)
{
	Dwfl_Module *mod = dwfl_addrmodule(dwfl, pc - (uint64_t)is_ra);
	const char *name = mod ? dwfl_module_addrname(mod, pc - (uint64_t)is_ra) : NULL;

	return name ? name : "??";
}

/* ------------------------------------------------------------ one sample */

static int stop_thread(pid_t tid)
{
	int status;

	if (ptrace(PTRACE_SEIZE, tid, 0, 0) || ptrace(PTRACE_INTERRUPT, tid, 0, 0))
		return -1;
	if (waitpid(tid, &status, __WALL) != tid || !WIFSTOPPED(status))
		return -1;
	return 0;
}

static void sample(int k, pid_t pid, pid_t tid, Dwfl *dwfl, int verbose)
{
	struct user_regs_struct regs;
	struct tb_uw_regs r;
	struct tb_uw_frame ours[MAX_FRAMES];
	struct dwfl_frames theirs = { .n = 0 };
	struct tb_uw_walk w = { ranges, nranges, tb_uw_read_pid, &pid, MAX_FRAMES, 1, NULL };
	enum tb_uw_stop stop;
	uint32_t n;
	int common = 0;
	const char *verdict;

	if (stop_thread(tid))
		die("ptrace");
	if (ptrace(PTRACE_GETREGS, tid, 0, &regs))
		die("PTRACE_GETREGS");
	r = (struct tb_uw_regs){ regs.rip, regs.rsp, regs.rbp, (int64_t)regs.orig_rax != -1, 0, 0 };
	n = tb_unwind(&w, &r, ours, &stop);
	dwfl_getthread_frames(dwfl, tid, on_dwfl_frame, &theirs);
	while (common < (int)n && common < theirs.n && ours[common].pc == theirs.pc[common])
		common++;
	if (common == (int)n && common == theirs.n)
		verdict = "equal";
	else if (common == (int)n)
		verdict = "ours_shorter";
	else if (common == theirs.n)
		verdict = "dwfl_shorter";
	else
		verdict = "differ";
	printf("sample %d ours %u stop %s dwfl %d verdict %s at %d\n", k, n, tb_uw_stop_names[stop],
	       theirs.n, verdict, common);
	for (int i = 0; verbose && (i < (int)n || i < theirs.n); i++) {
		uint32_t fl = i < (int)n ? ours[i].flags : 0;
		uint64_t pc = i < (int)n ? ours[i].pc : theirs.pc[i];

		printf("frame %d %" PRIx64 " %s%s%s- %" PRIx64 " %s\n", i, i < (int)n ? ours[i].pc : 0,
		       fl & TB_UW_RA ? "r" : "", fl & TB_UW_TAG ? "t" : "", fl & TB_UW_FP ? "f" : "",
		       i < theirs.n ? theirs.pc[i] : 0, name_of(dwfl, pc, i > 0));
	}
	fflush(stdout);
	if (ptrace(PTRACE_DETACH, tid, 0, 0))
		die("PTRACE_DETACH");
}

int main(int argc, char **argv)
{
	static char *debuginfo_path;
	static const Dwfl_Callbacks callbacks = {
		.find_elf = dwfl_linux_proc_find_elf,
		.find_debuginfo = dwfl_standard_find_debuginfo,
		.debuginfo_path = &debuginfo_path,
	};
	int samples = 1, interval_ms = 50, verbose = 0, opt;
	pid_t pid, tid;
	Dwfl *dwfl;

	while ((opt = getopt(argc, argv, "n:i:v")) != -1) {
		if (opt == 'n')
			samples = atoi(optarg);
		else if (opt == 'i')
			interval_ms = atoi(optarg);
		else if (opt == 'v')
			verbose = 1;
		else
			return 2;
	}
	if (optind >= argc) {
		fprintf(stderr, "usage: uwcheck [-n SAMPLES] [-i MS] [-v] PID [TID]\n");
		return 2;
	}
	pid = atoi(argv[optind]);
	tid = optind + 1 < argc ? atoi(argv[optind + 1]) : pid;
	elf_version(EV_CURRENT);
	read_maps(pid);
	for (int i = 0; i < nfiles; i++)
		printf("file %s rows %u tags %u%s\n", files[i]->path, files[i]->cfi.nrows,
		       files[i]->uw.ntags, files[i]->cfi.flags & TB_CFI_FP_ONLY ? " fp_only" : "");
	if (!(dwfl = dwfl_begin(&callbacks)) ||
	    dwfl_linux_proc_maps_report(dwfl, maps_for_dwfl(pid)) ||
	    dwfl_report_end(dwfl, NULL, NULL) || dwfl_linux_proc_attach(dwfl, pid, true)) {
		fprintf(stderr, "uwcheck: libdwfl: %s\n", dwfl_errmsg(-1));
		return 1;
	}
	for (int k = 0; k < samples; k++) {
		struct timespec ts = { interval_ms / 1000, (interval_ms % 1000) * 1000000L };

		sample(k, pid, tid, dwfl, verbose);
		nanosleep(&ts, NULL);
	}
	dwfl_end(dwfl);
	return 0;
}
