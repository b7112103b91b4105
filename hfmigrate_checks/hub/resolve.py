"""Which Hub model repo, if any, a leaderboard's model label names: never a near miss.

A leaderboard row says "Llama 3.1 8B Instruct"; a draft may only go to the repo that is
exactly that model. ``resolve`` first asks ``model_info`` about explicit candidates (a
mapping-file entry, repo links the caller found next to the label, the label itself when
it reads as ``owner/name``), then searches the Hub. It classifies, and never redirects to
a base model, a newer release, a quantization or a mirror:

- ``exact``: the named repo exists, or exactly one search hit is named like the label;
- ``mismatch``: what exists differs in size, version, base vs instruct/chat,
  quantization/format, or a fine-tune/checkpoint suffix (or is another owner's copy);
- ``ambiguous``: several plausible repos, or only near-identical names;
- ``not_on_hub``: nothing plausible (or the mapping file says there is no repo);
- ``not_applicable``: an API-only system;
- ``needs_review``: a Hub read failed after retries, so absence cannot be claimed.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from pathlib import Path

import attrs

from checks import InputError, io
from hfmigrate_checks.hub.client import HubNotFound, HubReadError

STATUSES = ("exact", "ambiguous", "not_on_hub", "mismatch", "not_applicable", "needs_review")
REPO_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*/[A-Za-z0-9][A-Za-z0-9._-]*$")
MAPPING_KEYS = frozenset({"repo", "api_only", "note"})
SEARCH_LIMIT = 20
_SHOWN = 5


@attrs.frozen
class Resolution:
    """The outcome for one source label; ``candidates_checked`` reads like ``"owner/name (not found)"``."""

    source_label: str
    status: str = attrs.field(validator=attrs.validators.in_(STATUSES))
    repo_id: str | None
    sha: str | None
    evidence: str
    candidates_checked: tuple[str, ...] = ()


@attrs.frozen
class MappingEntry:
    """One mapping-file entry: a reviewed repo id, ``repo: null`` (no repo), or ``api_only``."""

    label: str
    repo: str | None
    api_only: bool = False
    note: str = ""


# --------------------------------------------------------------------------- mapping file


def load_mapping(path: str | Path) -> dict[str, MappingEntry]:
    """Read a mapping file ``{label: {repo: owner/name} | {repo: null} | {api_only: true}}``.

    Raises :class:`checks.InputError` naming the file, the label and the fix.
    """
    path = Path(path)
    try:
        data = io.load_yaml(path)
    except io.YamlError as exc:
        raise InputError(f"{exc.path}: not valid YAML for a mapping file: {exc.reason}") from None
    except io.ReadError as exc:
        raise InputError(f"{exc.path}: cannot read the mapping file ({exc.reason})") from None
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise InputError(
            f"{path}: the mapping file must be a mapping of source label -> entry "
            f"(got a {type(data).__name__}); write e.g. 'Llama 3.1 8B: {{repo: meta-llama/Llama-3.1-8B}}'"
        )
    return {_label(path, key): _entry(path, key, value) for key, value in data.items()}


def _label(path: Path, key: object) -> str:
    if not isinstance(key, str) or not key.strip():
        raise InputError(f"{path}: source label {key!r} must be a non-empty string; quote it in the YAML")
    return key


def _note_and_api_only(value: dict, where: str) -> tuple[str, bool]:
    note = value.get("note", "")
    if not isinstance(note, str):
        raise InputError(f"{where}: 'note' must be a string (got {note!r})")
    api_only = value.get("api_only", False)
    if not isinstance(api_only, bool):
        raise InputError(f"{where}: 'api_only' must be true or false (got {api_only!r})")
    return note, api_only


def _entry(path: Path, label: object, value: object) -> MappingEntry:
    where = f"{path}: entry {label!r}"
    if not isinstance(value, dict):
        raise InputError(
            f"{where} must be a mapping like {{repo: owner/name}}, {{repo: null}} or {{api_only: true}} (got {value!r})"
        )
    unknown = sorted(map(str, set(value) - MAPPING_KEYS))
    if unknown:
        raise InputError(f"{where} has unknown key(s) {', '.join(unknown)}; allowed: repo, api_only, note")
    note, api_only = _note_and_api_only(value, where)
    if api_only:
        if value.get("repo") is not None:
            raise InputError(f"{where} sets both 'api_only: true' and a repo; keep one of them")
        return MappingEntry(label, None, True, note)
    if "repo" not in value:
        raise InputError(f"{where} needs 'repo: owner/name', 'repo: null' (no Hub repo) or 'api_only: true'")
    repo = value["repo"]
    if repo is not None and (not isinstance(repo, str) or not REPO_ID.match(repo)):
        raise InputError(f"{where}: 'repo' must be a Hub id like 'meta-llama/Llama-3.1-8B' or null (got {repo!r})")
    return MappingEntry(label, repo, False, note)


# --------------------------------------------------------------------------- name features

_SEP = re.compile(r"[^a-z0-9.]+")
_QUANT = re.compile(
    r"(?<![a-z0-9])(gguf|ggml|awq|gptq|bnb|exl2|hqq|mlx|nf4|int[248]|fp[48]|fp16|bf16|w4a16|w8a8|onnx|openvino"
    r"|[248]-?bits?|i?q[1-8](?:-k)?(?:-[a-z0-9]{1,2})?)(?![a-z0-9])"
)
_SIZE = re.compile(r"(?<![a-z0-9.])((?:\d+x)?\d+(?:\.\d+)?[bmkt]|a\d+(?:\.\d+)?b)(?![a-z0-9])")
_CHECKPOINT = re.compile(
    r"(?<![a-z0-9.])((?:step|checkpoint|ckpt|iter|epoch|ep)-?\d+|\d{4}-\d{2}(?:-\d{2})?|\d{4}|\d{6,8})(?![a-z0-9.])"
)
_WORD = re.compile(r"[a-z]+|\d+(?:\.\d+)*")
ROLE_WORDS = frozenset({"instruct", "inst", "chat", "it", "rlhf", "thinking", "reasoning"})
#: "base"/"pt" name the default (pretrained) model: the same role as no role word at all
BASE_WORDS = frozenset({"base", "pt"})
TUNE_WORDS = frozenset(
    {
        "sft",
        "dpo",
        "orpo",
        "kto",
        "grpo",
        "ppo",
        "lora",
        "qlora",
        "ft",
        "finetune",
        "finetuned",
        "tuned",
        "merged",
        "merge",
        "abliterated",
        "uncensored",
        "distill",
        "distilled",
        "preview",
        "beta",
        "alpha",
        "rc",
        "exp",
        "experimental",
        "pruned",
        "slerp",
        "ties",
        "dare",
    }
)
NEUTRAL_WORDS = frozenset({"hf", "v"})


@attrs.frozen
class NameFeatures:
    """What a model name says about the variant: the parts a near miss differs in.

    ``words`` are the remaining name words (the family, e.g. ``llama``); a candidate may
    add words (``meta-``) but must keep every word of the label to be the same model.
    """

    sizes: frozenset[str]
    versions: tuple[str, ...]
    roles: frozenset[str]
    quants: frozenset[str]
    suffixes: frozenset[str]
    words: frozenset[str]


def normalize(name: str) -> str:
    """The part after '/', lower case, with every run of other characters than letters, digits and '.'
    read as one hyphen: "Llama 3.1 8B (Instruct)" and "Llama_3.1-8B-Instruct" both give "llama-3.1-8b-instruct"."""
    return _SEP.sub("-", name.rsplit("/", 1)[-1].lower()).strip("-")


def features(name: str) -> NameFeatures:
    text = normalize(name)
    found: dict[str, set[str]] = {"quant": set(), "size": set(), "suffix": set()}
    for key, pattern in (("quant", _QUANT), ("size", _SIZE), ("suffix", _CHECKPOINT)):
        found[key].update(m.group(1).replace("-", "") for m in pattern.finditer(text))
        text = pattern.sub("-", text)
    versions, roles, suffixes, words = [], set(), set(found["suffix"]), set()
    for token in _WORD.findall(text):
        if token[0].isdigit():
            versions.append(token)
        elif token in ROLE_WORDS:
            roles.add(token)
        elif token in TUNE_WORDS:
            suffixes.add(token)
        elif token not in NEUTRAL_WORDS | BASE_WORDS:
            words.add(token)
    return NameFeatures(
        frozenset(found["size"]),
        tuple(sorted(versions)),
        frozenset(roles),
        frozenset(found["quant"]),
        frozenset(suffixes),
        frozenset(words),
    )


def _show(values: Iterable[str]) -> str:
    return "+".join(sorted(values)) or "none"


def variant_differences(label: str, candidate: str) -> tuple[str, ...]:
    """Why ``candidate`` is a different variant than ``label`` names (empty: same variant)."""
    a, b = features(label), features(candidate)
    out = []
    if not a.words <= b.words:
        out.append(f"name {_show(a.words - b.words)} missing from {_show(b.words)}")
    if a.sizes != b.sizes:
        out.append(f"size {_show(a.sizes)} vs {_show(b.sizes)}")
    if a.versions != b.versions:
        out.append(f"version {_show(a.versions)} vs {_show(b.versions)}")
    if a.roles != b.roles:
        out.append(f"base vs instruct/chat: {_show(a.roles)} vs {_show(b.roles)}")
    if a.quants != b.quants:
        out.append(f"quantization/format {_show(a.quants)} vs {_show(b.quants)}")
    if a.suffixes != b.suffixes:
        out.append(f"fine-tune or checkpoint suffix {_show(a.suffixes)} vs {_show(b.suffixes)}")
    return tuple(out)


# --------------------------------------------------------------------------- API-only systems

#: the label says it: "Acme-GPT (API)", "Nimbus [api]", "Foo API"
_API_MARK = re.compile(r"[(\[]\s*(?:api|api[- ]only|proprietary|closed(?:[- ]source)?)\s*[)\]]|\bAPI\b", re.I)
_API_GROUP = re.compile(r"\b(?:api|proprietary|closed|commercial)\b", re.I)
_GROUP = re.compile(r"in the group '((?:[^'\\]|\\.)*)' of the table")
#: model families published only behind an API (their open-weight siblings are other names: gpt-oss, Gemma)
CLOSED_FAMILIES = re.compile(
    r"^(?:gpt-?(?:4o|4\.1|4\.5|3\.5|4|5)(?![0-9])|chatgpt|o[134](?:-|$)|claude|gemini|palm(?:-?2)?(?:-|$)|bard)"
)


def api_only_evidence(label: str, qualifiers: Iterable[str] = ()) -> str | None:
    """Why ``label`` is an API-only system, or None: an (API) marker, an API group in the source
    table (from the ledger's ``qualifiers``), or a known closed model family."""
    mark = _API_MARK.search(label)
    if mark:
        return f"the label carries the marker {mark.group(0).strip()!r}"
    for text in qualifiers:
        for group in _GROUP.findall(text or ""):
            if _API_GROUP.search(group):
                return f"the source lists it under the group {group!r}"
    family = CLOSED_FAMILIES.match(normalize(label))
    if family:
        return f"{label!r} belongs to a model family published only behind an API ({family.group(0).rstrip('-')})"
    return None


# --------------------------------------------------------------------------- resolution


def resolve(
    hub,
    source_label: str,
    candidates: Iterable[str] = (),
    *,
    api_only: bool | str = False,
    mapped: MappingEntry | None = None,
    search_limit: int = SEARCH_LIMIT,
) -> Resolution:
    """Classify ``source_label`` against the Hub (see the module docstring).

    ``mapped`` is the label's mapping-file entry: its repo is a reviewed decision and is
    taken as named; ``candidates`` (e.g. repo links printed next to the label) must also
    agree with the label's variant. ``api_only`` is True or the evidence that the system is
    API-only (see :func:`api_only_evidence`); a mapping entry with a repo overrides it.
    ``hub`` is a :class:`~hfmigrate_checks.hub.client.ReadOnlyHub`.
    """
    label = source_label.strip()
    preset = _preset(source_label, api_only, mapped)
    if preset is not None:
        return preset
    lookups = _Lookups(hub, source_label)
    if mapped is not None:
        return lookups.by_mapping(mapped.repo)
    explicit = list(dict.fromkeys([*candidates, *([label] if REPO_ID.match(label) else [])]))
    named = lookups.by_name(explicit)
    if named is not None:
        return named
    return _by_search(hub, label, search_limit, lookups.checked, lookups.conflicts, lookups.result)


def _preset(source_label: str, api_only: bool | str, mapped: MappingEntry | None) -> Resolution | None:
    """The outcome the mapping file or the API-only evidence settles without asking the Hub, or None."""

    def result(status: str, evidence: str) -> Resolution:
        return Resolution(source_label, status, None, None, evidence)

    if mapped is not None and mapped.api_only:
        return result(
            "not_applicable", "API-only system (the mapping file marks it api_only): no Hub model repo to draft for"
        )
    if api_only and (mapped is None or mapped.repo is None):
        origin = api_only if isinstance(api_only, str) else "flagged api_only"
        return result(
            "not_applicable",
            f"API-only system ({origin}): no Hub model repo to draft for; a mapping entry with a repo overrides this",
        )
    if mapped is not None and mapped.repo is None:
        return result("not_on_hub", "the mapping file says this model has no Hub repo (repo: null)")
    return None


class _Lookups:
    """The ``model_info`` lookups for one label: what each found (``checked``), which reads failed, and
    the named repos that exist but are not the label's model (``conflicts``)."""

    def __init__(self, hub, source_label: str):
        self.hub = hub
        self.source_label = source_label
        self.label = source_label.strip()
        self.checked: list[str] = []
        self.failures: list[str] = []
        self.conflicts: list[str] = []

    def result(self, status: str, evidence: str, repo_id=None, sha=None, checked=()) -> Resolution:
        return Resolution(self.source_label, status, repo_id, sha, evidence, tuple(checked))

    def lookup(self, repo_id: str):
        """``("found", info)``, ``("moved", info)`` when the Hub answers under another id, or None."""
        try:
            info = self.hub.model_info(repo_id)
        except HubNotFound:
            self.checked.append(f"{repo_id} (not found)")
            return None
        except HubReadError as exc:
            self.checked.append(f"{repo_id} (read failed: {exc.reason})")
            self.failures.append(f"{repo_id}: {exc.reason}")
            return None
        if info.repo_id.lower() != repo_id.lower():
            self.checked.append(f"{repo_id} (the Hub answers with {info.repo_id}: renamed or moved)")
            return "moved", info
        return "found", info

    def by_mapping(self, repo: str) -> Resolution:
        """The mapping file's repo, taken as named when the Hub has it under that id."""
        found, checked = self.lookup(repo), self.checked
        if found and found[0] == "found":
            info = found[1]
            checked.append(f"{info.repo_id} (exists, sha {info.sha})")
            return self.result(
                "exact",
                f"mapping file names {info.repo_id}; model_info found it at sha {info.sha}",
                info.repo_id,
                info.sha,
                checked,
            )
        if self.failures:
            return self.result(
                "needs_review", f"could not read {repo} named by the mapping file: {self.failures[0]}", checked=checked
            )
        if found:
            return self.result(
                "mismatch",
                f"the mapping file names {repo}, but the Hub now calls it "
                f"{found[1].repo_id}; confirm and update the mapping",
                checked=checked,
            )
        return self.result(
            "not_on_hub",
            f"the mapping file names {repo}, which the Hub does not have "
            "(deleted, private or misspelt); fix the mapping",
            checked=checked,
        )

    def by_name(self, explicit: list[str]) -> Resolution | None:
        """The outcome from the explicitly named repos, or None when a search must decide."""
        exact = [info for info in map(self._named, explicit) if info is not None]
        if self.failures:
            return self.result("needs_review", "Hub reads failed: " + "; ".join(self.failures), checked=self.checked)
        if len(exact) == 1:
            info = exact[0]
            return self.result(
                "exact",
                f"{info.repo_id} exists (model_info sha {info.sha}) and is named as the label names it",
                info.repo_id,
                info.sha,
                self.checked,
            )
        if len(exact) > 1:
            names = ", ".join(i.repo_id for i in exact)
            return self.result("ambiguous", f"several named candidates exist: {names}", checked=self.checked)
        return None

    def _named(self, repo_id: str):
        """The repo's info when it exists and is the label's model; a conflict otherwise."""
        found = self.lookup(repo_id)
        if not found:
            return None
        kind, info = found
        differences = variant_differences(self.label, info.repo_id)
        if kind == "moved":
            self.conflicts.append(f"{repo_id} now answers as {info.repo_id}")
        elif differences:
            self.checked.append(f"{info.repo_id} (exists, but differs: {'; '.join(differences)})")
            self.conflicts.append(f"{info.repo_id} differs from the label: {'; '.join(differences)}")
        else:
            self.checked.append(f"{info.repo_id} (exists, sha {info.sha})")
            return info
        return None


def _base_word(part: str) -> bool:
    """Whether a label word names the model rather than its role, quantization or fine-tune."""
    return part not in ROLE_WORDS | BASE_WORDS and not _QUANT.fullmatch(part)


def search_queries(label: str) -> list[str]:
    """The Hub searches for ``label``: its full name, then its base name (no role, quantization or
    fine-tune words: ``Kestrel-9B-Instruct`` -> ``kestrel-9b``), then its family (name words only:
    ``kestrel``), so a near miss is found and named as one instead of "nothing is named like it"."""
    full = normalize(label)
    parts = [p for p in full.split("-") if p]
    base = "-".join(p for p in parts if _base_word(p))
    family = "-".join(p for p in parts if p in features(label).words)
    # a near-miss query must keep a name word of 3+ letters: "7b" or "pi" alone would list half the Hub
    near = [q for q in (base, family) if q != full and re.search(r"[a-z]{3}", q)]
    return list(dict.fromkeys([full, *near]))


def _by_search(hub, label: str, limit: int, checked: list[str], conflicts: list[str], result) -> Resolution:
    """The outcome from the Hub's search (see :func:`search_queries`), when no named repo decided."""
    hits, failed = _search(hub, label, limit, checked)
    if failed:
        return result("needs_review", failed, checked=checked)
    equal, plausible, near = _sort_hits(label, hits)
    checked.extend(near[:_SHOWN])
    if len(equal) == 1 and not conflicts and not plausible:
        return _confirmed(hub, equal[0], checked, result)
    if equal or plausible:
        names = ", ".join([*equal, *plausible][:_SHOWN])
        why = f"{len(equal) + len(plausible)} plausible repos ({names})"
        if conflicts:
            why += "; the source also points at " + "; ".join(conflicts)
        return result("ambiguous", why + "; name the right one in the mapping file", checked=checked)
    if conflicts or near:
        reasons = [*conflicts, *near][:_SHOWN]
        return result("mismatch", "only other variants exist: " + "; ".join(reasons), checked=checked)
    searched = ", ".join(map(repr, search_queries(label)))
    return result(
        "not_on_hub",
        f"no Hub model is named like {label!r}, nor like its base name or family (searched {searched})",
        checked=checked,
    )


def _confirmed(hub, repo_id: str, checked: list[str], result) -> Resolution:
    """``exact`` for the one search hit named like the label, once ``model_info`` gives its sha."""
    try:
        info = hub.model_info(repo_id)
    except (HubReadError, HubNotFound) as exc:
        return result("needs_review", f"search found {repo_id} but model_info failed: {exc}", checked=checked)
    checked.append(f"{info.repo_id} (exists, sha {info.sha})")
    return result(
        "exact",
        f"the only search hit named exactly like the label: {info.repo_id} (sha {info.sha})",
        info.repo_id,
        info.sha,
        checked,
    )


def _search(hub, label: str, limit: int, checked: list[str]) -> tuple[list[str], str]:
    """Every repo the label's searches hit, in order (the near-miss searches only when the full name is not
    among the first hits), and why a search failed ("" when none did)."""
    query = normalize(label)
    hits: list[str] = []
    for n, text in enumerate(search_queries(label)):
        try:
            found = hub.search_models(text, limit=limit)
        except (HubReadError, HubNotFound) as exc:
            checked.append(f"search {text!r} (failed)")
            return hits, f"the Hub search for {text!r} failed: {exc}"
        checked.append(
            f"search {text!r} ({len(found)} hit{'s' * (len(found) != 1)}"
            f"{', limit reached' if len(found) >= limit else ''})"
        )
        hits += [hit for hit in found if hit not in hits]
        if n == 0 and any(normalize(hit) == query for hit in found):
            break  # the full name was found: no near-miss search needed
    return hits, ""


def _sort_hits(label: str, hits: list[str]) -> tuple[list[str], list[str], list[str]]:
    """The hits named exactly like the label (same owner when it names one), the plausible ones (no
    difference found), and the near misses with what differs."""
    query = normalize(label)
    owner = label.split("/", 1)[0].lower() if REPO_ID.match(label) else None
    equal, plausible, near = [], [], []
    label_words = features(label).words
    for hit in hits:
        if not label_words <= features(hit).words:
            continue  # the search matched a substring of another family's name (eta in theta)
        differences = variant_differences(label, hit)
        if normalize(hit) == query and (owner is None or hit.split("/", 1)[0].lower() == owner):
            equal.append(hit)
        elif normalize(hit) == query:
            near.append(f"{hit} (same name, another owner: a mirror or re-upload)")
        elif differences:
            near.append(f"{hit} ({'; '.join(differences)})")
        else:
            plausible.append(hit)
    return equal, plausible, near
