"""Platforms as data: the platform table, detection, GPU models and the overlay of a run.

* :mod:`krm_fn.platforms.catalog`: the table (``krm_fn/data/platforms.yaml`` and the site
  catalogs named by ``platformCatalog``) as frozen pydantic models; loading and merging.
* :mod:`krm_fn.platforms.detect`: a node's or a fleet's platform, from the table's rules.
* :mod:`krm_fn.platforms.gpu`: GPU product parsing and the fleet's GPU model vote.
* :mod:`krm_fn.platforms.node_gpus`: GPU counts and products (incl. ResourceSlices), NICs.
* :mod:`krm_fn.platforms.templates`: ``{gpusPerNode}``-style templates in table values.
* :mod:`krm_fn.platforms.overlay`: the override entries matching a run, merged.
* :mod:`krm_fn.platforms.run_platform`: the render's platform stage and offline preview nodes.

Invariants: no platform fact (name, providerID prefix, label, resource, GPU default) is
written in these modules; each comes from the table.
"""
