/* The fixed-layout records' fields, described once (FORMAT.md section 4), as Darshan describes
 * its counters: an X-macro list per record type that the encoder (ct_enc.c) and the decoder
 * (ct_decode.c, ct_defs.c) expand, and that tests/format/test-format_tables.c checks against
 * FORMAT.md's tables. STRING and STACK (a count, then that many items) are written out by hand.
 *
 * CT_RECORDS(R) calls R(TYPE, member, FIELDS) per record: CT_REC_TYPE, the ct_rec union member
 * (ct_rec_<member>) and the record's field list. A field list FIELDS(F) calls, in wire order,
 *   F(name, kind, member, unit)
 * name: the field's name in FORMAT.md; member: the C lvalue in the record struct it maps to;
 * unit: "" or the unit FORMAT.md states (ns, bytes, kHz, bits, lanes). kind, the wire coding:
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
    F(id, u32, id, "")                                                                      \
    F(function, u32, function, "")                                                          \
    F(module, u32, module, "")                                                              \
    F(offset, uv, offset, "bytes")

#define CT_THREAD_FIELDS(F)                                                                 \
    F(tid, u32, tid, "")                                                                    \
    F(name, u32, name, "")                                                                  \
    F(flags, u32, flags, "")

#define CT_DEVICE_FIELDS(F)                                                                 \
    F(device, u32, device, "")                                                              \
    F(name, u32, name, "")                                                                  \
    F(uuid, uuid16, uuid, "bytes")                                                          \
    F(cc_major, u32, cc_major, "")                                                          \
    F(cc_minor, u32, cc_minor, "")                                                          \
    F(sm_count, u32, sm_count, "")                                                          \
    F(clock_khz, u32, clock_khz, "kHz")                                                     \
    F(mem_clock_khz, u32, mem_clock_khz, "kHz")                                             \
    F(mem_bus_bits, u32, mem_bus_bits, "bits")                                              \
    F(mem_bytes, uv, mem_bytes, "bytes")                                                    \
    F(l2_bytes, u32, l2_bytes, "bytes")                                                     \
    F(max_threads_per_sm, u32, max_threads_per_sm, "")                                      \
    F(regs_per_sm, u32, regs_per_sm, "")                                                    \
    F(smem_per_sm, u32, smem_per_sm, "bytes")                                               \
    F(warp_size, u32, warp_size, "")                                                        \
    F(async_engines, u32, async_engines, "")                                                \
    F(concurrent_kernels, u32, concurrent_kernels, "")                                      \
    F(link_kind, u32, link_kind, "")                                                        \
    F(link_gen, u32, link_gen, "")                                                          \
    F(link_width, u32, link_width, "lanes")                                                 \
    F(pci_domain, u32, pci_domain, "")                                                      \
    F(pci_bus, u32, pci_bus, "")                                                            \
    F(pci_device, u32, pci_device, "")

#define CT_STREAM_FIELDS(F)                                                                 \
    F(op, u32, op, "")                                                                      \
    F(stream, uv, stream, "")                                                               \
    F(context, uv, context, "")                                                             \
    F(device, u32, device, "")                                                              \
    F(flags, u32, flags, "")                                                                \
    F(priority, sv32, priority, "")

#define CT_API_FIELDS(F)                                                                    \
    F(dur, dur, start, "ns")                                                                \
    F(function, u32, function, "")                                                          \
    F(result, u32, result, "")                                                              \
    F(dcorr, dcorr, corr, "")                                                               \
    F(parent, parent, parent, "")                                                           \
    F(flags, u32, flags, "")                                                                \
    F(stack, u32, stack, "")

#define CT_LAUNCH_FIELDS(F)                                                                 \
    F(dcorr, dcorr, corr, "")                                                               \
    F(function, u32, function, "")                                                          \
    F(symbol, u32, symbol, "")                                                              \
    F(grid_x, u32, grid[0], "")                                                             \
    F(grid_y, u32, grid[1], "")                                                             \
    F(grid_z, u32, grid[2], "")                                                             \
    F(block_x, u32, block[0], "")                                                           \
    F(block_y, u32, block[1], "")                                                           \
    F(block_z, u32, block[2], "")                                                           \
    F(shared_bytes, u32, shared_bytes, "bytes")                                             \
    F(stream, uv, stream, "")                                                               \
    F(context, uv, context, "")                                                             \
    F(device, u32, device, "")                                                              \
    F(flags, u32, flags, "")

#define CT_COPY_FIELDS(F)                                                                   \
    F(dcorr, dcorr, corr, "")                                                               \
    F(op, u32, op, "")                                                                      \
    F(dir, u32, dir, "")                                                                    \
    F(bytes, uv, bytes, "bytes")                                                            \
    F(src_kind, u32, src_kind, "")                                                          \
    F(dst_kind, u32, dst_kind, "")                                                          \
    F(flags, u32, flags, "")                                                                \
    F(stream, uv, stream, "")                                                               \
    F(device, u32, device, "")                                                              \
    F(peer_device, u32, peer_device, "")

#define CT_GPU_FIELDS(F)                                                                    \
    F(dur, dur, start, "ns")                                                                \
    F(dcorr, dcorr, corr, "")                                                               \
    F(device, u32, device, "")                                                              \
    F(kind, u32, kind, "")                                                                  \
    F(stream, uv, stream, "")                                                               \
    F(flags, u32, flags, "")

#define CT_MEM_FIELDS(F)                                                                    \
    F(op, u32, op, "")                                                                      \
    F(kind, u32, kind, "")                                                                  \
    F(dcorr, dcorr, corr, "")                                                               \
    F(address, uv, address, "")                                                             \
    F(size, uv, size, "bytes")                                                              \
    F(device, u32, device, "")                                                              \
    F(result, u32, result, "")                                                              \
    F(stack, u32, stack, "")                                                                \
    F(stream, uv, stream, "")                                                               \
    F(handle, uv, handle, "")

#define CT_SYNC_FIELDS(F)                                                                   \
    F(dur, dur, start, "ns")                                                                \
    F(dcorr, dcorr, corr, "")                                                               \
    F(kind, u32, kind, "")                                                                  \
    F(object, uv, object, "")

#define CT_CPU_FIELDS(F)                                                                    \
    F(tid, u32, tid, "")                                                                    \
    F(user_ns, uv, user_ns, "ns")                                                           \
    F(sys_ns, uv, sys_ns, "ns")

#define CT_LOSS_FIELDS(F)                                                                   \
    F(reason, u32, reason, "")                                                              \
    F(count, uv, count, "")                                                                 \
    F(tid, u32, tid, "")                                                                    \
    F(corr, uv, corr, "")                                                                   \
    F(why, u32, why, "")

#define CT_END_FIELDS(F)                                                                    \
    F(how, u32, how, "")                                                                    \
    F(code, sv32, code, "")                                                                 \
    F(records, uv, records, "")                                                             \
    F(lost, uv, lost, "")

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
