// The test SPA: a history router whose every page, link and menu comes from
// the site's JSON API, some of it only after a timer (a crawler that does not
// run scripts, or that waits in real time, finds little or pays for it).
(function () {
  "use strict";
  var MOVED = { "/moved": "/landing" };
  var path = location.pathname.replace(/\/+$/, "") || "/";
  if (MOVED[path]) {
    location = MOVED[path]; // a script redirect, on load
    return;
  }
  var root = document.getElementById("root") || document.getElementById("app");

  function link(href, label) {
    var a = document.createElement("a");
    a.href = href;
    a.textContent = label;
    return a;
  }

  function menu(items) {
    var nav = document.createElement("nav");
    items.forEach(function (item) { nav.appendChild(link(item.href, item.label)); });
    document.body.insertBefore(nav, root);
  }

  function head(tag, attributes) {
    var element = document.createElement(tag);
    Object.keys(attributes).forEach(function (name) { element.setAttribute(name, attributes[name]); });
    document.head.appendChild(element);
  }

  function show(page) {
    document.title = page.title;
    var h1 = document.createElement("h1");
    h1.textContent = page.title;
    var text = document.createElement("p");
    text.textContent = page.text;
    root.appendChild(h1);
    root.appendChild(text);
    (page.images || []).forEach(function (src) {
      var img = document.createElement("img");
      img.src = src;
      img.alt = page.title;
      root.appendChild(img);
    });
    if (page.robots) head("meta", { name: "robots", content: page.robots });
    if (page.canonical) head("link", { rel: "canonical", href: page.canonical });
    if (page.button) {
      var button = document.createElement("button");
      button.textContent = "Open";
      button.addEventListener("click", function () { location = page.button; });
      root.appendChild(button);
    }
  }

  function notFound() {
    document.title = "Page not found";
    root.textContent = "Page not found";
  }

  function json(url) {
    return fetch(url).then(function (response) {
      if (!response.ok) throw new Error(url + ": " + response.status);
      return response.json();
    });
  }

  var slug = path === "/" ? "/index" : path;
  fetch("/api/private.json").catch(function () {}); // the user's account: robots.txt forbids it
  fetch("/api/config.json").catch(function () {}); // redirected off the site
  fetch("/api/track", { method: "POST", body: path }).catch(function () {});
  json("/api/nav.json").then(function (items) {
    setTimeout(function () { menu(items); }, 1500);
  }).catch(function () {});
  json("/api/pages" + slug + ".json").then(function (page) {
    show(page);
    // Related links only after a while, and from another request.
    setTimeout(function () {
      json("/api/related" + slug + ".json").then(function (links) {
        var list = document.createElement("ul");
        links.forEach(function (item) {
          var li = document.createElement("li");
          li.appendChild(link(item.href, item.label));
          list.appendChild(li);
        });
        root.appendChild(list);
      }).catch(function () {});
    }, 4000);
  }, notFound);
  window.addEventListener("hashchange", function () { root.setAttribute("data-view", location.hash); });
})();
