"""Hardware targets as plain data: ``pto.targets.ascend910b``, ``pto.targets.ascend950``,
``pto.targets.host_cpu`` and ``pto.targets.host_jit`` (the host as ``pto.jit``'s cpu backend
tiles for it).

A target is one frozen ``Target`` record. The tile planner reads its buffer capacities and
alignment rules, the lowering reads its instruction-set facts, the cost model reads its
bandwidths and throughputs. A new chip is a new ``Target(...)`` table here, not new code.

Every number carries its public source in a comment; "estimate" marks numbers for which no
public source exists (they are our own assumptions and only feed the cost model). Nothing in
ptojax has been run on Ascend hardware: these figures are used for planning and estimation,
never measured here.
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Optional

import numpy as np

KiB = 1024
MiB = 1024 * KiB


@dataclass(frozen=True, eq=False, repr=False)
class Target:
    """One accelerator (or host) as the tile transform, lowering and cost model see it.

    ``buffers`` maps each on-chip memory space of the PTO model (UB, L1, L0A, L0B, L0C) to its
    capacity in bytes per core; ``alignment`` maps each space to the byte alignment of tile
    addresses; ``row_alignment`` is the rule every row-major tile row (and column-major tile
    column) must satisfy in bytes. ``dma_bandwidth`` is bytes/second per core for each data
    path; ``vector_bytes_per_cycle`` is the vector unit's datapath width. Targets compare and
    hash by identity (each is a singleton table).
    """
    name: str
    description: str
    cube_cores: int
    vector_cores: int
    vector_cores_per_cube: int
    buffers: MappingProxyType
    alignment: MappingProxyType
    row_alignment: int
    cube_fractal: tuple
    clock_hz: float
    hbm_bandwidth: float
    dma_bandwidth: MappingProxyType
    vector_bytes_per_cycle: int
    vector_issue_cycles: int
    vector_dtypes: frozenset
    tile_dtypes: frozenset
    cube_macs_per_cycle: MappingProxyType
    launch_overhead_s: float
    dma_latency_cycles: int
    dma_issue_cycles: int
    min_dma_bytes: int
    notes: tuple = field(default=())
    arch: str = "a2a3"                     # the PTO instruction profile (pto.target_arch)
    # the operand dtypes whose convolutions tile as cube kernels; None: every dtype the cube
    # multiplies (``cube_macs_per_cycle``). A convolution of another dtype stays tensor-level.
    conv_cube_dtypes: Optional[frozenset] = None

    def __str__(self):
        return self.name

    def __repr__(self):
        return f"pto.targets.{self.name}"

    def capacity(self, space: str) -> int:
        return self.buffers[space]

    def cube_convolves(self, dtype) -> bool:
        """Whether a convolution of ``dtype`` operands tiles as a cube kernel here."""
        name = np.dtype(dtype).name
        if name not in self.cube_macs_per_cycle:
            return False
        return self.conv_cube_dtypes is None or name in self.conv_cube_dtypes


def _frozen(d: dict) -> MappingProxyType:
    return MappingProxyType(dict(d))


# Sources used below:
#  [cann-hw]  CANN op tiling unit tests' "hardware_info" for Ascend910B (public CANN ops
#             repositories): UB_SIZE 196608, L1_SIZE 524288, L0A_SIZE 65536, L0B_SIZE 65536,
#             L0C_SIZE 131072, CORE_NUM 24.
#  [pto-fa]   pto-isa kernels/manual/fa/a2a3/fa_performance_kernel.cpp: MAX_TILE_L1_BYTES =
#             512 KiB, MAX_VEC_UB_BYTES = 192 KiB, VEC_CORES = 2 (vector cores per cube core).
#  [pto-gemm] pto-isa kernels/manual/a2a3/gemm_performance: blockDim = 24 on A2/A3 (910B);
#             L0A/L0B ping-pong of 32 KiB per buffer (64 KiB each).
#  [pto-tile] pto-isa include/pto/common/pto_tile.hpp: TileConfig::alignedSize = 32 (row-major
#             tile rows / column-major tile columns must be 32-byte multiples); fractal 16x16.
#  [huawei]   Huawei support docs, "AI Core compute units": vector source/target data must be
#             32-byte aligned in the Unified Buffer.
#  [hotchips] Huawei Da Vinci core, Hot Chips 31 (2019): cube = 16x16x16 = 4096 FP16 MACs per
#             cycle; vector unit 2048 bits wide.
#  [pto-isa]  pto-isa docs/isa/TADD.md, TEXP.md: A2/A3 vector instructions accept half/float
#             (and int16/int32 for arithmetic) but not bfloat16.
#  [asc-ld]   CANN asc-devkit tests/perf/load_data_perf/README.md (gitcode.com/cann/asc-devkit),
#             Atlas A2/A3 (dav-2201) LoadData scenarios: L1 -> L0A 256 bytes/cycle, L1 -> L0B
#             128 bytes/cycle ("theoretical bandwidth"), 28 cycles latency, transposed or not.
ascend910b = Target(
    name="ascend910b",
    description="Huawei Ascend 910B (A2), PTO 'a2a3' instruction profile",
    cube_cores=24,                         # [cann-hw] CORE_NUM 24; [pto-gemm] blockDim 24
    vector_cores=48,                       # [pto-fa] 2 vector cores per cube core x 24
    vector_cores_per_cube=2,               # [pto-fa] VEC_CORES 2
    buffers=_frozen({
        "UB": 192 * KiB,                   # [cann-hw] UB_SIZE 196608; [pto-fa] 192 KiB
        "L1": 512 * KiB,                   # [cann-hw] L1_SIZE 524288; [pto-fa] 512 KiB
        "L0A": 64 * KiB,                   # [cann-hw] L0A_SIZE 65536; [pto-gemm]
        "L0B": 64 * KiB,                   # [cann-hw] L0B_SIZE 65536; [pto-gemm]
        "L0C": 128 * KiB,                  # [cann-hw] L0C_SIZE 131072
    }),
    alignment=_frozen({
        "UB": 32,                          # [huawei] 32-byte aligned UB data
        "L1": 512,                         # [pto-tile] fractal (16 rows x 32 B) granularity
        "L0A": 512,                        # [pto-tile] fractalABSize = 512
        "L0B": 512,                        # [pto-tile] fractalABSize = 512
        "L0C": 1024,                       # [pto-tile] fractalCSize = 1024
    }),
    row_alignment=32,                      # [pto-tile] alignedSize = 32
    cube_fractal=(16, 16, 16),             # [hotchips] 16x16x16 cube
    clock_hz=1.8e9,                        # estimate: commonly quoted ~1.8 GHz, not published
    hbm_bandwidth=1.5e12,                  # estimate: ~1.5-1.6 TB/s HBM2e quoted by vendors
    dma_bandwidth=_frozen({                # bytes/s per core; estimates unless cited
        "GM->UB": 128e9,                   # estimate
        "UB->GM": 128e9,                   # estimate
        "GM->L1": 200e9,                   # estimate
        "L1->L0A": 256 * 1.8e9,            # [asc-ld] 256 B/cycle, at the clock above
        "L1->L0B": 128 * 1.8e9,            # [asc-ld] 128 B/cycle, at the clock above
        "L0C->GM": 128e9,                  # estimate
    }),
    vector_bytes_per_cycle=256,            # [hotchips] 2048-bit vector unit
    vector_issue_cycles=8,                 # estimate: per-instruction issue/drain overhead
    vector_dtypes=frozenset({"float32", "float16", "int32", "int16"}),   # [pto-isa] TADD A2A3
    tile_dtypes=frozenset({"float32", "float16", "bfloat16", "int32", "int16", "int8",
                           "uint8", "bool"}),   # [pto-isa] TLOAD/TSTORE dtypes (A2A3)
    cube_macs_per_cycle=_frozen({
        "float16": 4096,                   # [hotchips] 16^3 FP16 MACs per cycle
        "bfloat16": 4096,                  # estimate: same rate as FP16
        "float32": 1024,                   # estimate: quarter rate for FP32 inputs
        "int8": 8192,                      # [hotchips] 8192 INT8 MACs
    }),
    launch_overhead_s=3e-6,                # estimate: kernel launch cost
    dma_latency_cycles=500,                # estimate: first-byte latency of a GM transfer
    dma_issue_cycles=64,                   # estimate: per-transfer cost once pipelined
    min_dma_bytes=8 * KiB,                 # estimate: transfers below this are latency-bound
    notes=("No number here was measured by ptojax: there is no Ascend hardware in this "
           "project. Sources are cited per field; 'estimate' fields only feed the cost model.",),
)


# A host CPU seen through the same model: the private L2 stands in for UB, L3 for L1 and the
# L1d for the L0 buffers, so the planner picks cache-sized tiles. pto.jit's cpu backend
# compiles the emitted kernels for the CPU with a tuned variant of it (host_jit, below). Figures describe a generic recent x86-64
# server core; all are estimates (they vary by machine).
host_cpu = Target(
    name="host_cpu",
    description="generic x86-64 host CPU (caches in place of UB/L1/L0 buffers)",
    cube_cores=8,                          # estimate: cores used for matmul kernels
    vector_cores=8,                        # estimate: cores used for vector kernels
    vector_cores_per_cube=1,
    buffers=_frozen({
        "UB": 1 * MiB,                     # estimate: private L2 per core
        "L1": 4 * MiB,                     # estimate: share of the L3
        "L0A": 16 * KiB,                   # estimate: a third of a 48 KiB L1d
        "L0B": 16 * KiB,                   # estimate
        "L0C": 16 * KiB,                   # estimate
    }),
    alignment=_frozen({"UB": 64, "L1": 64, "L0A": 64, "L0B": 64, "L0C": 64}),  # cache line
    row_alignment=32,                      # keep the PTO 32-byte row rule so kernels port
    cube_fractal=(16, 16, 16),             # same fractal so cube kernels keep their shape
    clock_hz=3.0e9,                        # estimate
    hbm_bandwidth=50e9,                    # estimate: DRAM bandwidth of a socket
    dma_bandwidth=_frozen({"GM->UB": 20e9, "UB->GM": 20e9, "GM->L1": 20e9, "L1->L0A": 100e9,
                           "L1->L0B": 100e9, "L0C->GM": 20e9}),   # estimates
    vector_bytes_per_cycle=64,             # estimate: two 256-bit FMA ports
    vector_issue_cycles=2,                 # estimate
    vector_dtypes=frozenset({"float32", "float16", "bfloat16", "int32", "int16"}),
    tile_dtypes=frozenset({"float32", "float16", "bfloat16", "int32", "int16", "int8",
                           "uint8", "bool", "float8_e4m3fn", "float8_e5m2"}),
    cube_macs_per_cycle=_frozen({"float16": 32, "bfloat16": 32, "float32": 32,
                                 "int8": 64, "float8_e4m3fn": 32,
                                 "float8_e5m2": 32}),  # estimates; fp8 is widened to float
    launch_overhead_s=2e-6,                # estimate: thread-pool dispatch
    dma_latency_cycles=100,                # estimate
    dma_issue_cycles=16,                   # estimate
    min_dma_bytes=4 * KiB,                 # estimate
    notes=("Estimates for a generic host; used to plan cache-sized tiles.",),
)

# What pto.jit's cpu backend tiles for (ptojax/runtime/host_backend.py). Measured on the
# development machine (x86-64, AVX-512, 2 cores), not estimated:
# - UB of 128 KiB: vector tiles that stay in L1/L2 between instructions; with 1 MiB tiles the
#   same kernels ran ~1.4x slower, with 32 KiB the per-instruction overhead dominated.
# - float32 matmuls are left tensor-level, so they run in numpy's BLAS (several times faster
#   than the tile matmul kernel on a CPU); float16/bfloat16 matmuls, which numpy has no BLAS
#   for, use the tile kernel (f32 accumulation).
# - floating convolutions (any float dtype) are left tensor-level: numpy im2col + BLAS in
#   float32 (ops/im2col.py) ran them 3-10x faster than the tile conv kernel (a bf16 ResNet
#   step's 3x3 stem: 1.6 vs 15 ms); int8 ones (an int32 product, which BLAS lacks) tile.
host_jit = dataclasses.replace(
    host_cpu,
    name="host_jit",
    description="host CPU as pto.jit's cpu backend tiles for it (measured tile sizes, BLAS "
                "for float32 matmuls and float convolutions)",
    buffers=_frozen({**host_cpu.buffers, "UB": 128 * KiB}),
    cube_macs_per_cycle=_frozen({k: v for k, v in host_cpu.cube_macs_per_cycle.items()
                                 if k != "float32"}),
    conv_cube_dtypes=frozenset({"int8"}),
    notes=("Tile sizes and the BLAS choice were measured on the development machine.",),
)

# Ascend 950 (A5): the 910B table with the A5 figures that are published, and the fp8 cube.
#  [cannbot]  cann/cannbot-skills agent/references device facts ("a5 (950)" column, from
#             easyasc/a5.py): cube cores 32, L0A/L0B 64 KB, L0C 256 KB, UB 256 KB, L1 512 KB,
#             2 vector sub-blocks per cube core.
#  [ptoas]    hw-native-sys/PTOAS docs/PTO_IR_manual.md, pto.tmatmul "Implementation checks
#             (A5)": i8 x i8 -> i32; f16, bf16, f32 and any fp8 e4m3/e5m2 pair -> f32.
ascend950 = dataclasses.replace(
    ascend910b,
    name="ascend950",
    description="Huawei Ascend 950 (A5), PTO 'a5' instruction profile",
    arch="a5",
    cube_cores=32,                         # [cannbot]
    vector_cores=64,                       # [cannbot] 2 vector sub-blocks x 32
    buffers=_frozen({**ascend910b.buffers,
                     "UB": 256 * KiB,      # [cannbot]
                     "L0C": 256 * KiB}),   # [cannbot]
    tile_dtypes=ascend910b.tile_dtypes | {"float8_e4m3fn", "float8_e5m2"},   # [ptoas]
    cube_macs_per_cycle=_frozen({
        **ascend910b.cube_macs_per_cycle,  # estimate: the 910B rates
        "float8_e4m3fn": 8192,             # estimate: twice the FP16 rate, as int8
        "float8_e5m2": 8192,               # estimate
    }),
    notes=("Only the fields cited [cannbot] / [ptoas] differ from ascend910b; the rest are "
           "the 910B figures, unverified for A5. Nothing here was measured.",),
)

TARGETS = {t.name: t for t in (ascend910b, ascend950, host_cpu, host_jit)}


def get_target(target) -> Target:
    """A Target from a Target or its name."""
    if isinstance(target, Target):
        return target
    if isinstance(target, str) and target in TARGETS:
        return TARGETS[target]
    raise ValueError(f"unknown target {target!r}; available: {', '.join(TARGETS)}")
