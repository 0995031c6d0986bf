/* cutrace report: draws the page from the embedded `summary --json` document (#ct-data,
 * analyzer/JSON.md) and the page's facts (#ct-page: title, timeline_offset_ns). No library, no
 * network: HTML built with createElement/textContent/setAttribute only (never markup from data,
 * so names stay text) and SVG plots drawn here.
 *
 * Conventions the browser tests read (tests/report/):
 *  - every element showing a value of the document carries data-path (keys and indices joined by
 *    '.') and data-value (String(v) for numbers, booleans and null, the string itself;
 *    JSON.stringify for the small objects and arrays one element shows whole: a diagnosis's
 *    `at`, an overview slice); an element drawn from a larger container (a plot, a card)
 *    carries its data-path alone;
 *  - plots are <svg class="ct-plot" data-plot=KIND data-path=...>;
 *  - diagnosis I is <section class="ct-diag" id="diag-I">, linked by <a class="ct-at"> to the plot
 *    marking its place (an element with data-path "diagnoses.I.at");
 *  - <html data-ct-rendered="1"> once everything was drawn without error; errors are collected
 *    in <html data-ct-errors>. */
(function () {
  'use strict';
  var root = document.documentElement;
  var errors = 0;
  function recordError(msg) {
    errors++;
    var prev = root.getAttribute('data-ct-errors');
    root.setAttribute('data-ct-errors', (prev ? prev + '\n' : '') + msg);
  }
  window.onerror = function (msg, src, line, col) {
    recordError(String(msg) + ' (line ' + line + ':' + col + ')');
  };

  var SVGNS = 'http://www.w3.org/2000/svg';
  var D = null, P = null;
  /* diagnosis index -> id of the plot marking its `at` (the first plot drawn that shows it) */
  var atTarget = {};

  /* ---------- building elements ---------- */
  function append(el, kids) {
    if (kids === undefined || kids === null) return el;
    if (!Array.isArray(kids)) kids = [kids];
    for (var i = 0; i < kids.length; i++) {
      var k = kids[i];
      if (k === null || k === undefined || k === false) continue;
      if (Array.isArray(k)) { append(el, k); continue; }
      el.appendChild(typeof k === 'string' ? document.createTextNode(k) : k);
    }
    return el;
  }
  function setAttrs(el, attrs) {
    if (attrs) for (var a in attrs) if (attrs[a] !== null && attrs[a] !== undefined) el.setAttribute(a, String(attrs[a]));
    return el;
  }
  function h(tag, attrs, kids) { return append(setAttrs(document.createElement(tag), attrs), kids); }
  function s(tag, attrs, kids) { return append(setAttrs(document.createElementNS(SVGNS, tag), attrs), kids); }

  function get(path) {
    var v = D, parts = path.split('.');
    for (var i = 0; i < parts.length; i++) {
      if (v === null || v === undefined) return undefined;
      v = v[parts[i]];
    }
    return v;
  }
  function dataValue(v) {
    if (v === null) return 'null';
    if (typeof v === 'object') return JSON.stringify(v);
    return String(v);
  }
  /* marks el as drawn from the document's container (object or array) at path */
  function bindPath(el, path) {
    el.setAttribute('data-path', path);
    return el;
  }
  /* marks el as showing the document's value at path */
  function bind(el, path) {
    el.setAttribute('data-path', path);
    el.setAttribute('data-value', dataValue(get(path)));
    return el;
  }
  /* a <span> (or tag) showing the value at path, formatted */
  function val(path, fmt, tag) {
    var v = get(path);
    return bind(h(tag || 'span', null, (fmt || fmtPlain)(v)), path);
  }
  function svgText(x, y, str, attrs) {
    var t = s('text', attrs);
    t.setAttribute('x', x); t.setAttribute('y', y);
    t.textContent = str;
    return t;
  }
  function tip(str) { var t = s('title'); t.textContent = str; return t; }

  /* ---------- units ---------- */
  function sig(x) {
    var a = Math.abs(x);
    return a >= 100 ? x.toFixed(0) : a >= 10 ? x.toFixed(1) : x.toFixed(2);
  }
  function missing(v) { return v === null || v === undefined || (typeof v === 'number' && !isFinite(v)); }
  function fmtPlain(v) { return missing(v) ? '–' : typeof v === 'number' ? fmtCount(v) : String(v); }
  function fmtCount(v) {
    if (missing(v)) return '–';
    return Number.isInteger(v) ? v.toLocaleString('en-US') : sig(v);
  }
  function fmtNs(v) {
    if (missing(v)) return '–';
    var a = Math.abs(v);
    if (a < 1e3) return Math.round(v) + ' ns';
    if (a < 1e6) return sig(v / 1e3) + ' µs';
    if (a < 1e9) return sig(v / 1e6) + ' ms';
    if (a < 1e12) return (a < 1e10 ? (v / 1e9).toFixed(3) : sig(v / 1e9)) + ' s';
    return Math.round(v / 1e9).toLocaleString('en-US') + ' s';
  }
  function fmtBytes(v) {
    if (missing(v)) return '–';
    var units = ['B', 'KiB', 'MiB', 'GiB', 'TiB', 'PiB'], i = 0, x = v;
    while (Math.abs(x) >= 1024 && i < units.length - 1) { x /= 1024; i++; }
    return (i === 0 ? String(Math.round(x)) : sig(x)) + ' ' + units[i];
  }
  function fmtPct(v) {
    if (missing(v)) return '–';
    return (Math.abs(v) < 0.1 && v !== 0 ? v.toPrecision(1) : v.toFixed(1)) + '%';
  }
  function fmtGbps(v) {
    if (missing(v)) return '–';
    return (Math.abs(v) < 0.01 && v !== 0 ? v.toPrecision(2) : sig(v)) + ' GB/s';
  }
  function fmtRatio(v) { return missing(v) ? 'unbounded' : sig(v) + '×'; }
  function fmtUnit(unit) {
    return { ns: fmtNs, bytes: fmtBytes, pct: fmtPct, gbps: fmtGbps, ratio: fmtRatio, count: fmtCount }[unit] || fmtPlain;
  }
  function plural(n, one, many) { return n + ' ' + (n === 1 ? one : (many || one + 's')); }

  /* ---------- names of things ---------- */
  var CAUSES = [
    { key: 'data-loading', label: 'data loading', color: 'var(--loading)' },
    { key: 'after-sync', label: 'after a synchronization', color: 'var(--sync)' },
    { key: 'after-sync-copy', label: 'after a synchronous copy', color: 'var(--synccopy)' },
    { key: 'launch', label: 'launching', color: 'var(--launch)' },
    { key: 'host', label: 'host (other)', color: 'var(--host)' }
  ];
  var HOST_STATES = [
    { key: 'in_api', field: 'idle_in_api_ns', label: 'host in CUDA calls (launching)', color: 'var(--launch)' },
    { key: 'blocked', field: 'idle_blocked_ns', label: 'host blocked in a synchronization', color: 'var(--sync)' },
    { key: 'compute', field: 'idle_host_compute_ns', label: 'host computing', color: 'var(--compute)' },
    { key: 'wait', field: 'idle_host_wait_ns', label: 'host waiting (off CPU)', color: 'var(--wait)' },
    { key: 'unknown', field: 'idle_host_unknown_ns', label: 'host computing or waiting (no CPU readings)', color: 'var(--unknown)' }
  ];
  var BUSY = { label: 'GPU busy', color: 'var(--busy)' };
  var CATS = [
    { label: 'API call', color: 'var(--wait)' }, { label: 'kernel', color: 'var(--busy)' },
    { label: 'memcpy', color: 'var(--loading)' }, { label: 'memset', color: 'var(--synccopy)' },
    { label: 'synchronization', color: 'var(--sync)' }, { label: 'allocation or free', color: 'var(--compute)' },
    { label: 'NVTX range', color: 'var(--host)' }
  ];

  function deviceWords(pid, device) {
    return 'pid ' + pid + (device === null || device === undefined ? '' : typeof device === 'number' ? ', GPU ' + device : ', ' + device);
  }
  function procOf(pid) {
    var ps = D.processes || [];
    for (var i = 0; i < ps.length; i++) if (ps[i].pid === pid) return i;
    return -1;
  }

  function legend(items) {
    var box = h('div', { 'class': 'ct-legend' });
    items.forEach(function (it) {
      var sw = h('span', { 'class': 'ct-sw', style: 'background:' + it.color });
      append(box, h('span', null, [sw, it.label].concat(it.extra ? [' ', it.extra] : [])));
    });
    return box;
  }

  /* ---------- plots ---------- */
  var W = 1000;
  function plotSvg(kind, id, path, height, label) {
    var svg = s('svg', {
      'class': 'ct-plot', 'data-plot': kind, id: id, viewBox: '0 0 ' + W + ' ' + height,
      role: 'img', 'aria-label': label, preserveAspectRatio: 'xMinYMin meet'
    });
    bindPath(svg, path);
    return svg;
  }
  function niceStep(span, n) {
    var raw = span / Math.max(1, n), p = Math.pow(10, Math.floor(Math.log10(raw))), m = raw / p;
    return (m <= 1 ? 1 : m <= 2 ? 2 : m <= 5 ? 5 : 10) * p;
  }
  /* x axis of times lo..hi (ns) between pixels x0..x1 at y */
  function timeAxis(g, lo, hi, x0, x1, y) {
    append(g, s('line', { 'class': 'ct-axis', x1: x0, x2: x1, y1: y, y2: y }));
    if (!(hi > lo)) return;
    var step = niceStep(hi - lo, 8);
    for (var t = Math.ceil(lo / step) * step; t <= hi; t += step) {
      var x = x0 + (t - lo) / (hi - lo) * (x1 - x0);
      append(g, s('line', { 'class': 'ct-axis', x1: x, x2: x, y1: y, y2: y + 4 }));
      append(g, svgText(x, y + 16, fmtNs(t), { 'text-anchor': x > x1 - 25 ? 'end' : x < x0 + 25 ? 'start' : 'middle' }));
    }
  }

  /* Stacked columns over time: layers [{arr, path, label, color}] of one series of bins, y from 0
   * to ymax. Returns the svg, x(t) and the plot area (top, bottom, left, right) for markers. */
  function stackPlot(o) {
    var L = 70, R = 10, T = 10, PH = o.height || 150, H = T + PH + 28;
    var svg = plotSvg(o.kind, o.id, o.path, H, o.label);
    var n = o.layers[0].arr.length, PW = W - L - R, bw = PW / Math.max(1, n);
    var lo = o.start, hi = o.start + n * o.binNs;
    append(svg, s('line', { 'class': 'ct-axis', x1: L, x2: L, y1: T, y2: T + PH }));
    [0, 0.5, 1].forEach(function (f) {
      var y = T + PH - f * PH;
      append(svg, s('line', { 'class': 'ct-grid', x1: L, x2: W - R, y1: y, y2: y }));
      append(svg, svgText(L - 6, y + 4, o.yfmt(f * o.ymax), { 'text-anchor': 'end' }));
    });
    var bars = s('g', { 'shape-rendering': 'crispEdges' });
    for (var i = 0; i < n; i++) {
      var g = s('g'), y = T + PH, words = [];
      for (var k = 0; k < o.layers.length; k++) {
        var ly = o.layers[k], v = ly.arr[i] || 0, hgt = o.ymax > 0 ? v / o.ymax * PH : 0;
        y -= hgt;
        append(g, bind(s('rect', { x: (L + i * bw).toFixed(2), y: y.toFixed(2), width: Math.max(bw, 0.5).toFixed(2),
          height: Math.max(hgt, 0).toFixed(2), fill: ly.color }), ly.path + '.' + i));
        if (v) words.push(ly.label + ' ' + o.vfmt(v));
      }
      append(g, tip(fmtNs(lo + i * o.binNs) + ' – ' + fmtNs(lo + (i + 1) * o.binNs) + ': ' + (words.join(', ') || 'nothing')));
      append(bars, g);
    }
    append(svg, bars);
    timeAxis(svg, lo, hi, L, W - R, T + PH);
    return { svg: svg, x: function (t) { return L + (t - lo) / (hi - lo || 1) * PW; }, top: T, bottom: T + PH, left: L, right: W - R };
  }

  /* marks the places of the diagnoses at pid/device (device null: the whole process) */
  function markDiagnoses(plot, pid, device, plotId, which) {
    (D.diagnoses || []).forEach(function (d, i) {
      var at = d.at;
      if (!at || !which(d) || at.pid !== pid || (at.device !== null && at.device !== undefined && device !== null && at.device !== device)) return;
      if (atTarget[i]) return;
      var x0 = Math.max(plot.left, plot.x(at.start_ns)), x1 = Math.min(plot.right, plot.x(at.end_ns));
      if (x1 - x0 < 3) { x0 = Math.min(x0, plot.right - 3); x1 = x0 + 3; }
      var g = bind(s('g', { 'class': 'ct-atmark-g' }), 'diagnoses.' + i + '.at');
      append(g, s('rect', { 'class': 'ct-atmark', x: x0.toFixed(2), y: plot.top, width: (x1 - x0).toFixed(2), height: plot.bottom - plot.top }));
      append(g, s('rect', { x: (x0 + 1).toFixed(2), y: plot.top + 1, width: 22, height: 13, fill: '#fff', opacity: 0.85 }));
      append(g, svgText(x0 + 3, plot.top + 11, '#' + (i + 1), { 'font-weight': '700' }));
      append(g, tip('diagnosis #' + (i + 1) + ' ' + d.id + ': ' + fmtNs(at.start_ns) + ' – ' + fmtNs(at.end_ns)));
      append(plot.svg, g);
      atTarget[i] = plotId;
    });
  }
  function box(kids) { return h('div', { 'class': 'ct-plotbox' }, kids); }

  /* ---------- sections ---------- */
  function endWords(pi) {
    var p = D.processes[pi], base = 'processes.' + pi;
    if (!p.complete) return [h('span', null, 'no END record (killed or cut short)')];
    var out = [val(base + '.end')];
    if (p.end_code !== undefined) out.push(' ', val(base + '.end_code'));
    return out;
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
        dv, h('td', { 'class': 'ct-num' }, val(b + '.wall_ns', fmtNs)), h('td', { 'class': 'ct-nowrap' }, endWords(i))
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
      append(sec, h('h3', null, ['#' + (i + 1) + ' ', bind(h('span', { 'class': 'ct-sev' }, d.severity), dp + '.severity'), ' ', val(dp + '.id'), ' ',
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

  /* ---------- the zoomable overview ---------- */
  var overviewShow = function () {};
  function shellWord(w) { return /^[A-Za-z0-9_.,\/:=@+%-]+$/.test(w) ? w : "'" + w.replace(/'/g, "'\\''") + "'"; }
  function timelineCommand(from, to) {
    var files = (D.processes || []).map(function (p) { return shellWord(p.file); });
    var off = (P && P.timeline_offset_ns) || 0, cmd = 'cutrace timeline ' + files.join(' ') + ' -o timeline.json';
    if (from !== undefined) cmd += ' --from ' + (Math.floor((from + off) / 1e3) / 1e3).toFixed(3) + ' --to ' + (Math.ceil((to + off) / 1e3) / 1e3).toFixed(3);
    return cmd;
  }
  function sectionOverview(main) {
    var o = D.overview;
    append(main, h('h2', { id: 'overview' }, 'Timeline overview'));
    if (!o || !o.tracks || !o.slices) {
      append(main, [h('p', null, 'The full timeline of the run, for Perfetto (open timeline.json in ui.perfetto.dev):'), h('pre', { 'class': 'ct-cmd ct-mono' }, timelineCommand())]);
      return;
    }
    append(main, h('p', null, ['The busiest stretch, ', val('overview.start_ns', fmtNs), ' – ', val('overview.end_ns', fmtNs), ': ',
      val('overview.slices_total', fmtCount), ' slices', o.truncated ? [', of which the ', String(o.slices.length), ' longest are drawn'] : '', '.']));
    var L = 200, R = 10, T = 4, RH = 16, AX = 24, n = o.tracks.length, H = T + n * RH + AX, PW = W - L - R;
    var svg = plotSvg('overview', 'plot-overview', 'overview', H, 'timeline overview of the busiest stretch');
    /* the pid only where several processes share the overview */
    var pids = o.tracks.some(function (t) { return t.pid !== o.tracks[0].pid; });
    o.tracks.forEach(function (t, k) {
      var tp = 'overview.tracks.' + k, y = T + k * RH;
      if (k % 2) append(svg, s('rect', { x: L, y: y, width: PW, height: RH, fill: '#f6f8fa' }));
      var nm = t.name || ((t.kind === 'stream' ? 'GPU ' + t.device + ' stream ' : 'thread ') + t.id);
      var lab = (pids ? 'pid ' + t.pid + ' ' : '') + nm;
      append(svg, append(bind(svgText(L - 6, y + 12, lab.length > 30 ? lab.slice(0, 29) + '…' : lab, { 'text-anchor': 'end' }), tp + '.name'), tip(lab)));
    });
    var clip = s('clipPath', { id: 'ct-ov-clip' }, s('rect', { x: L, y: 0, width: PW, height: H }));
    append(svg, s('defs', null, clip));
    var layer = s('g', { 'clip-path': 'url(#ct-ov-clip)', 'shape-rendering': 'crispEdges' });
    var rects = o.slices.map(function (sl, k) {
      var c = CATS[sl[4]] || CATS[0];
      var r = bind(s('rect', { y: T + sl[0] * RH + 2, height: RH - 4, fill: c.color }), 'overview.slices.' + k);
      append(r, tip((o.names[sl[3]] || '') + ' (' + c.label + '): ' + fmtNs(sl[2]) + ' at ' + fmtNs(sl[1])));
      append(layer, r);
      return r;
    });
    append(svg, layer);
    var marks = [];
    (D.diagnoses || []).forEach(function (d, i) {
      var at = d.at;
      if (!at || at.end_ns < o.start_ns || at.start_ns > o.end_ns) return;
      var g = s('g', { 'class': 'ct-atmark-g' }), rc = s('rect', { 'class': 'ct-atmark', y: T, height: n * RH });
      if (!atTarget[i]) { bind(g, 'diagnoses.' + i + '.at'); atTarget[i] = 'plot-overview'; }
      append(g, [rc, tip('diagnosis #' + (i + 1) + ' ' + d.id)]);
      append(layer, g);
      marks.push({ r: rc, at: at });
    });
    var axis = s('g');
    append(svg, axis);
    var v0 = o.start_ns, v1 = Math.max(o.end_ns, o.start_ns + 1);
    var info = h('span', { 'class': 'ct-muted' });
    function X(t) { return L + (t - v0) / (v1 - v0) * PW; }
    function draw() {
      rects.forEach(function (r, k) {
        var sl = o.slices[k], x0 = X(sl[1]), x1 = X(sl[1] + sl[2]);
        if (x1 < L || x0 > L + PW) { r.setAttribute('display', 'none'); return; }
        r.removeAttribute('display');
        r.setAttribute('x', x0.toFixed(2));
        r.setAttribute('width', Math.max(x1 - x0, 0.6).toFixed(2));
      });
      marks.forEach(function (m) {
        var x0 = X(m.at.start_ns), x1 = Math.max(X(m.at.end_ns), x0 + 3);
        m.r.setAttribute('x', x0.toFixed(2)); m.r.setAttribute('width', (x1 - x0).toFixed(2));
      });
      while (axis.firstChild) axis.removeChild(axis.firstChild);
      timeAxis(axis, v0, v1, L, L + PW, T + n * RH);
      info.textContent = 'showing ' + fmtNs(v0) + ' – ' + fmtNs(v1) + ' (' + fmtNs(v1 - v0) + ')';
    }
    function zoom(f, at) {
      var c = at === undefined ? (v0 + v1) / 2 : at, w = Math.max((v1 - v0) * f, 1e3);
      v0 = c - (c - v0) / (v1 - v0) * w; v1 = v0 + w;
      draw();
    }
    overviewShow = function (a, b) { var pad = Math.max((b - a) * 0.5, 1e4); v0 = a - pad; v1 = b + pad; draw(); };
    function tAt(ev) {
      var rc = svg.getBoundingClientRect(), x = (ev.clientX - rc.left) / rc.width * W;
      return v0 + (x - L) / PW * (v1 - v0);
    }
    svg.addEventListener('wheel', function (ev) { ev.preventDefault(); zoom(ev.deltaY < 0 ? 0.8 : 1.25, tAt(ev)); }, { passive: false });
    var drag = null;
    svg.addEventListener('pointerdown', function (ev) { drag = { t: tAt(ev), v0: v0, v1: v1 }; svg.setPointerCapture(ev.pointerId); });
    svg.addEventListener('pointermove', function (ev) {
      if (!drag) return;
      var rc = svg.getBoundingClientRect(), dt = (ev.clientX - rc.left) / rc.width * W;
      var t = drag.v0 + (dt - L) / PW * (drag.v1 - drag.v0), d = drag.t - t;
      v0 = drag.v0 + d; v1 = drag.v1 + d; draw();
    });
    svg.addEventListener('pointerup', function () { drag = null; });
    function btn(label, fn) { var b = h('button', { type: 'button' }, label); b.addEventListener('click', fn); return b; }
    var controls = h('div', { 'class': 'ct-controls' }, [btn('zoom in', function () { zoom(0.5); }), btn('zoom out', function () { zoom(2); }),
      btn('reset', function () { v0 = o.start_ns; v1 = Math.max(o.end_ns, o.start_ns + 1); draw(); }), info,
      h('span', { 'class': 'ct-muted' }, 'wheel: zoom, drag: pan')]);
    draw();
    append(main, box([controls, svg, legend(CATS)]));
    append(main, [h('p', null, 'The full timeline of this stretch, every event, for Perfetto: run the command below, then open timeline.json in ui.perfetto.dev (drop the file on the page).'),
      h('pre', { 'class': 'ct-cmd ct-mono' }, timelineCommand(o.start_ns, o.end_ns))]);
  }

  function toc(main) {
    var nav = h('p', { 'class': 'ct-muted ct-controls' }, 'Jump to:');
    [['verdict', 'verdict'], ['utilization', 'utilization'], ['breakdown', 'breakdown'], ['ranks', 'ranks'], ['steps', 'steps'],
      ['vram', 'memory'], ['kernels', 'kernels'], ['copies', 'copies'], ['diagnoses', 'diagnoses'], ['overview', 'timeline']].forEach(function (x) {
      if (document.getElementById(x[0])) append(nav, [' ', h('a', { href: '#' + x[0] }, x[1])]);
    });
    main.insertBefore(nav, main.children[2] || null);
  }

  function section(main, fn) {
    try {
      fn(main);
    } catch (e) {
      recordError(String(e && e.stack || e));
      append(main, h('p', { 'class': 'ct-failed' }, 'This part of the report could not be drawn: ' + String(e)));
    }
  }

  function render() {
    var main = document.getElementById('ct-report');
    P = JSON.parse(document.getElementById('ct-page').textContent);
    D = JSON.parse(document.getElementById('ct-data').textContent);
    if (P && P.title) document.title = P.title;
    /* the plots with places come first, so the cards know where each diagnosis is marked */
    var parts = {};
    [['header', sectionHeader], ['verdict', sectionVerdict], ['util', sectionUtil], ['vram', sectionVram],
      ['breakdown', sectionBreakdown], ['kernels', sectionKernels], ['copies', sectionCopies], ['ranks', sectionRanks],
      ['steps', sectionSteps], ['overview', sectionOverview], ['diagnoses', sectionDiagnoses]].forEach(function (x) {
      var holder = document.createDocumentFragment();
      section(holder, x[1]);
      parts[x[0]] = holder;
    });
    ['header', 'verdict', 'util', 'breakdown', 'ranks', 'steps', 'vram', 'kernels', 'copies', 'diagnoses', 'overview'].forEach(function (k) {
      main.appendChild(parts[k]);
    });
    toc(main);
  }

  try {
    render();
  } catch (e) {
    recordError(String(e && e.stack || e));
  }
  if (!errors) root.setAttribute('data-ct-rendered', '1');
})();
