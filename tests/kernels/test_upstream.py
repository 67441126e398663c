"""PyTorch's real kernels, fetched at pinned commits: cut by name, cached, and offline-safe.

No test here touches the network: fetching is replaced, and COURSE_OFFLINE is set by conftest.
"""

from __future__ import annotations

import pytest

from course.errors import CourseError
from course.kernels import upstream

FILE = """// a made-up Objective-C++ file with the shapes that matter
namespace at::native {
namespace mps {
static void binaryOpTensor(const Tensor& self, const Tensor& other,
                           const Tensor& output_) {
  bool needsCopyToOutput = !output_.is_contiguous();
  if (needsCopyToOutput) {
    output = at::empty(output_.sizes());
  }
  {  // a nested block
  }
}
} // namespace mps

TORCH_IMPL_FUNC(mul_out_mps)(const Tensor& self, const Tensor& output) {
  mps::binaryOpTensor(self, other, output, ^BinaryOpFn(cachedGraph) { return nil; });
}
Tensor& declared_only(const Tensor& self);
}
"""


def test_a_function_is_cut_at_its_matching_brace():
    text = upstream.function_text(FILE, "binaryOpTensor")
    assert text.startswith("static void binaryOpTensor(") and text.endswith("  }\n}")
    assert "TORCH_IMPL_FUNC" not in text


def test_calls_and_declarations_are_not_definitions():
    with pytest.raises(CourseError, match="no definition of declared_only"):
        upstream.function_text(FILE, "declared_only")


def test_sources_are_pinned_to_release_commits():
    for source in (upstream.BROKEN, upstream.SIBLING, upstream.FIXED):
        assert upstream.COMMITS[source.version] in source.raw_url
        assert len(upstream.COMMITS[source.version]) == 40
        assert f"/v{source.version}/" in source.page_url


def test_offline_shows_links_and_never_fetches(monkeypatch, tmp_path):
    monkeypatch.setenv("COURSE_CACHE_DIR", str(tmp_path))
    monkeypatch.setenv("COURSE_OFFLINE", "1")
    monkeypatch.setattr(upstream.urllib.request, "urlopen", _no_network)
    text = upstream.show(upstream.BROKEN, upstream.SIBLING)
    assert "not shown: COURSE_OFFLINE is set" in text
    assert upstream.BROKEN.page_url in text and upstream.SIBLING.page_url in text


def test_a_failed_fetch_is_a_clear_message(monkeypatch, tmp_path):
    monkeypatch.setenv("COURSE_CACHE_DIR", str(tmp_path))
    monkeypatch.setenv("COURSE_OFFLINE", "0")
    monkeypatch.setattr(upstream.urllib.request, "urlopen", _no_network)
    assert "could not fetch https://raw.githubusercontent.com" in upstream.show(upstream.FIXED)


def test_a_fetch_is_cached_and_read_back(monkeypatch, tmp_path):
    monkeypatch.setenv("COURSE_CACHE_DIR", str(tmp_path))
    monkeypatch.setenv("COURSE_OFFLINE", "0")
    github = FakeGitHub()
    monkeypatch.setattr(upstream.urllib.request, "urlopen", github)
    first = upstream.show(upstream.BROKEN)
    monkeypatch.setenv("COURSE_OFFLINE", "1")  # the second read comes from the cache
    assert upstream.show(upstream.BROKEN) == first and github.urls == [upstream.BROKEN.raw_url]
    assert "static void addc_mul_div_out_mps(" in first


class FakeGitHub:
    """urlopen for the tests, which never touch the network: each pinned file holds made-up
    bodies (FILE's) of the functions notebook 06 cuts from it. tests/test_site_offline.py runs
    `make fetch-sources` with it too."""

    def __init__(self) -> None:
        self.urls: list[str] = []

    def __call__(self, url, timeout):
        self.urls.append(url)
        names = [s.function for s in upstream.SOURCES if s.raw_url == url]
        body = "\n".join(FILE.replace("binaryOpTensor", name) for name in names)
        return _Response(body.encode())


class _Response:
    def __init__(self, body: bytes) -> None:
        self.body = body

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False

    def read(self, limit):
        return self.body[:limit]


def test_fetch_sources_fills_the_cache_notebook_06_reads_offline(monkeypatch, tmp_path, capsys):
    monkeypatch.setenv("COURSE_CACHE_DIR", str(tmp_path))
    monkeypatch.setenv("COURSE_OFFLINE", "0")  # an instructor, online
    github = FakeGitHub()
    monkeypatch.setattr(upstream.urllib.request, "urlopen", github)
    assert upstream.main() == 0
    out = capsys.readouterr().out
    assert out.count("cached: ") == len(upstream.SOURCES) and "make site" in out
    assert sorted(github.urls) == sorted({s.raw_url for s in upstream.SOURCES})  # once each
    for source in upstream.SOURCES:
        assert upstream.cached_path(source).is_file()
    assert upstream.missing_sources() == []
    monkeypatch.setenv("COURSE_OFFLINE", "1")  # the workshop room
    monkeypatch.setattr(upstream.urllib.request, "urlopen", _no_network)
    text = upstream.show(*upstream.SOURCES)
    assert "not shown" not in text
    assert "static void addc_mul_div_out_mps(" in text and "static void binaryOpTensor(" in text


def test_fetch_sources_fails_clearly_offline_or_on_a_moved_function(monkeypatch, tmp_path, capsys):
    monkeypatch.setenv("COURSE_CACHE_DIR", str(tmp_path))
    monkeypatch.setenv("COURSE_OFFLINE", "0")
    monkeypatch.setattr(upstream.urllib.request, "urlopen", _no_network)
    assert upstream.missing_sources() == list(upstream.SOURCES)
    assert upstream.main() == 1
    err = capsys.readouterr().err
    assert err.startswith("You are offline") and "notebook 06 will show links" in err
    assert "could not fetch https://raw.githubusercontent.com" in err
    cached = upstream.cached_path(upstream.BROKEN)
    cached.parent.mkdir(parents=True)
    cached.write_text("// PyTorch renamed everything\n")
    with pytest.raises(CourseError, match="no definition of addc_mul_div_out_mps"):
        upstream.fetch_all((upstream.BROKEN,))


def test_without_network_only_the_cache_is_read(monkeypatch, tmp_path):
    monkeypatch.setenv("COURSE_CACHE_DIR", str(tmp_path))
    monkeypatch.setenv("COURSE_OFFLINE", "0")
    monkeypatch.setattr(upstream.urllib.request, "urlopen", _no_network)
    with pytest.raises(upstream.Offline, match="not cached: run `make fetch-sources`"):
        upstream.fetch(upstream.FIXED, network=False)
    assert "make fetch-sources" in upstream.show(upstream.FIXED, network=False)


def _no_network(*args, **kwargs):
    raise OSError("tests never touch the network")
