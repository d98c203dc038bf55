"""Kernels that use ``mma.sync``, ``ldmatrix``, ``stmatrix`` and ``movmatrix`` through inline
PTX, each fragment gathered and scattered by the PTX ISA's tables (written here in CUDA, apart
from the emulator's :mod:`cudakit.emu.mma`), and what NumPy says they compute.

``tests/emu/test_mma.py`` runs them on the emulator and, marked ``gpu`` (``tools/gpu-check``),
on a GPU against the same NumPy answers, which shows that the tables here are the
hardware's.
"""

from __future__ import annotations

import numpy as np

#: (m, n, k, D type, A type, B type, C type) of every ``mma.sync`` case
CASES = [
    (16, 8, 16, "f32", "f16", "f16", "f32"),
    (16, 8, 8, "f32", "f16", "f16", "f32"),
    (16, 8, 16, "f16", "f16", "f16", "f16"),
    (16, 8, 16, "f32", "bf16", "bf16", "f32"),
    (16, 8, 8, "f32", "tf32", "tf32", "f32"),
    (16, 8, 4, "f32", "tf32", "tf32", "f32"),
    (16, 8, 32, "s32", "s8", "s8", "s32"),
    (16, 8, 16, "s32", "u8", "s8", "s32"),
    (8, 8, 16, "s32", "s8", "u8", "s32"),
    (8, 8, 4, "f64", "f64", "f64", "f64"),
    (16, 8, 16, "f64", "f64", "f64", "f64"),
    (16, 8, 64, "s32", "s4", "s4", "s32"),
    (16, 8, 32, "s32", "u4", "s4", "s32"),
    (8, 8, 32, "s32", "s4", "u4", "s32"),
]
#: bits of each type, its C storage type, and NumPy's for it
TYPES = {"f16": (16, "unsigned short", np.float16), "bf16": (16, "unsigned short", None),
         "tf32": (32, "unsigned int", np.float32), "f32": (32, "float", np.float32),
         "s8": (8, "unsigned char", np.int8), "u8": (8, "unsigned char", np.uint8),
         "s32": (32, "int", np.int32), "f64": (64, "double", np.float64),
         "s4": (4, "unsigned char", None), "u4": (4, "unsigned char", None)}


def name(case) -> str:
    m, n, k, d, a, b, c = case
    return f"mma_m{m}n{n}k{k}_{d}_{a}_{b}_{c}"


def _gather(var: str, role: str, m: int, per: int, regs: int, stride: str, bits: int) -> str:
    """CUDA that fills ``var[regs]`` from the matrix in memory: A (m x k, by rows) and B
    (k x n, by columns) by the PTX tables: A's register r holds row g + 8 (r % (m / 8)),
    columns (r / (m / 8)) 4 per + t per + j; B's holds column g, rows r 4 per + t per + j."""
    if role == "a":
        row = f"g + 8 * (r % {m // 8})"
        col = f"(r / {m // 8}) * {4 * per} + t * {per} + j"
    else:
        row = f"r * {4 * per} + t * {per} + j"
        col = "g"
        row, col = col, row  # B is kept by columns: element (k, n) at n * ldb + k
    if bits == 64:
        return f"for (int r = 0; r < {regs}; ++r) {{ int j = 0; {var}[r] = " \
               f"src_{role}[({row}) * {stride} + {col}]; }}"
    mask = (1 << bits) - 1  # a 4-bit element is the low half of its byte in memory
    return (f"for (int r = 0; r < {regs}; ++r) {{ {var}[r] = 0u; "
            f"for (int j = 0; j < {per}; ++j) {var}[r] |= ((unsigned)src_{role}"
            f"[({row}) * {stride} + {col}] & {mask}u) << ({bits} * j); }}")


def source(case) -> str:
    """One warp: D = A B + C with every fragment moved by the PTX tables."""
    m, n, k, dt, at, bt, ct = case
    sa, sb, sc, sd = (TYPES[t][1] for t in (at, bt, ct, dt))
    pa, pb = (max(1, 32 // TYPES[t][0]) for t in (at, bt))  # elements per register
    na, nb = m * k // (32 * pa), k * n // (32 * pb)
    pc = 2 if ct == "f16" else 1
    pd = 2 if dt == "f16" else 1
    nc, nd = m * n // (32 * pc), m * n // (32 * pd)
    wide = TYPES[at][0] == 64
    reg = "double" if wide else "unsigned"
    acc_reg = "double" if dt == "f64" else ("unsigned" if dt in ("f16", "s32") else "float")
    cons = {"double": "d", "unsigned": "r", "float": "f"}
    # C and D: element e = r * per + j of a lane is row 8 (e / 2) + g, column 2 t + e % 2
    def acc(var: str, count: int, per: int, store: bool, tname: str) -> str:
        bits = TYPES[tname][0]
        elem = f"(8 * ((r * {per} + j) / 2) + g) * {n} + 2 * t + (r * {per} + j) % 2"
        if per == 1 and not store:
            return f"for (int r = 0; r < {count}; ++r) {{ int j = 0; " \
                   f"{var}[r] = *({acc_reg} *)&src_c[{elem}]; }}"
        if per == 1:
            return f"for (int r = 0; r < {count}; ++r) {{ int j = 0; " \
                   f"*({acc_reg} *)&dst[{elem}] = {var}[r]; }}"
        if not store:
            return (f"for (int r = 0; r < {count}; ++r) {{ {var}[r] = 0u; for (int j = 0; "
                    f"j < {per}; ++j) {var}[r] |= (unsigned)src_c[{elem}] << ({bits} * j); }}")
        return (f"for (int r = 0; r < {count}; ++r) for (int j = 0; j < {per}; ++j) "
                f"dst[{elem}] = (unsigned short)({var}[r] >> ({bits} * j));")
    operands = [f"%{i}" for i in range(nd + na + nb + nc)]
    d_ops = "{" + ",".join(operands[:nd]) + "}"
    a_ops = "{" + ",".join(operands[nd:nd + na]) + "}"
    b_ops = "{" + ",".join(operands[nd + na:nd + na + nb]) + "}"
    c_ops = "{" + ",".join(operands[nd + na + nb:]) + "}"
    sat = ".satfinite" if dt == "s32" and m == 16 and k == 32 else ""
    opcode = f"mma.sync.aligned.m{m}n{n}k{k}.row.col{sat}.{dt}.{at}.{bt}.{ct}"
    outs = ", ".join(f'"={cons[acc_reg]}"(rd[{i}])' for i in range(nd))
    ins = ", ".join([f'"{cons[reg]}"(ra[{i}])' for i in range(na)] +
                    [f'"{cons[reg]}"(rb[{i}])' for i in range(nb)] +
                    [f'"{cons[acc_reg]}"(rc[{i}])' for i in range(nc)])
    return f"""
extern "C" __global__ void {name(case)}(const {sa} *src_a, const {sb} *src_b,
                                      const {sc} *src_c, {sd} *dst)
{{
    int lane = threadIdx.x % 32, g = lane / 4, t = lane % 4;
    {reg} ra[{na}], rb[{nb}];
    {acc_reg} rc[{nc}], rd[{nd}];
    {_gather("ra", "a", m, pa, na, str(k), TYPES[at][0])}
    {_gather("rb", "b", m, pb, nb, str(k), TYPES[bt][0])}
    {acc("rc", nc, pc, False, ct)}
    asm volatile("{opcode} {d_ops}, {a_ops}, {b_ops}, {c_ops};" : {outs} : {ins});
    {acc("rd", nd, pd, True, dt)}
}}
"""


def operands(case, rng):
    """A (m x k), B stored by columns (n x k), C (m x n) as the kernel reads them, and the
    D it should write. Values are small integers (halves of them for the float types), so
    that every product and sum is exact in each type."""
    m, n, k, dt, at, bt, ct = case

    def values(shape, t):
        if t in ("s4", "u4"):  # one nibble a byte, as the kernel gathers them
            v = rng.integers(0 if t == "u4" else -8, 8 if t == "s4" else 16, shape)
            return v.astype(np.float64), (v & 0xF).astype(np.uint8)
        if t in ("s8", "u8"):
            v = rng.integers(0 if t == "u8" else -8, 8, shape)
            return v.astype(np.float64), v.astype(TYPES[t][2])
        v = rng.integers(-6, 7, shape) / 2.0
        if t == "bf16":
            return v, (v.astype(np.float32).view(np.uint32) >> 16).astype(np.uint16)
        if t == "f16":
            return v, v.astype(np.float16).view(np.uint16)
        if t == "tf32":
            return v, v.astype(np.float32).view(np.uint32)
        return v, v.astype(TYPES[t][2])

    a, a_mem = values((m, k), at)
    b, b_mem = values((n, k), bt)
    c, c_mem = values((m, n), "s8" if ct == "s32" else ct)
    if ct == "s32":
        c_mem = c_mem.astype(np.int32)
    d = a @ b.T + c
    want = d.astype(np.float16).view(np.uint16) if dt == "f16" else d.astype(TYPES[dt][2])
    return a_mem, b_mem, c_mem, want


#: every lane gives the address of one row (8 halves) of one of four 8 x 8 matrices, and
#: writes the registers it gets back: ldmatrix .x1, .x2, .x4 and their .trans; then
#: stmatrix (sm_90) puts registers back as rows, and movmatrix transposes one matrix
MOVES = r"""
extern "C" __global__ void moves(const unsigned short *in, unsigned *out, unsigned short *back)
{
    __shared__ unsigned short rows[4 * 64], again[4 * 64];
    int lane = threadIdx.x;
    for (int e = lane; e < 256; e += 32) rows[e] = in[e];
    __syncwarp();
    // lane l points at row l % 8 of matrix l / 8, the rows of each matrix 24 halves apart
    // in a shuffled order, so that the addresses are not simply consecutive
    int m = lane / 8, r = lane % 8;
    unsigned addr = (unsigned)__cvta_generic_to_shared(rows + m * 64 + ((r * 3) % 8) * 8);
    unsigned x1, x2a, x2b, x4[4], t1, t4[4], mv;
    asm volatile("ldmatrix.sync.aligned.m8n8.x1.shared.b16 {%0}, [%1];" : "=r"(x1) : "r"(addr));
    asm volatile("ldmatrix.sync.aligned.m8n8.x2.shared.b16 {%0,%1}, [%2];"
                 : "=r"(x2a), "=r"(x2b) : "r"(addr));
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];"
                 : "=r"(x4[0]), "=r"(x4[1]), "=r"(x4[2]), "=r"(x4[3]) : "r"(addr));
    asm volatile("ldmatrix.sync.aligned.m8n8.x1.trans.shared.b16 {%0}, [%1];"
                 : "=r"(t1) : "r"(addr));
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared::cta.b16 {%0,%1,%2,%3}, [%4];"
                 : "=r"(t4[0]), "=r"(t4[1]), "=r"(t4[2]), "=r"(t4[3]) : "r"(addr));
    asm volatile("movmatrix.sync.aligned.m8n8.trans.b16 %0, %1;" : "=r"(mv) : "r"(x4[1]));
    unsigned *o = out + lane * 12;
    o[0] = x1; o[1] = x2a; o[2] = x2b; o[3] = t1; o[8] = mv;
    for (int i = 0; i < 4; ++i) o[4 + i] = x4[i];
    for (int i = 0; i < 3; ++i) o[9 + i] = t4[i + 1];
    unsigned to = (unsigned)__cvta_generic_to_shared(again + m * 64 + ((r * 5) % 8) * 8);
    asm volatile("stmatrix.sync.aligned.m8n8.x4.trans.shared.b16 [%0], {%1,%2,%3,%4};"
                 :: "r"(to), "r"(x4[0]), "r"(x4[1]), "r"(x4[2]), "r"(x4[3]) : "memory");
    __syncwarp();
    for (int e = lane; e < 256; e += 32) back[e] = again[e];
}
"""


def moves_expected(halves: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """What ``moves`` writes for input ``halves`` (256 uint16), by the PTX tables: lane
    ``l`` gets elements 2t, 2t + 1 of row g of each matrix (of column g with .trans)."""
    lane = np.arange(32)
    g, t = lane // 4, lane % 4
    # the matrix as ldmatrix sees it: its row r is the one lane r gave, stored at row 3r % 8
    mats = halves.reshape(4, 8, 8)[:, (np.arange(8) * 3) % 8, :].astype(np.uint32)

    def regs(mat, trans=False):
        mm = mat.T if trans else mat
        return mm[g, 2 * t] | (mm[g, 2 * t + 1] << 16)

    out = np.zeros((32, 12), np.uint32)
    out[:, 0] = regs(mats[0])
    out[:, 1], out[:, 2] = regs(mats[0]), regs(mats[1])
    out[:, 3] = regs(mats[0], True)
    for i in range(4):
        out[:, 4 + i] = regs(mats[i])
    out[:, 8] = regs(mats[1], True)
    for i in range(3):
        out[:, 9 + i] = regs(mats[i + 1], True)
    # stmatrix .trans writes matrix i transposed, its row r to the address lane 8i + r gave
    back = np.zeros((4, 8, 8), np.uint16)
    for i in range(4):
        back[i, (np.arange(8) * 5) % 8, :] = mats[i].T
    return out, back.reshape(-1)

