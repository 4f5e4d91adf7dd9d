/* cmd_render.c: `tachyon-bpf render CAPTURE -o OUT...`: writes any output
 * from a capture file. */
#include <stdio.h>
#include "commands.h"

int tb_cmd_render(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	fprintf(stderr, "tachyon-bpf: render: capture files are not implemented yet\n");
	return 1;
}
