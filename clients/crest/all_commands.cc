// Every command of the `crest` binary (its own file, so that a program
// that runs only the answering commands links none of the others).
#include "run_cli.h"

namespace crest::cli {

std::span<const Registrar> AllCommands() {
  static constexpr Registrar kAll[] = {
      {"gpus", RegisterGpus},   {"shapes", RegisterShapes}, {"explain", RegisterExplain},
      {"dff", RegisterDff},     {"sweep", RegisterSweep},   {"lookup", RegisterLookup},
      {"db", RegisterDb},       {"info", RegisterInfo},     {"jobs", RegisterJobs},
      {"fleet", RegisterFleet}, {"doctor", RegisterDoctor}, {"calibrate", RegisterCalibrate},
      {"vocab", RegisterVocab}, {"design", RegisterDesign}, {"compare", RegisterCompare},
      {"plot", RegisterPlot}};
  return kAll;
}

}  // namespace crest::cli
