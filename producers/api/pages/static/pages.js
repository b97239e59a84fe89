// What the page scripts share (loaded before them): Chordal.fetchPage(url) fetches a page
// of this site with the session cookie and resolves to it parsed (a Document), or to null
// when it is not there (the caller tries again later); when the session ended the
// browser goes to the login form, which comes back here. A network error rejects.
(function () {
  'use strict';
  var Chordal = window.Chordal = window.Chordal || {};
  Chordal.fetchPage = function (url) {
    return fetch(url, {credentials: 'same-origin', headers: {'Accept': 'text/html'}})
      .then(function (response) {
        if (response.redirected) {  // the session ended: the login form, then back here
          window.location.assign(response.url);
          return null;
        }
        return response.ok ? response.text() : null;
      })
      .then(function (html) {
        return html === null ? null : new DOMParser().parseFromString(html, 'text/html');
      });
  };
}());
