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

