"""One self-contained HTML page for a run: the shell, the verdict table, the decision record, plots.

Domain-free: the TabArena run report and the HF review page build their sections from
these parts. Every page carries a Content-Security-Policy that allows no network request
and no script but the page's own (by hash), so a hostile name that slipped past escaping
still could not run or call home. Everything a reader needs is in the markup; the one
script only re-sorts tables and heatmap rows.

Plots are matplotlib figures rendered to inline SVG (text kept as text, so it can be
searched, read by a screen reader and escaped like any other markup). matplotlib is
imported only when a figure is rendered.
"""

from __future__ import annotations

import base64
import hashlib
import html
import io
import json
import re
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from checks.errors import UsageError

#: verdicts that need attention first: crashed, failed errors, failed warnings, waived, passed
_ORDER = {
    ("crashed", "error"): 0,
    ("failed", "error"): 1,
    ("failed", "warning"): 2,
    ("failed", "info"): 3,
    ("waived", "error"): 4,
    ("waived", "warning"): 4,
    ("waived", "info"): 4,
}
#: findings listed per verdict before the rest is counted
FINDINGS_SHOWN = 50

CSS = """
:root{--fg:#1b1f24;--muted:#57606a;--line:#d0d7de;--bg:#fff;--soft:#f6f8fa;--bad:#b42318;--warn:#9a6700;
--ok:#1a7f37;--waived:#6e40c9;--info:#0969da}
*{box-sizing:border-box}
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,"DejaVu Sans",sans-serif;color:var(--fg);
background:var(--bg);margin:0}
header.top{background:#0d1117;color:#f0f6fc;padding:18px 28px}
header.top h1{margin:0 0 4px;font-size:22px}
header.top p{margin:0;color:#c9d1d9}
nav.toc{position:sticky;top:0;background:var(--soft);border-bottom:1px solid var(--line);padding:8px 28px;
z-index:2;font-size:13px}
nav.toc a{margin-right:14px;color:var(--info);text-decoration:none}
main{padding:8px 28px 40px;max-width:1400px}
section{margin:26px 0;border-top:1px solid var(--line);padding-top:8px}
h2{font-size:19px;margin:10px 0}
h3{font-size:15px;margin:16px 0 6px}
p.note,.muted{color:var(--muted)}
table{border-collapse:collapse;margin:8px 0;font-size:13px}
th,td{border:1px solid var(--line);padding:4px 8px;text-align:left;vertical-align:top}
th{background:var(--soft);font-weight:600}
td.num,th.num{text-align:right;font-variant-numeric:tabular-nums}
code,pre{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,"DejaVu Sans Mono",monospace;font-size:12px}
pre{background:var(--soft);border:1px solid var(--line);padding:8px;overflow:auto;white-space:pre-wrap;
word-break:break-word;max-height:420px}
.badge{display:inline-block;padding:1px 8px;border-radius:10px;font-size:12px;font-weight:600;color:#fff;
white-space:nowrap}
.b-crashed,.b-failed-error,.b-blocked,.b-error,.b-bad{background:var(--bad)}
.b-failed-warning,.b-failed-info,.b-warn,.b-warning{background:var(--warn)}
.b-waived{background:var(--waived)}
.b-passed,.b-ran,.b-ok{background:var(--ok)}
.b-info,.b-dry-run,.b-preview{background:var(--info)}
.b-muted{background:#8c959f}
tr.v-crashed td:first-child,tr.v-failed-error td:first-child{box-shadow:inset 4px 0 var(--bad)}
tr.v-failed-warning td:first-child,tr.v-failed-info td:first-child{box-shadow:inset 4px 0 var(--warn)}
tr.v-waived td:first-child{box-shadow:inset 4px 0 var(--waived)}
details.explain summary{cursor:pointer;color:var(--info);font-size:12px}
details.explain pre{max-height:260px}
ul.findings{margin:0;padding-left:18px}
td.nw{white-space:nowrap}
td.loc{max-width:280px;word-break:break-all}
p.verdict-summary .badge{font-size:13px;padding:2px 10px;margin-right:6px}
details.passed>summary{cursor:pointer;margin:6px 0}
.figure{margin:10px 0;overflow-x:auto}
.figure svg{max-width:100%;height:auto}
.scroll{overflow:auto;max-height:720px;border:1px solid var(--line)}
.legend{display:flex;flex-wrap:wrap;gap:10px;align-items:center;font-size:12px;margin:6px 0}
.legend .sw{display:inline-block;width:14px;height:14px;border:1px solid #8c959f;vertical-align:middle;
margin-right:4px}
.kv th{width:220px}
.sortbar{font-size:12px;margin:4px 0;display:none}
.js .sortbar{display:block}
.sortbar button{font-size:12px;margin-right:6px}
.wide{overflow-x:auto}
table.diff{font-family:ui-monospace,Menlo,Consolas,"DejaVu Sans Mono",monospace;font-size:12px}
table.diff td{border:none;padding:1px 6px;white-space:pre-wrap}
table.diff td.diff_next{display:none}
table.diff td.diff_header{color:var(--muted);text-align:right;background:var(--soft)}
table.diff th{font-family:system-ui,"DejaVu Sans",sans-serif}
.diff_add{background:#d1f5d3}.diff_chg{background:#fff1b8}.diff_sub{background:#ffd7d5}
p.closing{font-size:15px}
footer{color:var(--muted);font-size:12px;padding:10px 28px 30px}
"""

#: the page's only script: sorting controls (the page is complete without it)
SCRIPT = """
document.documentElement.classList.add('js');
document.querySelectorAll('[data-sortable]').forEach(function (box) {
  var grid = box.querySelector('svg[data-rows]');
  box.querySelectorAll('button[data-key]').forEach(function (btn) {
    btn.addEventListener('click', function () {
      var key = btn.getAttribute('data-key');
      var rows = Array.prototype.slice.call(grid.querySelectorAll('g.hrow'));
      rows.sort(function (a, b) {
        var byName = a.getAttribute('data-name').localeCompare(b.getAttribute('data-name'), undefined,
                                                                {numeric: true});
        if (key === 'name') { return byName; }
        var d = parseFloat(a.getAttribute('data-' + key)) - parseFloat(b.getAttribute('data-' + key));
        if (btn.hasAttribute('data-desc')) { d = -d; }
        return d !== 0 ? d : byName;
      });
      var step = parseFloat(grid.getAttribute('data-step')), top = parseFloat(grid.getAttribute('data-top'));
      rows.forEach(function (row, i) { row.setAttribute('transform', 'translate(0,' + (top + i * step) + ')'); });
    });
  });
});
"""


def esc(value: Any) -> str:
    """``value`` as text safe in HTML content and in double- or single-quoted attributes."""
    return html.escape("" if value is None else str(value), quote=True)


def badge(text: str, kind: str | None = None) -> str:
    """A coloured label whose meaning is also its text (colour is never the only signal)."""
    return f'<span class="badge b-{esc(kind or text)}">{esc(text)}</span>'


def table(
    columns: Sequence[str],
    rows: Iterable[Sequence[Any]],
    *,
    numeric: Sequence[int] = (),
    caption: str = "",
    raw: Sequence[int] = (),
    cls: str = "",
) -> str:
    """A plain table; cells are escaped except the column indexes in ``raw`` (already markup)."""
    head = "".join(
        f'<th{" class=num" if i in numeric else ""} scope="col">{esc(c)}</th>' for i, c in enumerate(columns)
    )
    body = []
    for row in rows:
        cells = []
        for i, cell in enumerate(row):
            text = cell if i in raw else esc(cell)
            cells.append(f'<td class="num">{text}</td>' if i in numeric else f"<td>{text}</td>")
        body.append("<tr>" + "".join(cells) + "</tr>")
    cap = f"<caption>{esc(caption)}</caption>" if caption else ""
    klass = f' class="{esc(cls)}"' if cls else ""
    return f"<table{klass}>{cap}<thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table>"


def key_values(pairs: Iterable[tuple[str, Any]]) -> str:
    """A two-column table of names and (escaped) values."""
    rows = "".join(f'<tr><th scope="row">{esc(k)}</th><td>{esc(v)}</td></tr>' for k, v in pairs)
    return f'<table class="kv"><tbody>{rows}</tbody></table>'


def _location(finding: Any) -> str:
    path, line = getattr(finding, "path", None), getattr(finding, "line", None)
    if path and line:
        return f"{path}:{line}"
    return path or ""


def verdict_rows(verdicts: Iterable[Any]) -> list[dict[str, Any]]:
    """Verdict objects (or record dicts) as dicts, failed first, each with its findings and their locations."""
    rows = []
    for v in verdicts:
        if isinstance(v, Mapping):
            findings = [{"message": m, "location": ""} for m in ([v.get("message")] if v.get("message") else [])]
            row = {
                "code": v["code"],
                "name": v["name"],
                "severity": v["severity"],
                "outcome": v["outcome"],
                "plugin": v.get("plugin", ""),
                "waivers": list(v.get("waivers", ())),
                "findings": findings,
            }
        else:
            row = {
                "code": v.code,
                "name": v.name,
                "severity": v.severity.value,
                "outcome": v.outcome.value,
                "plugin": v.plugin,
                "waivers": list(v.waivers),
                "findings": [{"message": f.message, "location": _location(f)} for f in v.findings],
            }
        rows.append(row)
    return sorted(rows, key=lambda r: (_ORDER.get((r["outcome"], r["severity"]), 9), r["code"]))


def _verdict_summary(rows: list[Mapping[str, Any]]) -> str:
    """How many rules block, and how many ended in each outcome."""
    counts: dict[str, int] = {}
    for r in rows:
        counts[r["outcome"]] = counts.get(r["outcome"], 0) + 1
    blocking = sum(
        1 for r in rows if r["outcome"] == "crashed" or (r["outcome"] == "failed" and r["severity"] == "error")
    )
    state = badge(f"{blocking} blocking", "bad") if blocking else badge("nothing blocks", "ok")
    return f'<p class="verdict-summary">{state} {esc(", ".join(f"{n} {k}" for k, n in sorted(counts.items())))}</p>'


def _findings_list(findings: list[Mapping[str, Any]]) -> str:
    """The first findings, each with its location, as a list (and how many more)."""
    items = []
    for f in findings[:FINDINGS_SHOWN]:
        where = f"<code>{esc(f['location'])}</code>: " if f["location"] else ""
        items.append(f"<li>{where}{esc(f['message'])}</li>")
    if len(findings) > FINDINGS_SHOWN:
        items.append(f"<li>... and {len(findings) - FINDINGS_SHOWN} more</li>")
    return f'<ul class="findings">{"".join(items)}</ul>' if items else '<span class="muted">no finding</span>'


def _verdict_row(r: Mapping[str, Any], explanations: Mapping[str, str]) -> str:
    kind = r["outcome"] if r["outcome"] in ("passed", "waived", "crashed") else f"{r['outcome']}-{r['severity']}"
    message = _findings_list(r["findings"])
    if r["waivers"]:
        message += f'<div class="muted">waived by {esc(", ".join(r["waivers"]))}</div>'
    text = explanations.get(r["code"])
    if text:
        message += (
            f'<details class="explain"><summary>checks rule {esc(r["code"])}</summary><pre>{esc(text)}</pre></details>'
        )
    locations = sorted({f["location"] for f in r["findings"] if f["location"]})
    where = esc(locations[0]) + (f" (+{len(locations) - 1})" if len(locations) > 1 else "") if locations else "-"
    return (
        f'<tr class="v-{esc(kind)}" id="verdict-{esc(r["code"])}"><td><code>{esc(r["code"])}</code></td>'
        f'<td class="nw">{esc(r["name"])}</td><td>{badge(r["severity"])}</td><td>{badge(r["outcome"], kind)}</td>'
        f'<td>{message}</td><td class="loc"><code>{where}</code></td></tr>'
    )


def verdict_table(verdicts: Iterable[Any], explanations: Mapping[str, str]) -> str:
    """The verdicts, failed first; passed ones folded below. Each row carries its ``checks rule CODE`` text."""
    rows = verdict_rows(verdicts)
    if not rows:
        return '<p class="note">No rule was evaluated.</p>'
    summary = _verdict_summary(rows)
    head = "".join(f'<th scope="col">{c}</th>' for c in ("Code", "Name", "Severity", "Outcome", "Message", "Location"))
    attention = [r for r in rows if r["outcome"] != "passed"]
    passed = [r for r in rows if r["outcome"] == "passed"]
    out = summary + f'<table class="verdicts" id="verdict-table"><thead><tr>{head}</tr></thead><tbody>'
    out += "".join(_verdict_row(r, explanations) for r in attention)
    if not attention:
        out += '<tr><td colspan="6">Every rule passed.</td></tr>'
    out += "</tbody></table>"
    return out + _passed_table(passed, head, explanations)


def _passed_table(passed: list, head: str, explanations: Mapping[str, str]) -> str:
    """The passed verdicts folded in a ``<details>`` (a reader looks at what failed first); "" if none."""
    if not passed:
        return ""
    return (
        f'<details class="passed"><summary>{len(passed)} passed rule(s)</summary>'
        f'<table class="verdicts"><thead><tr>{head}</tr></thead><tbody>'
        + "".join(_verdict_row(r, explanations) for r in passed)
        + "</tbody></table></details>"
    )


def _provenance(record: Mapping[str, Any]) -> list[tuple[str, Any]]:
    """The versions, the rules.toml and the waivers a record names."""
    versions = record.get("versions") or {}
    pairs = [("arena-checks", versions.get("arena-checks"))]
    pairs += [(f"plugin {k}", v) for k, v in (versions.get("plugins") or {}).items()]
    cfg = record.get("config") or {}
    pairs += [("rules.toml", cfg.get("path") or "(defaults)"), ("rules.toml sha256", cfg.get("sha256") or "-")]
    pairs.append(("waivers used", ", ".join(record.get("waivers_used") or ()) or "none"))
    return pairs


def record_section(record: Mapping[str, Any] | None, *, note: str = "") -> str:
    """The decision record: outcome, input digests, versions, waivers used, and the whole record as JSON."""
    if not record:
        return f'<p class="note">{esc(note or "No decision record.")}</p>'
    pairs = [
        ("action", record.get("action")),
        ("target", record.get("target")),
        ("outcome", record.get("outcome")),
        ("started", record.get("started")),
        ("finished", record.get("finished")),
        ("dry run", record.get("dry_run")),
    ]
    pairs += [(f"input {k}", v) for k, v in (record.get("inputs") or {}).items()]
    pairs += _provenance(record)
    if record.get("error"):
        pairs.append(("error", record["error"]))
    lead = f'<p class="note">{esc(note)}</p>' if note else ""
    return (
        lead
        + key_values(pairs)
        + "<details><summary>The record as JSON</summary><pre>"
        + esc(json.dumps(record, indent=2, sort_keys=True, default=str))
        + "</pre></details>"
    )


def waiver_table(waivers: Iterable[Any], used: Iterable[str], today: Any) -> str:
    """The waivers in force for a run: what each covers, why, whose, until when, and whether it was used."""
    used = set(used)
    rows = [
        [
            w.id,
            w.reason,
            w.owner,
            str(w.expires),
            "expired" if w.expired(today) else ("used" if w.id in used else "not used"),
        ]
        for w in waivers
    ]
    if not rows:
        return '<p class="note">No waiver is configured.</p>'
    return "<h3>Waivers</h3>" + table(["waiver (rule:target)", "reason", "owner", "expires", "in this run"], rows)


def _csp(script: str) -> str:
    digest = base64.b64encode(hashlib.sha256(script.encode()).digest()).decode()
    return (
        f"default-src 'none'; style-src 'unsafe-inline'; img-src data:; script-src 'sha256-{digest}'; "
        "base-uri 'none'; form-action 'none'"
    )


def page(title: str, subtitle: str, sections: Sequence[tuple[str, str, str]], *, footer: str = "") -> str:
    """The whole document: ``sections`` are (id, heading, body markup); ``title`` and ``subtitle`` are text."""
    toc = "".join(f'<a href="#{esc(sid)}">{esc(heading)}</a>' for sid, heading, _ in sections)
    body = "".join(
        f'<section id="{esc(sid)}" aria-labelledby="{esc(sid)}-h"><h2 id="{esc(sid)}-h">{esc(heading)}'
        f"</h2>{content}</section>"
        for sid, heading, content in sections
    )
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        f'<meta http-equiv="Content-Security-Policy" content="{_csp(SCRIPT)}">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{esc(title)}</title><style>{CSS}</style></head><body>"
        f'<header class="top"><h1>{esc(title)}</h1><p>{esc(subtitle)}</p></header>'
        f'<nav class="toc" aria-label="Sections">{toc}</nav><main>{body}</main>'
        f"<footer>{footer}</footer><script>{SCRIPT}</script></body></html>\n"
    )


# ----------------------------------------------------------------------------- plots


def plot_text(value: Any) -> str:
    """A name as matplotlib text: '$' would start mathtext, so it is escaped (the SVG writer escapes markup)."""
    return str(value).replace("\\", "\\\\").replace("$", r"\$")


def new_figure(
    width: float, height: float, *, left: float = 0.9, right: float = 0.2, bottom: float = 0.6, top: float = 0.2
):
    """A matplotlib Figure without pyplot (no global state, no GUI backend), margins in inches.

    Fixed margins instead of a layout engine: constrained layout measures every text twice and
    costs more than drawing the figure.
    """
    from matplotlib.figure import Figure

    fig = Figure(figsize=(width, height), dpi=100)
    fig.subplots_adjust(left=left / width, right=1 - right / width, bottom=bottom / height, top=1 - top / height)
    return fig


_SVG_START = re.compile(r"<svg\b")


def svg(fig, *, ident: str, title: str, desc: str) -> str:
    """``fig`` as inline SVG with a title and a description for screen readers.

    Ids inside each figure are salted with ``ident`` so several figures can share a page.
    """
    import matplotlib

    buf = io.StringIO()
    with matplotlib.rc_context({"svg.fonttype": "none", "svg.hashsalt": ident, "svg.id": ident}):
        fig.savefig(buf, format="svg", metadata={"Date": None, "Creator": None})
    text = buf.getvalue()
    start = _SVG_START.search(text)
    text = text[start.start() :] if start else text
    close = text.index(">") + 1
    head = text[: close - 1] + f' role="img" aria-labelledby="{esc(ident)}-t {esc(ident)}-d">'
    return (
        f'<div class="figure">{head}<title id="{esc(ident)}-t">{esc(title)}</title>'
        f'<desc id="{esc(ident)}-d">{esc(desc)}</desc>{text[close:]}</div>'
    )


def check_target(value: str | None) -> None:
    """Refuse an ``--html`` path that is a directory or whose directory does not exist, before anything runs."""
    if value is None:
        return
    target = Path(value)
    if target.is_dir():
        raise UsageError(f"--html {value}: is a directory; name the report file, e.g. {target / 'report.html'}")
    if not target.parent.is_dir():
        raise UsageError(
            f"--html {value}: directory '{target.parent}' does not exist; create it or choose another path"
        )
