// Three in-place addcmul_ kernels: self += value * tensor1 * tensor2, elementwise.
//
// They compute the same formula and differ only in how they find the elements in memory.
// The schemas ("course_kernels::addcmul_naive_" ...) are defined from Python
// (course/cpp/build.py) so that this file holds only TORCH_LIBRARY_IMPL: a rebuilt copy can be
// loaded again in the same process without "Only a single TORCH_LIBRARY can be used" aborting it.

#include <ATen/Dispatch.h>
#include <ATen/TensorIterator.h>
#include <ATen/core/Tensor.h>
#include <torch/library.h>

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

}  // namespace

TORCH_LIBRARY_IMPL(course_kernels, CPU, m) {
  m.impl("addcmul_naive_", TORCH_FN(addcmul_naive_));
  m.impl("addcmul_strided_", TORCH_FN(addcmul_strided_));
  m.impl("addcmul_iterator_", TORCH_FN(addcmul_iterator_));
}
