// Every command of the `crest` binary (its own file, so that a program
// that runs only the answering commands links none of the others).
#include "run_cli.h"

namespace crest::cli {

std::span<const Registrar> AllCommands() {
  static constexpr Registrar kAll[] = {
      RegisterGpus,  RegisterShapes, RegisterExplain, RegisterDff,
      RegisterSweep, RegisterLookup, RegisterDb,      RegisterInfo,
      RegisterJobs,  RegisterFleet,  RegisterDoctor,  RegisterCalibrate,
      RegisterVocab, RegisterDesign, RegisterCompare, RegisterPlot};
  return kAll;
}

}  // namespace crest::cli
