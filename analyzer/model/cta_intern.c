/* A record's names resolved during the per-record pass (cta_model_int.h): string ids to rows of
 * the kernel and API tables (cached per file and id, so a name is looked up once), the API
 * category a function's name implies, and the rows of the call-site table. */
#include "cta_model_int.h"
#include "cta_feature_int.h"
#include "cta_names.h"

#include <string.h>

uint32_t cta_stat_index(cta_map *names, cta_stat **arr, size_t *cap, const char *name,
                           int borrow)
{
    int added;
    uint32_t i = borrow ? cta_map_get_ref(names, name, strlen(name), &added)
                        : cta_map_get(names, name, strlen(name), &added);
    if (added) {
        cta_grow(arr, cap, i + 1, sizeof **arr);
        cta_sketch_init(&(*arr)[i].d);
        cta_sketch_init(&(*arr)[i].b);
    }
    return i;
}

void cta_stat_merge(cta_stat *d, const cta_stat *s)
{
    cta_sketch_merge(&d->d, &s->d);
    cta_sketch_merge(&d->b, &s->b);
    if (s->failures) {
        d->fail_codes_vary |= s->fail_codes_vary || (d->failures && d->fail_code != s->fail_code);
        d->fail_code = d->failures ? d->fail_code : s->fail_code;
    }
    d->failures += s->failures;
    if (s->d.count || s->b.count)
        d->layer = s->layer; /* as a later call of the function would have set it */
    /* the first launch is the earlier one; at the same time, dst's (its files come first, as
     * the reader's merge orders them) */
    if (s->launched) {
        d->configs_vary |= d->launched && (memcmp(d->grid, s->grid, sizeof d->grid) ||
                                           memcmp(d->block, s->block, sizeof d->block));
        if (!d->launched || s->first_ts < d->first_ts) {
            memcpy(d->grid, s->grid, sizeof d->grid);
            memcpy(d->block, s->block, sizeof d->block);
            d->first_ts = s->first_ts;
        }
    }
    d->configs_vary |= s->configs_vary;
    d->launched += s->launched;
    d->launch_ns += s->launch_ns;
    d->in_graphs += s->in_graphs;
}

uint32_t cta_name_resolve(cta_model *m, uint32_t file, uint32_t sid, int api)
{
    uint32_t slot = file - m->file0;
    uint32_t **cache = api ? &m->acache[slot] : &m->kcache[slot];
    size_t *n = api ? &m->acache_n[slot] : &m->kcache_n[slot];
    if (sid < *n && (*cache)[sid])
        return (*cache)[sid] - 1;
    char tmp[CT_STRTMP];
    const char *ref = sid ? ct_reader_string(m->rd, file, sid) : NULL;
    const char *name = ref ? ref : ct_reader_str(m->rd, file, sid, tmp);
    /* shown as the user wrote them; a name that is not the reader's string is copied */
    char demangled[1024];
    const char *shown = api ? cta_api_display_name(name)
                            : cta_kernel_display_name(name, demangled, sizeof demangled);
    int borrow = shown == name ? ref != NULL : api; /* API display names are literals */
    uint32_t idx = api ? cta_stat_index(&m->api_names, &m->api, &m->api_cap, shown, borrow)
                       : cta_stat_index(&m->kernel_names, &m->kernels, &m->kernels_cap, shown, borrow);
    if (sid < 1u << 24 && ref) { /* cache only resolved names */
        size_t c = *n;
        cta_grow(cache, &c, sid + 1, sizeof **cache);
        if (api) {
            size_t c2 = *n;
            cta_grow(&m->acat[slot], &c2, sid + 1, 1);
        }
        *n = c;
        (*cache)[sid] = idx + 1;
    }
    return idx;
}

uint8_t cta_api_name_category(const char *name)
{
    uint8_t c = CTA_CAT_KNOWN;
    if (strstr(name, "Launch"))
        c |= CTA_CAT_LAUNCH;
    if (strstr(name, "Memcpy") || strstr(name, "Memset") || strstr(name, "MemcpyPeer")) {
        c |= CTA_CAT_COPY;
        if (!strstr(name, "Async"))
            c |= CTA_CAT_SYNCCOPY;
    }
    if (strstr(name, "Malloc") || strstr(name, "MemAlloc") || strstr(name, "Free") ||
        strstr(name, "HostAlloc") || strstr(name, "MemCreate") || strstr(name, "MemRelease") ||
        strstr(name, "HostRegister") || strstr(name, "HostUnregister"))
        c |= CTA_CAT_MEM;
    if (strstr(name, "Synchronize"))
        c |= CTA_CAT_SYNC;
    if (strstr(name, "EventElapsedTime"))
        c |= CTA_CAT_TIMING;
    if (c & (CTA_CAT_LAUNCH | CTA_CAT_COPY | CTA_CAT_MEM))
        c |= CTA_CAT_DETAIL;
    return c;
}

uint8_t cta_api_categorize(cta_model *m, uint32_t file, uint32_t sid, uint32_t idx)
{
    uint32_t slot = file - m->file0;
    if (sid < m->acache_n[slot] && m->acache[slot][sid]) { /* a resolved name */
        uint8_t *c = &m->acat[slot][sid];
        if (!*c)
            *c = cta_api_name_category(cta_map_key(&m->api_names, idx));
        return *c;
    }
    /* a call whose name was lost (a damaged trace) may be a launch or a copy: its LAUNCH or
     * COPY record still joins it by correlation id, so the kernel's launch call time and the
     * copy's host side are not lost with the name */
    uint8_t c = cta_api_name_category(cta_map_key(&m->api_names, idx));
    return sid && !ct_reader_string(m->rd, file, sid) ? c | CTA_CAT_DETAIL : c;
}

void cta_site_add(cta_model *m, cta_proc *p, int kind, uint32_t api_idx, uint32_t stack,
                  uint64_t bytes, uint64_t ns, uint32_t ctx, uint64_t start, int dev)
{
    cta_site_note(p, kind, start, ns, dev);
    if (kind != CTA_SITE_SYNC) /* counted in the thread's context (cta_feat_where_now) */
        CTA_FEAT_CALL(m, where, m, p, ctx, kind, ns);
    uint32_t key[3] = {(uint32_t)kind, api_idx, cta_model_site_group(m, p, stack)};
    int added;
    uint32_t i = cta_map_get(&p->sites, key, sizeof key, &added);
    if (added)
        cta_grow(&p->site, &p->site_cap, i + 1, sizeof *p->site);
    p->site[i].count++;
    p->site[i].bytes += bytes;
    p->site[i].ns += ns;
    if (stack)
        cta_stackset_add(&p->site[i].stacks, stack);
}
