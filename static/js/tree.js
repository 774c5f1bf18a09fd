// The tree diagram (diagnosis/clinic/templates/clinic/_tree_svg.html): fit to the screen on open, zoom and
// pan (buttons, Ctrl/⌘ + wheel, drag, pinch), and a node's details on tap, click or keyboard
// focus (no hover needed: tablets).  The SVG is drawn on the server; this only moves it.
(function () {
  "use strict";
  var MAX_ZOOM = 2.5;
  var READABLE = 0.8; // below this zoom the cue says to zoom in to read

  function TreeView(box) {
    this.box = box;
    this.svg = box.querySelector("svg");
    this.layer = this.svg.querySelector(".tree-viewport");
    this.width = parseFloat(box.getAttribute("data-width"));
    this.height = parseFloat(box.getAttribute("data-height"));
    this.cue = document.getElementById("tree-cue");
    var source = document.getElementById(box.getAttribute("data-tree"));
    this.details = source ? JSON.parse(source.textContent) : {};
    this.panel = document.getElementById("tree-details-panel");
    this.path = (box.getAttribute("data-path") || "").split(" ").filter(Boolean);
    this.k = 1; this.x = 0; this.y = 0; this.fitK = 1;
    // The SVG fills the box; the drawing moves inside it (a transform on one group).
    this.svg.removeAttribute("width");
    this.svg.removeAttribute("height");
    this.svg.removeAttribute("viewBox");
    box.classList.add("ready");
    this.fitTexts();
    this.bind();
    this.fit();
  }

  // A line a little wider than its card (or its branch's room) is narrowed to fit, so
  // neighbouring texts never overlap; the server cut the much longer ones already.
  TreeView.prototype.fitTexts = function () {
    this.svg.querySelectorAll("[data-fit]").forEach(function (text) {
      var room = parseFloat(text.getAttribute("data-fit"));
      var length = text.getComputedTextLength ? text.getComputedTextLength() : 0;
      if (room > 0 && length > room) {
        text.setAttribute("textLength", room.toFixed(1));
        text.setAttribute("lengthAdjust", "spacingAndGlyphs");
      }
    });
  };

  TreeView.prototype.apply = function () {
    this.layer.setAttribute("transform",
      "translate(" + this.x.toFixed(1) + "," + this.y.toFixed(1) + ") scale(" + this.k.toFixed(4) + ")");
    var pct = Math.round(this.k * 100);
    if (!this.cue) { return; }
    if (this.k < READABLE && this.k <= this.fitK + 1e-6) {
      this.cue.textContent = "Whole tree at " + pct + "%: zoom in to read (+, pinch or Ctrl + scroll); drag to move.";
    } else if (this.k > this.fitK + 1e-6) {
      this.cue.textContent = "Zoomed to " + pct + "%: drag to move; \u201cWhole tree\u201d shows all of it.";
    } else {
      this.cue.textContent = "Whole tree shown. Tap a node, or Tab to it, for its details.";
    }
    this.box.classList.toggle("zoomed", this.k > this.fitK + 1e-6);
  };

  // The whole tree in the box: as wide as the box allows and no taller than the window
  // leaves below the box's top (at least 380px), never enlarged past 100%.
  TreeView.prototype.fit = function () {
    var w = this.box.clientWidth;
    var top = this.box.getBoundingClientRect().top + window.scrollY;
    var room = Math.max(380, window.innerHeight - top - 12);
    var k = Math.min(1, w / this.width, room / this.height);
    this.fitK = k;
    // A tree narrower than the screen is tall: the box keeps the room below for zooming in.
    var boxHeight = Math.max(Math.ceil(this.height * k), Math.min(room, 720));
    this.box.style.height = boxHeight + "px";
    this.k = k;
    this.x = (w - this.width * k) / 2;
    this.y = 0; // the root at the top of the box
    this.apply();
  };

  TreeView.prototype.clamp = function () {
    var w = this.box.clientWidth, h = this.box.clientHeight;
    var dw = this.width * this.k, dh = this.height * this.k;
    // Keep some of the drawing in view: it may not be dragged away entirely.
    this.x = dw <= w ? (w - dw) / 2 : Math.min(40, Math.max(w - dw - 40, this.x));
    this.y = dh <= h ? 0 : Math.min(40, Math.max(h - dh - 40, this.y));
  };

  TreeView.prototype.zoomAt = function (factor, px, py) {
    var k = Math.min(MAX_ZOOM, Math.max(this.fitK, this.k * factor));
    this.x = px - (px - this.x) * (k / this.k);
    this.y = py - (py - this.y) * (k / this.k);
    this.k = k;
    this.clamp();
    this.apply();
  };

  TreeView.prototype.center = function () {
    return [this.box.clientWidth / 2, this.box.clientHeight / 2];
  };

  TreeView.prototype.nodeBox = function (id) {
    var g = this.svg.querySelector('[data-node="' + id + '"] .tree-card-box');
    if (!g) { return null; }
    return {
      x: parseFloat(g.getAttribute("x")), y: parseFloat(g.getAttribute("y")),
      w: parseFloat(g.getAttribute("width")), h: parseFloat(g.getAttribute("height"))
    };
  };

  // Zoom to a readable 100% around the given nodes (the patient's path).
  TreeView.prototype.zoomTo = function (ids) {
    var self = this, x0 = Infinity, y0 = Infinity, x1 = -Infinity, y1 = -Infinity;
    ids.forEach(function (id) {
      var b = self.nodeBox(id);
      if (!b) { return; }
      x0 = Math.min(x0, b.x); y0 = Math.min(y0, b.y);
      x1 = Math.max(x1, b.x + b.w); y1 = Math.max(y1, b.y + b.h);
    });
    if (!isFinite(x0)) { return; }
    var w = this.box.clientWidth, h = this.box.clientHeight;
    // As much of the path as fits, but never too small to read (then it starts at the root).
    this.k = Math.max(this.fitK, Math.min(1, Math.max(READABLE, Math.min(w / (x1 - x0 + 40), h / (y1 - y0 + 40)))));
    this.x = w / 2 - this.k * (x0 + x1) / 2;
    // A path taller than the box shows its end: where the patient is now.
    this.y = (y1 - y0) * this.k < h - 40 ? h / 2 - this.k * (y0 + y1) / 2 : h - 20 - this.k * y1;
    var root = this.nodeBox("0");
    if ((x1 - x0) * this.k > w - 40 && root) {
      // A path wider than the box runs from the root down to one side: the box holds
      // that side's end (where the patient is now) and the path from there back toward
      // the root, its top at the top of the box (below its edge label).
      var rootRight = root.x + root.w / 2 > (x0 + x1) / 2;
      this.x = rootRight ? 20 - this.k * x0 : w - 20 - this.k * x1;
      var v0 = Infinity, v1 = -Infinity;
      ids.forEach(function (id) {
        var b = self.nodeBox(id);
        if (!b) { return; }
        var left = self.x + self.k * b.x;
        if (left + self.k * b.w > 0 && left < w) { v0 = Math.min(v0, b.y); v1 = Math.max(v1, b.y + b.h); }
      });
      this.y = (v1 - v0) * this.k < h - 56 ? 36 - this.k * v0 : h - 20 - this.k * v1;
    }
    this.clamp();
    this.apply();
  };

  // A node brought into view when it is focused while zoomed (keyboard users).
  TreeView.prototype.reveal = function (id) {
    var b = this.nodeBox(id);
    if (!b) { return; }
    var w = this.box.clientWidth, h = this.box.clientHeight;
    var left = this.x + b.x * this.k, top = this.y + b.y * this.k;
    var right = left + b.w * this.k, bottom = top + b.h * this.k;
    if (left >= 0 && top >= 0 && right <= w && bottom <= h) { return; }
    this.x += w / 2 - (left + right) / 2;
    this.y += h / 2 - (top + bottom) / 2;
    this.clamp();
    this.apply();
  };

  TreeView.prototype.show = function (id) {
    var rows = this.details[String(id)];
    if (!rows || !this.panel) { return; }
    var b = this.nodeBox(id);
    var onRight = b && this.x + (b.x + b.w / 2) * this.k > this.box.clientWidth / 2;
    this.panel.classList.toggle("at-left", !!onRight);
    this.panel.classList.toggle("at-right", !onRight);
    this.panel.hidden = false;
    var list = this.panel.querySelector(".tree-details-rows");
    list.textContent = "";
    rows.slice(1).forEach(function (row) { // the first row (test or conclusion) is the title
      var dt = document.createElement("dt");
      dt.textContent = row.label;
      var dd = document.createElement("dd");
      dd.textContent = row.value;
      var pair = document.createElement("div");
      pair.appendChild(dt);
      pair.appendChild(dd);
      list.appendChild(pair);
    });
    this.svg.querySelectorAll(".tree-node.selected").forEach(function (g) { g.classList.remove("selected"); });
    var node = this.svg.querySelector('[data-node="' + id + '"]');
    if (node) { node.classList.add("selected"); }
    this.panel.setAttribute("data-node", String(id));
    var title = this.panel.querySelector(".tree-details-title");
    var first = rows[0] || {};
    if (title) { title.textContent = (first.label || "Node") + ": " + (first.value || ""); }
    this.keepClear(b);
  };

  // The panel must not cover the node it describes (a tablet's view is narrower than the
  // panel beside a centred node): move the drawing sideways if it may, else put the panel
  // at the bottom (node in the upper half) or the top.
  TreeView.prototype.keepClear = function (b) {
    if (!b) { return; }
    var self = this, panel = this.panel, gap = 8;
    panel.classList.remove("at-bottom");
    function node() {
      return { left: self.x + b.x * self.k, right: self.x + (b.x + b.w) * self.k,
               top: self.y + b.y * self.k, bottom: self.y + (b.y + b.h) * self.k };
    }
    function covered() {
      var n = node(), p = { left: panel.offsetLeft, top: panel.offsetTop,
                            right: panel.offsetLeft + panel.offsetWidth,
                            bottom: panel.offsetTop + panel.offsetHeight };
      return n.left < p.right + gap && n.right > p.left - gap &&
             n.top < p.bottom + gap && n.bottom > p.top - gap;
    }
    if (!covered()) { return; }
    var n = node(), w = this.box.clientWidth;
    if (panel.classList.contains("at-left")) {
      this.x += panel.offsetLeft + panel.offsetWidth + gap - n.left;
    } else {
      this.x -= n.right - (panel.offsetLeft - gap);
    }
    this.clamp();
    this.apply();
    if (!covered()) { return; }
    n = node();
    panel.classList.toggle("at-bottom", (n.top + n.bottom) / 2 < this.box.clientHeight / 2);
    if (covered() && w) {  // a short view: bring the node just clear of the panel
      this.y += panel.classList.contains("at-bottom") ?
        panel.offsetTop - gap - n.bottom : panel.offsetTop + panel.offsetHeight + gap - n.top;
      this.apply();
    }
  };

  // Arrow keys walk the tree: down to the first branch, up to the parent, left and right
  // to the neighbouring branches of the same parent.
  TreeView.prototype.neighbour = function (g, key) {
    var id = g.getAttribute("data-node"), parent = g.getAttribute("data-parent");
    if (key === "ArrowDown") { return this.svg.querySelector('[data-parent="' + id + '"]'); }
    if (key === "ArrowUp") { return parent === null ? null : this.svg.querySelector('[data-node="' + parent + '"]'); }
    if ((key !== "ArrowLeft" && key !== "ArrowRight") || parent === null) { return null; }
    var siblings = Array.prototype.slice.call(this.svg.querySelectorAll('[data-parent="' + parent + '"]'));
    var at = siblings.indexOf(g) + (key === "ArrowRight" ? 1 : -1);
    return siblings[at] || null;
  };

  TreeView.prototype.hide = function () {
    if (!this.panel || this.panel.hidden) { return; }
    var id = this.panel.getAttribute("data-node");
    this.panel.hidden = true;
    this.svg.querySelectorAll(".tree-node.selected").forEach(function (g) { g.classList.remove("selected"); });
    var node = id && this.svg.querySelector('[data-node="' + id + '"]');
    if (node) {
      this.quiet = true; // focus goes back to the node without opening the panel again
      node.focus({ preventScroll: true });
      this.quiet = false;
    }
  };

  TreeView.prototype.bind = function () {
    var self = this, box = this.box, svg = this.svg;
    var pointers = {}, moved = false, last = null, pinch = null;

    document.querySelectorAll("[data-tree-zoom]").forEach(function (button) {
      button.addEventListener("click", function () {
        var what = button.getAttribute("data-tree-zoom"), c = self.center();
        if (what === "in") { self.zoomAt(1.4, c[0], c[1]); }
        else if (what === "out") { self.zoomAt(1 / 1.4, c[0], c[1]); }
        else if (what === "fit") { self.fit(); }
        else if (what === "path") { self.zoomTo(self.path); }
      });
    });

    var close = this.panel && this.panel.querySelector(".tree-details-close");
    if (close) {
      close.addEventListener("click", function () { self.hide(); });
    }
    if (this.panel) {
      // The panel is not part of the drawing: no panning or zooming from inside it.
      ["pointerdown", "wheel"].forEach(function (type) {
        self.panel.addEventListener(type, function (event) { event.stopPropagation(); });
      });
    }
    box.addEventListener("keydown", function (event) {
      if (event.key === "Escape") { self.hide(); }
    });

    svg.addEventListener("focusin", function (event) {
      var g = event.target.closest && event.target.closest("[data-node]");
      if (!g || self.quiet) { return; }
      self.reveal(g.getAttribute("data-node"));
      self.show(g.getAttribute("data-node"));
    });
    svg.addEventListener("click", function (event) {
      if (moved) { return; }
      var g = event.target.closest && event.target.closest("[data-node]");
      if (!g) { return; }
      if (document.activeElement !== g) { g.focus({ preventScroll: true }); }
      self.show(g.getAttribute("data-node"));
    });
    svg.addEventListener("keydown", function (event) {
      var g = event.target.closest && event.target.closest("[data-node]");
      var c = self.center();
      var next = g && self.neighbour(g, event.key);
      if (next) {
        event.preventDefault();
        next.focus({ preventScroll: true });
      } else if (g && (event.key === "Enter" || event.key === " ")) {
        event.preventDefault();
        self.show(g.getAttribute("data-node"));
      } else if (event.key === "+" || event.key === "=") {
        self.zoomAt(1.4, c[0], c[1]);
      } else if (event.key === "-") {
        self.zoomAt(1 / 1.4, c[0], c[1]);
      }
    });
    box.addEventListener("wheel", function (event) {
      if (!event.ctrlKey && !event.metaKey) { return; } // a plain wheel scrolls the page
      event.preventDefault();
      var r = box.getBoundingClientRect();
      self.zoomAt(Math.exp(-event.deltaY * 0.002), event.clientX - r.left, event.clientY - r.top);
    }, { passive: false });

    box.addEventListener("pointerdown", function (event) {
      pointers[event.pointerId] = [event.clientX, event.clientY];
      moved = false;
      last = [event.clientX, event.clientY];
      if (Object.keys(pointers).length === 2) {
        var p = Object.values(pointers);
        pinch = Math.hypot(p[0][0] - p[1][0], p[0][1] - p[1][1]);
      }
    });
    box.addEventListener("pointermove", function (event) {
      if (!pointers[event.pointerId]) { return; }
      pointers[event.pointerId] = [event.clientX, event.clientY];
      var p = Object.values(pointers);
      if (p.length === 2 && pinch) {
        var d = Math.hypot(p[0][0] - p[1][0], p[0][1] - p[1][1]);
        var r = box.getBoundingClientRect();
        self.zoomAt(d / pinch, (p[0][0] + p[1][0]) / 2 - r.left, (p[0][1] + p[1][1]) / 2 - r.top);
        pinch = d;
        moved = true;
        return;
      }
      var dx = event.clientX - last[0], dy = event.clientY - last[1];
      if (!moved && Math.abs(dx) + Math.abs(dy) < 6) { return; }
      if (!moved) { box.setPointerCapture(event.pointerId); }
      moved = true;
      last = [event.clientX, event.clientY];
      self.x += dx; self.y += dy;
      self.clamp();
      self.apply();
    });
    function up(event) {
      delete pointers[event.pointerId];
      if (Object.keys(pointers).length < 2) { pinch = null; }
    }
    box.addEventListener("pointerup", up);
    box.addEventListener("pointercancel", up);

    var resized = null;
    window.addEventListener("resize", function () {
      clearTimeout(resized);
      resized = setTimeout(function () { self.fit(); }, 150);
    });
  };

  function start() {
    document.querySelectorAll("[data-tree]").forEach(function (box) { box.treeView = new TreeView(box); });
  }
  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", start);
  } else { start(); }
})();
