"""The fleet layer: which nodes a run may use (inventory) and how they are cut into groups.

Invariant: imports only the api and io layers (enforced by import-linter).
"""
