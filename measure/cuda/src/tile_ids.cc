#include "tile_ids.h"

namespace crest::measure {
namespace {

struct Entry {
  int64_t id;
  int m;
  int n;
};

constexpr Entry kTiles[] = {
#include "tile_ids.inc"
};

}  // namespace

TileDims DecodeTileId(int64_t tile_id) {
  for (const Entry& e : kTiles) {
    if (e.id == tile_id) return {e.m, e.n};
  }
  return {};
}

}  // namespace crest::measure
