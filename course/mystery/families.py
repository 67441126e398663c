"""The user code of a case, drawn from its seed: model family, sizes, recipe, data and one habit.

A *site* is where a planted bug can strike in a family: a habit that gives some tensor an
unusual property (weights read from another framework's checkpoint, a packed checkpoint, an
in-place activation, a mask filled in place, the optimizer's foreach path...), the kernel
families that write that tensor, and the conditions the habit creates there.
`design(rng, site, kind)` draws everything else (sizes, learning rate, optimizer, steps, data)
and returns a `Design`: the build code as the user wrote it (shown by `case.source()` and
executed as shown, so the two cannot drift), the user's description, and the bound a size
condition needs.

Note [Habits that are not the trigger]
    An option that only the case's own habit sets would name the trigger to anyone who reads
    the constructor call (`inplace=True` in exactly the in-place ReLU cases). So every case
    also draws, each with even odds, the options of its family's other option habits (an
    in-place ReLU, a clip, a soft cap, a query bias, the foreach path), from a random stream
    of its own, so they leave the case's other numbers as they were. They do not change where
    the planted bug strikes: an in-place ReLU, a clip, a soft cap and a query bias each add
    calls of an op that, in their family, only their own habit's site plants, or one that
    sets the option itself (a channels-last case whose ReLU is planted runs it in place); and
    the foreach path calls the same per-tensor kernels on the same tensors as the default
    path (course.emps.optim_paths). Which habit matters is then found by experiment, not by
    reading which option is set.

Note [Decoy symptoms]
    A real report often mentions a second oddity the user noticed, harmless and of their own
    making, that a careless investigator chases. Some cases carry one (`Oddity`, tagged in the
    design): a bias the user froze with `requires_grad_(False)`, mentioned in their report as
    a parameter that never changes. The emulated device never invents a bug, so the CPU run
    shows the same frozen bias, and the course's method (compare with the CPU) rules it out;
    `observe` reports only what differs from the CPU, so it is never a finding either. It is
    drawn only where the planted bug strikes named tensors (not "every parameter", not the
    foreach list's positions), so that freezing a bias takes nothing from what it strikes.

Note [A site's condition must stay at its site]
    A planted condition must hold where the site says and nowhere a fix cannot reach: a size
    bound above every parameter (the optimizer's kernels see parameters), a forward op the
    optimizer never calls. The bounds below are chosen from the design's own sizes for that.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass

from course.errors import CourseError

ADAM = ("lerp", "addcmul", "addcdiv")  # the kernels that write a parameter's Adam state or it
_FAMILIES = ("mlp", "cnn", "attention", "bag-of-words")
# (op, effect) pairs that barely show in any scenario (measured: a lost weight decay, a bias
# written half-way, a scrambled second moment): never drawn
WEAK = {
    ("addcmul", "scrambled"),
    ("mul", "lost-write"),
    ("mul", "half-written"),
    ("masked_fill", "lost-write"),
    ("masked_fill", "half-written"),
}


@dataclass(frozen=True)
class Site:
    """Where a bug can strike in a family: a habit, the kernels it feeds, its conditions."""

    family: str
    habit: str
    ops: tuple[str, ...]
    kinds: tuple[str, ...]
    tensor: str  # what is hit, in words (for the answer), may use {target}
    effects: tuple[str, ...] = ()  # the effects that show a symptom here (default: all allowed)


@dataclass(frozen=True)
class Oddity:
    """A decoy symptom: a bias the user froze themselves, which never changes on any device
    (Note [Decoy symptoms])."""

    parameter: str  # its name, e.g. "layers.0.bias"
    reason: str  # the user's comment on the line that freezes it

    @property
    def line(self) -> str:
        """The build line that freezes it."""
        return f"{_path(self.parameter)}.requires_grad_(False)  # {self.reason}"

    @property
    def sentence(self) -> str:
        """What the user says about it in their report."""
        return f"Also, {self.parameter} never changes during training, if that matters."


@dataclass(frozen=True)
class Design:
    """One case's user code: the build, the data, the recipe, and how the user describes it."""

    family: str
    habit: str
    task: str  # "classify" (cross-entropy, accuracy) or "regress" (MSE, held-out loss)
    constructor: str  # the model's constructor call
    habit_lines: tuple[str, ...]  # what the user does to the model after building it
    data: str  # the data call
    steps: int
    description: str  # the user's own words, with the numbers
    target: str = ""  # the attribute path the habit touches, e.g. "model.layers[1].weight"
    hit: str = ""  # what the planted bug strikes, in words (the answer; what tells cases apart)
    bound: int = 0  # the size bound of a "large", "long-dim" or "foreach" condition
    oddity: Oddity | None = None  # a decoy symptom the user made themselves, if any

    def source(self) -> str:
        """The user's build code, exactly as it runs."""
        lines = [*self.habit_lines, *([self.oddity.line] if self.oddity else [])]
        body = [f"    model = {self.constructor}.to(device)", *(f"    {line}" for line in lines)]
        return "\n".join(
            [
                "def build(device, generator):",
                '    """The model as the user builds it (after the data: one generator)."""',
                *body,
                "    return model",
                "",
                "",
                "def data(generator):",
                '    """The training and held-out data."""',
                f"    return {self.data}",
            ]
        )


_ADAM_STATE = "{target} and its Adam state"
_FUSED_FIX = "every parameter whose last dimension is not a multiple of 4, and its Adam state"
SITES: tuple[Site, ...] = (
    # habits with the weights, where the optimizer's kernels meet them
    *(
        Site(f, "import", ADAM, ("transposed",), _ADAM_STATE, ("lost-write", "half-written"))
        for f in _FAMILIES
    ),
    *(Site(f, "even-inputs", ("addcdiv",), ("step-sliced",), "{target}") for f in _FAMILIES),
    *(
        Site(f, "flat-buffer", ("addcdiv", "mul"), ("storage-offset",), "{target}")
        for f in _FAMILIES
    ),
    *(
        Site(f, "bfloat16", ADAM, ("bfloat16",), "every parameter and its Adam state")
        for f in _FAMILIES
    ),
    Site("mlp", "wide", ADAM, ("large", "long-dim"), "{target}, the one large weight"),
    Site("bag-of-words", "vocab", ADAM, ("large", "long-dim"), "the word vectors"),
    *(Site(f, "odd-sizes", ADAM, ("unaligned",), _FUSED_FIX) for f in ("mlp", "attention")),
    Site("bag-of-words", "odd-sizes", ADAM, ("unaligned",), _FUSED_FIX),
    Site(
        "cnn",
        "channels-last",
        (*ADAM, "masked_fill", "relu"),
        ("channels-last",),
        "the second convolution's weight, its Adam state and the activations it writes",
    ),
    *(
        Site(f, "eps", ("add",), ("tiny-scalar",), "Adam's denominators")
        for f in ("mlp", "bag-of-words")
    ),
    *(Site(f, "foreach", ADAM, ("foreach",), "") for f in _FAMILIES),
    *(
        Site(f, "adam-square", ("addcmul",), ("aliased-input",), "every Adam second moment")
        for f in _FAMILIES
    ),
    # habits in the forward pass: ops done in place on activations
    Site("mlp", "inplace-relu", ("relu",), ("long-dim", "repeat-call"), "the hidden activations"),
    Site(
        "cnn",
        "inplace-relu",
        ("relu",),
        ("large", "long-dim", "unaligned", "repeat-call"),
        "the convolutions' activations",
    ),
    Site(
        "cnn",
        "border-mask",
        ("masked_fill",),
        ("broadcast-input", "long-dim", "repeat-call"),
        "the feature maps",
    ),
    Site("cnn", "clip", ("clamp",), ("negative-scalar", "repeat-call"), "the activations"),
    Site("attention", "query-bias", ("add",), ("permuted",), "the queries", ("scrambled",)),
    Site(
        "attention",
        "causal-mask",
        ("masked_fill",),
        ("broadcast-input", "negative-scalar", "long-dim"),
        "the attention scores",
    ),
    Site("attention", "softcap", ("clamp",), ("negative-scalar",), "the attention scores"),
)
# Sites whose kernel families include the optimizer's `mul_` only through AdamW's weight decay.
_DECAY_ONLY = ("flat-buffer", "even-inputs")


def sites_for(kind: str) -> list[Site]:
    """Every site where a condition of this kind can be planted."""
    return [site for site in SITES if kind in site.kinds]


def _power_of_two_below(n: int, at_least: int) -> int:
    """The largest power of two below n, and at least `at_least` (CourseError if none)."""
    bound = 1 << max(0, (n - 1).bit_length() - 1)
    if bound < at_least:
        raise CourseError(f"no bound between {at_least} and {n}")
    return bound


def _recipe(rng: random.Random, op: str, habit: str, low: float, high: float) -> dict:
    """Optimizer, learning rate and options: AdamW when the planted op is its weight decay."""
    decay = op == "mul" and habit in _DECAY_ONLY
    optimizer = "AdamW" if decay or rng.random() < 0.4 else "Adam"
    recipe = {"optimizer": optimizer, "lr": round(rng.uniform(low, high), 3)}
    if optimizer == "AdamW":
        recipe["weight_decay"] = rng.choice((0.05, 0.1, 0.2))
    if habit == "foreach":
        recipe["foreach"] = True
    return recipe


# habit -> (families, the options it sets, drawn): see Note [Habits that are not the trigger]
_OPTION_HABITS: dict[str, tuple[tuple[str, ...], Callable[[random.Random], dict]]] = {
    "inplace-relu": (("mlp", "cnn"), lambda rng: {"inplace": True}),
    "clip": (("cnn",), lambda rng: {"clip": rng.choice((1.0, 2.0, 3.0))}),
    "query-bias": (("attention",), lambda rng: {"query_bias": True}),
    "softcap": (("attention",), lambda rng: {"softcap": rng.choice((3.0, 5.0))}),
    "foreach": (_FAMILIES, lambda rng: {"foreach": True}),
}
# the order of a constructor call's options: the model's, the habits', then the recipe's
_ORDER = ("inplace", "clip", "query_bias", "softcap", "optimizer", "lr", "weight_decay", "foreach")


def _other_habits(noise: random.Random, site: Site) -> dict:
    """The options of the family's other option habits, each set with even odds (Note [Habits
    that are not the trigger])."""
    options: dict = {}
    for habit, (families, drawn) in _OPTION_HABITS.items():
        if site.family in families and noise.random() < 0.5 and habit != site.habit:
            options |= drawn(noise)
    return options


def _call(name: str, options: dict) -> str:
    """A constructor call as source text: name(generator, key=value...), its options in one
    order whichever habit set them."""
    ordered = sorted(options, key=lambda k: _ORDER.index(k) if k in _ORDER else -1)
    pairs = [f"{k}={options[k]!r}" for k in ordered]
    return f"{name}({', '.join(['generator', *pairs])})"


def _recipe_words(recipe: dict, steps: int) -> str:
    extra = f", weight decay {recipe['weight_decay']:g}" if "weight_decay" in recipe else ""
    return f"{recipe['optimizer']} at lr {recipe['lr']:g}{extra}, {steps} full-batch steps"


def _path(name: str) -> str:
    """The attribute path of a parameter name: "layers.1.weight" -> "model.layers[1].weight"."""
    parts = [f"[{p}]" if p.isdigit() else f".{p}" for p in name.split(".")]
    return "model" + "".join(parts)


@dataclass(frozen=True)
class _Draft:
    """What a family draws before the habit: the parts every habit builds on."""

    model: str  # the class
    task: str
    options: dict  # the constructor's arguments, the recipe included
    data: str
    steps: int
    description: str
    weights: dict[str, tuple[int, int]]  # the 2-D weights a habit may touch: name -> shape
    buffer: tuple[str, ...]  # the weights a flat buffer would hold
    bounds: dict[str, int]  # the bound each size condition needs in this draft


def design(
    rng: random.Random,
    site: Site,
    kind: str,
    op: str,
    also: str = "",
    noise: random.Random | None = None,
) -> Design:
    """Draw a whole design for a site and condition kind, and the second condition a pair
    needs (sizes chosen so that both hold where the habit strikes). `noise`, a stream of its
    own, draws what is not the bug: the options of other habits and a decoy symptom (Notes
    [Habits that are not the trigger] and [Decoy symptoms]); None for neither."""
    draft = _DRAFTERS[site.family](rng, site, kind, op, _ragged(site, kind, also))
    others = _other_habits(noise, site) if noise else {}
    oddity = _oddity(noise, site, kind, draft) if noise else None
    name = rng.choice(sorted(draft.weights))
    target, lines = _path(name), ()
    if site.habit in ("import", "even-inputs"):
        maker = "load_flax" if site.habit == "import" else "keep_even_inputs"
        where = "the Flax port" if site.habit == "import" else "a model with twice the inputs"
        shape = draft.weights[name]
        lines = (f"{target} = {maker}({shape}, generator, device)  # from {where}",)
    elif site.habit == "flat-buffer":
        target = repr(draft.buffer[1:])  # the weights that start inside the buffer
        lines = (f"load_packed(model, {draft.buffer})  # the weights as the C++ app ships them",)
    elif site.habit == "bfloat16":
        lines = ("model = compact(model)  # it has to fit on the phone",)
    elif site.habit == "channels-last":
        lines = ("load_tflite(model)  # the weights the Android team exported",)
    elif site.habit == "wide":
        target = _path(f"layers.{len(draft.weights) - 2}.weight")
    bound = draft.bounds.get(kind, 0)
    if kind == "foreach":
        hit = f"the parameters from number {bound + 1} of the optimizer's list on"
    else:
        hit = site.tensor.format(target=target.removeprefix("model."))
    return Design(
        site.family,
        site.habit,
        draft.task,
        _call(draft.model, others | draft.options),
        lines,
        draft.data,
        draft.steps,
        draft.description + (f" {oddity.sentence}" if oddity else ""),
        target,
        hit,
        bound,
        oddity,
    )


_ODD_REASONS = (
    "kept as the pretrained model has it",
    "fixed, as in the paper",
    "frozen while we tune the rest",
)


def _oddity(noise: random.Random, site: Site, kind: str, draft: _Draft) -> Oddity | None:
    """A frozen bias, with odds of one in three, where freezing it takes nothing from what the
    bug strikes (Note [Decoy symptoms])."""
    if "every" in site.tensor or kind == "foreach" or site.habit == "bfloat16":
        return None
    if noise.random() >= 1 / 3:
        return None
    weights = [n for n in draft.buffer if n.endswith(".weight")]
    biases = [n.removesuffix(".weight") + ".bias" for n in weights] or ["head.bias"]
    return Oddity(noise.choice(biases), noise.choice(_ODD_REASONS))


def _ragged(site: Site, kind: str, also: str) -> bool:
    """Whether the design needs last dimensions that are not a multiple of 4 where it strikes."""
    return "unaligned" in (kind, also) or site.habit == "odd-sizes"


# --- the four families ----------------------------------------------------------------------


def _mlp(rng: random.Random, site: Site, kind: str, op: str, ragged: bool) -> _Draft:
    n = rng.choice((256, 320, 384))
    features, classes = rng.randint(8, 20), rng.randint(3, 6)
    widths = [rng.choice((16, 20, 24, 28, 32, 40)) for _ in range(rng.choice((2, 3)))]
    if ragged:  # every layer's inputs and outputs: no multiple of 4
        features, classes = rng.choice((9, 11, 13, 15)), rng.choice((3, 5))
        widths = [rng.choice((18, 22, 26, 30)) for _ in widths]
    if site.habit == "wide":  # one weight far above 2048 elements, every other one below
        inputs = (42, 46) if ragged else (40, 48)
        widths[-2:] = [rng.choice(inputs), rng.choice((64, 80, 96))]
    sizes = (features, *widths, classes)
    unused = rng.randint(2, 4) if site.habit == "eps" else 0
    recipe = _recipe(rng, op, site.habit, 0.004, 0.02)
    steps = rng.randint(24, 40)
    options = {"sizes": sizes, **({"inplace": True} if site.habit == "inplace-relu" else {})}
    layers = len(sizes) - 1
    empty = f", the last {unused} of them unused slots (always 0)" if unused else ""
    return _Draft(
        "MLP",
        "classify",
        options | recipe,
        f"teacher_blobs(generator, n={n}, features={features}, classes={classes}, unused={unused})",
        steps,
        f"I train an MLP classifier ({features} input features{empty}, hidden widths "
        f"{', '.join(map(str, widths))}, {classes} classes) with "
        f"{_recipe_words(recipe, steps)} on {3 * n // 4} samples.",
        {f"layers.{i}.weight": (sizes[i + 1], sizes[i]) for i in range(layers)},
        tuple(f"layers.{i}.weight" for i in range(layers)),
        {
            "large": 2048,
            "long-dim": 56,  # above every dimension but a wide layer's and the batch
            "foreach": rng.randint(2, 2 * layers - 1),
        },
    )


def _cnn(rng: random.Random, site: Site, kind: str, op: str, ragged: bool) -> _Draft:
    n = rng.choice((128, 160))
    size = rng.choice((10, 14)) if ragged else rng.choice((8, 12))
    channels = (rng.choice((4, 6, 8)), 6 if ragged else rng.choice((4, 6, 8)))
    recipe = _recipe(rng, op, site.habit, 0.01, 0.03)
    steps = rng.randint(16, 24)
    options: dict = {"channels": channels, "size": size}
    if site.habit == "inplace-relu" or (site.habit == "channels-last" and op == "relu"):
        options["inplace"] = True
    if site.habit == "clip":
        options["clip"] = rng.choice((1.0, 2.0, 3.0))
    activations = n // 2 * min(channels) * size * size
    return _Draft(
        "ConvNet",
        "classify",
        options | recipe,
        f"stripes(generator, n={n}, size={size})",
        steps,
        f"Our small CNN classifies {size}x{size} images of stripes (two 3x3 convolutions with "
        f"{channels[0]} and {channels[1]} channels, then a linear head), "
        f"{_recipe_words(recipe, steps)} on {n // 2} images.",
        {"head.weight": (4, channels[1])},
        ("conv1.weight", "conv2.weight", "head.weight"),
        {
            "large": _power_of_two_below(activations, 4096),
            "long-dim": rng.choice((48, 56)),  # above every parameter's dimensions
            "foreach": rng.randint(2, 5),
        },
    )


def _attention(rng: random.Random, site: Site, kind: str, op: str, ragged: bool) -> _Draft:
    n = rng.choice((256, 320))
    heads = rng.choice((2, 4))
    width, tokens = heads * rng.choice((2, 3, 4)), rng.randint(5, 8)
    if ragged:  # weights, head widths and score rows: no multiple of 4
        heads, width, tokens = 2, rng.choice((6, 10)), rng.choice((5, 6, 7))
    recipe = _recipe(rng, op, site.habit, 0.01, 0.03)
    steps = rng.randint(24, 40)
    options: dict = {"width": width, "heads": heads, "tokens": tokens}
    if site.habit == "query-bias":
        options["query_bias"] = True
    if site.habit == "softcap":
        options["softcap"] = rng.choice((3.0, 5.0))
    teacher = f"Attention(generator, {width}, {heads}, {tokens})"
    return _Draft(
        "Attention",
        "regress",
        options | recipe,
        f"teacher_sequences(generator, n={n}, teacher={teacher}, width={width})",
        steps,
        f"We fit a {heads}-head causal self-attention model (width {width}, {tokens} tokens per "
        f"sequence) to a teacher network, {_recipe_words(recipe, steps)} on {3 * n // 4} "
        "sequences.",
        {name: (width, width) for name in ("wq", "wk", "wv")},
        ("wq", "wk", "wv"),
        {"long-dim": rng.choice((48, 56)), "foreach": rng.randint(2, 3)},
    )


def _bag_of_words(rng: random.Random, site: Site, kind: str, op: str, ragged: bool) -> _Draft:
    n = rng.choice((256, 320, 384))
    vocab, dim = rng.randint(24, 48), rng.choice((10, 14, 18) if ragged else (8, 12, 16))
    if site.habit == "vocab":  # a vocabulary longer than any other dimension, far larger
        vocab, dim = rng.randint(72, 96), rng.choice((30, 34)) if ragged else 32
    unused = rng.randint(4, 10)
    recipe = _recipe(rng, op, site.habit, 0.01, 0.05)
    steps = rng.randint(20, 35)
    return _Draft(
        "BagOfWords",
        "regress",
        {"vocab": vocab, "dim": dim} | recipe,
        f"reviews(generator, n={n}, vocab={vocab}, unused={unused})",
        steps,
        f"Our review scorer multiplies word counts ({vocab} words) by {dim}-dimensional word "
        f"vectors, then a linear head; {_recipe_words(recipe, steps)} on {3 * n // 4} reviews.",
        {"vectors": (vocab, dim)},
        ("vectors", "head.weight"),
        {"large": 2048, "long-dim": rng.choice((48, 56)), "foreach": 1},
    )


_DRAFTERS = {"mlp": _mlp, "cnn": _cnn, "attention": _attention, "bag-of-words": _bag_of_words}
