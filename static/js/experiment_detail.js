// The experiment page: its progress box (polled by progress.js's ProgressPoll) adds the task
// counts and why it is not moving; the "At the error costs" list shows its recommendation as
// soon as another matrix is chosen.
(function () {
  "use strict";
  var box = document.getElementById("experiment-progress");
  if (box && box.getAttribute("data-finished") !== "true") {
    var counts = box.querySelector("[data-counts]");
    var msg = box.querySelector("[data-message]");
    var pct = box.querySelector("[data-percent]");
    ProgressPoll.poll(box, document.getElementById("experiment-status"), function (d) {
      pct.textContent += " ·";
      var text = d.n_done + " of " + d.n_tasks + " tasks done";
      if (d.n_failed) { text += ", " + d.n_failed + " failed"; }
      if (d.n_running) { text += ", " + d.n_running + " running"; }
      counts.textContent = text;
      msg.textContent = d.message || "";
      msg.classList.toggle("progress-warning", !!d.stalled);
      if (d.stalled) { msg.setAttribute("role", "alert"); } else { msg.removeAttribute("role"); }
      box.classList.toggle("stalled", !!d.stalled);
    });
  }

  var choice = document.getElementById("matrix-choice");
  if (choice && choice.form) {
    choice.form.querySelectorAll(".js-hide").forEach(function (b) { b.hidden = true; });
    choice.addEventListener("change", function () { choice.form.submit(); });
  }
})();
