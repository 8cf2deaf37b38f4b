"""Platforms as data: the table, detection from it, GPU models, a run's overlay.

Modules: catalog (the table), detect, gpu, node_gpus, templates, overlay, run_platform. No
platform fact (name, providerID prefix, label, resource, GPU default) is written in them.
"""
