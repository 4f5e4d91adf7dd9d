/* assets.S: files embedded in the binary (the flame graph page template). */
	.section .rodata
	.global tb_flamegraph_html
	.global tb_flamegraph_html_end
tb_flamegraph_html:
	.incbin "user/assets/flamegraph.html"
tb_flamegraph_html_end:
	.byte 0
	.section .note.GNU-stack,"",@progbits
