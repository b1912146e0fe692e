// The commands that answer questions, for the Python extension: none that
// sweeps, serves, merges or probes the GPU.
#include "run_cli.h"

namespace crest::cli {

std::span<const Registrar> AnsweringCommands() {
  static constexpr Registrar kAnswering[] = {RegisterGpus,  RegisterShapes, RegisterExplain,
                                             RegisterDff,   RegisterLookup, RegisterCalibrate,
                                             RegisterVocab, RegisterDesign};
  return kAnswering;
}

}  // namespace crest::cli
