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

  // How many tasks the settings make: learners (with their listed values) x folds x repeats
  // x error costs; the server counts the same and refuses more than it allows.
  var count = document.getElementById("task-count");
  function values(input) {
    return input ? input.value.split(/[,;\s]+/).filter(function (v) { return v !== ""; }) : [];
  }
  function syncCount() {
    if (!count) { return; }
    var learners = 0;
    form.querySelectorAll("fieldset[data-learner]").forEach(function (fs) {
      if (!fs.querySelector("input[name='learners']").checked) { return; }
      var variants = 1;
      fs.querySelectorAll("input.param-values").forEach(function (i) {
        variants *= Math.max(1, values(i).length);
      });
      learners += variants;
    });
    var kind = form.querySelector("input[name='matrix_kind']:checked");
    var matrices = 1;
    if (kind && kind.value === "uniform") { matrices = values(document.getElementById("id_costs")).length; }
    if (kind && kind.value === "ratio") { matrices = values(document.getElementById("id_ratios")).length; }
    var k = parseInt(document.getElementById("id_k").value, 10) || 0;
    var repeats = parseInt(document.getElementById("id_repeats").value, 10) || 0;
    // The two baselines (order nothing; order everything) run beside every experiment.
    var n = learners > 0 ? (learners + 2) * matrices * k * repeats : 0;
    count.textContent = n > 0 ? "= " + n + " tasks ((" + learners + " learner" + (learners === 1 ? "" : "s") +
      " + 2 baselines) × " + matrices + " error cost" + (matrices === 1 ? "" : "s") + " × " + k + " folds" +
      (repeats > 1 ? " × " + repeats + " repeats" : "") + ")" : "";
  }
  form.addEventListener("input", syncCount);
  form.addEventListener("change", syncCount);
  syncCount();

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
