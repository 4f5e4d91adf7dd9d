/* evalfix.S: an evaluator split as PGO builds split it, for the evalrange
 * tests (tests/unwind/run.py): a hot _PyEval_EvalFrameDefault (exported)
 * that jumps into two cold fragments in .text.unlikely, named ".cold" and
 * ".cold.1" in .symtab and starting mid-frame, and decoys the jump scan must
 * not take: a tail jump to an exported function, a mid-frame fragment only
 * called (not jumped to), a jump into a function entry.  Linked with
 * -rdynamic, then stripped (strip keeps .dynsym). */
	.text
	.globl	_PyEval_EvalFrameDefault
	.type	_PyEval_EvalFrameDefault, @function
_PyEval_EvalFrameDefault:
	.cfi_startproc
	push	%rbx
	.cfi_def_cfa_offset 16
	.cfi_offset rbx, -16
	sub	$32, %rsp
	.cfi_def_cfa_offset 48
	test	%edi, %edi
	je	.Lcold0                 /* rel32: into .cold */
	cmp	$1, %edi
	je	.Lcold1                 /* into .cold.1 */
	cmp	$2, %edi
	je	.Lcold1_mid             /* into .cold.1, past its start */
	cmp	$3, %edi
	je	plain_function          /* a function entry: not the evaluator */
	call	called_fragment         /* a call, not a jump */
.Lback:
	add	$32, %rsp
	.cfi_def_cfa_offset 16
	pop	%rbx
	.cfi_def_cfa_offset 8
	jmp	exported_helper         /* tail jump to an exported function */
	.cfi_endproc
	.size	_PyEval_EvalFrameDefault, .-_PyEval_EvalFrameDefault

	.globl	exported_helper
	.type	exported_helper, @function
exported_helper:
	.cfi_startproc
	ret
	.cfi_endproc
	.size	exported_helper, .-exported_helper

	.type	plain_function, @function
plain_function:
	.cfi_startproc
	xor	%eax, %eax
	ret
	.cfi_endproc
	.size	plain_function, .-plain_function

	.section .text.unlikely,"ax",@progbits
	.type	_PyEval_EvalFrameDefault.cold, @function
_PyEval_EvalFrameDefault.cold:
	.cfi_startproc
	.cfi_def_cfa_offset 48
	.cfi_offset rbx, -16
.Lcold0:
	mov	$7, %eax
	jmp	.Lback
	.cfi_endproc
	.size	_PyEval_EvalFrameDefault.cold, .-_PyEval_EvalFrameDefault.cold

	.type	called_fragment, @function
called_fragment:
	.cfi_startproc
	.cfi_def_cfa_offset 48
	ret
	.cfi_endproc
	.size	called_fragment, .-called_fragment

	.type	_PyEval_EvalFrameDefault.cold.1, @function
_PyEval_EvalFrameDefault.cold.1:
	.cfi_startproc
	.cfi_def_cfa_offset 48
	.cfi_offset rbx, -16
.Lcold1:
	mov	$8, %eax
	nop
.Lcold1_mid:
	mov	$9, %eax
	jmp	.Lback
	.cfi_endproc
	.size	_PyEval_EvalFrameDefault.cold.1, .-_PyEval_EvalFrameDefault.cold.1

	.text
	.globl	main
	.type	main, @function
main:
	.cfi_startproc
	sub	$8, %rsp
	.cfi_def_cfa_offset 16
	mov	$5, %edi
	call	_PyEval_EvalFrameDefault
	xor	%eax, %eax
	add	$8, %rsp
	.cfi_def_cfa_offset 8
	ret
	.cfi_endproc
	.size	main, .-main
	.section .note.GNU-stack,"",@progbits
