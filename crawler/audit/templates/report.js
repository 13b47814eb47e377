"use strict";
(function () {
  const data = JSON.parse(document.getElementById("audit-data").textContent);
  const PAGE = 100;
  const byUrl = new Map(data.urls.map(function (row) { return [row.url, row]; }));
  const BADGES = { severity: ["critical", "warning", "notice"], change: ["new", "still there"] };
  const LABELS = { depth: "click depth", response_ms: "response time", bytes: "size", linked_from: "linked from (anchor text)" };
  for (const finding of data.findings) finding.fix = (data.kinds[finding.kind] || {}).fix || "";

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
          if (BADGES[column] && BADGES[column].includes(row[column])) {
            const badge = document.createElement("span");
            badge.className = "badge " + row[column].replace(" ", "-");
            badge.textContent = row[column];
            cell.appendChild(badge);
          } else {
            cell.textContent = text(row[column]);
          }
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

  function linkLine(link) {
    if (link === null || typeof link !== "object") return text(link);
    const from = link.url || link.source || "";
    if (link.anchor === null || link.anchor === undefined) return from + " (a <link> element, not a click)";
    return from + (link.anchor ? " \u201c" + link.anchor + "\u201d" : " (a link without text)");
  }

  function describe(name, value) {
    if (name === "finding details") return value.length ? value : "-";
    if (name === "depth" && (value === null || value === undefined)) return "not linked";
    if (name === "response_ms" && typeof value === "number") return value + " ms";
    if (name === "bytes" && typeof value === "number") {
      return value < 1024 ? value + " bytes" : (value / 1024).toFixed(1) + " KiB (" + value + " bytes)";
    }
    if (Array.isArray(value) && value.some(function (item) { return item !== null && typeof item === "object"; })) {
      return value.map(linkLine);
    }
    return text(value) || "-";
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
    const notes = findings.map(function (f) { return f.severity + " " + f.kind + ": " + f.detail + " \u2014 " + f.fix; });
    for (const [name, value] of fields.concat([["finding details", notes]])) {
      const term = document.createElement("dt");
      term.textContent = LABELS[name] || name;
      const description = document.createElement("dd");
      const shown = describe(name, value);
      if (Array.isArray(shown)) {
        for (const line of shown) {
          const item = document.createElement("div");
          item.textContent = line;
          description.appendChild(item);
        }
      } else {
        description.textContent = shown;
      }
      term.dataset.field = name;
      list.append(term, description);
    }
    panel.appendChild(list);
    panel.hidden = false;
    panel.scrollIntoView({ block: "nearest" });
  }

  const findingColumns = ["severity"].concat(data.comparing ? ["change"] : [], ["kind", "url", "detail", "fix", "related"]);
  table("findings", data.findings, findingColumns, "kind", function (row) { showDetail(row.url); });
  table("urls", data.urls, ["url", "status", "outcome", "reason", "depth", "inlinks", "in_sitemaps", "title"], "outcome",
    function (row) { showDetail(row.url); });
})();
