// Shows only the chosen learner's parameter fields (all stay visible without JavaScript).
(function () {
  "use strict";
  var select = document.getElementById("id_learner");
  if (!select) { return; }
  function sync() {
    document.querySelectorAll("[data-learner-params]").forEach(function (fs) {
      var on = fs.getAttribute("data-learner-params") === select.value;
      fs.hidden = !on;
      fs.querySelectorAll("input, select").forEach(function (i) { i.disabled = !on; });
    });
  }
  select.addEventListener("change", sync);
  sync();
})();
