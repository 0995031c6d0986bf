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

