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

