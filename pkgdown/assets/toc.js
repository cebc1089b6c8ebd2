/* The table of contents of a page ("On this page"), for pkgdown.js's
 * Toc.init({$nav, $scope}) call. pkgdown 2.0.7 loads bootstrap-toc from a CDN
 * for this, which leaves the table empty offline; this file is served by the
 * site itself. It builds the markup pkgdown's style sheet and Bootstrap's
 * scrollspy expect: a nav.nav of a.nav-link entries for the top heading
 * level, each followed by a nested nav.nav for the level below it.
 * Headings marked data-toc-skip are left out; data-toc-text replaces a
 * heading's text. Part of mcplite (MIT licence). */
(function (global) {
  "use strict";

  function headingText(h) {
    var given = h.getAttribute("data-toc-text");
    return (given !== null ? given : h.textContent).replace(/\s+/g, " ").trim();
  }

  function anchorFor(h, used) {
    if (h.id) return h.id;
    var section = h.parentElement;
    if (section && section.id && section.firstElementChild === h) return section.id;
    var base = headingText(h).toLowerCase().replace(/[^a-z0-9]+/g, "-").replace(/^-|-$/g, "") || "section";
    var id = base, n = 1;
    while (used[id] || document.getElementById(id)) id = base + "-" + n++;
    h.id = id;
    return id;
  }

  function newNav() {
    var nav = document.createElement("nav");
    nav.className = "nav nav-pills flex-column";
    return nav;
  }

  function link(h, id) {
    var a = document.createElement("a");
    a.className = "nav-link";
    a.href = "#" + id;
    a.textContent = headingText(h);
    return a;
  }

  function init(options) {
    var container = options.$nav && options.$nav[0];
    if (!container) return;
    var headings = Array.prototype.filter.call(options.$scope || [], function (h) {
      return !h.hasAttribute("data-toc-skip") && headingText(h) !== "";
    });
    if (!headings.length) return;
    var level = function (h) { return Number(h.tagName.substring(1)); };
    var top = Math.min.apply(null, headings.map(level));
    var used = {};
    var root = newNav(), children = null;
    headings.forEach(function (h) {
      var l = level(h);
      if (l > top + 1) return;
      var id = anchorFor(h, used);
      used[id] = true;
      if (l === top || root.lastChild === null) {
        root.appendChild(link(h, id));
        children = null;
      } else {
        if (children === null) {
          children = newNav();
          root.appendChild(children);
        }
        children.appendChild(link(h, id));
      }
    });
    container.appendChild(root);
  }

  global.Toc = { init: init };
})(window);
