/* procmem.h: bounded reads of another process's memory. */
#ifndef TB_PROCMEM_H
#define TB_PROCMEM_H
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* Read exactly len bytes at addr of pid. 0 on success, -1 otherwise. */
int tb_mem_read(pid_t pid, uint64_t addr, void *buf, size_t len);
/* Read a u64 / pointer; 0 on success. */
int tb_mem_read_u64(pid_t pid, uint64_t addr, uint64_t *out);

#endif
