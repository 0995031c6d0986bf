#define _GNU_SOURCE
/* The CPython versions cutrace reads (ctp_pylayout.h). */
#include "ctp_pylayout.h"

#include <dlfcn.h>
#include <stddef.h>
#include <stdio.h>


static const ctp_py_layout ctp_py_layouts[] = {
/* 3.8 to 3.10 share these (co_qualname holds co_name's offset, co_linetable co_lnotab's) */
#define CTP_PY_BEFORE_311                                                                    \
    .one_per_loop = 1, .ts_frame = 24, .cframe_current = CTP_PY_NONE, .fr_code = 32,          \
    .fr_previous = 24, .fr_instr = CTP_PY_NONE, .fr_owner = CTP_PY_NONE, .fr_size = 112,      \
    .fr_is_entry = CTP_PY_NONE, .owner_cstack = CTP_PY_NONE, .co_firstlineno = 40,            \
    .co_filename = 104, .co_qualname = 112, .co_linetable = 120, .co_code = 128,              \
    .str_state = 32, .str_length = 16, .str_ascii_data = 48, .str_utf8_length = 48,           \
    .str_utf8 = 56, .bytes_size = 16, .bytes_data = 32, .ts_chunk = CTP_PY_NONE,           \
    .rt_kbint = CTP_PY_NONE
    {.hex_lo = 0x03080000, .hex_hi = 0x030a0000, .fr_lasti = 104, .lasti_bytes = 1,
     .lines = CTP_PY_LNOTAB, CTP_PY_BEFORE_311},
    {.hex_lo = 0x030a0000, .hex_hi = 0x030b0000, .fr_lasti = 96, .lasti_bytes = 2,
     .lines = CTP_PY_LINES_310, CTP_PY_BEFORE_311},
    {.hex_lo = 0x030b0000, .hex_hi = 0x030c0000, .ts_frame = 56, .cframe_current = 8,
     .fr_code = 32, .fr_previous = 48, .fr_instr = 56, .fr_owner = 69, .fr_size = 72,
     .fr_is_entry = 68, .owner_cstack = CTP_PY_NONE,
     .co_firstlineno = 72, .co_filename = 112, .co_qualname = 128, .co_linetable = 136,
     .co_code = 184,
     .str_state = 32, .str_length = 16, .str_ascii_data = 48, .str_utf8_length = 48,
     .str_utf8 = 56, .bytes_size = 16, .bytes_data = 32, .ts_chunk = 296,
     .rt_kbint = CTP_PY_NONE},
    {.hex_lo = 0x030c0000, .hex_hi = 0x030d0000, .ts_frame = 56, .cframe_current = 0,
     .fr_code = 0, .fr_previous = 8, .fr_instr = 56, .fr_owner = 70, .fr_size = 72,
     .fr_is_entry = CTP_PY_NONE, .owner_cstack = 3,
     .co_firstlineno = 68, .co_filename = 112, .co_qualname = 128, .co_linetable = 136,
     .co_code = 192,
     .str_state = 32, .str_length = 16, .str_ascii_data = 40, .str_utf8_length = 40,
     .str_utf8 = 48, .bytes_size = 16, .bytes_data = 32, .ts_chunk = 232, .rt_kbint = 1536},
    {.hex_lo = 0x030d0000, .hex_hi = 0x030e0000, .ts_frame = 72, .cframe_current = CTP_PY_NONE,
     .fr_code = 0, .fr_previous = 8, .fr_instr = 56, .fr_owner = 70, .fr_size = 72,
     .fr_is_entry = CTP_PY_NONE, .owner_cstack = 3,
     .co_firstlineno = 68, .co_filename = 112, .co_qualname = 128, .co_linetable = 136,
     .co_code = 200,
     .str_state = 32, .str_length = 16, .str_ascii_data = 40, .str_utf8_length = 40,
     .str_utf8 = 48, .bytes_size = 16, .bytes_data = 32, .ts_chunk = 232, .rt_kbint = 2152},
};

const ctp_py_layout *ctp_py_layout_of(unsigned long hex)
{
    for (size_t i = 0; i < sizeof ctp_py_layouts / sizeof ctp_py_layouts[0]; i++)
        if (hex >= ctp_py_layouts[i].hex_lo && hex < ctp_py_layouts[i].hex_hi)
            return &ctp_py_layouts[i];
    return NULL;
}

unsigned long ctp_py_version_hex(void)
{
    const unsigned long *ver = dlsym(RTLD_DEFAULT, "Py_Version");
    if (ver)
        return *ver;
    const char *(*text)(void) = (const char *(*)(void))dlsym(RTLD_DEFAULT, "Py_GetVersion");
    unsigned major, minor, micro, serial = 0;
    char level[3] = "";
    if (!text || sscanf(text(), "%u.%u.%u%2[abrc]%u", &major, &minor, &micro, level, &serial) < 3)
        return 0;
    unsigned rel = !level[0] ? 0xf0 : level[0] == 'a' ? 0xa0 : level[0] == 'b' ? 0xb0 : 0xc0;
    return (unsigned long)major << 24 | minor << 16 | micro << 8 | rel | (serial & 15);
}
