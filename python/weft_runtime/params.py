"""Parameter strategies: storage, gradient sync and update on one rank.

Each `spmd.parameter` of a plan becomes a `Param` holding this rank's shard
under the parameter's distribution (Runtime.shard_of of the whole tensor),
and a strategy (docs/Duals.md, "Parameter strategies"). "id axes" are the
mesh axes on which the distribution is `id`; `group` is this rank's group
along them. Gradients follow the partial-sum convention: the gradient a rank
holds of its shard is its partial contribution, and the sync adds the
contributions up.

| strategy | gradient sync over the id group | optimizer steps | after the step |
| --- | --- | --- | --- |
| replicated | all_reduce, once per step | the whole shard | - |
| zero1 | reduce_scatter of the flat shard, once per step | this rank's part | all_gather of the updated parts |
| zero2 | reduce_scatter after every micro-batch, parts accumulated, the full gradient freed | this rank's part | all_gather of the updated parts |
| zero3 | all_reduce of the stored (split) shard's gradient, once per step | the whole stored shard | - |
| buffer | none (no gradient) | nothing | - |

The replicated and ZeRO-3 all-reduces of one group run in buckets, as
PyTorch DDP's do (`ParamSet.sync`): in backward order (the plan's parameters
reversed), the gradients are flattened into buffers of at most the bucket
size, one all_reduce each, and copied back; a gradient of the bucket size or
more is all-reduced alone. The bucket size is the program's (the plan's
`spmd.gradient_bucket_bytes`, weftc --bucket-mb; 25 MiB when it has none);
0 syncs one tensor at a time. docs/CostModel.md "Gradient buckets" prices
the same.

ZeRO-1/2 parts: member i of a group of k holds elements
[n·i // k, n·(i+1) // k) of the flattened shard of n elements (uneven when k
does not divide n; what lib/Exec's interpreter compares). ZeRO-3 stores the
shard split over its gather axes; the program gathers it before each use
(`Param.gathered`), the gather's dual reduce-scatters the gradient over
those axes, and, unless the gathered copy is kept, every tensor the forward
saves from the gathered copy is dropped and gathered again when the backward
needs it (`ParamSet.regather_scope`, torch.autograd.graph.saved_tensors_hooks).
"""

import weakref

import torch

from .errors import WeftRuntimeError

STRATEGIES = ("replicated", "zero1", "zero2", "zero3", "buffer")

#: The gradient bucket size when the program gives none (DDP's 25 MiB).
DEFAULT_BUCKET_BYTES = 25 * 1024 * 1024


def part_sizes(n, k):
    """Sizes of the k ZeRO parts of n elements: n·(i+1)//k − n·i//k."""
    return [n * (i + 1) // k - n * i // k for i in range(k)]


class Param:
    """One parameter on this rank: `tensor` is the stored shard (a leaf)."""

    def __init__(self, name, shard, strategy, group, comm, mode="padded"):
        if strategy not in STRATEGIES:
            raise WeftRuntimeError("parameter '%s': unknown strategy '%s'" % (name, strategy))
        if strategy in ("zero1", "zero2") and (group is None or group.size < 1):
            raise WeftRuntimeError("parameter '%s': %s needs an id axis" % (name, strategy))
        self.name, self.strategy, self.group, self.comm, self.mode = (
            name, strategy, group, comm, mode)
        trainable = strategy != "buffer" and shard.is_floating_point()
        self.tensor = shard.detach().clone().requires_grad_(trainable)
        self.trainable = trainable
        n = self.tensor.numel()
        k = group.size if group is not None else 1
        if strategy in ("zero1", "zero2"):
            self.sizes = part_sizes(n, k)
            i = group.index
            self.lo, self.hi = n * i // k, n * (i + 1) // k
        else:
            self.sizes, self.lo, self.hi = [n], 0, n
        self.part_grad = None  # zero2: the accumulated reduced part
        self.synced = None  # the summed gradient of the piece this rank steps
        self.state = None
        self.owner = None  # the ParamSet, whose open regather scope gathered() uses

    # --- ZeRO-3: gather before use -------------------------------------------------
    def gathered(self, rt, shape, dist_, axes, keep=False, scope=None, mode=None):
        """The parameter gathered along each mesh axis of `axes` in turn (the
        plan's spmd.all_gather ops of it, minor axis first, in their `mode`;
        default the Param's), for use in the forward. Unless `keep`, tensors
        saved from the gathered copy inside `scope` (default: the open
        regather scope of the ParamSet) are gathered again in the backward."""
        from .mesh import ID, parse_dist, with_entry
        mode = mode or self.mode
        d = parse_dist(dist_)
        x = self.tensor
        plan = []
        for a in axes:
            plan.append((a, d))
            x = rt.all_gather(x, shape, d, a, mode)
            d = with_entry(d, a, ID)
        if scope is None and self.owner is not None:
            scope = self.owner.scope
        if not keep and scope is not None and x.numel():
            shard = self.tensor

            def regather():
                with torch.no_grad():
                    y = shard.detach()
                    for a, dd in plan:
                        y = rt.all_gather(y, shape, dd, a, mode)
                    return y
            scope.register(x, regather)
        return x

    # --- gradients -----------------------------------------------------------------
    def _flat_grad(self):
        g = self.tensor.grad
        if g is None:
            g = torch.zeros_like(self.tensor)
        return g.reshape(-1)

    def after_micro_batch(self):
        """ZeRO-2: reduce-scatter this micro-batch's gradient and free it."""
        if self.strategy != "zero2" or not self.trainable:
            return
        part = self.comm.reduce_scatter_dim0(self._flat_grad(), self.sizes, self.group)
        self.part_grad = part.clone() if self.part_grad is None else self.part_grad.add_(part)
        self.tensor.grad = None

    def bucket_key(self):
        """What gradients sharing one bucket have in common (group and
        dtype), or None when this parameter's sync is not an all-reduce over
        more than one rank."""
        if (not self.trainable or self.strategy not in ("replicated", "zero3")
                or self.group is None or self.group.size < 2):
            return None
        return (tuple(self.group.axes), tuple(self.group.ranks), self.tensor.dtype)

    def sync(self):
        """The once-per-step gradient sync; leaves the summed gradient of the
        piece this rank steps in `self.synced` (flat)."""
        if not self.trainable:
            return
        if self.strategy in ("replicated", "zero3"):
            g = self._flat_grad().clone()
            self.synced = self.comm.all_reduce(g, self.group, "sum")
        elif self.strategy == "zero1":
            self.synced = self.comm.reduce_scatter_dim0(self._flat_grad(), self.sizes, self.group)
        elif self.strategy == "zero2":
            if self.part_grad is None:
                self.part_grad = self.tensor.new_zeros(self.hi - self.lo)
            self.synced = self.part_grad

    @torch.no_grad()
    def step(self, optimizer):
        """Steps this rank's piece; ZeRO-1/2 then all-gather the parts."""
        if not self.trainable:
            return
        flat = self.tensor.detach().view(-1)
        piece = flat[self.lo:self.hi]
        if self.state is None:
            self.state = optimizer.init_state(piece)
        if piece.numel():
            optimizer.update(piece, self.synced.reshape(piece.shape), self.state)
        if self.strategy in ("zero1", "zero2"):
            whole = self.comm.all_gather_dim0(piece.clone(), self.sizes, self.group, self.mode)
            flat.copy_(whole)

    def zero_grad(self):
        self.tensor.grad = None
        self.part_grad = None
        self.synced = None


class _Token:
    """What a regather scope saves in place of a tensor of a gathered copy."""
    __slots__ = ("regather", "size", "stride", "offset")

    def __init__(self, regather, t):
        self.regather = regather
        self.size, self.stride, self.offset = t.size(), t.stride(), t.storage_offset()


class RegatherScope:
    """saved_tensors_hooks that drop tensors of registered gathered copies
    and gather them again when the backward unpacks them. `regathers`
    counts the gathers made in the backward."""

    def __init__(self, owner=None):
        self._live = {}
        self.regathers = 0
        self._owner = owner

    def register(self, full, regather):
        """`full` is a gathered copy (contiguous); regather() makes it again."""
        key = (full.device, full.untyped_storage().data_ptr())
        base = full.storage_offset()

        def again():
            return regather().contiguous(), base
        self._live[key] = again
        weakref.finalize(full, self._live.pop, key, None)

    def _pack(self, t):
        if not t.numel():
            return t
        fn = self._live.get((t.device, t.untyped_storage().data_ptr()))
        return t if fn is None else _Token(fn, t)

    def _unpack(self, p):
        if isinstance(p, _Token):
            self.regathers += 1
            if self._owner is not None:
                self._owner.regathers += 1
            y, base = p.regather()
            return y.as_strided(p.size, p.stride, y.storage_offset() + p.offset - base)
        return p

    def __enter__(self):
        self._hooks = torch.autograd.graph.saved_tensors_hooks(self._pack, self._unpack)
        self._hooks.__enter__()
        if self._owner is not None:
            self._owner.scope = self
        return self

    def __exit__(self, *exc):
        if self._owner is not None:
            self._owner.scope = None
        return self._hooks.__exit__(*exc)


class ParamSet:
    """The parameters of one rank, in the plan's order."""

    def __init__(self, bucket_bytes=DEFAULT_BUCKET_BYTES):
        self.params = {}
        self.scope = None
        self.regathers = 0  # ZeRO-3 gathers made in backward passes
        self.bucket_bytes = bucket_bytes

    def add(self, param):
        self.params[param.name] = param
        param.owner = self
        return param

    def __getitem__(self, name):
        return self.params[name]

    def __iter__(self):
        return iter(self.params.values())

    def regather_scope(self):
        """A scope for one forward pass: ZeRO-3 gathered copies made inside
        it are dropped from the saved tensors and regathered in the backward."""
        return RegatherScope(self)

    def after_micro_batch(self):
        for p in self:
            p.after_micro_batch()

    def sync(self):
        """Every parameter's once-per-step sync; the all-reduces of one
        group in buckets of at most `bucket_bytes` (module docstring)."""
        if self.bucket_bytes <= 0:
            for p in self:
                p.sync()
            return
        open_buckets = {}  # bucket key -> (params, bytes) not yet reduced
        for p in reversed(list(self.params.values())):
            key = p.bucket_key()
            if key is None:
                p.sync()
                continue
            size = p.tensor.numel() * p.tensor.element_size()
            if size >= self.bucket_bytes:
                p.sync()
                continue
            members, filled = open_buckets.get(key, ([], 0))
            if members and filled + size > self.bucket_bytes:
                self._reduce(members)
                members, filled = [], 0
            members.append(p)
            open_buckets[key] = (members, filled + size)
        for members, _ in open_buckets.values():
            self._reduce(members)

    @staticmethod
    def _reduce(members):
        """One all_reduce of the members' gradients flattened into one
        buffer; each member's `synced` is its part of the sum."""
        if len(members) == 1:
            members[0].sync()
            return
        first = members[0]
        buffer = torch.cat([p._flat_grad() for p in members])
        first.comm.all_reduce(buffer, first.group, "sum")
        for p, part in zip(members, buffer.split([p.tensor.numel() for p in members])):
            p.synced = part

    def step(self, optimizer):
        for p in self:
            p.step(optimizer)

    def zero_grad(self):
        for p in self:
            p.zero_grad()
