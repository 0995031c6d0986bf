#include "fmt.h"

#include <unistd.h>

/* One record of every type, with values at the edges of their fields, written in two chunks
 * (compressed, then stored raw) and read back: re-encoding what was read must give the same
 * bytes as encoding what was written, and a few fields are checked by value. */
static size_t fmt_all_types(ct_rec *v, char *longtext, size_t longlen)
{
    static const uint32_t frames[] = {1, 1, 7};
    static const ct_rec_device dev = {
        .device = 1, .name = 1, .uuid = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 255},
        .cc_major = 9, .cc_minor = 0, .sm_count = 132, .clock_khz = 1980000,
        .mem_clock_khz = 2619000, .mem_bus_bits = 5120, .mem_bytes = 85520809984ull,
        .l2_bytes = 52428800, .max_threads_per_sm = 2048, .regs_per_sm = 65536,
        .smem_per_sm = 233472, .warp_size = 32, .async_engines = 3, .concurrent_kernels = 1,
        .link_kind = CT_LINK_PCIE, .link_gen = 5, .link_width = 16, .pci_domain = 0,
        .pci_bus = 0x1b, .pci_device = 0};
    size_t n = 0;
    uint64_t ts = 1000000;
#define ADD(T) (memset(&v[n], 0, sizeof v[n]), v[n].type = (T), v[n].ts = (ts += 777), &v[n++].u)
    ADD(CT_REC_STRING)->string = (ct_rec_string){1, 16, "cudaLaunchKernel"};
    memset(longtext, 'k', longlen);
    ADD(CT_REC_STRING)->string = (ct_rec_string){2, (uint32_t)longlen, longtext};
    ADD(CT_REC_STRING)->string = (ct_rec_string){3, 9, "libfoo.so"};
    ADD(CT_REC_FRAME)->frame = (ct_rec_frame){1, 2, 3, 0x1234, CT_FRAME_PYTHON, 42};
    ADD(CT_REC_STACK)->stack = (ct_rec_stack){1, 3, frames};
    ADD(CT_REC_THREAD)->thread = (ct_rec_thread){4242, 1, CT_THREAD_TRACER};
    ADD(CT_REC_DEVICE)->device = dev;
    ADD(CT_REC_STREAM)->stream = (ct_rec_stream){CT_STREAM_CREATE, 0x7f0000001000ull,
                                                 0x5500000000ull, 1, 1, -3};
    ADD(CT_REC_API)->api = (ct_rec_api){ts - 300, 1, 700, 10, 9, CT_API_DRIVER, 1};
    v[n - 1].u.api.start = v[n - 1].ts - 300;
    ADD(CT_REC_LAUNCH)->launch = (ct_rec_launch){10, 2, 1, {65535, 2, 3}, {1024, 1, 1}, 49152,
                                                 0x7f0000001000ull, 0x5500000000ull, 1, 0};
    ADD(CT_REC_COPY)->copy = (ct_rec_copy){11, CT_COPY_MEMCPY, CT_DIR_HTOD, 1ull << 33,
                                           CT_MEMKIND_PAGEABLE, CT_MEMKIND_DEVICE,
                                           CT_COPY_ASYNC, 0x7f0000001000ull, 1, 0};
    ADD(CT_REC_GPU)->gpu = (ct_rec_gpu){0, 10, 1, CT_GPU_KERNEL, 0x7f0000001000ull,
                                         CT_GPU_END_BOUND};
    v[n - 1].u.gpu.start = v[n - 1].ts - 5000;
    ADD(CT_REC_MEM)->mem = (ct_rec_mem){CT_MEM_ALLOC, CT_ALLOC_POOL, 12, UINT64_MAX - 4095,
                                        1ull << 40, 1, 2, 1, 0x7f0000001000ull, 0};
    ADD(CT_REC_MEM)->mem = (ct_rec_mem){CT_MEM_FREE, CT_ALLOC_VMM_PHYSICAL, 5, 0, 2u << 20, 0, 0,
                                        0, 0, 0xabcdef};
    ADD(CT_REC_SYNC)->sync = (ct_rec_sync){0, 13, CT_SYNC_EVENT, 0x600000ull};
    v[n - 1].u.sync.start = v[n - 1].ts - 123456;
    ADD(CT_REC_CPU)->cpu = (ct_rec_cpu){4242, 5000000000ull, 1};
    ADD(CT_REC_LOSS)->loss = (ct_rec_loss){CT_LOSS_GPU_TIMING, 17, 4242, 0x123456789ull,
                                           CT_GPU_LOST_NO_TIME};
    ADD(CT_REC_GEMM)->gemm = (ct_rec_gemm){14, 1ull << 40, 3, UINT64_MAX, 0xffffffffull, 2, 2,
                                           0, 0, 77, 1, 2, CT_GEMM_UNREAD};
    static const uint8_t future[] = {1, 2, 3, 0x80, 0x01};
    ADD(CT_REC_UNKNOWN)->unknown = (ct_rec_unknown){99, sizeof future, future};
    ADD(CT_REC_SHLIB)->shlib = (ct_rec_shlib){CT_SHLIB_CUBLASLT, 3, UINT32_MAX};
    ADD(CT_REC_PYTHON)->python = (ct_rec_python){0x030d00f0, 3, 0, UINT32_MAX, 7};
    ADD(CT_REC_NVTX_RANGE)->nvtx_range = (ct_rec_nvtx_range){
        0, 4242, 4243, 3, 1, UINT32_MAX, 7, 0xff00ff00u, 3, 0x400921fb54442d18ull,
        CT_NVTX_START_END, 0x100000007ull, 0, CT_NVTX_COLOR};
    v[n - 1].u.nvtx_range.start = v[n - 1].ts - 999999; /* longer than any other interval */
    ADD(CT_REC_NVTX_MARK)->nvtx_mark = (ct_rec_nvtx_mark){0, 3, 3, UINT32_MAX, 0, 0, 4242,
                                                          CT_NVTX_THREAD_NAME};
    ADD(CT_REC_LOSS)->loss = (ct_rec_loss){CT_LOSS_NVTX_NAMES, 9000, 0, 0, 0};
    ADD(CT_REC_NVTX_BEGIN)->nvtx_begin = (ct_rec_nvtx_begin){4242, CT_NVTX_START_END,
                                                             0x100000007ull, 3, 0, UINT32_MAX, 9};
    ADD(CT_REC_CAPTURE)->capture = (ct_rec_capture){CT_CAPTURE_STOP, CT_CAPTURE_END};
    /* a node's record, every field set (a capture's leaves the node's 0) */
    ADD(CT_REC_GRAPH)->graph = (ct_rec_graph){1ull << 40 | 12, CT_GRAPH_NODE,
                                              2 /* relaxed */, UINT64_MAX,
                                              0x7f0000001000ull, 0x55aa00000040ull, 900,
                                              0x7f0000abc000ull, CT_GNODE_MEMCPY, 3, 4,
                                              {UINT32_MAX, 2, 3}, {1024, 1, 1}, 49152,
                                              1ull << 33, CT_DIR_HTOD, CT_MEMKIND_PINNED,
                                              CT_MEMKIND_DEVICE, 65536};
    ADD(CT_REC_PROC)->proc = (ct_rec_proc){UINT32_MAX, 7, 8, CT_PROC_FORKED, 1ull << 62, 3, 4};
    ADD(CT_REC_PROC_SAMPLE)->proc_sample = (ct_rec_proc_sample){
        9, 10, UINT64_MAX, 11, 12, 13, 'D', 14, 15, 16, 17, 18, 19, 1ull << 40, 21,
        CT_PS_NO_SCHED, 1ull << 50};
    ADD(CT_REC_HOST_SAMPLE)->host_sample = (ct_rec_host_sample){
        256, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, UINT64_MAX,
        CT_HS_NO_PSI | CT_HS_NO_CG_USAGE, 255, 16, 17, UINT32_MAX, 18, 1ull << 45};
    ADD(CT_REC_END)->end = (ct_rec_end){CT_END_SIGNAL, -15, 20, 17};
#undef ADD
    return n;
}

TEST_IMPL(roundtrip_every_record_type)
{
    static char longtext[300];
    ct_rec in[32];
    size_t n = fmt_all_types(in, longtext, sizeof longtext);
    ASSERT_INT(n, ==, 31);

    char path[4096];
    snprintf(path, sizeof path, "%s/all.ct", ctt_tmpdir());
    ct_writer *w = fmt_writer(path);
    static uint8_t buf[1 << 16];
    ct_enc e;
    ct_enc_init(&e, buf, sizeof buf);
    for (size_t i = 0; i < n; i++) {
        ASSERT_INT(ct_enc_rec(&e, &in[i]), ==, 0);
        if (i == 9) { /* first chunk compressed, the rest stored raw */
            ct_chunk_info ci = {.tid = 4242, .low_water = in[0].ts};
            ASSERT_INT(ct_writer_chunk(w, &e, &ci, 1), ==, 0);
            ASSERT_INT(ci.nrecords, ==, 10);
            ASSERT_UINT(ci.t_min, ==, in[0].ts);
            ASSERT_UINT(ci.t_max, ==, in[9].ts);
            ASSERT_INT(ci.flags & CT_CHUNK_RAW, ==, 0);
        }
    }
    ct_chunk_info ci = {.tid = 4242, .lost = 3, .low_water = in[10].ts};
    ASSERT_INT(ct_writer_chunk(w, &e, &ci, 0), ==, 0);
    ASSERT_INT(ci.flags & CT_CHUNK_RAW, ==, CT_CHUNK_RAW);
    ASSERT_INT(ct_writer_close(w), ==, 0);

    fmt_log l;
    ASSERT_INT(fmt_read1(&l, path), ==, 0);
    ASSERT_INT(l.rc, ==, 0);
    ASSERT_INT(l.n, ==, n);

    /* Byte-identical re-encoding, from the same delta state. */
    static uint8_t b1[1 << 16], b2[1 << 16];
    ct_enc e1, e2;
    ct_enc_init(&e1, b1, sizeof b1);
    ct_enc_init(&e2, b2, sizeof b2);
    for (size_t i = 0; i < n; i++) {
        ASSERT_INT(l.recs[i].type, ==, in[i].type);
        ASSERT_UINT(l.recs[i].ts, ==, in[i].ts);
        ASSERT_UINT(l.recs[i].tid, ==, 4242);
        ASSERT_INT(ct_enc_rec(&e1, &in[i]), ==, 0);
        ASSERT_INT(ct_enc_rec(&e2, &l.recs[i]), ==, 0);
        ASSERT_UINT(e1.len, ==, e2.len);
        if (memcmp(b1, b2, e1.len) != 0) {
            ctt_fail_at(__FILE__, __LINE__, "record %zu (%s) differs after reading", i,
                            ct_rec_type_name(in[i].type));
            return 1;
        }
    }
    /* Spot checks of values at the edges. */
    ASSERT_INT(l.recs[1].u.string.len, ==, 300);
    ASSERT_STR(ct_reader_string(l.r, 0, 3), "libfoo.so");
    ASSERT_INT(l.recs[4].u.stack.nframes, ==, 3);
    ASSERT_UINT(l.recs[4].u.stack.frames[2], ==, 7);
    ASSERT_UINT(l.recs[6].u.device.uuid[15], ==, 255);
    ASSERT_UINT(l.recs[6].u.device.mem_bytes, ==, 85520809984ull);
    ASSERT_INT(l.recs[7].u.stream.priority, ==, -3);
    ASSERT_UINT(l.recs[8].u.api.parent, ==, 9);
    ASSERT_UINT(l.recs[8].u.api.start, ==, in[8].ts - 300);
    ASSERT_UINT(l.recs[8].u.api.stack, ==, 1);
    ASSERT_UINT(l.recs[9].u.launch.grid[0], ==, 65535);
    ASSERT_UINT(l.recs[10].u.copy.bytes, ==, 1ull << 33);
    ASSERT_UINT(l.recs[11].u.gpu.start, ==, in[11].ts - 5000);
    ASSERT_UINT(l.recs[12].u.mem.address, ==, UINT64_MAX - 4095);
    ASSERT_UINT(l.recs[13].u.mem.handle, ==, 0xabcdef);
    ASSERT_UINT(l.recs[14].ts - l.recs[14].u.sync.start, ==, 123456);
    ASSERT_UINT(l.recs[17].u.gemm.m, ==, 1ull << 40);
    ASSERT_UINT(l.recs[17].u.gemm.k, ==, UINT64_MAX);
    ASSERT_UINT(l.recs[17].u.gemm.compute_type, ==, 77);
    ASSERT_UINT(l.recs[17].u.gemm.trans_b, ==, 2);
    ASSERT_UINT(l.recs[17].u.gemm.flags, ==, CT_GEMM_UNREAD);
    ASSERT_UINT(l.recs[18].u.unknown.type, ==, 99);
    ASSERT_UINT(l.recs[19].u.shlib.kind, ==, CT_SHLIB_CUBLASLT);
    ASSERT_UINT(l.recs[19].u.shlib.path, ==, 3);
    ASSERT_UINT(l.recs[19].u.shlib.build_id, ==, UINT32_MAX);
    ASSERT_UINT(l.recs[20].u.python.version, ==, 0x030d00f0);
    ASSERT_UINT(l.recs[20].u.python.program, ==, 3);
    ASSERT_UINT(l.recs[20].u.python.prefix, ==, 0);
    ASSERT_UINT(l.recs[20].u.python.exec_prefix, ==, UINT32_MAX);
    ASSERT_UINT(l.recs[20].u.python.path, ==, 7);
    const ct_rec_nvtx_range *g = &l.recs[21].u.nvtx_range;
    ASSERT_UINT(l.recs[21].ts - g->start, ==, 999999);
    ASSERT_UINT(g->start_tid, ==, 4242);
    ASSERT_UINT(g->end_tid, ==, 4243);
    ASSERT_UINT(g->group, ==, UINT32_MAX);
    ASSERT_UINT(g->color, ==, 0xff00ff00u);
    ASSERT_UINT(g->payload, ==, 0x400921fb54442d18ull);
    ASSERT_UINT(g->kind, ==, CT_NVTX_START_END);
    ASSERT_UINT(g->id, ==, 0x100000007ull);
    ASSERT_UINT(g->flags, ==, CT_NVTX_COLOR);
    ASSERT_UINT(l.recs[22].u.nvtx_mark.category, ==, UINT32_MAX);
    ASSERT_UINT(l.recs[22].u.nvtx_mark.payload, ==, 4242);
    ASSERT_UINT(l.recs[22].u.nvtx_mark.flags, ==, CT_NVTX_THREAD_NAME);
    const ct_rec_nvtx_begin *b = &l.recs[24].u.nvtx_begin;
    ASSERT_UINT(b->tid, ==, 4242);
    ASSERT_UINT(b->kind, ==, CT_NVTX_START_END);
    ASSERT_UINT(b->id, ==, 0x100000007ull);
    ASSERT_UINT(b->domain, ==, 3);
    ASSERT_UINT(b->name, ==, 0);
    ASSERT_UINT(b->group, ==, UINT32_MAX);
    ASSERT_UINT(b->depth, ==, 9);
    ASSERT_UINT(l.recs[25].type, ==, CT_REC_CAPTURE);
    ASSERT_UINT(l.recs[25].u.capture.op, ==, CT_CAPTURE_STOP);
    ASSERT_UINT(l.recs[25].u.capture.why, ==, CT_CAPTURE_END);
    const ct_rec_graph *gr = &l.recs[26].u.graph;
    ASSERT_UINT(l.recs[26].type, ==, CT_REC_GRAPH);
    ASSERT_UINT(gr->corr, ==, 1ull << 40 | 12);
    ASSERT_UINT(gr->op, ==, CT_GRAPH_NODE);
    ASSERT_UINT(gr->mode, ==, 2 /* relaxed */);
    ASSERT_UINT(gr->graph, ==, UINT64_MAX);
    ASSERT_UINT(gr->exec, ==, 0x7f0000001000ull);
    ASSERT_UINT(gr->stream, ==, 0x55aa00000040ull);
    ASSERT_UINT(gr->result, ==, 900);
    ASSERT_UINT(gr->node, ==, 0x7f0000abc000ull);
    ASSERT_UINT(gr->node_type, ==, CT_GNODE_MEMCPY);
    ASSERT_UINT(gr->function, ==, 3);
    ASSERT_UINT(gr->symbol, ==, 4);
    ASSERT_UINT(gr->grid[0], ==, UINT32_MAX);
    ASSERT_UINT(gr->grid[2], ==, 3);
    ASSERT_UINT(gr->block[0], ==, 1024);
    ASSERT_UINT(gr->shared_bytes, ==, 49152);
    ASSERT_UINT(gr->bytes, ==, 1ull << 33);
    ASSERT_UINT(gr->dir, ==, CT_DIR_HTOD);
    ASSERT_UINT(gr->src_kind, ==, CT_MEMKIND_PINNED);
    ASSERT_UINT(gr->dst_kind, ==, CT_MEMKIND_DEVICE);
    ASSERT_UINT(gr->nodes, ==, 65536);
    const ct_rec_proc *pr = &l.recs[27].u.proc;
    ASSERT_UINT(l.recs[27].type, ==, CT_REC_PROC);
    ASSERT_UINT(pr->pid, ==, UINT32_MAX);
    ASSERT_UINT(pr->root, ==, 8);
    ASSERT_UINT(pr->relation, ==, CT_PROC_FORKED);
    ASSERT_UINT(pr->start, ==, 1ull << 62);
    ASSERT_UINT(pr->cmdline, ==, 4);
    const ct_rec_proc_sample *ps = &l.recs[28].u.proc_sample;
    ASSERT_UINT(l.recs[28].type, ==, CT_REC_PROC_SAMPLE);
    ASSERT_UINT(ps->tid, ==, 10);
    ASSERT_UINT(ps->user_ns, ==, UINT64_MAX);
    ASSERT_UINT(ps->wait_ns, ==, 13);
    ASSERT_UINT(ps->state, ==, 'D');
    ASSERT_UINT(ps->blocked, ==, 16);
    ASSERT_UINT(ps->read_bytes, ==, 19);
    ASSERT_UINT(ps->write_bytes, ==, 1ull << 40);
    ASSERT_UINT(ps->majflt, ==, 21);
    ASSERT_UINT(ps->flags, ==, CT_PS_NO_SCHED);
    ASSERT_UINT(ps->children_ns, ==, 1ull << 50);
    const ct_rec_host_sample *hs = &l.recs[29].u.host_sample;
    ASSERT_UINT(l.recs[29].type, ==, CT_REC_HOST_SAMPLE);
    ASSERT_UINT(hs->cpus, ==, 256);
    ASSERT_UINT(hs->steal_ns, ==, 4);
    ASSERT_UINT(hs->blocked, ==, 6);
    ASSERT_UINT(hs->mem_available, ==, 8);
    ASSERT_UINT(hs->majflt, ==, 11);
    ASSERT_UINT(hs->psi_mem_full_ns, ==, UINT64_MAX);
    ASSERT_UINT(hs->flags, ==, CT_HS_NO_PSI | CT_HS_NO_CG_USAGE);
    ASSERT_UINT(hs->job_cpus, ==, 255);
    ASSERT_UINT(hs->job_iowait_ns, ==, 17);
    ASSERT_UINT(hs->quota_mcpu, ==, UINT32_MAX);
    ASSERT_UINT(hs->throttled_ns, ==, 1ull << 45);
    ASSERT_INT(l.recs[30].u.end.code, ==, -15);
    ct_rec_frame fr;
    ASSERT_INT(ct_reader_frame(l.r, 0, 1, &fr), ==, 0);
    ASSERT_UINT(fr.offset, ==, 0x1234);

    const ct_stats *st = ct_reader_stats(l.r, 0);
    ASSERT_INT(st->chunks, ==, 2);
    ASSERT_INT(st->records, ==, 31);
    ASSERT_INT(st->lost, ==, 3 + 17); /* chunk count plus the LOSS record */
    ASSERT_INT(st->nvtx_unnamed, ==, 9000); /* LOSS reason 5: named by group, not lost */
    ASSERT_UINT(st->max_span, ==, 123456); /* the SYNC's: an NVTX range does not count */
    ASSERT_INT(st->unknown_records, ==, 1);
    ASSERT_INT(st->complete, ==, 1);
    ASSERT_INT(l.nwarn, ==, 1); /* the losses, reported once */
    ASSERT_CONTAINS(l.warn, "20 records were lost");

    const ct_header *h = ct_reader_header(l.r, 0);
    ASSERT_INT(h->major, ==, CT_FORMAT_MAJOR);
    ASSERT_STR(h->tracer_version, "test");
    ASSERT_STR(h->tracer_options, "FMT=1");
    ASSERT_UINT(h->pid, ==, (uint32_t)getpid());
    fmt_free(&l);
    return 0;
}
