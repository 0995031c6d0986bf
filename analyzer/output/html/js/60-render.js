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
      ['breakdown', sectionBreakdown], ['startup', sectionStartup], ['kernels', sectionKernels], ['copies', sectionCopies], ['ranks', sectionRanks],
      ['steps', sectionSteps], ['overview', sectionOverview], ['diagnoses', sectionDiagnoses]].forEach(function (x) {
      var holder = document.createDocumentFragment();
      section(holder, x[1]);
      parts[x[0]] = holder;
    });
    ['header', 'verdict', 'util', 'breakdown', 'startup', 'ranks', 'steps', 'vram', 'kernels', 'copies', 'diagnoses', 'overview'].forEach(function (k) {
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
