// Draws every <div data-figure="id-of-json-script"> with the local plotly.js.
(function () {
  "use strict";
  // A wide tree scrolls sideways: bring the patient's current node into view.
  function scrollToHighlight(el, fig) {
    var box = el.parentElement;
    if (!fig.highlight || !fig.highlight.length || !fig.positions || box.scrollWidth <= box.clientWidth) {
      return;
    }
    var last = fig.positions[String(fig.highlight[fig.highlight.length - 1])];
    var axis = el._fullLayout && el._fullLayout.xaxis;
    if (!last || !axis) { return; }
    var px = axis._offset + axis.l2p(last[0]);
    box.scrollLeft = Math.max(0, px - box.clientWidth / 2);
  }

  function draw() {
    if (typeof Plotly === "undefined") { return; }
    document.querySelectorAll("[data-figure]").forEach(function (el) {
      var source = document.getElementById(el.getAttribute("data-figure"));
      if (!source) { return; }
      var fig = JSON.parse(source.textContent);
      Plotly.newPlot(el, fig.data, fig.layout, {
        // A fixed-width figure (a wide tree) scrolls sideways instead of shrinking.
        responsive: fig.layout.autosize !== false, displaylogo: false,
        modeBarButtonsToRemove: ["select2d", "lasso2d"]
      });
      scrollToHighlight(el, fig);
    });
  }
  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", draw);
  } else { draw(); }
})();
