"""Regenerate the peer kernels from NVIDIA's cuda-samples, copying device code unchanged.

Each file under ``kernels/`` is the concatenation of line ranges of files of
https://github.com/NVIDIA/cuda-samples at commit ``COMMIT`` (BSD-3-Clause, Copyright
NVIDIA Corporation; the licence text is in ``kernels/LICENSE-cuda-samples``), with a
header naming them. Host code (``main``, launch wrappers, ``helper_cuda.h``) is left
out; nothing inside a range is edited.

Run ``python -m tests.emu.peer.extract /path/to/cuda-samples`` (a git clone) to
rebuild the files; the test ``test_peer.py`` checks each file's provenance header.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

COMMIT = "c94ff366aed18c797b8a85dfaac7817b0228b420"
REPO = "https://github.com/NVIDIA/cuda-samples"
HERE = Path(__file__).resolve().parent / "kernels"
S = "Samples"

SPEC: dict[str, list[tuple[str, int, int]]] = {
    "reduction.cu": [(f"{S}/2_Concepts_and_Techniques/reduction/reduction_kernel.cu", 35, 626)],
    "transpose.cu": [(f"{S}/6_Performance/transpose/transpose.cu", 41, 43),
                     (f"{S}/6_Performance/transpose/transpose.cu", 56, 64),
                     (f"{S}/6_Performance/transpose/transpose.cu", 76, 297)],
    "scalarProd.cu": [(f"{S}/2_Concepts_and_Techniques/scalarProd/scalarProd_kernel.cuh", 28, 97)],
    "shfl_scan.cu": [(f"{S}/2_Concepts_and_Techniques/shfl_scan/shfl_scan.cu", 55, 148)],
    "simpleVote.cu": [(f"{S}/0_Introduction/simpleVoteIntrinsics/simpleVote_kernel.cuh", 41, 79)],
    "simpleAtomicIntrinsics.cu": [
        (f"{S}/0_Introduction/simpleAtomicIntrinsics/simpleAtomicIntrinsics_kernel.cuh", 38, 81)],
    "fp16ScalarProduct.cu": [
        (f"{S}/0_Introduction/fp16ScalarProduct/fp16ScalarProduct.cu", 32, 32),
        (f"{S}/0_Introduction/fp16ScalarProduct/fp16ScalarProduct.cu", 35, 134)],
    "inlinePTX.cu": [(f"{S}/2_Concepts_and_Techniques/inlinePTX/inlinePTX.cu", 43, 53)],
    "warpAggregatedAtomicsCG.cu": [
        (f"{S}/3_CUDA_Features/warpAggregatedAtomicsCG/warpAggregatedAtomicsCG.cu", 30, 31),
        (f"{S}/3_CUDA_Features/warpAggregatedAtomicsCG/warpAggregatedAtomicsCG.cu", 36, 104),
        (f"{S}/3_CUDA_Features/warpAggregatedAtomicsCG/warpAggregatedAtomicsCG.cu", 150, 183)],
    "binaryPartitionCG.cu": [
        (f"{S}/3_CUDA_Features/binaryPartitionCG/binaryPartitionCG.cu", 46, 47),
        (f"{S}/3_CUDA_Features/binaryPartitionCG/binaryPartitionCG.cu", 51, 51),
        (f"{S}/3_CUDA_Features/binaryPartitionCG/binaryPartitionCG.cu", 60, 99)],
    "matrixMul.cu": [(f"{S}/0_Introduction/matrixMul/matrixMul.cu", 53, 126)],
    "histogram64.cu": [
        (f"{S}/2_Concepts_and_Techniques/histogram/histogram_common.h", 30, 63),
        (f"{S}/2_Concepts_and_Techniques/histogram/histogram64.cu", 29, 29),
        (f"{S}/2_Concepts_and_Techniques/histogram/histogram64.cu", 34, 34),
        (f"{S}/2_Concepts_and_Techniques/histogram/histogram64.cu", 38, 158)],
    "histogram256.cu": [
        (f"{S}/2_Concepts_and_Techniques/histogram/histogram_common.h", 30, 63),
        (f"{S}/2_Concepts_and_Techniques/histogram/histogram256.cu", 29, 29),
        (f"{S}/2_Concepts_and_Techniques/histogram/histogram256.cu", 34, 34),
        (f"{S}/2_Concepts_and_Techniques/histogram/histogram256.cu", 38, 126)],
    "threadFenceReduction.cu": [
        (f"{S}/2_Concepts_and_Techniques/threadFenceReduction/threadFenceReduction_kernel.cuh",
         35, 206)],
    "bitonicSort.cu": [
        (f"{S}/2_Concepts_and_Techniques/sortingNetworks/sortingNetworks_common.h", 31, 31),
        (f"{S}/2_Concepts_and_Techniques/sortingNetworks/sortingNetworks_common.cuh", 32, 53),
        (f"{S}/2_Concepts_and_Techniques/sortingNetworks/bitonicSort.cu", 31, 33),
        (f"{S}/2_Concepts_and_Techniques/sortingNetworks/bitonicSort.cu", 38, 213)],
    "vectorAdd.cu": [(f"{S}/0_Introduction/vectorAdd/vectorAdd.cu", 41, 54)],
    "fastWalshTransform.cu": [
        (f"{S}/5_Domain_Specific/fastWalshTransform/fastWalshTransform_kernel.cuh", 33, 148),
        (f"{S}/5_Domain_Specific/fastWalshTransform/fastWalshTransform_kernel.cuh", 168, 181)],
    "oddEvenMergeSort.cu": [
        (f"{S}/2_Concepts_and_Techniques/sortingNetworks/sortingNetworks_common.h", 31, 31),
        (f"{S}/2_Concepts_and_Techniques/sortingNetworks/sortingNetworks_common.cuh", 32, 53),
        (f"{S}/2_Concepts_and_Techniques/sortingNetworks/oddEvenMergeSort.cu", 32, 34),
        (f"{S}/2_Concepts_and_Techniques/sortingNetworks/oddEvenMergeSort.cu", 40, 138)],
    "BlackScholes.cu": [(f"{S}/5_Domain_Specific/BlackScholes/BlackScholes_kernel.cuh", 28, 119)],
    "scan.cu": [(f"{S}/2_Concepts_and_Techniques/scan/scan_common.h", 28, 200),
                (f"{S}/2_Concepts_and_Techniques/scan/scan.cu", 29, 31),
                (f"{S}/2_Concepts_and_Techniques/scan/scan.cu", 36, 168)],
}


def show(clone: Path, path: str) -> list[str]:
    text = subprocess.run(["git", "-C", str(clone), "show", f"{COMMIT}:{path}"],
                          capture_output=True, text=True, check=True).stdout
    return text.splitlines()


def header(pieces) -> str:
    where = "\n".join(f"//   {path} lines {a}-{b}" for path, a, b in pieces)
    return (f"// Device code copied unchanged from {REPO} at commit {COMMIT[:12]}:\n{where}\n"
            f"// BSD-3-Clause, Copyright (c) NVIDIA Corporation; see LICENSE-cuda-samples.\n")


def main(clone: str) -> None:
    root = Path(clone)
    for name, pieces in SPEC.items():
        body = []
        for path, a, b in pieces:
            lines = show(root, path)
            body.extend(lines[a - 1: min(b, len(lines))])
        (HERE / name).write_text(header(pieces) + "\n".join(body) + "\n")
    lic = subprocess.run(["git", "-C", str(root), "show", f"{COMMIT}:LICENSE"],
                         capture_output=True, text=True, check=True).stdout
    (HERE / "LICENSE-cuda-samples").write_text(lic)


if __name__ == "__main__":
    main(sys.argv[1])
