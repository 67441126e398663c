"""The story: the TopK sparse autoencoder, its data, training, and the plateau it hits.

Teaches the symptom (notebook 01: the loss plateau and the sweep that cannot tune it away), and
provides the model every later lesson experiments on (02 isolation, 08 the fixes and feature
recovery). Lower layers (emps, layout, dispatch, kernels) never import it.
"""
