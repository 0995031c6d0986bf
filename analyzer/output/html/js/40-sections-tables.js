  function hbarPlot(kind, id, path, rows, label) {
    /* rows: [{label, title, value, vpath, text, color, peak, peakPath, mark}] on one scale */
    var L = 300, R = 230, RH = 20, T = 4, H = T + rows.length * RH + 6, PW = W - L - R;
    var svg = plotSvg(kind, id, path, H, label), mx = 0;
    rows.forEach(function (r) { mx = Math.max(mx, r.value || 0, r.peak || 0); });
    rows.forEach(function (r, k) {
      var y = T + k * RH, w = mx > 0 ? (r.value || 0) / mx * PW : 0;
      var lab = r.label.length > 48 ? r.label.slice(0, 47) + '…' : r.label;
      append(svg, append(bind(svgText(L - 6, y + 13, lab, { 'text-anchor': 'end' }), r.lpath), tip(r.label)));
      append(svg, append(bind(s('rect', { x: L, y: y + 2, width: w.toFixed(2), height: RH - 6, fill: r.color || 'var(--busy)' }), r.vpath), tip(r.label + ': ' + r.text)));
      if (r.peak) {
        var px = L + r.peak / mx * PW;
        append(svg, append(bind(s('line', { 'class': 'ct-peak', x1: px, x2: px, y1: y, y2: y + RH - 2 }), r.peakPath), tip('peak ' + fmtGbps(r.peak))));
      }
      append(svg, svgText(L + Math.max(w, r.peak ? r.peak / mx * PW : 0) + 6, y + 13, r.text));
    });
    return svg;
  }

  function sectionKernels(main) {
    var ks = D.kernels || [];
    /* without any GPU timing the kernels are ranked by launches (JSON.md: counted untimed) */
    var timed = ks.some(function (k) { return !missing(k.total_ns); });
    append(main, h('h2', { id: 'kernels' }, timed ? 'Top kernels by GPU time' : 'Top kernels by launches (no GPU timing)'));
    if (!ks.length) { append(main, h('p', { 'class': 'ct-muted' }, 'No kernels.')); return; }
    var rows = [];
    ks.forEach(function (k, i) {
      if (rows.length >= 15 || (timed && missing(k.total_ns))) return;
      var kp = 'kernels.' + i;
      rows.push(timed ? { label: k.name, lpath: kp + '.name', value: k.total_ns, vpath: kp + '.total_ns',
        text: fmtNs(k.total_ns) + ' (' + fmtPct(k.time_pct) + ') · ' + fmtCount(k.instances) + '× · avg ' + fmtNs(k.avg_ns) }
        : { label: k.name, lpath: kp + '.name', value: k.instances, vpath: kp + '.instances', text: fmtCount(k.instances) + ' launches' });
    });
    append(main, box([hbarPlot('kernels', 'plot-kernels', 'kernels', rows, timed ? 'top kernels by GPU time' : 'top kernels by launches'),
      h('p', { 'class': 'ct-muted' }, (timed ? 'GPU time summed over instances, share of all kernels\' time, instances, average. ' :
        'No kernel has a GPU interval (cutrace run --gpu-timing all times them): launches per kernel. ') +
        (ks.length > rows.length ? (ks.length - rows.length) + ' more kernels in the document.' : ''))]));
  }

  function copyPeak(c) {
    if (!missing(c.peak_gbps)) return c.peak_gbps;
    if (!missing(c.peak_pct) && c.peak_pct > 0 && !missing(c.gbps)) return c.gbps * 100 / c.peak_pct;
    return null;
  }
  function sectionCopies(main) {
    var cs = D.copies || [];
    append(main, h('h2', { id: 'copies' }, 'Copies by kind: achieved bandwidth'));
    if (!cs.length) { append(main, h('p', { 'class': 'ct-muted' }, 'No copies or sets.')); return; }
    var rows = cs.map(function (c, i) {
      var pk = copyPeak(c), cp = 'copies.' + i;
      return { label: c.op + ' ' + c.host_kind, lpath: cp + '.op', value: c.gbps || 0, vpath: cp + '.gbps',
        color: c.host_kind === 'pageable' ? 'var(--loading)' : 'var(--busy)', peak: pk,
        peakPath: !missing(c.peak_gbps) ? cp + '.peak_gbps' : cp + '.peak_pct',
        text: fmtGbps(c.gbps) + (pk ? ' (' + fmtPct(100 * (c.gbps || 0) / pk) + ' of ' + fmtGbps(pk) + ')' : ', peak unknown') };
    });
    var tb = h('tbody');
    cs.forEach(function (c, i) {
      var cp = 'copies.' + i;
      append(tb, h('tr', null, [h('td', null, [val(cp + '.op'), ' ', val(cp + '.host_kind')]),
        h('td', { 'class': 'ct-num' }, val(cp + '.count', fmtCount)), h('td', { 'class': 'ct-num' }, val(cp + '.bytes', fmtBytes)),
        h('td', { 'class': 'ct-num' }, val(cp + '.total_ns', fmtNs)), h('td', { 'class': 'ct-num' }, val(cp + '.gbps', fmtGbps)),
        h('td', { 'class': 'ct-num' }, val(cp + '.peak_pct', fmtPct)),
        h('td', null, c.upper_bounds ? 'upper bounds: every timed one ended before its end could be timed' : '')]));
    });
    append(main, box([hbarPlot('copies', 'plot-copies', 'copies', rows, 'copy bandwidth against the device\'s peak'),
      legend([{ label: 'pageable host memory', color: 'var(--loading)' }, { label: 'pinned or no host side', color: 'var(--busy)' },
        { label: 'dashed tick: the device\'s peak (host link, or memory for device-side copies)', color: '#fff' }]),
      h('table', null, [h('thead', null, h('tr', null, ['kind', 'count', 'bytes', 'GPU time', 'achieved', 'of peak', ''].map(function (t, k) {
        return h('th', k && k < 6 ? { 'class': 'ct-num' } : null, t);
      }))), tb])]));
  }

  function sectionRanks(main) {
    var rs = D.ranks || [];
    if (rs.length < 2) return;
    /* processes of a fork tree (no rank variable) are compared too, but none is a straggler */
    var ranked = rs.some(function (r) { return r.rank !== null && r.rank !== undefined; });
    append(main, h('h2', { id: 'ranks' }, (ranked ? 'Ranks' : 'Processes') + ': GPU busy and idle'));
    var L = 190, R = 200, RH = 20, T = 4, H = T + rs.length * RH + 6, PW = W - L - R;
    var svg = plotSvg('ranks', 'plot-ranks', 'ranks', H, 'GPU busy and idle share per rank');
    rs.forEach(function (r, i) {
      var rp = 'ranks.' + i, y = T + i * RH, busy = r.gpu_busy_pct, idle = r.gpu_idle_pct;
      var name = (r.rank === null ? 'pid ' + r.pid : 'rank ' + r.rank) + ' (' + r.host + ')';
      append(svg, bind(svgText(L - 6, y + 13, (r.straggler ? '▲ ' : '') + name, { 'text-anchor': 'end', 'font-weight': r.straggler ? '700' : '400' }), r.rank === null ? rp + '.pid' : rp + '.rank'));
      if (missing(busy)) {
        append(svg, svgText(L + 4, y + 13, 'no complete GPU timing'));
      } else {
        append(svg, append(bind(s('rect', { x: L, y: y + 2, width: (busy / 100 * PW).toFixed(2), height: RH - 6, fill: BUSY.color }), rp + '.gpu_busy_pct'), tip('busy ' + fmtPct(busy))));
        append(svg, append(bind(s('rect', { x: (L + busy / 100 * PW).toFixed(2), y: y + 2, width: ((idle || 0) / 100 * PW).toFixed(2), height: RH - 6, fill: 'var(--unknown)' }), rp + '.gpu_idle_pct'), tip('idle ' + fmtPct(idle))));
        if (r.straggler) append(svg, s('rect', { x: L - 1, y: y + 1, width: PW + 2, height: RH - 4, fill: 'none', stroke: '#000', 'stroke-width': 2 }));
      }
      var note = svgText(W - R + 6, y + 13, '');
      append(note, bind(s('tspan', null, fmtPct(busy)), rp + '.gpu_busy_pct'));
      append(note, ' busy');
      if (r.straggler) append(note, [' · straggler: ', bind(s('tspan', { 'font-weight': '700' }, r.straggler), rp + '.straggler')]);
      append(svg, note);
    });
    append(main, box([svg, legend([{ label: 'GPU busy (share of the busiest device\'s window)', color: BUSY.color },
      { label: 'GPU idle', color: 'var(--unknown)' }, { label: '▲ and a black frame: straggler', color: '#fff' }])]));
  }

  function sectionSteps(main) {
    var its = (D.nvtx && D.nvtx.iterations) || [];
    if (!its.length) return;
    append(main, h('h2', { id: 'steps' }, 'NVTX steps: time per iteration'));
    its.forEach(function (it, i) {
      var ip = 'nvtx.iterations.' + i;
      append(main, h('h3', null, [it.domain ? [val(ip + '.domain'), ' / '] : null, val(ip + '.name'), ': ', val(ip + '.steps', fmtCount),
        ' steps, median ', val(ip + '.median_ns', fmtNs), ', p90 ', val(ip + '.p90_ns', fmtNs), ', max ', val(ip + '.max_ns', fmtNs)]));
      var hist = it.histogram || [], L = 70, R = 10, T = 44, PH = 110, H = T + PH + 28, PW = W - L - R;
      var lo = 0, hi = it.max_ns || 1, cmax = 0;
      hist.forEach(function (b) { lo = Math.min(lo, b.lo_ns); hi = Math.max(hi, b.hi_ns); cmax = Math.max(cmax, b.count); });
      if (hist.length) lo = hist[0].lo_ns;
      /* a few slow steps far from the rest: a log axis keeps the bulk readable */
      var logx = lo > 0 && hi / lo > 4;
      var X = logx ? function (t) { return L + Math.log(Math.max(t, lo) / lo) / Math.log(hi / lo) * PW; }
        : function (t) { return L + (t - lo) / (hi - lo || 1) * PW; };
      var svg = plotSvg('steps', 'plot-steps-' + i, ip, H, 'step-time distribution of ' + it.name);
      append(svg, s('line', { 'class': 'ct-axis', x1: L, x2: L, y1: T, y2: T + PH }));
      if (cmax) append(svg, [svgText(L - 6, T + 4, String(cmax), { 'text-anchor': 'end' }), svgText(L - 6, T + PH, '0', { 'text-anchor': 'end' })]);
      hist.forEach(function (b, k) {
        var x0 = X(b.lo_ns), x1 = X(b.hi_ns), hh = b.count / (cmax || 1) * PH;
        append(svg, append(bind(s('rect', { x: x0.toFixed(2), y: (T + PH - hh).toFixed(2), width: Math.max(x1 - x0 - 1, 1).toFixed(2), height: hh.toFixed(2), fill: BUSY.color }), ip + '.histogram.' + k + '.count'),
          tip(fmtNs(b.lo_ns) + ' – ' + fmtNs(b.hi_ns) + ': ' + plural(b.count, 'step'))));
      });
      [['median_ns', 'median'], ['p90_ns', 'p90'], ['max_ns', 'max']].forEach(function (m, k) {
        if (missing(it[m[0]])) return;
        var x = X(it[m[0]]);
        append(svg, bind(s('g', null, [s('line', { 'class': 'ct-peak', x1: x, x2: x, y1: T, y2: T + PH }),
          svgText(x + (k === 2 ? -3 : 3), T - 30 + k * 12, m[1] + ' ' + fmtNs(it[m[0]]), { 'text-anchor': k === 2 ? 'end' : 'start' }),
          s('line', { 'class': 'ct-peak', x1: x, x2: x, y1: T - 40 + k * 12, y2: T })]), ip + '.' + m[0]));
      });
      if (logx) {
        append(svg, s('line', { 'class': 'ct-axis', x1: L, x2: W - R, y1: T + PH, y2: T + PH }));
        for (var q = 0; q <= 6; q++) {
          var tq = lo * Math.pow(hi / lo, q / 6), xq = X(tq);
          append(svg, [s('line', { 'class': 'ct-axis', x1: xq, x2: xq, y1: T + PH, y2: T + PH + 4 }),
            svgText(xq, T + PH + 16, fmtNs(tq), { 'text-anchor': q === 0 ? 'start' : q === 6 ? 'end' : 'middle' })]);
        }
      } else {
        timeAxis(svg, lo, hi, L, W - R, T + PH);
      }
      append(main, box([svg, h('p', { 'class': 'ct-muted' }, (hist.length ? 'Steps per duration bucket (bars; hover for the counts); dashed: median, p90 and max.' :
        'No histogram in this document: median, p90 and max only.') + (logx ? ' Durations on a logarithmic axis.' : ''))]));
      var sl = it.slowest || [];
      if (sl.length) {
        var tb = h('tbody');
        sl.forEach(function (st, k) {
          var sp = ip + '.slowest.' + k, m = st.most_above_median;
          append(tb, h('tr', null, [h('td', { 'class': 'ct-num' }, val(sp + '.pid', String)), h('td', { 'class': 'ct-num' }, val(sp + '.step', String)),
            h('td', { 'class': 'ct-num' }, val(sp + '.start_ns', fmtNs)), h('td', { 'class': 'ct-num' }, val(sp + '.dur_ns', fmtNs)),
            h('td', null, m ? [val(sp + '.most_above_median.part'), ': ', val(sp + '.most_above_median.ns', fmtNs), ' against a median of ',
              val(sp + '.most_above_median.median_ns', fmtNs)] : '')]));
        });
        append(main, [h('p', null, 'The slowest steps:'), h('table', null, [h('thead', null, h('tr', null, [h('th', { 'class': 'ct-num' }, 'pid'),
          h('th', { 'class': 'ct-num' }, 'step'), h('th', { 'class': 'ct-num' }, 'start'), h('th', { 'class': 'ct-num' }, 'duration'),
          h('th', null, 'furthest above its median')])), tb])]);
      }
    });
  }

  function sectionDiagnoses(main) {
    var ds = D.diagnoses || [];
    append(main, h('h2', { id: 'diagnoses' }, 'Diagnoses'));
    if (!ds.length) { append(main, h('p', { 'class': 'ct-muted' }, ['None above the threshold (', val('min_saving_pct', fmtPct), ' of the window).'])); return; }
    ds.forEach(function (d, i) {
      var dp = 'diagnoses.' + i;
      var sec = h('section', { 'class': 'ct-diag ct-sev-' + d.severity, id: 'diag-' + i, 'data-path': dp });
      var where = deviceWords(d.pid, d.device) + (d.rank !== null && d.rank !== undefined ? ', rank ' + d.rank : '');
      /* a start-up finding says so: the others are of the steady state */
      append(sec, h('h3', null, ['#' + (i + 1) + ' ', bind(h('span', { 'class': 'ct-sev' }, d.severity), dp + '.severity'), ' ', val(dp + '.id'), ' ',
        d.phase === 'startup' ? [h('span', { 'class': 'ct-muted' }, ['(', val(dp + '.phase'), ', apart from the steady state)']), ' '] : '',
        h('span', { 'class': 'ct-muted' }, '(' + where + ')')]));
      append(sec, h('p', { 'class': 'ct-saving' }, d.id === 'oom' ? ['The run is lost: ', val(dp + '.estimated_saving_ns', fmtNs), ' (the window)'] :
        ['Estimated saving: ', val(dp + '.estimated_saving_ns', fmtNs), ' (', val(dp + '.saving_pct', fmtPct), ' of a ', val(dp + '.window_ns', fmtNs), ' window)']));
      append(sec, h('p', null, val(dp + '.message')));
      var dl = h('dl');
      var ev = d.evidence || {}, units = d.evidence_units || {};
      var evl = h('dd');
      Object.keys(ev).forEach(function (k, n) {
        if (n) append(evl, ' · ');
        append(evl, [k.replace(/_(ns|bytes|pct|gbps)$/, '').replace(/_/g, ' ') + ' ', val(dp + '.evidence.' + k, fmtUnit(units[k]), 'strong')]);
      });
      if (Object.keys(ev).length) append(dl, [h('dt', null, 'evidence'), evl]);
      if (d.call_sites && d.call_sites.length) {
        var ul = h('ul', { 'class': 'ct-mono' });
        d.call_sites.forEach(function (c, k) { append(ul, h('li', null, val(dp + '.call_sites.' + k))); });
        append(dl, [h('dt', null, 'call sites'), h('dd', null, ul)]);
      }
      if (d.host_activity && d.host_activity.length) {
        // the thread that fed the GPU's list (no "who"), then the loader workers'
        [[undefined, 'where the host was'], ['loader workers', 'where the loader workers were']].forEach(function (w) {
          var hl = h('ul', { 'class': 'ct-mono' }), any = false;
          d.host_activity.forEach(function (a, k) {
            if (a.who !== w[0]) return;
            any = true;
            var q = dp + '.host_activity.' + k;
            append(hl, h('li', null, [val(q + '.share', function (v) { return fmtPct(100 * v); }, 'strong'), ' ',
              a.call ? ['in ', val(q + '.call'), ' at '] : '', val(q + '.site'), a.frame ? [' \u2190 ', val(q + '.frame')] : '',
              ' (', val(q + '.state'), ')']));
          });
          if (any) append(dl, [h('dt', null, w[1]), h('dd', null, hl)]);
        });
      }
      if (d.nvtx && d.nvtx.text) append(dl, [h('dt', null, 'NVTX'), h('dd', null, val(dp + '.nvtx.text'))]);
      if (d.fix) append(dl, [h('dt', null, 'fix'), h('dd', null, val(dp + '.fix'))]);
      append(sec, dl);
      if (d.detail) append(sec, val(dp + '.detail', null, 'pre'));
      if (d.at && atTarget[i]) {
        var a = h('a', { 'class': 'ct-at', href: '#' + atTarget[i] }, ['where: ', val(dp + '.at.start_ns', fmtNs), ' – ', val(dp + '.at.end_ns', fmtNs), ' (marked #' + (i + 1) + ' in the plot)']);
        if (atTarget[i] === 'plot-overview') a.addEventListener('click', function () { overviewShow(d.at.start_ns, d.at.end_ns); });
        append(sec, h('p', null, a));
      }
      append(main, sec);
    });
  }

