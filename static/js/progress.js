// Polls the model's progress JSON every second while it trains; reloads when it ends.
(function () {
  "use strict";
  var box = document.getElementById("training-progress");
  if (!box) { return; }
  var url = box.getAttribute("data-url");
  var bar = box.querySelector(".progress > div");
  var barOuter = box.querySelector(".progress");
  var pct = box.querySelector("[data-percent]");
  var msg = box.querySelector("[data-message]");
  var elapsed = box.querySelector("[data-elapsed]");
  var status = box.querySelector("[data-status]");
  // The pill beside the model's name says the same status as the bar (not the one at load).
  var pill = document.getElementById("model-status");
  function fmt(seconds) {
    if (seconds === null || seconds === undefined) { return "not started"; }
    var s = Math.round(seconds), m = Math.floor(s / 60);
    return m ? m + " min " + (s % 60) + " s" : s + " s";
  }
  function tick() {
    fetch(url, {credentials: "same-origin", headers: {"Accept": "application/json"}})
      .then(function (r) { return r.json(); })
      .then(function (d) {
        var p = Math.round(100 * (d.progress || 0));
        bar.style.width = p + "%";
        barOuter.setAttribute("aria-valuenow", p);
        pct.textContent = p + "%";
        msg.textContent = d.message || "";
        elapsed.textContent = fmt(d.elapsed_seconds);
        status.textContent = d.status_label;
        if (pill && d.status) {
          pill.textContent = d.status_label;
          pill.className = "pill pill-" + d.status;
        }
        if (d.finished) { window.location.reload(); return; }
        setTimeout(tick, 1000);
      })
      .catch(function () { setTimeout(tick, 3000); });
  }
  setTimeout(tick, 1000);
})();
