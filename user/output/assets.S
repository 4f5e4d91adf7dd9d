/* assets.S: files embedded in the binary (the page templates). */
	.section .rodata
	.global tb_flamegraph_html
	.global tb_flamegraph_html_end
tb_flamegraph_html:
	.incbin "user/output/assets/flamegraph.html"
tb_flamegraph_html_end:
	.byte 0
	.global tb_heatmap_html
	.global tb_heatmap_html_end
tb_heatmap_html:
	.incbin "user/output/assets/heatmap.html"
tb_heatmap_html_end:
	.byte 0
	.section .note.GNU-stack,"",@progbits
