// A third-party widget from another origin: it adds a link, when it is allowed to run at all.
(function () {
  "use strict";
  setTimeout(function () {
    var a = document.createElement("a");
    a.href = "/partners";
    a.textContent = "Our partners";
    document.body.appendChild(a);
  }, 500);
})();
