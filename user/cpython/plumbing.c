/* plumbing.c: the interpreter's call plumbing per CPython version, as data (groups of
 * names shared by the versions that have them), and the one match of a symbol against a
 * version's list. Names from each version's exported symbols (nm -D of Debian's and sid's
 * builds) and, for static functions that only debug files name, from its Objects/call.c,
 * Objects/methodobject.c, Objects/descrobject.c, Objects/classobject.c, Objects/typeobject.c
 * and Python/ceval.c (3.15: the StackRef helpers its CALL instructions call). Each row of
 * versions.c points to its version's list; tb_plumbing_of() finds it by that row.
 */
#include <stddef.h>
#include <string.h>

#include "cpython/plumbing.h"
#include "cpython/versions.h"

/* Every version 3.10-3.15: Objects/call.c, the vectorcall slots of builtin functions,
 * method descriptors, bound methods and slot wrappers, and the evaluator's own entry. */
static const char *const every_version[] = {
	"PyObject_Vectorcall", "PyObject_VectorcallDict", "PyObject_VectorcallMethod",
	"_PyObject_VectorcallTstate", "_PyObject_FastCallDictTstate", "_PyObject_FastCall*",
	"PyObject_Call", "_PyObject_Call", "_PyObject_Call_Prepend", "PyObject_CallOneArg",
	"PyObject_CallNoArgs", "PyObject_CallObject", "PyObject_CallFunctionObjArgs",
	"PyObject_CallMethodObjArgs", "_PyObject_MakeTpCall", "PyVectorcall_Call", "_PyVectorcall_Call",
	"object_vacall", "_Py_CheckFunctionResult", "_PyFunction_Vectorcall", "_PyEval_Vector",
	"_PyEval_EvalFrame", "PyEval_EvalFrame", "PyEval_EvalFrameEx",
	"cfunction_call", "cfunction_vectorcall_*", "PyCFunction_Call", "_PyCFunction_*",
	"method_vectorcall*", "vectorcall_method", "vectorcall_unbound", "slot_tp_call",
	"wrapperdescr_call", "wrapper_call", "classmethoddescr_call",
	NULL,
};

/* 3.10 only: the CALL_FUNCTION family's helpers in Python/ceval.c. */
static const char *const only_3_10[] = { "call_function", "function_code_fastcall", NULL };

/* 3.10-3.12: CALL_FUNCTION_EX's helper in Python/ceval.c. */
static const char *const until_3_12[] = { "do_call_core", NULL };

/* 3.12+: the frame push of a Python-to-Python call. */
static const char *const since_3_12[] = {
	"_PyEvalFramePushAndInit", "_PyEvalFramePushAndInit_Ex", NULL,
};

/* 3.15: the StackRef helpers the evaluator's CALL instructions call (Python/ceval.c,
 * Include/internal/pycore_call.h); the prefixes take both the _StackRef and the
 * _StackRefSteal spellings of the 3.15 pre-releases and releases. */
static const char *const since_3_15[] = {
	"_Py_VectorCall_StackRef*", "_Py_VectorCallInstrumentation_StackRef*",
	"_Py_BuiltinCallFast_StackRef*", "_Py_BuiltinCallFastWithKeywords_StackRef*",
	"_Py_CallBuiltinClass_StackRef*", "_PyCallMethodDescriptorFast_StackRef*",
	"_PyCallMethodDescriptorFastWithKeywords_StackRef*",
	NULL,
};

/* One list per version, pointed to by its row of versions.c (.plumbing). */
const struct tb_plumbing tb_plumbing_3_10 = {
	(const char *const *const[]){ every_version, only_3_10, until_3_12, NULL } };
const struct tb_plumbing tb_plumbing_3_11 = { (const char *const *const[]){ every_version, until_3_12, NULL } };
const struct tb_plumbing tb_plumbing_3_12 = {
	(const char *const *const[]){ every_version, until_3_12, since_3_12, NULL } };
const struct tb_plumbing tb_plumbing_3_13 = { (const char *const *const[]){ every_version, since_3_12, NULL } };
const struct tb_plumbing tb_plumbing_3_14 = { (const char *const *const[]){ every_version, since_3_12, NULL } };
const struct tb_plumbing tb_plumbing_3_15 = {
	(const char *const *const[]){ every_version, since_3_12, since_3_15, NULL } };

static int matches(const char *pattern, const char *name)
{
	size_t n = strlen(pattern);

	if (n && pattern[n - 1] == '*')
		return !strncmp(name, pattern, n - 1);
	return !strcmp(name, pattern);
}

int tb_plumbing_has(const struct tb_plumbing *pl, const char *name)
{
	if (!pl || !name)
		return 0;
	for (const char *const *const *g = pl->groups; *g; g++)
		for (const char *const *p = *g; *p; p++)
			if (matches(*p, name))
				return 1;
	return 0;
}

const struct tb_plumbing *tb_plumbing_of(unsigned minor)
{
	const struct tb_pyversion *v = tb_pyversion(minor);

	return v ? v->plumbing : NULL;
}
