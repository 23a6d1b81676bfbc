// A plain-JS SPA router for the x-spa / x-npm test pages. It changes the URL with the history API and renders the
// new route (title included) AFTER the URL changed: in a requestAnimationFrame by default, as many UI libraries
// batch their rendering, or in a microtask, or synchronously (popstate).
(function () {
  function titleFor(path) {
    var seg = path.replace(/\/+$/, '').split('/').pop() || '';
    if (!seg || /\.html$/.test(seg)) return 'SPA Home';
    return seg.charAt(0).toUpperCase() + seg.slice(1) + ' | Shop';
  }
  function render(mode) {
    var apply = function () {
      document.title = titleFor(location.pathname);
      var v = document.getElementById('view');
      if (v) v.textContent = 'route ' + location.pathname + location.search + location.hash;
      window.__renders = (window.__renders || 0) + 1;
    };
    if (mode === 'sync') apply();
    else if (mode === 'microtask') Promise.resolve().then(apply);
    else requestAnimationFrame(apply);
  }
  window.router = {
    titleFor: titleFor,
    push: function (path, mode) {
      history.pushState({ path: path }, '', path);
      render(mode);
    },
    replace: function (path, mode) {
      history.replaceState({ path: path }, '', path);
      render(mode);
    },
    // Some routers push the new entry and then replace it at once (to store a state key, or a canonical URL).
    pushThenReplace: function (path, finalPath, mode) {
      history.pushState(null, '', path);
      history.replaceState({ path: finalPath || path, key: Math.random() }, '', finalPath || path);
      render(mode);
    },
  };
  addEventListener('popstate', function () {
    render('sync');
  });
  document.addEventListener('click', function (e) {
    var a = e.target && e.target.closest && e.target.closest('a[data-route]');
    if (!a) return;
    e.preventDefault();
    window.router.push(a.getAttribute('href'));
  });
})();
