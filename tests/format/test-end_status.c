#include "fmt.h"

#include <stdlib.h>

/* The END record's exit status reaches `cutrace summary` (text and JSON) as written; a file of
 * format 1.0, whose writers wrote 0 for every exit, reads as an exit whose status was not
 * recorded, never as "exit status 0". */
static int fmt_exit_trace(const char *path, int32_t status)
{
    ct_enc e;
    ct_writer *w = fmt_writer_enc(path, &e);
    ASSERT_INT(ct_enc_string(&e, 1000, 1, "cuMemAlloc_v2", 13), ==, 0);
    ct_rec_thread th = {77, 0, 0};
    ASSERT_INT(ct_enc_thread(&e, 1000, &th), ==, 0);
    ct_rec_api a = {.start = 1500, .function = 1, .corr = 5};
    ASSERT_INT(ct_enc_api(&e, 2000, &a), ==, 0);
    ct_rec_end end = {CT_END_EXIT, status, 4, 0};
    ASSERT_INT(ct_enc_end(&e, 10000, &end), ==, 0);
    ct_chunk_info ci = {.tid = 77, .low_water = 1000};
    ASSERT_INT(ct_writer_chunk(w, &e, &ci, 1), ==, 0);
    ASSERT_INT(ct_writer_close(w), ==, 0);
    return 0;
}

/* `cutrace summary [--json] path` contains want. */
static int fmt_summary_says(char *path, int json, const char *want)
{
    char bin[4096];
    char *argv[] = {(char *)fmt_cutrace(bin), "summary", json ? "--json" : path, path, NULL};
    if (!json)
        argv[3] = NULL;
    ctt_proc p;
    ASSERT_INT(ctt_run(&p, argv, NULL, 30), ==, 0);
    ASSERT_INT(p.code, ==, 0);
    ASSERT_CONTAINS(p.out, want);
    ctt_proc_free(&p);
    return 0;
}

TEST_IMPL(end_exit_status_and_old_files)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/exit.ct", ctt_tmpdir());
    if (fmt_exit_trace(path, 3) || fmt_summary_says(path, 0, ", ended: exit status 3, ") ||
        fmt_summary_says(path, 1, "\"end\": \"exit\",\n") ||
        fmt_summary_says(path, 1, "\"end_code\": 3,\n"))
        return 1;
    snprintf(path, sizeof path, "%s/old.ct", ctt_tmpdir());
    if (fmt_exit_trace(path, 0))
        return 1;
    ASSERT_INT(fmt_set_version(path, 1, 0), ==, 0);
    if (fmt_summary_says(path, 0, ", ended: exit, status not recorded, ") ||
        fmt_summary_says(path, 1, "\"end\": \"exit\",\n"))
        return 1;
    char bin[4096];
    char *argv[] = {(char *)fmt_cutrace(bin), "summary", "--json", path, NULL};
    ctt_proc p;
    ASSERT_INT(ctt_run(&p, argv, NULL, 30), ==, 0);
    ASSERT(strstr(p.out, "\"end_code\"") == NULL); /* not known: not given */
    ctt_proc_free(&p);
    return 0;
}
