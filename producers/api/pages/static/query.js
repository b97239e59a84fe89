// The One-query page: footnote markers open their evidence; while the query runs, the
// page follows its event stream (GET /queries/{id}/events, sent with the session
// cookie) and redraws the part that changes (GET /ui/queries/{id}/live).
(function () {
  'use strict';
  var root = document.getElementById('query');
  if (!root) { return; }

  function openNote(hash) {
    var note = document.getElementById(hash.replace(/^#/, ''));
    if (!note || note.tagName !== 'DETAILS') { return; }
    note.open = true;
    note.classList.add('flash');
    note.scrollIntoView({block: 'center'});
    window.setTimeout(function () { note.classList.remove('flash'); }, 1500);
  }

  document.addEventListener('click', function (event) {
    var link = event.target.closest('a.fn-ref');
    if (!link) { return; }
    event.preventDefault();
    window.history.replaceState(null, '', link.getAttribute('href'));
    openNote(link.getAttribute('href'));
  });
  if (window.location.hash.indexOf('#fn-') === 0) { openNote(window.location.hash); }

  function setStatus(status) {
    var badge = document.getElementById('status');
    if (badge) {
      badge.textContent = status;
      badge.className = 'status status-' + status;
    }
  }

  function markStep(step) {
    var found = document.querySelectorAll('[data-step="' + CSS.escape(step.step_id) + '"]');
    found.forEach(function (el) { el.setAttribute('data-status', step.status); });
  }

  var timer = null, busy = false, again = false;
  function refresh() {
    if (timer === null) { timer = window.setTimeout(load, 250); }
  }
  function load() {
    timer = null;
    if (busy) { again = true; return; }
    busy = true;
    window.Chordal.fetchPage(root.dataset.live)
      .then(function (fresh) {
        if (fresh === null) { return; }
        var live = document.getElementById('live');
        var open = Array.prototype.map.call(live.querySelectorAll('details[open]'),
                                            function (d) { return d.id; });
        live.replaceChildren.apply(live, Array.prototype.slice.call(fresh.body.childNodes));
        open.forEach(function (id) {
          var d = document.getElementById(id);
          if (d) { d.open = true; }
        });
      })
      .catch(function () { /* the next event tries again */ })
      .then(function () {
        busy = false;
        if (again) { again = false; refresh(); }
        if (root.dataset.terminal === 'yes' && timer === null && !busy) {
          root.dataset.settled = 'yes';  // the query ended and the page shows its end
        }
      });
  }

  if (root.dataset.terminal !== 'yes' && window.EventSource) {
    var events = new EventSource(root.dataset.events);
    events.addEventListener('status', function (e) { setStatus(JSON.parse(e.data).status); refresh(); });
    events.addEventListener('step', function (e) { markStep(JSON.parse(e.data)); refresh(); });
    events.addEventListener('iteration', refresh);
    events.addEventListener('end', function (e) {
      events.close();
      setStatus(JSON.parse(e.data).status || 'expired');
      root.dataset.terminal = 'yes';
      refresh();
    });
  }
}());
