#include "fmt.h"

#include <stdlib.h>

/* `cutrace dump` prints the header, each chunk and each record as one line, resolves strings,
 * warns on stderr about damage it recovered from, and exits 2 on usage errors and 3 when the
 * input cannot be read. */
static int fmt_small_trace(const char *path)
{
    ct_enc e;
    ct_writer *w = fmt_writer_enc(path, &e);
    ASSERT_INT(ct_enc_string(&e, 1000, 1, "cudaLaunchKernel", 16), ==, 0);
    ASSERT_INT(ct_enc_string(&e, 1000, 2, "void gemm<float>(float*, \"x\")", 29), ==, 0);
    ct_rec_thread th = {77, 0, 0};
    ASSERT_INT(ct_enc_thread(&e, 1000, &th), ==, 0);
    ct_rec_api a = {.start = 1500, .function = 1, .corr = 5, .parent = 0};
    ASSERT_INT(ct_enc_api(&e, 2000, &a), ==, 0);
    ct_rec_launch ln = {.corr = 5, .function = 2, .grid = {4, 1, 1}, .block = {256, 1, 1},
                        .stream = 0x10, .device = 0};
    ASSERT_INT(ct_enc_launch(&e, 2000, &ln), ==, 0);
    ct_rec_gpu g = {.start = 2100, .corr = 5, .kind = CT_GPU_KERNEL, .stream = 0x10};
    ASSERT_INT(ct_enc_gpu(&e, 9100, &g), ==, 0);
    ct_rec_end end = {CT_END_EXIT, 0, 6, 0};
    ASSERT_INT(ct_enc_end(&e, 10000, &end), ==, 0);
    ct_chunk_info ci = {.tid = 77, .low_water = 1000};
    ASSERT_INT(ct_writer_chunk(w, &e, &ci, 1), ==, 0);
    ASSERT_INT(ct_writer_close(w), ==, 0);
    return 0;
}

TEST_IMPL(dump_prints_records_and_exit_codes)
{
    char bin[4096], path[4096], path2[4096];
    fmt_cutrace(bin);
    snprintf(path, sizeof path, "%s/t.ct", ctt_tmpdir());
    snprintf(path2, sizeof path2, "%s/u.ct", ctt_tmpdir());
    if (fmt_small_trace(path) || fmt_small_trace(path2))
        return 1;

    ctt_proc p;
    char *argv[] = {bin, "dump", path, NULL};
    ASSERT_INT(ctt_run(&p, argv, NULL, 30), ==, 0);
    ASSERT_INT(p.code, ==, 0);
    ASSERT_STR(p.err, "");
    ASSERT_CONTAINS(p.out, "header file=0 path=\"");
    char fmtv[32];
    snprintf(fmtv, sizeof fmtv, " format=%d.%d\n", CT_FORMAT_MAJOR, CT_FORMAT_MINOR);
    ASSERT_CONTAINS(p.out, fmtv);
    ASSERT_CONTAINS(p.out, "header tracer=\"test\" options=\"FMT=1\"\n");
    ASSERT_CONTAINS(p.out, "\nchunk seq=0 offset=");
    ASSERT_CONTAINS(p.out, " tid=77 records=7 lost=0 t_min=1000 t_max=10000 low_water=1000 ");
    ASSERT_CONTAINS(p.out, "\n1000 string tid=77 id=1 text=\"cudaLaunchKernel\"\n");
    ASSERT_CONTAINS(p.out, "\n1000 thread tid=77 thread=77 name=- flags=0\n");
    ASSERT_CONTAINS(p.out, "\n2000 api tid=77 fn=\"cudaLaunchKernel\"#1 start=1500 dur=500 "
                           "result=0 corr=5 parent=0 runtime\n");
    ASSERT_CONTAINS(p.out, "\n2000 launch tid=77 corr=5 kernel=\"void gemm<float>(float*, "
                           "\\\"x\\\")\"#2 symbol=- grid=4,1,1 block=256,1,1 shared=0 "
                           "stream=0x10 context=0x0 device=0 flags=0\n");
    ASSERT_CONTAINS(p.out, "\n9100 gpu tid=77 corr=5 start=2100 dur=7000 device=0 kind=1 "
                           "stream=0x10 flags=0\n");
    ASSERT_CONTAINS(p.out, "\n10000 end tid=77 how=1 code=0 records=6 lost=0\n");
    /* One line per header field group (6, plus one per job variable), chunk and record. */
    size_t lines = 0;
    for (const char *c = p.out; *c; c = strchr(c, '\n') + 1)
        lines += strncmp(c, "header env ", 11) != 0;
    ASSERT_UINT(lines, ==, 6 + 1 + 7);
    ctt_proc_free(&p);

    /* Two files merged in time order: no chunk lines, records tagged with their file. */
    char *argv2[] = {bin, "dump", "--time-order", path, path2, NULL};
    ASSERT_INT(ctt_run(&p, argv2, NULL, 30), ==, 0);
    ASSERT_INT(p.code, ==, 0);
    ASSERT_CONTAINS(p.out, "header file=1 path=");
    ASSERT_CONTAINS(p.out, "\n9100 gpu file=0 tid=77 corr=5");
    ASSERT_CONTAINS(p.out, "\n9100 gpu file=1 tid=77 corr=5");
    ASSERT(strstr(p.out, "chunk seq=") == NULL);
    ctt_proc_free(&p);

    /* A cut file: what is left is printed, the damage is a warning, the exit status 0. */
    size_t len;
    char *data = ctt_read_file(path, &len);
    ASSERT(data != NULL);
    free(data);
    ASSERT_INT(fmt_truncate(path2, len - 3), ==, 0);
    char *argv3[] = {bin, "dump", path2, NULL};
    ASSERT_INT(ctt_run(&p, argv3, NULL, 30), ==, 0);
    ASSERT_INT(p.code, ==, 0);
    ASSERT_CONTAINS(p.err, "cutrace: warning: ");
    ASSERT_CONTAINS(p.err, "incomplete chunk at the end");
    ASSERT_CONTAINS(p.out, "header host=");
    ctt_proc_free(&p);

    char *argv4[] = {bin, "dump", NULL};
    ASSERT_INT(ctt_run(&p, argv4, NULL, 30), ==, 0);
    ASSERT_INT(p.code, ==, 2);
    ASSERT_CONTAINS(p.err, "no trace file given");
    ctt_proc_free(&p);

    char *argv5[] = {bin, "dump", "--bogus", path, NULL};
    ASSERT_INT(ctt_run(&p, argv5, NULL, 30), ==, 0);
    ASSERT_INT(p.code, ==, 2);
    ctt_proc_free(&p);

    char missing[4200];
    snprintf(missing, sizeof missing, "%s/none.ct", ctt_tmpdir());
    char *argv6[] = {bin, "dump", missing, NULL};
    ASSERT_INT(ctt_run(&p, argv6, NULL, 30), ==, 0);
    ASSERT_INT(p.code, ==, 3);
    /* PATH arguments are expanded as for the other commands, which say what they expected */
    ASSERT_CONTAINS(p.err, "cutrace dump: error: ");
    ASSERT_CONTAINS(p.err, "none.ct: No such file or directory (expected a trace file or a "
                           "directory of traces)");
    ASSERT_STR(p.out, "");
    ctt_proc_free(&p);
    return 0;
}
