/* The records, described once (FORMAT.md section 4), as Darshan describes its counters: the
 * table of record types at the end (CT__REC_TABLE) and an X-macro list of fields per
 * fixed-layout record type, from which the enum of types, the record structs, ct_rec's union, the
 * encoders and the decoder, the type names and the dispatch are generated (cttrace.h, ct_enc.c,
 * ct_decode.c, ct_defs.c, ct_common.c), which `cutrace dump` (analyzer/output/cta_dump.c) expands and
 * tests/format/test-format_tables.c checks against FORMAT.md's tables. STRING and STACK (a count,
 * then that many items) are written out by hand.
 *
 * A field list FIELDS(F) calls, in wire order,
 *   F(name, kind, member, unit, dump, style, at)
 * name: the field's name in FORMAT.md; member: the record struct's member (its C type follows
 * from the kind), or an array member's element (CT_EL); the comment after it says what it holds;
 * unit: "" or the unit FORMAT.md states (ns, bytes, kHz, bits, lanes). dump, style, at: how
 * `cutrace dump` shows it (analyzer/output/cta_dump.c): under the key dump, in the style
 *   u decimal, d signed, x hex, x04 4-digit hex, str a string id, hex16 raw bytes in hex,
 *   op<TYPE> the op's name, chr a character
 *   (a thread state letter, 0 shown as -), relation a PROC relation's name, span
 *   "start=<member> <dump>=<ts - member>", side "driver",
 *   "library" or "runtime" from the API flags, none not shown (the API record's stack id), and the
 *   continuations of the previous field's value (no key): comma ",%u", dot ".%u", colon02x ":%02x"
 * at the field's place on the dump line: fields print by increasing at, equal ones in wire order
 * (the line was laid out for reading before the wire order was fixed). kind, the wire coding:
 *   u32     uv holding a 32-bit value (a larger value makes the record malformed)
 *   uv      uv holding a 64-bit value
 *   sv32    sv holding a signed 32-bit value
 *   dur     uv: the record's ts minus member (an interval's start), 0 if start > ts
 *   since   uv: as dur, but not counted in the chunk's max_span (an NVTX range, delivered at its
 *           end, may have begun at any time before: a run-long range must not make a reader
 *           hold back every record)
 *   dcorr   sv: member (a correlation id) minus the previous one of the chunk
 *   parent  uv: 0 if member is 0, else the zigzag of corr - member (the record's corr, coded
 *           before it)
 *   uuid16  16 raw bytes (an older writer may stop before them: all read as 0)
 * Fields are only ever appended (FORMAT.md section 4): a new one goes at the end of its list.
 * String, frame and stack references are ids (uint32_t, 0 = none) resolved with
 * ct_reader_string / ct_reader_frame / ct_reader_stack. Interval records are ordered by their
 * end (ct_rec.ts); `start` is the beginning. */
#ifndef CT_RECORDS_H
#define CT_RECORDS_H

/* An element of an array member: CT_EL(grid, 0, 3) is grid[0] of a member grid[3]. */
#define CT_EL(array, i, n) array[i]

/* A field's declaration in its record's struct (cttrace.h): the C type its kind holds and the
 * member, or at element 0 of an array member the array (the other elements declare nothing).
 * The member is pasted before it can expand: CT__ELEM_<name> is an unknown word, which leaves
 * CT__PICK's choice on CT__ONE, but CT__ELEM_CT_EL(...) expands to three arguments, which moves
 * it to CT__ELEM_<i>. */
#define CT__DECL_FIELD(name, kind, member, unit, dump, style, at)                           \
    CT__DECL_(CT__ELEM_##member, CT__ONE, CT__CTYPE_##kind, member CT__DIM_##kind)
#define CT__DECL_(...) CT__PICK(__VA_ARGS__)
#define CT__PICK(probe, decl, ...) decl(__VA_ARGS__)
#define CT__ONE(ctype, member) ctype member;
#define CT__ELEM_CT_EL(array, i, n) ~, CT__ELEM_##i, array[n]
#define CT__ELEM_0(array, one, ctype, member) ctype array;
#define CT__ELEM_1(...)
#define CT__ELEM_2(...)
#define CT__CTYPE_u32 uint32_t
#define CT__CTYPE_uv uint64_t
#define CT__CTYPE_sv32 int32_t
#define CT__CTYPE_dur uint64_t
#define CT__CTYPE_since uint64_t
#define CT__CTYPE_dcorr uint64_t
#define CT__CTYPE_parent uint64_t
#define CT__CTYPE_uuid16 uint8_t
#define CT__DIM_u32
#define CT__DIM_uv
#define CT__DIM_sv32
#define CT__DIM_dur
#define CT__DIM_since
#define CT__DIM_dcorr
#define CT__DIM_parent
#define CT__DIM_uuid16 [16]

/* A Python frame's module is its source file, function its qualified name, line its line (0 if
 * unknown) and offset 0. */
#define CT_FRAME_FIELDS(F)                                                                  \
    F(id, u32, id, "", id, u, 0)                                                            \
    F(function, u32, function, "", function, str, 0)                                        \
    F(module, u32, module, "", module, str, 0)                                              \
    F(offset, uv, offset, "bytes", offset, x, 0)                                            \
    F(kind, u32, kind, "", kind, u, 0) /* enum ct_frame_kind (minor 3) */                   \
    F(line, u32, line, "", line, u, 0)

#define CT_THREAD_FIELDS(F)                                                                 \
    F(tid, u32, tid, "", thread, u, 0)                                                      \
    F(name, u32, name, "", name, str, 0)                                                    \
    F(flags, u32, flags, "", flags, u, 0)

#define CT_DEVICE_FIELDS(F)                                                                 \
    F(device, u32, device, "", device, u, 0) /* CUDA ordinal */                             \
    F(name, u32, name, "", name, str, 0) /* string id */                                    \
    F(uuid, uuid16, uuid, "bytes", uuid, hex16, 0)                                          \
    F(cc_major, u32, cc_major, "", cc, u, 0)                                                \
    F(cc_minor, u32, cc_minor, "", cc_minor, dot, 0)                                        \
    F(sm_count, u32, sm_count, "", sms, u, 0)                                               \
    F(clock_khz, u32, clock_khz, "kHz", clock_khz, u, 0) /* peak SM clock */                \
    F(mem_clock_khz, u32, mem_clock_khz, "kHz", mem_clock_khz, u, 0) /* peak memory clock */ \
    F(mem_bus_bits, u32, mem_bus_bits, "bits", bus_bits, u, 0) /* memory bus width */       \
    F(mem_bytes, uv, mem_bytes, "bytes", mem_bytes, u, 0) /* total global memory */         \
    F(l2_bytes, u32, l2_bytes, "bytes", l2_bytes, u, 0)                                     \
    F(max_threads_per_sm, u32, max_threads_per_sm, "", threads_per_sm, u, 0)                \
    F(regs_per_sm, u32, regs_per_sm, "", regs_per_sm, u, 0)                                 \
    F(smem_per_sm, u32, smem_per_sm, "bytes", smem_per_sm, u, 0)                            \
    F(warp_size, u32, warp_size, "", warp, u, 0)                                            \
    F(async_engines, u32, async_engines, "", async_engines, u, 0)                           \
    F(concurrent_kernels, u32, concurrent_kernels, "", concurrent_kernels, u, 0)            \
    F(link_kind, u32, link_kind, "", link, u, 0) /* host link: enum ct_link_kind */         \
    F(link_gen, u32, link_gen, "", gen, u, 0) /* PCIe generation */                         \
    F(link_width, u32, link_width, "lanes", width, u, 0) /* lanes */                        \
    F(pci_domain, u32, pci_domain, "", pci, x04, 0)                                         \
    F(pci_bus, u32, pci_bus, "", pci_bus, colon02x, 0)                                      \
    F(pci_device, u32, pci_device, "", pci_device, colon02x, 0)

#define CT_STREAM_FIELDS(F)                                                                 \
    F(op, u32, op, "", op, opSTREAM, 0) /* enum ct_stream_op */                             \
    F(stream, uv, stream, "", stream, x, 0) /* handle values */                             \
    F(context, uv, context, "", context, x, 0)                                              \
    F(device, u32, device, "", device, u, 0)                                                \
    F(flags, u32, flags, "", flags, u, 0) /* CUstream flags */                              \
    F(priority, sv32, priority, "", priority, d, 0)

#define CT_API_FIELDS(F)                                                                    \
    F(dur, dur, start, "ns", dur, span, 1) /* CPU time of entry; the end is ct_rec.ts */    \
    F(function, u32, function, "", fn, str, 0) /* string id of the API function name */     \
    F(result, u32, result, "", result, u, 2) /* CUresult / cudaError_t */                   \
    F(dcorr, dcorr, corr, "", corr, u, 3) /* correlation id (nonzero, unique per file) */   \
    /* corr of the call this one nests in, 0 if none */                                     \
    F(parent, parent, parent, "", parent, u, 4)                                             \
    F(flags, u32, flags, "", flags, side, 5) /* enum ct_api_flags */                        \
    F(stack, u32, stack, "", stack, none, 5) /* stack id of the call site, 0 if not captured */

/* A kernel's names and configuration, as LAUNCH and a GRAPH kernel node both carry them. */
#define CT_KERNEL_FIELDS(F)                                                                 \
    /* string id of the kernel name (demangled if known) */                                 \
    F(function, u32, function, "", kernel, str, 0)                                          \
    /* string id of the mangled symbol, 0 if same as function */                            \
    F(symbol, u32, symbol, "", symbol, str, 0)                                              \
    F(grid_x, u32, CT_EL(grid, 0, 3), "", grid, u, 0)                                       \
    F(grid_y, u32, CT_EL(grid, 1, 3), "", grid_y, comma, 0)                                 \
    F(grid_z, u32, CT_EL(grid, 2, 3), "", grid_z, comma, 0)                                 \
    F(block_x, u32, CT_EL(block, 0, 3), "", block, u, 0)                                    \
    F(block_y, u32, CT_EL(block, 1, 3), "", block_y, comma, 0)                              \
    F(block_z, u32, CT_EL(block, 2, 3), "", block_z, comma, 0)                              \
    F(shared_bytes, u32, shared_bytes, "bytes", shared, u, 0) /* dynamic shared memory */

#define CT_LAUNCH_FIELDS(F)                                                                 \
    F(dcorr, dcorr, corr, "", corr, u, 0)                                                   \
    CT_KERNEL_FIELDS(F)                                                                     \
    F(stream, uv, stream, "", stream, x, 0)                                                 \
    F(context, uv, context, "", context, x, 0)                                              \
    F(device, u32, device, "", device, u, 0)                                                \
    F(flags, u32, flags, "", flags, u, 0)

#define CT_COPY_FIELDS(F)                                                                   \
    F(dcorr, dcorr, corr, "", corr, u, 0)                                                   \
    F(op, u32, op, "", op, opCOPY, 0) /* enum ct_copy_op */                                 \
    F(dir, u32, dir, "", dir, u, 0) /* enum ct_copy_dir */                                  \
    F(bytes, uv, bytes, "bytes", bytes, u, 0)                                               \
    F(src_kind, u32, src_kind, "", src_kind, u, 0) /* enum ct_mem_kind (memset: dst only) */ \
    F(dst_kind, u32, dst_kind, "", dst_kind, u, 0)                                          \
    F(flags, u32, flags, "", flags, u, 0) /* enum ct_copy_flags */                          \
    F(stream, uv, stream, "", stream, x, 0)                                                 \
    F(device, u32, device, "", device, u, 0)                                                \
    F(peer_device, u32, peer_device, "", peer, u, 0) /* the other device of a peer copy */

#define CT_GPU_FIELDS(F)                                                                    \
    F(dur, dur, start, "ns", dur, span, 1) /* GPU start on the host clock; the end is ct_rec.ts */ \
    F(dcorr, dcorr, corr, "", corr, u, 0)                                                   \
    F(device, u32, device, "", device, u, 2)                                                \
    F(kind, u32, kind, "", kind, u, 2) /* enum ct_gpu_kind */                               \
    F(stream, uv, stream, "", stream, x, 2)                                                 \
    F(flags, u32, flags, "", flags, u, 2) /* enum ct_gpu_flags (minor 1) */

#define CT_MEM_FIELDS(F)                                                                    \
    F(op, u32, op, "", op, opMEM, 0) /* enum ct_mem_op */                                   \
    F(kind, u32, kind, "", kind, u, 0) /* enum ct_alloc_kind */                             \
    F(dcorr, dcorr, corr, "", corr, u, 0)                                                   \
    F(address, uv, address, "", address, x, 0)                                              \
    F(size, uv, size, "bytes", size, u, 0)                                                  \
    F(device, u32, device, "", device, u, 0)                                                \
    F(result, u32, result, "", result, u, 0)                                                \
    F(stack, u32, stack, "", stack, u, 0) /* stack id, 0 if none */                         \
    F(stream, uv, stream, "", stream, x, 0) /* stream-ordered allocations */                \
    F(handle, uv, handle, "", handle, x, 0) /* VMM: CUmemGenericAllocationHandle */

#define CT_SYNC_FIELDS(F)                                                                   \
    /* entry; the end (ct_rec.ts) minus start is the time blocked */                        \
    F(dur, dur, start, "ns", blocked, span, 2)                                              \
    F(dcorr, dcorr, corr, "", corr, u, 0)                                                   \
    F(kind, u32, kind, "", kind, u, 1) /* enum ct_sync_kind */                              \
    F(object, uv, object, "", object, x, 3) /* stream / event / context handle */

#define CT_CPU_FIELDS(F)                                                                    \
    F(tid, u32, tid, "", thread, u, 0)                                                      \
    F(user_ns, uv, user_ns, "ns", user_ns, u, 0)                                            \
    F(sys_ns, uv, sys_ns, "ns", sys_ns, u, 0)

#define CT_LOSS_FIELDS(F)                                                                   \
    F(reason, u32, reason, "", reason, u, 0) /* enum ct_loss_reason */                      \
    F(count, uv, count, "", count, u, 0)                                                    \
    F(tid, u32, tid, "", thread, u, 0)                                                      \
    F(corr, uv, corr, "", corr, u, 0) /* the one call concerned (count 1), 0 if none (minor 1) */ \
    F(why, u32, why, "", why, u, 0) /* CT_LOSS_GPU_TIMING of one call: enum ct_gpu_lost (minor 1) */

#define CT_END_FIELDS(F)                                                                    \
    F(how, u32, how, "", how, u, 0) /* enum ct_end_how */                                   \
    F(code, sv32, code, "", code, d, 0) /* exit status (0-255; -1 unknown) or signal number */ \
    F(records, uv, records, "", records, u, 0) /* totals over the process */                \
    F(lost, uv, lost, "", lost, u, 0)

#define CT_GEMM_FIELDS(F)                                                                   \
    F(dcorr, dcorr, corr, "", corr, u, 0) /* the cuBLAS / cuBLASLt call's id */             \
    F(m, uv, m, "", m, u, 0) /* op(A) is m x k, op(B) k x n, C and D m x n */               \
    F(n, uv, n, "", n, u, 0)                                                                \
    F(k, uv, k, "", k, u, 0)                                                                \
    F(batch, uv, batch, "", batch, u, 0) /* products in the call (1 unless batched) */      \
    F(a_type, u32, a_type, "", a_type, u, 0) /* cudaDataType_t of A, B, C, D (D: the output) */ \
    F(b_type, u32, b_type, "", b_type, u, 0)                                                \
    F(c_type, u32, c_type, "", c_type, u, 0)                                                \
    F(d_type, u32, d_type, "", d_type, u, 0)                                                \
    F(compute_type, u32, compute_type, "", compute, u, 0) /* cublasComputeType_t */         \
    F(trans_a, u32, trans_a, "", trans_a, u, 0) /* cublasOperation_t: 0 N, 1 T, 2 C */      \
    F(trans_b, u32, trans_b, "", trans_b, u, 0)                                             \
    F(flags, u32, flags, "", flags, u, 0) /* enum ct_gemm_flags */

#define CT_SHLIB_FIELDS(F)                                                                  \
    F(kind, u32, kind, "", kind, u, 0) /* enum ct_shlib_kind */                             \
    /* string id: the object's path, symbolic links resolved */                             \
    F(path, u32, path, "", path, str, 0)                                                    \
    /* string id: its GNU build id in lowercase hex, 0 if none */                           \
    F(build_id, u32, build_id, "", build_id, str, 0)

#define CT_PYTHON_FIELDS(F)                                                                 \
    F(version, u32, version, "", version, x, 0) /* PY_VERSION_HEX, e.g. 0x030b07f0 for 3.11.7 */ \
    /* string ids: the interpreter's program (sys.executable), */                           \
    F(program, u32, program, "", program, str, 0)                                           \
    /* the prefixes of its installation (sys.base_prefix, ...) */                           \
    F(prefix, u32, prefix, "", prefix, str, 0)                                              \
    F(exec_prefix, u32, exec_prefix, "", exec_prefix, str, 0)                               \
    F(path, u32, path, "", path, str, 0) /* and the module search path it computed, ':'-separated */

#define CT_CAPTURE_FIELDS(F)                                                                \
    F(op, u32, op, "", op, u, 0) /* enum ct_capture_op */                                   \
    F(why, u32, why, "", why, u, 0) /* enum ct_capture_why */

#define CT_GRAPH_FIELDS(F)                                                                  \
    F(dcorr, dcorr, corr, "", corr, u, 0) /* the call's correlation id */                   \
    F(op, u32, op, "", op, opGRAPH, 0) /* enum ct_graph_op */                               \
    F(mode, u32, mode, "", mode, u, 0) /* capture begin: CUstreamCaptureMode */             \
    F(graph, uv, graph, "", graph, x, 0) /* handles (0: none or not applicable) */          \
    F(exec, uv, exec, "", exec, x, 0)                                                       \
    F(stream, uv, stream, "", stream, x, 0)                                                 \
    F(result, u32, result, "", result, u, 0) /* the call's CUresult */                      \
    F(node, uv, node, "", node, x, 0) /* NODE, NODE_SET (minor 7): its handle in its graph */ \
    /* enum ct_graph_node; then a kernel's fields (as LAUNCH's) */                          \
    F(node_type, u32, node_type, "", node_type, u, 0)                                       \
    CT_KERNEL_FIELDS(F)                                                                     \
    F(bytes, uv, bytes, "bytes", bytes, u, 0) /* a memcpy's or memset's (as COPY's) */      \
    F(dir, u32, dir, "", dir, u, 0)                                                         \
    F(src_kind, u32, src_kind, "", src_kind, u, 0)                                          \
    F(dst_kind, u32, dst_kind, "", dst_kind, u, 0)                                          \
    /* instantiate, update: the NODE records written before it */                           \
    F(nodes, u32, nodes, "", nodes, u, 0)

/* What NVTX_RANGE and NVTX_MARK both carry, in the same order (FORMAT.md 4.8). */
#define CT_NVTX_ATTR_FIELDS(F)                                                              \
    /* string ids: domain (0 default), name as given, normalized group */                   \
    F(domain, u32, domain, "", domain, str, 0)                                              \
    F(name, u32, name, "", name, str, 0)                                                    \
    F(group, u32, group, "", group, str, 0)                                                 \
    F(category, u32, category, "", category, u, 0) /* NVTX category (0 none) */             \
    F(color, u32, color, "", color, x, 0) /* ARGB color (CT_NVTX_COLOR) */                  \
    F(payload_kind, u32, payload_kind, "", payload_kind, u, 0) /* nvtxPayloadType_t (0 none) */ \
    F(payload, uv, payload, "", payload, x, 0) /* its bits (a double's or float's IEEE bits) */

#define CT_NVTX_RANGE_FIELDS(F)                                                             \
    F(dur, since, start, "ns", dur, span, 1) /* the push or start */                        \
    /* OS threads that started and ended it */                                              \
    F(start_tid, u32, start_tid, "", start_thread, u, 0)                                    \
    F(end_tid, u32, end_tid, "", end_thread, u, 0)                                          \
    CT_NVTX_ATTR_FIELDS(F)                                                                  \
    F(kind, u32, kind, "", kind, u, 0) /* enum ct_nvtx_kind */                              \
    F(id, uv, id, "", id, x, 0) /* start/end: the nvtxRangeId_t returned; push/pop: 0 */    \
    /* push/pop: the level in its thread and domain, 0 outermost */                         \
    F(depth, u32, depth, "", depth, u, 0)                                                   \
    F(flags, u32, flags, "", flags, u, 0) /* enum ct_nvtx_flags */

#define CT_NVTX_BEGIN_FIELDS(F)                                                             \
    F(tid, u32, tid, "", thread, u, 0) /* the OS thread that pushed or started it */        \
    F(kind, u32, kind, "", kind, u, 0) /* enum ct_nvtx_kind */                              \
    F(id, uv, id, "", id, x, 0) /* as in NVTX_RANGE */                                      \
    F(domain, u32, domain, "", domain, str, 0)                                              \
    F(name, u32, name, "", name, str, 0)                                                    \
    F(group, u32, group, "", group, str, 0)                                                 \
    F(depth, u32, depth, "", depth, u, 0)

#define CT_NVTX_MARK_FIELDS(F)                                                              \
    CT_NVTX_ATTR_FIELDS(F)                                                                  \
    F(flags, u32, flags, "", flags, u, 0) /* enum ct_nvtx_flags */

/* The process tree beside the GPU (FORMAT.md 4.11): a process the host sampler found, ... */
#define CT_PROC_FIELDS(F)                                                                   \
    F(pid, u32, pid, "", pid, u, 0)                                                         \
    F(ppid, u32, ppid, "", ppid, u, 0)                                                      \
    F(root, u32, root, "", root, u, 0) /* the traced process, whose file this is */         \
    F(relation, u32, relation, "", relation, relation, 0) /* enum ct_proc_relation */       \
    /* when it started, on the trace's clock (to the kernel's tick) */                      \
    F(start, uv, start, "ns", started, u, 0)                                                \
    /* string ids: its name, its arguments joined by spaces */                              \
    F(comm, u32, comm, "", comm, str, 0)                                                    \
    F(cmdline, u32, cmdline, "", cmdline, str, 0)

/* ... a reading of one of its processes or threads' counters, as read (cumulative) ... */
#define CT_PROC_SAMPLE_FIELDS(F)                                                            \
    F(pid, u32, pid, "", pid, u, 0)                                                         \
    F(tid, u32, tid, "", thread, u, 0) /* 0: the process as a whole; else one of its threads */ \
    /* CPU time (process: all its threads, exited ones included) */                         \
    F(user_ns, uv, user_ns, "ns", user_ns, u, 0)                                            \
    F(sys_ns, uv, sys_ns, "ns", sys_ns, u, 0)                                               \
    /* on a CPU, and runnable waiting for one (live threads) */                             \
    F(run_ns, uv, run_ns, "ns", run_ns, u, 0)                                               \
    F(wait_ns, uv, wait_ns, "ns", wait_ns, u, 0)                                            \
    /* the (main) thread's state letter: 'R', 'S', 'D', ... */                              \
    F(state, u32, state, "", state, chr, 0)                                                 \
    /* threads, and those in R and in D at the reading */                                   \
    F(threads, u32, threads, "", threads, u, 0)                                             \
    F(running, u32, running, "", running, u, 0)                                             \
    F(blocked, u32, blocked, "", blocked, u, 0)                                             \
    /* bytes through read/write-like calls (any file, pipe, socket) */                      \
    F(rchar, uv, rchar, "bytes", rchar, u, 0)                                               \
    F(wchar, uv, wchar, "bytes", wchar, u, 0)                                               \
    /* bytes the block layer fetched / will write for it */                                 \
    F(read_bytes, uv, read_bytes, "bytes", read_bytes, u, 0)                                \
    F(write_bytes, uv, write_bytes, "bytes", write_bytes, u, 0)                             \
    F(majflt, uv, majflt, "", majflt, u, 0) /* major page faults */                         \
    F(flags, u32, flags, "", flags, x, 0) /* enum ct_proc_sample_flags */                   \
    /* CPU time of its children it has reaped (a process's) */                              \
    F(children_ns, uv, children_ns, "ns", children_ns, u, 0)

/* ... and of the machine's. */
#define CT_HOST_SAMPLE_FIELDS(F)                                                            \
    F(cpus, u32, cpus, "", cpus, u, 0) /* online CPUs */                                    \
    F(busy_ns, uv, busy_ns, "ns", busy_ns, u, 0) /* summed over the CPUs */                 \
    F(idle_ns, uv, idle_ns, "ns", idle_ns, u, 0)                                            \
    F(iowait_ns, uv, iowait_ns, "ns", iowait_ns, u, 0)                                      \
    F(steal_ns, uv, steal_ns, "ns", steal_ns, u, 0)                                         \
    /* tasks runnable, and in uninterruptible I/O wait, machine-wide */                     \
    F(running, u32, running, "", running, u, 0)                                             \
    F(blocked, u32, blocked, "", blocked, u, 0)                                             \
    F(mem_total, uv, mem_total, "bytes", mem_total, u, 0)                                   \
    F(mem_available, uv, mem_available, "bytes", mem_available, u, 0)                       \
    /* pages swapped in and out, major faults (machine) */                                  \
    F(swap_in, uv, swap_in, "", swap_in, u, 0)                                              \
    F(swap_out, uv, swap_out, "", swap_out, u, 0)                                           \
    F(majflt, uv, majflt, "", majflt, u, 0)                                                 \
    F(psi_cpu_some_ns, uv, psi_cpu_some_ns, "ns", psi_cpu_some_ns, u, 0) /* stall ns */     \
    F(psi_io_some_ns, uv, psi_io_some_ns, "ns", psi_io_some_ns, u, 0)                       \
    F(psi_io_full_ns, uv, psi_io_full_ns, "ns", psi_io_full_ns, u, 0)                       \
    F(psi_mem_some_ns, uv, psi_mem_some_ns, "ns", psi_mem_some_ns, u, 0)                    \
    F(psi_mem_full_ns, uv, psi_mem_full_ns, "ns", psi_mem_full_ns, u, 0)                    \
    F(flags, u32, flags, "", flags, x, 0) /* enum ct_host_sample_flags */                   \
    /* (since 1.9) the CPUs the traced process may use: its affinity mask (a batch job's    \
     * cpuset), and the tightest CPU bandwidth limit of its cgroups; job_cpus: the online  \
     * CPUs in its affinity mask (0 unknown) */                                             \
    F(job_cpus, u32, job_cpus, "", job_cpus, u, 0)                                          \
    /* as busy_ns and iowait_ns, over those CPUs */                                         \
    F(job_busy_ns, uv, job_busy_ns, "ns", job_busy_ns, u, 0)                                \
    F(job_iowait_ns, uv, job_iowait_ns, "ns", job_iowait_ns, u, 0)                          \
    /* the limit in thousandths of a CPU (0: none found) */                                 \
    F(quota_mcpu, u32, quota_mcpu, "", quota_mcpu, u, 0)                                    \
    /* the limiting cgroup's CPU time and time throttled */                                 \
    F(cg_cpu_ns, uv, cg_cpu_ns, "ns", cg_cpu_ns, u, 0)                                      \
    F(throttled_ns, uv, throttled_ns, "ns", throttled_ns, u, 0)

/* Where a thread that called CUDA was (FORMAT.md 4.12): sampled every few milliseconds from the
 * writer's side, never stopping the thread. ts: when it was sampled. */
#define CT_THREAD_SAMPLE_FIELDS(F)                                                          \
    F(tid, u32, tid, "", thread, u, 0)                                                      \
    /* its scheduler state letter: 'R' running or runnable, 'S' sleeping, 'D' I/O, ...; 0  \
     * unknown */                                                                           \
    F(state, u32, state, "", state, chr, 0)                                                 \
    /* string id of the CUDA API function it was inside (the outermost), 0: none */         \
    F(function, u32, function, "", function, str, 0)                                        \
    /* stack id: its Python frames read at ts, innermost first, or (flags) the native       \
     * stack of its last CUDA call, or of a perf_event sample of it; 0 none */              \
    F(stack, u32, stack, "", stack, u, 0)                                                   \
    F(flags, u32, flags, "", flags, x, 0) /* enum ct_thread_sample_flags */

/* ---- the record types ----------------------------------------------------------------------- */

/* Every record type, in wire number order, once: cttrace.h generates from this table the enum
 * ct_rec_type, the record structs, ct_rec's union and the encoders' prototypes; ct_common.c the
 * type names; ct_enc.c the encoders and the dispatch by type (ct_enc_fixed, which the tracer's
 * writer calls, and ct_enc_rec); ct_decode.c the decoder's; analyzer/output/cta_dump.c the dump. X(R, TYPE, member, number, name, form, FIELDS) per type, R
 * passed through (the views below):
 *   TYPE     CT_REC_TYPE; member: ct_rec's union member, of type ct_rec_<member>
 *   number   the wire value (never reused: a retired type stays, as reserved)
 *   name     what ct_rec_type_name returns
 *   form     event: a fixed-layout record, FIELDS its field list (everything is generated);
 *            def: the same, a definition (FRAME: the reader keeps the first of each id);
 *            text (STRING), list (STACK): a count then that many items, written by hand;
 *            reserved: no longer or not yet written, read as an unknown record
 * A new record type is one line at the end (the next number, form event) and its field list
 * above; FORMAT.md's table follows (tests/format/test-format_tables.c). */
#define CT__REC_TABLE(X, R)                                                                 \
    /* interned string definition */                                                        \
    X(R, STRING, string, 1, "string", text, CT_NO_FIELDS)                                   \
    /* interned stack frame definition */                                                   \
    X(R, FRAME, frame, 2, "frame", def, CT_FRAME_FIELDS)                                    \
    /* interned call stack definition */                                                    \
    X(R, STACK, stack, 3, "stack", list, CT_NO_FIELDS)                                      \
    /* OS thread: tid, name */                                                              \
    X(R, THREAD, thread, 4, "thread", event, CT_THREAD_FIELDS)                              \
    /* GPU properties */                                                                    \
    X(R, DEVICE, device, 5, "device", event, CT_DEVICE_FIELDS)                              \
    /* stream creation / destruction */                                                     \
    X(R, STREAM, stream, 6, "stream", event, CT_STREAM_FIELDS)                              \
    /* one driver or runtime API call */                                                    \
    X(R, API, api, 7, "api", event, CT_API_FIELDS)                                          \
    /* kernel launch details of an API call */                                              \
    X(R, LAUNCH, launch, 8, "launch", event, CT_LAUNCH_FIELDS)                              \
    /* memcpy / memset details of an API call */                                            \
    X(R, COPY, copy, 9, "copy", event, CT_COPY_FIELDS)                                      \
    /* GPU execution interval of a correlation id */                                        \
    X(R, GPU, gpu, 10, "gpu", event, CT_GPU_FIELDS)                                         \
    /* allocation or free */                                                                \
    X(R, MEM, mem, 11, "mem", event, CT_MEM_FIELDS)                                         \
    /* host blocked in a synchronization */                                                 \
    X(R, SYNC, sync, 12, "sync", event, CT_SYNC_FIELDS)                                     \
    /* host thread CPU time reading */                                                      \
    X(R, CPU, cpu, 13, "cpu", event, CT_CPU_FIELDS)                                         \
    /* records lost */                                                                      \
    X(R, LOSS, loss, 14, "loss", event, CT_LOSS_FIELDS)                                     \
    /* the process ended (last record of a complete trace) */                               \
    X(R, END, end, 15, "end", event, CT_END_FIELDS)                                         \
    /* an NVTX push/pop or start/end range (minor 5) */                                     \
    X(R, NVTX_RANGE, nvtx_range, 16, "nvtx-range", event, CT_NVTX_RANGE_FIELDS)             \
    /* an NVTX mark, or the name of a category or OS thread (minor 5) */                    \
    X(R, NVTX_MARK, nvtx_mark, 17, "nvtx-mark", event, CT_NVTX_MARK_FIELDS)                 \
    /* reserved for later minor versions: readers of this version skip them as unknown */    \
    X(R, GRAPH_LAUNCH, graph_launch, 18, "graph-launch", reserved, CT_NO_FIELDS)            \
    X(R, PYFRAME, pyframe, 19, "pyframe", reserved, CT_NO_FIELDS)                           \
    /* a cuBLAS / cuBLASLt matrix product's shape and types (minor 2) */                    \
    X(R, GEMM, gemm, 20, "gemm", event, CT_GEMM_FIELDS)                                     \
    /* a CUDA library the process mapped: path and build id (minor 2) */                    \
    X(R, SHLIB, shlib, 21, "shlib", event, CT_SHLIB_FIELDS)                                 \
    /* the CPython the process runs: version, prefixes, search path (minor 4) */            \
    X(R, PYTHON, python, 22, "python", event, CT_PYTHON_FIELDS)                             \
    /* an NVTX range's push or start, before its NVTX_RANGE (minor 6) */                    \
    X(R, NVTX_BEGIN, nvtx_begin, 23, "nvtx-begin", event, CT_NVTX_BEGIN_FIELDS)             \
    /* recording of a windowed trace started or stopped (minor 6) */                        \
    X(R, CAPTURE, capture, 24, "capture", event, CT_CAPTURE_FIELDS)                         \
    /* a stream capture, CUDA graph or graph exec call's handles (minor 7) */               \
    X(R, GRAPH, graph, 25, "graph", event, CT_GRAPH_FIELDS)                                 \
    /* a process of the traced process's tree (minor 8) */                                  \
    X(R, PROC, proc, 26, "proc", event, CT_PROC_FIELDS)                                     \
    /* a reading of a tree process's or thread's counters (minor 8) */                      \
    X(R, PROC_SAMPLE, proc_sample, 27, "proc-sample", event, CT_PROC_SAMPLE_FIELDS)         \
    /* a reading of the machine's counters (minor 8) */                                     \
    X(R, HOST_SAMPLE, host_sample, 28, "host-sample", event, CT_HOST_SAMPLE_FIELDS)          \
    /* where a CUDA-calling thread was: state, CUDA call, stack (minor 10) */               \
    X(R, THREAD_SAMPLE, thread_sample, 29, "thread-sample", event, CT_THREAD_SAMPLE_FIELDS)
#define CT_NO_FIELDS(F)

/* The table's views. CT_REC_LIST(R): R(TYPE, member, number, name, form, FIELDS) for every
 * record type a ct_rec may hold (all but the reserved ones); CT_RECORDS(R): R(TYPE, member,
 * FIELDS) for the fixed-layout ones (forms def and event); CT_EVENT_RECORDS(R): the same for the
 * events alone. */
#define CT_REC_LIST(R) CT__REC_TABLE(CT__HELD, R)
#define CT_RECORDS(R) CT__REC_TABLE(CT__FIXED, R)
#define CT_EVENT_RECORDS(R) CT__REC_TABLE(CT__EVENT, R)
#define CT__HELD(R, TYPE, member, number, name, form, FIELDS)                               \
    CT__HELD_##form(R, TYPE, member, number, name, form, FIELDS)
#define CT__FIXED(R, TYPE, member, number, name, form, FIELDS)                              \
    CT__FIXED_##form(R, TYPE, member, number, name, form, FIELDS)
#define CT__EVENT(R, TYPE, member, number, name, form, FIELDS)                              \
    CT__EVENT_##form(R, TYPE, member, number, name, form, FIELDS)
#define CT__HELD_text(R, ...) R(__VA_ARGS__)
#define CT__HELD_def(R, ...) R(__VA_ARGS__)
#define CT__HELD_list(R, ...) R(__VA_ARGS__)
#define CT__HELD_event(R, ...) R(__VA_ARGS__)
#define CT__HELD_reserved(R, ...)
#define CT__FIXED_text(R, ...)
#define CT__FIXED_def(R, TYPE, member, number, name, form, FIELDS) R(TYPE, member, FIELDS)
#define CT__FIXED_list(R, ...)
#define CT__FIXED_event(R, TYPE, member, number, name, form, FIELDS) R(TYPE, member, FIELDS)
#define CT__FIXED_reserved(R, ...)
#define CT__EVENT_text(R, ...)
#define CT__EVENT_def(R, ...)
#define CT__EVENT_list(R, ...)
#define CT__EVENT_event(R, TYPE, member, number, name, form, FIELDS) R(TYPE, member, FIELDS)
#define CT__EVENT_reserved(R, ...)

#endif
