// Progress polling shared by the model page (training) and the experiment page: fetch the
// box's progress JSON every second, draw the bar, percent, status and the status pill, let the
// page draw its own extra lines, and reload when the run ends (the page then shows results).
var ProgressPoll = (function () {
  "use strict";
  function poll(box, pill, drawExtra) {
    var url = box.getAttribute("data-url");
    var bar = box.querySelector(".progress > div");
    var outer = box.querySelector(".progress");
    var pct = box.querySelector("[data-percent]");
    var status = box.querySelector("[data-status]");
    function tick() {
      fetch(url, {credentials: "same-origin", headers: {"Accept": "application/json"}})
        .then(function (r) { return r.json(); })
        .then(function (d) {
          var p = Math.round(100 * (d.progress || 0));
          bar.style.width = p + "%";
          outer.setAttribute("aria-valuenow", p);
          pct.textContent = p + "%";
          status.textContent = d.status_label;
          if (pill && d.status) {
            pill.textContent = d.status_label;
            pill.className = "pill pill-" + d.status;
          }
          drawExtra(d);
          if (d.finished) { window.location.reload(); return; }
          setTimeout(tick, 1000);
        })
        .catch(function () { setTimeout(tick, 3000); });
    }
    setTimeout(tick, 1000);
  }
  return {poll: poll};
})();

// The model page: the training's message and elapsed time under the bar.
(function () {
  "use strict";
  var box = document.getElementById("training-progress");
  if (!box) { return; }
  var msg = box.querySelector("[data-message]");
  var elapsed = box.querySelector("[data-elapsed]");
  function fmt(seconds) {
    if (seconds === null || seconds === undefined) { return "not started"; }
    var s = Math.round(seconds), m = Math.floor(s / 60);
    return m ? m + " min " + (s % 60) + " s" : s + " s";
  }
  ProgressPoll.poll(box, document.getElementById("model-status"), function (d) {
    msg.textContent = d.message || "";
    elapsed.textContent = fmt(d.elapsed_seconds);
  });
})();
