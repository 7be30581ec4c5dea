// The inbox's live updates: the element #live names the fragment that
// draws it (data-src) and the server-sent events that say it changed
// (data-events); on each "update" it is fetched again and replaced, unless
// the person is typing in one of its forms (then a little later).
(function () {
  "use strict";
  var live = document.getElementById("live");
  if (!live || !window.EventSource || !window.fetch) {
    return;
  }
  var busy = false;
  var again = false;
  function typing() {
    var fields = live.querySelectorAll("textarea");
    for (var i = 0; i < fields.length; i++) {
      if (fields[i].value !== "" || document.activeElement === fields[i]) {
        return true;
      }
    }
    return false;
  }
  function refresh() {
    if (busy) {
      again = true;
      return;
    }
    if (typing()) {
      setTimeout(refresh, 2000);
      return;
    }
    busy = true;
    fetch(live.dataset.src, { credentials: "same-origin", cache: "no-store" })
      .then(function (r) { return r.ok ? r.text() : null; })
      .then(function (html) {
        if (html !== null) {
          live.innerHTML = html;
          live.dataset.updated = String(Date.now());
        }
      })
      .catch(function () {})
      .then(function () {
        busy = false;
        if (again) {
          again = false;
          refresh();
        }
      });
  }
  var events = new EventSource(live.dataset.events);
  events.addEventListener("update", refresh);
})();
