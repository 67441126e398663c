"""Isolating the bug: building blocks for controlled experiments on the SAE.

Used by notebook 02: one batch, one backward, a snapshot, one optimizer step, on a device and
profile of the learner's choice, so the learner designs the experiments that rule out gradients,
the optimizer, the dtype and the device.
"""
