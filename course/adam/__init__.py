"""Inside Adam: the update rule from scratch, the installed adam.py, and which ops break.

Used by notebook 03: Adam written by hand and checked against torch, the bias-correction widget,
the source of torch.optim.adam read at run time, op isolation by output and input layout, and the
bug switchboard (its cases in `switchboard_cases`, which needs no ipywidgets, its widget in
`switchboard`). `scratch` imports no experiment: only the emulated device and the tracer,
for the traced step.
"""
