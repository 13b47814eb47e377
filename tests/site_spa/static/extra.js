// A server-rendered page's own script: it adds one link that no HTML has.
(function () {
  "use strict";
  var name = location.pathname.split("/").pop().replace(/\.html$/, "");
  setTimeout(function () {
    var a = document.createElement("a");
    a.href = "/extras/" + name + ".html";
    a.textContent = "More about " + name;
    document.body.appendChild(a);
  }, 1000);
})();
