"""Hand-derived traces: the address each thread of a suite kernel uses, written from its source.

They let the counting rules be checked against the H100 measurements without the emulator.
"""

from __future__ import annotations

import numpy as np

from cudakit.emu.trace import AccessBatch, Trace

BASE = [(k + 1) << 24 for k in range(4)]  # device address of argument k (256-byte aligned)


class Threads:
    """Every thread of a launch, ordered by (block, warp, lane), with helpers to record accesses."""

    def __init__(self, grid, block):
        gx, gy, _ = grid
        bx, by, _ = block
        per_block = bx * by
        warps = -(-per_block // 32)
        slots = warps * 32
        b = np.arange(gx * gy).repeat(slots)
        t = np.tile(np.arange(slots), gx * gy)
        self.exists = t < per_block
        self.bx, self.by = b % gx, b // gx
        self.tx, self.ty = t % bx, t // bx
        self.t = t
        self.bdx, self.bdy = bx, by
        self.warps = gx * gy * warps
        self.block_ids = np.stack([self.bx, self.by, 0 * self.bx], 1)[::32]
        self.warp_ids = (t // 32)[::32]
        self.trace = Trace()

    @property
    def i(self):
        return self.bx * self.bdx * self.bdy + self.t

    def access(self, space, op, size, address, active=True, line=1):
        mask = (self.exists & active).reshape(self.warps, 32)
        keep = mask.any(axis=1)  # the emulator records only warps with active lanes
        addr = np.asarray(address, dtype=np.int64).astype(np.uint64).reshape(self.warps, 32)
        self.trace.add(AccessBatch("k", line, 1, line, space, op, size, self.block_ids[keep],
                                   self.warp_ids[keep], mask[keep], addr[keep] * mask[keep]))


def one_d(name, threads=1024, block=128):
    return Threads(((threads + block - 1) // block, 1, 1), (block, 1, 1))


def copy_like(th, n, load_index, store_index, size=4, load_size=None, extra=True):
    """out[store_index] = in[load_index] for i < n (and `extra`)."""
    active = (th.i < n) & extra
    th.access("global", "ld", load_size or size, BASE[0] + (load_size or size) * load_index,
              active, line=1)
    th.access("global", "st", size, BASE[1] + size * store_index, active, line=2)


def shared_roundtrip(th, size, store_slot, load_slot):
    """s[store_slot] = in[i]; sync; out[i] = s[load_slot]."""
    th.access("global", "ld", size, BASE[0] + size * th.i, line=1)
    th.access("shared", "st", size, size * store_slot, line=2)
    th.access("shared", "ld", size, size * load_slot, line=3)
    th.access("global", "st", size, BASE[1] + size * th.i, line=4)


def reduction(kind):
    th = Threads((4, 1, 1), (256, 1, 1))
    t = th.t
    th.access("global", "ld", 4, BASE[0] + 4 * th.i, line=1)
    th.access("shared", "st", 4, 4 * t, line=2)
    steps = [1 << k for k in range(8)]
    for step in steps if kind != "sequential" else steps[::-1]:
        if kind == "divergent":
            active, a, b = t % (2 * step) == 0, t, t + step
        elif kind == "interleaved":
            active, a, b = 2 * step * t < 256, 2 * step * t, 2 * step * t + step
        else:
            active, a, b = t < step, t, t + step
        th.access("shared", "ld", 4, 4 * a, active, line=3)
        th.access("shared", "ld", 4, 4 * b, active, line=4)
        th.access("shared", "st", 4, 4 * a, active, line=5)
    th.access("shared", "ld", 4, 0 * t, t == 0, line=6)
    th.access("global", "st", 4, BASE[1] + 4 * th.bx, t == 0, line=7)
    return th


def transpose(kind):
    th = Threads((2, 2, 1), (32, 8, 1))
    w = 64
    x, y = th.bx * 32 + th.tx, th.by * 32 + th.ty
    pitch = 33 if kind == "padded" else 32
    for j in range(0, 32, 8):
        th.access("global", "ld", 4, BASE[0] + 4 * ((y + j) * w + x), line=1)
        if kind == "naive":
            th.access("global", "st", 4, BASE[1] + 4 * (x * w + y + j), line=2)
        else:
            th.access("shared", "st", 4, 4 * ((th.ty + j) * pitch + th.tx), line=2)
    if kind == "naive":
        return th
    x, y = th.by * 32 + th.tx, th.bx * 32 + th.ty
    for j in range(0, 32, 8):
        th.access("shared", "ld", 4, 4 * (th.tx * pitch + th.ty + j), line=3)
        th.access("global", "st", 4, BASE[1] + 4 * ((y + j) * w + x), line=4)
    return th


def cases() -> dict[str, Threads]:
    """Synthetic traces for the suite cases whose addresses are easy to write down."""
    out = {}
    th = one_d("copy_f32")
    copy_like(th, 1024, th.i, th.i)
    out["copy_f32"] = th
    th = one_d("tail")
    copy_like(th, 1000, th.i, th.i)
    out["copy_f32_tail"] = th
    th = one_d("b48", 1000, 48)
    copy_like(th, 1000, th.i, th.i)
    out["copy_f32_partial_block48"] = th
    for off in (1, 8, 32):
        th = one_d("off")
        copy_like(th, 1024, th.i + off, th.i)
        out[f"load_offset{off}_f32"] = th
    for off in (1, 3):
        th = one_d("soff")
        copy_like(th, 1024, th.i, th.i + off)
        out[f"store_offset{off}_f32"] = th
    for s in (2, 4, 8, 32, 33):
        th = one_d("stride")
        copy_like(th, 1024, th.i * s, th.i)
        out[f"load_stride{s}_f32"] = th
    for s in (2, 32):
        th = one_d("sstride")
        copy_like(th, 1024, th.i, th.i * s)
        out[f"store_stride{s}_f32"] = th
    for off in (0, 1):
        th = one_d("u8")
        copy_like(th, 1024, th.i + off, th.i, size=1)
        out[f"copy_u8_offset{off}"] = th
    for s in (1, 2):
        th = one_d("u16")
        copy_like(th, 1024, th.i * s, th.i, size=2)
        out[f"copy_u16_stride{s}"] = th
    for s in (1, 2, 16):
        th = one_d("f64")
        copy_like(th, 1024, th.i * s, th.i, size=8)
        out[f"copy_f64_stride{s}"] = th
    th = one_d("f2")
    copy_like(th, 1024, th.i, th.i, size=8)
    out["copy_f2_stride1"] = th
    for s in (1, 2, 8):
        th = one_d("f4")
        copy_like(th, 1024, th.i * s, th.i, size=16)
        out[f"copy_f4_stride{s}"] = th
    for g in (8, 32, 1024):
        th = one_d("bc")
        copy_like(th, 1024, th.i // g, th.i)
        out[f"broadcast_group{g}_f32"] = th
    th = one_d("even")
    copy_like(th, 1024, th.i, th.i, extra=th.i % 2 == 0)
    out["even_lanes_f32"] = th
    for lanes in (8, 40):
        th = one_d("first")
        copy_like(th, 1024, th.i, th.i, extra=th.t < lanes)
        out[f"first{lanes}_lanes_f32"] = th
    for s in (1, 2, 4, 8, 16, 32, 33):
        th = one_d("sls")
        shared_roundtrip(th, 4, th.t, th.t * s % 2048)
        out[f"shared_load_stride{s}"] = th
    for s in (2, 32):
        th = one_d("sss")
        shared_roundtrip(th, 4, th.t * s % 2048, th.t)
        out[f"shared_store_stride{s}"] = th
    for words, spacing in ((1, 0), (2, 1), (4, 32), (32, 32)):
        th = one_d("words")
        shared_roundtrip(th, 4, th.t, (th.t % 32 % words) * spacing)
        out[f"shared_words{words}_spacing{spacing}"] = th
    for s in (1, 4, 128):
        th = one_d("su8")
        shared_roundtrip(th, 1, th.t, th.t * s % 4096)
        out[f"shared_u8_stride{s}"] = th
    for s in (1, 2, 16):
        th = one_d("sf64")
        shared_roundtrip(th, 8, th.t, th.t * s % 1024)
        out[f"shared_f64_stride{s}"] = th
    for s in (1, 2, 8):
        th = one_d("sf4")
        shared_roundtrip(th, 16, th.t, th.t * s % 512)
        out[f"shared_f4_stride{s}"] = th
    for kind in ("divergent", "interleaved", "sequential"):
        out[f"reduce_{kind}"] = reduction(kind)
    for kind in ("naive", "tiled", "padded"):
        out[f"transpose_{kind}"] = transpose(kind)
    return out
