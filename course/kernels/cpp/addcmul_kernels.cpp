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
#include <atomic>
#include <cstring>
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
// evicted: that is why torch's own kernel is ~20x slower there than on contiguous tensors.
// Cache blocking fixes the order. The plane of the two "fastest" dims (the output's, i, and the
// inputs', j) is cut into tile.i x tile.j tiles, and each tile is done in two passes through a
// small buffer that stays in cache:
//   pass 1 reads the inputs row by row, in their memory order: tile.j contiguous elements
//          (16 whole cache lines for 256 floats) per row, multiplied into one buffer row;
//   pass 2 writes the output column by column, in its memory order: tile.i contiguous elements
//          (4 whole cache lines for 64 floats) per column, each added from one buffer column.
// Every cache line of every tensor is used whole, once. Four details make it fast:
// - The tile shape that keeps a tile in cache depends on the machine, so it is not fixed here:
//   Python chooses it (course/kernels/cpp/tuning.py: from the cache sizes, or a short autotune)
//   and sets it with course_kernels_set_tile. Until then it is 64 x 256, for a 512 KB L2 cache.
// - The hardware prefetcher follows a few long sequential streams; a tile is 2 x tile.i short
//   input rows and tile.j short output columns, each in its own 4 KB page, which it does not see
//   coming. So the kernel asks for them itself (__builtin_prefetch, into the L2 cache): the input
//   rows AHEAD_I rows ahead and the output columns AHEAD_J columns ahead of the current ones.
// - Buffer rows are tile.j + 16 elements apart: at a stride of exactly 1 KB, pass 2's walk down
//   a buffer column would land in a handful of cache sets and evict its own lines.
// - For floats, pass 2 moves 4 x 4 blocks: 4 buffer rows loaded as 4-float vectors, transposed
//   in registers, added to 4 output columns (one vector instruction per 4 elements, not 4 loads).
// Threads (at::parallel_for) take whole bands of tile.i input rows (contiguous memory), the
// next free band each time, and each thread owns its buffer.
// When output and inputs share their fastest dim, there is nothing to block: the
// TensorIterator kernel already walks all of them in memory order, so the tiled kernel calls it.
std::atomic<int64_t> tile_i_setting{64};   // output elements per column in a tile
std::atomic<int64_t> tile_j_setting{256};  // input elements per row in a tile
constexpr int64_t PAD = 16;                // buffer row padding in elements

struct TileShape {
  int64_t i, j, row;  // row: the buffer's row stride in elements (tile.j, padded)
};
constexpr int64_t AHEAD_I = 2;   // prefetch distance in input rows...
constexpr int64_t AHEAD_J = 8;   // ...and in output columns

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

template <typename scalar_t>
void prefetch_lines(const scalar_t* start, int64_t n) {  // the cache lines of n elements
#if defined(__GNUC__)  // GCC and Clang
  constexpr int64_t line = 64 / sizeof(scalar_t);
  for (int64_t k = 0; k < n; k += line) __builtin_prefetch(start + k, 0, 2);  // 2: into L2
#endif
}

// Pass 1: buffer[i][j] = v * a[i][j] * b[i][j], input rows read in memory order.
template <typename scalar_t>
void multiply_rows(const scalar_t* a, int64_t as_i, const scalar_t* b, int64_t bs_i, int64_t ni,
                   int64_t nj, scalar_t v, scalar_t* buffer, int64_t row) {
  for (int64_t i = 0; i < ni; ++i) {
    const scalar_t* ai = a + i * as_i;
    const scalar_t* bi = b + i * bs_i;
    if (i + AHEAD_I < ni) {
      prefetch_lines(ai + AHEAD_I * as_i, nj);
      prefetch_lines(bi + AHEAD_I * bs_i, nj);
    }
    scalar_t* p = buffer + i * row;
    for (int64_t j = 0; j < nj; ++j) p[j] = v * ai[j] * bi[j];
  }
}

// Pass 2: out[j][i] += buffer[i][j], output columns written in memory order, one at a time.
template <typename scalar_t>
void add_columns(scalar_t* out, int64_t os_j, const scalar_t* buffer, int64_t ni, int64_t nj,
                 int64_t row) {
  for (int64_t j = 0; j < nj; ++j) {
    scalar_t* oj = out + j * os_j;
    if (j + AHEAD_J < nj) prefetch_lines(oj + AHEAD_J * os_j, ni);
    for (int64_t i = 0; i < ni; ++i) oj[i] += buffer[i * row + j];
  }
}

#if defined(__GNUC__)  // GCC and Clang vector extensions: SSE on x86, NEON on ARM
using float4 = float __attribute__((vector_size(16)));
#if defined(__clang__) || __GNUC__ >= 12
#define SHUFFLE4(x, y, l0, l1, l2, l3) __builtin_shufflevector(x, y, l0, l1, l2, l3)
#else
using lanes4 = int __attribute__((vector_size(16)));
#define SHUFFLE4(x, y, l0, l1, l2, l3) __builtin_shuffle(x, y, lanes4{l0, l1, l2, l3})
#endif

float4 load4(const float* p) {
  float4 v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

void add4(float* p, float4 v) {  // p[0..3] += v
  v += load4(p);
  std::memcpy(p, &v, sizeof v);
}

// Pass 2 for floats: 4 columns at a time. Lanes 0-3 of a shuffle come from x, 4-7 from y.
template <>
void add_columns<float>(float* out, int64_t os_j, const float* buffer, int64_t ni, int64_t nj,
                        int64_t row) {
  int64_t j = 0;
  for (; ni % 4 == 0 && j + 4 <= nj; j += 4) {
    float* o = out + j * os_j;
    for (int64_t k = AHEAD_J; k < AHEAD_J + 4 && j + k < nj; ++k) prefetch_lines(o + k * os_j, ni);
    for (int64_t i = 0; i < ni; i += 4) {
      const float* p = buffer + i * row + j;  // rows i..i+3, columns j..j+3
      const float4 r0 = load4(p), r1 = load4(p + row), r2 = load4(p + 2 * row),
                   r3 = load4(p + 3 * row);
      const float4 lo01 = SHUFFLE4(r0, r1, 0, 4, 1, 5), hi01 = SHUFFLE4(r0, r1, 2, 6, 3, 7);
      const float4 lo23 = SHUFFLE4(r2, r3, 0, 4, 1, 5), hi23 = SHUFFLE4(r2, r3, 2, 6, 3, 7);
      add4(o + i, SHUFFLE4(lo01, lo23, 0, 1, 4, 5));  // column j: rows i..i+3
      add4(o + os_j + i, SHUFFLE4(lo01, lo23, 2, 3, 6, 7));
      add4(o + 2 * os_j + i, SHUFFLE4(hi01, hi23, 0, 1, 4, 5));
      add4(o + 3 * os_j + i, SHUFFLE4(hi01, hi23, 2, 3, 6, 7));
    }
  }
  for (; j < nj; ++j) {  // ragged columns, or a ragged number of rows
    float* oj = out + j * os_j;
    for (int64_t i = 0; i < ni; ++i) oj[i] += buffer[i * row + j];
  }
}
#endif

// One tile when the output is contiguous along i and both inputs along j (the common case).
template <typename scalar_t>
void tile_unit(scalar_t* out, int64_t os_j, const scalar_t* a, int64_t as_i, const scalar_t* b,
               int64_t bs_i, int64_t ni, int64_t nj, scalar_t v, scalar_t* buffer, int64_t row) {
  multiply_rows(a, as_i, b, bs_i, ni, nj, v, buffer, row);
  add_columns(out, os_j, buffer, ni, nj, row);
}

// One tile for any strides (broadcast inputs, step-sliced tensors...): same order, no buffer.
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
  const int64_t tj = tile_j_setting.load();
  const TileShape tile{tile_i_setting.load(), tj, tj + PAD};
  const int64_t ni = self.size(di), nj = self.size(dj);
  const int64_t tiles_i = (ni + tile.i - 1) / tile.i;
  const int64_t os[2] = {self.stride(di), self.stride(dj)};
  const int64_t as[2] = {a.stride(di), a.stride(dj)};
  const int64_t bs[2] = {b.stride(di), b.stride(dj)};
  const bool unit = os[0] == 1 && as[1] == 1 && bs[1] == 1;
  AT_DISPATCH_FLOATING_TYPES(self.scalar_type(), "addcmul_tiled_", [&] {
    scalar_t* out = self.data_ptr<scalar_t>();
    const scalar_t* pa = a.const_data_ptr<scalar_t>();
    const scalar_t* pb = b.const_data_ptr<scalar_t>();
    const scalar_t v = value.to<scalar_t>();
    // Bands of tile.i input rows (contiguous memory) are handed out one at a time from a
    // shared counter: on a busy machine, a thread that gets its core late takes fewer bands
    // instead of the others waiting for its fixed half.
    std::atomic<int64_t> next_band{0};
    const int64_t bands = planes * tiles_i;
    at::parallel_for(0, at::get_num_threads(), 1, [&](int64_t, int64_t) {
      std::vector<scalar_t> buffer(unit ? tile.i * tile.row : 0);  // this thread's own
      for (int64_t band = next_band++; band < bands; band = next_band++) {
        const int64_t i0 = (band % tiles_i) * tile.i;
        int64_t o = i0 * os[0], oa = i0 * as[0], ob = i0 * bs[0];
        for (int64_t k = static_cast<int64_t>(rest.size()) - 1, p = band / tiles_i; k >= 0;
             --k) {  // where this band's plane starts in each tensor
          const int64_t d = rest[k], index = p % self.size(d);
          p /= self.size(d);
          o += index * self.stride(d);
          oa += index * a.stride(d);
          ob += index * b.stride(d);
        }
        const int64_t n_i = std::min(tile.i, ni - i0);
        for (int64_t j0 = 0; j0 < nj; j0 += tile.j) {  // the band's tiles, left to right
          const int64_t n_j = std::min(tile.j, nj - j0);
          scalar_t* out_tile = out + o + j0 * os[1];
          const scalar_t* a_tile = pa + oa + j0 * as[1];
          const scalar_t* b_tile = pb + ob + j0 * bs[1];
          if (unit) {
            tile_unit(out_tile, os[1], a_tile, as[0], b_tile, bs[0], n_i, n_j, v, buffer.data(),
                      tile.row);
          } else {
            tile_strided(out_tile, os, a_tile, as, b_tile, bs, n_i, n_j, v);
          }
        }
      }
    });
  });
  return self;
}

}  // namespace

// Set the tile shape of later calls (from Python, through ctypes). Returns 0, or -1 and changes
// nothing when a side is not a multiple of 4 (pass 2's 4 x 4 blocks) from 4 to 4096.
extern "C" int course_kernels_set_tile(int64_t i, int64_t j) {
  if (i < 4 || j < 4 || i > 4096 || j > 4096 || i % 4 != 0 || j % 4 != 0) return -1;
  tile_i_setting = i;
  tile_j_setting = j;
  return 0;
}

TORCH_LIBRARY_IMPL(course_kernels, CPU, m) {
  m.impl("addcmul_naive_", TORCH_FN(addcmul_naive_));
  m.impl("addcmul_strided_", TORCH_FN(addcmul_strided_));
  m.impl("addcmul_iterator_", TORCH_FN(addcmul_iterator_));
  m.impl("addcmul_tiled_", TORCH_FN(addcmul_tiled_));
}
