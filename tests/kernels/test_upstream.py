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
    calls = []

    class Response:
        def __enter__(self):
            return self

        def __exit__(self, *exc):
            return False

        def read(self, limit):
            return FILE.replace("binaryOpTensor", "addc_mul_div_out_mps").encode()

    def fake_urlopen(url, timeout):
        calls.append(url)
        return Response()

    monkeypatch.setattr(upstream.urllib.request, "urlopen", fake_urlopen)
    first = upstream.show(upstream.BROKEN)
    monkeypatch.setenv("COURSE_OFFLINE", "1")  # the second read comes from the cache
    assert upstream.show(upstream.BROKEN) == first and len(calls) == 1
    assert "static void addc_mul_div_out_mps(" in first


def _no_network(*args, **kwargs):
    raise OSError("tests never touch the network")
