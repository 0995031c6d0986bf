#!/usr/bin/env python3
"""Checks a cutrace report as Chromium rendered it against `cutrace summary --json`.

    check_report.py DOM STDERR SUMMARY_JSON [--netlog NETLOG] [--hostile MARK]

DOM is what `chromium --dump-dom` printed (the page after its script ran), STDERR what Chromium
logged with --enable-logging=stderr, SUMMARY_JSON the output of `cutrace summary --json` run
with the report's options, NETLOG Chromium's network log (--log-net-log). The conventions checked are those of the report's page (see
tests/report/README.md): every data-path resolves in the summary and its data-value is that
value as JavaScript's String() writes it; the plots and diagnosis cards the summary calls for
exist; the script finished (data-ct-rendered) without errors (data-ct-errors, console); nothing
outside the file is referenced or fetched; no element the page did not make (handlers, images,
frames). With --hostile MARK, every string of the summary containing MARK that an element shows
(data-path) must be in the page's text.

Prints one "FAIL: ..." line per problem and a last line "checked: ..." with the counts; exits 1
when anything failed, 2 on unusable input. Python 3 standard library only (html.parser, json).
"""
import decimal
import html.parser
import json
import re
import sys

# elements the page never makes: anything that fetches, frames, embeds or submits (its own
# controls, such as the overview's zoom buttons, are harmless and allowed)
FORBIDDEN_TAGS = {"img", "iframe", "frame", "object", "embed", "link", "base", "audio", "video",
                  "source", "track", "picture", "form", "applet", "portal", "foreignobject"}
URL_ATTRS = {"src", "href", "xlink:href", "data", "poster", "srcset", "action", "formaction",
             "background", "ping", "manifest", "codebase", "cite"}
CSP = "default-src 'none'"


def js_string(v):
    """JavaScript's String(v) for a value JSON.parse gave (numbers are doubles there)."""
    if v is None:
        return "null"
    if v is True:
        return "true"
    if v is False:
        return "false"
    if isinstance(v, str):
        return v
    f = float(v)  # JSON has no NaN or infinity
    if f == 0:
        return "0"
    sign = "-" if f < 0 else ""
    # repr gives the shortest digits that read back as f, as ECMAScript's Number::toString
    t = decimal.Decimal(repr(abs(f))).normalize().as_tuple()
    digits = "".join(map(str, t.digits))
    k = len(digits)
    n = t.exponent + k  # value = 0.DIGITS * 10^n
    if k <= n <= 21:
        s = digits + "0" * (n - k)
    elif 0 < n <= 21:
        s = digits[:n] + "." + digits[n:]
    elif -6 < n <= 0:
        s = "0." + "0" * (-n) + digits
    else:
        e = n - 1
        s = digits[0] + ("." + digits[1:] if k > 1 else "") + "e" + ("+" if e >= 0 else "-") + str(abs(e))
    return sign + s


class Node:
    __slots__ = ("tag", "attrs", "children", "parent", "text")

    def __init__(self, tag, attrs, parent):
        self.tag, self.attrs, self.parent, self.children, self.text = tag, attrs, parent, [], []

    def walk(self):
        yield self
        for c in self.children:
            yield from c.walk()

    def shown_text(self):
        """The text a reader sees (not the data or code of scripts, not styles)."""
        if self.tag in ("script", "style"):
            return ""
        return "".join(self.text) + "".join(c.shown_text() for c in self.children)


VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "param",
        "source", "track", "wbr"}


class Tree(html.parser.HTMLParser):
    """The DOM as Chromium serialized it (well formed: every element is closed)."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.root = Node("#document", {}, None)
        self.cur = self.root
        self.dup_attrs = []

    def handle_starttag(self, tag, attrs):
        d = {}
        for k, v in attrs:
            if k in d:
                self.dup_attrs.append((tag, k))
            d[k] = "" if v is None else v
        n = Node(tag, d, self.cur)
        self.cur.children.append(n)
        if tag not in VOID:
            self.cur = n

    def handle_startendtag(self, tag, attrs):
        self.handle_starttag(tag, attrs)
        if tag not in VOID:
            self.cur = self.cur.parent

    def handle_endtag(self, tag):
        n = self.cur
        while n is not self.root and n.tag != tag:
            n = n.parent
        if n is not self.root:
            self.cur = n.parent

    def handle_data(self, data):
        self.cur.text.append(data)


def resolve(doc, path):
    v = doc
    for part in path.split("."):
        if isinstance(v, list):
            if not part.isdigit() or int(part) >= len(v):
                raise KeyError(part)
            v = v[int(part)]
        elif isinstance(v, dict) and part in v:
            v = v[part]
        else:
            raise KeyError(part)
    return v


def under(path, prefix):
    return path == prefix or path.startswith(prefix + ".")


def strings_of(v, path=""):
    if isinstance(v, str):
        yield path, v
    elif isinstance(v, list):
        for i, x in enumerate(v):
            yield from strings_of(x, f"{path}.{i}" if path else str(i))
    elif isinstance(v, dict):
        for k, x in v.items():
            yield from strings_of(x, f"{path}.{k}" if path else k)


def page_requests(netlog):
    """URLs the page (its origin is file://) asked the network stack for. Chromium's own
    background requests (updates, accounts) have other isolation keys."""
    c = netlog["constants"]["logEventTypes"]
    start = c.get("URL_REQUEST_START_JOB")
    for e in netlog["events"]:
        p = e.get("params") or {}
        if e.get("type") == start and "url" in p and "file://" in p.get("network_isolation_key", ""):
            if not p["url"].startswith(("file:", "data:")):
                yield p["url"]


def check(dom_text, log_text, summary, hostile=None, netlog=None):
    """Returns (failures, counts)."""
    fails = []
    counts = {"values": 0, "plots": 0, "diagnoses": 0, "hostile": 0, "bins": 0}
    t = Tree()
    t.feed(dom_text)
    t.close()
    nodes = list(t.root.walk())[1:]
    html_el = next((n for n in nodes if n.tag == "html"), None)
    if html_el is None:
        return ["the DOM dump has no <html> element (Chromium did not render the page)"], counts

    # the script ran to its end, with no error it caught or the console saw
    if html_el.attrs.get("data-ct-rendered") != "1":
        fails.append('<html> lacks data-ct-rendered="1": the page\'s script did not finish')
    if html_el.attrs.get("data-ct-errors"):
        fails.append(f"<html data-ct-errors>: the page recorded errors: {html_el.attrs['data-ct-errors']!r}")
    for line in log_text.splitlines():
        if (":CONSOLE" in line or "Uncaught" in line or "Content Security Policy" in line
                or "Failed to load resource" in line):
            fails.append(f"Chromium logged: {line.strip()}")
    if netlog is not None:
        for url in page_requests(netlog):
            fails.append(f"the page requested {url} (Chromium's network log)")
    for tag, k in t.dup_attrs:
        fails.append(f"<{tag}> has attribute {k} twice")

    # self-contained: the CSP, no element that fetches or frames, no handler, no outside URL
    csp = [n for n in nodes if n.tag == "meta" and n.attrs.get("http-equiv", "").lower() == "content-security-policy"]
    if not csp or CSP not in csp[0].attrs.get("content", ""):
        fails.append(f'no <meta http-equiv="Content-Security-Policy"> with "{CSP}"')
    scripts = [n for n in nodes if n.tag == "script"]
    data_el = [n for n in scripts if n.attrs.get("id") == "ct-data"]
    # JSON in a script element is data the browser never runs; any other script is code
    code = [n for n in scripts if n.attrs.get("type") != "application/json"]
    if len(data_el) != 1 or data_el[0].attrs.get("type") != "application/json":
        fails.append(f'expected one <script type="application/json" id="ct-data">, found {len(data_el)}')
    if len(code) != 1 or set(code[0].attrs) - {"type"}:
        fails.append(f"expected one inline script of the page, found {len(code)}: "
                     + ", ".join(repr(n.attrs) for n in code))
    for n in nodes:
        if n.tag in FORBIDDEN_TAGS:
            fails.append(f"element <{n.tag}> {n.attrs!r}: the page makes none (injected, or fetching)")
        for k, v in n.attrs.items():
            if k.startswith("on"):
                fails.append(f"<{n.tag}> has a handler attribute {k}={v!r} (injected)")
            if k in URL_ATTRS and n.tag != "a" and v and not v.startswith(("#", "data:")):
                fails.append(f"<{n.tag} {k}={v!r}>: a reference outside the file")
            if n.tag == "a" and k == "href" and v.strip().lower().startswith(("javascript:", "data:")):
                fails.append(f"<a href={v!r}>: a link that runs code")
            if k == "style" and re.search(r"url\(\s*['\"]?(?!data:|#)", v):
                fails.append(f"<{n.tag} style={v!r}>: a URL in a style")
        if n.tag == "style" and re.search(r"url\(\s*['\"]?(?!data:|#)|@import", "".join(n.text)):
            fails.append("a <style> refers to a URL outside the file")

    # the embedded document is the summary's
    if len(data_el) == 1:
        try:
            embedded = json.loads("".join(data_el[0].text))
            if embedded != summary:
                diff = [k for k in set(embedded) | set(summary) if embedded.get(k) != summary.get(k)]
                fails.append(f"the page's embedded JSON differs from cutrace summary --json in: {sorted(diff)}")
        except ValueError as e:
            fails.append(f"the page's embedded JSON does not parse: {e}")

    # every shown value is the summary's
    by_path = {}
    for n in nodes:
        p = n.attrs.get("data-path")
        if p is None:
            continue
        by_path.setdefault(p, []).append(n)
        try:
            v = resolve(summary, p)
        except KeyError as e:
            fails.append(f"<{n.tag} data-path={p!r}>: no such value in the summary (at {e})")
            continue
        if "data-value" in n.attrs and isinstance(v, (dict, list)):
            counts["values"] += 1
            try:  # a container's data-value is its JSON.stringify
                same = json.loads(n.attrs["data-value"]) == v
            except ValueError:
                same = False
            if not same:
                fails.append(f"<{n.tag} data-path={p!r}> data-value={n.attrs['data-value'][:200]!r} "
                             f"is not the summary's value there")
        elif "data-value" in n.attrs:
            counts["values"] += 1
            if n.attrs["data-value"] != js_string(v):
                fails.append(f"<{n.tag} data-path={p!r}> data-value={n.attrs['data-value']!r}, "
                             f"the summary has {js_string(v)!r}")
        elif not isinstance(v, (dict, list)):
            fails.append(f"<{n.tag} data-path={p!r}> shows {js_string(v)!r} without data-value")

    # the plots the summary calls for
    plots = [n for n in nodes if n.tag == "svg" and "ct-plot" in n.attrs.get("class", "").split()]
    counts["plots"] = len(plots)

    def plots_of(kind, prefix):
        return [n for n in plots if n.attrs.get("data-plot") == kind
                and under(n.attrs.get("data-path", ""), prefix)]

    def want(kind, prefix, why, exactly=True):
        found = plots_of(kind, prefix)
        if not found or (exactly and len(found) > 1):
            fails.append(f'expected {"one" if exactly else "a"} <svg class="ct-plot" data-plot="{kind}"> '
                         f'with data-path under "{prefix}" ({why}), found {len(found)}')
        return found

    for i, b in enumerate(summary.get("breakdown", [])):
        if b.get("series"):
            for kind in ("util", "host"):
                got = want(kind, f"breakdown.{i}", "breakdown entry with series")
                if kind == "util" and len(got) == 1:
                    shown = {n.attrs.get("data-path") for n in got[0].walk()}
                    for j in range(len(b["series"].get("busy_ns", []))):
                        counts["bins"] += 1
                        if f"breakdown.{i}.series.busy_ns.{j}" not in shown:
                            fails.append(f"util plot of breakdown.{i}: no element for busy_ns bin {j}")
    if summary.get("breakdown"):
        want("breakdown", "breakdown", "breakdown[] is not empty", exactly=False)
    if summary.get("kernels"):
        want("kernels", "kernels", "kernels[] is not empty", exactly=False)
    if summary.get("copies"):
        want("copies", "copies", "copies[] is not empty", exactly=False)
    for i, v in enumerate(summary.get("vram", [])):
        if v.get("curve"):
            want("vram", f"vram.{i}", "vram entry with a curve")
    if len(summary.get("ranks", [])) >= 2:
        want("ranks", "ranks", "2 or more ranks")
    for i, _ in enumerate((summary.get("nvtx") or {}).get("iterations", [])):
        want("steps", f"nvtx.iterations.{i}", "NVTX iteration")
    if summary.get("overview"):
        want("overview", "overview", "overview present")

    # every diagnosis has its card, linked to the place it happened
    ids = {n.attrs.get("id"): n for n in nodes if "id" in n.attrs}
    for i, d in enumerate(summary.get("diagnoses", [])):
        counts["diagnoses"] += 1
        card = ids.get(f"diag-{i}")
        if (card is None or card.tag != "section" or "ct-diag" not in card.attrs.get("class", "").split()
                or card.attrs.get("data-path") != f"diagnoses.{i}"):
            fails.append(f'diagnosis {i} ({d.get("id")}): no <section class="ct-diag" id="diag-{i}" '
                         f'data-path="diagnoses.{i}">')
            continue
        if d.get("at") is None:
            continue
        links = [n for n in card.walk() if n.tag == "a" and "ct-at" in n.attrs.get("class", "").split()]
        target = ids.get(links[0].attrs.get("href", "")[1:]) if links else None
        if target is None:
            fails.append(f"diagnosis {i} ({d.get('id')}) has a place (at) but no <a class=\"ct-at\"> "
                         f"to an element of the page")
        elif not any(n.attrs.get("data-path") == f"diagnoses.{i}.at" for n in target.walk()):
            fails.append(f"diagnosis {i}: the plot its link names (#{target.attrs['id']}) does not mark "
                         f'the place (no element data-path="diagnoses.{i}.at" inside)')

    # hostile strings are there as text, never as markup
    if hostile:
        text = t.root.shown_text()
        for p, s in strings_of(summary):
            if hostile not in s or p not in by_path:
                continue  # only what the page shows
            counts["hostile"] += 1
            if s not in text:
                fails.append(f"the string at {p} ({s!r}) is not shown as text")
    return fails, counts


def main(argv):
    args = argv[1:]
    opt = {}
    for name in ("--hostile", "--netlog"):
        if name in args[:-1]:
            i = args.index(name)
            opt[name] = args[i + 1]
            del args[i:i + 2]
    if len(args) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    try:
        with open(args[0], encoding="utf-8") as f:
            dom = f.read()
        with open(args[1], encoding="utf-8", errors="replace") as f:
            log = f.read()
        with open(args[2], encoding="utf-8") as f:
            summary = json.load(f)
        netlog = None
        if "--netlog" in opt:
            with open(opt["--netlog"], encoding="utf-8") as f:
                netlog = json.load(f)
    except (OSError, ValueError) as e:
        print(f"check_report.py: {e}", file=sys.stderr)
        return 2
    try:
        fails, counts = check(dom, log, summary, opt.get("--hostile"), netlog)
    except Exception as e:  # a checker bug must not read as "the page failed"
        print(f"check_report.py: {type(e).__name__}: {e}", file=sys.stderr)
        return 2
    for f in fails:
        print("FAIL: " + f)
    print("checked: " + ", ".join(f"{k} {v}" for k, v in counts.items()) + f", failures {len(fails)}")
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
