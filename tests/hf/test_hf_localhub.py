"""The local Hub server: routes, errors, pagination, faults, and the real client and CLI against it."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest
from tests.support.hf_fixtures import write_small_hub
from huggingface_hub import HfApi

from hfmigrate_checks.testing import Fault, LocalHub, set_whoami, write_model


def _get(url: str, method: str = "GET", headers: dict | None = None, data: bytes | None = None):
    req = urllib.request.Request(url, method=method, headers=headers or {}, data=data)
    try:
        with urllib.request.urlopen(req, timeout=5) as resp:
            return resp.status, dict(resp.headers), resp.read()
    except urllib.error.HTTPError as err:
        return err.code, dict(err.headers), err.read()


def _all_pages(url: str) -> list:
    items = []
    while url:
        _, headers, body = _get(url)
        items += json.loads(body)
        url = headers["Link"].split(">", 1)[0].lstrip("<") if "Link" in headers else None
    return items


@pytest.fixture(scope="module")
def root(tmp_path_factory) -> Path:
    return write_small_hub(tmp_path_factory.mktemp("localhub"))


@pytest.fixture
def hub(root):
    with LocalHub(root, page_size=3) as hub:
        yield hub


def test_binds_loopback_on_a_free_port_and_closes_it_on_exit(root):
    with LocalHub(root) as hub:
        assert hub.endpoint.startswith("http://127.0.0.1:")
        port = int(hub.endpoint.rsplit(":", 1)[1])
        assert _get(hub.endpoint + "/api/models/org/model")[0] == 200
    with pytest.raises(OSError):
        socket.create_connection(("127.0.0.1", port), timeout=1).close()
    with pytest.raises(RuntimeError, match="not running"):
        hub.endpoint  # noqa: B018


def test_model_info_with_revision_expand_and_pr_ref(hub):
    status, headers, body = _get(hub.endpoint + "/api/models/org/model")
    info = json.loads(body)
    assert status == 200 and info["id"] == "org/model" and len(info["sha"]) == 40
    assert {s["rfilename"] for s in info["siblings"]} == {"README.md", ".eval_results/a.yaml", "sub/deep/f.txt"}
    _, _, body = _get(hub.endpoint + "/api/models/org/model?expand=sha")
    assert set(json.loads(body)) == {"_id", "id", "sha"}
    _, _, body = _get(hub.endpoint + "/api/models/org/model/revision/refs%2Fpr%2F2")
    pr_info = json.loads(body)
    assert pr_info["sha"] != info["sha"] and ".eval_results/b.yaml" in {s["rfilename"] for s in pr_info["siblings"]}
    status, headers, _ = _get(hub.endpoint + "/api/models/org/model/revision/nope")
    assert status == 404 and headers["X-Error-Code"] == "RevisionNotFound"


def _error_codes(url: str) -> list[tuple[int, str]]:
    """(status, X-Error-Code) anonymously and then with a bearer token."""
    answers = [_get(url), _get(url, headers={"Authorization": "Bearer t"})]
    return [(status, headers.get("X-Error-Code")) for status, headers, _ in answers]


def test_missing_repo_is_401_anonymous_and_404_with_a_token(hub):
    assert _error_codes(hub.endpoint + "/api/models/org/missing") == [(401, "RepoNotFound"), (404, "RepoNotFound")]


def test_tree_decodes_encoded_and_raw_pr_refs_and_reports_missing_entries(hub):
    _, _, body = _get(hub.endpoint + "/api/models/org/model/tree/refs%2Fpr%2F3/.eval_results")
    assert [e["path"] for e in json.loads(body)] == [".eval_results/a.yaml", ".eval_results/b.yaml"]
    _, _, body = _get(hub.endpoint + "/api/models/org/model/tree/refs/pr/3/.eval_results")
    assert [e["path"] for e in json.loads(body)] == [".eval_results/a.yaml", ".eval_results/b.yaml"]
    _, _, body = _get(hub.endpoint + "/api/models/org/model/tree/main")
    assert {(e["type"], e["path"]) for e in json.loads(body)} == {
        ("file", "README.md"),
        ("directory", ".eval_results"),
        ("directory", "sub"),
    }
    everything = _all_pages(hub.endpoint + "/api/models/org/model/tree/main?recursive=true")
    assert {e["path"] for e in everything} == {
        "README.md",
        ".eval_results",
        ".eval_results/a.yaml",
        "sub",
        "sub/deep",
        "sub/deep/f.txt",
    }
    status, headers, _ = _get(hub.endpoint + "/api/models/org/model/tree/main/.nothing")
    assert (status, headers["X-Error-Code"]) == (404, "EntryNotFound")


def test_resolve_headers_head_and_errors(hub):
    status, headers, body = _get(hub.endpoint + "/org/model/resolve/main/README.md")
    assert status == 200 and body == b"hello\n"
    assert len(headers["X-Repo-Commit"]) == 40 and headers["ETag"].startswith('"') and headers["Content-Length"] == "6"
    status, headers, body = _get(hub.endpoint + "/org/model/resolve/main/README.md", method="HEAD")
    assert status == 200 and body == b"" and headers["Content-Length"] == "6"
    status, headers, _ = _get(hub.endpoint + "/org/model/resolve/main/nope.txt")
    assert (status, headers["X-Error-Code"]) == (404, "EntryNotFound") and "X-Repo-Commit" in headers
    assert _get(hub.endpoint + "/datasets/bench/official/resolve/main/eval.yaml")[2] == b"tasks: [{id: t}]\n"
    assert _error_codes(hub.endpoint + "/org/gated/resolve/main/w.txt") == [(401, "GatedRepo"), (403, "GatedRepo")]


def test_model_search_honours_limit_and_links_the_next_page(hub):
    status, headers, body = _get(hub.endpoint + "/api/models?search=item&limit=2")
    assert [m["id"] for m in json.loads(body)] == ["many/item-0", "many/item-1"]
    assert 'rel="next"' in headers["Link"] and "cursor=2" in headers["Link"] and "search=item" in headers["Link"]
    url = headers["Link"].split(">", 1)[0].lstrip("<")
    _, _, body = _get(url)
    assert [m["id"] for m in json.loads(body)] == ["many/item-2", "many/item-3"]
    _, headers, body = _get(hub.endpoint + "/api/models?search=item-6")
    assert [m["id"] for m in json.loads(body)] == ["many/item-6"] and "Link" not in headers


def test_discussion_pages_and_filters(hub):
    def page(query):
        return json.loads(_get(hub.endpoint + "/api/models/org/model/discussions?" + query)[2])

    first = page("type=pull_request&status=all&p=0")
    assert (first["count"], first["start"], [d["num"] for d in first["discussions"]]) == (7, 0, [7, 6, 5])
    assert [d["num"] for d in page("type=pull_request&p=2")["discussions"]] == [1]
    assert [d["num"] for d in page("type=pull_request&status=open")["discussions"]] == [4]  # drafts left out
    assert page("type=pull_request&status=closed")["count"] == 4  # closed and merged
    assert page("type=discussion")["count"] == 1 and page("author=u3")["count"] == 1


def test_discussion_details_carry_a_unified_diff(hub):
    details = json.loads(_get(hub.endpoint + "/api/models/org/model/discussions/2?diff=1")[2])
    assert details["isPullRequest"] and details["changes"]["base"] == "refs/heads/main"
    assert "+++ b/.eval_results/b.yaml" in details["diff"] and "+- pr: 2" in details["diff"]
    assert "diff" not in json.loads(_get(hub.endpoint + "/api/models/org/model/discussions/2")[2])
    assert _get(hub.endpoint + "/api/models/org/model/discussions/99")[0] == 404


def test_whoami_datasets_and_agent_harnesses(hub):
    assert _get(hub.endpoint + "/api/whoami-v2")[0] == 401
    who = json.loads(_get(hub.endpoint + "/api/whoami-v2", headers={"Authorization": "Bearer x"})[2])
    assert who["name"] == "alice" and [o["name"] for o in who["orgs"]] == ["acme"]
    listed = json.loads(_get(hub.endpoint + "/api/datasets?filter=benchmark:official")[2])
    assert [d["id"] for d in listed] == ["bench/official"]
    info = json.loads(_get(hub.endpoint + "/api/datasets/bench/official")[2])
    assert "benchmark:official" in info["tags"] and info["siblings"] == [{"rfilename": "eval.yaml"}]
    assert _get(hub.endpoint + "/api/agent-harnesses")[0] == 200


def test_a_token_set_by_the_fixture_is_enforced(tmp_path):
    set_whoami(tmp_path, "bob", token="right")
    write_model(tmp_path, "o/m", {"a": "b"})
    with LocalHub(tmp_path) as hub:
        assert _get(hub.endpoint + "/api/whoami-v2", headers={"Authorization": "Bearer right"})[0] == 200
        status, headers, _ = _get(hub.endpoint + "/api/models/o/m", headers={"Authorization": "Bearer wrong"})
        assert status == 401 and "Invalid credentials" in headers["X-Error-Message"]


@pytest.mark.parametrize("method", ["POST", "PUT", "DELETE", "PATCH", "OPTIONS"])
def test_every_write_method_is_refused_and_recorded(hub, method):
    status, _, _ = _get(hub.endpoint + "/api/models/org/model/discussions", method=method, data=b"{}")
    assert status == 405
    assert [(r.method, r.status) for r in hub.write_requests()] == [(method, 405)]
    assert _get(hub.endpoint + "/api/models/org/model")[0] == 200  # the server keeps serving


def test_requests_are_recorded_with_raw_path_and_query(hub):
    _get(hub.endpoint + "/api/models/org/model/tree/refs%2Fpr%2F3/.eval_results?recursive=false")
    last = hub.requests[-1]
    assert (last.method, last.path, last.query, last.status) == (
        "GET",
        "/api/models/org/model/tree/refs%2Fpr%2F3/.eval_results",
        {"recursive": ["false"]},
        200,
    )
    hub.clear_requests()
    assert hub.requests == []


def test_faults_fail_the_first_n_matching_requests_then_recover(root):
    faults = [Fault("/discussions$", status=503, times=2, retry_after=3), Fault("^/api/models/org/model$", status=429)]
    with LocalHub(root, faults=faults) as hub:
        statuses = [_get(hub.endpoint + "/api/models/org/model/discussions")[0] for _ in range(3)]
        assert statuses == [503, 503, 200]
        assert _get(hub.endpoint + "/api/models/org/model/discussions")[1].get("Retry-After") is None
        assert [_get(hub.endpoint + "/api/models/org/model")[0] for _ in range(2)] == [429, 200]
        hub.add_fault(Fault("discussions", status=500, times=None))
        assert {_get(hub.endpoint + "/api/models/org/model/discussions")[0] for _ in range(3)} == {500}
        hub.clear_faults()
        assert _get(hub.endpoint + "/api/models/org/model/discussions")[0] == 200


def test_truncated_bodies_keep_a_consistent_length(root):
    with LocalHub(root, faults=[Fault("^/api/models/org/model$", truncate=True)]) as hub:
        status, headers, body = _get(hub.endpoint + "/api/models/org/model")
        assert status == 200 and int(headers["Content-Length"]) == len(body)
        with pytest.raises(json.JSONDecodeError):
            json.loads(body)
        assert json.loads(_get(hub.endpoint + "/api/models/org/model")[2])["id"] == "org/model"


def test_latency_and_fault_delays_slow_requests_down(root):
    with LocalHub(root, latency=0.05, faults=[Fault("README", status=0, delay=0.2)]) as hub:
        start = time.monotonic()
        _get(hub.endpoint + "/api/models/org/model")
        middle = time.monotonic()
        assert _get(hub.endpoint + "/org/model/resolve/main/README.md")[0] == 200
        end = time.monotonic()
    assert middle - start >= 0.05 and end - middle >= 0.25


def test_global_rate_limit_answers_429_with_retry_after(root):
    with LocalHub(root, rate_limit=2.0, burst=2) as hub:
        statuses = [_get(hub.endpoint + "/api/models/org/model") for _ in range(4)]
    assert [s for s, _, _ in statuses][:2] == [200, 200]
    limited = [h for s, h, _ in statuses if s == 429]
    assert limited and all(int(h["Retry-After"]) >= 1 for h in limited)


def test_fixture_can_change_while_the_hub_runs(tmp_path):
    write_model(tmp_path, "o/m", {"a.txt": "one"})
    with LocalHub(tmp_path) as hub:
        first = json.loads(_get(hub.endpoint + "/api/models/o/m")[2])["sha"]
        write_model(tmp_path, "o/m", {"a.txt": "two"})
        assert json.loads(_get(hub.endpoint + "/api/models/o/m")[2])["sha"] != first
        assert _get(hub.endpoint + "/o/m/resolve/main/a.txt")[2] == b"two"


def test_fixture_writers_reject_bad_input(tmp_path):
    with pytest.raises(ValueError, match="owner/name"):
        write_model(tmp_path, "no-owner", {})
    with pytest.raises(ValueError, match="PR status"):
        write_model(tmp_path, "o/m", {}, prs=[{"num": 1, "status": "pending"}])


def test_real_client_reads_everything_it_needs(hub):

    api = HfApi(endpoint=hub.endpoint, token=False)
    assert api.model_info("org/model").sha
    assert [f.path for f in api.list_repo_tree("org/model", ".eval_results", revision="refs/pr/2")] == [
        ".eval_results/a.yaml",
        ".eval_results/b.yaml",
    ]
    prs = list(api.get_repo_discussions("org/model", discussion_type="pull_request", discussion_status="all"))
    assert sorted(p.num for p in prs) == list(range(1, 8))
    assert [m.id for m in api.list_models(search="item", limit=5)] == [f"many/item-{n}" for n in range(5)]
    assert hub.write_requests() == []
    assert any(r.path == "/api/models/org/model/tree/refs%2Fpr%2F2/.eval_results" for r in hub.requests)


def test_hf_cli_reads_model_info_as_json(hub, tmp_path):
    hf = Path(sys.executable).with_name("hf")
    env = {
        **os.environ,
        "HF_ENDPOINT": hub.endpoint,
        "HF_HOME": str(tmp_path / "hf-home"),
        "HF_HUB_DISABLE_UPDATE_CHECK": "1",
        "HF_HUB_DISABLE_TELEMETRY": "1",
    }
    env.pop("HF_TOKEN", None)
    done, missing = (
        subprocess.run(
            [str(hf), "models", "info", repo, "--format", "json"], env=env, capture_output=True, text=True, timeout=60
        )
        for repo in ("org/model", "org/missing")
    )
    assert done.returncode == 0, done.stderr
    info = json.loads(done.stdout)
    assert info["id"] == "org/model" and len(info["sha"]) == 40
    assert missing.returncode == 1 and "not found" in (missing.stdout + missing.stderr).lower()
    assert hub.write_requests() == []
