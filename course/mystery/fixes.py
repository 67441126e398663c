"""Reference fixes, written out as the patch a learner would write: patch(model) -> model.

A patch receives the scenario's freshly built model and changes where the triggering property
comes from (a weight stored transposed, one flat buffer, an op done in place, the optimizer's
foreach path) without changing any parameter's values, so the scenario trains on the buggy
device as it does on a healthy one. `reference_fix(design)` returns the source for a design's
habit; an instructor reads it in `case.answer()`.
"""

from __future__ import annotations

from course.mystery.families import Design

_STORE_OWN = "{target} = nn.Parameter({target}.detach().contiguous())"
# habit -> (what the patch does, its body)
_FIXES: dict[str, tuple[str, tuple[str, ...]]] = {
    "import": ("Store the imported weight row by row, as PyTorch's own layers do.", (_STORE_OWN,)),
    "even-inputs": ("Store the cut-out weight without gaps.", (_STORE_OWN,)),
    "flat-buffer": (
        "Give each weight a storage of its own instead of a view into one buffer.",
        (
            "for name in {target}:",
            "    owner, _, attribute = name.rpartition('.')",
            "    module = model.get_submodule(owner)",
            "    own = getattr(module, attribute).detach().clone()",
            "    setattr(module, attribute, nn.Parameter(own))",
        ),
    ),
    "bfloat16": (
        "Keep the weights in float32 (forward casts its input to them).",
        ("model = model.float()",),
    ),
    "channels-last": (
        "Store the convolutions' weights row by row (channels first), as PyTorch's own "
        "layers do: the second convolution then writes its output that way too.",
        (
            "for conv in (model.conv1, model.conv2):",
            "    conv.weight = nn.Parameter(conv.weight.detach().contiguous())",
        ),
    ),
    "inplace-relu": (
        "Let ReLU write a new tensor instead of overwriting its input.",
        ("model.act = nn.ReLU()",),
    ),
    "border-mask": (
        "Zero the border out of place.",
        ("model.mask_border = lambda h: h.masked_fill(model.border, 0.0)",),
    ),
    "clip": (
        "Clip out of place.",
        ("model.clip_activations = lambda h: h.clamp(-model.clip, model.clip)",),
    ),
    "query-bias": (
        "Add the query bias out of place.",
        ("model.add_query_bias = lambda q: q + model.query_bias",),
    ),
    "causal-mask": (
        "Mask the future out of place.",
        ("model.mask_future = lambda scores: scores.masked_fill(model.future, -1e9)",),
    ),
    "softcap": (
        "Cap the scores out of place.",
        ("model.cap = lambda scores: scores.clamp(-model.softcap, model.softcap)",),
    ),
    "foreach": ("Train with the optimizer's per-tensor path.", ("model.foreach = False",)),
    **dict.fromkeys(
        ("adam-square", "eps", "wide", "vocab", "odd-sizes"),
        (
            "Train with the fused optimizer: one kernel updates every parameter, so the "
            "per-tensor kernels that break here never run.",
            ("model.fused = True",),
        ),
    ),
}

# The model's training recipe: what Trainable.configure_optimizer reads.
RECIPE = ("optimizer", "lr", "weight_decay", "eps", "foreach", "fused")
# Habits whose only fix is the recipe (a size or a path that the model cannot lose). Every
# other habit puts the trigger in how the model stores or computes a tensor, so check_fix also
# trains the patched model with the user's own recipe: a recipe change that only routes around
# the kernel leaves the trigger in place for the next call that meets it.
RECIPE_HABITS = frozenset(
    habit
    for habit, (_, body) in _FIXES.items()
    if any(line.startswith(tuple(f"model.{name}" for name in RECIPE)) for line in body)
)


def reference_fix(design: Design) -> str:
    """The source of `patch(model) -> model` for a design's habit."""
    doc, body = _FIXES[design.habit]
    lines = [line.format(target=design.target) for line in body]
    return "\n".join(
        [
            "def patch(model):",
            f'    """{doc}"""',
            *(f"    {line}" for line in lines),
            "    return model",
        ]
    )
