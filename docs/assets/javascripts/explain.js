/* "Paste your error": the course's error index, applied in the reader's browser with no server.
 *
 * The rules (wordings, routes, texts) are not written here: tools/explain_hook.py exports them from the Python
 * index (devicelab.errors.export) into explain-rules.js at build time, and this file interprets them exactly as
 * devicelab.errors.diagnose does (same normaliser, same order, same routing). tests/site/test_explain_page.py
 * pastes the whole corpus of real messages into the page and compares the answers with Python's.
 */
(function () {
  "use strict";

  // ------------------------------------------------------------------------------------------- pastes
  var PUNCTUATION = { "\u2018": "'", "\u2019": "'", "\u201C": '"', "\u201D": '"', "\u3000": " ", "\u3002": ".",
    "\u3001": ",", "`": "" };

  var MAX_PASTE = 40000, HEAD = 8000;

  function normalise(text) {
    if (text.length > MAX_PASTE) text = text.slice(0, HEAD) + "\n" + text.slice(text.length - (MAX_PASTE - HEAD));
    text = text.replace(/\r\n/g, "\n").replace(/\r/g, "\n");
    text = text.replace(/\x1b\[[0-9;]*[A-Za-z]/g, "");
    text = text.replace(/[\u2018\u2019\u201C\u201D\u3000\u3002\u3001`\uFF01-\uFF5E]/g, function (c) {
      if (c in PUNCTUATION) return PUNCTUATION[c];
      return String.fromCharCode(c.charCodeAt(0) - 0xFEE0);
    });
    var lines = text.split("\n").map(function (line) {
      return line.replace(/^[ \t]*(?:>[ \t]?)+/, "").replace(/[\u2500-\u257f]/g, " ");
    });
    var spaced = lines.join(" ").replace(/\s+/g, " ").trim();
    var glued = lines.map(function (l) { return l.trim(); }).join("").replace(/\s+/g, " ").trim();
    return [spaced, glued];
  }

  // ------------------------------------------------------------------------------------------- devices
  function deviceOf(rules, value) {
    var v = value.trim().replace(/^['"]+|['"]+$/g, "");
    var low = v.toLowerCase();
    if (rules._deviceFull.test(low)) return low;
    var glued = /^([a-z]+)(\d+)$/.exec(low);
    if (glued && rules._deviceFull.test(glued[1])) return glued[1] + ":" + glued[2];
    if (/^\d+$/.test(v)) return "cuda:" + v;
    if (low === "gpu" || low === "cuda") return "cuda";
    if (low === "cpu") return "cpu";
    if (low.indexOf("torch.cuda.") === 0 || low.indexOf("cuda") === 0 || low.split(".").indexOf("cuda") >= 0) {
      return "cuda";
    }
    if (low.indexOf("torch.mps.") === 0 || low.indexOf("mps") === 0) return "mps";
    if (low.indexOf("torch.xpu.") === 0 || low.indexOf("xpu") === 0) return "xpu";
    if (/^torch\.\w+tensor$/.test(low) || low.indexOf("cpu") === 0) return "cpu";
    return "";
  }

  var DTYPES = { half: "Half", float: "Float", double: "Double", bfloat16: "BFloat16", long: "Long", int: "Int",
    bool: "Bool" };

  function dtypeOf(value) {
    var v = value.trim();
    var found = /^(?:torch\.(?:cuda\.|mps\.|xpu\.)?|CUDA|CPU|MPS|XPU)(\w+?)(?:Tensor|Type)$/.exec(v);
    if (found) return found[1];
    found = /^(?:c10::)?(\w+)$/.exec(v);
    if (found && DTYPES.hasOwnProperty(found[1].toLowerCase())) return DTYPES[found[1].toLowerCase()];
    return "";
  }

  function relation(devices) {
    if (devices.length < 2) return "";
    var a = devices[0], b = devices[1];
    if (a === b) return "same";
    var pa = a.split(":"), pb = b.split(":");
    if (pa[0] !== pb[0]) return "type";
    return pa[1] && pb[1] && pa[1] !== pb[1] ? "index" : "same";
  }

  function derived(rules, kind, ordered) {
    var values = {}, devices = [], i;
    ordered.forEach(function (pair) { values[pair[0]] = pair[1]; });
    if (kind.scan && values.hasOwnProperty(kind.scan)) {
      var tokens = values[kind.scan].match(rules._deviceToken) || [];
      tokens.forEach(function (t) { if (devices.indexOf(t) < 0) devices.push(t); });
      if (devices[0]) values.dev1 = devices[0];
      if (devices[1]) values.dev2 = devices[1];
    } else {
      ordered.forEach(function (pair) {
        if (kind.device_fields.indexOf(pair[0]) >= 0) {
          var device = deviceOf(rules, pair[1]);
          values[pair[0] + "_dev"] = device;
          values[pair[0] + "_dtype"] = dtypeOf(pair[1]);
          if (device) devices.push(device);
        }
      });
    }
    values.devices = devices.join(",");
    values.relation = relation(devices);
    var types = [];
    devices.forEach(function (d) { var t = d.split(":")[0]; if (types.indexOf(t) < 0) types.push(t); });
    values.types = types.sort().join(",");
    var dtypes = kind.device_fields.map(function (n) { return values[n + "_dtype"] || ""; });
    var known = dtypes.length === 2;
    for (i = 0; i < dtypes.length; i++) if (!dtypes[i]) known = false;
    values.dtypes = known ? (dtypes[0] === dtypes[1] ? "same" : "different") : "";
    return values;
  }

  // ------------------------------------------------------------------------------------------- matching
  function matchIn(rules, line) {
    for (var k = 0; k < rules.kinds.length; k++) {
      var kind = rules.kinds[k];
      for (var p = 0; p < kind._regexes.length; p++) {
        var m = kind._regexes[p].exec(line);
        if (!m) continue;
        var named = [];
        var groups = m.groups || {};
        Object.keys(groups).forEach(function (name) {
          if (groups[name] !== undefined) named.push([name, groups[name], m.indices.groups[name][0]]);
        });
        named.sort(function (a, b) { return a[2] - b[2]; });
        var fields = [], markers = {};
        named.forEach(function (n) {
          if (n[0].charAt(0) === "_") markers[n[0]] = n[1]; else fields.push([n[0], n[1]]);
        });
        return { kind: kind, fields: fields, markers: markers };
      }
    }
    return null;
  }

  function weight(match) {
    if (!match) return -1;
    return match.fields.reduce(function (sum, f) { return sum + f[1].length; }, 0);
  }

  function applies(route, values) {
    return Object.keys(route.when).every(function (name) {
      return new RegExp(route.when[name]).test(values[name] || "");
    });
  }

  function diagnose(rules, text) {
    var none = { device_error: false, chapter: null, confident: false, candidates: [], kind: null, devices: [],
      op: null, argument: null, causes: [], match: null };
    var lines = normalise(String(text));
    var match = matchIn(rules, lines[0]);
    if (lines[1] !== lines[0]) {
      var second = matchIn(rules, lines[1]);
      if (second && (!match || (second.kind === match.kind && weight(second) > weight(match)))) match = second;
    }
    if (!match) return none;
    var values = derived(rules, match.kind, match.fields);
    Object.keys(match.markers).forEach(function (k) { if (!(k in values)) values[k] = match.markers[k]; });
    var kind = match.kind, route = null;
    for (var r = 0; r < kind.routes.length; r++) {
      if (applies(kind.routes[r], values)) { route = kind.routes[r]; break; }
    }
    if (!route) {
      route = { chapter: kind.chapter, confident: kind.confident, causes: kind.causes, candidates: kind.candidates,
        device_error: null, family: null };
    }
    var deviceError = route.device_error === null ? kind.device_error : route.device_error;
    var candidates = [];
    [route.chapter].concat(route.candidates).forEach(function (c) {
      if (c && candidates.indexOf(c) < 0) candidates.push(c);
    });
    var arg = values.arg;
    return {
      device_error: deviceError,
      chapter: route.chapter,
      confident: Boolean(route.confident && route.chapter),
      candidates: candidates,
      kind: route.family || kind.name,
      devices: values.devices ? values.devices.split(",") : [],
      op: values.op || null,
      argument: arg && !/^\d+$/.test(arg) ? arg : null,
      causes: deviceError ? route.causes : [],
      match: { kind: kind, fields: match.fields, values: values }
    };
  }

  // ------------------------------------------------------------------------------------------- words
  function fill(template, values) {
    return template.replace(/\{(\w+)\}/g, function (_, name) { return values[name] || "?"; });
  }

  function escapeHtml(text) {
    return text.replace(/[&<>"]/g, function (c) {
      return { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;" }[c];
    });
  }

  function inline(text) {
    return escapeHtml(text).replace(/`([^`]+)`/g, "<code>$1</code>");
  }

  function chapterLink(rules, chapter, lang) {
    var title = rules.chapters[chapter][lang];
    var coming = rules.coming.indexOf(chapter) >= 0 ? " " + rules.labels.coming[lang] : "";
    return '<a class="explain-chapter" data-chapter="' + chapter + '" href="../' + chapter + '/">' +
      escapeHtml(title) + "</a>" + escapeHtml(coming);
  }

  function reading(kind, fields, values, lang) {
    var hasOp = fields.some(function (f) { return f[0] === "op"; });
    var hasWant = fields.some(function (f) { return f[0] === "want"; });
    var short = !hasOp && hasWant && kind.reading_without_op && kind.reading_without_op[lang];
    return fill(short ? kind.reading_without_op[lang] : (kind.reading[lang] || ""), values);
  }

  function render(rules, d, lang) {
    var words = {};
    Object.keys(rules.labels).forEach(function (k) { words[k] = rules.labels[k][lang]; });
    var out = [];
    var verdict = d.match === null ? "unknown" : (d.device_error ? "device" : "declined");
    if (d.match === null) {
      return { verdict: verdict, html: "<p>" + inline(words.unknown) + "</p>" };
    }
    var values = d.match.values;
    if (!d.device_error) {
      var declined = d.match.kind;
      if (d.kind !== declined.name) {
        declined = rules.kinds.filter(function (k) { return k.name === d.kind; })[0] || declined;
      }
      out.push("<p><strong>" + inline(words.not_device) + "</strong> " + inline(fill(declined.reading[lang], values)) +
        "</p>");
      if (d.chapter) out.push("<p>" + inline(words.chapter) + ": " + chapterLink(rules, d.chapter, lang) + "</p>");
      return { verdict: verdict, html: out.join("") };
    }
    out.push("<p><strong>" + inline(words.device) + "</strong> <span class=\"explain-family\">(" +
      inline(words.family) + ": <code>" + escapeHtml(d.kind) + "</code>)</span></p>");
    var facts = [];
    if (d.op) facts.push(inline(words.op) + ": <code>" + escapeHtml(d.op) + "</code>");
    if (d.argument) facts.push(inline(words.arg) + ": <code>" + escapeHtml(d.argument) + "</code>");
    if (d.devices.length) {
      facts.push(inline(words.devices) + ": " + d.devices.map(function (x) {
        return "<code>" + escapeHtml(x) + "</code>";
      }).join(", "));
    }
    if (facts.length) out.push('<p class="explain-facts">' + facts.join(" · ") + "</p>");
    out.push("<h3>" + inline(words.meaning) + "</h3><p>" + inline(reading(d.match.kind, d.match.fields, values, lang)) +
      "</p>");
    var causes = d.causes.map(function (key) { return fill(rules.causes[key][lang], values); });
    if (causes.length) {
      out.push("<h3>" + inline(causes.length > 1 ? words.causes : words.cause) + "</h3>");
      out.push(causes.length > 1 ? "<ol>" + causes.map(function (c) { return "<li>" + inline(c) + "</li>"; }).join("") +
        "</ol>" : "<p>" + inline(causes[0]) + "</p>");
    }
    if (causes.length > 1 || !d.confident) {
      if (!d.confident && causes.length > 1) out.push('<p class="explain-unsure">' + inline(words.unsure) + "</p>");
      out.push("<h3>" + inline(words.check) + "</h3><p>" + inline(rules.check[lang]) + "</p>");
    }
    if (d.chapter) {
      var line = "<p>" + inline(words.chapter) + ": " + chapterLink(rules, d.chapter, lang);
      var others = d.candidates.slice(1);
      if (others.length) {
        line += "<br>" + inline(words.also) + ": " + others.map(function (c) {
          return chapterLink(rules, c, lang);
        }).join(", ");
      }
      out.push(line + "</p>");
      if (d.chapter === "09-debugging") out.push("<p>" + inline(words.fallback) + "</p>");
    }
    return { verdict: verdict, html: out.join("") };
  }

  // ------------------------------------------------------------------------------------------- the page
  function prepare(rules) {
    if (rules._ready) return rules;
    rules._deviceFull = new RegExp("^(?:" + rules.device + ")$");
    rules._deviceToken = new RegExp("\\b" + rules.device + "(?![\\w-])", "g");
    rules.kinds.forEach(function (kind) {
      kind._regexes = kind.patterns.map(function (p) { return new RegExp(p, "d"); });
    });
    rules._ready = true;
    return rules;
  }

  function explain(text, lang) {
    var rules = prepare(window.DEVICELAB_EXPLAIN_RULES);
    var started = performance.now();
    var d = diagnose(rules, text);
    var shown = render(rules, d, lang);
    d.ms = performance.now() - started;
    d.html = shown.html;
    d.verdict = shown.verdict;
    delete d.match;
    return d;
  }

  function attach() {
    var input = document.getElementById("explain-input");
    var output = document.getElementById("explain-output");
    if (!input || !output || !window.DEVICELAB_EXPLAIN_RULES) return;
    var lang = (document.documentElement.getAttribute("lang") || "en").indexOf("zh") === 0 ? "zh" : "en";
    function update() {
      if (!input.value.trim()) {
        output.innerHTML = "";
        output.removeAttribute("data-verdict");
        return;
      }
      var d = explain(input.value, lang);
      output.innerHTML = d.html;
      output.setAttribute("data-verdict", d.verdict);
      output.setAttribute("data-chapter", d.chapter || "");
      output.setAttribute("data-device-error", String(d.device_error));
      output.setAttribute("data-confident", String(d.confident));
      output.setAttribute("data-ms", d.ms.toFixed(3));
    }
    input.addEventListener("input", update);
    var button = document.getElementById("explain-button");
    if (button) button.addEventListener("click", update);
    update();
  }

  window.DevicelabExplain = { explain: explain, normalise: normalise };
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", attach);
  else attach();
})();
