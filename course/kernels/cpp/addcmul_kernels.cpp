// Four in-place addcmul_ kernels: self += value * tensor1 * tensor2, elementwise.
//
// They compute the same formula and differ only in how they find the elements in memory, and in
// which order they visit them.
// The schemas ("course_kernels::addcmul_naive_" ...) are defined from Python
// (course/cpp/build.py) so that this file holds only TORCH_LIBRARY_IMPL: a rebuilt copy can be
// loaded again in the same process without "Only a single TORCH_LIBRARY can be used" aborting it.

#include <ATen/Dispatch.h>
#include <ATen/Parallel.h>
#include <ATen/TensorIterator.h>
#include <ATen/core/Tensor.h>
#include <torch/library.h>

#include <algorithm>
#include <cstdlib>
#include <vector>

namespace {

void check_args(const at::Tensor& self, const at::Tensor& t1, const at::Tensor& t2) {
  TORCH_CHECK(self.device().is_cpu() && t1.device().is_cpu() && t2.device().is_cpu(),
              "course kernels run on CPU tensors only");
  TORCH_CHECK(self.scalar_type() == t1.scalar_type() && self.scalar_type() == t2.scalar_type(),
              "course kernels need one dtype for all three tensors, got ", self.scalar_type(),
              ", ", t1.scalar_type(), ", ", t2.scalar_type());
}

// ---- kernel 1: naive ----
// A raw-pointer loop that assumes every tensor is contiguous: element i of each tensor is
// taken to be at data[i]. For a transposed output that is false, so the right values land in
// the wrong places -- and nothing fails.
at::Tensor& addcmul_naive_(at::Tensor& self, const at::Tensor& t1, const at::Tensor& t2,
                           const at::Scalar& value) {
  check_args(self, t1, t2);
  TORCH_CHECK(self.sizes() == t1.sizes() && self.sizes() == t2.sizes(),
              "addcmul_naive_ needs three tensors of one shape (it cannot broadcast)");
  AT_DISPATCH_FLOATING_TYPES(self.scalar_type(), "addcmul_naive_", [&] {
    scalar_t* out = self.data_ptr<scalar_t>();
    const scalar_t* a = t1.const_data_ptr<scalar_t>();
    const scalar_t* b = t2.const_data_ptr<scalar_t>();
    const scalar_t v = value.to<scalar_t>();
    const int64_t n = self.numel();
    for (int64_t i = 0; i < n; ++i) {
      out[i] += v * a[i] * b[i];
    }
  });
  return self;
}

// ---- kernel 2: strided ----
// A loop over logical indices that turns each index into a memory offset with the tensor's
// strides. Correct for every layout (broadcast inputs have stride 0), but single-threaded and
// with an index computation per element.
at::Tensor& addcmul_strided_(at::Tensor& self, const at::Tensor& t1, const at::Tensor& t2,
                             const at::Scalar& value) {
  check_args(self, t1, t2);
  const at::Tensor a_view = t1.expand(self.sizes());  // broadcasting = stride 0
  const at::Tensor b_view = t2.expand(self.sizes());
  const int64_t dims = self.dim();
  const auto sizes = self.sizes();
  AT_DISPATCH_FLOATING_TYPES(self.scalar_type(), "addcmul_strided_", [&] {
    scalar_t* out = self.data_ptr<scalar_t>();
    const scalar_t* a = a_view.const_data_ptr<scalar_t>();
    const scalar_t* b = b_view.const_data_ptr<scalar_t>();
    const scalar_t v = value.to<scalar_t>();
    std::vector<int64_t> index(dims, 0);  // an odometer over the logical indices
    int64_t o = 0, ia = 0, ib = 0;        // the memory offsets of index in each tensor
    const int64_t n = self.numel();
    for (int64_t i = 0; i < n; ++i) {
      out[o] += v * a[ia] * b[ib];
      for (int64_t d = dims - 1; d >= 0; --d) {  // advance the last dimension, carry leftwards
        o += self.stride(d);
        ia += a_view.stride(d);
        ib += b_view.stride(d);
        if (++index[d] < sizes[d]) break;
        o -= self.stride(d) * sizes[d];
        ia -= a_view.stride(d) * sizes[d];
        ib -= b_view.stride(d) * sizes[d];
        index[d] = 0;
      }
    }
  });
  return self;
}

// ---- kernel 3: iterator ----
// The way ATen builds pointwise kernels: a TensorIterator works out broadcasting, reorders the
// dimensions to follow the output's memory order (so a transposed output is walked in memory
// order too) and collapses them into as few as possible. `for_each` splits the elements across
// threads with at::parallel_for and calls the 2-d loop below on each chunk; the inner loop is a
// plain pointer walk the compiler can vectorise when every stride is one element.
at::Tensor& addcmul_iterator_(at::Tensor& self, const at::Tensor& t1, const at::Tensor& t2,
                              const at::Scalar& value) {
  check_args(self, t1, t2);
  at::TensorIterator iter = at::TensorIteratorConfig()
                                .add_output(self)
                                .add_const_input(self)
                                .add_const_input(t1)
                                .add_const_input(t2)
                                .build();
  AT_DISPATCH_FLOATING_TYPES(self.scalar_type(), "addcmul_iterator_", [&] {
    const scalar_t v = value.to<scalar_t>();
    auto loop = [v](char** data, const int64_t* strides, int64_t inner, int64_t outer) {
      constexpr int64_t one = sizeof(scalar_t);
      const bool contiguous =
          strides[0] == one && strides[1] == one && strides[2] == one && strides[3] == one;
      for (int64_t j = 0; j < outer; ++j) {
        char* out = data[0] + j * strides[4];
        const char* s = data[1] + j * strides[5];
        const char* a = data[2] + j * strides[6];
        const char* b = data[3] + j * strides[7];
        if (contiguous) {
          auto* o = reinterpret_cast<scalar_t*>(out);
          auto* x = reinterpret_cast<const scalar_t*>(s);
          auto* y = reinterpret_cast<const scalar_t*>(a);
          auto* z = reinterpret_cast<const scalar_t*>(b);
          for (int64_t i = 0; i < inner; ++i) o[i] = x[i] + v * y[i] * z[i];
        } else {
          for (int64_t i = 0; i < inner; ++i) {
            *reinterpret_cast<scalar_t*>(out + i * strides[0]) =
                *reinterpret_cast<const scalar_t*>(s + i * strides[1]) +
                v * *reinterpret_cast<const scalar_t*>(a + i * strides[2]) *
                    *reinterpret_cast<const scalar_t*>(b + i * strides[3]);
          }
        }
      }
    };
    iter.for_each(loop);
  });
  return self;
}


// ---- kernel 4: tiled ----
// For mixed layouts: an output stored column by column (transposed) updated from inputs stored
// row by row. Whatever order a loop walks in, one side is read or written with a large stride,
// and every cache line (64 bytes, 16 floats) fetched for it gives one useful element before it is
// evicted: that is why torch's own kernel is ~40x slower there than on contiguous tensors.
// Cache blocking fixes the order: the plane of the two "fastest" dims (the output's and the
// inputs') is cut into TILE x TILE tiles that fit in cache, and each tile is walked in 16 x 8
// blocks: 16 rows of 8 contiguous input elements are read and multiplied into a small block,
// which is then written as 8 columns of 16 contiguous output elements (one cache line each).
// Every cache line is used whole while it is in cache, whichever tensor it belongs to. Tiles
// are split over threads with at::parallel_for.
// When output and inputs share their fastest dim, there is nothing to block: the
// TensorIterator kernel already walks all of them in memory order, so the tiled kernel calls it.
constexpr int64_t TILE = 128;    // a tile of the plane: TILE x TILE elements
constexpr int64_t BLOCK_I = 16;  // blocks inside a tile, transposed through registers: rows...
constexpr int64_t BLOCK_J = 8;   // ...and columns (16 floats = one 64-byte cache line)

int64_t fastest_dim(const at::Tensor& t) {  // the dim of size > 1 with the smallest stride
  int64_t best = -1;
  for (int64_t d = 0; d < t.dim(); ++d) {
    if (t.size(d) > 1 && t.stride(d) != 0 &&
        (best < 0 || std::abs(t.stride(d)) < std::abs(t.stride(best)))) {
      best = d;
    }
  }
  return best;
}

// One tile when the output is contiguous along i and both inputs along j (the common case).
template <typename scalar_t>
void tile_unit(scalar_t* out, int64_t os_j, const scalar_t* a, int64_t as_i, const scalar_t* b,
               int64_t bs_i, int64_t ni, int64_t nj, scalar_t v) {
  int64_t j = 0;
  for (; j + BLOCK_J <= nj; j += BLOCK_J) {
    int64_t i = 0;
    for (; i + BLOCK_I <= ni; i += BLOCK_I) {
      scalar_t p[BLOCK_I][BLOCK_J];
      for (int64_t r = 0; r < BLOCK_I; ++r) {  // rows of contiguous input elements
        const scalar_t* ar = a + (i + r) * as_i + j;
        const scalar_t* br = b + (i + r) * bs_i + j;
        for (int64_t c = 0; c < BLOCK_J; ++c) p[r][c] = v * ar[c] * br[c];
      }
      for (int64_t c = 0; c < BLOCK_J; ++c) {  // columns of contiguous output elements
        scalar_t* oc = out + i + (j + c) * os_j;
        for (int64_t r = 0; r < BLOCK_I; ++r) oc[r] += p[r][c];
      }
    }
    for (; i < ni; ++i) {  // the tile's ragged bottom edge
      for (int64_t c = 0; c < BLOCK_J; ++c) {
        out[i + (j + c) * os_j] += v * a[i * as_i + j + c] * b[i * bs_i + j + c];
      }
    }
  }
  for (; j < nj; ++j) {  // the ragged right edge
    for (int64_t i = 0; i < ni; ++i) out[i + j * os_j] += v * a[i * as_i + j] * b[i * bs_i + j];
  }
}

// One tile for any strides (broadcast inputs, step-sliced tensors...): same order, no blocks.
template <typename scalar_t>
void tile_strided(scalar_t* out, const int64_t* os, const scalar_t* a, const int64_t* as,
                  const scalar_t* b, const int64_t* bs, int64_t ni, int64_t nj, scalar_t v) {
  for (int64_t j = 0; j < nj; ++j) {
    for (int64_t i = 0; i < ni; ++i) {
      out[i * os[0] + j * os[1]] += v * a[i * as[0] + j * as[1]] * b[i * bs[0] + j * bs[1]];
    }
  }
}

at::Tensor& addcmul_tiled_(at::Tensor& self, const at::Tensor& t1, const at::Tensor& t2,
                           const at::Scalar& value) {
  check_args(self, t1, t2);
  const at::Tensor a = t1.expand(self.sizes());
  const at::Tensor b = t2.expand(self.sizes());
  const int64_t di = fastest_dim(self);  // i: the output's fastest dim
  int64_t dj = fastest_dim(a);           // j: the inputs' fastest dim
  if (dj < 0 || dj == di) dj = fastest_dim(b);
  if (di < 0 || dj < 0 || di == dj) return addcmul_iterator_(self, t1, t2, value);
  std::vector<int64_t> rest;  // every other dim: a stack of (i, j) planes
  int64_t planes = 1;
  for (int64_t d = 0; d < self.dim(); ++d) {
    if (d != di && d != dj) {
      rest.push_back(d);
      planes *= self.size(d);
    }
  }
  const int64_t ni = self.size(di), nj = self.size(dj);
  const int64_t tiles_i = (ni + TILE - 1) / TILE, tiles_j = (nj + TILE - 1) / TILE;
  const int64_t os[2] = {self.stride(di), self.stride(dj)};
  const int64_t as[2] = {a.stride(di), a.stride(dj)};
  const int64_t bs[2] = {b.stride(di), b.stride(dj)};
  const bool unit = os[0] == 1 && as[1] == 1 && bs[1] == 1;
  AT_DISPATCH_FLOATING_TYPES(self.scalar_type(), "addcmul_tiled_", [&] {
    scalar_t* out = self.data_ptr<scalar_t>();
    const scalar_t* pa = a.const_data_ptr<scalar_t>();
    const scalar_t* pb = b.const_data_ptr<scalar_t>();
    const scalar_t v = value.to<scalar_t>();
    at::parallel_for(0, planes * tiles_i * tiles_j, 1, [&](int64_t begin, int64_t end) {
      for (int64_t task = begin; task < end; ++task) {
        const int64_t tile = task % (tiles_i * tiles_j);
        const int64_t i0 = (tile / tiles_j) * TILE, j0 = (tile % tiles_j) * TILE;
        int64_t o = i0 * os[0] + j0 * os[1], oa = i0 * as[0] + j0 * as[1],
                ob = i0 * bs[0] + j0 * bs[1];
        for (int64_t k = static_cast<int64_t>(rest.size()) - 1, p = task / (tiles_i * tiles_j);
             k >= 0; --k) {  // where this plane starts in each tensor
          const int64_t d = rest[k], index = p % self.size(d);
          p /= self.size(d);
          o += index * self.stride(d);
          oa += index * a.stride(d);
          ob += index * b.stride(d);
        }
        const int64_t n_i = std::min(TILE, ni - i0), n_j = std::min(TILE, nj - j0);
        if (unit) {
          tile_unit(out + o, os[1], pa + oa, as[0], pb + ob, bs[0], n_i, n_j, v);
        } else {
          tile_strided(out + o, os, pa + oa, as, pb + ob, bs, n_i, n_j, v);
        }
      }
    });
  });
  return self;
}

}  // namespace

TORCH_LIBRARY_IMPL(course_kernels, CPU, m) {
  m.impl("addcmul_naive_", TORCH_FN(addcmul_naive_));
  m.impl("addcmul_strided_", TORCH_FN(addcmul_strided_));
  m.impl("addcmul_iterator_", TORCH_FN(addcmul_iterator_));
  m.impl("addcmul_tiled_", TORCH_FN(addcmul_tiled_));
}
