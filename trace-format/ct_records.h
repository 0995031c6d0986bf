/* The fixed-layout records' fields, described once (FORMAT.md section 4), as Darshan describes
 * its counters: an X-macro list per record type that the encoder (ct_enc.c) and the decoder
 * (ct_decode.c, ct_defs.c) and `cutrace dump` (analyzer/cli/cmd_dump.c) expand, and that
 * tests/format/test-format_tables.c checks against FORMAT.md's tables. STRING and STACK (a count,
 * then that many items) are written out by hand.
 *
 * CT_RECORDS(R) calls R(TYPE, member, FIELDS) per record: CT_REC_TYPE, the ct_rec union member
 * (ct_rec_<member>) and the record's field list. A field list FIELDS(F) calls, in wire order,
 *   F(name, kind, member, unit, dump, style, at)
 * name: the field's name in FORMAT.md; member: the C lvalue in the record struct it maps to;
 * unit: "" or the unit FORMAT.md states (ns, bytes, kHz, bits, lanes). dump, style, at: how
 * `cutrace dump` shows it (analyzer/cli/cmd_dump.c): under the key dump, in the style
 *   u decimal, d signed, x hex, x04 4-digit hex, str a string id, hex16 raw bytes in hex,
 *   op<TYPE> the op's name, chr a character
 *   (a thread state letter, 0 shown as -), relation a PROC relation's name, span "start=<member> <dump>=<ts - member>", side "driver",
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
 * Fields are only ever appended (FORMAT.md section 4): a new one goes at the end of its list. */
#ifndef CT_RECORDS_H
#define CT_RECORDS_H

#define CT_FRAME_FIELDS(F)                                                                  \
    F(id, u32, id, "", id, u, 0)                                                            \
    F(function, u32, function, "", function, str, 0)                                        \
    F(module, u32, module, "", module, str, 0)                                              \
    F(offset, uv, offset, "bytes", offset, x, 0)                                            \
    F(kind, u32, kind, "", kind, u, 0)                                                      \
    F(line, u32, line, "", line, u, 0)

#define CT_THREAD_FIELDS(F)                                                                 \
    F(tid, u32, tid, "", thread, u, 0)                                                      \
    F(name, u32, name, "", name, str, 0)                                                    \
    F(flags, u32, flags, "", flags, u, 0)

#define CT_DEVICE_FIELDS(F)                                                                 \
    F(device, u32, device, "", device, u, 0)                                                \
    F(name, u32, name, "", name, str, 0)                                                    \
    F(uuid, uuid16, uuid, "bytes", uuid, hex16, 0)                                          \
    F(cc_major, u32, cc_major, "", cc, u, 0)                                                \
    F(cc_minor, u32, cc_minor, "", cc_minor, dot, 0)                                        \
    F(sm_count, u32, sm_count, "", sms, u, 0)                                               \
    F(clock_khz, u32, clock_khz, "kHz", clock_khz, u, 0)                                    \
    F(mem_clock_khz, u32, mem_clock_khz, "kHz", mem_clock_khz, u, 0)                        \
    F(mem_bus_bits, u32, mem_bus_bits, "bits", bus_bits, u, 0)                              \
    F(mem_bytes, uv, mem_bytes, "bytes", mem_bytes, u, 0)                                   \
    F(l2_bytes, u32, l2_bytes, "bytes", l2_bytes, u, 0)                                     \
    F(max_threads_per_sm, u32, max_threads_per_sm, "", threads_per_sm, u, 0)                \
    F(regs_per_sm, u32, regs_per_sm, "", regs_per_sm, u, 0)                                 \
    F(smem_per_sm, u32, smem_per_sm, "bytes", smem_per_sm, u, 0)                            \
    F(warp_size, u32, warp_size, "", warp, u, 0)                                            \
    F(async_engines, u32, async_engines, "", async_engines, u, 0)                           \
    F(concurrent_kernels, u32, concurrent_kernels, "", concurrent_kernels, u, 0)            \
    F(link_kind, u32, link_kind, "", link, u, 0)                                            \
    F(link_gen, u32, link_gen, "", gen, u, 0)                                               \
    F(link_width, u32, link_width, "lanes", width, u, 0)                                    \
    F(pci_domain, u32, pci_domain, "", pci, x04, 0)                                         \
    F(pci_bus, u32, pci_bus, "", pci_bus, colon02x, 0)                                      \
    F(pci_device, u32, pci_device, "", pci_device, colon02x, 0)

#define CT_STREAM_FIELDS(F)                                                                 \
    F(op, u32, op, "", op, opSTREAM, 0)                                                     \
    F(stream, uv, stream, "", stream, x, 0)                                                 \
    F(context, uv, context, "", context, x, 0)                                              \
    F(device, u32, device, "", device, u, 0)                                                \
    F(flags, u32, flags, "", flags, u, 0)                                                   \
    F(priority, sv32, priority, "", priority, d, 0)

#define CT_API_FIELDS(F)                                                                    \
    F(dur, dur, start, "ns", dur, span, 1)                                                  \
    F(function, u32, function, "", fn, str, 0)                                              \
    F(result, u32, result, "", result, u, 2)                                                \
    F(dcorr, dcorr, corr, "", corr, u, 3)                                                   \
    F(parent, parent, parent, "", parent, u, 4)                                             \
    F(flags, u32, flags, "", flags, side, 5)                                                \
    F(stack, u32, stack, "", stack, none, 5)

/* A kernel's names and configuration, as LAUNCH and a GRAPH kernel node both carry them. */
#define CT_KERNEL_FIELDS(F)                                                                 \
    F(function, u32, function, "", kernel, str, 0)                                          \
    F(symbol, u32, symbol, "", symbol, str, 0)                                              \
    F(grid_x, u32, grid[0], "", grid, u, 0)                                                 \
    F(grid_y, u32, grid[1], "", grid_y, comma, 0)                                           \
    F(grid_z, u32, grid[2], "", grid_z, comma, 0)                                           \
    F(block_x, u32, block[0], "", block, u, 0)                                              \
    F(block_y, u32, block[1], "", block_y, comma, 0)                                        \
    F(block_z, u32, block[2], "", block_z, comma, 0)                                        \
    F(shared_bytes, u32, shared_bytes, "bytes", shared, u, 0)

#define CT_LAUNCH_FIELDS(F)                                                                 \
    F(dcorr, dcorr, corr, "", corr, u, 0)                                                   \
    CT_KERNEL_FIELDS(F)                                                                     \
    F(stream, uv, stream, "", stream, x, 0)                                                 \
    F(context, uv, context, "", context, x, 0)                                              \
    F(device, u32, device, "", device, u, 0)                                                \
    F(flags, u32, flags, "", flags, u, 0)

#define CT_COPY_FIELDS(F)                                                                   \
    F(dcorr, dcorr, corr, "", corr, u, 0)                                                   \
    F(op, u32, op, "", op, opCOPY, 0)                                                       \
    F(dir, u32, dir, "", dir, u, 0)                                                         \
    F(bytes, uv, bytes, "bytes", bytes, u, 0)                                               \
    F(src_kind, u32, src_kind, "", src_kind, u, 0)                                          \
    F(dst_kind, u32, dst_kind, "", dst_kind, u, 0)                                          \
    F(flags, u32, flags, "", flags, u, 0)                                                   \
    F(stream, uv, stream, "", stream, x, 0)                                                 \
    F(device, u32, device, "", device, u, 0)                                                \
    F(peer_device, u32, peer_device, "", peer, u, 0)

#define CT_GPU_FIELDS(F)                                                                    \
    F(dur, dur, start, "ns", dur, span, 1)                                                  \
    F(dcorr, dcorr, corr, "", corr, u, 0)                                                   \
    F(device, u32, device, "", device, u, 2)                                                \
    F(kind, u32, kind, "", kind, u, 2)                                                      \
    F(stream, uv, stream, "", stream, x, 2)                                                 \
    F(flags, u32, flags, "", flags, u, 2)

#define CT_MEM_FIELDS(F)                                                                    \
    F(op, u32, op, "", op, opMEM, 0)                                                        \
    F(kind, u32, kind, "", kind, u, 0)                                                      \
    F(dcorr, dcorr, corr, "", corr, u, 0)                                                   \
    F(address, uv, address, "", address, x, 0)                                              \
    F(size, uv, size, "bytes", size, u, 0)                                                  \
    F(device, u32, device, "", device, u, 0)                                                \
    F(result, u32, result, "", result, u, 0)                                                \
    F(stack, u32, stack, "", stack, u, 0)                                                   \
    F(stream, uv, stream, "", stream, x, 0)                                                 \
    F(handle, uv, handle, "", handle, x, 0)

#define CT_SYNC_FIELDS(F)                                                                   \
    F(dur, dur, start, "ns", blocked, span, 2)                                              \
    F(dcorr, dcorr, corr, "", corr, u, 0)                                                   \
    F(kind, u32, kind, "", kind, u, 1)                                                      \
    F(object, uv, object, "", object, x, 3)

#define CT_CPU_FIELDS(F)                                                                    \
    F(tid, u32, tid, "", thread, u, 0)                                                      \
    F(user_ns, uv, user_ns, "ns", user_ns, u, 0)                                            \
    F(sys_ns, uv, sys_ns, "ns", sys_ns, u, 0)

#define CT_LOSS_FIELDS(F)                                                                   \
    F(reason, u32, reason, "", reason, u, 0)                                                \
    F(count, uv, count, "", count, u, 0)                                                    \
    F(tid, u32, tid, "", thread, u, 0)                                                      \
    F(corr, uv, corr, "", corr, u, 0)                                                       \
    F(why, u32, why, "", why, u, 0)

#define CT_END_FIELDS(F)                                                                    \
    F(how, u32, how, "", how, u, 0)                                                         \
    F(code, sv32, code, "", code, d, 0)                                                     \
    F(records, uv, records, "", records, u, 0)                                              \
    F(lost, uv, lost, "", lost, u, 0)

#define CT_GEMM_FIELDS(F)                                                                   \
    F(dcorr, dcorr, corr, "", corr, u, 0)                                                   \
    F(m, uv, m, "", m, u, 0)                                                                \
    F(n, uv, n, "", n, u, 0)                                                                \
    F(k, uv, k, "", k, u, 0)                                                                \
    F(batch, uv, batch, "", batch, u, 0)                                                    \
    F(a_type, u32, a_type, "", a_type, u, 0)                                                \
    F(b_type, u32, b_type, "", b_type, u, 0)                                                \
    F(c_type, u32, c_type, "", c_type, u, 0)                                                \
    F(d_type, u32, d_type, "", d_type, u, 0)                                                \
    F(compute_type, u32, compute_type, "", compute, u, 0)                                   \
    F(trans_a, u32, trans_a, "", trans_a, u, 0)                                             \
    F(trans_b, u32, trans_b, "", trans_b, u, 0)                                             \
    F(flags, u32, flags, "", flags, u, 0)

#define CT_SHLIB_FIELDS(F)                                                                  \
    F(kind, u32, kind, "", kind, u, 0)                                                      \
    F(path, u32, path, "", path, str, 0)                                                    \
    F(build_id, u32, build_id, "", build_id, str, 0)

#define CT_PYTHON_FIELDS(F)                                                                 \
    F(version, u32, version, "", version, x, 0)                                             \
    F(program, u32, program, "", program, str, 0)                                           \
    F(prefix, u32, prefix, "", prefix, str, 0)                                              \
    F(exec_prefix, u32, exec_prefix, "", exec_prefix, str, 0)                               \
    F(path, u32, path, "", path, str, 0)

#define CT_CAPTURE_FIELDS(F)                                                                \
    F(op, u32, op, "", op, u, 0)                                                            \
    F(why, u32, why, "", why, u, 0)

#define CT_GRAPH_FIELDS(F)                                                                  \
    F(dcorr, dcorr, corr, "", corr, u, 0)                                                   \
    F(op, u32, op, "", op, opGRAPH, 0)                                                      \
    F(mode, u32, mode, "", mode, u, 0)                                                      \
    F(graph, uv, graph, "", graph, x, 0)                                                    \
    F(exec, uv, exec, "", exec, x, 0)                                                       \
    F(stream, uv, stream, "", stream, x, 0)                                                 \
    F(result, u32, result, "", result, u, 0)                                                \
    F(node, uv, node, "", node, x, 0)                                                       \
    F(node_type, u32, node_type, "", node_type, u, 0)                                       \
    CT_KERNEL_FIELDS(F)                                                                     \
    F(bytes, uv, bytes, "bytes", bytes, u, 0)                                               \
    F(dir, u32, dir, "", dir, u, 0)                                                         \
    F(src_kind, u32, src_kind, "", src_kind, u, 0)                                          \
    F(dst_kind, u32, dst_kind, "", dst_kind, u, 0)                                          \
    F(nodes, u32, nodes, "", nodes, u, 0)

/* What NVTX_RANGE and NVTX_MARK both carry, in the same order (FORMAT.md 4.8). */
#define CT_NVTX_ATTR_FIELDS(F)                                                              \
    F(domain, u32, domain, "", domain, str, 0)                                              \
    F(name, u32, name, "", name, str, 0)                                                    \
    F(group, u32, group, "", group, str, 0)                                                 \
    F(category, u32, category, "", category, u, 0)                                          \
    F(color, u32, color, "", color, x, 0)                                                   \
    F(payload_kind, u32, payload_kind, "", payload_kind, u, 0)                              \
    F(payload, uv, payload, "", payload, x, 0)

#define CT_NVTX_RANGE_FIELDS(F)                                                             \
    F(dur, since, start, "ns", dur, span, 1)                                                  \
    F(start_tid, u32, start_tid, "", start_thread, u, 0)                                    \
    F(end_tid, u32, end_tid, "", end_thread, u, 0)                                          \
    CT_NVTX_ATTR_FIELDS(F)                                                                  \
    F(kind, u32, kind, "", kind, u, 0)                                                      \
    F(id, uv, id, "", id, x, 0)                                                             \
    F(depth, u32, depth, "", depth, u, 0)                                                   \
    F(flags, u32, flags, "", flags, u, 0)

#define CT_NVTX_BEGIN_FIELDS(F)                                                             \
    F(tid, u32, tid, "", thread, u, 0)                                                      \
    F(kind, u32, kind, "", kind, u, 0)                                                      \
    F(id, uv, id, "", id, x, 0)                                                             \
    F(domain, u32, domain, "", domain, str, 0)                                              \
    F(name, u32, name, "", name, str, 0)                                                    \
    F(group, u32, group, "", group, str, 0)                                                 \
    F(depth, u32, depth, "", depth, u, 0)

#define CT_NVTX_MARK_FIELDS(F)                                                              \
    CT_NVTX_ATTR_FIELDS(F)                                                                  \
    F(flags, u32, flags, "", flags, u, 0)

/* The process tree beside the GPU (FORMAT.md 4.11): a process the host sampler found, ... */
#define CT_PROC_FIELDS(F)                                                                   \
    F(pid, u32, pid, "", pid, u, 0)                                                         \
    F(ppid, u32, ppid, "", ppid, u, 0)                                                      \
    F(root, u32, root, "", root, u, 0)                                                      \
    F(relation, u32, relation, "", relation, relation, 0)                                   \
    F(start, uv, start, "ns", started, u, 0)                                                \
    F(comm, u32, comm, "", comm, str, 0)                                                    \
    F(cmdline, u32, cmdline, "", cmdline, str, 0)

/* ... a reading of one of its processes or threads' counters, as read (cumulative) ... */
#define CT_PROC_SAMPLE_FIELDS(F)                                                            \
    F(pid, u32, pid, "", pid, u, 0)                                                         \
    F(tid, u32, tid, "", thread, u, 0)                                                      \
    F(user_ns, uv, user_ns, "ns", user_ns, u, 0)                                            \
    F(sys_ns, uv, sys_ns, "ns", sys_ns, u, 0)                                               \
    F(run_ns, uv, run_ns, "ns", run_ns, u, 0)                                               \
    F(wait_ns, uv, wait_ns, "ns", wait_ns, u, 0)                                            \
    F(state, u32, state, "", state, chr, 0)                                                 \
    F(threads, u32, threads, "", threads, u, 0)                                             \
    F(running, u32, running, "", running, u, 0)                                             \
    F(blocked, u32, blocked, "", blocked, u, 0)                                             \
    F(rchar, uv, rchar, "bytes", rchar, u, 0)                                               \
    F(wchar, uv, wchar, "bytes", wchar, u, 0)                                               \
    F(read_bytes, uv, read_bytes, "bytes", read_bytes, u, 0)                                \
    F(write_bytes, uv, write_bytes, "bytes", write_bytes, u, 0)                             \
    F(majflt, uv, majflt, "", majflt, u, 0)                                                 \
    F(flags, u32, flags, "", flags, x, 0)                                                   \
    F(children_ns, uv, children_ns, "ns", children_ns, u, 0)

/* ... and of the machine's. */
#define CT_HOST_SAMPLE_FIELDS(F)                                                            \
    F(cpus, u32, cpus, "", cpus, u, 0)                                                      \
    F(busy_ns, uv, busy_ns, "ns", busy_ns, u, 0)                                            \
    F(idle_ns, uv, idle_ns, "ns", idle_ns, u, 0)                                            \
    F(iowait_ns, uv, iowait_ns, "ns", iowait_ns, u, 0)                                      \
    F(steal_ns, uv, steal_ns, "ns", steal_ns, u, 0)                                         \
    F(running, u32, running, "", running, u, 0)                                             \
    F(blocked, u32, blocked, "", blocked, u, 0)                                             \
    F(mem_total, uv, mem_total, "bytes", mem_total, u, 0)                                   \
    F(mem_available, uv, mem_available, "bytes", mem_available, u, 0)                       \
    F(swap_in, uv, swap_in, "", swap_in, u, 0)                                              \
    F(swap_out, uv, swap_out, "", swap_out, u, 0)                                           \
    F(majflt, uv, majflt, "", majflt, u, 0)                                                 \
    F(psi_cpu_some_ns, uv, psi_cpu_some_ns, "ns", psi_cpu_some_ns, u, 0)                             \
    F(psi_io_some_ns, uv, psi_io_some_ns, "ns", psi_io_some_ns, u, 0)                                \
    F(psi_io_full_ns, uv, psi_io_full_ns, "ns", psi_io_full_ns, u, 0)                                \
    F(psi_mem_some_ns, uv, psi_mem_some_ns, "ns", psi_mem_some_ns, u, 0)                             \
    F(psi_mem_full_ns, uv, psi_mem_full_ns, "ns", psi_mem_full_ns, u, 0)                             \
    F(flags, u32, flags, "", flags, x, 0)                                                   \
    F(job_cpus, u32, job_cpus, "", job_cpus, u, 0)                                          \
    F(job_busy_ns, uv, job_busy_ns, "ns", job_busy_ns, u, 0)                                \
    F(job_iowait_ns, uv, job_iowait_ns, "ns", job_iowait_ns, u, 0)                          \
    F(quota_mcpu, u32, quota_mcpu, "", quota_mcpu, u, 0)                                    \
    F(cg_cpu_ns, uv, cg_cpu_ns, "ns", cg_cpu_ns, u, 0)                                      \
    F(throttled_ns, uv, throttled_ns, "ns", throttled_ns, u, 0)

/* FRAME is a definition: a record delivers the fields of its id's first definition. */
#define CT_DEF_RECORDS(R) R(FRAME, frame, CT_FRAME_FIELDS)
#define CT_EVENT_RECORDS(R)                                                                 \
    R(THREAD, thread, CT_THREAD_FIELDS)                                                     \
    R(DEVICE, device, CT_DEVICE_FIELDS)                                                     \
    R(STREAM, stream, CT_STREAM_FIELDS)                                                     \
    R(API, api, CT_API_FIELDS)                                                              \
    R(LAUNCH, launch, CT_LAUNCH_FIELDS)                                                     \
    R(COPY, copy, CT_COPY_FIELDS)                                                           \
    R(GPU, gpu, CT_GPU_FIELDS)                                                              \
    R(MEM, mem, CT_MEM_FIELDS)                                                              \
    R(SYNC, sync, CT_SYNC_FIELDS)                                                           \
    R(CPU, cpu, CT_CPU_FIELDS)                                                              \
    R(LOSS, loss, CT_LOSS_FIELDS)                                                           \
    R(END, end, CT_END_FIELDS)                                                              \
    R(GEMM, gemm, CT_GEMM_FIELDS)                                                           \
    R(SHLIB, shlib, CT_SHLIB_FIELDS)                                                        \
    R(PYTHON, python, CT_PYTHON_FIELDS)                                                     \
    R(NVTX_RANGE, nvtx_range, CT_NVTX_RANGE_FIELDS)                                         \
    R(NVTX_MARK, nvtx_mark, CT_NVTX_MARK_FIELDS)                                           \
    R(NVTX_BEGIN, nvtx_begin, CT_NVTX_BEGIN_FIELDS)                                         \
    R(CAPTURE, capture, CT_CAPTURE_FIELDS)                                                 \
    R(GRAPH, graph, CT_GRAPH_FIELDS)                                                       \
    R(PROC, proc, CT_PROC_FIELDS)                                                          \
    R(PROC_SAMPLE, proc_sample, CT_PROC_SAMPLE_FIELDS)                                     \
    R(HOST_SAMPLE, host_sample, CT_HOST_SAMPLE_FIELDS)
#define CT_RECORDS(R) CT_DEF_RECORDS(R) CT_EVENT_RECORDS(R)

#endif
