// pto_host.h — ptojax's host (CPU) implementation of the PTO tile instructions its kernels use.
//
// The PTO C++ kernels ptojax emits for Ascend compile unchanged against this header for the
// host CPU: it provides Tile, GlobalTensor, TASSIGN, set_flag/wait_flag and every instruction
// in ptojax.lower.pto_ops.INSTRUCTIONS, with the semantics of ptojax's numpy tile
// interpreter. This is how emitted kernels are executed and tested here; it has not been
// validated against Ascend hardware (none is available to the project).
//
//   pto_host_types.h        half / bfloat16_t storage, exact conversions
//   pto_host_tile.h         Tile, GlobalTensor, TASSIGN, per-thread buffer arenas
//   pto_host_sync.h         pipes, set_flag / wait_flag, the PTO_HOST_CHECK_SYNC checker
//   pto_host_convert.h      RoundMode, element conversion
//   pto_host_math.h         vectorizable exp / log
//   pto_host_map.h          the vectorizable loops instructions are built on
//   pto_host_memory.h       TLOAD, TSTORE, TMOV, TEXTRACT
//   pto_host_elementwise.h  tile-tile, tile-scalar, unary, compare/select, TCVT
//   pto_host_reduce.h       row/column reductions and expansions
//   pto_host_matmul.h       TMATMUL, TMATMUL_ACC
//   pto_host_img2col.h      Img2colTileConfig, TSETFMATRIX, TSET_IMG2COL_*, TIMG2COL
//   pto_host_launch.h       blocks (OpenMP), block index, error reporting
#pragma once

#include "pto_host_types.h"
#include "pto_host_tile.h"
#include "pto_host_sync.h"
#include "pto_host_convert.h"
#include "pto_host_math.h"
#include "pto_host_map.h"
#include "pto_host_memory.h"
#include "pto_host_elementwise.h"
#include "pto_host_reduce.h"
#include "pto_host_matmul.h"
#include "pto_host_img2col.h"
#include "pto_host_launch.h"
#include "pto_host_random.h"
