"""MkDocs hooks: notebook pages under mkdocs-static-i18n, the action bar of every lab page, the outputs of a
real run on every solution page (tools/execute_solutions.py), the "what is tested where" table of every
chapter page, and a search that each language runs on its own pages."""

from __future__ import annotations

import ast
import html
import json
import os
import re
import sys
from pathlib import Path, PurePosixPath
from urllib.parse import urlencode, urlsplit

import mkdocs_static_i18n.folder
import mkdocs_static_i18n.reconfigure
from mkdocs.exceptions import PluginError
from mkdocs.structure.files import File

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # the course's helper, without installing it
sys.path.insert(0, str(Path(__file__).resolve().parent))  # tools/execute_solutions.py
import execute_solutions  # noqa: E402
import facts  # noqa: E402  (tools/facts.py: the shared facts' markers)
import gpu_stamps  # noqa: E402
import helper_wheel  # noqa: E402  (tools/helper_wheel.py: where the site keeps the helper's wheel)

from devicelab import captures  # noqa: E402


class _NotebookAwareFile(File):
    # mkdocs-static-i18n 1.3.1 rebuilds every File after mkdocs-jupyter has wrapped the
    # notebooks, so .ipynb files turn back into static assets and are published as raw JSON
    # (ultrabug/mkdocs-static-i18n#198). Files it builds from this class stay pages.
    def is_documentation_page(self) -> bool:
        return self.src_uri.endswith(".ipynb") or super().is_documentation_page()


mkdocs_static_i18n.folder.File = _NotebookAwareFile
mkdocs_static_i18n.reconfigure.File = _NotebookAwareFile

_JUPYTER_THEME = re.compile(r'<style type="text/css">\s*@charset "UTF-8";\.jupyter-wrapper\{.*?</style>', re.S)
_MATHJAX = re.compile(r'<script type="text/x-mathjax-config">.*?</script>|<script src=""> </script>', re.S)
# mkdocs-jupyter's hidden copy of each cell's code, for its own copy button (hidden by course.css): without
# its theme's style it shows every cell's code a second time, as a paragraph. Material's copy button stays.
_COPY_TEXT = re.compile(r'<div class="clipboard-copy-txt"[^>]*>[^<]*</div>')

ACTION_TEXT = {
    "en": {
        "colab": "Open in Colab",
        "download": "Download notebook",
        "verified": "Last verified on GPU: {gpu}, torch {torch}, {date}.",
        "unverified": "Not yet verified on a GPU: until a GPU runs this lab, a machine without one shows each "
                      "error's expected wording.",
        "verified_mps": " On Apple MPS: {gpu}, torch {torch}, {date}.",
        "lab": "Student version",
        "solution": "Solution",
        "ran_on": "The outputs below are those of a real run of this notebook: ran on {where}, torch {torch}, {date}.",
        "cpu": "CPU",
        "elsewhere": "No Colab? Download the notebook and run it in any Jupyter with CUDA (a lab server, a cloud GPU "
                     "notebook), on Apple silicon or on the CPU: its first cell installs the course helper from "
                     "GitHub or, when github.com does not answer, from this site "
                     "(`pip install --no-deps --index-url {index} devicelab`).",
    },
    "zh": {
        "colab": "在 Colab 中打开",
        "download": "下载笔记本",
        "verified": "最近一次 GPU 验证：{gpu}，torch {torch}，{date}。",
        "unverified": "尚未在 GPU 上验证：在 GPU 运行过本实验之前，没有 GPU 的机器展示的是每个报错的预期措辞。",
        "verified_mps": "Apple MPS 上：{gpu}，torch {torch}，{date}。",
        "lab": "学生版",
        "solution": "参考答案",
        "ran_on": "下面的输出来自这个笔记本的一次真实运行：运行于 {where}，torch {torch}，{date}。",
        "cpu": "CPU",
        "elsewhere": "不用 Colab 也行：下载笔记本，在任何带 CUDA 的 Jupyter 里运行（实验室的服务器、"
                     "云上的 GPU 笔记本都可以），Apple 芯片或 CPU 上也能运行。第一个单元从 GitHub 安装课程辅助包，"
                     "github.com 连不上时改从本站安装（`pip install --no-deps --index-url {index} devicelab`）。",
    },
}


def helper_index_url(config) -> str:
    """The pip index of the helper's wheel on this site (tools/helper_wheel.py), as the labs' setup cell names it."""
    return (config.get("site_url") or "/").rstrip("/") + "/" + helper_wheel.INDEX + "/"


def _notebook_parts(page) -> tuple[str, str, str] | None:
    # (language, "labs" | "solutions", lab id) of a notebook page, else None.
    parts = PurePosixPath(page.file.src_uri).parts
    if len(parts) == 3 and parts[1] in ("labs", "solutions") and parts[2].endswith(".ipynb"):
        return parts[0], parts[1], parts[2][: -len(".ipynb")]
    return None


def verification_line(lab: str, lang: str, known: list[dict[str, str]] | None = None) -> str:
    """The 'last verified on GPU' line of a lab page, from the committed capture file (MPS runs named apart)."""
    cuda = captures.last_verified(lab, known, device="cuda")
    mps = captures.last_verified(lab, known, device="mps")
    words = ACTION_TEXT[lang]
    line = words["verified"].format(**cuda) if cuda else words["unverified"]
    return line + (words["verified_mps"].format(**mps) if mps else "")


def _inline_code(text: str) -> str:
    return re.sub(r"`([^`]+)`", r"<code>\1</code>", text)


def on_page_content(html_text: str, page, config, files) -> str:
    """Put 'Open in Colab', 'Download' and the last GPU verification at the top of each lab page."""
    found = _notebook_parts(page)
    if found is None:
        return html_text
    lang, version, lab = found
    # Readers who search an error message should land on the chapter page, which links to the
    # lab; four notebook copies of the same text would crowd it out of the results.
    page.meta["search"] = {"exclude": True}
    words = ACTION_TEXT[lang]
    repo = config["repo_url"].rstrip("/").removeprefix("https://github.com/")
    colab = f"https://colab.research.google.com/github/{repo}/blob/main/{version}/{lang}/{lab}.ipynb"
    other = "solutions" if version == "labs" else "labs"
    stamp = verification_line(lab, lang)
    index = helper_index_url(config)
    ran = _SHOWN.get(page.file.src_uri)
    bar = (
        '<div class="lab-actions">'
        f'<a class="md-button md-button--primary" href="{html.escape(colab)}">{words["colab"]}</a>'
        f'<a class="md-button" href="{lab}.ipynb" download>{words["download"]}</a>'
        f'<a class="md-button" href="../../{other}/{lab}/">{words["lab" if other == "labs" else "solution"]}</a>'
        f'<span class="lab-verified">{_inline_code(html.escape(stamp))}</span>'
        f'<span class="lab-elsewhere">{_inline_code(html.escape(words["elsewhere"].format(index=index)))}</span>'
        + (ran_on_line(ran, lang) if ran else "")
        + "</div>"
    ) + gpu_stamps.captured_wording(lab, lang)
    html_text = described_plots(html_text, lang)
    return bar + _COPY_TEXT.sub("", _MATHJAX.sub("", _JUPYTER_THEME.sub("", html_text)))


_NO_ALT = 'alt="No description has been provided for this image"'
_NEXT_CELL = re.compile(r'<div class="jp-Cell ')
PLOT_ALT = {"en": "The plot of the training above", "zh": "上面这次训练的曲线图"}


def described_plots(html_text: str, lang: str) -> str:
    """Each plot a notebook drew gets the caption its cell printed (lab.plot_training says in one line what the
    plot shows) as its alt text, in the page's language, instead of nbconvert's English placeholder."""
    out, start = [], 0
    while (found := html_text.find(_NO_ALT, start)) >= 0:
        cell_end = _NEXT_CELL.search(html_text, found)
        window = html_text[found:cell_end.start() if cell_end else len(html_text)]
        printed = re.search(r"<pre>(.*?)</pre>", window, re.S)
        words = html.unescape(re.sub(r"<[^>]+>", "", printed.group(1))).strip().splitlines() if printed else []
        alt = words[0] if words else PLOT_ALT.get(lang, PLOT_ALT["en"])
        out += [html_text[start:found], f'alt="{html.escape(alt)}"']
        start = found + len(_NO_ALT)
    return "".join(out) + html_text[start:]


_WHOLE_HEADING = re.compile(r'<h([1-6]) id="([^"]+)"[^>]*>(.*?)</h\1>', re.S)


def _titles_with_code(page, html_text: str) -> None:
    """A notebook page's table of contents, titled as its headings read: mkdocs-jupyter drops inline code from the
    titles ("5. Exercise 1 — a that keeps ..."); each entry takes its heading's whole text instead."""
    texts = {}
    for _, anchor, inner in _WHOLE_HEADING.findall(html_text):
        inner = re.sub(r'<a class="anchor-link"[^>]*>.*?</a>', "", inner, flags=re.S)
        texts[anchor] = html.escape(html.unescape(re.sub(r"<[^>]+>", "", inner)).strip())

    def fix(items) -> None:  # noqa: ANN001 - mkdocs' AnchorLink list
        for item in items:
            if item.id in texts and texts[item.id]:
                item.title = texts[item.id]
            fix(item.children)

    fix(getattr(page.toc, "items", None) or [])


# ------------------------------------------------------------------ executed outputs on solution pages

# How a build treats a solution notebook whose stored execution (solutions/executed/) is missing or stale:
#   execute (the default): run it now, store the run, say so in the log (slow: seconds per notebook);
#   require: fail the build, naming the notebook and `make outputs` (for a deploy that must not run code);
#   stored: show the stored run as it is, stale or not, and say so in the log (`make serve`: a preview, no torch).
OUTPUTS_ENV = "DEVICELAB_OUTPUTS"
SHOWN_DIR = Path(__file__).resolve().parent.parent / ".cache" / "solution-pages"
_SHOWN: dict[str, dict] = {}  # page src_uri -> the shown run's record (ran_on, code_sha256)
_CLEAN: dict[str, str] = {}  # page src_uri -> the committed notebook: what "Download" gives


def ran_on_line(record: dict, lang: str) -> str:
    """The line of a solution page that says where and when its outputs ran, keyed to the code that ran."""
    ran = record["ran_on"]
    words = ACTION_TEXT[lang]
    where = words["cpu"] if ran.get("device") in ("cpu", "", None) else (ran.get("gpu") or ran["device"])
    said = words["ran_on"].format(where=where, torch=ran.get("torch", "?"), date=ran.get("date", "?"))
    return (f'<p class="solution-ran-on" data-outputs-code="{html.escape(record["code_sha256"])}">'
            f"{html.escape(said)}</p>")


def stored_outputs(notebook: Path, mode: str | None = None, log=None) -> dict:
    """The fresh stored execution of a solution notebook; executes it first, or fails, when stale (see OUTPUTS_ENV)."""
    mode = (mode or os.environ.get(OUTPUTS_ENV) or "execute").strip().lower()
    reason = execute_solutions.staleness(notebook)
    if reason is None:
        return execute_solutions.read_json(execute_solutions.store_path(notebook))
    name = notebook.relative_to(execute_solutions.ROOT).as_posix()
    if mode == "stored" and execute_solutions.store_path(notebook).exists():
        print(f"INFO    -  solution outputs: {name}: showing the stored run although {reason} "
              "(make outputs refreshes it)", file=sys.stderr, flush=True)
        return execute_solutions.read_json(execute_solutions.store_path(notebook))
    if mode == "require":
        raise PluginError(f"{name}: no fresh stored outputs ({reason}). Run `make outputs` and commit "
                          f"solutions/executed/, or build without {OUTPUTS_ENV}=require to execute it now.")
    say = log or (lambda line: print(f"INFO    -  solution outputs: {line}", file=sys.stderr, flush=True))
    try:
        return execute_solutions.refresh(notebook, log=say)
    except Exception as error:  # noqa: BLE001 - the build must say which notebook failed, and why
        raise PluginError(f"{name} failed to execute, so its page cannot show its outputs: "
                          f"{type(error).__name__}: {str(error)[-2000:]}") from error


def on_pre_page(page, config, files):
    """Show a solution notebook's page with the outputs of its stored run (the markdown and code as they are now)."""
    found = _notebook_parts(page)
    if found is None or found[1] != "solutions":
        return page
    lang, _, lab = found
    source = Path(page.file.abs_src_path)
    notebook = source.resolve()
    current = execute_solutions.read_json(notebook)
    executed = stored_outputs(notebook)
    shown = execute_solutions.graft(current, executed)
    target = SHOWN_DIR / lang / f"{lab}.ipynb"  # the same file name: the page's download link uses it
    target.parent.mkdir(parents=True, exist_ok=True)
    text = json.dumps(shown, indent=1, ensure_ascii=False)
    if not target.exists() or target.read_text(encoding="utf-8") != text:
        partial = target.with_name(f"{target.name}.{os.getpid()}.tmp")  # two builds may run at once
        partial.write_text(text, encoding="utf-8")
        os.replace(partial, target)
    _SHOWN[page.file.src_uri] = executed["metadata"][execute_solutions.META]
    _CLEAN[page.file.src_uri] = str(source)
    page.file.abs_src_path = str(target)  # mkdocs-jupyter renders the page from this file
    return page


def _download_the_clean_notebook(page) -> None:
    # mkdocs-jupyter copies the file it rendered next to the page; the download is the committed notebook.
    clean = _CLEAN.get(page.file.src_uri)
    if clean and page.file.abs_dest_path:
        target = Path(page.file.abs_dest_path).parent / Path(clean).name
        if target.exists():
            target.write_bytes(Path(clean).read_bytes())


# ------------------------------------------------------------------------------------------------ search

SEARCH_WORKER = "course-search.js"  # docs/assets/javascripts/workers/: Material's worker, wrapped
_CONFIG = re.compile(r'(<script id="__config" type="application/json">)(.*?)(</script>)', re.S)


def _languages(config) -> tuple[str, list[str]]:
    """The language being built and the folders of the site's other-than-default languages."""
    i18n = config.plugins.get("i18n")
    if i18n is None:
        return "", []
    others = [f"{lang.locale}/" for lang in i18n.config.languages if not lang.default]
    current = i18n.current_language
    default = next((lang.locale for lang in i18n.config.languages if lang.default), current)
    return ("" if current == default else f"{current}/"), others


def search_worker_url(material_worker: str, prefix: str, others: list[str]) -> str:
    """The course's search worker, next to Material's, told which worker to wrap and which pages to search."""
    folder, _, name = material_worker.rpartition("/")
    query = urlencode({"worker": name, "prefix": prefix, "others": ",".join(others)})
    return f"{folder}/{SEARCH_WORKER}?{query}" if folder else f"{SEARCH_WORKER}?{query}"


def with_course_search(output: str, prefix: str, others: list[str]) -> str:
    """A page's HTML with its search run by the course's worker, on the pages of its own language."""
    found = _CONFIG.search(output)
    if found is None:
        return output
    app = json.loads(found.group(2))
    if not app.get("search") or SEARCH_WORKER in app["search"]:
        return output
    app["search"] = search_worker_url(app["search"], prefix, others)
    return output[: found.start(2)] + json.dumps(app) + output[found.end(2):]


def on_post_page(output: str, page, config) -> str:
    """Make each page's search look only at the pages of its own language, and read Chinese sentences; on a
    Chinese page, join the lines of a sentence that the source wraps between two Chinese characters."""
    _download_the_clean_notebook(page)
    prefix, others = _languages(config)
    output = with_course_search(output, prefix, others)
    return joined_cjk_lines(output) if prefix.startswith("zh") else output


# Han characters, CJK punctuation and full-width forms: a line break between two of them is no space in Chinese,
# but a browser shows one (Chromium keeps a source line break between Chinese characters as a space).
_CJK = "\u3000-\u303f\u3400-\u4dbf\u4e00-\u9fff\uff00-\uffef"
_CJK_BREAK = re.compile(f"([{_CJK}])((?:</(?:strong|em|b|i|a|span)>)*)\\n[ \\t]*"
                        f"((?:<(?:strong|em|b|i|a|span)\\b[^>]*>)*)(?=[{_CJK}])")
_VERBATIM = re.compile(r"<(pre|code|script|style|textarea)\b.*?</\1>", re.S | re.I)


def joined_cjk_lines(html_text: str) -> str:
    """`html_text` without the line breaks between two Chinese characters (also across the tags of emphasis and
    links), outside code, scripts, styles and text areas, which are left as they are."""
    pieces, last = [], 0
    for block in _VERBATIM.finditer(html_text):
        pieces += [_CJK_BREAK.sub(r"\1\2\3", html_text[last:block.start()]), block.group(0)]
        last = block.end()
    pieces.append(_CJK_BREAK.sub(r"\1\2\3", html_text[last:]))
    return "".join(pieces)


def on_post_template(output: str, template_name: str, config) -> str:
    """The same search on the pages built from templates alone (404.html), in the language they are built in."""
    prefix, others = _languages(config)
    return with_course_search(output, prefix, others) if template_name.endswith(".html") else output


# ------------------------------------------------------------------------------------- claims table

CLAIMS_MARKER = "<!-- claims-table -->"
CLAIMS_DIR = Path(__file__).resolve().parent.parent / "tests" / "claims"

CLAIMS_TEXT = {
    "en": {
        "summary": "{cpu} {cpu_claims} run on the CPU in CI; {gpu} {gpu_claims} only on a GPU, of which "
                   "{verified} passed on one so far (from `{file}` and the GPU check's record).",
        "claim": ("claim", "claims"),
        "head": ("Claim", "Where it runs", "On a GPU"),
        "cpu": "CPU, in CI",
        "gpu": "GPU only",
        "gpus": "GPU only (2 or more)",
        "none": "not yet run on a GPU",
        "passed": "passed on {gpu}, torch {torch}, {date}",
        "failed": "FAILED on {gpu}, torch {torch}, {date}",
        "skipped": "skipped on {gpu}, torch {torch}, {date}: {reason}",
        "not_applicable": "—",
        "no_tests": "No test file `{file}` yet.",
    },
    "zh": {
        "summary": "{cpu} 条说法在 CPU 上运行，每次 CI 都会检查；{gpu} 条只能在 GPU 上检查，目前其中 {verified} "
                   "条已在 GPU 上通过（据 `{file}` 和 GPU 检查的记录生成）。",
        "claim": ("", ""),
        "head": ("说法", "在哪里运行", "GPU 上的结果"),
        "cpu": "CPU，CI 中运行",
        "gpu": "仅限 GPU",
        "gpus": "仅限 GPU（两块及以上）",
        "none": "尚未在 GPU 上运行",
        "passed": "已通过：{gpu}，torch {torch}，{date}",
        "failed": "未通过：{gpu}，torch {torch}，{date}",
        "skipped": "已跳过：{gpu}，torch {torch}，{date}：{reason}",
        "not_applicable": "—",
        "no_tests": "还没有测试文件 `{file}`。",
    },
}


def _dotted(node: ast.AST) -> str:
    """`pytest.mark.gpu` for the expression pytest.mark.gpu (calls give their function's name)."""
    if isinstance(node, ast.Call):
        return _dotted(node.func)
    if isinstance(node, ast.Attribute):
        return f"{_dotted(node.value)}.{node.attr}"
    if isinstance(node, ast.Name):
        return node.id
    return ""


def _marks(nodes: list[ast.AST]) -> set[str]:
    """The pytest marks named by decorators or by a module's `pytestmark` value (gpu, skipif…)."""
    found = set()
    for node in nodes:
        for sub in ast.walk(node):
            name = _dotted(sub)
            if ".mark." in f".{name}":
                found.add(name.rsplit(".", 1)[-1])
    return found


def _needs_two_gpus(function: ast.FunctionDef) -> bool:
    return any("device_count" in ast.unparse(d) for d in function.decorator_list if "skipif" in _dotted(d))


def readable(name: str) -> str:
    """A test's name as a sentence: test_module_to_moves → Module to moves."""
    words = name.removeprefix("test_").replace("_", " ").strip()
    return words[:1].upper() + words[1:]


def claims_of(path: Path) -> list[dict[str, object]]:
    """One claim per test function of a claims test file, read with ast (the file is not imported).

    The claim is the docstring's first line; a docstring line starting with `zh:` is its Chinese twin.
    """
    tree = ast.parse(path.read_text(encoding="utf-8"))
    module_marks = _marks([n.value for n in tree.body if isinstance(n, ast.Assign)
                           and any(isinstance(t, ast.Name) and t.id == "pytestmark" for t in n.targets)])
    found = []
    scopes: list[tuple[list[ast.stmt], str, set[str]]] = [(tree.body, "", module_marks)]
    for node in tree.body:
        if isinstance(node, ast.ClassDef) and node.name.startswith("Test"):
            scopes.append((node.body, f"{node.name}::", module_marks | _marks(node.decorator_list)))
    for body, owner, inherited in scopes:
        for function in body:
            if not isinstance(function, ast.FunctionDef | ast.AsyncFunctionDef) or not function.name.startswith("test"):
                continue
            marks = inherited | _marks(function.decorator_list)
            arguments = {a.arg for a in function.args.args}
            gpu = "gpu" in marks or "cuda" in arguments
            doc = ast.get_docstring(function)
            lines = [line.strip() for line in (doc or "").strip().splitlines()]
            chinese = next((line[3:].strip() for line in lines if line.startswith("zh:")), "")
            found.append({
                "test": f"{owner}{function.name}",
                "claim": lines[0] if lines and lines[0] else readable(function.name),
                "claim_zh": chinese,
                "gpu": gpu,
                "two_gpus": gpu and _needs_two_gpus(function),
            })
    return found


def _node_function(test_id: str) -> str:
    """test_x for 'tests/claims/test_file.py::test_x[param]'; Class::test_x for a method."""
    return test_id.split(".py::", 1)[-1].split("[", 1)[0]


def gpu_result(path: Path, test: str, records: list[dict[str, str]]) -> dict[str, str] | None:
    """The latest GPU run of one test function, from the verification record, or None.

    Its parametrized cases count together: any failure makes it failed, any skip skipped (never passed).
    """
    mine = [r for r in records
            if r["test"].split("::", 1)[0].endswith(path.name) and _node_function(r["test"]) == test]
    if not mine:
        return None
    latest = max(r["date"] for r in mine)
    runs = [r for r in mine if r["date"] == latest]
    for outcome in ("failed", "error", "skipped", "passed"):
        for run in runs:
            if run["outcome"] == outcome:
                return run
    return runs[0]


def claims_table(chapter: str, lang: str, claims_dir: Path | None = None,
                 records: list[dict[str, str]] | None = None) -> str:
    """The HTML 'what is tested where' table of one chapter ('01'), in one language."""
    words = CLAIMS_TEXT[lang]
    claims_dir = claims_dir or CLAIMS_DIR
    paths = sorted(claims_dir.glob(f"test_claims_ch{chapter}_*.py"))
    if not paths:
        name = f"tests/claims/test_claims_ch{chapter}_*.py"
        return f"<p>{_inline_code(html.escape(words['no_tests'].format(file=name)))}</p>"
    records = captures.load_claims() if records is None else records
    rows, cpu, gpu, verified = [], 0, 0, 0
    for path in paths:
        for claim in claims_of(path):
            if claim["gpu"]:
                gpu += 1
                where = words["gpus" if claim["two_gpus"] else "gpu"]
                run = gpu_result(path, str(claim["test"]), records)
                if run is None:
                    status = words["none"]
                else:
                    verified += run["outcome"] == "passed"
                    status = words[run["outcome"] if run["outcome"] in ("passed", "failed", "skipped") else "failed"]
                    status = status.format(gpu=run.get("gpu", "?"), torch=run.get("torch", "?"),
                                           date=run.get("date", "?"), reason=run.get("message", ""))
            else:
                cpu += 1
                where, status = words["cpu"], words["not_applicable"]
            said = claim["claim_zh"] if lang == "zh" and claim["claim_zh"] else claim["claim"]
            cells = (_inline_code(html.escape(str(said))), html.escape(where), html.escape(status))
            # data-label: on a phone the rows are stacked and each cell is preceded by its column's name
            rows.append("<tr>" + "".join(f'<td data-label="{html.escape(label)}">{cell}</td>'
                                         for label, cell in zip(words["head"], cells)) + "</tr>")
    files = ", ".join(f"tests/claims/{p.name}" for p in paths)
    one, many = words["claim"]
    summary = words["summary"].format(
        file=files, cpu=cpu, gpu=gpu, verified=verified,
        cpu_claims=one if cpu == 1 else many, gpu_claims=one if gpu == 1 else many,
    )
    head = "".join(f"<th>{html.escape(h)}</th>" for h in words["head"])
    # Kept out of the search index: the claims are test docstrings, in English on both sites, and the
    # words of every chapter's table would pull unrelated queries to every chapter page.
    return (
        '<div class="claims-table" data-search-exclude>\n'
        f"<p>{_inline_code(html.escape(summary))}</p>\n"
        f"<table>\n<thead><tr>{head}</tr></thead>\n<tbody>\n"
        + "\n".join(rows) + "\n</tbody>\n</table>\n</div>"
    )


_CHAPTER_PAGE = re.compile(r"^(\d\d)-[^/]*\.md$")


def on_page_markdown(markdown: str, page, config, files) -> str:
    """Drop the shared facts' markers (tools/facts.py); replace the claims-table marker with its generated table."""
    markdown = facts.strip_markers(markdown)
    if CLAIMS_MARKER not in markdown:
        return markdown
    parts = PurePosixPath(page.file.src_uri).parts
    found = _CHAPTER_PAGE.match(parts[-1])
    if found is None:
        return markdown
    lang = parts[0] if len(parts) > 1 and parts[0] in CLAIMS_TEXT else "en"
    return markdown.replace(CLAIMS_MARKER, "\n" + claims_table(found.group(1), lang) + "\n")


# ------------------------------------------------------------------------------ the course's addresses

ADDRESS_VARIABLES = ("DEVICELAB_REPO_URL", "DEVICELAB_SITE_URL")  # mkdocs.yml: repo_url, site_url
LABS_DIR = Path(__file__).resolve().parent.parent / "labs"
_HELPER = re.compile(r'^HELPER = "git\+([^"]+)"', re.M)
_HELPER_INDEX = re.compile(r'^HELPER_INDEX = "([^"]+)"', re.M)  # the wheel on the site, when github.com is out of reach
_told: set[str] = set()


def labs_helper_addresses(labs_dir: Path = LABS_DIR, pattern: re.Pattern = _HELPER) -> dict[str, str]:
    """Where each committed lab's setup cell installs the helper from, by notebook path (HELPER, or another line)."""
    found = {}
    for notebook in sorted(labs_dir.glob("*/*.ipynb")):
        cells = json.loads(notebook.read_text(encoding="utf-8"))["cells"]
        source = "".join(next((c["source"] for c in cells if c["cell_type"] == "code"), []))
        helper = pattern.search(source)
        if helper:
            found[notebook.relative_to(labs_dir.parent).as_posix()] = helper.group(1).rstrip("/")
    return found


def address_notices(repo_url: str, site_url: str, environ: dict[str, str] | None = None,
                    helpers: dict[str, str] | None = None, indexes: dict[str, str] | None = None) -> list[str]:
    """What the build log must say about the addresses the site is built with; empty when there is nothing to say."""
    environ = os.environ if environ is None else environ
    helpers = labs_helper_addresses() if helpers is None else helpers
    indexes = labs_helper_addresses(pattern=_HELPER_INDEX) if indexes is None else indexes
    repo = (repo_url or "").rstrip("/")
    notices = []
    if not any(environ.get(name) for name in ADDRESS_VARIABLES):
        notices.append(
            f"PLACEHOLDER ADDRESSES: the site links to the repository {repo} and calls itself {site_url}, the "
            "defaults in mkdocs.yml. Set DEVICELAB_REPO_URL and DEVICELAB_SITE_URL to the real addresses "
            "(the deploy workflow sets both from the repository it runs in)."
        )
    stale = sorted({address for address in helpers.values() if address != repo})
    if stale:
        notices.append(
            f"The labs' setup cell installs the helper from {', '.join(stale)}, not from {repo}: run "
            f"`DEVICELAB_REPO_URL={repo} make notebooks` and commit the notebooks."
        )
    index = helper_index_url({"site_url": site_url}).rstrip("/")
    stale = sorted({address for address in indexes.values() if address != index})
    if stale:
        notices.append(
            f"The labs' setup cell falls back on the helper's wheel at {', '.join(stale)}, not at {index}/ (this "
            f"site's): run `DEVICELAB_SITE_URL={site_url} make notebooks` and commit the notebooks."
        )
    return notices


def on_config(config):
    """Say loudly, once per build, when the site is built with placeholder addresses (never fails --strict)."""
    for notice in address_notices(config["repo_url"], config["site_url"]):
        if notice not in _told:  # on_config runs once per language
            _told.add(notice)
            # Printed, not logged: `mkdocs build --strict` fails on logged warnings, and this is not an error.
            print(f"\n!!! ADDRESS WARNING  -  {notice}\n", file=sys.stderr, flush=True)
    return config


# ------------------------------------------------------------------------------------- the 404 pages

_DEFAULT_404: dict[str, str] = {}
# The language switcher's links, and the <link rel="alternate" hreflang> of the page's head
_SWITCHER_LINK = re.compile(r'(<(?:a|link rel="alternate") href=")[^"]*(" hreflang="([\w-]+)")')


def page_not_found_html(output: str, base: str, locales: dict[str, str]) -> str:
    """A 404 page whose language switcher leads to the 404 page of each language (base: the site's path)."""
    def link(found: re.Match) -> str:
        folder = locales.get(found.group(3))
        return found.group(0) if folder is None else f"{found.group(1)}{base}{folder}404.html{found.group(2)}"
    return _SWITCHER_LINK.sub(link, output)


def on_post_build(config) -> None:
    """Give every language its own 404 page: mkdocs-static-i18n 1.3.1 writes each one over the site's 404.html."""
    i18n = config.plugins.get("i18n")
    if i18n is None:
        return
    site = Path(config["site_dir"])
    base = urlsplit(config["site_url"] or "/").path.rstrip("/") + "/"
    locales = {lang.locale: "" if lang.default else f"{lang.locale}/" for lang in i18n.config.languages}
    prefix, _ = _languages(config)
    built = site / "404.html"
    if not built.exists():
        return
    if not prefix:  # the default language is built first: keep its page until the others are done
        _DEFAULT_404[str(site)] = page_not_found_html(built.read_text(encoding="utf-8"), base, locales)
        built.write_text(_DEFAULT_404[str(site)], encoding="utf-8")
        return
    (site / prefix / "404.html").write_text(
        page_not_found_html(built.read_text(encoding="utf-8"), base, locales), encoding="utf-8")
    if str(site) in _DEFAULT_404:
        built.write_text(_DEFAULT_404[str(site)], encoding="utf-8")


# ------------------------------------------------------------------------- notebook pages' anchors

_HEADING = re.compile(r'<h([1-6]) id="([^"]*)"(.*?)<a class="anchor-link" href="#[^"]*">', re.S)


def _toc_links(items) -> list:
    flat = []
    for item in items:
        flat += [item, *_toc_links(item.children)]
    return flat


def matched_anchors(content: str, toc_links: list) -> str:
    """A notebook page whose headings and table of contents name the same anchors.

    mkdocs-jupyter slugs the table of contents without the headings' code spans and Chinese words, the
    notebook's HTML slugs the headings with them (or to nothing): pair them in order, keep the heading's
    anchor when it has one and the table of contents' otherwise, and never give two headings one anchor.
    """
    levels = {link.level for link in toc_links}
    headings = [found for found in _HEADING.finditer(content) if int(found.group(1)) in levels]
    if len(headings) != len(toc_links):
        return content
    used: set[str] = set()
    chosen = []
    for heading, link in zip(headings, toc_links):
        anchor = heading.group(2) or link.id
        if anchor in used:
            anchor = link.id if link.id not in used else f"{anchor}-{len(used)}"
        used.add(anchor)
        link.id = anchor
        chosen.append(anchor)
    pieces, last = [], 0
    for heading, anchor in zip(headings, chosen):
        pieces += [content[last:heading.start()],
                   f'<h{heading.group(1)} id="{anchor}"{heading.group(3)}<a class="anchor-link" href="#{anchor}">']
        last = heading.end()
    return "".join(pieces) + content[last:]


def on_page_context(context, page, config, nav):
    """Make the table of contents of a notebook page lead to its headings."""
    if _notebook_parts(page) is not None and page.content:
        page.content = matched_anchors(page.content, _toc_links(page.toc.items))
        _titles_with_code(page, page.content)
    return context
