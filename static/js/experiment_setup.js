// The experiment set-up form: shows the chosen kind of error costs' fields, a ticked
// learner's parameters, and the chosen dataset's classes. Without JavaScript every field
// stays visible and the server ignores the ones that do not apply.
(function () {
  "use strict";
  var form = document.querySelector(".experiment-form");
  if (!form) { return; }

  var kinds = form.querySelectorAll("input[name='matrix_kind']");
  function syncKinds() {
    var chosen = form.querySelector("input[name='matrix_kind']:checked");
    form.querySelectorAll("[data-matrix-kind]").forEach(function (box) {
      box.hidden = !chosen || box.getAttribute("data-matrix-kind") !== chosen.value;
    });
  }
  kinds.forEach(function (k) { k.addEventListener("change", syncKinds); });
  syncKinds();

  form.querySelectorAll("fieldset[data-learner]").forEach(function (fs) {
    var box = fs.querySelector("input[name='learners']");
    var params = fs.querySelector("[data-learner-params]");
    function sync() {
      params.hidden = !box.checked;
      fs.classList.toggle("learner-on", box.checked);
    }
    box.addEventListener("change", sync);
    sync();
  });

  var dataset = document.getElementById("id_dataset");
  var positive = document.getElementById("id_positive_class");
  if (dataset && positive) {
    var syncClasses = function (changed) {
      var first = null;
      Array.prototype.forEach.call(positive.options, function (option) {
        var hide = option.getAttribute("data-dataset") !== dataset.value;
        option.hidden = hide;
        option.disabled = hide;
        if (!hide && first === null) { first = option.value; }
        if (hide && option.selected) { positive.value = ""; }
      });
      // A new dataset: its second class (the usual "disease present") is the positive one.
      if (changed || !positive.value) {
        var own = Array.prototype.filter.call(positive.options, function (o) { return !o.disabled; });
        positive.value = own.length > 1 ? own[1].value : (first || "");
      }
    };
    dataset.addEventListener("change", function () { syncClasses(true); });
    syncClasses(false);
  }
})();
