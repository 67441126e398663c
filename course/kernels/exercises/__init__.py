"""Notebooks 06-07's exercises and predictions, one subpackage per notebook.

`placeholder` (06): a test that catches a lost write, the fixed addcmul_ kernel and an output
placeholder, on hidden outputs under the device's contract. `compiled` (07): the naive C++
kernel's scramble, a compiled kernel right on every layout, and a tiled loop. Nothing is
imported here: the course map loads each lesson's subpackage on its own, so a check of one
notebook never imports the other's.
"""
