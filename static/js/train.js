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

// Offers only the error matrices of the chosen dataset.
(function () {
  "use strict";
  var dataset = document.getElementById("id_dataset");
  var matrix = document.getElementById("id_error_matrix");
  if (!dataset || !matrix) { return; }
  function sync(changed) {
    var fallback = null;
    Array.prototype.forEach.call(matrix.options, function (option) {
      var owner = option.getAttribute("data-dataset");
      var hide = owner !== null && owner !== dataset.value;
      option.hidden = hide;
      option.disabled = hide;
      if (hide && option.selected) { matrix.value = ""; }
      if (!hide && option.hasAttribute("data-default")) { fallback = option.value; }
    });
    // A new dataset starts from its own named error costs, not 0/1 loss.
    if (fallback !== null && changed) { matrix.value = fallback; }
  }
  dataset.addEventListener("change", function () { sync(true); });
  sync(false);
})();
