"""Start here: is the machine ready, and how does the course work?

Used by notebook 00: its warm-up exercise (put a tensor on the emulated device).
"""
