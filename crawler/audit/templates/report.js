"use strict";
(function () {
  const data = JSON.parse(document.getElementById("audit-data").textContent);
  const PAGE = 100;
  const byUrl = new Map(data.urls.map(function (row) { return [row.url, row]; }));

  function text(value) {
    if (value === null || value === undefined) return "";
    return Array.isArray(value) ? value.join(" ") : String(value);
  }

  function button(label, enabled, action) {
    const element = document.createElement("button");
    element.type = "button";
    element.textContent = label;
    element.disabled = !enabled;
    element.addEventListener("click", action);
    return element;
  }

  function table(id, rows, columns, field, onRow) {
    const body = document.querySelector("#" + id + " tbody");
    const pager = document.getElementById(id + "-pager");
    const count = document.getElementById(id + "-count");
    const search = document.getElementById(id + "-filter");
    const choice = document.getElementById(id + "-" + field);
    let sortKey = null;
    let sortDirection = 1;
    let page = 0;
    let shown = rows;

    function compare(a, b) {
      const x = a[sortKey];
      const y = b[sortKey];
      if (typeof x === "number" && typeof y === "number") return (x - y) * sortDirection;
      return text(x).localeCompare(text(y)) * sortDirection;
    }

    function render() {
      body.replaceChildren();
      const start = page * PAGE;
      for (const row of shown.slice(start, start + PAGE)) {
        const line = document.createElement("tr");
        for (const column of columns) {
          const cell = document.createElement("td");
          cell.textContent = text(row[column]);
          line.appendChild(cell);
        }
        line.addEventListener("click", function () { onRow(row); });
        body.appendChild(line);
      }
      count.textContent = shown.length + " of " + rows.length;
      pager.replaceChildren();
      const pages = Math.ceil(shown.length / PAGE);
      if (pages > 1) {
        pager.appendChild(button("previous", page > 0, function () { page -= 1; render(); }));
        pager.appendChild(document.createTextNode(" page " + (page + 1) + " of " + pages + " "));
        pager.appendChild(button("next", page < pages - 1, function () { page += 1; render(); }));
      }
    }

    function apply() {
      const needle = search.value.trim().toLowerCase();
      const wanted = choice.value;
      shown = rows.filter(function (row) {
        if (wanted && row[field] !== wanted) return false;
        return !needle || columns.some(function (column) { return text(row[column]).toLowerCase().includes(needle); });
      });
      if (sortKey) shown.sort(compare);
      page = 0;
      render();
    }

    document.querySelectorAll("#" + id + " th").forEach(function (header) {
      header.addEventListener("click", function () {
        const key = header.dataset.key;
        sortDirection = sortKey === key ? -sortDirection : 1;
        sortKey = key;
        apply();
      });
    });
    search.addEventListener("input", apply);
    choice.addEventListener("change", apply);
    apply();
  }

  function showDetail(url) {
    const row = byUrl.get(url);
    const panel = document.getElementById("detail");
    panel.replaceChildren();
    const heading = document.createElement("h3");
    heading.textContent = url;
    panel.appendChild(heading);
    const list = document.createElement("dl");
    const fields = row ? Object.entries(row) : [["url", url]];
    const findings = data.findings.filter(function (finding) { return finding.url === url; });
    for (const [name, value] of fields.concat([["finding details", findings.map(function (f) { return f.kind + ": " + f.detail; })]])) {
      const term = document.createElement("dt");
      term.textContent = name;
      const description = document.createElement("dd");
      description.textContent = text(value) || "-";
      list.append(term, description);
    }
    panel.appendChild(list);
    panel.hidden = false;
    panel.scrollIntoView({ block: "nearest" });
  }

  table("findings", data.findings, ["kind", "url", "detail", "related"], "kind", function (row) { showDetail(row.url); });
  table("urls", data.urls, ["url", "status", "outcome", "reason", "depth", "inlinks", "in_sitemaps", "title"], "outcome",
    function (row) { showDetail(row.url); });
})();
