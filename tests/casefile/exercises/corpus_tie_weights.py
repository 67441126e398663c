"""09.tie_weights' test data: the notebook's tie, copies that own their memory written other ways,
and wrong ties keyed by their mistake, with the words the feedback must contain.

Each answer is a `def` of its own: the checker reads an answer's source to name the calls that
made a view or kept the strides, as it reads a learner's cell."""

from __future__ import annotations

import copy

import torch

from tests.corpus import Corpus


def reference():
    def tie(decoder_weight):
        return decoder_weight.T.clone(memory_format=torch.contiguous_format)

    return tie


def clone_of_the_view(w):
    return w.T.clone()


def the_view(w):
    return w.T


def the_view_by_t(w):
    return w.t()


def empty_like_the_view(w):
    return torch.empty_like(w.T).copy_(w.T)


def reshaped(w):
    return w.reshape(w.shape[1], w.shape[0]).clone()


def not_transposed(w):
    return w.clone()


def as_float64(w):
    return w.T.contiguous().double()


def into_torch_empty(w):
    return torch.empty(w.shape[1], w.shape[0]).copy_(w.T)


def dtype_kept_device_forgotten(w):
    return torch.empty(w.shape[1], w.shape[0], dtype=w.dtype).copy_(w.T)


def zeros_like_the_view(w):
    return torch.zeros_like(w.T).copy_(w.T)


def times_one(w):
    return w.T * 1.0


def transposed_in_place(w):
    return w.t_().contiguous()


def rewrites_the_decoders_data(w):
    w.data = w.T.contiguous()
    return w


def as_float32(w):
    return w.T.float().contiguous()


def deep_copied(w):
    return copy.deepcopy(w.T)


def the_views_strides(w):
    return torch.empty_strided(w.T.shape, w.T.stride()).copy_(w.T)


def through_numpy(w):
    return torch.from_numpy(w.numpy().T.copy())


def contiguous_when_needed(w):
    return w.T.contiguous()


def to_contiguous_format(w):
    return w.T.to(memory_format=torch.contiguous_format)


def reshaped_view(w):
    return w.T.reshape(w.shape[1], w.shape[0])


def flattened_view(w):
    return w.T.flatten().view(w.shape[1], w.shape[0])


WRONG = {
    "w.T.clone()": (lambda: clone_of_the_view, "clone() keeps the strides"),
    "w.T": (lambda: the_view, "`.T` returns a view"),
    "w.t()": (lambda: the_view_by_t, "`.t()` returns a view"),
    "empty_like(w.T).copy_(w.T)": (lambda: empty_like_the_view, "empty_like() takes the strides"),
    "a reshape, not a transpose": (lambda: reshaped, "a reshape or view keeps the order"),
    "w.clone()": (lambda: not_transposed, "is not the transpose's"),
    "the contiguous transpose, as float64": (lambda: as_float64, "MPS has no float64"),
    "torch.empty(...).copy_(w.T)": (
        lambda: into_torch_empty,
        "make float32 CPU tensors unless given dtype=",
    ),
    "dtype kept, device forgotten": (
        lambda: dtype_kept_device_forgotten,
        "make the copy where the weight lives",
    ),
    "zeros_like(w.T).copy_(w.T)": (lambda: zeros_like_the_view, "zeros_like() takes the strides"),
    "w.T * 1.0": (lambda: times_one, "an elementwise result such as w.T * 1"),
    "w.t_().contiguous(), transposing the decoder in place": (
        lambda: transposed_in_place,
        "changed the decoder weight itself",
    ),
    "decoder.data rewritten and handed back": (
        lambda: rewrites_the_decoders_data,
        "changed the decoder weight itself",
    ),
    "float32 forced, for no float64": (
        lambda: as_float32,
        "a weight keeps its dtype (Adam's state would follow the new dtype)",
    ),
    "copy.deepcopy(w.T)": (lambda: deep_copied, "a (deep)copy keeps the strides"),
    "empty_strided with the transpose's strides": (
        lambda: the_views_strides,
        "the transpose's strides yourself",
    ),
    "through numpy, where only CPU tensors go": (
        lambda: through_numpy,
        "on emps:0: tie raised TypeError",
    ),
    "w.T.contiguous(), a view for a one-row weight": (
        lambda: contiguous_when_needed,
        "`.contiguous()` returns such a tensor as it is",
    ),
    "to(memory_format=contiguous_format), no copy": (
        lambda: to_contiguous_format,
        "`.to(memory_format=torch.contiguous_format)` returns the tensor itself",
    ),
    "a reshape to the transpose's own shape": (
        lambda: reshaped_view,
        "`.T` and `.reshape()` return a view",
    ),
    "flatten then view, a copy only when one is needed": (
        lambda: flattened_view,
        "`.T`, `.view()` and `.flatten()` kept it without a copy",
    ),
}


# Copies that always own their memory, written other ways than the reference
def _two_copies(w):  # TopKSAE's own: clone, then contiguous()
    return w.T.clone().contiguous()


def _into_new_memory(w):
    rows, columns = w.shape
    new = torch.empty(columns, rows, dtype=w.dtype, device=w.device)
    return new.copy_(w.T)


def _contiguous_then_clone(w):
    return w.T.contiguous().clone()


def _clone_only_when_already_contiguous(w):
    encoder = w.T
    if encoder.is_contiguous():
        return encoder.clone()
    return encoder.contiguous()


def _new_empty(w):
    rows, columns = w.shape
    return w.new_empty(columns, rows).copy_(w.T)


def _empty_like_in_row_major(w):
    return torch.empty_like(w.T, memory_format=torch.contiguous_format).copy_(w.T)


def _stacked_columns(w):
    return torch.stack([w[:, j] for j in range(w.shape[1])])


def _to_with_copy(w):
    return w.transpose(0, 1).to(memory_format=torch.contiguous_format, copy=True)


def _zeros_plus_transpose(w):
    return torch.zeros(w.shape[1], w.shape[0], dtype=w.dtype, device=w.device) + w.T


def _through_a_list(w):
    return torch.tensor(w.T.tolist(), dtype=w.dtype, device=w.device)


RIGHT = {
    "clone, then contiguous()": lambda: _two_copies,
    "torch.empty with dtype and device, then copy_": lambda: _into_new_memory,
    "contiguous(), then clone": lambda: _contiguous_then_clone,
    "clone only when already contiguous": lambda: _clone_only_when_already_contiguous,
    "new_empty": lambda: _new_empty,
    "empty_like in row-major order": lambda: _empty_like_in_row_major,
    "stacked columns": lambda: _stacked_columns,
    "to(..., copy=True)": lambda: _to_with_copy,
    "zeros plus the transpose": lambda: _zeros_plus_transpose,
    "through a list": lambda: _through_a_list,
}

CORPORA = (Corpus("09.tie_weights", reference, WRONG, RIGHT),)
