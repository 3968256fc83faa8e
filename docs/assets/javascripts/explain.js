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
  // HTML's escapes, as a paste copied from a page's source or a scraped post shows them (`&#39;cuda:0&#39;`)
  var NAMED = { lt: "<", gt: ">", quot: '"', apos: "'", amp: "&", nbsp: "\u00a0" };

  function unescape(text) {
    if (text.indexOf("&") < 0) return text;
    return text.replace(/&(#[0-9]{1,6}|#[xX][0-9a-fA-F]{1,6}|lt|gt|quot|apos|amp|nbsp);/g, function (all, name) {
      if (name.charAt(0) !== "#") return NAMED[name];
      var code = /^#[xX]/.test(name) ? parseInt(name.slice(2), 16) : parseInt(name.slice(1), 10);
      return code > 0 && code <= 0x10FFFF && !(code >= 0xD800 && code <= 0xDFFF) ? String.fromCodePoint(code) : all;
    });
  }

  // zero-width characters a page put into copied text, and typographic quotes for plain ones (core.plain)
  // (console colours too, with or without their escape character, and HTML's line breaks and text tags)
  var ORPHAN_COLOUR = /\[(?:\d{1,3}(?:;\d{1,3})*m|m(?=[A-Z\s:]|$))/gm;
  var BREAK = /<br ?\/?>\n?/gi;
  var TEXT_TAG = /<\/?(?:pre|code|p|b|strong|i|em|span|div|tt|kbd|samp|blockquote)(?: [^<>\n]*)?>/gi;
  function plain(text) {
    text = text.replace(/[\u200B-\u200D\u2060\uFEFF]/g, "").replace(/[\u2018\u2019]/g, "'")
      .replace(/[\u201C\u201D]/g, '"').replace(ANSI, "");
    if (text.indexOf("[") >= 0) text = text.replace(ORPHAN_COLOUR, "");
    if (text.indexOf("<") >= 0) text = text.replace(BREAK, "\n").replace(TEXT_TAG, "");
    return text;
  }

  // a title cut by "…" and continued by "…" after a line break: one sentence again (core.rejoin)
  var CUT_TITLE = /\u2026(?:[^\S\n]|>|\[rank\d+\]:)*(?:\n(?:[^\S\n]|>|\[rank\d+\]:)*)*\u2026/g;
  function rejoin(text) { return text.indexOf("\u2026") < 0 ? text : text.replace(CUT_TITLE, ""); }

  // a paste with no capital letter at all (an issue title typed in lower case): read without regard to case
  function isCaseless(text) { return !/[A-Z]/.test(text); }

  var ANSI = /\x1b\[[0-9;]*[A-Za-z]/g;  // a console's colours (devicelab.errors.core.ANSI)

  // what a reply or a console put before a line (`> `, torchrun's `[rank0]:`)
  var PREFIX = /^[ \t]*(?:>[ \t]?|\[(?:rank|default)\d+\]:[ \t]?)+/;

  // a line as the error lines and the frames are read: no prefix, a web page's no-break spaces as spaces
  function bareLine(line) { return line.replace(PREFIX, "").replace(/\u00a0/g, " "); }

  function normalise(text) {
    if (text.length > MAX_PASTE) text = text.slice(0, HEAD) + "\n" + text.slice(text.length - (MAX_PASTE - HEAD));
    text = text.replace(/\r\n/g, "\n").replace(/\r/g, "\n");
    text = text.replace(ANSI, "");
    text = text.replace(/[\u2018\u2019\u201C\u201D\u3000\u3002\u3001`\uFF01-\uFF5E]/g, function (c) {
      if (c in PUNCTUATION) return PUNCTUATION[c];
      return String.fromCharCode(c.charCodeAt(0) - 0xFEE0);
    });
    var lines = text.split("\n").map(function (line) {
      return line.replace(PREFIX, "").replace(/[\u2500-\u257f]/g, " ");
    });
    var spaced = lines.join(" ").replace(/\s+/g, " ").trim();
    // glued: a space kept where a line ends with one, or starts with a single one (a paste wrapped at a fixed width
    // at a space); an indentation of two or more is a console's or a traceback's, dropped as before. A sentence that
    // ends its line before a capital letter is not a wrapped word ("... cuda tensors." + "If they are on cpu ...").
    var glued = lines.map(function (l) { return l.replace(/^\s{2,}/, ""); }).join("\n")
      .replace(/(?<=[a-z)\]'"])([.!?])\n(?=[A-Z][a-z])/g, "$1 ").replace(/\n/g, "").replace(/\s+/g, " ").trim();
    return [spaced, glued];
  }

  // ------------------------------------------------------------------------------------------- devices
  var VARIABLE = /^Variable\[(\w+)\]$/i;  // PyTorch 0.4 printed a tensor's type wrapped: Variable[CUDAFloatType]

  function deviceOf(rules, value) {
    var v = value.trim().replace(/^['"]+|['"]+$/g, "");
    var wrapped = VARIABLE.exec(v);
    if (wrapped) return deviceOf(rules, wrapped[1]);
    var low = v.toLowerCase();
    if (rules._deviceFull.test(low)) return low;
    var glued = /^([a-z]+)(\d+)$/.exec(low);
    if (glued && rules._deviceFull.test(glued[1])) return glued[1] + ":" + glued[2];
    if (/^\d+$/.test(v)) return "cuda:" + v;
    if (v === "-1") return "cpu";  // a device index of -1 is the CPU (Tensor.get_device(), the sparse check)
    var shown = /^device\(type='(\w+)'(?:, ?index=(\d+))?\)$/.exec(low);  // torch.device's repr
    if (shown) return shown[1] + (shown[2] ? ":" + shown[2] : "");
    var numbered = /^(?:(?:cuda |gpu )?device (-1|\d+)|(?:gpu|device) ?[:#-]? ?(\d+))$/.exec(low);
    if (numbered && numbered[2]) return "cuda:" + numbered[2];  // "GPU 1", "gpu:1", "device#0"
    if (numbered) return numbered[1] === "-1" ? "cpu" : "cuda:" + numbered[1];  // "device -1": the CPU
    if (v === "\u663e\u5361" || v === "\u663e\u5b58") return "cuda";  // 显卡, 显存
    if (v === "\u5185\u5b58") return "cpu";  // 内存
    if (low === "tpu") return "xla";
    if (low === "gpu" || low === "gpus" || low === "cuda" || /^graphics? cards?$/.test(low)) return "cuda";
    if (low === "cpu") return "cpu";
    if (/^thcuda\w*tensor$/.test(low)) return "cuda";  // TH's legacy C types (warp-ctc, old extensions)
    if (/^th\w*tensor$/.test(low)) return "cpu";
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
    var wrapped = VARIABLE.exec(v);
    if (wrapped) return dtypeOf(wrapped[1]);
    var found = /^(?:torch\.(?:cuda\.|mps\.|xpu\.)?|CUDA|CPU|MPS|XPU)(\w+?)(?:Tensor|Type)$/.exec(v);
    if (found) return found[1];
    found = /^torch\.(?:cuda\.|mps\.|xpu\.)?([a-z]\w*?)tensor$/.exec(v);  // a paste in lower case
    if (found) return found[1].charAt(0).toUpperCase() + found[1].slice(1).toLowerCase();
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
          if (device && pair[1].indexOf("device(type=") === 0) values[pair[0]] = device;  // torch.device's repr
          values[pair[0] + "_dev"] = device;
          values[pair[0] + "_dtype"] = dtypeOf(pair[1]);
          if (device) devices.push(device);
        }
      });
    }
    if (!values.dev1 && devices[0]) values.dev1 = devices[0];
    if (!values.dev2 && devices[1]) values.dev2 = devices[1];
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
  // Where an error line's text starts: at its exception, or, for a Chinese word for the error, at its clause's start
  // (devicelab.errors.core._clause_start).
  function clauseStart(line, start) {
    var word = line.slice(start, start + 2);
    if (word !== "报错" && word !== "错误") return start;
    var cut = -1;
    "，,。；;：:！!？?".split("").forEach(function (mark) { cut = Math.max(cut, line.lastIndexOf(mark, start - 1)); });
    return cut + 1;
  }

  // The paste's error lines from their exception on, each with the two lines after it and the indented line
  // before it; the whole paste when no line looks like an error (devicelab.errors.core.error_part).
  function errorPart(rules, text) {
    var lines = text.replace(/\r\n/g, "\n").replace(/\r/g, "\n").split("\n").map(bareLine);
    var found = {}, any = false;
    lines.forEach(function (line, i) {
      var m = rules._exception.exec(line);
      if (m) { found[i] = m.index; any = true; }
    });
    if (!any) return text;
    var keep = {};
    Object.keys(found).map(Number).forEach(function (i) {
      if (i > 0 && /^(?:[ \t]|assert )/.test(lines[i - 1]) && !(i - 1 in keep)) keep[i - 1] = lines[i - 1];
      keep[i] = lines[i].slice(clauseStart(lines[i], found[i]));
      for (var j = i + 1; j <= i + 2 && j < lines.length; j++) {
        if (!(j in keep)) keep[j] = j in found ? lines[j].slice(clauseStart(lines[j], found[j])) : lines[j];
      }
    });
    return Object.keys(keep).map(Number).sort(function (a, b) { return a - b; })
      .map(function (j) { return keep[j]; }).join("\n");
  }

  function matchIn(rules, line, errorLine, caseless) {
    for (var k = 0; k < rules.kinds.length; k++) {
      var kind = rules.kinds[k];
      var read = kind.scope === "error" ? errorLine : line;
      var regexes = kind._regexes;
      if (caseless) {  // compiled the first time a paste in lower case comes
        regexes = kind._caseless || (kind._caseless = kind.patterns.map(function (p) { return new RegExp(p, "di"); }));
      }
      if (kind.prefer_pair) {  // a kind that prefers a pair reads every match of a wording (see pairRelation)
        var key = caseless ? "_globalCaseless" : "_global";
        regexes = kind[key] || (kind[key] = regexes.map(function (r) { return new RegExp(r.source, r.flags + "g"); }));
      }
      var first = null;
      for (var p = 0; p < regexes.length; p++) {
        var regex = regexes[p];
        if (kind.prefer_pair) regex.lastIndex = 0;
        var m;
        while ((m = regex.exec(read))) {
          var found = readMatch(kind, m);
          if (!kind.prefer_pair) return found;
          var rel = pairRelation(rules, kind, found.fields);
          if (!first) {
            if (rel !== "same") return found;
            first = found;
          } else if (rel === "type" || rel === "index" || rel === "none") {
            return found;
          }
          if (m[0] === "") regex.lastIndex++;
        }
      }
      if (first) return first;
    }
    return null;
  }

  function readMatch(kind, m) {
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

  // A match that names one device twice ("a GPU other than cuda: 0") is passed over for a later one that names two
  // different devices or none ("none" here); the first match stands when there is none (ErrorKind.prefer_pair).
  function pairRelation(rules, kind, fields) {
    var devices = fields.filter(function (f) { return kind.device_fields.indexOf(f[0]) >= 0; })
      .map(function (f) { return deviceOf(rules, f[1]); });
    if (!devices.length) return "none";
    return devices.length === 2 && devices[0] && devices[1] ? relation(devices) : "";
  }

  function weight(match) {
    if (!match) return -1;
    return match.fields.reduce(function (sum, f) { return sum + f[1].length; }, 0);
  }

  function applies(route, values, caseless) {
    return Object.keys(route.when).every(function (name) {
      return new RegExp(route.when[name], caseless ? "i" : "").test(values[name] || "");
    });
  }

  // ------------------------------------------------------------------------------------------- tracebacks
  function startsFrame(rules, line) {
    var f = rules._frames;
    return f.python.test(line) || f.ipython.test(line) || f.cell.test(line) || f.oldIpython.test(line);
  }

  // a traceback whose line breaks a page lost: one frame per line again (evidence._unflatten)
  var FLAT = /(?<=\S)[ \t]+(?=File "[^"\n]+", line \d+, in \S)/g;
  var AFTER_HEADER = /(File "[^"\n]+", line \d+, in \S+)[ \t]+(?=\S)/g;
  var BEFORE_ERROR = /[ \t]+(?=[A-Za-z_][\w.]*(?:Error|Exception|Warning)\b:)/g;
  function unflatten(line) {
    var split = line.replace(FLAT, "\n").replace(AFTER_HEADER, "$1\n    ");
    return split === line ? [line] : split.replace(BEFORE_ERROR, "\n").split("\n");
  }

  function frames(rules, text) {
    var f = rules._frames;
    var lines = [];
    text.replace(/\r\n/g, "\n").replace(/\r/g, "\n").replace(/\\\\/g, "/").split("\n").forEach(function (l) {
      // colours, `> ` quoting, torchrun's `[rank0]:` prefix and a web page's no-break spaces are not part of a frame
      lines.push.apply(lines, unflatten(bareLine(l.replace(ANSI, "")).replace(/\\/g, "/")));
    });
    // frame headers that a fixed-width paste wrapped, glued back to one line (evidence._rewrapped)
    for (var w = 0; w + 1 < lines.length; w++) {
      if (/^\s*File "/.test(lines[w]) && !f.python.test(lines[w]) && f.python.test(lines[w] + lines[w + 1])) {
        lines.splice(w, 2, lines[w] + lines[w + 1]);
      }
    }
    var found = [];
    for (var i = 0; i < lines.length; i++) {
      var line = lines[i], m = null, kind = null;
      var order = [["python", f.python], ["ipython", f.ipython], ["cell", f.cell], ["old", f.oldIpython]];
      for (var k = 0; k < order.length && !m; k++) { m = order[k][1].exec(line); kind = order[k][0]; }
      if (!m) continue;
      var g = m.groups || {};
      var number = g.line || "", func = g.func || "<cell>", code = "";
      if (kind === "python") {
        var next = i + 1 < lines.length ? lines[i + 1] : "";
        // a page that put a blank line after every line of the paste
        if (!next.trim() && i + 2 < lines.length && /^[ \t]/.test(lines[i + 2])) next = lines[i + 2];
        if (next.trim() && !startsFrame(rules, next) && !/^[\^~ ]+$/.test(next.trim())) code = next.trim();
      } else {
        for (var j = i + 1; j < Math.min(lines.length, i + 40); j++) {
          if (startsFrame(rules, lines[j])) break;
          var arrow = f.arrow.exec(lines[j]);
          if (arrow) { number = number || arrow.groups.line; code = arrow.groups.code.trim(); break; }
        }
      }
      found.push({ path: g.path, line: number, func: func, code: code });
    }
    return found;
  }

  function torchPath(rules, frame) {
    var m = rules._frames.torch.exec(frame.path);
    return m ? m.groups.rel : "";
  }

  function where(rules, frame) {
    var rel = torchPath(rules, frame);
    var shown = rel ? rel.slice("torch/".length) : frame.path.split("/").pop();
    return frame.line ? shown + ", line " + frame.line + ", in " + frame.func : shown + ", in " + frame.func;
  }

  function ruleApplies(rule, frame, path) {
    if (rule.torch_path && !new RegExp(rule.torch_path).test(path)) return false;
    if (rule.func) {
      var name = rule.torch_path ? frame.func.split(".").pop() : frame.func;
      if (!new RegExp(rule.func).test(name)) return false;
    }
    if (rule.code && !new RegExp(rule.code).test(frame.code)) return false;
    return !(rule.code_not && new RegExp(rule.code_not).test(frame.code));
  }

  function evidence(rules, found) {
    var library = [], own = [], innermost = found[found.length - 1];
    for (var i = found.length - 1; i >= 0; i--) {
      var frame = found[i], path = torchPath(rules, frame), r, rule;
      if (path) {
        for (r = 0; r < rules.frames.library.length; r++) {
          rule = rules.frames.library[r];
          if (ruleApplies(rule, frame, path)) {
            library.push({ chapter: rule.chapter, reason: rule.reason, where: where(rules, frame), code: frame.code,
              also: rule.also, library: true });
            break;
          }
        }
      } else if (frame.code) {
        var matched = false;
        for (r = 0; r < rules.frames.user.length; r++) {
          rule = rules.frames.user[r];
          if (ruleApplies(rule, frame, "")) {
            own.push({ chapter: rule.chapter, reason: rule.reason, where: where(rules, frame), code: frame.code,
              also: rule.also, library: false });
            matched = true;
            break;
          }
        }
        rule = rules.frames.own_line;
        if (!matched && frame === innermost && !new RegExp(rules.frames.installed).test(frame.path) &&
            ruleApplies(rule, frame, "")) {
          own.push({ chapter: rule.chapter, reason: rule.reason, where: where(rules, frame), code: frame.code,
            also: rule.also, library: false });
        }
      }
    }
    return library.slice(0, 1).concat(own.slice(0, 2));
  }

  function focus(rules, text) {
    if (text.length <= rules.max_paste) return [text, 0];
    var lines = text.replace(/\r\n/g, "\n").split("\n"), keep = {}, i;
    for (i = 0; i < lines.length; i++) {
      if (rules._relevant.test(lines[i])) { keep[i] = true; if (i + 1 < lines.length) keep[i + 1] = true; }
    }
    var kept = [];
    for (i = 0; i < lines.length; i++) if (keep[i]) kept.push(lines[i]);
    var focused = kept.join("\n");
    if (focused.length > rules.max_paste) focused = focused.slice(focused.length - rules.max_paste);
    return [focused, Math.max(0, text.length - focused.length)];
  }

  var EXTRA_CAUSE = { "07-checkpoints": "optimizer_state", "04-batches": "batch_not_moved",
    "05-inside": "tensor_made_inside", "06-multigpu": "multi_gpu_mix" };

  function diagnose(rules, text) {
    var focused = focus(rules, rejoin(plain(unescape(String(text)))));
    var read = focused[0], cut = focused[1];
    var errorLine = rules._errorLine.test(read);
    var caseless = isCaseless(read);
    var none = { device_error: false, chapter: null, confident: false, candidates: [], kind: null, devices: [],
      op: null, argument: null, causes: [], match: null, ranking: [], evidence: [], cut: cut, error_line: errorLine };
    var lines = normalise(read), errors = normalise(errorPart(rules, read));
    var match = matchIn(rules, lines[0], errors[0], caseless);
    if (lines[1] !== lines[0] || errors[1] !== errors[0]) {
      var second = matchIn(rules, lines[1], errors[1], caseless);
      // the glued reading wins when it reads more of the same family, or a family of its own where the spaced one
      // read only the general fallback (errors._matches)
      if (second && (!match || (second.kind === match.kind && weight(second) > weight(match)) ||
          (match.kind.fallback && !second.kind.fallback))) match = second;
    }
    if (!match) return none;
    var values = derived(rules, match.kind, match.fields);
    Object.keys(match.markers).forEach(function (k) { if (!(k in values)) values[k] = match.markers[k]; });
    values._text = lines[0];  // routes may look at the whole paste
    var kind = match.kind, route = null;
    for (var r = 0; r < kind.routes.length; r++) {
      if (applies(kind.routes[r], values, caseless)) { route = kind.routes[r]; break; }
    }
    if (!route) {
      route = { chapter: kind.chapter, confident: kind.confident, causes: kind.causes, candidates: kind.candidates,
        device_error: null, family: null };
    }
    var deviceError = route.device_error === null ? kind.device_error : route.device_error;
    var chapter = route.chapter;
    var confident = Boolean(route.confident && chapter);
    var candidates = [];
    [route.chapter].concat(route.candidates).forEach(function (c) {
      if (c && candidates.indexOf(c) < 0) candidates.push(c);
    });
    var causes = deviceError ? route.causes.slice() : [];
    var family = route.family || kind.name;
    var seen = evidence(rules, frames(rules, read));
    var ranking = [];
    function ranked(c, reason, at) { ranking.push({ chapter: c, reason: reason, where: at || "" }); }
    if (deviceError) {
      var library = seen.filter(function (e) { return e.library; });
      var own = seen.filter(function (e) { return !e.library; });
      library.concat(confident ? [] : own).forEach(function (e) { ranked(e.chapter, e.reason, e.where); });
      candidates.forEach(function (c, n) { ranked(c, n === 0 ? "message" : "message_also"); });
      (confident ? own : []).forEach(function (e) { ranked(e.chapter, e.reason, e.where); });
      seen.forEach(function (e) { e.also.forEach(function (c) { ranked(c, "evidence_also"); }); });
      if (seen.length && ranking[0].chapter !== chapter) {
        confident = false;
        var extra = EXTRA_CAUSE[ranking[0].chapter];
        if (extra && causes.indexOf(extra) < 0) causes.unshift(extra);
      }
    } else {
      if (family === "dtype_mismatch") {
        var amp = new RegExp(rules.frames.amp);
        var own = {};
        Object.keys(values).forEach(function (k) { if (k !== "_text") own[k] = values[k]; });
        if (!(rules._half.test(JSON.stringify(own)) || rules._half.test(read) || amp.test(read) ||
              seen.some(function (e) { return e.chapter === "08-amp"; }))) {
          chapter = null; candidates = [];
        }
      }
      if (family === "invalid_device_ordinal" &&
          seen.some(function (e) { return e.reason === "serialization" || e.reason === "torch_load"; })) {
        chapter = "07-checkpoints"; candidates = [chapter]; causes = ["map_location_remap"];
      }
      if (chapter) {
        var at = seen.filter(function (e) { return e.chapter === chapter; })[0];
        if (at) ranked(chapter, at.reason, at.where); else ranked(chapter, "message");
      }
    }
    var unique = [], chapters = [];
    ranking.forEach(function (x) {
      if (x.chapter && chapters.indexOf(x.chapter) < 0) { chapters.push(x.chapter); unique.push(x); }
    });
    var arg = values.arg;
    return {
      device_error: deviceError,
      chapter: chapters.length ? chapters[0] : null,
      confident: Boolean(confident && chapters.length),
      candidates: chapters,
      kind: family,
      devices: values.devices ? values.devices.split(",") : [],
      op: values.op || null,
      argument: arg && !/^\d+$/.test(arg) ? arg : null,
      causes: causes,
      match: { kind: kind, fields: match.fields, values: values, markers: match.markers },
      ranking: unique,
      evidence: seen,
      cut: cut,
      error_line: errorLine
    };
  }

  // ------------------------------------------------------------------------------------------- words
  // A parenthesis or a sentence whose placeholder the message did not fill is left out: no blank slot.
  function fill(template, values) {
    function missing(part) {
      var names = part.match(/\{(\w+)\}/g) || [];
      return names.some(function (n) { return !values[n.slice(1, -1)]; });
    }
    var text = template.replace(/ ?[(\uFF08][^()\uFF08\uFF09]*\{\w+\}[^()\uFF08\uFF09]*[)\uFF09]/g, function (m) {
      return missing(m) ? "" : m;
    });
    var sentences = text.split(/(?<=[.!?;:\u3002\uFF01\uFF1F\uFF1B\uFF1A])(?=\s|[^\x00-\x7f]|$)/);
    text = sentences.filter(function (part) { return part && !missing(part); }).join("");
    return text.replace(/\{(\w+)\}/g, function (_, name) { return values[name]; }).trim();
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

  function reading(kind, fields, values, lang, markers) {
    var byMarker = kind.reading_by_marker || {};
    var marker = Object.keys(byMarker).filter(function (m) { return (markers && markers[m]) || values[m]; })[0];
    if (marker !== undefined) return fill(byMarker[marker][lang] || "", values);
    var hasOp = fields.some(function (f) { return f[0] === "op" || f[0] === "arg"; });
    var hasWant = fields.some(function (f) { return f[0] === "want"; });
    var short = !hasOp && hasWant && kind.reading_without_op && kind.reading_without_op[lang];
    return fill(short ? kind.reading_without_op[lang] : (kind.reading[lang] || ""), values);
  }

  function colon(lang) { return lang === "zh" ? "\uFF1A" : ": "; }

  function rankingHtml(rules, d, lang, words) {
    if (!d.ranking.length) return "";
    var main = d.ranking.filter(function (r) { return r.reason !== "message_also" && r.reason !== "evidence_also"; });
    if (!main.length) main = d.ranking.slice(0, 1);
    var others = d.ranking.filter(function (r) { return main.indexOf(r) < 0; });
    var out = "<h3>" + inline(d.ranking.length > 1 ? words.ranking : words.ranking_one) + '</h3><ol class="explain-ranking">';
    main.forEach(function (r) {
      var why = r.where ? inline(words.evidence) + colon(lang) + "<code>" + escapeHtml(r.where) + "</code>"
        : inline(rules.reasons[r.reason][lang]);
      out += "<li>" + chapterLink(rules, r.chapter, lang) + '<br><span class="explain-why">' + why + "</span></li>";
    });
    out += "</ol>";
    if (others.length) {
      out += "<p>" + inline(words.also) + colon(lang) + others.map(function (r) {
        return chapterLink(rules, r.chapter, lang);
      }).join(lang === "zh" ? "\uFF1B" : "; ") + "</p>";
    }
    if (d.device_error && !d.confident && d.ranking.length > 1) {
      out += '<p class="explain-unsure">' + inline(words.guess) + "</p>";
    }
    if (d.device_error && d.chapter === "09-debugging") out += "<p>" + inline(words.fallback) + "</p>";
    return out;
  }

  function render(rules, d, lang) {
    var words = {};
    Object.keys(rules.labels).forEach(function (k) { words[k] = rules.labels[k][lang]; });
    var out = [];
    var verdict = d.match === null ? "unknown" : (d.device_error ? "device" : "declined");
    if (d.cut) out.push("<p>" + inline(fill(words.cut, { kb: String(Math.max(1, Math.round(d.cut / 1024))) })) + "</p>");
    if (d.match === null) {
      out.push("<p>" + inline(d.error_line ? words.unknown_error : words.unknown) + "</p>");
      return { verdict: verdict, html: out.join("") };
    }
    var values = d.match.values;
    if (!d.device_error) {
      var declined = d.match.kind;
      if (d.kind !== declined.name) {
        declined = rules.kinds.filter(function (k) { return k.name === d.kind; })[0] || declined;
      }
      var text = fill(declined.reading[lang], values).replace(/^(?:Not [^:.]*:\s*|\u4E0D\u662F[^\uFF1A\u3002]*\uFF1A)/, "");
      text = text.charAt(0).toUpperCase() + text.slice(1);
      var headline = d.match.kind.undecided ? words.undecided : words.not_device;
      out.push("<p><strong>" + inline(headline) + "</strong>" + (lang === "zh" ? "" : " ") + inline(text) +
        "</p>");
      d.causes.forEach(function (key) { out.push("<p>" + inline(fill(rules.causes[key][lang], values)) + "</p>"); });
      out.push(rankingHtml(rules, d, lang, words));
      return { verdict: verdict, html: out.join("") };
    }
    var facts = [];
    if (d.op) facts.push(inline(words.op) + colon(lang) + "<code>" + escapeHtml(d.op) + "</code>");
    if (d.argument) facts.push(inline(words.arg) + colon(lang) + "<code>" + escapeHtml(d.argument) + "</code>");
    if (d.devices.length) {
      facts.push(inline(words.devices) + colon(lang) + d.devices.map(function (x) {
        return "<code>" + escapeHtml(x) + "</code>";
      }).join(lang === "zh" ? "\u3001" : ", "));
    }
    out.push("<p><strong>" + inline(words.device) + "</strong>" +
      (facts.length ? ' <span class="explain-facts">· ' + facts.join(" · ") + "</span>" : "") + "</p>");
    out.push("<h3>" + inline(words.meaning) + "</h3><p>" + inline(reading(d.match.kind, d.match.fields, values, lang, d.match.markers)) +
      "</p>");
    if (d.evidence.length) {
      out.push("<h3>" + inline(words.evidence) + "</h3><ul class=\"explain-evidence\">" + d.evidence.map(function (e) {
        return "<li><code>" + escapeHtml(e.where) + "</code> — " + inline(rules.reasons[e.reason][lang]) +
          (e.code ? "<br><code>" + escapeHtml(e.code) + "</code>" : "") + "</li>";
      }).join("") + "</ul>");
    }
    var causes = [];
    d.causes.forEach(function (key) {
      var c = fill(rules.causes[key][lang], values);
      if (c && causes.indexOf(c) < 0) causes.push(c);
    });
    if (causes.length) {
      out.push("<h3>" + inline(causes.length > 1 ? words.causes : words.cause) + "</h3>");
      out.push(causes.length > 1 ? "<ol>" + causes.map(function (c) { return "<li>" + inline(c) + "</li>"; }).join("") +
        "</ol>" : "<p>" + inline(causes[0]) + "</p>");
    }
    if (causes.length > 1 || !d.confident) {
      out.push("<h3>" + inline(words.check) + "</h3><p>" + inline(rules.check[lang]) + "</p>");
    }
    out.push(rankingHtml(rules, d, lang, words));
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
    var f = rules.frames;
    rules._frames = { python: new RegExp(f.python), ipython: new RegExp(f.ipython), cell: new RegExp(f.cell),
      oldIpython: new RegExp(f.old_ipython), arrow: new RegExp(f.arrow), torch: new RegExp(f.torch) };
    rules._relevant = new RegExp(rules.relevant);
    rules._errorLine = new RegExp(rules.error_line);
    rules._exception = new RegExp(rules.exception_line, "m");
    rules._half = new RegExp(rules.half);
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
    d.ranking = d.ranking.map(function (r) { return r.chapter; });
    return d;
  }

  // The diagnosed chapter's picture of where its tensors live (written by tools/picture_hooks.py beside
  // this script's folder, one file per chapter and language), fetched from this site and kept.
  var pictures = {};
  var script = document.currentScript || document.querySelector('script[src*="explain.js"]');
  function showPicture(output, chapter, lang) {
    if (!script || !script.src || !window.fetch) return;
    var url = new URL("../pictures/" + lang + "/" + chapter + ".html", script.src).href;
    function place(fragment) {
      if (!fragment || output.getAttribute("data-chapter") !== chapter) return;
      if (output.querySelector(".explain-picture")) return;
      var box = document.createElement("div");
      box.className = "explain-picture";
      box.innerHTML = fragment;
      output.appendChild(box);
    }
    if (pictures[url] !== undefined) return place(pictures[url]);
    fetch(url).then(function (r) { return r.ok ? r.text() : ""; }).catch(function () { return ""; })
      .then(function (text) { pictures[url] = text; place(text); });
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
      output.setAttribute("data-ranking", d.ranking.join(","));
      output.setAttribute("data-ms", d.ms.toFixed(3));
      if (d.device_error && d.chapter) showPicture(output, d.chapter, lang);
    }
    input.addEventListener("input", update);
    var button = document.getElementById("explain-button");
    if (button) button.addEventListener("click", update);
    update();
  }

  window.DevicelabExplain = { explain: explain, normalise: normalise, unescape: unescape };
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", attach);
  else attach();
})();
