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

