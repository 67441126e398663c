/* A box that scrolls must take keyboard focus, or a keyboard user cannot scroll it (WCAG 2.1.1,
   axe-core's scrollable-region-focusable): printed tables, long code lines, wide HTML tables,
   a tall slide. Only boxes that really overflow get a Tab stop; the decks look again whenever
   reveal.js shows another slide. */
(function () {
  function scrolls(overflow) {
    return overflow === "auto" || overflow === "scroll";
  }
  function focusableScrollers() {
    document.querySelectorAll("pre, div, section").forEach(function (box) {
      var style = getComputedStyle(box);
      var wide = box.scrollWidth > box.clientWidth && scrolls(style.overflowX);
      var tall = box.scrollHeight > box.clientHeight && scrolls(style.overflowY);
      if ((wide || tall) && !box.hasAttribute("tabindex")) {
        box.setAttribute("tabindex", "0");
      }
    });
  }
  window.addEventListener("load", focusableScrollers);
  document.addEventListener("ready", focusableScrollers);
  document.addEventListener("slidechanged", focusableScrollers);
})();
