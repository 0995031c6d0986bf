/* The fixed-layout records' fields, described once (FORMAT.md section 4), as Darshan describes
 * its counters: an X-macro list per record type that the encoder (ct_enc.c) and the decoder
 * (ct_decode.c, ct_defs.c) expand, and that tests/format/test-format_tables.c checks against
 * FORMAT.md's tables. STRING and STACK (a count, then that many items) are written out by hand.
 *
 * CT_RECORDS(R) calls R(TYPE, member, FIELDS) per record: CT_REC_TYPE, the ct_rec union member
 * (ct_rec_<member>) and the record's field list. A field list FIELDS(F) calls, in wire order,
 *   F(name, kind, member, unit, dump, style)
 * name: the field's name in FORMAT.md; member: the C lvalue in the record struct it maps to;
 * unit: "" or the unit FORMAT.md states (ns, bytes, kHz, bits, lanes); dump, style: the key
 * `cutrace dump` prints it under and how (analyzer/cmd_dump.c: u decimal, d signed, x hex, str
 * a string id, hex16 raw bytes in hex, op<TYPE> the op's name), for the records whose dump line
 * follows the wire order (the others' dump lines are written out by hand). kind, the wire coding:
 *   u32     uv holding a 32-bit value (a larger value makes the record malformed)
 *   uv      uv holding a 64-bit value
 *   sv32    sv holding a signed 32-bit value
 *   dur     uv: the record's ts minus member (an interval's start), 0 if start > ts
 *   dcorr   sv: member (a correlation id) minus the previous one of the chunk
 *   parent  uv: 0 if member is 0, else the zigzag of corr - member (the record's corr, coded
 *           before it)
 *   uuid16  16 raw bytes (an older writer may stop before them: all read as 0)
 * Fields are only ever appended (FORMAT.md section 4): a new one goes at the end of its list. */
#ifndef CT_RECORDS_H
#define CT_RECORDS_H

#define CT_FRAME_FIELDS(F)                                                                  \
    F(id, u32, id, "", id, u)                                                               \
    F(function, u32, function, "", function, str)                                           \
    F(module, u32, module, "", module, str)                                                 \
    F(offset, uv, offset, "bytes", offset, x)

#define CT_THREAD_FIELDS(F)                                                                 \
    F(tid, u32, tid, "", thread, u)                                                         \
    F(name, u32, name, "", name, str)                                                       \
    F(flags, u32, flags, "", flags, u)

#define CT_DEVICE_FIELDS(F)                                                                 \
    F(device, u32, device, "", device, u)                                                   \
    F(name, u32, name, "", name, str)                                                       \
    F(uuid, uuid16, uuid, "bytes", uuid, hex16)                                             \
    F(cc_major, u32, cc_major, "", cc_major, u)                                             \
    F(cc_minor, u32, cc_minor, "", cc_minor, u)                                             \
    F(sm_count, u32, sm_count, "", sm_count, u)                                             \
    F(clock_khz, u32, clock_khz, "kHz", clock_khz, u)                                       \
    F(mem_clock_khz, u32, mem_clock_khz, "kHz", mem_clock_khz, u)                           \
    F(mem_bus_bits, u32, mem_bus_bits, "bits", mem_bus_bits, u)                             \
    F(mem_bytes, uv, mem_bytes, "bytes", mem_bytes, u)                                      \
    F(l2_bytes, u32, l2_bytes, "bytes", l2_bytes, u)                                        \
    F(max_threads_per_sm, u32, max_threads_per_sm, "", max_threads_per_sm, u)               \
    F(regs_per_sm, u32, regs_per_sm, "", regs_per_sm, u)                                    \
    F(smem_per_sm, u32, smem_per_sm, "bytes", smem_per_sm, u)                               \
    F(warp_size, u32, warp_size, "", warp_size, u)                                          \
    F(async_engines, u32, async_engines, "", async_engines, u)                              \
    F(concurrent_kernels, u32, concurrent_kernels, "", concurrent_kernels, u)               \
    F(link_kind, u32, link_kind, "", link_kind, u)                                          \
    F(link_gen, u32, link_gen, "", link_gen, u)                                             \
    F(link_width, u32, link_width, "lanes", link_width, u)                                  \
    F(pci_domain, u32, pci_domain, "", pci_domain, u)                                       \
    F(pci_bus, u32, pci_bus, "", pci_bus, u)                                                \
    F(pci_device, u32, pci_device, "", pci_device, u)

#define CT_STREAM_FIELDS(F)                                                                 \
    F(op, u32, op, "", op, opSTREAM)                                                        \
    F(stream, uv, stream, "", stream, x)                                                    \
    F(context, uv, context, "", context, x)                                                 \
    F(device, u32, device, "", device, u)                                                   \
    F(flags, u32, flags, "", flags, u)                                                      \
    F(priority, sv32, priority, "", priority, d)

#define CT_API_FIELDS(F)                                                                    \
    F(dur, dur, start, "ns", dur, u)                                                        \
    F(function, u32, function, "", function, str)                                           \
    F(result, u32, result, "", result, u)                                                   \
    F(dcorr, dcorr, corr, "", corr, u)                                                      \
    F(parent, parent, parent, "", parent, u)                                                \
    F(flags, u32, flags, "", flags, u)                                                      \
    F(stack, u32, stack, "", stack, u)

#define CT_LAUNCH_FIELDS(F)                                                                 \
    F(dcorr, dcorr, corr, "", corr, u)                                                      \
    F(function, u32, function, "", function, str)                                           \
    F(symbol, u32, symbol, "", symbol, str)                                                 \
    F(grid_x, u32, grid[0], "", grid_x, u)                                                  \
    F(grid_y, u32, grid[1], "", grid_y, u)                                                  \
    F(grid_z, u32, grid[2], "", grid_z, u)                                                  \
    F(block_x, u32, block[0], "", block_x, u)                                               \
    F(block_y, u32, block[1], "", block_y, u)                                               \
    F(block_z, u32, block[2], "", block_z, u)                                               \
    F(shared_bytes, u32, shared_bytes, "bytes", shared_bytes, u)                            \
    F(stream, uv, stream, "", stream, x)                                                    \
    F(context, uv, context, "", context, x)                                                 \
    F(device, u32, device, "", device, u)                                                   \
    F(flags, u32, flags, "", flags, u)

#define CT_COPY_FIELDS(F)                                                                   \
    F(dcorr, dcorr, corr, "", corr, u)                                                      \
    F(op, u32, op, "", op, opCOPY)                                                          \
    F(dir, u32, dir, "", dir, u)                                                            \
    F(bytes, uv, bytes, "bytes", bytes, u)                                                  \
    F(src_kind, u32, src_kind, "", src_kind, u)                                             \
    F(dst_kind, u32, dst_kind, "", dst_kind, u)                                             \
    F(flags, u32, flags, "", flags, u)                                                      \
    F(stream, uv, stream, "", stream, x)                                                    \
    F(device, u32, device, "", device, u)                                                   \
    F(peer_device, u32, peer_device, "", peer, u)

#define CT_GPU_FIELDS(F)                                                                    \
    F(dur, dur, start, "ns", dur, u)                                                        \
    F(dcorr, dcorr, corr, "", corr, u)                                                      \
    F(device, u32, device, "", device, u)                                                   \
    F(kind, u32, kind, "", kind, u)                                                         \
    F(stream, uv, stream, "", stream, x)                                                    \
    F(flags, u32, flags, "", flags, u)

#define CT_MEM_FIELDS(F)                                                                    \
    F(op, u32, op, "", op, opMEM)                                                           \
    F(kind, u32, kind, "", kind, u)                                                         \
    F(dcorr, dcorr, corr, "", corr, u)                                                      \
    F(address, uv, address, "", address, x)                                                 \
    F(size, uv, size, "bytes", size, u)                                                     \
    F(device, u32, device, "", device, u)                                                   \
    F(result, u32, result, "", result, u)                                                   \
    F(stack, u32, stack, "", stack, u)                                                      \
    F(stream, uv, stream, "", stream, x)                                                    \
    F(handle, uv, handle, "", handle, x)

#define CT_SYNC_FIELDS(F)                                                                   \
    F(dur, dur, start, "ns", dur, u)                                                        \
    F(dcorr, dcorr, corr, "", corr, u)                                                      \
    F(kind, u32, kind, "", kind, u)                                                         \
    F(object, uv, object, "", object, x)

#define CT_CPU_FIELDS(F)                                                                    \
    F(tid, u32, tid, "", thread, u)                                                         \
    F(user_ns, uv, user_ns, "ns", user_ns, u)                                               \
    F(sys_ns, uv, sys_ns, "ns", sys_ns, u)

#define CT_LOSS_FIELDS(F)                                                                   \
    F(reason, u32, reason, "", reason, u)                                                   \
    F(count, uv, count, "", count, u)                                                       \
    F(tid, u32, tid, "", thread, u)                                                         \
    F(corr, uv, corr, "", corr, u)                                                          \
    F(why, u32, why, "", why, u)

#define CT_END_FIELDS(F)                                                                    \
    F(how, u32, how, "", how, u)                                                            \
    F(code, sv32, code, "", code, d)                                                        \
    F(records, uv, records, "", records, u)                                                 \
    F(lost, uv, lost, "", lost, u)

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
    R(END, end, CT_END_FIELDS)
#define CT_RECORDS(R) CT_DEF_RECORDS(R) CT_EVENT_RECORDS(R)

#endif
