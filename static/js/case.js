// The case screen (diagnosis/clinic/templates/clinic/case_detail.html) opens on the advice: its headline (the
// test to order and its price) and the field or button in focus, both below the sticky "Cost so
// far" bar.  The browser's own scroll to an autofocused field centres it, which on a long advice
// (the conditioned-loss model's, at 1366 x 768) left the headline above the window.  A link to
// an anchor (#order-entry) or another form in focus (a correction) is left as it is.
(function () {
  "use strict";
  var advice = document.getElementById("advice");
  if (!advice || location.hash) return;
  var field = advice.querySelector("[autofocus]");
  var active = document.activeElement;
  if (!field || (active && active !== document.body && active !== field)) return;
  field.focus({ preventScroll: true }); // the browser then skips its own autofocus scroll
  var bar = document.querySelector(".cost-box");
  var room = bar ? bar.offsetHeight + 8 : 0; // the bar sticks to the top of the window
  var top = advice.getBoundingClientRect().top;
  var fieldBottom = field.getBoundingClientRect().bottom;
  if (top >= room && fieldBottom <= window.innerHeight) return; // both in view already
  var shift = top - room; // the advice's top just below the bar...
  if (fieldBottom - shift > window.innerHeight) {
    shift = fieldBottom - window.innerHeight + 8; // ...unless the field would then be below
  }
  window.scrollBy(0, shift);
})();
