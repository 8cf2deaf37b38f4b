"""GitOps helpers: options from the environment, the compact inventory, waves, Argo CD, Flux.

Invariant: used only by the entry points; imports the render and the layers below it.
"""
