"""Strides and memory layout: a layout calculator checked against torch, and its widgets.

Used by notebook 04 (and by later lessons that need a tensor of a named layout): shape, stride and
offset arithmetic, view-or-copy rules, chains of view ops, the stride explorer and memory timing.
"""
