/* plumbing.h: the interpreter's call plumbing, one list per CPython version (plumbing.c,
 * pointed to by each row of versions.c): the functions of the file that holds the
 * evaluator that only pass a call on (vectorcall dispatch, frame pushes, the evaluator's
 * helpers for its CALL instructions). --native hides them (model/merge.c) so that a
 * Python caller sits right above what it called; --native-all shows them.
 */
#ifndef TB_PLUMBING_H
#define TB_PLUMBING_H

/* A version's list: groups of names, each group NULL-terminated, the list of groups too.
 * A name ending in '*' is a prefix (its variants: cfunction_vectorcall_O, _NOARGS, ...). */
struct tb_plumbing {
	const char *const *const *groups;
};

/* Is name (a symbol of the evaluator's file) call plumbing on this version? pl NULL: no. */
int tb_plumbing_has(const struct tb_plumbing *pl, const char *name);

/* The list of CPython 3.minor (its versions.c row's .plumbing), NULL if it is not supported. */
const struct tb_plumbing *tb_plumbing_of(unsigned minor);

/* The lists, one per version (versions.c points to them). */
extern const struct tb_plumbing tb_plumbing_3_10, tb_plumbing_3_11, tb_plumbing_3_12, tb_plumbing_3_13,
	tb_plumbing_3_14, tb_plumbing_3_15;

#endif /* TB_PLUMBING_H */
