// Elements that stick out of their parent, or whose content is cut or scrolls sideways
// (tests/browser/test_screens_fit.py). Drawings that pan and zoom are left out.
() => {
  const skip = (el) => el.closest(
    'svg, .tree-view, .js-plotly-plot, [data-figure], script, style, .sr-only, .visually-hidden');
  const shown = (el) => {
    const r = el.getBoundingClientRect();
    const s = getComputedStyle(el);
    return r.width > 0 && r.height > 0 && s.visibility !== 'hidden' && s.display !== 'none';
  };
  const name = (el) => el.tagName.toLowerCase() + (el.id ? '#' + el.id : '') +
    (el.className && typeof el.className === 'string' ? '.' + el.className.trim().split(/\s+/).join('.') : '');
  const problems = [];
  const doc = document.documentElement;
  if (doc.scrollWidth > window.innerWidth + 1) problems.push(`page ${doc.scrollWidth} > ${window.innerWidth}`);
  for (const el of document.body.querySelectorAll('*')) {
    if (skip(el) || !shown(el)) continue;
    const s = getComputedStyle(el);
    if (['hidden', 'clip', 'auto', 'scroll'].includes(s.overflowX) && el.scrollWidth > el.clientWidth + 1
        && el.tagName !== 'SELECT' && el.tagName !== 'TEXTAREA' && el.tagName !== 'INPUT') {
      problems.push(`${name(el)} content ${el.scrollWidth} > ${el.clientWidth}: ${el.innerText.slice(0, 60)}`);
    }
    let parent = el.parentElement;
    // a box-less parent (display: contents) does not contain: its own container does
    while (parent && getComputedStyle(parent).display === 'contents') parent = parent.parentElement;
    if (!parent || parent === document.body || skip(parent)) continue;
    const p = parent.getBoundingClientRect(), r = el.getBoundingClientRect();
    if (getComputedStyle(parent).overflowX === 'visible' && (r.right > p.right + 1 || r.left < p.left - 1)) {
      problems.push(`${name(el)} sticks out of ${name(parent)} (${Math.round(r.left)}..${Math.round(r.right)} vs ${Math.round(p.left)}..${Math.round(p.right)}): ${el.innerText.slice(0, 60)}`);
    }
    if (el.tagName === 'BUTTON' || el.classList.contains('btn')) {
      if (el.scrollWidth > el.clientWidth + 1) problems.push(`${name(el)} label cut: ${el.innerText}`);
    }
  }
  return problems;
}
