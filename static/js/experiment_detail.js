// The experiment page: polls its progress JSON every second while it runs (bar, counts,
// why it is not moving) and reloads once it ends, to show the results; the "At the error
// costs" list shows its recommendation as soon as another matrix is chosen.
(function () {
  "use strict";
  var box = document.getElementById("experiment-progress");
  if (box && box.getAttribute("data-finished") !== "true") {
    var url = box.getAttribute("data-url");
    var bar = box.querySelector(".progress > div");
    var outer = box.querySelector(".progress");
    var pct = box.querySelector("[data-percent]");
    var counts = box.querySelector("[data-counts]");
    var msg = box.querySelector("[data-message]");
    var status = box.querySelector("[data-status]");
    var pill = document.getElementById("experiment-status");
    var tick = function () {
      fetch(url, {credentials: "same-origin", headers: {"Accept": "application/json"}})
        .then(function (r) { return r.json(); })
        .then(function (d) {
          var p = Math.round(100 * (d.progress || 0));
          bar.style.width = p + "%";
          outer.setAttribute("aria-valuenow", p);
          pct.textContent = p + "% ·";
          var text = d.n_done + " of " + d.n_tasks + " tasks done";
          if (d.n_failed) { text += ", " + d.n_failed + " failed"; }
          if (d.n_running) { text += ", " + d.n_running + " running"; }
          counts.textContent = text;
          msg.textContent = d.message || "";
          msg.classList.toggle("progress-warning", !!d.stalled);
          if (d.stalled) { msg.setAttribute("role", "alert"); } else { msg.removeAttribute("role"); }
          box.classList.toggle("stalled", !!d.stalled);
          status.textContent = d.status_label;
          if (pill) {
            pill.textContent = d.status_label;
            pill.className = "pill pill-" + d.status;
          }
          if (d.finished) { window.location.reload(); return; }
          setTimeout(tick, 1000);
        })
        .catch(function () { setTimeout(tick, 3000); });
    };
    setTimeout(tick, 1000);
  }

  var choice = document.getElementById("matrix-choice");
  if (choice && choice.form) {
    choice.form.querySelectorAll(".js-hide").forEach(function (b) { b.hidden = true; });
    choice.addEventListener("change", function () { choice.form.submit(); });
  }
})();
