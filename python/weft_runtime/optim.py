"""SGD and Adam stepping one flat piece of a parameter.

A parameter strategy (params.py) hands the optimizer the piece of the
parameter this rank updates (the whole stored shard, or its ZeRO-1/2 part)
and that piece's summed gradient, both flat. The arithmetic is
torch.optim's single-tensor code path, in the same order, so one rank
stepping a piece and torch.optim stepping the whole tensor agree to
rounding: SGD (momentum, dampening, weight decay) and Adam (bias correction,
eps added after the square root, weight decay added to the gradient; no
amsgrad).
"""

import torch


class SGD:
    def __init__(self, lr, momentum=0.0, dampening=0.0, weight_decay=0.0):
        self.lr, self.momentum = lr, momentum
        self.dampening, self.weight_decay = dampening, weight_decay

    def init_state(self, piece):
        return {"step": 0, "momentum_buffer": None}

    @torch.no_grad()
    def update(self, piece, grad, state):
        """Steps `piece` in place with its gradient `grad` (same shape)."""
        state["step"] += 1
        g = grad
        if self.weight_decay:
            g = g.add(piece, alpha=self.weight_decay)
        if self.momentum:
            buf = state["momentum_buffer"]
            if buf is None:
                buf = state["momentum_buffer"] = g.clone()
            else:
                buf.mul_(self.momentum).add_(g, alpha=1 - self.dampening)
            g = buf
        piece.add_(g, alpha=-self.lr)


class Adam:
    def __init__(self, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.0):
        self.lr, self.betas, self.eps, self.weight_decay = lr, betas, eps, weight_decay

    def init_state(self, piece):
        return {"step": 0, "exp_avg": torch.zeros_like(piece),
                "exp_avg_sq": torch.zeros_like(piece)}

    @torch.no_grad()
    def update(self, piece, grad, state):
        """Steps `piece` in place with its gradient `grad` (same shape)."""
        b1, b2 = self.betas
        state["step"] += 1
        t = state["step"]
        g = grad
        if self.weight_decay:
            g = g.add(piece, alpha=self.weight_decay)
        m, v = state["exp_avg"], state["exp_avg_sq"]
        m.lerp_(g, 1 - b1)
        v.mul_(b2).addcmul_(g, g, value=1 - b2)
        step_size = self.lr / (1 - b1 ** t)
        denom = (v.sqrt() / ((1 - b2 ** t) ** 0.5)).add_(self.eps)
        piece.addcdiv_(m, denom, value=-step_size)

    def state_elements(self, numel):
        """Optimizer-state elements a piece of `numel` elements keeps."""
        return 2 * numel
