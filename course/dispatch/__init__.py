"""The dispatcher: how one Python call reaches a device-specific kernel.

Used by notebook 05 (the tracer also by 03): torch's op registry (native_functions.yaml), the live
dispatch tables of the installed torch, registering kernels with torch.library, and a tracer of
the aten ops one step runs.
"""
