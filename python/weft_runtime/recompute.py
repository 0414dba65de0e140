"""Activation recomputation: `spmd.local ... {recompute}` runs.

A run of consecutive recomputing locals (docs/Dialects/Spmd.md,
`spmd.local`) keeps none of its saved tensors across the forward pass: the
backward runs the run's forward again first. The emitter wraps the run in a
function of the run's inputs from outside it and calls `recompute(fn,
*inputs)`: torch.utils.checkpoint with use_reentrant=False, so the run's
recipe all-reduces and collectives are made again in the backward, on every
rank in the same order. Dropout masks are keyed by global index
(keyed_random.py), so the recomputed forward draws the same masks without
saving the generator's state.
"""

import torch.utils.checkpoint


def recompute(fn, *inputs):
    """fn(*inputs), keeping only `inputs` for the backward."""
    return torch.utils.checkpoint.checkpoint(fn, *inputs, use_reentrant=False,
                                             preserve_rng_state=False)
