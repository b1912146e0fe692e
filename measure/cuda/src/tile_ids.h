// Internal: CUBLASLT_MATMUL_TILE_<m>x<n> enumerants decoded into sizes. The
// table is generated at configure time from the installed cublasLt.h.
#pragma once

#include <cstdint>

namespace crest::measure {

struct TileDims {
  int m = 0;
  int n = 0;
};

// {0, 0} for CUBLASLT_MATMUL_TILE_UNDEFINED or an unknown id.
TileDims DecodeTileId(int64_t tile_id);

}  // namespace crest::measure
