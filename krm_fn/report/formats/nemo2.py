"""NeMo 2 (NeMo framework with Lightning and Megatron-core) training logs.

A step line, printed by NeMo's progress logger once per logged step::

    Training epoch 0, iteration 97/99 | lr: 1.469e-05 | global_batch_size: 128 |
    global_step: 97 | reduced_train_loss: 6.265 | train_step_timing in s: 12.22 |
    tokens_per_sec_per_gpu: 1.073e+04 | consumed_samples: 12544

(``TFLOPS_per_GPU: 866.5`` with the throughput callback). The iteration counts from 0 within
an epoch, ``global_step`` across epochs; the report counts steps from 1 (``global_step`` + 1).
Training finished when the last line says ``iteration N/N``. Lines do not end with ``|``.
Read with the ``nemo2-training`` LogProfile (ours: NVCRE has none for NeMo 2).
"""

from __future__ import annotations

import re

from krm_fn.report.formats.training import StepSyntax, training_format

SYNTAX = StepSyntax(
    name="nemo2",
    profile="nemo2-training",
    literal="Training epoch",
    header=re.compile(r"\bTraining epoch \d+, iteration (?P<iteration>\d+)/(?P<total>\d+)\s*\|"),
    elapsed=(("train_step_timing in s", 1000.0),),
    tflops=("TFLOPS_per_GPU",),
    loss=("reduced_train_loss",),
    nan_fields=("reduced_train_loss", "grad_norm"),
    batch="global_batch_size",
    tokens_per_gpu=("tokens_per_sec_per_gpu",),
    step_field="global_step",
    zero_based=True,
)

FORMAT = training_format(SYNTAX)
