/* versions.h: the CPython versions tachyon-bpf supports (3.MIN to 3.MAX). */
#ifndef TB_VERSIONS_H
#define TB_VERSIONS_H

#define TB_PY_MIN_MINOR 10
#define TB_PY_MAX_MINOR 15

#endif
