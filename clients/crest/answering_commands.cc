// The commands that answer questions, for the Python extension: none that
// sweeps, serves, merges or probes the GPU.
#include "run_cli.h"

namespace crest::cli {

std::span<const Registrar> AnsweringCommands() {
  static constexpr Registrar kAnswering[] = {
      {"gpus", RegisterGpus},   {"shapes", RegisterShapes}, {"explain", RegisterExplain},
      {"dff", RegisterDff},     {"lookup", RegisterLookup}, {"calibrate", RegisterCalibrate},
      {"vocab", RegisterVocab}, {"design", RegisterDesign}};
  return kAnswering;
}

}  // namespace crest::cli
