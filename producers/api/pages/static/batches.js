// The Batches page: while a batch has unfinished queries, redraw the batches every few
// seconds (the same page, fetched with the session cookie).
(function () {
  'use strict';
  var EVERY_MS = 5000;
  function unfinished() {
    var box = document.getElementById('batches');
    return box ? Number(box.dataset.unfinished) : 0;
  }
  function tick() {
    if (!unfinished()) { return; }
    window.Chordal.fetchPage(window.location.href)
      .then(function (page) {
        if (page === null) { return; }
        var fresh = page.getElementById('batches');
        var box = document.getElementById('batches');
        if (fresh && box) { box.replaceWith(fresh); }
      })
      .catch(function () { /* tried again next time */ })
      .then(function () { window.setTimeout(tick, EVERY_MS); });
  }
  window.setTimeout(tick, EVERY_MS);
}());
