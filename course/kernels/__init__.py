"""Kernels: how a kernel can compute the right answer and still lose it.

Used by notebooks 06 (the Placeholder lab on the emulated device) and 07 (compiled C++, optional
GPU) kernels for addcmul_ with their benchmark.
"""
