"""05.kernel_for: the reference walk, and wrong walks of the registry keyed by their flaw."""

from __future__ import annotations

from course.dispatch.registry import backend_kernel, kernel_entry, lookup
from tests.corpus import Corpus


def kernel_for_reference():
    def kernel_for(op, backend):
        entry = lookup(op)
        own = entry.backend_kernels()
        if backend in own or not entry.structured_delegate:
            return own[backend]
        return lookup(entry.structured_delegate).backend_kernels()[backend]

    return kernel_for


def _ignores_backend(op, backend):
    entry = lookup(op)
    if entry.structured_delegate and "CPU" not in entry.backend_kernels():
        entry = lookup(entry.structured_delegate)
    return entry.backend_kernels()["CPU"]


def _substring_rows(op, backend):
    entry = lookup(op)
    rows = dict(entry.dispatch)
    if entry.structured_delegate:
        rows |= lookup(entry.structured_delegate).dispatch
    return next(kernel for keys, kernel in rows.items() if backend in keys)


def _own_if_any(op, backend):
    entry = lookup(op)
    if entry.dispatch:  # "it has a table of its own, so the kernel is there"
        return entry.backend_kernels()[backend]
    return lookup(entry.structured_delegate).backend_kernels()[backend]


def _split_unstripped(op, backend):
    entry = lookup(op)
    sources = ([lookup(entry.structured_delegate)] if entry.structured_delegate else []) + [entry]
    rows = {
        key: kernel
        for s in sources
        for keys, kernel in s.dispatch.items()
        for key in keys.split(",")
    }
    return rows[backend]  # 'CPU, CUDA'.split(',') gives ' CUDA', never 'CUDA'


def _delegate_else_own(op, backend):
    entry = lookup(op)
    if entry.structured_delegate:
        delegated = lookup(entry.structured_delegate).backend_kernels()
        if backend in delegated:
            return delegated[backend]
    return entry.backend_kernels()[backend]


def _delegate_row_for(fixed):
    """A walk that reads the delegate's row for one fixed backend, whatever it is given."""

    def kernel_for(op, backend):
        entry = lookup(op)
        own = entry.backend_kernels()
        if backend in own or not entry.structured_delegate:
            return own[backend]
        return lookup(entry.structured_delegate).backend_kernels()[fixed]

    return kernel_for


def _without_overload(op, backend):
    entry = lookup(op.split(".")[0])
    own = entry.backend_kernels()
    if backend in own or not entry.structured_delegate:
        return own[backend]
    return lookup(entry.structured_delegate).backend_kernels()[backend]


def _delegate_by_name(op, backend):
    own = lookup(op).backend_kernels()
    if backend in own:
        return own[backend]
    return lookup(op.split(".")[0].rstrip("_") + ".out").backend_kernels()[backend]


def _falls_back_to_cpu(op, backend):
    """Right wherever a row names the backend; elsewhere CPU's kernel, silently."""
    entry = lookup(op)
    own = entry.backend_kernels()
    if backend in own or not entry.structured_delegate:
        return own.get(backend, own.get("CPU"))
    rows = lookup(entry.structured_delegate).backend_kernels()
    return rows[backend] if backend in rows else rows.get("CPU")


def _first_row_as_fallback(op, backend):
    """A fallback to whichever backend the delegate lists first."""
    entry = lookup(op)
    own = entry.backend_kernels()
    if backend in own:
        return own[backend]
    rows = lookup(entry.structured_delegate or op).backend_kernels()
    return rows.get(backend, next(iter(rows.values())))


def _none_where_no_row(op, backend):
    entry = lookup(op)
    own = entry.backend_kernels()
    if backend in own:
        return own[backend]
    if entry.structured_delegate:
        return lookup(entry.structured_delegate).backend_kernels().get(backend)
    return None


def _wrapped_reader(op, backend):
    return backend_kernel(op, backend)


CORPORA = (
    Corpus(
        "05.kernel_for",
        kernel_for_reference,
        wrong={
            "own table only": (
                lambda: lambda op, backend: lookup(op).backend_kernels()[backend],
                "has no `dispatch:` row for MPS of its own",
            ),
            "the delegate's name": (
                lambda: lambda op, backend: lookup(op).structured_delegate,
                "the overload addcdiv_ delegates to",
            ),
            "always the delegate": (
                lambda: (
                    lambda op, backend: lookup(lookup(op).structured_delegate).backend_kernels()[
                        backend
                    ]
                ),
                "follows structured_delegate whatever the op",
            ),
            "the delegate even where the op has its own row": (
                lambda: (
                    lambda op, backend: lookup(
                        lookup(op).structured_delegate or op
                    ).backend_kernels()[backend]
                ),
                "a row of its own, and that row wins",
            ),
            ".dispatch looked up by one backend": (
                lambda: (
                    lambda op, backend: (
                        lookup(op).dispatch.get(backend)
                        or lookup(lookup(op).structured_delegate or op).dispatch[backend]
                    )
                ),
                "names several backends",
            ),
            "'CPU' found in 'SparseCPU, ...'": (
                lambda: _substring_rows,
                "inside a longer backend name",
            ),
            "always the CPU row": (lambda: _ignores_backend, "never changes with `backend`"),
            "the name the notebook printed": (
                lambda: lambda op, backend: "addcmul_out_mps",
                "the same for every one",
            ),
            "always addcmul.out's row": (
                lambda: lambda op, backend: lookup("addcmul.out").backend_kernels()[backend],
                "never changes with `op`",
            ),
            "backend_kernel itself": (
                lambda: backend_kernel,
                "called backend_kernel, the course's own reader",
            ),
            "kernel_entry's row": (
                lambda: lambda op, backend: kernel_entry(op).backend_kernels()[backend],
                "called kernel_entry, the course's own reader",
            ),
            "own table whenever it has one": (
                lambda: _own_if_any,
                "has no `dispatch:` row for CUDA of its own",
            ),
            "'CPU, CUDA'.split(',') without strip": (
                lambda: _split_unstripped,
                "names several backends",
            ),
            "the delegate's row first, the op's as a fallback": (
                lambda: _delegate_else_own,
                "a row of its own, and that row wins",
            ),
            "the delegate's CPU row whatever the backend": (
                lambda: _delegate_row_for("CPU"),
                "addcdiv.out's kernel for CPU, not for MPS",
            ),
            "the delegate's MPS row whatever the backend": (
                lambda: _delegate_row_for("MPS"),
                "addcmul.out's kernel for MPS, not for CPU",
            ),
            "a name made up, not read": (
                lambda: lambda op, backend: f"{op.split('.')[0].rstrip('_')}_out_{backend.lower()}",
                "not built from the op's and the backend's",
            ),
            ".get(backend) gives None": (
                lambda: lambda op, backend: lookup(op).backend_kernels().get(backend),
                "the kernel is in the row of its structured_delegate",
            ),
            "the overload stripped from the op's name": (
                lambda: _without_overload,
                "has no default overload",
            ),
            "the delegate guessed as <op>.out": (
                lambda: _delegate_by_name,
                "not built from the op's name",
            ),
            "backend_kernel wrapped in a function": (
                lambda: _wrapped_reader,
                "backend_kernel, the course's own reader",
            ),
            "a fallback to the CPU's kernel where no row names the backend": (
                lambda: _falls_back_to_cpu,
                "falls back to another backend's kernel",
            ),
            "a fallback to the first row": (
                lambda: _first_row_as_fallback,
                "registry names no SparseCPU kernel for addcmul_",
            ),
        },
        right={"None where no row names the backend": lambda: _none_where_no_row},
    ),
)
