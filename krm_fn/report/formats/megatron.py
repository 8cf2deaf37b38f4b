"""Megatron-LM, Megatron-core and Megatron-DeepSpeed training logs.

A step line (prefixes such as ``1:  ``, ``[default0]: `` or ``vm-07-14: `` and a
``[YYYY-MM-DD HH:MM:SS]`` timestamp are optional)::

    [2024-10-24 09:49:45] iteration 20/ 40000 | consumed samples: 1280 | elapsed time per
    iteration (ms): 3367.6 | throughput per GPU (TFLOP/s/GPU): 5.8 | ... | lm loss: 1.155786E+01
    | ... | number of skipped iterations: 0 | number of nan iterations: 0 |

Megatron ends every field, the last included, with `` |``: a line that does not has lost its end.
Read with the ``megatron-training`` LogProfile unless the measurement names another.
"""

from __future__ import annotations

import re

from krm_fn.report.formats import PhraseRule
from krm_fn.report.formats.training import StepSyntax, training_format

SYNTAX = StepSyntax(
    name="megatron",
    profile="megatron-training",
    literal="iteration",
    header=re.compile(r"(?<!, )\biteration\s+(?P<iteration>\d+)\s*/\s*(?P<total>\d+)\s*\|"),
    elapsed=(("elapsed time per iteration (ms)", 1.0),),
    tflops=("throughput per GPU (TFLOP/s/GPU)", "TFLOPs"),
    loss=("lm loss",),
    nan_fields=("lm loss", "grad norm"),
    batch="global batch size",
    tokens_per_gpu=("tokens per GPU (tokens/s/GPU)",),
    closed_by_bar=True,
)

FORMAT = training_format(
    SYNTAX,
    (
        PhraseRule(
            re.compile(r"found NaN in local grad norm"),
            "WorkloadFailed",
            "nan-grad-norm",
            "NaN gradient norm (the loss diverged)",
            ("found NaN",),
        ),
    ),
)
