/* The report page's sources (analyzer/output/html/), compiled into cutrace as zero-terminated strings
 * for `cutrace report` (cmd_report.c). analyzer/build.mk rebuilds this object when one of them
 * changes (the assembler's .incbin is not seen by gcc -MMD). Paths are from the top directory,
 * where make runs; the script is the build's join of the parts in html/js (CTA_HTML_JS, its path). */
    .section .rodata
    .global cta_html_shell, cta_html_css, cta_html_js
    .type cta_html_shell, @object
    .type cta_html_css, @object
    .type cta_html_js, @object
cta_html_shell:
    .incbin "analyzer/output/html/shell.html"
    .byte 0
cta_html_css:
    .incbin "analyzer/output/html/report.css"
    .byte 0
cta_html_js:
    .incbin CTA_HTML_JS
    .byte 0
    .section .note.GNU-stack, "", @progbits
