/* pthreadfacts.h: glibc's struct pthread as a process's own libc lays it out,
 * from the GLIBC_PRIVATE data libc.so.6 exports for libthread_db. */
#ifndef TB_PTHREADFACTS_H
#define TB_PTHREADFACTS_H
#include <stdint.h>
#include <sys/types.h>

struct tb_pthread_facts {
	uint32_t size;        /* sizeof(struct pthread): _thread_db_sizeof_pthread */
	uint32_t tid_offset;  /* offsetof(struct pthread, tid): _thread_db_pthread_tid */
};

/* The facts of the glibc pid maps (its libc.so.6, or libc-2.X.so). 0 when
 * read and sane; -1 (no glibc mapped yet, a libc without the symbols such as
 * musl, a value out of bounds). */
int tb_pthread_facts(pid_t pid, struct tb_pthread_facts *f);

#endif
