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
    fetch(window.location.href, {credentials: 'same-origin', headers: {'Accept': 'text/html'}})
      .then(function (response) {
        if (response.redirected) {  // the session ended: the login form, then back here
          window.location.assign(response.url);
          return null;
        }
        return response.ok ? response.text() : null;
      })
      .then(function (html) {
        if (html === null) { return; }
        var fresh = new DOMParser().parseFromString(html, 'text/html').getElementById('batches');
        var box = document.getElementById('batches');
        if (fresh && box) { box.replaceWith(fresh); }
      })
      .catch(function () { /* tried again next time */ })
      .then(function () { window.setTimeout(tick, EVERY_MS); });
  }
  window.setTimeout(tick, EVERY_MS);
}());
