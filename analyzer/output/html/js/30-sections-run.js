  /* ---------- sections ---------- */
  /* JSON.md: processes[].stopped_by, and the signals of a crash (end signal) */
  var STOPPED_BY = {
    disk_full: 'the file system was full (ENOSPC)', quota: 'the disk quota was reached (EDQUOT)',
    file_size_limit: 'the file reached the process\'s file size limit (RLIMIT_FSIZE)',
    write_error: 'a write failed'
  };
  var CRASH_SIGNALS = {4: 1, 7: 1, 8: 1, 11: 1, 31: 1};
  function endWords(pi) {
    var p = D.processes[pi], base = 'processes.' + pi;
    if (!p.complete) return [h('span', null, 'no END record (killed or cut short)')];
    if (p.end === 'stopped')
      return [h('span', null, 'trace stopped early: ' + (STOPPED_BY[p.stopped_by] || STOPPED_BY.write_error) +
        '; the program went on untraced, its end unknown')];
    if (p.end === 'signal' && CRASH_SIGNALS[p.end_code]) return ['crashed: ', val(base + '.end_code')];
    var out = [val(base + '.end')];
    if (p.end_code !== undefined) out.push(' ', val(base + '.end_code'));
    return out;
  }

  /* JSON.md: processes[].lost_records, and of them those whose reason calls for something (the
   * summary's "trace damage" words) */
  var LOST_BY = [
    ['lost_buffer_full', 'because the tracer\'s buffers were full: its writer did not keep up'],
    ['lost_descriptors', 'while the program had closed the trace\'s descriptor and none was left to reopen it with']
  ];
  function lostWords(pi) {
    var p = D.processes[pi], base = 'processes.' + pi, n = 0;
    if (!p.lost_records) return [];
    var out = [val(base + '.lost_records', fmtCount), ' records lost'];
    LOST_BY.forEach(function (r) {
      if (!p[r[0]]) return;
      out.push(n++ ? '; ' : ' (', val(base + '.' + r[0], fmtCount), n > 1 ? ' ' : ' of them ', r[1]);
    });
    if (n) out.push(')');
    return [h('br'), h('span', { 'class': 'ct-lost' }, out)];
  }

  function sectionHeader(main) {
    var title = (P && P.title) || 'cutrace report';
    append(main, h('h1', null, title));
    var ps = D.processes || [], hosts = {}, ranks = 0, devs = 0, wall = 0;
    ps.forEach(function (p) {
      hosts[p.host] = 1;
      if (p.rank !== null && p.rank !== undefined) ranks++;
      devs += (p.devices || []).length;
      wall = Math.max(wall, (p.start_ns || 0) + (p.wall_ns || 0));
    });
    append(main, h('p', { 'class': 'ct-muted' }, [
      plural(ps.length, 'process', 'processes'), ' on ', plural(Object.keys(hosts).length, 'host'), ', ',
      ranks ? plural(ranks, 'rank') : 'no ranks', ', ', plural(devs, 'device'),
      ', ', val('records', fmtCount), ' records; run: ', fmtNs(wall), ' from the first activity to the last'
    ]));
    var tb = h('tbody');
    ps.forEach(function (p, i) {
      var b = 'processes.' + i, dv = h('td');
      (p.devices || []).forEach(function (d, k) {
        if (k) append(dv, h('br'));
        append(dv, ['GPU ', val(b + '.devices.' + k + '.device'), d.name ? [': ', val(b + '.devices.' + k + '.name')] : null]);
        if (d.memory_bytes > 0) append(dv, [' (', val(b + '.devices.' + k + '.memory_bytes', fmtBytes), ')']);
      });
      append(tb, h('tr', null, [
        h('td', { 'class': 'ct-name ct-mono' }, [val(b + '.command'), h('br'), h('span', { 'class': 'ct-muted' }, ['trace: ', val(b + '.file')])]),
        h('td', null, val(b + '.host')),
        h('td', { 'class': 'ct-num' }, val(b + '.pid', String)),
        h('td', { 'class': 'ct-num' }, val(b + '.rank', function (v) { return v === null ? '–' : String(v); })),
        dv, h('td', { 'class': 'ct-num' }, val(b + '.wall_ns', fmtNs)), h('td', { 'class': 'ct-nowrap' }, endWords(i).concat(lostWords(i)))
      ]));
    });
    append(main, h('table', null, [h('thead', null, h('tr', null, [h('th', null, 'command'), h('th', null, 'host'),
      h('th', { 'class': 'ct-num' }, 'pid'), h('th', { 'class': 'ct-num' }, 'rank'), h('th', null, 'devices'),
      h('th', { 'class': 'ct-num' }, 'wall'), h('th', null, 'exit')])), tb]));
  }

  function sectionVerdict(main) {
    var v = h('div', { 'class': 'ct-verdict', id: 'verdict' });
    var ds = D.diagnoses || [], p = h('p');
    if (!ds.length) {
      append(p, ['No finding saves at least ', val('min_saving_pct', fmtPct), ' of its window.']);
    } else {
      append(p, [h('strong', null, 'Verdict: '), plural(ds.length, 'finding') + '. ']);
      ds.slice(0, 3).forEach(function (d, i) {
        var b = 'diagnoses.' + i;
        append(p, [i === 0 ? 'The most valuable: ' : i === 1 ? '; then ' : '; ',
          h('a', { href: '#diag-' + i }, val(b + '.id')), ' (', deviceWords(d.pid, d.device), ') ',
          d.id === 'oom' ? 'lost the run' : ['saves ~', val(b + '.estimated_saving_ns', fmtNs), ' (',
            val(b + '.saving_pct', fmtPct), ' of its window)']]);
      });
      append(p, '.');
    }
    append(v, p);
    var shown = 0, more = 0;
    (D.breakdown || []).forEach(function (b, i) {
      if (!b.complete) return;
      if (++shown > 4) { more++; return; }
      var bp = 'breakdown.' + i;
      append(v, h('p', null, [deviceWords(b.pid, b.device) + ': the GPU is busy ',
        val(bp + '.gpu_busy_ns', fmtNs), ' of a ', val(bp + '.window_ns', fmtNs), ' window (',
        fmtPct(b.window_ns ? 100 * b.gpu_busy_ns / b.window_ns : 0), '). Amdahl: infinitely fast GPU work makes it at most ',
        val(bp + '.max_speedup_gpu', fmtRatio), ' faster; hiding every host-side gap at most ',
        val(bp + '.max_speedup_host', fmtRatio), '.']));
    });
    if (more) append(v, h('p', null, ['And ', plural(more, 'more device'), ': see ', h('a', { href: '#breakdown' }, 'the breakdown'), '.']));
    append(main, v);
  }

  function sectionUtil(main) {
    var bs = D.breakdown || [];
    var any = bs.some(function (b) { return b.complete && b.series; });
    append(main, h('h2', { id: 'utilization' }, 'GPU utilization over time'));
    if (!any) {
      append(main, h('p', { 'class': 'ct-muted' }, bs.length ? 'No device has a complete, timed breakdown with a series (GPU timing off or 1 in N: `cutrace run --gpu-timing all`).' : 'No GPU activity.'));
      return;
    }
    bs.forEach(function (b, i) {
      if (!b.complete || !b.series) return;
      var sr = b.series, sp = 'breakdown.' + i + '.series', n = sr.busy_ns.length;
      var words = deviceWords(b.pid, b.device);
      append(main, h('h3', null, [words, ': ', val(sp + '.bin_ns', fmtNs), ' bins']));
      var cause = [{ arr: sr.busy_ns, path: sp + '.busy_ns', label: BUSY.label, color: BUSY.color }];
      CAUSES.forEach(function (c) {
        cause.push({ arr: (sr.idle_by_cause || {})[c.key] || new Array(n).fill(0), path: sp + '.idle_by_cause.' + c.key, label: 'idle: ' + c.label, color: c.color });
      });
      var uid = 'plot-util-' + i;
      var pu = stackPlot({ kind: 'util', id: uid, path: sp, start: sr.start_ns, binNs: sr.bin_ns, layers: cause,
        ymax: sr.bin_ns, yfmt: function (v) { return fmtPct(100 * v / sr.bin_ns); }, vfmt: fmtNs,
        label: 'GPU utilization over time, idle time by cause, ' + words });
      markDiagnoses(pu, b.pid, b.device, uid, function (d) { return d.id !== 'oom'; });
      append(main, box([h('p', { 'class': 'ct-muted' }, 'GPU busy (bottom) and idle time coloured by the cause of each idle gap; each column one bin (hover for its figures).'),
        pu.svg, legend([{ label: BUSY.label, color: BUSY.color, extra: val('breakdown.' + i + '.gpu_busy_ns', fmtNs) }].concat(CAUSES.map(function (c) {
          return { label: 'idle, ' + c.label, color: c.color, extra: b.gaps && b.gaps[c.key] ? val('breakdown.' + i + '.gaps.' + c.key + '.total_ns', fmtNs) : null };
        })))]));
      var host = [{ arr: sr.busy_ns, path: sp + '.busy_ns', label: BUSY.label, color: BUSY.color }];
      HOST_STATES.forEach(function (c) {
        host.push({ arr: (sr.idle_by_host || {})[c.key] || new Array(n).fill(0), path: sp + '.idle_by_host.' + c.key, label: 'idle, ' + c.label, color: c.color });
      });
      var hid = 'plot-host-' + i;
      var ph = stackPlot({ kind: 'host', id: hid, path: sp, start: sr.start_ns, binNs: sr.bin_ns, layers: host, height: 90,
        ymax: sr.bin_ns, yfmt: function (v) { return fmtPct(100 * v / sr.bin_ns); }, vfmt: fmtNs,
        label: 'host state while the GPU idled, ' + words });
      append(main, box([h('p', { 'class': 'ct-muted' }, 'What the host did while the GPU idled, on the same time axis.'),
        ph.svg, legend([{ label: BUSY.label, color: BUSY.color }].concat(HOST_STATES.map(function (c) {
          return { label: 'idle, ' + c.label, color: c.color, extra: val('breakdown.' + i + '.' + c.field, fmtNs) };
        })))]));
    });
  }

  function sectionBreakdown(main) {
    var bs = D.breakdown || [];
    append(main, h('h2', { id: 'breakdown' }, 'Where the time went'));
    var rows = bs.map(function (b, i) { return i; });
    if (!rows.length) {
      append(main, h('p', { 'class': 'ct-muted' }, 'No GPU activity.'));
      return;
    }
    var L = 170, R = 90, RH = 22, T = 6, H = T + rows.length * (2 * RH + 14) + 4;
    var svg = plotSvg('breakdown', 'plot-breakdown', 'breakdown', H, 'breakdown of each device\'s window');
    rows.forEach(function (i, r) {
      var b = bs[i], bp = 'breakdown.' + i, y = T + r * (2 * RH + 14), x = L, PW = W - L - R;
      var win = b.window_ns || 1;
      if (!b.complete) { /* untimed work would count as idle: no figures (JSON.md) */
        var why = svgText(0, y + 15, deviceWords(b.pid, b.device) + ': ');
        append(why, [bind(s('tspan', null, fmtCount(b.gpu_untimed_operations)), bp + '.gpu_untimed_operations'), ' of ',
          bind(s('tspan', null, fmtCount(b.gpu_operations)), bp + '.gpu_operations'),
          ' GPU operations without GPU timing: no breakdown (trace with cutrace run --gpu-timing all)']);
        append(svg, why);
        return;
      }
      append(svg, svgText(0, y + 15, deviceWords(b.pid, b.device) + ': host state'));
      append(svg, svgText(0, y + RH + 15, deviceWords(b.pid, b.device) + ': gap cause'));
      var segs = [{ f: 'gpu_busy_ns', label: BUSY.label, color: BUSY.color }].concat(HOST_STATES.map(function (c) {
        return { f: c.field, label: 'idle, ' + c.label, color: c.color };
      }));
      segs.forEach(function (sg) {
        var w = (b[sg.f] || 0) / win * PW;
        append(svg, append(bind(s('rect', { x: x.toFixed(2), y: y, width: Math.max(w, 0).toFixed(2), height: RH - 4, fill: sg.color }), bp + '.' + sg.f),
          tip(sg.label + ': ' + fmtNs(b[sg.f]) + ' (' + fmtPct(100 * (b[sg.f] || 0) / win) + ')')));
        x += w;
      });
      x = L;
      append(svg, append(bind(s('rect', { x: x, y: y + RH, width: ((b.gpu_busy_ns || 0) / win * PW).toFixed(2), height: RH - 4, fill: BUSY.color }), bp + '.gpu_busy_ns'),
        tip('GPU busy: ' + fmtNs(b.gpu_busy_ns))));
      x += (b.gpu_busy_ns || 0) / win * PW;
      CAUSES.forEach(function (c) {
        if (!b.gaps || !b.gaps[c.key]) return;
        var t = b.gaps[c.key].total_ns || 0, w = t / win * PW;
        append(svg, append(bind(s('rect', { x: x.toFixed(2), y: y + RH, width: w.toFixed(2), height: RH - 4, fill: c.color }), bp + '.gaps.' + c.key + '.total_ns'),
          tip('idle, ' + c.label + ': ' + fmtNs(t) + ' in ' + b.gaps[c.key].count + ' gaps')));
        x += w;
      });
      append(svg, bind(svgText(W - R + 6, y + 15, fmtNs(b.window_ns)), bp + '.window_ns'));
    });
    markBreakdown(svg, rows);
    append(main, box([h('p', { 'class': 'ct-muted' }, 'Each device\'s window (first to last GPU activity): GPU busy, then the idle time by what the host did, and by the cause of each idle gap (short gaps between operations are in neither cause).'),
      svg, legend([{ label: BUSY.label, color: BUSY.color }].concat(HOST_STATES.map(function (c) { return { label: 'idle, ' + c.label, color: c.color }; }),
        CAUSES.map(function (c) { return { label: 'gap: ' + c.label, color: c.color }; })))]));
  }
  /* start-up apart from the steady state (JSON.md startup[]): where each device's steady state
   * begins, and the start-up's parts; nothing where no device has a start-up */
  function sectionStartup(main) {
    var su = (D.startup || []).map(function (x, i) { return i; }).filter(function (i) {
      return D.startup[i].steady_from_ns !== null && D.startup[i].steady_from_ns !== undefined;
    });
    if (!su.length) return;
    append(main, h('h2', { id: 'startup' }, 'Start-up and steady state'));
    var ul = h('ul');
    su.forEach(function (i) {
      var x = D.startup[i], p = 'startup.' + i, parts = [];
      var item = [deviceWords(x.pid, x.device) + ': steady state from ', val(p + '.steady_from_ns', fmtNs),
        ' (found by ', val(p + '.found'), '); start-up ', val(p + '.startup_ns', fmtNs), ', CUDA init ',
        val(p + '.init_ns', fmtNs)];
      (x.libraries || []).forEach(function (l, k) {
        var q = p + '.libraries.' + k;
        parts.push(h('li', null, ['library loading: ', val(q + '.name'), ' in use from ', val(q + '.seen_ns', fmtNs),
          ', the host ', val(q + '.host_ns', fmtNs), ' before its first calls (loading, its handle made)']));
      });
      if (x.allocations) parts.push(h('li', null, ['first allocations: ', val(p + '.allocations', fmtCount), ', ',
        val(p + '.allocation_ns', fmtNs), ' in them']));
      if (x.autotune_syncs) parts.push(h('li', null, ['autotuning: ', val(p + '.autotune_syncs', fmtCount),
        ' synchronizations in an algorithm search, blocked ', val(p + '.autotune_sync_ns', fmtNs), ', ',
        val(p + '.trial_kernels', fmtCount), ' kernels the steady state never runs']));
      append(ul, h('li', null, item.concat(parts.length ? [h('ul', null, parts)] : [])));
    });
    append(main, box([h('p', { 'class': 'ct-muted' }, 'The diagnoses are of the steady state but those marked start-up.'), ul]));
  }
  /* diagnoses with a place on a device without a utilization plot: marked on its breakdown row */
  function markBreakdown(svg, rows) {
    (D.diagnoses || []).forEach(function (d, i) {
      var at = d.at;
      if (!at || atTarget[i]) return;
      rows.forEach(function (bi, r) {
        var b = D.breakdown[bi];
        if (atTarget[i] || !b.complete || b.pid !== at.pid || (at.device !== null && at.device !== undefined && b.device !== at.device)) return;
        var PW = W - 170 - 90, lo = b.window_start_ns, win = b.window_ns || 1;
        var x0 = 170 + Math.max(0, at.start_ns - lo) / win * PW, x1 = 170 + Math.min(win, at.end_ns - lo) / win * PW;
        if (!(x1 - x0 >= 3)) x1 = x0 + 3;
        var y = 6 + r * 58;
        var g = bind(s('g'), 'diagnoses.' + i + '.at');
        append(g, [s('rect', { 'class': 'ct-atmark', x: x0.toFixed(2), y: y - 2, width: (x1 - x0).toFixed(2), height: 44 }),
          tip('diagnosis #' + (i + 1) + ' ' + d.id + ' (its time within the window)')]);
        append(svg, g);
        atTarget[i] = 'plot-breakdown';
      });
    });
  }

  function sectionVram(main) {
    var vs = D.vram || [];
    append(main, h('h2', { id: 'vram' }, 'Memory in use'));
    if (!vs.length) { append(main, h('p', { 'class': 'ct-muted' }, 'No allocations.')); return; }
    vs.forEach(function (v, i) {
      var vp = 'vram.' + i, words = deviceWords(v.pid, v.device);
      append(main, h('h3', null, [words, ': peak ', val(vp + '.peak_bytes', fmtBytes), ' at ', val(vp + '.peak_time_ns', fmtNs),
        '; ', val(vp + '.allocations', fmtCount), ' allocations, ', val(vp + '.frees', fmtCount), ' frees, ',
        val(vp + '.failed_count', fmtCount), ' failed']));
      if (v.curve && v.curve.max_bytes) {
        var c = v.curve, mx = v.peak_bytes || 0;
        c.max_bytes.forEach(function (x) { if (x > mx) mx = x; });
        var pl = stackPlot({ kind: 'vram', id: 'plot-vram-' + i, path: vp + '.curve', start: c.start_ns, binNs: c.bin_ns,
          layers: [{ arr: c.max_bytes, path: vp + '.curve.max_bytes', label: 'in use (highest in the bin)', color: 'var(--compute)' }],
          ymax: mx || 1, yfmt: fmtBytes, vfmt: fmtBytes, height: 120, label: 'device memory in use over time, ' + words });
        var px = pl.x(v.peak_time_ns);
        var g = bind(s('g'), vp + '.peak_bytes');
        append(g, [s('line', { 'class': 'ct-peak', x1: px, x2: px, y1: pl.top, y2: pl.bottom }),
          svgText(Math.min(px + 4, W - 150), pl.top + 10, 'peak ' + fmtBytes(v.peak_bytes), { 'font-weight': '700' })]);
        append(pl.svg, g);
        if (typeof v.device === 'number') markDiagnoses(pl, v.pid, v.device, 'plot-vram-' + i, function (d) { return d.id === 'oom'; });
        append(main, box([pl.svg, legend([{ label: 'memory in use (highest in each bin)', color: 'var(--compute)' },
          { label: 'dashed line: the peak', color: '#fff' }])]));
      }
      var holders = v.peak_holders || [];
      if (holders.length) {
        var tb = h('tbody');
        holders.forEach(function (ho, k) {
          var hp = vp + '.peak_holders.' + k;
          append(tb, h('tr', null, [h('td', { 'class': 'ct-num' }, val(hp + '.bytes', fmtBytes)),
            h('td', { 'class': 'ct-num' }, val(hp + '.allocations', fmtCount)),
            h('td', { 'class': 'ct-name ct-mono', title: ho.stack || null }, ho.site ? val(hp + '.site') : h('span', { 'class': 'ct-muted' }, '(no stack captured)'))]));
        });
        append(main, h('table', null, [h('thead', null, h('tr', null, [h('th', { 'class': 'ct-num' }, 'held at the peak'),
          h('th', { 'class': 'ct-num' }, 'allocations'), h('th', null, 'call site')])), tb]));
      }
    });
  }
