"""The story: the plateau the SAE hits, and why tuning cannot make it go away.

Notebook 01's lesson: the plateau run beside its contiguous twin and their figures (`plateau`),
the hyperparameter sweep widget (`sweep`), feature recovery (`features`, also shown by 09),
`python -m course plateau` (`cli`) and the lesson's exercises. The model it trains lives one
layer down in `course.model`; no package below the lessons imports this one.
"""
