"""Case closed: the three fixes and the checklist for next time.

Used by notebook 09: fixing the SAE three ways and checking a model and optimizer for the layouts
that broke it.
"""
