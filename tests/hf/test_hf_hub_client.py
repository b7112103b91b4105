"""ReadOnlyHub against the local Hub: what it reads, how it fails, and that it cannot write."""

from __future__ import annotations

import re
import tempfile
import time
from pathlib import Path

import huggingface_hub
import pytest
from tests.support.hf_fixtures import write_small_hub
from huggingface_hub import HfApi
from huggingface_hub.utils import get_session

from hfmigrate_checks.hub import retry
from hfmigrate_checks.hub.client import HubGatedError, HubNotFound, HubReadError, ReadOnlyHub
from hfmigrate_checks.testing import Fault, LocalHub, set_whoami, write_model


@pytest.fixture(scope="module")
def root(tmp_path_factory) -> Path:
    root = write_small_hub(tmp_path_factory.mktemp("hubclient"), prs=11)
    write_model(root, "org/big", {".eval_results/big.yaml": "#" * (2 << 20), "latin1.txt": b"caf\xe9"})
    return root


@pytest.fixture
def local(root):
    with LocalHub(root, page_size=3) as hub:
        yield hub
        assert hub.write_requests() == [], "a read-only client sent a write request"


@pytest.fixture
def hub(local):
    with ReadOnlyHub(local.endpoint, backoff=0.01, retries=3) as hub:
        yield hub


def test_has_no_write_methods_and_does_not_subclass_hfapi():

    assert not issubclass(ReadOnlyHub, HfApi)
    forbidden = [
        "upload_file",
        "upload_folder",
        "create_commit",
        "create_pull_request",
        "create_discussion",
        "comment_discussion",
        "merge_pull_request",
        "change_discussion_status",
        "create_repo",
        "create_branch",
        "create_tag",
        "update_repo_settings",
        "hf_hub_download",
        "list_repo_tree",
    ]
    forbidden += [name for name in dir(HfApi) if name.startswith(("delete_", "upload_", "create_", "update_"))]
    hub = ReadOnlyHub("http://127.0.0.1:9")
    try:
        present = [name for name in forbidden if hasattr(hub, name)]
        assert present == []
        public = {name for name in dir(hub) if not name.startswith("_")}
        assert public <= {
            "model_info",
            "dataset_info",
            "search_models",
            "official_benchmarks",
            "list_files",
            "read_file",
            "pull_requests",
            "pr_details",
            "whoami",
            "close",
            "from_env",
            "endpoint",
            "policy",
            "max_file_bytes",
        }
    finally:
        hub.close()


def test_reads_models_datasets_and_search(hub):
    info = hub.model_info("org/model")
    assert info.repo_id == "org/model" and len(info.sha) == 40 and "sub/deep/f.txt" in info.files and not info.gated
    assert hub.model_info("org/model", revision="refs/pr/2").sha != info.sha
    assert hub.dataset_info("bench/official").tags == ("benchmark:official",)
    assert hub.official_benchmarks() == ("bench/official",)
    assert hub.search_models("item", limit=5) == tuple(f"many/item-{n}" for n in range(5))  # beyond a page of 3
    assert hub.search_models("nothing-like-this") == ()


def test_lists_and_reads_files_on_main_and_on_pr_refs(hub, local):
    assert [f.path for f in hub.list_files("org/model")] == [".eval_results/a.yaml"]
    on_pr = hub.list_files("org/model", revision="refs/pr/3")
    assert [(f.path, f.size) for f in on_pr] == [(".eval_results/a.yaml", 7), (".eval_results/b.yaml", 8)]
    assert hub.list_files("org/model", path="no-such-folder") == ()
    assert hub.read_file("org/model", ".eval_results/b.yaml", revision="refs/pr/3") == "- pr: 3\n"
    assert hub.read_file("bench/official", "eval.yaml", repo_type="dataset") == "tasks: [{id: t}]\n"
    paths = {r.path for r in local.requests}
    assert "/api/models/org/model/tree/refs%2Fpr%2F3/.eval_results" in paths
    assert "/org/model/resolve/refs%2Fpr%2F3/.eval_results/b.yaml" in paths


def test_pull_requests_cover_every_status_and_page(hub, local):
    prs = hub.pull_requests("org/model")
    assert sorted(p.num for p in prs) == list(range(1, 12))
    assert {p.num for p in prs if p.pending} == {n for n in range(1, 12) if n % 4 in (0, 1)}
    assert {p.status for p in prs} == {"open", "draft", "closed", "merged"}
    assert all(p.git_reference == f"refs/pr/{p.num}" for p in prs)
    pages = [r.query["p"] for r in local.requests if r.path.endswith("/discussions")]
    assert pages == [["0"], ["1"], ["2"], ["3"]]
    assert all(r.query["status"] == ["all"] for r in local.requests if r.path.endswith("/discussions"))
    details = hub.pr_details("org/model", 5)
    assert details.num == 5 and details.status == "draft" and "+- pr: 5" in details.diff


def test_whoami_without_a_token_sends_nothing(hub, local):
    assert hub.whoami() is None
    assert not any(r.path == "/api/whoami-v2" for r in local.requests)


def test_whoami_with_a_token_is_asked_once(local):
    with ReadOnlyHub(local.endpoint, "secret-token") as hub:
        first, second = hub.whoami(), hub.whoami()
    assert first == second and (first.name, first.orgs, first.token_role) == ("alice", ("acme",), "read")
    assert sum(r.path == "/api/whoami-v2" for r in local.requests) == 1
    assert "secret-token" not in repr(hub)


def test_no_token_is_taken_from_the_environment(local, monkeypatch, tmp_path):
    monkeypatch.setenv("HF_TOKEN", "leaked-token")
    monkeypatch.setenv("HF_HOME", str(tmp_path))
    with ReadOnlyHub(local.endpoint) as hub:
        hub.model_info("org/model")
        hub.read_file("org/model", "README.md")
        hub.pull_requests("org/model")
    assert local.requests and not any(r.authorized for r in local.requests)


def test_from_env_reads_endpoint_and_token_at_call_time(local, monkeypatch):
    monkeypatch.setenv("HF_ENDPOINT", local.endpoint)
    monkeypatch.setenv("HF_TOKEN", "t")
    with ReadOnlyHub.from_env() as hub:
        assert hub.endpoint == local.endpoint and hub.whoami().name == "alice"


def test_not_found_is_distinct_from_a_failed_read(hub):
    with pytest.raises(HubNotFound) as repo:
        hub.model_info("org/missing")
    assert repo.value.kind == "repo" and not isinstance(repo.value, HubReadError)
    with pytest.raises(HubNotFound) as entry:
        hub.read_file("org/model", "nope.txt")
    assert entry.value.kind == "entry"
    with pytest.raises(HubNotFound) as revision:
        hub.list_files("org/model", revision="refs/pr/99")
    assert revision.value.kind == "revision"
    with pytest.raises(HubNotFound) as discussion:
        hub.pr_details("org/model", 99)
    assert discussion.value.kind == "discussion"


def test_a_bare_404_from_something_that_is_not_a_hub_is_a_read_error(local):
    with ReadOnlyHub(local.endpoint + "/not-a-hub", backoff=0.01) as hub:
        with pytest.raises(HubReadError, match="HTTP 404"):
            hub.model_info("org/model")


def test_a_rejected_token_is_a_read_error_not_a_missing_repo(tmp_path):
    write_model(tmp_path, "o/m", {"a.txt": "x"})
    set_whoami(tmp_path, "bob", token="good")
    with LocalHub(tmp_path) as local, ReadOnlyHub(local.endpoint, "bad", backoff=0.01) as hub:
        for call in (
            lambda: hub.model_info("o/m"),
            lambda: hub.model_info("o/none"),
            hub.whoami,
            lambda: hub.read_file("o/m", "a.txt"),
            lambda: hub.pull_requests("o/m"),
        ):
            with pytest.raises(HubReadError, match="Invalid credentials"):
                call()


def test_gated_files_raise_a_read_error_without_retrying(hub, local):
    assert hub.model_info("org/gated").gated == "manual"
    with pytest.raises(HubGatedError) as caught:
        hub.read_file("org/gated", "w.txt")
    assert isinstance(caught.value, HubReadError) and "gated" in str(caught.value)
    assert sum(r.path.startswith("/org/gated/resolve") for r in local.requests) == 1


@pytest.mark.parametrize("path", ["^/api/models/org/model$", "/discussions$", "/discussions/5$"])
def test_transient_errors_are_retried_until_success(hub, local, path):
    local.add_fault(Fault(path, status=500, times=1))
    local.add_fault(Fault(path, status=429, times=1))
    assert hub.model_info("org/model").repo_id == "org/model"
    assert len(hub.pull_requests("org/model")) == 11
    assert hub.pr_details("org/model", 5).num == 5
    assert [r.status for r in local.requests if re.search(path, r.path)][:3] == [500, 429, 200]


def test_retry_after_is_honoured(hub, local):
    local.add_fault(Fault("^/api/models/org/model$", status=429, times=1, retry_after=1))
    start = time.monotonic()
    hub.model_info("org/model")
    assert time.monotonic() - start >= 1.0


@pytest.mark.parametrize("call", ["model_info", "pull_requests", "pr_details"])
def test_persistent_failure_is_a_read_error_never_absent(hub, local, call):
    local.add_fault(Fault("^/api/models/org/model(/discussions(/5)?)?$", status=503, times=None))
    with pytest.raises(HubReadError) as caught:
        {
            "model_info": lambda: hub.model_info("org/model"),
            "pull_requests": lambda: hub.pull_requests("org/model"),
            "pr_details": lambda: hub.pr_details("org/model", 5),
        }[call]()
    assert not isinstance(caught.value, (HubGatedError, HubNotFound))
    assert "the read failed: HTTP 503" in caught.value.reason and "after 4 attempts" in caught.value.reason
    assert len([r for r in local.requests if r.status == 503]) == hub.policy.retries + 1


@pytest.mark.parametrize("path", ["^/api/models/org/model$", "/discussions$", "^/api/models$", "/tree/"])
def test_truncated_json_is_retried(hub, local, path):
    local.add_fault(Fault(path, truncate=True, times=1))
    assert hub.model_info("org/model").sha
    assert len(hub.pull_requests("org/model")) == 11
    assert hub.search_models("item", limit=2) == ("many/item-0", "many/item-1")
    assert [f.path for f in hub.list_files("org/model")] == [".eval_results/a.yaml"]


def test_a_second_discussion_page_that_keeps_failing_fails_the_whole_listing(hub, local):
    local.add_fault(Fault("/discussions$", truncate=True, times=None))
    with pytest.raises(HubReadError, match="malformed response"):
        hub.pull_requests("org/model")


def test_file_reads_never_fall_back_to_a_cached_copy(tmp_path, monkeypatch):
    temp = tmp_path / "tmp"
    temp.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(temp))
    write_model(tmp_path, "o/m", {"a.txt": "public"})
    with LocalHub(tmp_path) as local, ReadOnlyHub(local.endpoint) as hub:
        assert list(temp.iterdir()) == []  # a client that is not reading holds no directory a kill could leave
        assert hub.read_file("o/m", "a.txt") == "public"
        write_model(tmp_path, "o/m", {"a.txt": "public"}, gated=True)
        with pytest.raises(HubGatedError):
            hub.read_file("o/m", "a.txt")
        assert list(temp.iterdir()) == []  # every read's cache is removed, a failed read's too
    assert list(temp.iterdir()) == []  # nor does the local Hub's start and stop leave one


def test_oversized_and_non_utf8_files_are_read_errors(hub):
    with pytest.raises(HubReadError, match="over the 1048576-byte limit"):
        hub.read_file("org/big", ".eval_results/big.yaml")
    with pytest.raises(HubReadError, match="not UTF-8"):
        hub.read_file("org/big", "latin1.txt")


def test_a_stalled_hub_hits_the_deadline(local):
    local.add_fault(Fault("^/api/models/org/model/discussions$", status=0, delay=1.0, times=None))
    with ReadOnlyHub(local.endpoint, retries=1, backoff=0.01, timeout=0.2) as hub:
        start = time.monotonic()
        with pytest.raises(HubReadError, match="no answer within 0.2 s"):
            hub.pull_requests("org/model")
    assert time.monotonic() - start < 1.0


def test_rate_limited_reads_wait_and_succeed(root):
    with LocalHub(root, rate_limit=10.0, burst=2) as local, ReadOnlyHub(local.endpoint, backoff=0.01) as hub:
        infos = [hub.model_info(f"many/item-{n}") for n in range(4)]
        assert [i.repo_id for i in infos] == [f"many/item-{n}" for n in range(4)]
        assert any(r.status == 429 for r in local.requests)


@pytest.mark.parametrize(
    "fault",
    [
        Fault("/resolve/", status=503, times=2, method="GET"),
        Fault("/resolve/", status=502, times=2, method="HEAD"),
        Fault("/resolve/", reset=True, times=2),
        Fault("/resolve/", status=0, delay=1.5, times=1, method="GET"),
    ],
)
def test_file_downloads_are_retried_like_every_other_read(local, fault):
    """huggingface_hub retries a download's HEAD but sends its GET once: the transport retries both."""
    local.add_fault(fault)
    with ReadOnlyHub(local.endpoint, backoff=0.01, retries=3, timeout=0.3) as hub:
        started = time.monotonic()
        assert hub.read_file("org/model", ".eval_results/a.yaml") == "- a: 1\n"
        assert time.monotonic() - started < 1.5  # a stalled GET is abandoned at the deadline, not waited for
    sent = [r for r in local.requests if "/resolve/" in r.path]
    assert len(sent) >= (2 if fault.delay else 3) and sent[-1].status == 200


@pytest.mark.parametrize("path", ["/tree/", "^/api/models$", "/resolve/"])
def test_the_library_backoff_is_not_stacked_on_the_policy(hub, local, path):
    """Listings and a download's HEAD go through huggingface_hub's http_backoff: a dead Hub still costs one budget."""
    local.add_fault(Fault(path, status=503, times=None))
    with pytest.raises(HubReadError, match="after 4 attempts"):
        {
            "/tree/": lambda: hub.list_files("org/model"),
            "^/api/models$": lambda: hub.search_models("item"),
            "/resolve/": lambda: hub.read_file("org/model", "README.md"),
        }[path]()
    assert len([r for r in local.requests if r.status == 503]) == hub.policy.retries + 1


def test_connection_resets_are_retried(hub, local):
    local.add_fault(Fault("^/api/models/org/model$", reset=True, times=2))
    assert hub.model_info("org/model").repo_id == "org/model"
    assert [r.status for r in local.requests] == [0, 0, 200]


def test_the_retrying_client_keeps_the_hubs_own_request_hooks():
    """The retry transport replaces huggingface_hub's client, never its request hooks (the Hub's headers)."""

    retry.install()
    client = get_session()
    hooks = [hook.__module__ + "." + hook.__name__ for hook in client.event_hooks["request"]]
    assert hooks == ["huggingface_hub.utils._http.hf_request_event_hook"]
    assert huggingface_hub.get_session() is client
