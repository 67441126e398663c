"""The story's model, as every lesson trains it: the TopK SAE, its data, training and runs.

The layer just above the emulated device: `sae` (the model and its two inits), `data` (synthetic
activations with known features), `training` (the loop and its per-step History), `runs` (one
call that trains it on a profile: `run`, `fresh_model`, `trainer`, the cached `dataset`) and
`encoder_layout` (how the encoder got its strides). The lessons of notebooks 01, 02, 03 and 09
train it, 04 shows its layouts, 06's checker reruns it with the learner's kernel; it imports only
the shared pieces and `emps`, never a concept tool or a lesson.
"""
