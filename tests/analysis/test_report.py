"""Reports, tables, comparisons and pictures, on small launches with hand-counted answers."""

from __future__ import annotations

import matplotlib
import numpy as np
import pytest

from cudakit.analysis import analyze
from cudakit.errors import ArgumentError, CudakitError, LaunchError

matplotlib.use("Agg")

STRIDED = """
__global__ void strided(const float *in, float *out, int stride)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float v = in[i * stride];
    out[i] = v;
}
"""

SHARED = """
__global__ void column(const float *in, float *out)
{
    __shared__ float tile[32][32];
    tile[threadIdx.y][threadIdx.x] = in[threadIdx.y * 32 + threadIdx.x];
    __syncthreads();
    out[threadIdx.y * 32 + threadIdx.x] = tile[threadIdx.x][threadIdx.y];
}
"""


def strided(stride: int, blocks: int = 2):
    n = 64 * blocks
    return analyze(STRIDED, "strided", grid=(blocks,), block=(64,),
                   args=[np.arange(n * stride, dtype=np.float32), np.zeros(n, np.float32),
                         np.int32(stride)])


def column():
    return analyze(SHARED, "column", grid=1, block=(32, 4),
                   args=[np.arange(1024, dtype=np.float32), np.zeros(1024, np.float32)])


def test_derived_figures_for_a_stride_of_two():
    m = strided(2).metrics
    assert m["global_load_sectors_per_request"] == 8.0  # 32 lanes x 8 bytes apart = 256 bytes
    assert m["global_load_efficiency_pct"] == 50.0
    assert m["global_store_efficiency_pct"] == 100.0
    assert m["global_load_bytes_moved"] == 2 * m["global_load_bytes_used"] == 4 * 256


def test_by_line_puts_the_wasteful_load_first():
    rows = strided(4).by_line
    assert [(a.line, a.op) for a in rows] == [(5, "ld"), (6, "st")]
    assert rows[0].waste_bytes == 4 * (16 - 4) * 32 and rows[1].waste_bytes == 0
    assert "in[i * stride]" in rows[0].source


def test_shared_column_read_is_a_32_way_conflict():
    r = column()
    worst = r.by_line[0]
    assert (worst.space, worst.op, worst.per_request, worst.ideal) == ("shared", "ld", 32.0, 4)
    assert r.metrics["l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum"] == 4 * 31
    assert r.line(5, "shared").op == "st"
    assert (worst.wavefronts, worst.bank_conflicts, worst.sectors) == (128, 124, None)
    assert r.line(7, "global").sectors == 16 and r.line(7, "global").wavefronts is None


def test_missing_line_names_the_lines_that_exist():
    with pytest.raises(CudakitError, match=r"lines with accesses: \[5, 6\]"):
        strided(1).line(3)


def test_html_and_text_tables():
    r = column()
    html = r._repr_html_()
    assert html.count("<tr") == 1 + len(r.accesses) and "tile[threadIdx.x][threadIdx.y]" in html
    assert "emulator model" in html and "background" in html  # the conflicted row is shaded
    assert str(r).splitlines()[2].split()[0] == "7"  # worst line first in the text table


def test_compare_side_by_side():
    table = strided(1).compare(strided(4), labels=["stride 1", "stride 4"]).table()
    assert table["global_load_sectors_per_request"] == [4.0, 16.0]
    assert table["l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum"] == [16, 16]
    with pytest.raises(CudakitError, match="2 labels for 3 reports"):
        strided(1).compare(strided(2), strided(4), labels=["a", "b"])


def test_lanes_to_sectors_marks_touched_sectors():
    ax = strided(2).plot_sectors(5)
    sectors = ax.collections[-1]
    colours = sectors.get_facecolors()
    assert len(colours) == 8  # the sectors from first to last touched, all used at stride 2
    assert "8 sectors" in ax.get_title()


def test_lanes_to_banks_colours_conflicts():
    ax = column().plot_banks()
    grid = ax.images[0].get_array()
    assert (grid == 2).sum() == 32 and (grid[:, 1:] == 0).all()  # every lane in bank 0, red
    ax = column().plot_banks(5)
    grid = ax.images[0].get_array()
    assert (grid == 1).sum() == 32 and (grid == 2).sum() == 0


def test_heatmap_has_one_cell_per_warp():
    ax = strided(4, blocks=3).plot_heatmap(5)
    cells = ax.images[0].get_array()
    assert cells.shape == (3, 2) and (cells == 16).all()


def test_bad_arguments_are_named():
    with pytest.raises(ArgumentError, match="argument 2"):
        analyze(STRIDED, "strided", grid=1, block=32,
                args=[np.zeros(32, np.float32), np.zeros(32, np.float32), 2])
    with pytest.raises(ArgumentError, match="grid"):
        analyze(STRIDED, "strided", grid=(0,), block=32, args=[])
    with pytest.raises(LaunchError, match="nope"):
        analyze(STRIDED, "nope", grid=1, block=32, args=[])
    with pytest.raises(ArgumentError, match="source text"):
        analyze(42, "strided", grid=1, block=32, args=[])


DYNAMIC = """
__global__ void padded_rows(const float *in, float *out, int pitch)
{
    extern __shared__ float buffer[];
    buffer[threadIdx.x * pitch] = in[threadIdx.x];
    __syncthreads();
    out[threadIdx.x] = buffer[threadIdx.x * pitch];
}
"""


@pytest.mark.parametrize(("pitch", "ways"), [(1, 1), (16, 16), (17, 1)])
def test_dynamic_shared_memory_and_objects_with_source(pitch, ways):
    class Module:  # anything with the source text, like cudakit.compile's module
        source = DYNAMIC

    r = analyze(Module(), "padded_rows", grid=1, block=32, shared=32 * pitch * 4,
                args=[np.ones(32, np.float32), np.zeros(32, np.float32), np.int32(pitch)])
    assert r.line(5, "shared").per_request == r.line(7, "shared").per_request == ways
