"""Regenerate the Rodinia kernels under ``kernels/``, copying device code unchanged.

Each file is the concatenation of line ranges of files of
https://github.com/yuhc/gpu-rodinia at commit ``COMMIT`` (the Rodinia benchmark suite,
BSD-style licence, Copyright (c) 2008-2011 University of Virginia; the licence text is in
``kernels/LICENSE-rodinia``), with a header naming them. Host code is left out; nothing
inside a range is edited.

Left out: bfs (its kernels' notice allows educational use only), huffman's histogram (an
NVIDIA notice asking for a licence agreement), its scan (an NVIDIA notice that grants no
licence) and pabio_kernels_v2.cu ("All rights reserved", no licence).

Run ``python -m tests.emu.rodinia.extract /path/to/gpu-rodinia`` (a git clone or bare
mirror) to rebuild the files; ``test_rodinia.py`` checks each file's provenance header.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

COMMIT = "9c10d3ea16ddba2ba057cc3951a9efc4c2cc18a4"
REPO = "https://github.com/yuhc/gpu-rodinia"
HERE = Path(__file__).resolve().parent / "kernels"

SPEC: dict[str, list[tuple[str, int, int]]] = {
    "hotspot.cu": [("cuda/hotspot/hotspot.cu", 6, 14), ("cuda/hotspot/hotspot.cu", 100, 215)],
    "pathfinder.cu": [("cuda/pathfinder/pathfinder.cu", 20, 23),
                      ("cuda/pathfinder/pathfinder.cu", 82, 166)],
    "needle.cu": [("cuda/nw/needle.h", 1, 9), ("cuda/nw/needle_kernel.cu", 8, 188)],
    "srad_v1.cu": [("cuda/srad/srad_v1/define.c", 7, 9),
                   ("cuda/srad/srad_v1/extract_kernel.cu", 1, 17),
                   ("cuda/srad/srad_v1/prepare_kernel.cu", 1, 20),
                   ("cuda/srad/srad_v1/reduce_kernel.cu", 1, 104),
                   ("cuda/srad/srad_v1/srad_kernel.cu", 1, 84),
                   ("cuda/srad/srad_v1/srad2_kernel.cu", 1, 54),
                   ("cuda/srad/srad_v1/compress_kernel.cu", 1, 17)],
    "srad_v2.cu": [("cuda/srad/srad_v2/srad.h", 3, 11),
                   ("cuda/srad/srad_v2/srad_kernel.cu", 4, 257)],
    "backprop.cu": [("cuda/backprop/backprop.h", 7, 12),
                    ("cuda/backprop/backprop_cuda_kernel.cu", 12, 113)],
    "gaussian.cu": [("cuda/gaussian/gaussian.cu", 26, 45),
                    ("cuda/gaussian/gaussian.cu", 309, 339)],
    "lud.cu": [("cuda/lud/cuda/lud_kernel.cu", 4, 190)],
    # kmeansPoint reads texture references (removed in CUDA 12): only invert_mapping is kept.
    "kmeans.cu": [("cuda/kmeans/kmeans_cuda_kernel.cu", 34, 47)],
    "nn.cu": [("cuda/nn/nn_cuda.cu", 40, 44), ("cuda/nn/nn_cuda.cu", 63, 72)],
    "hotspot3D.cu": [("cuda/hotspot3D/opt1.cu", 7, 55)],
    "lavaMD.cu": [("cuda/lavaMD/main.h", 5, 88), ("cuda/lavaMD/kernel/kernel_gpu_cuda.cu", 1, 214)],
    "btree.cu": [("cuda/b+tree/common.h", 24, 24), ("cuda/b+tree/common.h", 36, 44),
                 ("cuda/b+tree/common.h", 97, 99), ("cuda/b+tree/common.h", 139, 145),
                 ("cuda/b+tree/kernel/kernel_gpu_cuda.cu", 1, 54),
                 ("cuda/b+tree/kernel/kernel_gpu_cuda_2.cu", 1, 70)],
    "streamcluster.cu": [("cuda/streamcluster/streamcluster_header.cu", 39, 44),
                         ("cuda/streamcluster/streamcluster_cuda.cu", 47, 89)],
    # cfd: the constant-memory initialiser, the step factor, the flux (neighbours, wing and
    # far-field boundaries) and the Runge-Kutta time step, with their device helpers.
    "cfd.cu": [("cuda/cfd/euler3d.cu", 16, 16), ("cuda/cfd/euler3d.cu", 24, 27),
               ("cuda/cfd/euler3d.cu", 92, 95), ("cuda/cfd/euler3d.cu", 167, 178),
               ("cuda/cfd/euler3d.cu", 186, 248), ("cuda/cfd/euler3d.cu", 260, 389),
               ("cuda/cfd/euler3d.cu", 397, 408)],
    # histogram1024_kernel.cu carries NVIDIA's notice, copied with it.
    "hybridsort_histogram.cu": [("cuda/hybridsort/histogram1024_kernel.cu", 1, 118)],
    # particlefilter: the likelihood kernel with its device helpers (LCG, Box-Muller,
    # rounding) and the resampling kernels (sum, normalise + CDF, find index).
    "particlefilter.cu": [("cuda/particlefilter/ex_particle_CUDA_float_seq.cu", 4, 5),
                          ("cuda/particlefilter/ex_particle_CUDA_float_seq.cu", 14, 14),
                          ("cuda/particlefilter/ex_particle_CUDA_float_seq.cu", 84, 90),
                          ("cuda/particlefilter/ex_particle_CUDA_float_seq.cu", 99, 128),
                          ("cuda/particlefilter/ex_particle_CUDA_float_seq.cu", 163, 171),
                          ("cuda/particlefilter/ex_particle_CUDA_float_seq.cu", 220, 226),
                          ("cuda/particlefilter/ex_particle_CUDA_float_seq.cu", 239, 313),
                          ("cuda/particlefilter/ex_particle_CUDA_float_seq.cu", 333, 398)],
    # dwt2d: the forward and reverse 5/3 and 9/7 wavelet kernels (C++ templates) with the
    # headers they need, each with its BSD notice; only the #include lines are left out.
    "dwt2d.cu": [("cuda/dwt2d/dwt_cuda/common.h", 1, 253),
                 ("cuda/dwt2d/dwt_cuda/transform_buffer.h", 1, 338),
                 ("cuda/dwt2d/dwt_cuda/io.h", 1, 37), ("cuda/dwt2d/dwt_cuda/io.h", 39, 472),
                 ("cuda/dwt2d/dwt_cuda/fdwt53.cu", 1, 32),
                 ("cuda/dwt2d/dwt_cuda/fdwt53.cu", 36, 395),
                 ("cuda/dwt2d/dwt_cuda/fdwt97.cu", 1, 33),
                 ("cuda/dwt2d/dwt_cuda/fdwt97.cu", 37, 368),
                 ("cuda/dwt2d/dwt_cuda/rdwt53.cu", 1, 33),
                 ("cuda/dwt2d/dwt_cuda/rdwt53.cu", 37, 360),
                 ("cuda/dwt2d/dwt_cuda/rdwt97.cu", 1, 33),
                 ("cuda/dwt2d/dwt_cuda/rdwt97.cu", 37, 363)],
    # huffman: the encoder (one 32-bit word per thread, shared-memory atomics) and pack2, with
    # their MIT notices and the parameters they read; only the #include lines are left out
    # (pabio_kernels_v2.cu is not used, and its notice grants no licence).
    "huffman_vlc.cu": [("cuda/huffman/parameters.h", 1, 27),
                       ("cuda/huffman/vlc_kernel_sm64huff.cu", 1, 17),
                       ("cuda/huffman/vlc_kernel_sm64huff.cu", 20, 164),
                       ("cuda/huffman/pack_kernels.cu", 1, 16),
                       ("cuda/huffman/pack_kernels.cu", 18, 54)],
    # leukocyte: the MGVF kernel of tracking (find_ellipse's kernels read textures).
    "leukocyte_track.cu": [("cuda/leukocyte/CUDA/misc_math.h", 6, 6),
                           ("cuda/leukocyte/CUDA/track_ellipse_kernel.cu", 5, 8),
                           ("cuda/leukocyte/CUDA/track_ellipse_kernel.cu", 23, 225)],
}


def show(repo: str, path: str) -> list[str]:
    text = subprocess.run(["git", "-C", repo, "show", f"{COMMIT}:{path}"], check=True,
                          capture_output=True, text=True, errors="replace").stdout
    return text.splitlines()


def main(repo: str) -> None:
    for name, ranges in SPEC.items():
        where = "; ".join(f"{p} lines {a}-{b}" for p, a, b in ranges)
        head = [f"// Device code copied unchanged from {REPO} at commit {COMMIT[:12]}:",
                f"//   {where}",
                "// Rodinia, BSD-style licence, Copyright (c) 2008-2011 University of Virginia;"
                " see LICENSE-rodinia."]
        body: list[str] = []
        for path, a, b in ranges:
            body += show(repo, path)[a - 1:b]
        (HERE / name).write_text("\n".join(head + body) + "\n")


if __name__ == "__main__":
    main(sys.argv[1])
