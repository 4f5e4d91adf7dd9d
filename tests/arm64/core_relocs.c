/* core_relocs.c: CO-RE-relocates a BPF object against a given kernel BTF
 * (libbpf's btf_custom_path) and counts the relocations libbpf resolved and
 * those it could not (it poisons their instructions: "no matching targets
 * found"), from libbpf's debug log.  Nothing is attached: the load that
 * follows the relocation may fail (the kernel here is not the BTF's).
 *
 * Usage: core_relocs OBJ BTF    prints "resolved N unresolved M"; exit 0 (1: cannot open) */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <bpf/libbpf.h>

static unsigned resolved, unresolved;

static int count_relocs(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	char line[1024];

	(void)level;
	vsnprintf(line, sizeof(line), fmt, ap);
	if (strstr(line, ": relo #") && strstr(line, ": matching candidate #0 "))
		resolved++;
	else if (strstr(line, ": relo #") && strstr(line, "no matching targets found"))
		unresolved++;
	return 0;
}

int main(int argc, char **argv)
{
	struct bpf_object *obj;

	if (argc != 3) {
		fprintf(stderr, "usage: core_relocs OBJ BTF\n");
		return 1;
	}
	LIBBPF_OPTS(bpf_object_open_opts, opts, .btf_custom_path = argv[2]);
	libbpf_set_print(count_relocs);
	obj = bpf_object__open_file(argv[1], &opts);
	if (!obj) {
		fprintf(stderr, "core_relocs: cannot open %s\n", argv[1]);
		return 1;
	}
	bpf_object__load(obj); /* relocates every program first; the load itself may fail here */
	bpf_object__close(obj);
	printf("resolved %u unresolved %u\n", resolved, unresolved);
	return 0;
}
