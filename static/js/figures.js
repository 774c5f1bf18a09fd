// Draws every <div data-figure="id-of-json-script"> with the local plotly.js.
(function () {
  "use strict";
  function draw() {
    if (typeof Plotly === "undefined") { return; }
    document.querySelectorAll("[data-figure]").forEach(function (el) {
      var source = document.getElementById(el.getAttribute("data-figure"));
      if (!source) { return; }
      var fig = JSON.parse(source.textContent);
      Plotly.newPlot(el, fig.data, fig.layout, {
        responsive: fig.layout.autosize !== false, displaylogo: false,
        modeBarButtonsToRemove: ["select2d", "lasso2d"]
      });
    });
  }
  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", draw);
  } else { draw(); }
})();
